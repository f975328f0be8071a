"""The one exception tree of sandboxrun: what *we* (or the engine) did wrong.

What a hook does -- exit codes, garbage output, timeouts, OOM -- is never an
exception; it is recorded in the hook's outcome.

    SandboxrunError
    ├── ConfigError          bad settings, bad command-line values, malformed input
    └── EngineError          anything between us and the container engine
        ├── EngineUnavailable   no engine answers at the configured address
        ├── ImageMissing        the configured image is not there
        ├── RuntimeMissing      the requested runtime (e.g. runsc) is not registered:
        │                       runs fail closed rather than fall back to a weaker one
        └── Cancelled           whoever asked for the run has gone (`serve`: its client
                                hung up): the run was stopped, its answer goes nowhere

Every message is one line and says what to do, because the CLI prints it as is.
"""

from __future__ import annotations


class SandboxrunError(Exception):
    """Root of every error sandboxrun raises on purpose."""


class ConfigError(SandboxrunError):
    """A setting, flag, settings file or input document is invalid."""


class PatternError(SandboxrunError):
    """A repository's pattern (a matcher) that sandboxrun cannot evaluate, the message
    says why (`_dialects.patterns`): its hook's outcome for the event is an `error`."""


class EngineError(SandboxrunError):
    """The container engine failed or refused a request."""


class EngineUnavailable(EngineError):
    """No container engine answers at the configured address."""


class ImageMissing(EngineError):
    """The hook image is not available on the engine."""


class RuntimeMissing(EngineError):
    """The requested runtime is not registered with the engine."""


class Cancelled(EngineError):
    """The run's caller has gone: its sandbox was removed (`_types.Cancel`)."""
