"""Kiro: the Kiro CLI's agent-config hooks, Kiro CLI v3's hook files and the Kiro IDE's
`.kiro.hook` files. `dialect.py` (the protocols, their sources), `config.py` (the agent
files), `files.py` (the hook files), `matcher.py` (which tools an agent file's matcher
selects), `hook.py` (the hook as found)."""

from .dialect import KIRO as KIRO
from .dialect import KiroDialect as KiroDialect
