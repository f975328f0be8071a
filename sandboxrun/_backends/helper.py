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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PATH_LABEL = "sandboxrun.seccomp-helper"
PROTOCOL_LABEL = "sandboxrun.helper-protocol"
GATE_LABEL = "sandboxrun.helper-gate"
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
    return Helper(path, protocol, gate=protocol == 2 and labels.get(GATE_LABEL) == "1")


def command(
    helper: Helper | None,
    argv: Sequence[str],
    timeout: float,
    writable: Sequence[str],
    runtime: str | None,
    landlock_optional: bool = False,
    gate: float | None = None,
) -> list[str]:
    """The container's command line for `argv`, the hook allowed to write below
    `writable` (its home's folders, its env file, plugin data) besides /tmp. Without
    Landlock the helper refuses to start the hook unless `landlock_optional` (the user's
    `landlock = "optional"`). `gate`: the hook waits for its event on stdin, at most
    that many seconds (only for a helper that has the gate)."""
    if gate is not None and not (helper and helper.gate):
        # Without a gate the hook would run at once, before its event: never pool that.
        raise ValueError("this image's helper has no gate: its containers cannot be pooled")
    if helper is None:
        return list(argv)
    if helper.protocol == 1:
        return [helper.path, *argv]
    options = ["--gate", f"{gate:g}"] if gate is not None else []
    options += ["--deadline", f"{timeout + DEADLINE_GRACE:g}"]
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
