"""The agents' one table: each `--agent` name and the dialect that speaks for it. Every
other list of agents is derived from it (`registry.DIALECTS`, `_dialects.AGENTS`,
`_settings.Agent`, the command line's choices).

Names only, nothing imported: the settings and the command line read it without
loading a dialect, and without an import circle (`tests/test_layout.py`).
"""

from __future__ import annotations

# One row per agent: name -> (the module of its dialect under `_dialects`, the dialect's
# name in it). In the order the registry always listed them (`list(DIALECTS)`).
WHERE: dict[str, tuple[str, str]] = {
    "cline": ("cline", "CLINE"),
    "careti": ("cline", "CARETI"),
    "claude": ("claude.dialect", "CLAUDE"),
    "qoder": ("claude.dialect", "QODER"),
    "qoder-cn": ("claude.dialect", "QODER_CN"),
    "factory": ("claude.agents", "FACTORY"),
    "qwen": ("claude.agents", "QWEN"),
    "codebuddy": ("claude.agents", "CODEBUDDY"),
    "iflow": ("claude.agents", "IFLOW"),
    "devin": ("claude.agents", "DEVIN"),
    "augment": ("claude.agents", "AUGMENT"),
    "codex": ("codex", "CODEX"),
    "cursor": ("cursor", "CURSOR"),
    "copilot": ("copilot", "COPILOT"),
    "gemini": ("gemini.dialect", "GEMINI"),
    "goose": ("goose", "GOOSE"),
    "crush": ("crush", "CRUSH"),
    "windsurf": ("windsurf", "WINDSURF"),
    "kiro": ("kiro", "KIRO"),
}
