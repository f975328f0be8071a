"""The image's helper (images/sandboxrun-seccomp.c): how it is called, what it reports.

An image names its helper in the label `sandboxrun.seccomp-helper`. Protocol 1 (no
`sandboxrun.helper-protocol` label): `helper COMMAND [ARG...]` under docker-init, io_uring
denied. Protocol 2: the helper is the container's init and takes options before `--`:
a Landlock write allowlist (host FIFOs in mounted folders cannot be opened for write),
no AF_UNIX sockets (host sockets there cannot be connected to), and a deadline of its
own, so a container ends on time even when the sandboxrun that started it is gone.
The label `sandboxrun.helper-gate=1` says a protocol-2 helper also takes `--gate IDLE`:
the hook starts only once stdin is readable (the warm paths' pool, `pool.py`). A flag
rather than a protocol 3, so that an older sandboxrun still speaks protocol 2 to it.
The label `sandboxrun.helper-frame=1` says it also takes `--frame`: a nonce on stdin before
the event, and at the end a final frame with that nonce on stdout and stderr, carrying the
hook's exit status and what ended it (`FrameReader`; the format is in the helper's source).
An image without the label runs as before: the answer waits for the container's exit.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PATH_LABEL = "sandboxrun.seccomp-helper"
PROTOCOL_LABEL = "sandboxrun.helper-protocol"
GATE_LABEL = "sandboxrun.helper-gate"
FRAME_LABEL = "sandboxrun.helper-frame"
# The in-container deadline comes this long after ours, so that ours normally wins
# and reports `timed_out`; the helper's only matters when we are gone.
DEADLINE_GRACE = 5.0
# What a hook may write (tmpfs, devices, /proc/self); read-only mounts stay read-only
# anyway, and Landlock keeps the FIFOs in them from being opened for write.
WRITABLE = ("/tmp", "/dev", "/proc")
# Last stderr lines that mean the machinery, not the hook, failed to start it: ours and
# docker-init's (tini), for images without a protocol-2 helper. A hook can print these
# itself; that only turns its own run into a sandbox failure (a block under
# --fail-closed), never into an allow, which it could answer anyway.
START_ERRORS = ("sandboxrun-seccomp: start-error: ", "[FATAL tini (")
DEADLINE = "sandboxrun-seccomp: deadline: "


@dataclass(frozen=True, slots=True)
class Helper:
    path: str
    protocol: int
    gate: bool = False  # takes --gate: a container can be started ahead of its event
    frame: bool = False  # takes --frame: the run's end comes as a final frame (`FrameReader`)


def image_helper(labels: Mapping[str, str], runtime: str | None) -> Helper | None:
    """The helper an image's labels name, if any, and the protocol it speaks."""
    path = labels.get(PATH_LABEL)
    if not path:
        return None
    protocol = 2 if labels.get(PROTOCOL_LABEL) == "2" else 1
    if protocol == 1 and runtime == "runsc":
        # Under gVisor io_uring is gVisor's own and never reaches the host kernel:
        # the old helper would add a moving part and nothing else.
        return None
    gate = protocol == 2 and labels.get(GATE_LABEL) == "1"
    return Helper(path, protocol, gate=gate, frame=gate and labels.get(FRAME_LABEL) == "1")


def command(
    helper: Helper | None,
    argv: Sequence[str],
    timeout: float,
    writable: Sequence[str],
    runtime: str | None,
    landlock_optional: bool = False,
    gate: float | None = None,
    frame: bool = False,
) -> list[str]:
    """The container's command line for `argv`, the hook allowed to write below
    `writable` (its home's folders, its env file, plugin data) besides /tmp. Without
    Landlock the helper refuses to start the hook unless `landlock_optional` (the user's
    `landlock = "optional"`). `gate`: the hook waits for its event on stdin, at most
    that many seconds (only for a helper that has the gate). `frame`: the helper reads
    a nonce first and ends with a final frame; its deadline is then the hook's own
    (it reports the kill in the frame), ours the backstop `DEADLINE_GRACE` later."""
    if gate is not None and not (helper and helper.gate):
        # Without a gate the hook would run at once, before its event: never pool that.
        raise ValueError("this image's helper has no gate: its containers cannot be pooled")
    if frame and not (helper and helper.frame):
        raise ValueError("this image's helper writes no final frame")
    if helper is None:
        return list(argv)
    if helper.protocol == 1:
        return [helper.path, *argv]
    options = ["--gate", f"{gate:g}"] if gate is not None else []
    options += ["--frame"] if frame else []
    options += ["--deadline", f"{timeout if frame else timeout + DEADLINE_GRACE:g}"]
    for path in (*WRITABLE, *writable):
        options += ["--write", path]
    if runtime == "runsc" or landlock_optional:
        # gVisor has no Landlock, and refuses host sockets and FIFOs in binds itself
        # (tests/engine/test_hostile_host_objects.py runs under it too). Elsewhere the
        # user chose to run hooks on a kernel without it, host FIFOs then writable.
        options.append("--landlock-optional")
    return [helper.path, *options, "--", *argv]


def _last_line(stderr: bytes | bytearray) -> str:
    lines = [ln for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""


def start_error(exit_code: int | None, stderr: bytes | bytearray) -> str | None:
    """The helper's (or docker-init's) report that the hook could not be started."""
    last = _last_line(stderr)
    if exit_code and last.startswith(START_ERRORS):
        return last.removeprefix(START_ERRORS[0])
    return None


def deadline_reached(exit_code: int | None, stderr: bytes | bytearray) -> bool:
    """Whether the helper's own deadline ended the run (ours came too late)."""
    return exit_code == 137 and _last_line(stderr).startswith(DEADLINE)


# -- the final frame (`--frame`) --------------------------------------------------------

FRAME_MARK = b"\x1eSRF1 "
FRAME_MAX = 96  # bytes after the nonce: " exit=N reason=R oom=X" and the newline
_FRAME = re.compile(rb" exit=(\d{1,3}) reason=(exit|deadline|output|start) oom=([01?])")


def new_nonce() -> str:
    """A run's nonce: 32 lowercase hex digits, what the helper reads before the event."""
    return secrets.token_hex(16)


def frame_header(nonce: str) -> bytes:
    return nonce.encode() + b"\n"


@dataclass(frozen=True, slots=True)
class Frame:
    """What the helper says at the end: the hook's exit status, what ended the run
    (exit: the hook itself; deadline; output: the cap, at our SIGUSR1; start: the helper
    could not confine it), and whether the memory cgroup OOM-killed (None: unknown)."""

    exit_code: int
    reason: str
    oom: bool | None


class FrameReader:
    """One stream (stdout or stderr) of a framed run: passes the hook's bytes through and
    takes out the final frame, found only with this run's nonce. A lookalike the hook
    prints (any other nonce) is the hook's output; what comes after the frame (a
    process the hook left behind) is dropped. Holds back at most the mark's length
    while a suffix could begin it."""

    def __init__(self, nonce: str) -> None:
        self.mark = FRAME_MARK + nonce.encode()
        self._held = b""
        self._rest: bytes | None = None  # after the mark, up to its newline
        self.done = False
        self.frame: Frame | None = None  # once done: None if it did not parse

    def feed(self, data: bytes) -> bytes:
        """The hook's output in `data`."""
        if self.done:
            return b""
        if self._rest is not None:
            self._rest += data
            end = self._rest.find(b"\n")
            if end >= 0 or len(self._rest) > FRAME_MAX:
                self.done = True
                self.frame = _parse(self._rest[:end] if end >= 0 else b"")
            return b""
        buf = self._held + data
        at = buf.find(self.mark)
        if at >= 0:
            self._held, self._rest = b"", b""
            self.feed(buf[at + len(self.mark) :])
            return buf[:at]
        held = buf.rfind(FRAME_MARK[:1], max(0, len(buf) - len(self.mark) + 1))
        if held < 0:
            self._held = b""
            return buf
        self._held = buf[held:]
        return buf[:held]

    def flush(self) -> bytes:
        """At the stream's end without a frame: what was held back is the hook's."""
        held, self._held = self._held, b""
        return held if self._rest is None else b""


def _parse(text: bytes) -> Frame | None:
    m = _FRAME.fullmatch(text)
    if m is None:
        return None
    oom = {b"0": False, b"1": True}.get(m[3])
    return Frame(int(m[1]), m[2].decode(), oom)
