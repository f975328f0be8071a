"""The server process: its socket (the user's alone; a live server is never replaced,
a stale socket is), its lock (one server per socket, `_client.start_server`), the
optional TCP listener and its token, SIGTERM, the idle exit, and `doctor`'s line."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import signal
import socket
import stat
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import _client, _log, _userconfig
from .._backends.base import Backend
from .._errors import ConfigError
from .._log import logger
from .._settings import Settings
from .app import App
from .front import Slots
from .handler import Handler, TCPServer, UnixServer


def own_folder(path: str) -> None:
    """Make the socket's folder, the user's with mode 0700 (or refuse one that is not)."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise ConfigError(f"socket folder {folder} is not a folder of yours")
    if st.st_mode & 0o077:
        os.chmod(folder, 0o700)  # ours: only we may reach the socket


def prepare_socket(path: str) -> None:
    """Make the socket's folder (the user's, 0700) and clear a stale socket; refuse a
    path a live server answers on, or that is not a socket."""
    own_folder(path)
    try:
        sst = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(sst.st_mode):
        raise ConfigError(f"{path} exists and is not a socket: remove it or choose another")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(_client.CONNECT_TIMEOUT)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)  # nobody answers: a server that died left it
        return
    finally:
        probe.close()
    raise ConfigError(f"a server already answers at {path} (stop it first)")


def hold_lock(path: str, inherited: int | None) -> int:
    """The lock of the server at `path`, held until this process ends: the one a
    starting command handed on (`inherited`, checked to be that file), else taken
    here; a lock another process holds means another server starts or runs there."""
    own_folder(path)
    where = _client.lock_path(path)
    if inherited is not None:
        try:
            mine, there = os.fstat(inherited), os.lstat(where)
        except OSError as exc:
            raise ConfigError(f"--lock-fd {inherited}: {exc.strerror}") from None
        if (mine.st_dev, mine.st_ino) != (there.st_dev, there.st_ino):
            raise ConfigError(f"--lock-fd {inherited} is not {where}")
        fd = inherited
        os.set_inheritable(fd, False)  # the server's alone: nothing it starts holds it
    else:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(where, flags, 0o600)
        except OSError as exc:
            raise ConfigError(f"cannot open the lock {where}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the handed-on lock: already ours
    except OSError:
        os.close(fd)
        raise ConfigError(
            f"another server starts or runs at {path} (it holds {where}): stop it first"
        ) from None
    return fd


def read_token(path: str) -> bytes:
    """The TCP token: a regular file of the user's that only the user can read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"token file {path}: cannot read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise ConfigError(f"token file {path} must be a file of yours with mode 0600")
        token = f.read(4096).strip()
    if len(token) < 16:
        raise ConfigError(f"token file {path}: the token must be at least 16 characters")
    return token


def serve(
    args: argparse.Namespace, make_backend: Callable[[Settings], Backend] | None = None
) -> int:
    """Run the server until SIGTERM/SIGINT (or `--idle-exit` seconds without requests)."""
    # The server's own paths are read against the folder it was started in, once; then
    # it works from `/`: each request carries its caller's folder (`App.answer`), and a
    # path that anything still read against a current directory would point under `/`,
    # never into a folder that happens to look right (the previous request's, a project).
    config = os.path.abspath(args.config) if args.config else None
    settings = Settings.load(config=config)
    path = os.path.abspath(args.socket or settings.serve_socket or _userconfig.default_socket())
    listen = _address(args.listen) if args.listen else None
    token_file = args.token_file or settings.serve_token_file
    if listen and not token_file:
        raise ConfigError("--listen needs a token: --token-file FILE or serve_token_file")
    token = read_token(token_file) if listen and token_file else None
    lock = hold_lock(path, args.lock_fd)
    # Started by `run` or `exec` (warm by default): it stops when idle; by hand, when told.
    auto = args.lock_fd is not None
    idle = args.idle_exit if args.idle_exit is not None else settings.serve_idle if auto else None
    os.chdir("/")
    if make_backend is None:
        from .._backends.choose import make_backend as chosen

        def make_backend(settings: Settings) -> Backend:
            # The server is the pool's long-lived owner (DESIGN.md §5): warm by default.
            return chosen(settings, warm=True)

    if (args.log_format or settings.log_format) == "json":
        from .._cli import log_level

        _log.json_lines(log_level(args.verbose))
    from .. import _cache

    _cache.enable()  # settings, discovery and preflight, kept while their files stand
    # A request that names no config file: the server's own when started by hand (a
    # platform's one file); the account's when started by `run`/`exec`, whose `--config`
    # was that first command's alone (a test's, a project's): a later command naming
    # none is answered as it would be cold, from the account's config file.
    app = App(make_backend, settings, config=None if auto else config)
    app.started, app.idle_exit = ("auto" if auto else "hand"), idle
    servers = open_servers(app, path, listen, token)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: stop.set())
    # Said before any request is served (the sockets already listen): a request's own log
    # line must never come before the line that says where the server listens.
    where = " and ".join(_where(server) for server in servers)
    _say(f"serving on {where} (pid {os.getpid()})")
    for server in servers:
        threading.Thread(target=server.serve_forever, name="serve", daemon=True).start()
    # Check the engine now, off the first request's path: the connection, the image, and
    # the sweep of what a killed predecessor left (its pooled containers). On a backend
    # of its own, closed after: a kept one would take a place of the requests' backends.
    threading.Thread(target=_sweep, args=(make_backend, settings), name="serve-sweep",
                     daemon=True).start()  # fmt: skip
    while not stop.wait(0.5):
        if idle and app.inflight == 0 and time.monotonic() - app.last_request > idle:
            _say(f"no request for {idle:g}s: stopping")
            break
    close_servers(app, servers, path)
    os.close(lock)  # after the socket went and the pools were removed: the next may start
    _say("stopped")
    return 0


def _sweep(make_backend: Callable[[Settings], Backend], settings: Settings | None) -> None:
    """`check` once on a one-off backend without a pool (its first success sweeps what
    killed runs left), then close it; a failure is the first request's to report."""
    try:
        backend = make_backend((settings or Settings.load()).model_copy(update={"pool_size": 0}))
        try:
            backend.check()
        finally:
            backend.close()
    except Exception as exc:
        logger.debug("start-up check: {}", exc)


def open_servers(
    app: App, path: str, listen: tuple[str, int] | None = None, token: bytes | None = None
) -> list[UnixServer | TCPServer]:
    """The unix socket's server (and the TCP one, with its token), not yet serving."""
    prepare_socket(path)
    old = os.umask(0o177)  # the socket is born 0600: no moment where others may connect
    try:
        unix = UnixServer(path, Handler)
    except OSError as exc:  # a path too long for a socket, a read-only folder...
        raise ConfigError(f"cannot listen on {path}: {exc}") from None
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    unix.app = app
    servers: list[UnixServer | TCPServer] = [unix]
    if listen:
        if not token:
            unix.server_close()
            os.unlink(path)
            raise ConfigError("TCP needs a token: never serve on TCP without one")
        try:
            tcp = TCPServer(listen, Handler)
        except OSError as exc:
            unix.server_close()
            os.unlink(path)
            raise ConfigError(f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror}") from None
        tcp.app, tcp.token = app, token
        servers.append(tcp)
    _limit(servers, app.settings)
    return servers


def _limit(servers: list[UnixServer | TCPServer], settings: Settings | None) -> None:
    """The limits of the server's own settings (else the defaults), its listeners
    sharing one count of requests in flight (`front.py`)."""
    slots = Slots(settings.serve_max_requests) if settings else Slots()
    for server in servers:
        server.slots = slots
        if settings:
            server.read_timeout = settings.serve_read_timeout


def close_servers(app: App, servers: list[UnixServer | TCPServer], path: str) -> None:
    """Stop taking requests, let those in flight finish, close the backends (which
    removes the warm pools' containers). Until the last request in flight has its
    answer, the listeners still answer: new requests with 503 (the client runs them
    cold), /readyz with 503 (a load balancer sends no more), /metrics as usual."""
    app.stop()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # new local clients run cold from now on, without connecting
    app.drain()  # each request ends by its own deadline
    for server in servers:
        server.shutdown()
    for server in servers:
        server.server_close()  # joins the last threads: probes, declined requests
    app.close()


def _where(server: UnixServer | TCPServer) -> str:
    address: Any = server.server_address  # a path, or (host, port)
    return address if isinstance(address, str) else f"{address[0]}:{address[1]}"


def _say(line: str) -> None:
    """The server's own lifecycle lines, whatever the log level."""
    _log.announce(line, "sandboxrun serve", depth=1)


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ConfigError(f"--listen {text!r}: use HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]"), int(port)


def server_state(settings: Settings) -> tuple[bool | None, str, str]:
    """`doctor`'s line on the server: (ok, "serve", what was found); None: a warning."""
    path = settings.serve_socket or _userconfig.default_socket()
    if settings.serve == "off":
        return True, "serve", 'off (serve = "off"): `run` and `exec` run cold'
    why = _client.untrusted(path)
    if why == "no socket":
        if settings.serve == "use":
            start = ' (serve = "use": start one with `sandboxrun serve`)'
        elif _client.in_ci():
            start = " (not started under CI=true: `sandboxrun serve` starts one)"
        else:
            start = f" (the next `run` or `exec` starts it; its log: {_client.log_path(path)})"
        return True, "serve", f"not running at {path}{start}"
    if why:
        return None, "serve", f"not used: {path}: {why}"
    sock = _client.connect(path)
    if sock is None:
        return None, "serve", f"not answering at {path} (a stale socket, or not yours)"
    try:
        _status, health = _client.exchange(sock, "GET", "/healthz")
        pid, backends = health["pid"], health["backends"]
        started, idle = health.get("started"), health.get("idleExit")
    except (OSError, ValueError, TypeError, KeyError) as exc:
        return None, "serve", f"not answering at {path}: {exc}"
    finally:
        sock.close()
    how = {"auto": f"started by run/exec, log {_client.log_path(path)}",
           "hand": "started by hand"}.get(started, "started by an older sandboxrun")  # fmt: skip
    stops = f"stops after {idle:g}s idle" if isinstance(idle, int | float) else "no idle exit"
    return True, "serve", (f"running at {path} (pid {pid}, {how}, {stops}, {backends}"
                           " backend(s)): used by run, exec")  # fmt: skip
