"""The labels of sandboxrun's containers and pods: the one contract between the backend
that writes them, the pool that keeps them waiting, and the reaper that sweeps them.
Shared by the Docker and the Kubernetes backends (neither imports the other).

Every container carries `MANAGED`, its owner's identity and a `DEADLINE` (a Unix time
by which its owner would have ended it; the reaper's cue when the owner cannot be
judged), plus what it is for (`RUN`, `HOOK`).

Who owns a hook container, told apart from every other sandboxrun on the engine:

A pid means something only inside one pid namespace of one boot of one kernel: two
sandboxruns in containers that share a hostname (or a pid number) must never judge each
other's hooks. So a container carries its owner's hostname, the kernel's boot id, the
inode of the owner's pid namespace, its pid and the start time of that process (which
also tells a reused pid from the owner). Only a sweeper with the same hostname, boot id
and pid namespace may ask whether the owner lives; anyone else waits for the deadline.
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Mapping

MANAGED = "sandboxrun.managed"  # on every container sandboxrun starts
DEADLINE = "sandboxrun.deadline"
RUN = "sandboxrun.run"  # the backend instance that made it
HOOK = "sandboxrun.hook"  # what the logs call it
CLAIMED = "sandboxrun.claimed"  # a pooled pod taken for a run: the run's id (Kubernetes)
HOST, BOOT, PIDNS, PID, STARTED = (
    "sandboxrun.host", "sandboxrun.boot", "sandboxrun.pidns", "sandboxrun.pid", "sandboxrun.started"
)  # fmt: skip


@functools.cache
def here() -> tuple[str, str, str]:
    """(hostname, boot id, pid namespace inode) of this process; '' where unknown."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    try:
        pidns = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        pidns = ""
    return socket.gethostname(), boot, pidns


def started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22);
    None when there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and ')': fields resume after the last ')'.
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else None


def owner_labels() -> dict[str, str]:
    """The labels that name this process as a container's owner."""
    host, boot, pidns = here()
    pid = os.getpid()
    return {HOST: host, BOOT: boot, PIDNS: pidns, PID: str(pid), STARTED: started(pid) or ""}


def container_labels(deadline: float, run: str = "", hook: str = "") -> dict[str, str]:
    """Every label of a container this process starts, ending by `deadline` (Unix time)."""
    labels = {MANAGED: "1", **owner_labels(), DEADLINE: str(int(deadline))}
    if run:
        labels[RUN] = run
    if hook:
        labels[HOOK] = hook[:200]
    return labels


def is_stale(labels: Mapping[str, str], now: float) -> bool:
    """Whether the owner of a container with these labels is gone or overdue."""
    try:
        deadline = float(labels.get(DEADLINE, ""))
    except ValueError:
        return False  # not ours to judge: only `--all` removes it
    return now > deadline or owner_gone(labels)


def owner_gone(labels: Mapping[str, str]) -> bool:
    """Whether the owner named by `labels` is known to be gone: only when it lived on this
    host, boot and pid namespace (all known) and its pid now runs nothing, or another
    process started since."""
    mine = here()
    theirs = (labels.get(HOST, ""), labels.get(BOOT, ""), labels.get(PIDNS, ""))
    if "" in mine or theirs != mine or not labels.get(STARTED):
        return False  # not ours to judge: the deadline decides
    try:
        pid = int(labels.get(PID, ""))
    except ValueError:
        return False
    now = started(pid)
    if now is None:  # no such process, or hidden from us (/proc mounted with hidepid)
        return not _exists(pid)
    # A zombie runs nothing: a killed owner whose reaper never came (an init that does not
    # reap orphans, e.g. a container's or a sandbox's own PID 1) still holds its pid.
    return now != labels[STARTED] or _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].startswith(b"Z")


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's: it runs
        return True
    return True
