"""sandboxrun: run AI coding agents' hooks in disposable, hardened Docker containers.

The public surface is what `__all__` lists; everything else is private. Build
`Settings` once at the edge, pick a backend, and let `HookFactory` do the rest:

    settings = Settings.load(agent="cline")
    factory = HookFactory(settings, DockerBackend(settings))
    result = factory.run("PreToolUse", event)      # -> CombinedResult
    print(result.to_json())
"""

from loguru import logger

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

# A library stays quiet until the application turns its logs on (the CLI does).
logger.disable("sandboxrun")

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
