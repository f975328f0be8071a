"""Cursor (IDE and `cursor-agent`): `dialect.py` (the protocol, and what its docs leave
open), `config.py` (the `hooks.json` levels), `answer.py` (one hook's answer)."""

from .answer import untrusted_stdout as untrusted_stdout
from .dialect import CURSOR as CURSOR
from .dialect import CursorDialect as CursorDialect
