"""The dialect seam: each agent's hook protocol (discovery, input, answers, combining).

`base` is the protocol; `cline` speaks for Cline and Careti; `claude/` for Claude Code,
Qoder and Qoder CN, and (`claude/agents.py`) the other Claude-shaped agents; `codex` for
the Codex CLI (a row of the Claude table); `cursor/` for Cursor; `copilot/` for GitHub
Copilot CLI; `gemini/` for Gemini CLI. A dialect never imports a backend and never reads
the process environment or the current directory: it is handed what it needs.
"""

from .table import WHERE as _WHERE

# The agents, by the name `--agent` takes, sorted: the names of the registry's one table
# (`table.WHERE`), read without loading a dialect, so every command line can offer
# them (`registry.DIALECTS` maps each name to its dialect).
AGENTS = tuple(sorted(_WHERE))
