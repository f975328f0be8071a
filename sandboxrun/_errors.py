"""The one exception tree of sandboxrun: what *we* (or the engine) did wrong.

What a hook does -- exit codes, garbage output, timeouts, OOM -- is never an
exception; it is recorded in the hook's outcome.

    SandboxrunError
    ├── ConfigError          bad settings, bad command-line values, malformed input
    └── EngineError          anything between us and the container engine
        ├── EngineUnavailable   no engine answers at the configured address
        └── ImageMissing        the configured image (or runtime) is not there

Every message is one line and says what to do, because the CLI prints it as is.
"""

from __future__ import annotations


class SandboxrunError(Exception):
    """Root of every error sandboxrun raises on purpose."""


class ConfigError(SandboxrunError):
    """A setting, flag, settings file or input document is invalid."""


class EngineError(SandboxrunError):
    """The container engine failed or refused a request."""


class EngineUnavailable(EngineError):
    """No container engine answers at the configured address."""


class ImageMissing(EngineError):
    """The hook image or the requested runtime is not available on the engine."""
