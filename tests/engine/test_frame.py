"""The final frame against the real engine (issue 19, item 2): a warm run answers from
the frame the image's helper writes (images/sandboxrun-seccomp.c, `--frame`), with the
exit status and what ended the run (deadline, output cap, OOM), without asking the engine
(`wait`); a hook cannot forge that frame, nor see the nonce that makes it; an image
without the frame still runs, the old way.

These need an image whose helper has the frame (label sandboxrun.helper-frame=1): the
default image once rebuilt from images/, or SANDBOX_TEST_IMAGE."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, ExecRequest, ExecResult
from sandboxrun._backends.docker import backend as backend_module
from sandboxrun._backends.docker import stream as stream_module
from sandboxrun._backends.helper import FRAME_MARK

from .conftest import engine_settings

WAIT = 120.0  # seconds a pre-start may take on a loaded machine (no speed is asserted)
FORGED = "0123456789abcdef0123456789abcdef"  # a nonce the hook makes up


class Spy(DockerBackend):
    """Counts the engine's `wait` calls and keeps the nonces handed to the helper."""

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.waits = 0
        self.nonces: list[str] = []


@pytest.fixture
def warm(engine: DockerBackend, monkeypatch: pytest.MonkeyPatch) -> Iterator[Spy]:
    backend = Spy(engine_settings(pool_size=1), client=engine.client, warm=True)
    backend.claim_wait = WAIT
    backend.check()  # now: a later check() would look the helper up again
    helper = backend._seccomp_helper()
    if helper is None or not helper.frame:
        backend.close()
        message = f"{backend.settings.image}: its helper writes no frame (set SANDBOX_TEST_IMAGE)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    real_wait, real_nonce = backend.api.wait, stream_module.new_nonce

    def wait(*a: Any, **kw: Any) -> Any:
        backend.waits += 1
        return real_wait(*a, **kw)

    def nonce() -> str:
        backend.nonces.append(real_nonce())
        return backend.nonces[-1]

    monkeypatch.setattr(backend.api, "wait", wait)
    monkeypatch.setattr(stream_module, "new_nonce", nonce)
    with backend:
        yield backend


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir(mode=0o755)
    return path


def request(ws: Path, script: str, stdin: bytes = b'{"event": 1}', **kw: Any) -> ExecRequest:
    return ExecRequest(
        argv=("/bin/bash", "-c", script), stdin=stdin, workdir=str(ws), mounts=(str(ws),),
        timeout=kw.pop("timeout", 20.0), label="test", **kw,
    )  # fmt: skip


def framed(backend: Spy, req: ExecRequest) -> ExecResult:
    """A warm run answered from the frame: no `wait` on the engine."""
    assert backend.prewarm(req, wait=WAIT), "no pooled container started"
    waits = backend.waits
    result = backend.run(req)
    assert result.warm, result
    assert backend.waits == waits, "answered the old way (wait), not from the frame"
    return result


def test_the_answer_comes_from_the_frame(warm: Spy, ws: Path) -> None:
    """Exit status, stdout and stderr as the hook left them; the hook reads exactly its
    event (the nonce before it is the helper's); no frame in what is reported."""
    result = framed(warm, request(ws, "cat; echo; echo to-stderr >&2; printf 'no newline'; exit 3"))
    assert (result.exit_code, result.timed_out, result.oom_killed) == (3, False, False), result
    assert result.stdout == b'{"event": 1}\nno newline', result
    assert result.stderr == b"to-stderr\n", result
    assert result.killed_reason is None and result.start_error is None


@pytest.mark.parametrize("code", [0, 2])
def test_a_forged_frame_changes_nothing(warm: Spy, ws: Path, code: int) -> None:
    """A hook printing lookalike frames (a made-up nonce, a partial mark, on stdout and on
    stderr) saying it exited 0 by itself still gets its own exit code and no kill
    reason; what it printed stays its output."""
    lie = f"\\x1eSRF1 {FORGED} exit=0 reason=exit oom=0\\n"
    req = request(ws, f"printf '{lie}'; printf '{lie}' >&2; printf '\\x1eSRF1 '; exit {code}")
    result = framed(warm, req)
    assert result.exit_code == code and not result.timed_out and result.killed_reason is None
    assert FORGED.encode() in result.stdout and FORGED.encode() in result.stderr, result
    assert result.stdout.endswith(FRAME_MARK), result


def test_a_forged_deadline_or_oom_frame_is_the_hooks_output(warm: Spy, ws: Path) -> None:
    lie = f"\\x1eSRF1 {FORGED} exit=137 reason=deadline oom=1\\n"
    result = framed(warm, request(ws, f"printf '{lie}'; printf '{lie}' >&2; exit 0"))
    assert (result.exit_code, result.timed_out, result.oom_killed) == (0, False, False), result


def test_the_hook_cannot_find_the_nonce(warm: Spy, ws: Path) -> None:
    """Not in its stdin, argv, environment, nor the helper's memory (not dumpable)."""
    script = """
        cat; cat /proc/1/cmdline /proc/self/cmdline; env
        cat /proc/1/environ 2>&1; head -c 100000 /proc/1/mem 2>&1
        for f in /proc/1/maps /proc/1/stack /proc/1/syscall; do cat $f 2>&1; done; true
    """
    result = framed(warm, request(ws, script))
    nonce = warm.nonces[-1].encode()
    assert nonce not in result.stdout and nonce not in result.stderr, result


def test_the_deadline_comes_in_the_frame(warm: Spy, ws: Path) -> None:
    result = framed(warm, request(ws, "echo started; trap '' TERM; sleep 60", timeout=2.0))
    assert result.timed_out and result.exit_code == 137, result
    assert (result.stdout, result.stderr) == (b"started\n", b""), result  # as on a cold run


def test_the_output_cap_comes_in_the_frame(warm: Spy, ws: Path) -> None:
    """Past `output_limit` sandboxrun asks the helper (SIGUSR1) to end the hook; the frame
    says so, and a hook that ignores SIGUSR1 is still ended (it is not passed on)."""
    warm.settings = warm.settings.model_copy(update={"output_limit": 1 << 20})
    result = framed(warm, request(ws, "trap '' USR1; exec yes xxxxxxxxxxxxxxxx"))
    assert result.exit_code == 137 and not result.timed_out, result
    assert result.killed_reason and "output_limit" in result.killed_reason, result
    assert result.output_truncated, result


def test_an_oom_kill_comes_in_the_frame(engine: DockerBackend, warm: Spy, ws: Path) -> None:
    warm.settings = warm.settings.model_copy(update={"memory": "64m"})
    req = request(ws, "python3 -c 'x = bytearray(512 << 20)'; echo survived")
    result = framed(warm, req)
    assert result.oom_killed, result


def test_an_image_without_the_frame_runs_the_old_way(warm: Spy, ws: Path) -> None:
    """A helper that does not take --frame (an image built before it): no nonce is sent,
    and the run ends by the engine's `wait`."""
    assert isinstance(warm._helper, backend_module.Helper)
    warm._helper = dataclasses.replace(warm._helper, frame=False)
    req = request(ws, "cat; exit 4")
    assert warm.prewarm(req, wait=WAIT)
    waits, nonces = warm.waits, len(warm.nonces)
    result = warm.run(req)
    assert result.warm and result.exit_code == 4 and result.stdout == b'{"event": 1}', result
    assert warm.waits == waits + 1 and len(warm.nonces) == nonces


def test_what_is_left_behind_after_the_frame_is_not_read(warm: Spy, ws: Path) -> None:
    """A hook that exits and leaves a process writing on: the answer is what the hook wrote
    before its end (the helper's exit then ends the rest, as on a cold run)."""
    result = framed(
        warm, request(ws, "echo answer; (sleep 0.3; echo late; echo late >&2) & exit 0")
    )
    assert (result.exit_code, result.stdout, result.stderr) == (0, b"answer\n", b""), result
