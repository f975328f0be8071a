"""The public surface: `__all__`, importability, and a quiet library logger."""

from __future__ import annotations

import subprocess
import sys

import sandboxrun

PUBLIC = [
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


def test_all_is_sorted() -> None:
    """`__all__` is kept in sorted order."""
    assert sandboxrun.__all__ == sorted(sandboxrun.__all__)


def test_all_is_pinned() -> None:
    """`__all__` is exactly the agreed public list (changing it is an API decision)."""
    assert sandboxrun.__all__ == PUBLIC


def test_every_public_name_is_importable() -> None:
    """Each name in `__all__` is an attribute of the package and `import *` provides it."""
    namespace: dict[str, object] = {}
    exec("from sandboxrun import *", namespace)
    for name in sandboxrun.__all__:
        assert getattr(sandboxrun, name) is namespace[name]


def test_error_tree() -> None:
    """The public exceptions form the documented tree under SandboxrunError."""
    assert issubclass(sandboxrun.ConfigError, sandboxrun.SandboxrunError)
    assert issubclass(sandboxrun.EngineError, sandboxrun.SandboxrunError)
    assert issubclass(sandboxrun.EngineUnavailable, sandboxrun.EngineError)
    assert issubclass(sandboxrun.ImageMissing, sandboxrun.EngineError)


def test_fake_backend_satisfies_the_backend_protocol() -> None:
    """FakeBackend is a Backend (the runtime-checkable protocol)."""
    backend = sandboxrun.FakeBackend(lambda r: sandboxrun.ExecResult(0, b"", b"", 0))
    assert isinstance(backend, sandboxrun.Backend)


LOGGER_PROBE = """
from loguru import logger
import sandboxrun

seen = []
logger.remove()
logger.add(lambda m: seen.append(m.record["name"]), level="DEBUG")
sandboxrun.parse_output("no json here")  # the library logs a warning here
logger.info("from the application")
quiet = list(seen)
logger.enable("sandboxrun")
sandboxrun.parse_output("no json here")
print(quiet, seen[len(quiet):])
"""


def test_library_logger_is_disabled_by_default() -> None:
    """In a fresh interpreter, the library's logs are off until the application enables them."""
    out = subprocess.run(
        [sys.executable, "-c", LOGGER_PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    assert out == "['__main__'] ['sandboxrun._dialects.cline']"
