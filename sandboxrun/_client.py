"""The light client of `sandboxrun serve`; the `sandboxrun` command starts here.

`run` and `exec` first try the user's own server (`_server/`), which answers the same
command line with the same functions as the cold path, from a process that has the
engine connection (and, later, warm containers) ready. When no trusted server answers
(no socket, refused, wrong owner, a connect that times out, `serve = "off"` in the
config, `--no-serve`), the command runs cold in this process (`_cli`): the answer is
the same either way, only slower. With `serve = "start"` the command also starts a
server in the background for the next ones (it stops after 15 idle minutes).

What the client trusts. A server answers for the user's guard hooks, so the client
sends nothing until it knows the server is the user's own:
- the socket's place comes only from the user's config file (`serve_socket`) or the
  default (`default_socket`), never from a variable a repository can set;
- its folder is the user's, mode 0700, and the socket is the user's, mode 0600;
- the process at the other end runs as the user (SO_PEERCRED).

Light on purpose: the standard library's cheapest modules only, no docker, pydantic,
loguru, pathlib or http.client (its import costs tens of ms, as much as the rest of
the client; `bench/serve.py` measures it), so the request is a hand-written HTTP/1.1
POST. The server side is the standard library's http.server.
"""

from __future__ import annotations

import binascii
import io
import json
import os
import socket
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
# (`_settings`: the tightening one and the ignored ones it names; `_exec`: what the agent
# hands a hook: its plugin's root and data folder, its CLAUDE_ENV_FILE).
PASSED_ENV_PREFIX = "SANDBOXRUN_"
PASSED_ENV = ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_ENV_FILE")
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def main(argv: list[str] | None = None) -> int:
    """The `sandboxrun` command: through the server when one answers, else cold."""
    args = sys.argv[1:] if argv is None else list(argv)
    code = via_server(args)
    if code is not None:
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
    path, mode = socket_path(_config_of(args))
    if path is None:
        return None
    sock = connect(path, warn=True)
    if sock is None:
        if mode == "start" and untrusted(path) in ("no socket", None):
            start_server(path)  # for the next commands; this one runs cold
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
    path = table.get("serve_socket", default_socket())
    if mode not in ("auto", "start") or not isinstance(path, str) or not os.path.isabs(path):
        return None, "off"
    return path, mode


AUTO_IDLE_EXIT = 900  # seconds without a request before a server started on demand stops
SERVER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def start_server(path: str) -> None:
    """Start `sandboxrun serve` on `path` in the background, in a session of its own
    (the agent's signals to its hook do not reach it); it stops when idle. Its log is
    `serve.log` beside the socket. A server that loses a race to another exits."""
    import subprocess  # only here: most commands never start a server

    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        log = os.open(
            os.path.join(folder, "serve.log"),
            os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
    except OSError:
        return
    try:
        subprocess.Popen(
            [sys.executable, "-m", "sandboxrun", "serve", "--socket", path,
             "--idle-exit", str(AUTO_IDLE_EXIT)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            # Not this command's environment: an agent starts hooks with variables a
            # repository chose, and the server outlives this one command.
            env={"PATH": SERVER_PATH, "LANG": "C.UTF-8"}, cwd="/",
        )  # fmt: skip
    except OSError as exc:
        _warn(f"could not start a server at {path}: {exc}")
    finally:
        os.close(log)


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
    sock.settimeout(None)  # the server keeps the event's deadlines (`_session`)
    return sock


def post(sock: socket.socket, target: str, document: dict[str, Any]) -> tuple[int, Any]:
    """One HTTP/1.1 POST of a JSON document; (status, the JSON answer or None)."""
    return exchange(sock, "POST", target, json.dumps(document).encode())


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
    return int(parts[1]), json.loads(body) if body else None


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
