"""The library's logger: loguru, imported only when a line is really logged.

`import loguru` costs ~90 ms (it imports asyncio), and `sandboxrun run` is called for
every event an agent sees, most of which log nothing at the CLI's default level.
So every module logs through `logger` here, a stand-in that imports loguru on first
use. Two rules of the eager version hold unchanged:

- The library is quiet until the application enables it (`logger.enable("sandboxrun")`):
  the disable runs as soon as loguru is imported, by us or by the application, so an
  application that enables our logs after importing us is never overridden later.
- The CLI's setup (`configure`) applies before the first line; until loguru is needed,
  lines below the CLI's level are dropped without importing it.
"""

from __future__ import annotations

import _thread  # not `threading`: the light client (`_client`) imports this module
import sys

# Not `typing`'s, nor contextlib or collections.abc: `sandboxrun` imports this module,
# and the light client's start is measured in milliseconds (`bench/client_start.py`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

    from loguru import Logger

LEVELS = {"trace": 5, "debug": 10, "info": 20, "success": 25, "warning": 30, "error": 40}
_pending: Callable[[Any], None] | None = None  # the CLI's setup, until loguru is imported
_threshold = 0  # lines below this level are dropped while loguru is not imported
_quieted = False  # "sandboxrun" disabled in loguru (once: the application decides after)
serialized = False  # `json_lines` was called: the log is JSON lines
_lock = _thread.RLock()


def _ready() -> Any:
    """loguru's logger, imported now if need be, with the rules above applied."""
    global _pending
    from loguru import logger as real  # the import hook below disables "sandboxrun"

    if _pending is not None or not _quieted:
        with _lock:  # the first lines may come from several threads at once
            _quiet(real)
            setup, _pending = _pending, None
            if setup is not None:
                setup(real)
    return real


def _quiet(real: Any) -> None:
    global _quieted
    if not _quieted:
        _quieted = True
        real.disable("sandboxrun")


def configure(setup: Callable[[Any], None], level: str) -> None:
    """The application's setup of loguru (the CLI's), applied now if loguru is loaded,
    else just before the first line at `level` or above is logged."""
    global _pending, _threshold
    if "loguru" in sys.modules:
        setup(_ready())
    else:
        _pending, _threshold = setup, LEVELS[level.lower()]


def json_lines(level: str) -> None:
    """From now on, log on stderr one JSON object a line (loguru's `serialize`: the
    message, level, time, module and the record's `extra`), for a platform's log
    collector; stdout stays the protocol's. Records bound with `always=True` pass
    whatever the level (`announce`). Replaces the application's sinks: call it at start."""
    global serialized
    real = _ready()
    threshold = LEVELS[level.lower()]
    with _lock:
        real.remove()
        real.add(
            sys.stderr,
            level=0,
            serialize=True,
            filter=lambda r: r["level"].no >= threshold or bool(r["extra"].get("always")),
        )
        serialized = True


def announce(line: str, prefix: str, depth: int = 0) -> None:
    """A process's lifecycle line ("serving on ...", "stopped"), shown whatever the log
    level: `prefix: line` on stderr, or a JSON record after `json_lines` (naming the
    function `depth` frames above the caller)."""
    if serialized:
        logger.opt(depth=depth + 1).bind(always=True).info(line)
    else:
        print(f"{prefix}: {line}", file=sys.stderr, flush=True)


def _drop(*args: Any, **kwargs: Any) -> None:
    return None


_lines = _thread._local()  # `.count`: lines this thread asked to log (`_cache`)
_LINE_METHODS = frozenset((*LEVELS, "log", "exception", "critical"))


def count_lines() -> int:
    """How many lines this thread has asked to log so far (whatever their level):
    `_cache` keeps no result whose computation logged, as a hit would not log again."""
    return getattr(_lines, "count", 0)


class _Lazy:
    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self._options = options

    def __getattr__(self, name: str) -> Any:
        if name in _LINE_METHODS:
            _lines.count = getattr(_lines, "count", 0) + 1
        if "loguru" not in sys.modules and LEVELS.get(name, 99) < _threshold:
            return _drop
        if name == "opt" and self._options is None:
            return lambda **options: _Lazy(options)
        real = _ready()
        # The real bound method, called from the caller's own frame: loguru's record
        # names the calling module, as with `from loguru import logger`.
        return getattr(real.opt(**self._options) if self._options is not None else real, name)


logger: Logger = _Lazy()  # type: ignore[assignment]


class _DisableOnImport:
    """An import hook (a meta path finder: `find_spec` is the whole protocol; the
    importlib.abc base class alone costs 10 ms) that runs the library's `disable` as
    soon as anyone imports loguru."""

    def find_spec(
        self, name: str, path: Any = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name != "loguru":
            return None
        sys.meta_path.remove(self)  # once
        spec = next(filter(None, (f.find_spec(name, path, target) for f in sys.meta_path)), None)
        loader = spec.loader if spec else None
        if spec is None or loader is None:
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _quiet(module.logger)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def quiet_library() -> None:
    """The library default: our logs are off until the application turns them on."""
    if "loguru" in sys.modules:
        _quiet(sys.modules["loguru"].logger)
    elif not any(isinstance(f, _DisableOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _DisableOnImport())


_held: list[str] | None = None  # `hold`: the CLI's log lines, kept back for the reply


def to_stderr(message: Any) -> None:
    """The CLI's log sink: stderr, or the list `hold` keeps while it holds."""
    held = _held
    if held is not None:
        held.append(str(message))
    else:
        sys.stderr.write(str(message))


class hold:  # used as the function it was: `with _log.hold() as held`
    """Keep the CLI's log lines back instead of writing them (`exec`: the agent may read
    our stderr as the hook's answer, so where they go is the dialect's choice). Costs
    nothing when nothing is logged: loguru is still imported only for a real line."""

    def __enter__(self) -> list[str]:
        global _held
        held: list[str] = []
        _held = held
        return held

    def __exit__(self, *exc: object) -> None:
        global _held
        _held = None
