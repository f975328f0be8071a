"""sandboxrun: run AI coding agents' hooks in disposable, hardened Docker containers.

The public surface is what `__all__` lists; everything else is private. Build
`Settings` once at the edge, pick a backend, and let `HookFactory` do the rest:

    settings = Settings.load(agent="cline")
    factory = HookFactory(settings, make_backend(settings))  # backend = "docker" | "kubernetes"
    result = factory.run("PreToolUse", event)      # -> CombinedResult
    print(result.to_json())
"""

from __future__ import annotations

from ._errors import (
    ConfigError,
    EngineError,
    EngineUnavailable,
    ImageMissing,
    RuntimeMissing,
    SandboxrunError,
)
from ._log import quiet_library

# Not `typing`'s TYPE_CHECKING: `sandboxrun` is imported by the light client too, whose
# start is measured in milliseconds (`bench/client_start.py`), and typing costs several.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._backends.base import Backend, FakeBackend
    from ._backends.choose import make_backend
    from ._backends.docker.backend import DockerBackend
    from ._backends.docker.reaper import reap
    from ._dialects.base import Dialect
    from ._dialects.claude.dialect import ClaudeDialect
    from ._dialects.cline import ClineDialect, parse_output
    from ._runner.combined import CombinedHookRunner, NoOpHookRunner
    from ._runner.factory import HookFactory
    from ._runner.hook import HookRunner
    from ._settings import Settings, WorkspaceVolume
    from ._types import (
        CombinedResult,
        Discovery,
        ExecRequest,
        ExecResult,
        HookOutcome,
        HookSpec,
        Skipped,
    )

# Imported on first access (PEP 562), so `sandboxrun run` for an event with no hook
# never pays for docker or pydantic: the CLI imports what its path needs itself.
_LAZY = {
    "Backend": "_backends.base", "FakeBackend": "_backends.base",
    "DockerBackend": "_backends.docker.backend", "reap": "_backends.docker.reaper",
    "make_backend": "_backends.choose", "WorkspaceVolume": "_settings",
    "Dialect": "_dialects.base", "ClaudeDialect": "_dialects.claude.dialect",
    "ClineDialect": "_dialects.cline", "parse_output": "_dialects.cline",
    "CombinedHookRunner": "_runner.combined", "HookFactory": "_runner.factory",
    "HookRunner": "_runner.hook", "NoOpHookRunner": "_runner.combined", "Settings": "_settings",
    "CombinedResult": "_types",
    "Discovery": "_types", "ExecRequest": "_types", "ExecResult": "_types",
    "HookOutcome": "_types", "HookSpec": "_types", "Skipped": "_types",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# A library stays quiet until the application turns its logs on (the CLI does).
quiet_library()

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
    "WorkspaceVolume",
    "make_backend",
    "parse_output",
    "reap",
]
