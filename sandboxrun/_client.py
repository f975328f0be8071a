"""The light client of `sandboxrun serve`; the `sandboxrun` command starts here.

`run` and `exec` first try the user's own server (`_server/`), which answers the same
command line with the same functions as the cold path, from a process that has the
engine connection (and, later, warm containers) ready. When no trusted server answers
(no socket, refused, wrong owner, a connect that times out, `serve = "off"` in the
config, `--no-serve`), the command runs cold in this process (`_cli`): the answer is
the same either way, only slower.

Warm by default (`serve = "auto"`, issue 19): a command that finds no server starts
one for the next commands (`start_server`) and answers cold itself, never waiting for
it. The server is detached (a session of its own, no stdin or stdout, its log beside
the socket), stops after `serve_idle` seconds without a request (15 minutes) and then
removes its pooled containers. One server per socket: the lock file beside it, which
the starting command takes and hands to the server, which holds it while it lives.
Not started under `CI=true` (a CI job runs a few commands: a server lingering after
the job helps nothing), nor with `serve = "use"` (a running one only) or `"off"`.

What the client trusts. A server answers for the user's guard hooks, so the client
sends nothing until it knows the server is the user's own:
- the socket's place comes only from the user's config file (`serve_socket`) or the
  default (`default_socket`), never from a variable a repository can set;
- its folder is the user's, mode 0700, and the socket is the user's, mode 0600;
- the process at the other end runs as the user (SO_PEERCRED).

Light on purpose: the standard library's cheapest modules only, no docker, pydantic,
loguru, pathlib, typing, tomllib (a simple config file is read without it:
`_userconfig.simple_toml`), socket.py (the C `_socket` does), http.client (its import
costs tens of ms, as much as the rest of the client; `bench/serve.py` measures it), so
the request is a hand-written HTTP/1.1 POST, nor `json` (it imports `re`, and with it
`enum`: 10 of the client's 13 ms of imports on Python 3.11), so JSON goes through `json`'s
own C accelerator `_json` (`dumps`, `loads`); `bench/client_start.py` measures the start.
The server side is the standard library's http.server.
"""

from __future__ import annotations

# The C module, not `socket.py`: that one imports selectors, enum and more (2 ms of
# the client's start) for what this client never uses.
import _socket as socket
import binascii
import io
import os
import stat
import struct
import sys

from ._errors import ConfigError
from ._userconfig import config_path, default_socket, read_config

TYPE_CHECKING = False  # not `typing`'s: its import alone costs the client milliseconds
if TYPE_CHECKING:
    from typing import Any


CONNECT_TIMEOUT = 1.0  # seconds: a server that does not accept by then is not used
# What the client passes of its environment: the only variables sandboxrun reads
# (`_settings`: the tightening one and the ignored ones it names; `_runner.exec`: what the agent
# hands a hook: its plugin's root and data folder, its CLAUDE_ENV_FILE; Goose's PLUGIN_ROOT;
# the Claude family's `passed_vars`, which exec checks before it sets them inside).
PASSED_ENV_PREFIX = "SANDBOXRUN_"
PASSED_ENV = ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_ENV_FILE", "PLUGIN_ROOT",
              "AI_AGENT", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ATTENDED",
              "QWEN_CODE_MODEL", "QWEN_CODE_MODEL_IDENTITY")  # fmt: skip
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def main(argv: list[str] | None = None) -> int:
    """The `sandboxrun` command: through the server when one answers, else cold."""
    args = sys.argv[1:] if argv is None else list(argv)
    code = via_server(args)
    if code is not None:
        if argv is None:  # the command itself: the answer is out, nothing else to undo
            # The interpreter's own teardown (modules, objects) costs the agent ~4 ms a
            # hook for nothing: what it waits for is our exit. stdout/stderr are flushed.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    from ._cli import main as cold

    return cold(args)


def via_server(argv: list[str]) -> int | None:
    """Answer `run`/`exec` through the user's server: the exit code, after writing
    the answer; None when the command is to run cold (stdin left for it to read)."""
    found = _split(argv)
    if found is None:
        return None
    verbose, command, args = found
    config = _config_of(args)
    path, mode = socket_path(config)
    if path is None:
        return None
    sock = connect(path, warn=True)
    if sock is None:
        if may_start(path, mode):
            start_server(path, config[0])  # for the next commands; this one runs cold
        return None
    stdin = sys.stdin.buffer.read() if not sys.stdin.isatty() else None
    try:
        request = {
            "args": args, "cwd": os.getcwd(), "verbose": verbose,
            "stdin": binascii.b2a_base64(stdin or b"", newline=False).decode("ascii"),
            "env": {k: v for k, v in os.environ.items()
                    if k.startswith(PASSED_ENV_PREFIX) or k in PASSED_ENV},
        }  # fmt: skip
        status, reply = post(sock, f"/v1/{command}", request)
    except (OSError, ValueError) as exc:
        # The server took the request and ended without an answer (killed, restarted):
        # the guard must still decide, so it runs cold (it may have run once already).
        _warn(f"the server at {path} gave no answer ({exc}); running cold")
        status, reply = 0, {}
    finally:
        sock.close()
    answer = _decode(reply) if status == 200 else None
    if answer is not None:
        stdout, stderr, code = answer
        sys.stdout.buffer.write(stdout)
        sys.stdout.buffer.flush()
        sys.stderr.buffer.write(stderr)
        sys.stderr.buffer.flush()
        return code
    if status not in (0, 503):  # 503: the server leaves this one to the cold path
        _warn(f"the server at {path} answered {status} without an answer; running cold")
    if stdin is not None:  # the cold path reads the same bytes
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    return None


def _split(argv: list[str]) -> tuple[int, str, list[str]] | None:
    """(verbosity, command, the command's arguments) of a `run` or `exec` that may
    go to the server; None for anything else (help, other commands, `--no-serve`).
    The server parses the arguments with the CLI's own parser; this only looks."""
    verbose = 0
    for i, word in enumerate(argv):
        if word in ("-v", "--verbose") or (word.startswith("-v") and set(word[1:]) == {"v"}):
            verbose += 1 if word.startswith("--") else len(word) - 1
            continue
        if word not in ("run", "exec"):
            return None
        args = argv[i + 1 :]
        options = args[: args.index("--")] if "--" in args else args
        if any(o.startswith("--no-") or o in ("-h", "--help") for o in options):
            return None  # --no-serve (or a prefix of it argparse accepts), or help
        return verbose, word, args
    return None


def _config_of(args: list[str]) -> tuple[str | None, bool]:
    """The config file named on the command line (made absolute), and whether it was."""
    options = args[: args.index("--")] if "--" in args else args
    for i, word in enumerate(options):
        name, eq, value = word.partition("=")
        if len(name) > 2 and "--config".startswith(name):  # argparse takes unique prefixes
            given = value if eq else (options[i + 1] if i + 1 < len(options) else "")
            return os.path.abspath(given) if given else None, True
    return None, False


def socket_path(config: tuple[str | None, bool]) -> tuple[str | None, str]:
    """The server's socket by the user's config file, and its `serve` setting; no path:
    the server is not to be used (`serve = "off"`), or the file is one the cold path
    must judge (it reports what is wrong)."""
    given, named = config
    if named and given is None:
        return None, "off"
    try:
        table = read_config(given or config_path(), required=named)
    except ConfigError:
        return None, "off"
    mode = table.get("serve", "auto")
    mode = "auto" if mode == "start" else mode  # its old name (`Settings` says so)
    path = table.get("serve_socket", default_socket())
    if mode not in ("auto", "use") or not isinstance(path, str) or not os.path.isabs(path):
        return None, "off"
    return path, mode


def may_start(path: str, mode: str) -> bool:
    """Whether a command starts a server at `path` for the commands to come: `serve =
    "auto"`, not in CI, and no server there."""
    return mode == "auto" and not in_ci() and vacant(path)


def warm_up(config: str | None = None) -> int | None:
    """Start the user's server for the hooks to come, without waiting for it, where a
    `run` or `exec` with the config file `config` (None: the user's) would start one:
    the session-start check's (`_cli/sessionstart.py`), so that the session's first
    hook finds it. Its pid, or None (none wanted, or one is there or starting)."""
    path, mode = socket_path((config, config is not None))
    if path is None or not may_start(path, mode):
        return None
    return start_server(path, config)


def in_ci() -> bool:
    """Whether this runs in a CI job (`CI=true`, set by GitHub Actions, GitLab CI,
    CircleCI, Travis, Buildkite...): no server is started there. A variable can only
    turn the start off, never on, nor choose anything about a server."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


SERVER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LOG_MAX = 1 << 20  # bytes of serve.log before it is moved to serve.log.1


def lock_path(path: str) -> str:
    """The lock file of the server at socket `path`: held by the one server (and, until
    it has handed it over, by the command that starts it)."""
    return path + ".lock"


def log_path(path: str) -> str:
    """The log of a server started on demand at socket `path`."""
    return os.path.join(os.path.dirname(path), "serve.log")


def server_argv(path: str, config: str | None, lock: int) -> list[str]:
    """The command line of a server started on demand (tests replace it)."""
    named = ["--config", config] if config else []
    return [sys.executable, "-m", "sandboxrun", "serve", "--socket", path, *named,
            "--lock-fd", str(lock)]  # fmt: skip


def start_server(path: str, config: str | None = None) -> int | None:
    """Start `sandboxrun serve` on `path` for the next commands, without waiting for it:
    its pid, or None when none was started (one is starting or running: the lock is
    held; or the folder is not the user's). The server runs in a session of its own
    (the agent's signals to its hook's process group do not reach it), with no stdin
    or stdout (an agent waiting for its hook's pipes to close is not held), its
    log in `serve.log` beside the socket, and stops after `serve_idle` seconds."""
    import fcntl  # only here: most commands never start a server
    import subprocess

    folder = os.path.dirname(path)
    uid = os.getuid()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
            return None  # not ours: `connect` never uses it either
        if st.st_mode & 0o077:
            os.chmod(folder, 0o700)  # ours: as `serve` itself does
        flags = os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        lock = os.open(lock_path(path), os.O_RDWR | flags, 0o600)
    except OSError:
        return None
    log = -1
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # another command is starting the server, or it runs
        log = _open_log(log_path(path))
        proc = subprocess.Popen(
            server_argv(path, config, lock),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            start_new_session=True, pass_fds=(lock,),  # the lock goes on with the server
            # Not this command's environment: an agent starts hooks with variables a
            # repository chose, and the server outlives this one command.
            env={"PATH": SERVER_PATH, "LANG": "C.UTF-8"}, cwd="/",
        )  # fmt: skip
        # Never waited for: it outlives this command (init reaps it). Said so, or
        # Popen's finaliser warns that it "is still running".
        proc.returncode = 0
        return proc.pid
    except OSError as exc:
        _warn(f"could not start a server at {path}: {exc}")
        return None
    finally:
        os.close(lock)  # the server's copy holds the lock from now on
        if log >= 0:
            os.close(log)


def _open_log(path: str) -> int:
    """The server's log, appended to; moved to `.1` past LOG_MAX (one old log kept)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    if os.fstat(fd).st_size > LOG_MAX:
        os.close(fd)
        os.replace(path, path + ".1")
        fd = os.open(path, flags, 0o600)
    return fd


def untrusted(path: str) -> str | None:
    """Why the socket at `path` is not the user's own (None: it is). The checks on the
    file; the server's peer credentials are checked on connect."""
    uid = os.getuid()
    folder = os.path.dirname(path)
    try:
        dst, sst = os.lstat(folder), os.lstat(path)
    except OSError:
        return "no socket"
    if not stat.S_ISDIR(dst.st_mode) or dst.st_uid != uid or dst.st_mode & 0o077:
        return f"its folder {folder} is not yours with mode 0700"
    if not stat.S_ISSOCK(sst.st_mode) or sst.st_uid != uid or sst.st_mode & 0o077:
        return "it is not a socket of yours with mode 0600"
    return None


def vacant(path: str) -> bool:
    """Whether no server is at `path`: no socket, or one of the user's that nobody
    accepts on (a killed server's, which a new server replaces). Not vacant: a socket
    that is not the user's, or that a process (of any user) answers on."""
    why = untrusted(path)
    if why is not None:
        return why == "no socket"
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.setblocking(False)  # a full backlog says EAGAIN: someone is there
    try:
        probe.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        return True
    except OSError:
        return False
    finally:
        probe.close()
    return False


def connect(path: str, warn: bool = False) -> socket.socket | None:
    """A connection to the user's own server at `path`, or None (not there, refused,
    too slow to accept, or not the user's: with `warn`, that is said on stderr)."""
    why = untrusted(path)
    if why is not None:
        if warn and why != "no socket":
            _warn(f"not using the server at {path}: {why}")
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(path)
        _pid, peer_uid, _gid = _PEERCRED.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
        )
    except OSError:
        sock.close()
        return None
    if peer_uid != os.getuid():
        sock.close()
        if warn:
            _warn(f"not using the server at {path}: it runs as uid {peer_uid}, not yours")
        return None
    sock.settimeout(None)  # the server keeps the event's deadlines (`_runner.session`)
    return sock


def post(sock: socket.socket, target: str, document: dict[str, Any]) -> tuple[int, Any]:
    """One HTTP/1.1 POST of a JSON document; (status, the JSON answer or None)."""
    return exchange(sock, "POST", target, dumps(document).encode())


def exchange(
    sock: socket.socket, method: str, target: str, body: bytes = b"", headers: str = ""
) -> tuple[int, Any]:
    """One HTTP/1.1 request and its whole answer: (status, JSON body or None).
    `headers`: more header lines, each ending in CRLF. `Connection: close`: the answer
    ends where the stream does."""
    head = (
        f"{method} {target} HTTP/1.1\r\nHost: sandboxrun\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n{headers}\r\n"
    )
    sock.sendall(head.encode("ascii") + body)
    chunks = []
    while chunk := sock.recv(1 << 16):
        chunks.append(chunk)
    return parse_response(b"".join(chunks))


def parse_response(raw: bytes) -> tuple[int, Any]:
    """(status, JSON body) of a whole HTTP response; ValueError when it is cut short."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if not sep or len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ValueError("not an HTTP response")
    headers = dict(line.lower().split(":", 1) for line in lines[1:] if ":" in line)
    length = headers.get("content-length")
    if length is not None and len(body) != int(length):
        raise ValueError("the answer was cut short")
    return int(parts[1]), loads(body.decode("utf-8")) if body else None


def dumps(document: Any) -> str:
    """`json.dumps(document)`, compact, by `json`'s C encoder without importing `json`
    (see the module); `json` itself where that accelerator is missing or differs."""
    try:
        from _json import encode_basestring_ascii, make_encoder

        encode = make_encoder(
            {}, _unencodable, encode_basestring_ascii, None, ":", ",", False, False, True
        )  # json.encoder's c_make_encoder call: markers, default, ..., allow_nan
    except (ImportError, TypeError):  # a Python without it, or another signature
        import json

        return json.dumps(document, separators=(",", ":"))
    return "".join(encode(document, 0))


def _unencodable(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class _Scanning:
    """What `json`'s C scanner reads of its decoder: `json.loads`'s defaults."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int, parse_constant = float, int, float  # float("NaN") and ±Infinity


def loads(text: str) -> Any:
    """`json.loads(text)` by `json`'s C scanner without importing `json`; ValueError
    when it is not one JSON document (whitespace around it allowed, as `json` does)."""
    try:
        from _json import make_scanner
    except ImportError:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(" \t\n\r"))
    try:
        document, end = make_scanner(_Scanning())(text, start)  # type: ignore[arg-type]
    except StopIteration:
        raise ValueError(f"no JSON document at character {start}") from None
    if text[end:].strip(" \t\n\r"):
        raise ValueError(f"extra data after the JSON document at character {end}")
    return document


def _decode(reply: Any) -> tuple[bytes, bytes, int] | None:
    """(stdout, stderr, exit code) of a server's answer; None if it is not one."""
    try:
        code = reply["exitCode"]
        if not isinstance(code, int) or isinstance(code, bool):
            return None
        return binascii.a2b_base64(reply["stdout"]), binascii.a2b_base64(reply["stderr"]), code
    except (TypeError, KeyError, ValueError):
        return None


def _warn(message: str) -> None:
    sys.stderr.write(f"sandboxrun: warning: {message}\n")
    sys.stderr.flush()
