"""The agents' one table: each `--agent` name, the dialect that speaks for it and its
install module. Every other list of agents is derived from it (`registry.DIALECTS`,
`_dialects.AGENTS`, `_settings.Agent`, the command line's choices, install's registry).

Names only, nothing imported: the settings, the command line and install read it
without loading a dialect, and without an import circle (`tests/test_layout.py`).
"""

from __future__ import annotations

# One row per agent: name -> (the module of its dialect under `_dialects`, the dialect's
# name in it, the agent's module in install's package, or None when `install` does not
# support it yet). In the order the registry always listed them (`list(DIALECTS)`).
WHERE: dict[str, tuple[str, str, str | None]] = {
    "cline": ("cline", "CLINE", "cline"),
    "careti": ("cline", "CARETI", "cline"),
    "claude": ("claude.dialect", "CLAUDE", "claudecode"),
    "qoder": ("claude.dialect", "QODER", "claudecode"),
    "qoder-cn": ("claude.dialect", "QODER_CN", "claudecode"),
    "factory": ("claude.agents", "FACTORY", "claudelike"),
    "qwen": ("claude.agents", "QWEN", "claudelike"),
    "codebuddy": ("claude.agents", "CODEBUDDY", "claudelike"),
    "iflow": ("claude.agents", "IFLOW", "claudelike"),
    "devin": ("claude.agents", "DEVIN", "claudelike"),
    "augment": ("claude.agents", "AUGMENT", "claudelike"),
    "trae": ("claude.agents", "TRAE", "claudelike"),
    "codex": ("codex", "CODEX", "codex"),
    "cursor": ("cursor", "CURSOR", "cursor"),
    "copilot": ("copilot", "COPILOT", "copilot"),
    "gemini": ("gemini.dialect", "GEMINI", "gemini"),
    "goose": ("goose", "GOOSE", "goose"),
    "crush": ("crush", "CRUSH", "crush"),
    "windsurf": ("windsurf", "WINDSURF", "windsurf"),
    "kiro": ("kiro", "KIRO", "kiro"),
}
