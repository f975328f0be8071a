"""Whether `install` may write `run --answer agent` for an agent: the command that makes
`run` itself the hook the agent calls (Cline shims, Claude Code's and Codex's managed
forwarding hooks). Its answer is `_runner.reply.answer_agent`'s, in the agent's own protocol,
from the command itself or warm from `sandboxrun serve`.
"""

from __future__ import annotations

from .._dialects.registry import DIALECTS
from .._errors import ConfigError


def answer_form(agent: str) -> None:
    """Nothing when `run --answer agent` answers `agent` in its own protocol; a
    `ConfigError` naming it otherwise (`install` writes no such hook for it)."""
    dialect = DIALECTS[agent]
    if dialect.agent_answer(dialect.hook_names[0], dialect.blocked_answer("probe"), []) is None:
        raise ConfigError(f"{agent}: run --answer agent has no answer form for this agent")
