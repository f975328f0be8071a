"""The server's answers, apart from HTTP: the kept backends, one request answered as
the CLI would answer it in the caller's process (its folder, its environment, its log
lines), and what is left to the cold path (`Decline`).

The caller's folder is passed down explicitly (`Caller.cwd`, `absolute_paths`), never
set as a current directory: requests from different folders are answered at once, in
any container, whatever its seccomp profile allows."""

from __future__ import annotations

import argparse
import binascii
import contextlib
import dataclasses
import io
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from .._backends.base import Backend, refuse_cancelled
from .._backends.image_tools import ImageTools
from .._errors import Cancelled, ConfigError
from .._log import LEVELS, logger
from .._runner.exec import may_add_lines
from .._runner.reply import Caller, Reply, answer_exec, answer_run, callers_paths, error_reply
from .._settings import TIGHTENING_ENV, Settings
from .._types import Cancel, ExecRequest, ExecResult
from .._userconfig import config_path, read_config

# What a request over TCP may carry. It comes from a tenant of a platform, not from the
# server's user: the server's config file is the only settings file (issue 17: "a path
# given on a repository's command line is never read"), so a TCP request may only pick
# within it, never name settings or where to read them (`--config`, `--network`,
# `--allow-domain`, `--image`, `--runtime`, `--backend`, `--home`, `--hooks-dir`,
# `--env-file`, and any option added later). By list: the parser's `dest`s per command.
_BOTH = ("agent", "workspace", "timeout", "fail_closed", "no_serve")
TCP_OPTIONS = {
    "run": frozenset((*_BOTH, "answer", "hook")),  # --timeout: only shorter (`_only_shorter`)
    # --event names, it widens nothing; --hook-dir is checked against the server's home
    "exec": frozenset((*_BOTH, "untrusted", "event", "cmdline")),
}
# Of a TCP request's environment, only the variable that can only tighten. Never the
# agent's CLAUDE_ENV_FILE (a file of the server's host it would append to), nor its
# CLAUDE_PLUGIN_ROOT / CLAUDE_PLUGIN_DATA (the server's user's plugins, not the tenant's).
TCP_ENV = frozenset((TIGHTENING_ENV,))

MAX_BACKENDS = 8  # distinct settings served from kept backends; more run on one-off ones
READY_TTL = 5.0  # seconds a readiness check stands: probes never hammer the engine


class Decline(Exception):
    """Not answered here: the client runs the command cold (503)."""


class App:
    """What the server does, apart from HTTP: answer commands with kept backends."""

    def __init__(
        self,
        make_backend: Callable[[Settings], Backend],
        settings: Settings | None = None,
        config: str | None = None,
    ) -> None:
        from .metrics import Metrics

        self.make_backend = make_backend
        self.settings = settings  # the server's own: what /readyz checks (None: the defaults)
        # The server's own `--config`: the config file of a request that names none (a
        # platform's server, whose clients send only the command's arguments, keeps its
        # hooks' settings in one file: backend, cluster, limits). None: the account's, and
        # always for a server `run`/`exec` started (`lifecycle.serve`).
        self.config = config
        self._backends: dict[Settings, Backend] = {}
        self._lock = threading.Condition()
        self.inflight = 0
        self.answered = 0  # requests answered here (not declined)
        self.last_request = time.monotonic()
        self.stopping = False  # SIGTERM: new requests go cold, /readyz says 503
        self.started = "hand"  # or "auto": by `run`/`exec` (`lifecycle.serve`, for doctor)
        self.idle_exit: float | None = None  # seconds idle before it stops (None: never)
        self._ready: tuple[float, str | None] | None = None  # (checked at, why not ready)
        self._ready_lock = threading.Lock()
        self.metrics = Metrics(lambda: self.inflight, self._pool_stats)

    def _kept(self, settings: Settings, own: bool = False) -> tuple[Backend, bool]:
        """The kept backend for these settings (made on first use), shared by every
        request with the same settings (each sees it through a `_Shared`); past
        MAX_BACKENDS distinct settings, a one-off backend (True) for one request: cold
        (no pool: nothing would ever close it), closed after its request. `own`: the
        server's own settings, which /readyz checks, are always kept."""
        with self._lock:
            backend = self._backends.get(settings)
            if backend is not None:
                return backend, False
            if len(self._backends) < MAX_BACKENDS or own:
                backend = self._backends[settings] = self.make_backend(settings)
                return backend, False
        return self.make_backend(settings.model_copy(update={"pool_size": 0})), True

    @contextlib.contextmanager
    def counted(self) -> Iterator[None]:
        """Count a request in flight (for the idle exit, /healthz and the drain at
        SIGTERM); a stopping server takes no new one: it goes cold."""
        with self._lock:
            if self.stopping:
                self.metrics.declined.inc()
                raise Decline("the server is stopping")
            self.inflight += 1
        try:
            yield
        finally:
            with self._lock:
                self.inflight -= 1
                self.last_request = time.monotonic()
                self._lock.notify_all()

    def stop(self) -> None:
        """Take no new request (each goes cold) and turn /readyz to 503."""
        with self._lock:
            self.stopping = True

    def drain(self) -> None:
        """Wait until no request is in flight: each ends by its own deadline."""
        with self._lock:
            while self.inflight:
                self._lock.wait()

    def ready(self) -> str | None:
        """None when runs can start now, else why not (one line). The server's backend
        is checked at most every READY_TTL seconds, however often probes ask: `check`
        (engine, image, runtime), then `ping` where the backend has one (an engine
        that went away after `check` passed)."""
        if self.stopping:
            return "the server is stopping"
        # One check at a time; a probe that comes meanwhile reads the last result (an
        # engine that hangs must not hold every probe thread: /healthz shares them).
        if not self._ready_lock.acquire(blocking=self._ready is None):
            return self._ready[1] if self._ready else "the backend is being checked"
        try:
            now = time.monotonic()
            if self._ready is None or now - self._ready[0] > READY_TTL:
                self._ready = (now, self._check())
            return self._ready[1]
        finally:
            self._ready_lock.release()

    def _check(self) -> str | None:
        from .._runner.reply import one_line

        try:
            backend, _ = self._kept(self.settings or Settings.load(), own=True)
            backend.check()
            ping = getattr(backend, "ping", None)
            if callable(ping):
                ping()
        except Exception as exc:  # the reason is the answer: never a failed probe handler
            why = one_line(exc) or type(exc).__name__
            logger.warning("serve: not ready: {}", why)
            return why
        return None

    def _pool_stats(self) -> list[dict[str, int]]:
        with self._lock:
            backends = list(self._backends.values())
        stats = [getattr(b, "stats", None) for b in backends]
        return [s() for s in stats if callable(s)]

    @property
    def backends(self) -> int:
        return len(self._backends)

    def answer(
        self,
        command: str,
        request: dict[str, Any],
        gone: Cancel | None = None,
        tcp: bool = False,
    ) -> Reply:
        """Answer one `run` or `exec`, as the CLI would in the caller's process. `gone`:
        set when the client hangs up: its runs' sandboxes are removed (and no other
        client's), nothing reaches its env file, and its answer goes nowhere. `tcp`: a
        tenant's request (`TCP_OPTIONS`, `TCP_ENV`; a refused option is a `Refused`).
        On the unix socket the peer is the server's own user (SO_PEERCRED): every
        option and variable, as the command would have read them itself."""
        started = time.monotonic()
        try:
            reply, tally = self._answer(command, request, gone or Cancel(), tcp)
        except Decline:
            self.metrics.declined.inc()
            raise
        self.metrics.observe(tally.agent, reply.outcomes, tally.results)
        self.metrics.latency.labels(command).observe(time.monotonic() - started)
        return reply

    def _answer(
        self, command: str, request: dict[str, Any], gone: Cancel, tcp: bool
    ) -> tuple[Reply, _Tally]:
        args = _parse(command, request, tcp)
        if args.config is None:  # always, over TCP
            args.config = self.config
        environ, ignored = request["env"], []
        if tcp:
            ignored = sorted(name for name in environ if name not in TCP_ENV)
            environ = {k: v for k, v in environ.items() if k in TCP_ENV}
            _only_shorter(command, args)
        if args.no_serve:
            raise Decline("--no-serve")
        stdin = binascii.a2b_base64(request["stdin"])
        cwd = _callers_folder(request["cwd"])
        callers_paths(args, cwd)  # what the CLI does right after parsing, in its folder
        caller = Caller(lambda: stdin, environ, cwd, gone, tenant=tcp, served=True)
        answer = answer_run if command == "run" else answer_exec
        tally = _Tally()
        one_offs: list[Backend] = []

        def backend_for(settings: Settings) -> Backend:
            tally.agent = settings.agent
            backend, one_off = self._kept(settings)
            if one_off:
                one_offs.append(backend)
            return _Shared(backend, tally, gone)

        with _captured_logs(args.verbose) as logs:
            if ignored:  # what the agent's own process would have read, said once
                logger.warning("ignored over TCP, from the request's env: {}", ", ".join(ignored))
            if _serve_setting(args.config) not in ("auto", "use", "start"):
                raise Decline("serve is off in the config file")
            try:
                reply = answer(args, caller, backend_for)
            except Exception as exc:  # ours: the line the CLI would print, exit 2
                reply = error_reply(exc)
            finally:
                for backend in one_offs:  # still counted in flight: SIGTERM waits for it
                    _close(backend)
        with self._lock:
            self.answered += 1
        lines = logs.getvalue().encode()
        if command == "run":  # the report is on stdout: our lines may come first
            stderr = lines + reply.stderr
        elif may_add_lines(
            args.agent, reply.stdout, reply.stderr, reply.exit_code
        ):  # exec, as the CLI does
            stderr = reply.stderr + lines
        else:
            stderr = reply.stderr
        return dataclasses.replace(reply, stderr=stderr), tally

    def close(self) -> None:
        """Close every kept backend (a backend without `close` has nothing to close)."""
        with self._lock:
            backends, self._backends = list(self._backends.values()), {}
        for backend in backends:
            _close(backend)


def _close(backend: Backend) -> None:
    """Close a backend (one without `close` has nothing to close); never raises."""
    close = getattr(backend, "close", None)
    if callable(close):
        try:
            close()
        except Exception as exc:  # stopping never fails; `reap` sweeps the rest
            logger.warning("could not close a backend: {}", exc)


@dataclasses.dataclass
class _Tally:
    """What one request ran, for the metrics: its agent (from the settings it read) and
    each sandbox run's result (None: the backend failed)."""

    agent: str | None = None
    results: list[ExecResult | None] = dataclasses.field(default_factory=list)


class _Shared:
    """A kept backend as one request sees it. Everything but `abort` goes through.

    `_runner.session` aborts the backend of an event that missed its overall deadline, which
    on a shared backend would remove other clients' containers too. Here it does not:
    the stalled event's containers are killed by their own deadline timers (the
    backend's), and labelled for `reap` should anything outlive them.

    Each run carries the request's `gone` (`ExecRequest.cancel`): when the client hangs
    up, the backend removes this request's sandboxes only, and a run of a request whose
    client has gone ends in `Cancelled` (so nothing it wrote is handed on).
    """

    def __init__(self, backend: Backend, tally: _Tally, gone: Cancel) -> None:
        self.backend, self.tally, self.gone = backend, tally, gone

    def check(self) -> None:
        self.backend.check()

    def run(self, request: ExecRequest) -> ExecResult:
        request = dataclasses.replace(request, cancel=self.gone)
        try:
            refuse_cancelled(request)
            result = self.backend.run(request)
            if self.gone.is_set():  # whatever it returned: not an answer, nothing handed on
                raise Cancelled("the caller went away: the hook was stopped")
        except Exception:
            self.tally.results.append(None)
            raise
        self.tally.results.append(result)
        return result

    def image_tools(self) -> ImageTools | None:
        return self.backend.image_tools()

    @property
    def image_id(self) -> str:  # what the audit trail names (`_audit`)
        return str(getattr(self.backend, "image_id", "") or "")

    def abort(self) -> None:
        logger.warning("an event missed its deadline; its containers end at their own")

    def close(self) -> None:
        """Nothing: the kept backend outlives the request; the server closes it."""

    def __enter__(self) -> _Shared:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Refused(ValueError):
    """An option a TCP request may not carry (`TCP_OPTIONS`): 400, one line naming it."""


def _parse(command: str, request: dict[str, Any], tcp: bool = False) -> argparse.Namespace:
    """The command line, parsed by the CLI's own parser; a line the parser refuses (or
    help) is left to the cold path, which prints what the parser says. `tcp`: any
    option but `TCP_OPTIONS[command]` is `Refused`, read from what the parser made of
    the line (so `--net=bridge`, an abbreviation, is the `--network` it means)."""
    global _PARSER
    argv = ["-v"] * request["verbose"] + [command, *request["args"]]
    sink = io.StringIO()
    try:
        with _ARGPARSE_LOCK, contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            if _PARSER is None:
                from .._cli.parser import parser as _parser

                _PARSER = _parser()
            parser = _PARSER
            args = parser.parse_args(argv)
    except SystemExit:
        raise Decline("arguments for the cold path to judge") from None
    for name, value in vars(args).items():  # a default list is the parser's own object
        if isinstance(value, list):
            setattr(args, name, list(value))
    if tcp:
        actions = _subcommand(parser, command)._actions
        allowed = TCP_OPTIONS[command]
        for action in actions:
            given = getattr(args, action.dest, action.default)
            if action.dest not in allowed and given != action.default:
                may = sorted(_name(a) for a in actions if a.dest in allowed and a.option_strings)
                raise Refused(
                    f"{_name(action)} is not accepted over TCP: the server's config file"
                    f" decides (a TCP request may carry {', '.join(may)}, the hook's name"
                    " or command)"
                )
    return args


def _name(action: argparse.Action) -> str:
    return max(action.option_strings, key=len, default=action.dest)


def _subcommand(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of `command` (`run`, `exec`) within the CLI's."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[command]
            return found
    raise LookupError(command)


def _only_shorter(command: str, args: argparse.Namespace) -> None:
    """A TCP request's `--timeout` may only shorten the limit its hooks get from the
    server's config file (its `timeout`, else the agent's default), never lengthen it."""
    from .._dialects.registry import DIALECTS
    from .._runner.exec import exec_timeout

    if args.timeout is None:
        return
    try:
        settings = Settings.load(config=args.config, environ={}, agent=args.agent)
    except ConfigError:
        return  # the answer reports the broken file, as the cold path does
    if command == "exec":
        limit = exec_timeout(settings)
    else:  # as `HookRunner.timeout`
        limit = settings.timeout or DIALECTS[settings.agent].default_timeout
    args.timeout = min(args.timeout, limit)  # a NaN stays one: the settings refuse it


_ARGPARSE_LOCK = threading.Lock()  # argparse prints to sys.stderr, which we swap meanwhile
# The CLI's parser, built once (building it costs more than answering from the pool)
# and used under the lock: parsing reads it, never changes it.
_PARSER: argparse.ArgumentParser | None = None


def _serve_setting(config: str | None) -> Any:
    try:
        return read_config(config or config_path(), required=config is not None).get(
            "serve", "auto"
        )
    except ConfigError:
        return "auto"  # the answer reports the broken file, as the cold path does


@contextlib.contextmanager
def _captured_logs(verbose: int) -> Iterator[io.StringIO]:
    """What the CLI would have logged on the caller's stderr while answering: this
    request's records, on its own thread (the hooks' report carries the rest), routed
    to its buffer by the tag it binds (`_Routes`)."""
    from .._cli import log_level

    tag = uuid.uuid4().hex
    buffer = io.StringIO()
    _ROUTES.open(tag, buffer, LEVELS[log_level(verbose).lower()])
    try:
        with logger.contextualize(serve_request=tag):
            yield buffer
    finally:
        _ROUTES.close(tag)


class _Routes:
    """One loguru sink for every request's lines, each routed to its request's buffer.
    A sink per request cost loguru ~5 ms to add (its exception formatter reads every
    sysconfig path), more than a warm answer's own work. Added again when something
    removed it (a program that reconfigures loguru); where loguru's handler table
    cannot be read, one sink per request as before."""

    def __init__(self) -> None:
        self._targets: dict[str, tuple[io.StringIO, int]] = {}
        self._lock = threading.Lock()
        self._sink: int | None = None
        self._own: dict[str, int] = {}  # tag: a request's own sink (the fallback)

    def open(self, tag: str, buffer: io.StringIO, level: int) -> None:
        from .._cli import _log_format

        with self._lock:
            handlers = getattr(getattr(logger, "_core", None), "handlers", None)
            if not isinstance(handlers, dict):
                self._own[tag] = logger.add(
                    buffer, level=level, format=_log_format,
                    filter=lambda record: record["extra"].get("serve_request") == tag,
                )  # fmt: skip
                return
            self._targets[tag] = (buffer, level)
            if self._sink not in handlers:
                self._sink = logger.add(self._write, level=0, format=_log_format,
                                        filter=self._wanted)  # fmt: skip

    def close(self, tag: str) -> None:
        with self._lock:
            self._targets.pop(tag, None)
            own = self._own.pop(tag, None)
        if own is not None:
            logger.remove(own)

    def _wanted(self, record: Any) -> bool:
        target = self._targets.get(record["extra"].get("serve_request"))
        return target is not None and record["level"].no >= target[1]

    def _write(self, message: Any) -> None:
        target = self._targets.get(message.record["extra"].get("serve_request"))
        if target is not None:
            target[0].write(str(message))


_ROUTES = _Routes()


def _callers_folder(cwd: Any) -> str:
    """The caller's current directory, as sent: absolute, and a folder it could enter
    (else the cold path, in the caller's own process, says what is wrong)."""
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise ValueError("cwd must be an absolute path")
    if not os.path.isdir(cwd):
        raise Decline(f"cannot enter the caller's folder {cwd}: not a folder")
    if not os.access(cwd, os.X_OK):
        raise Decline(f"cannot enter the caller's folder {cwd}: permission denied")
    return cwd
