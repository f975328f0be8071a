"""Crush (Charm): `dialect.py` (the protocol, with the source it was checked against),
`config.py` (the `crush.json` files it merges)."""

from .dialect import CRUSH as CRUSH
from .dialect import CrushDialect as CrushDialect
