"""Host objects under a mount, the in-container deadline, and start failures (issue #8,
items 5, 7 and 1) against the real engine, under runc and gVisor.

The folders live under /var/tmp, not /tmp: Landlock's write allowlist is hierarchical,
so a mount below the hook's writable /tmp is not covered (README, Security).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from sandboxrun import DockerBackend, HookFactory, Settings
from sandboxrun._backends.helper import DEADLINE_GRACE
from sandboxrun._backends.labels import MANAGED as LABEL
from sandboxrun._dialects.base import sandbox_ending
from sandboxrun._settings import account_home
from sandboxrun._types import ExecRequest

from .conftest import cli, engine_backend, engine_runtime, engine_settings

OWNER = 1000  # the hook runs as the owner of the sockets and FIFOs: modes do not stop it


def settings(base: Path, **overrides: Any) -> Settings:
    """This suite's settings: hooks as the owner, whose folder a platform allowed."""
    return engine_settings(user=f"{OWNER}:{OWNER}", allowed_roots=(str(base),), **overrides)


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder outside /tmp holding a workspace and a home with a Cline hook folder."""
    root = Path(tempfile.mkdtemp(prefix="sandboxrun-host-objects-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    (root / "ws").mkdir()
    (root / "ws" / "README.md").write_text("hello from the workspace\n")
    (root / "home" / "Documents" / "Cline" / "Hooks").mkdir(parents=True)
    if os.getuid() == 0:  # as root, hand everything to the hook's uid
        for path in (root, *root.rglob("*")):
            os.lchown(path, OWNER, OWNER)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def folder(base: Path, where: str) -> Path:
    return base / "ws" if where == "workspace" else base / "home" / "Documents" / "Cline" / "Hooks"


def exec_argv(base: Path, *args: str) -> list[str]:
    """`sandboxrun exec` in the workspace, on this suite's runtime, as a command line."""
    config = base / "config.toml"
    runtime = f'runtime = "{engine_runtime()}"\n' if engine_runtime() else ""
    config.write_text(f'{runtime}allowed_roots = ["{base}"]\n')
    return cli("exec", "--workspace", str(base / "ws"), *args, config=config)


def run_probe(
    engine: DockerBackend, base: Path, body: str, where: str = "workspace"
) -> dict[str, Any]:
    """Run a Python PreToolUse hook kept in `where` (so that folder is mounted for it);
    return its contextModification."""
    hooks = base / "ws" / ".clinerules" / "hooks" if where == "workspace" else folder(base, where)
    hooks.mkdir(parents=True, exist_ok=True)
    script = hooks / "PreToolUse"
    script.write_text(
        "#!/usr/bin/python3\nimport json, os, socket\nout = {}\n"
        + body
        + "\nprint(json.dumps({'contextModification': json.dumps(out)}))\n"
    )
    script.chmod(0o755)
    if os.getuid() == 0:
        for p in (base / "ws" / ".clinerules", hooks, script):
            if p.exists():
                os.chown(p, OWNER, OWNER)
    s = settings(base)
    with engine_backend(s, client=engine.client) as backend:  # warm under SANDBOX_TEST_PATH
        factory = HookFactory(s, backend, home=str(base / "home"))
        result = factory.run("PreToolUse", {}, [str(base / "ws")]).to_json()
    (report,) = result["hooks"]
    assert report["status"] == "completed", report
    return dict(json.loads(result["contextModification"]))


@pytest.mark.parametrize("where", ["workspace", "hook folder"])
@pytest.mark.parametrize("mode", [0o600, 0o666])
def test_host_unix_sockets_under_a_mount_cannot_be_connected(
    engine: DockerBackend, base: Path, where: str, mode: int
) -> None:
    """A host daemon's stream and datagram sockets in a mounted folder get nothing from a hook."""
    place = folder(base, where)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(place / "daemon.sock"))
    server.listen()
    server.settimeout(0.2)
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(place / "daemon.dgram"))
    dgram.settimeout(0.2)
    for name in ("daemon.sock", "daemon.dgram"):
        os.chmod(place / name, mode)
        if os.getuid() == 0:
            os.chown(place / name, OWNER, OWNER)
    seen: list[str] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            for sock, what in ((server, "stream"), (dgram, "datagram")):
                try:
                    if what == "stream":
                        with sock.accept()[0] as conn:
                            seen.append(f"{what}: {conn.recv(100)!r}")
                    else:
                        seen.append(f"{what}: {sock.recv(100)!r}")
                except (TimeoutError, OSError):
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        out = run_probe(
            engine,
            base,
            f"""
for name, fn in [
    ("connect", lambda: socket.socket(socket.AF_UNIX).connect("{place}/daemon.sock")),
    ("sendto", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", "{place}/daemon.dgram")),
    ("pair", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0].sendto(b"x", "{place}/daemon.dgram")),
]:
    try:
        fn(); out[name] = "reached"
    except OSError as exc:
        out[name] = type(exc).__name__
""",
            where,
        )
        time.sleep(1.0)  # let the server take anything that was sent
    finally:
        done.set()
        thread.join()
        server.close()
        dgram.close()
    assert "reached" not in out.values(), out
    assert seen == []


def fifo_writes(fifo: Path) -> str:
    """Python lines that try to write into `fifo` and record how it went in `out`."""
    return f"""
for name, flags in [("write", os.O_WRONLY), ("read-write", os.O_RDWR)]:
    try:
        fd = os.open("{fifo}", flags | os.O_NONBLOCK); os.write(fd, b"pwned"); out[name] = "wrote"
    except OSError as exc:
        out[name] = type(exc).__name__
"""


def drained(reader: int) -> bytes:
    """What a FIFO's non-blocking reader got (nothing: b"")."""
    try:
        return os.read(reader, 100)
    except BlockingIOError:
        return b""


@pytest.mark.parametrize("where", ["workspace", "hook folder"])
def test_host_fifos_under_a_mount_cannot_be_written(
    engine: DockerBackend, base: Path, where: str
) -> None:
    """A FIFO (mode 0666) in a mounted folder with a host reader gets no bytes from a hook."""
    fifo = folder(base, where) / "pipe"
    os.mkfifo(fifo, 0o666)
    os.chmod(fifo, 0o666)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader: writers do not get ENXIO
    try:
        out = run_probe(
            engine,
            base,
            fifo_writes(fifo)
            + f"""
try:
    fd = os.open("{fifo}", os.O_RDONLY | os.O_NONBLOCK)
    os.write(os.open(f"/proc/self/fd/{{fd}}", os.O_WRONLY | os.O_NONBLOCK), b"pwned")
    out["reopen"] = "wrote"
except OSError as exc:
    out["reopen"] = type(exc).__name__
""",
            where,
        )
        got = drained(reader)
    finally:
        os.close(reader)
    assert "wrote" not in out.values(), out
    assert got == b""


def test_the_hook_still_reads_the_workspace_and_writes_tmp_and_home(
    engine: DockerBackend, base: Path
) -> None:
    """The protections take nothing a hook normally needs: workspace reads, /tmp and $HOME."""
    out = run_probe(
        engine,
        base,
        f"""
out["readme"] = open("{base}/ws/README.md").read()
for d in ("/tmp", os.environ["HOME"], "/dev/shm"):
    with open(d + "/x", "w") as f:
        f.write("x")
    os.mkfifo(d + "/f")
    out[d] = open(d + "/x").read()
with open("/dev/null", "w") as f:
    out["null"] = f.write("x")
a, b = socket.socketpair()
a.sendall(b"pair")
out["pair"] = b.recv(4).decode()
""",
    )
    assert out.pop("readme") == "hello from the workspace\n"
    home = os.path.realpath(account_home())  # the user's path (issue #9 item 4)
    assert out == {"/tmp": "x", home: "x", "/dev/shm": "x", "null": 1, "pair": "pair"}


def test_a_sigkilled_sandboxrun_leaves_no_hook_running_past_its_deadline(
    engine: DockerBackend, base: Path
) -> None:
    """The helper ends the container at its deadline though nobody is left to kill it."""
    timeout = 3
    proc = subprocess.Popen(
        exec_argv(base, "--timeout", str(timeout), "--", "sleep", "1000"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    mine = {"label": [f"{LABEL}=1", f"sandboxrun.pid={proc.pid}"]}
    try:
        started = time.monotonic()
        while not engine.api.containers(filters=mine):  # running ones only
            assert time.monotonic() - started < 60, "the hook container never started"
            assert proc.poll() is None, "sandboxrun ended before its hook started"
            time.sleep(0.1)
        killed = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        bound = timeout + DEADLINE_GRACE + 60  # generous: a shared 2-core machine
        while engine.api.containers(filters=mine):
            assert time.monotonic() - killed < bound, "the hook outlived its deadline"
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            proc.kill()
        for c in engine.api.containers(all=True, filters=mine):
            # Another sandboxrun's sweep may take it first, or be removing it right now
            # (409 "removal ... already in progress"): its owner is dead.
            try:
                engine.api.remove_container(c["Id"], force=True)
            except docker.errors.APIError as exc:
                if not isinstance(exc, docker.errors.NotFound) and exc.status_code != 409:
                    raise


MISSING = ("/nonexistent/python9", "x")


def test_a_hook_the_sandbox_cannot_start_is_a_sandbox_failure(
    engine: DockerBackend, base: Path
) -> None:
    """A missing interpreter is reported as the sandbox's failure, not as the hook's 127."""
    request = ExecRequest(
        argv=MISSING, stdin=b"", workdir=str(base / "ws"), mounts=(str(base / "ws"),), timeout=20
    )
    with engine_backend(settings(base), client=engine.client) as backend:
        result = backend.run(request)
    assert result.start_error and "/nonexistent/python9" in result.start_error, result
    ended = sandbox_ending(result, 20)
    assert ended and ended[0] == "failed" and "could not be started" in ended[1]


def test_fail_closed_blocks_a_hook_the_sandbox_cannot_start(
    engine: DockerBackend, base: Path
) -> None:
    """Cline under fail-closed cancels when a hook's interpreter is missing from the image.

    The preflight (`_sandbox.preflight`) finds the shebang's interpreter missing from the image
    and does not run the hook: an error naming it (before it, the shell's 127, a failed
    hook); the block is what matters (this held before too)."""
    hooks = base / "ws" / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text(f"#!{MISSING[0]}\nprint('allow')\n")
    (hooks / "PreToolUse").chmod(0o755)
    s = settings(base, fail_closed=True)
    factory = HookFactory(s, DockerBackend(s, client=engine.client), home=str(base / "home"))
    result = factory.run("PreToolUse", {}, [str(base / "ws")]).to_json()
    assert result["cancel"] is True, result
    (report,) = result["hooks"]
    assert (report["status"], report["exitCode"]) == ("error", None), report
    # Named either way: the VS Code rules say "(the interpreter of ...)"; Cline's SDK
    # starts the shebang's program itself, which is then "not mounted".
    assert report["error"].startswith("not run: ") and MISSING[0] in report["error"], report


@pytest.mark.parametrize("command", [list(MISSING), ["python9 guard.py"]], ids=["argv", "shell"])
def test_exec_fail_closed_blocks_a_command_that_cannot_start(
    base: Path, command: list[str]
) -> None:
    """`exec --fail-closed` answers the claude block (exit 2), never the 126/127 pass-through."""
    done = subprocess.run(
        exec_argv(base, "--fail-closed", "--", *command),
        input=b"{}",
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 2, done
    assert b"sandboxrun (fail-closed): the hook cannot start: " in done.stderr, done.stderr
