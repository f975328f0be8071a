"""The dialect seam: each agent's hook protocol (discovery, input, answers, combining).

`base` is the protocol; `cline` speaks for Cline and Careti; `claude/` for Claude Code,
Qoder and Qoder CN, and (`claude/agents.py`) the other Claude-shaped agents; `codex` for
the Codex CLI (a row of the Claude table); `cursor/` for Cursor; `copilot/` for GitHub
Copilot CLI; `gemini/` for Gemini CLI. A dialect never imports a backend and never reads
the process environment or the current directory: it is handed what it needs.
"""

# The agents, by the name `--agent` takes. Kept here, with nothing imported, so every
# command line can offer them without loading a dialect (`registry.DIALECTS` maps each
# name to its dialect; a test checks the two agree).
AGENTS = (
    "augment", "careti", "claude", "cline", "codebuddy", "codex", "copilot", "crush",
    "cursor", "devin", "factory", "gemini", "goose", "iflow", "kiro", "qoder", "qoder-cn",
    "qwen", "windsurf",
)  # fmt: skip
