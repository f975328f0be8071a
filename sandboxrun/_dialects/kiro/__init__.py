"""Kiro (the Kiro CLI's agent-config hooks): `dialect.py` (the protocol, its sources),
`config.py` (the agent files), `matcher.py` (which tools a matcher selects)."""

from .dialect import KIRO as KIRO
from .dialect import KiroDialect as KiroDialect
