"""A Kiro hook as discovery finds it (`config.py`, `files.py`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..._types import HookSpec

DEFAULT_MAX_OUTPUT = 10 * 1024  # DEFAULT_MAX_OUTPUT_SIZE (bytes of stdout/stderr kept)


@dataclass(frozen=True, slots=True)
class KiroHook(HookSpec):
    """A Kiro hook: a `HookSpec` with the entry's output cap and cache time."""

    max_output: int = DEFAULT_MAX_OUTPUT
    cache_ttl: int = 0  # seconds Kiro reuses a success; sandboxrun keeps no cache
    # whose hook: "agent" (an agent file's), "v3" (`.kiro/hooks/*.json`), "ide" (`*.kiro.hook`)
    flavor: str = "agent"
