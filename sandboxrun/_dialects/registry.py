"""The registry of agents: each `--agent` name and the dialect that speaks for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Dialect
from .claude.agents import AUGMENT, CODEBUDDY, DEVIN, FACTORY, IFLOW, QWEN
from .claude.dialect import CLAUDE, QODER, QODER_CN
from .cline import CARETI, CLINE, CLINE_VSCODE
from .codex import CODEX
from .copilot import COPILOT
from .crush import CRUSH
from .cursor import CURSOR
from .gemini.dialect import GEMINI
from .goose import GOOSE
from .kiro import KIRO
from .windsurf import WINDSURF

if TYPE_CHECKING:
    from .._settings import Settings

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
    "goose": GOOSE,
    "crush": CRUSH,
    "windsurf": WINDSURF,
    "kiro": KIRO,
}


def dialect_of(settings: Settings) -> Dialect:
    """The dialect of `settings.agent`; for Cline, of the variant `cline_variant` names
    (the SDK/CLI by default, or the VS Code extension: `_dialects.cline`)."""
    if settings.agent == "cline" and settings.cline_variant == "vscode":
        return CLINE_VSCODE
    return DIALECTS[settings.agent]
