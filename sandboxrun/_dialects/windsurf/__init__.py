"""Windsurf Cascade (editor and JetBrains plugin): `dialect.py` (the protocol, its
sources and what they leave open), `config.py` (the `hooks.json` levels)."""

from .dialect import WINDSURF as WINDSURF
from .dialect import WindsurfDialect as WindsurfDialect
