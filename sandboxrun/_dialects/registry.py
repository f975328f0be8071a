"""The registry of agents: each `--agent` name and the dialect that speaks for it."""

from __future__ import annotations

from .base import Dialect
from .claude.agents import AUGMENT, CODEBUDDY, DEVIN, FACTORY, IFLOW, QWEN
from .claude.dialect import CLAUDE, QODER, QODER_CN
from .cline import CARETI, CLINE
from .codex import CODEX
from .copilot import COPILOT
from .cursor import CURSOR
from .gemini.dialect import GEMINI

DIALECTS: dict[str, Dialect] = {
    "cline": CLINE,
    "careti": CARETI,
    "claude": CLAUDE,
    "qoder": QODER,
    "qoder-cn": QODER_CN,
    "factory": FACTORY,
    "qwen": QWEN,
    "codebuddy": CODEBUDDY,
    "iflow": IFLOW,
    "devin": DEVIN,
    "augment": AUGMENT,
    "codex": CODEX,
    "cursor": CURSOR,
    "copilot": COPILOT,
    "gemini": GEMINI,
}
