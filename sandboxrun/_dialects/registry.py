"""The registry of agents: each `--agent` name and the dialect that speaks for it."""

from __future__ import annotations

from .base import Dialect
from .claude.dialect import CLAUDE, QODER, QODER_CN
from .cline import CARETI, CLINE
from .gemini.dialect import GEMINI

DIALECTS: dict[str, Dialect] = {
    "cline": CLINE,
    "careti": CARETI,
    "claude": CLAUDE,
    "qoder": QODER,
    "qoder-cn": QODER_CN,
    "gemini": GEMINI,
}
