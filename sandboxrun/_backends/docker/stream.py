"""The stream of one run: attach, stdin in, stdout and stderr out within their caps,
the deadline's kill, and the answer (`Run`).

One container's run, cold or warm, is one `Run`: it attaches (or takes the stream a
pooled container was attached with), feeds the event and half-closes stdin, reads the
output as it comes (keeping the last `stdout_tail` bytes of stdout and 64 KiB of stderr,
killing the container past `output_limit`), and answers from the helper's final frame or,
without one, from the engine's `wait` and `inspect`. Kills run on timer threads, never on
the reading thread: the engine drains the attach stream before a container can exit, so a
reader that stopped to kill would wait behind its own unread output.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from datetime import datetime
from typing import Any, Protocol

from docker.utils.socket import STDERR, STDOUT, frames_iter

from ..._log import logger
from ..._sandbox import envfile as _envfile
from ..._settings import Settings
from ..._types import ExecRequest, ExecResult
from ..helper import (
    DEADLINE_GRACE,
    Frame,
    FrameReader,
    frame_header,
    new_nonce,
    start_error,
)
from ..lifecycle import STREAM_GRACE, timed_out
from .engine import retry_engine

ENV_FILE_POLL = 0.05  # seconds between two looks at a running hook's CLAUDE_ENV_FILE


class Owner(Protocol):
    """What a run asks of its backend (`DockerBackend`): the engine and the limits."""

    settings: Settings

    @property
    def api(self) -> Any: ...


class Stale(Exception):
    """A pooled container had exited before the attach: nothing took the event."""


class Run:
    """The mutable state of one container's run; used once."""

    def __init__(
        self,
        backend: Owner,
        cid: str,
        request: ExecRequest,
        created: float,
        warm: bool = False,
        framed: bool = False,
    ) -> None:
        self.b, self.cid, self.req, self.created = backend, cid, request, created
        self.warm = warm  # started ahead of time, waiting at its gate: deliver, not start
        # Its helper reads this nonce before the event and ends with a frame carrying it.
        self.nonce = new_nonce() if framed else None
        self.frames = (FrameReader(self.nonce), FrameReader(self.nonce)) if self.nonce else ()
        self.stale = False  # it had exited before our attach (`_check_alive`)
        self.attach_at = 0.0  # wall clock, as the engine's FinishedAt (the same host)
        self.ended = threading.Event()  # the stream ended (or the frames came)
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.total = 0
        self.truncated = False
        self.timed_out = False
        self.deadline_fired = False
        self.killed_reason: str | None = None
        self.sock: Any = None
        self.attached: Any = None
        self.preattached = False  # the stream was attached at the container's launch

    def attach(self, attached: Any = None) -> None:
        """Attach to the container's stdin/stdout/stderr, or take the stream a pooled
        container was attached with at its launch (`attached`).

        A stream attached before the container's start ends when it exits: if it is
        readable now (an end, or the gate's own error), the container ended while idle
        and nothing is delivered (`Stale`); if it ends later without a word, `execute`
        asks when it exited (`_ended_before`). A warm run attached only now asks the
        engine beside the delivery whether it still runs (`_check_alive`): an attach to
        a container that had already exited would wait forever."""
        self.attach_at = time.time()
        self.preattached = attached is not None
        if attached is None:
            attached = attach_stream(self.b.api, self.cid)
        self.attached = attached
        self.sock = getattr(attached, "_sock", attached)
        if self.preattached:
            poller = select.poll()  # not select(): a busy server's descriptors pass 1024
            poller.register(self.sock, select.POLLIN)
            if poller.poll(0):
                self._hang_up()
                self.sock.close()
                attached.close()
                raise Stale(self.cid)
        elif self.warm:
            threading.Thread(target=self._check_alive, daemon=True).start()

    def _check_alive(self) -> None:
        """An attach to a container that had already exited would wait forever (one that
        exits after the attach ends our stream). Asked after the attach: if it runs,
        any later exit ends the stream. If not, either it had exited before the attach
        (its FinishedAt says so, or it is gone) and the stream stays silent, or the hook
        already ran and its stream is ending: waited for, up to STREAM_GRACE. Silent:
        hang up (`stale`), and the run goes cold; no hook took the event."""
        try:
            state = self._state()
        except Exception as exc:  # gone: the same as exited before
            logger.debug("inspect {}: {}", self.cid[:12], exc)
            state = {"Running": False}
        if state["Running"]:
            return
        before = _finished(state) < self.attach_at
        if (not before and self.ended.wait(STREAM_GRACE)) or self.total:
            return
        self.stale = True
        self._hang_up()

    def execute(self) -> ExecResult:
        api = self.b.api
        if self.attached is None:
            self.attach()
        attached = self.attached
        writer = threading.Thread(target=self._feed, daemon=True)
        # With a frame, the helper's deadline is the hook's own and ours its backstop.
        deadline = self.req.timeout + (DEADLINE_GRACE if self.nonce else 0.0)
        try:
            if not self.warm:  # a warm container runs already, waiting for its event
                # Not retried: a start that reached the engine may have run the hook.
                api.start(self.cid)
            writer.start()
            timer = threading.Timer(deadline, self._deadline)
            watchdog = threading.Timer(deadline + STREAM_GRACE, self._hang_up)
            ended = threading.Event()
            watch = threading.Thread(target=self._watch_env_file, args=(ended,), daemon=True)
            for t in (timer, watchdog, *((watch,) if self.req.env_file else ())):
                t.daemon = True
                t.start()
            try:
                self._read()
            finally:
                timer.cancel()
                watchdog.cancel()
                ended.set()
                self.ended.set()
            if self.req.env_file and not self.killed_reason and self._env_file_over():
                # Ended between two looks of the watch (RLIMIT_FSIZE stopped the writer, and
                # a framed run answers at once): still an env file over its cap, said so.
                self.killed_reason = self._env_file_reason()
            frame = self._frame()
            if frame is None:
                # The stream can end (the kill worked) before the kill's own answer reaches
                # the timer thread: wait for it, or `timed_out` is read before it is set.
                timer.join(timeout=STREAM_GRACE)
            duration_ms = int((time.monotonic() - self.created) * 1000)
        finally:
            self._hang_up()
            if writer.is_alive():
                writer.join(timeout=STREAM_GRACE)  # unblocked by the shutdown above
            self.sock.close()
            attached.close()
        if self.stale and not self.total:
            raise Stale(self.cid)
        if self.preattached and frame is None and not self.total and self._ended_before():
            raise Stale(self.cid)
        if frame is not None:
            return self._result(frame, duration_ms)
        exit_code = retry_engine(api.wait)(self.cid, timeout=STREAM_GRACE)["StatusCode"]
        oom = bool(self._state().get("OOMKilled"))
        return ExecResult(
            exit_code=exit_code,
            stdout=bytes(self.stdout),
            stderr=bytes(self.stderr),
            duration_ms=duration_ms,
            timed_out=timed_out(self.timed_out, self.deadline_fired, exit_code, oom, self.stderr),
            start_error=start_error(exit_code, self.stderr),
            oom_killed=oom,
            output_truncated=self.truncated,
            killed_reason=self.killed_reason,
            warm=self.warm,
        )

    def _ended_before(self) -> bool:
        """Whether a pooled container had exited before its event was delivered: its
        silent stream then says only that nothing took the event (the run goes cold).
        Gone, it may have been removed under a run that had started (`abort`): unknown,
        and a hook is never run twice, so not before (the run ends in an error)."""
        try:
            state = self._state()
        except Exception as exc:
            logger.debug("inspect {}: {}", self.cid[:12], exc)
            return False
        return not state["Running"] and _finished(state) < self.attach_at

    def _frame(self) -> Frame | None:
        """The helper's final frame, when it came whole and alike on both streams."""
        if not self.frames or not all(r.done for r in self.frames):
            for stream, reader in zip((STDOUT, STDERR), self.frames, strict=False):
                self._keep(stream, reader.flush())  # what was held back is the hook's
            return None
        out, err = (r.frame for r in self.frames)
        return out if out is not None and out == err else None

    def _result(self, frame: Frame, duration_ms: int) -> ExecResult:
        """The answer from the helper's frame: its exit status, and what ended the run."""
        oom = frame.oom
        if oom is None:  # the helper could not read its cgroup's counter: ask the engine
            oom = bool(self._state().get("OOMKilled"))
        return ExecResult(
            exit_code=frame.exit_code,
            stdout=bytes(self.stdout),
            stderr=bytes(self.stderr),
            duration_ms=duration_ms,
            timed_out=self.timed_out or frame.reason == "deadline",
            start_error=start_error(frame.exit_code, self.stderr),
            oom_killed=oom,
            output_truncated=self.truncated,
            # "output" only follows our SIGUSR1, sent with the reason set (`_read`).
            killed_reason=self.killed_reason,
            warm=self.warm,
        )

    def _state(self) -> dict[str, Any]:
        return dict(retry_engine(self.b.api.inspect_container)(self.cid)["State"])

    def _feed(self) -> None:
        """Stream stdin in (after the helper's nonce, on a framed run), then half-close so
        the hook sees EOF. A hook that never reads makes this fail or block until the
        container is gone; both are fine."""
        head = frame_header(self.nonce) if self.nonce else b""
        with contextlib.suppress(OSError):
            self.sock.sendall(head + self.req.stdin)
            self.sock.shutdown(socket.SHUT_WR)

    def _read(self) -> None:
        for stream, data in frames_iter(self.sock, tty=False):  # type: ignore[no-untyped-call]
            if self.frames:
                data = self.frames[0 if stream == STDOUT else 1].feed(data)
                if all(r.done for r in self.frames):
                    self._keep(stream, data)
                    return  # the run is over: what its leftovers write is not read
            self._keep(stream, data)

    def _keep(self, stream: int, data: bytes) -> None:
        """Count and keep a piece of the hook's output, within the limits."""
        s = self.b.settings
        self.total += len(data)
        if self.killed_reason or not data:
            return  # draining: the container is being killed
        buf = self.stdout if stream == STDOUT else self.stderr
        buf += data
        keep = s.stdout_tail if stream == STDOUT else 64 << 10
        if len(buf) > keep:
            del buf[: len(buf) - keep]
            self.truncated = True
        if self.total > s.output_limit:
            self.truncated = True
            self.killed_reason = f"killed: output exceeded {s.output_limit} bytes (output_limit)"
            # A framed run's helper ends the hook itself and says so in its frame.
            signal = "SIGUSR1" if self.nonce else "SIGKILL"
            threading.Thread(target=self._kill, args=(signal,), daemon=True).start()

    def _watch_env_file(self, ended: threading.Event) -> None:
        """Kill the hook once its CLAUDE_ENV_FILE passes what is ever read of it: what
        reaches the host's disk stays near `_sandbox.envfile.MAX_BYTES` (`file_size_limit` is
        the hard bound, for writes faster than this looks)."""
        while not ended.wait(ENV_FILE_POLL):
            over = self._env_file_over()
            if over is None:
                return
            if over and not self.killed_reason:
                self.killed_reason = self._env_file_reason()
                self._kill()
                return

    def _env_file_over(self) -> bool | None:
        """Whether the run's CLAUDE_ENV_FILE is past what is ever read of it (None: gone)."""
        try:
            return os.stat(self.req.env_file or "").st_size > _envfile.MAX_BYTES
        except OSError:
            return None

    @staticmethod
    def _env_file_reason() -> str:
        """Killed by the watch, or ended by the file size limit between two looks."""
        return f"stopped: it wrote more than {_envfile.MAX_BYTES} bytes to CLAUDE_ENV_FILE"

    def _deadline(self) -> None:
        self.deadline_fired = True
        self.timed_out = self._kill()

    def _kill(self, signal: str = "SIGKILL") -> bool:
        """SIGKILL the container (SIGUSR1: ask a framed run's helper to end the hook);
        True if it was still running."""
        try:
            retry_engine(self.b.api.kill)(self.cid, signal=signal)
            return True
        except Exception as exc:  # already exited, or gone
            logger.debug("kill {}: {}", self.cid[:12], exc)
            return False

    def _hang_up(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)


def attach_stream(api: Any, cid: str) -> Any:
    """A stream to the container's stdin, stdout and stderr (docker-py's socket)."""
    params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
    return retry_engine(api.attach_socket)(cid, params=params)


def close_stream(attached: Any) -> None:
    """Close a stream no run will use (its container is being removed)."""
    with contextlib.suppress(OSError):
        getattr(attached, "_sock", attached).close()
        attached.close()


def _finished(state: dict[str, Any]) -> float:
    """When the engine says the container exited (wall clock); 0: never, or unknown."""
    try:
        return datetime.fromisoformat(str(state.get("FinishedAt"))).timestamp()
    except ValueError:
        return 0.0
