"""sandboxrun: run AI coding agents' hooks in disposable, hardened Docker containers.

The public surface is what `__all__` lists; everything else is private. Build
`Settings` once at the edge, pick a backend, and let `HookFactory` do the rest:

    settings = Settings.load(agent="cline")
    factory = HookFactory(settings, DockerBackend(settings))
    result = factory.run("PreToolUse", event)      # -> CombinedResult
    print(result.to_json())
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not `typing`'s: its import alone costs the client milliseconds
if TYPE_CHECKING:
    from typing import Any

    from ._backends.base import Backend, FakeBackend
    from ._backends.docker.backend import DockerBackend
    from ._backends.docker.reaper import reap
    from ._dialects.base import Dialect
    from ._dialects.claude.dialect import ClaudeDialect
    from ._dialects.cline import ClineDialect, parse_output
    from ._errors import (
        ConfigError,
        EngineError,
        EngineUnavailable,
        ImageMissing,
        RuntimeMissing,
        SandboxrunError,
    )
    from ._runner import CombinedHookRunner, HookFactory, HookRunner, NoOpHookRunner
    from ._settings import Settings
    from ._types import (
        CombinedResult,
        Discovery,
        ExecRequest,
        ExecResult,
        HookOutcome,
        HookSpec,
        Skipped,
    )

# Imported on first use (PEP 562), not with the package: `sandboxrun run` through a
# running `serve` (`_client`) must start without docker, pydantic or loguru.
_HOME = {
    "Backend": "_backends.base", "FakeBackend": "_backends.base",
    "DockerBackend": "_backends.docker.backend", "reap": "_backends.docker.reaper",
    "ClaudeDialect": "_dialects.claude.dialect", "ClineDialect": "_dialects.cline",
    "parse_output": "_dialects.cline", "Dialect": "_dialects.base",
    "ConfigError": "_errors", "EngineError": "_errors",
    "EngineUnavailable": "_errors", "ImageMissing": "_errors", "RuntimeMissing": "_errors",
    "SandboxrunError": "_errors", "CombinedHookRunner": "_runner",
    "HookFactory": "_runner", "HookRunner": "_runner", "NoOpHookRunner": "_runner",
    "Settings": "_settings", "CombinedResult": "_types", "Discovery": "_types",
    "ExecRequest": "_types", "ExecResult": "_types", "HookOutcome": "_types",
    "HookSpec": "_types", "Skipped": "_types",
}  # fmt: skip


_quiet = False


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'sandboxrun' has no attribute {name!r}")
    global _quiet
    if not _quiet:  # once, so an application that turned the logs on keeps them
        from loguru import logger

        # A library stays quiet until the application turns its logs on (the CLI does).
        logger.disable("sandboxrun")
        _quiet = True
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


__version__ = "0.1.0"
__all__ = [
    "Backend",
    "ClaudeDialect",
    "ClineDialect",
    "CombinedHookRunner",
    "CombinedResult",
    "ConfigError",
    "Dialect",
    "Discovery",
    "DockerBackend",
    "EngineError",
    "EngineUnavailable",
    "ExecRequest",
    "ExecResult",
    "FakeBackend",
    "HookFactory",
    "HookOutcome",
    "HookRunner",
    "HookSpec",
    "ImageMissing",
    "NoOpHookRunner",
    "RuntimeMissing",
    "SandboxrunError",
    "Settings",
    "Skipped",
    "parse_output",
    "reap",
]
