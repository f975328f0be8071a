"""Goose (Block, Open Plugins hooks): `dialect.py` (the protocol, what is confirmed in
Goose's source), `config.py` (the plugins, the settings, each `hooks/hooks.json`)."""

from .dialect import GOOSE as GOOSE
from .dialect import GooseDialect as GooseDialect
