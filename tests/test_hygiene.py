"""Pure logic of terminal hygiene and container ownership: escaping, is_stale."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun._backends.docker.network import LABEL, PREFIX, _age, ensure_network
from sandboxrun._backends.docker.reaper import reap
from sandboxrun._backends.labels import here, is_stale, owner_labels, started
from sandboxrun._text import printable

HOSTILE = "a\x1b]0;pwned\x07b\x1b[2J\x9b31m\u202eevil\u2066\u2069\n\r\t\x7f\ud800"


@pytest.fixture(autouse=True)
def _restore_library_logging() -> Iterator[None]:
    """_setup_logging changes loguru globally: undo that afterwards."""
    yield
    logger.remove()
    logger.configure(patcher=lambda record: None)
    logger.disable("sandboxrun")


def test_printable_escapes_c0_c1_bidi_newlines_and_surrogates() -> None:
    """Every control, C1 control, bidi override/isolate, line break and lone surrogate is escaped."""
    out = printable(HOSTILE)
    assert out.isprintable() and out.isascii(), out
    assert out == (
        "a\\x1b]0;pwned\\x07b\\x1b[2J\\x9b31m\\u202eevil\\u2066\\u2069\\x0a\\x0d\\x09\\x7f\\ud800"
    )


def test_printable_keeps_ordinary_text() -> None:
    """Letters of any script, emoji and spaces pass unchanged."""
    text = "PreToolUse /home/zoë/项目 🚀 [matcher Bash|Edit]"
    assert printable(text) == text


def test_every_log_line_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """With -v, a hook name holding escape sequences and bidi controls reaches stderr escaped,
    on one line."""
    cli._setup_logging(1)
    logger.info("hook {} completed", f"/ws/{HOSTILE}/PreToolUse")
    err = capsys.readouterr().err
    assert err.isascii() and err.count("\n") == 1, repr(err)
    assert "\x1b" not in err and "\\x1b]0;pwned" in err and "\\u202e" in err


# -- is_stale ---------------------------------------------------------------------------

NOW = 1_000_000.0


def labels(deadline: float = NOW + 600, **changes: str) -> dict[str, str]:
    """Labels a container of this very process would carry, with `changes`."""
    return {**owner_labels(), "sandboxrun.deadline": str(int(deadline)), **changes}


def dead_pid() -> int:
    """The pid of a process that has just ended."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(proc.stdout)


def test_a_container_past_its_deadline_is_stale() -> None:
    """The deadline alone decides once passed, whoever the owner is."""
    assert is_stale(labels(deadline=NOW - 1, **{"sandboxrun.boot": "elsewhere"}), NOW)


def test_a_live_owner_on_this_host_keeps_its_container() -> None:
    """The owner is this process: same host, boot, pid namespace, pid and start time."""
    assert not is_stale(labels(), NOW)


def test_a_dead_owner_on_this_host_makes_it_stale() -> None:
    """An owner whose pid runs nothing any more, on our host, boot and pid namespace, is gone."""
    assert is_stale(labels(**{"sandboxrun.pid": str(dead_pid())}), NOW)


def test_a_reused_pid_is_not_the_owner() -> None:
    """A live process under the owner's pid but started at another time is not the owner."""
    assert is_stale(labels(**{"sandboxrun.started": "1"}), NOW)


@pytest.mark.parametrize("label", ["sandboxrun.boot", "sandboxrun.pidns"])
def test_an_owner_elsewhere_is_judged_only_by_its_deadline(label: str) -> None:
    """Same hostname and a dead pid, but another boot or pid namespace (another container
    with our hostname): its liveness is not ours to judge."""
    theirs = labels(**{label: "other", "sandboxrun.pid": str(dead_pid())})
    assert not is_stale(theirs, NOW)


def test_an_old_container_without_owner_identity_waits_for_its_deadline() -> None:
    """Labels of an older sandboxrun (pid and host only) never count as owned here."""
    old = {"sandboxrun.pid": str(dead_pid()), "sandboxrun.host": here()[0],
           "sandboxrun.deadline": str(int(NOW + 600))}  # fmt: skip
    assert not is_stale(old, NOW)


def test_garbage_labels_are_not_judged() -> None:
    """A container with an unreadable deadline is left to `reap --all`."""
    assert not is_stale({"sandboxrun.deadline": "soon"}, time.time())


def test_start_time_tells_processes_apart() -> None:
    """This process has a start time; a finished one has none."""
    assert started(os.getpid()) and started(dead_pid()) is None


# -- the bridge network -----------------------------------------------------------------


class Networks:
    """A stand-in for the engine's network API: a list, and creations recorded."""

    def __init__(self, *nets: dict[str, Any]) -> None:
        self.nets: list[dict[str, Any]] = list(nets)
        self.created: list[str] = []

    def networks(self, filters: dict[str, str]) -> list[dict[str, Any]]:
        return [n for n in self.nets if n.get("Labels", {}).get(LABEL) == "1"]

    def create_network(self, name: str, **kw: Any) -> dict[str, str]:
        self.created.append(name)
        net = net_of(f"id-{len(self.created)}", name=name, options=kw["options"])
        self.nets.append(net)
        return {"Id": net["Id"]}


def net_of(net_id: str, name: str = PREFIX + "x", icc: str = "false", **kw: Any) -> dict[str, Any]:
    options = kw.get("options") or {"com.docker.network.bridge.enable_icc": icc}
    return {"Id": net_id, "Name": name, "Driver": "bridge", "Options": options,
            "Labels": {LABEL: "1"}, "Created": kw.get("created", "")}  # fmt: skip


def test_the_network_is_made_once_with_inter_container_traffic_off() -> None:
    """A missing network is created (icc off, labelled); a second run finds it and creates none."""
    api = Networks()
    first = ensure_network(api)
    assert ensure_network(api) == first and len(api.created) == 1
    assert api.nets[0]["Options"] == {"com.docker.network.bridge.enable_icc": "false"}


def test_networks_that_allow_inter_container_traffic_are_never_used() -> None:
    """A network with our label and prefix but icc on (or another driver's) is not ours to use."""
    api = Networks(net_of("a-loose", icc="true"), {**net_of("b-overlay"), "Driver": "overlay"})
    assert ensure_network(api) == "id-1"


def test_racing_runs_settle_on_the_lowest_id() -> None:
    """With duplicates left by a race, every run picks the same one."""
    api = Networks(net_of("f2"), net_of("c7"), net_of("e1"))
    assert {ensure_network(api) for _ in range(3)} == {"c7"} and api.created == []


def test_network_age_reads_the_engines_nanosecond_timestamps() -> None:
    """Docker's RFC 3339 times with nanoseconds parse; an unreadable one counts as brand new."""
    old = net_of("x", created="2001-01-01T00:00:00.123456789Z")
    assert _age(old) > 20 * 365 * 86400
    assert _age(net_of("y", created="yesterday")) == 0.0


class Engine:
    """A stand-in client for `reap`: containers with labels; removals recorded."""

    def __init__(self, *labelled: dict[str, str]) -> None:
        self.found = [{"Id": f"c{n}", "Labels": labels} for n, labels in enumerate(labelled)]
        self.removed: list[tuple[str, dict[str, Any]]] = []
        self.api = self

    def containers(self, **kw: Any) -> list[dict[str, Any]]:
        return self.found

    def remove_container(self, cid: str, **kw: Any) -> None:
        self.removed.append((cid, kw))

    def networks(self, **kw: Any) -> list[dict[str, Any]]:
        return []


def test_reap_removes_stale_containers_with_their_volumes_and_all_only_when_asked() -> None:
    """The sweep removes the overdue container (volumes too) and spares the live one;
    `everything` removes both."""
    live, overdue = labels(deadline=time.time() + 600), labels(deadline=time.time() - 1)
    swept = Engine(live, overdue)
    assert reap(swept) == ["c1"] and swept.removed == [("c1", {"force": True, "v": True})]
    assert reap(Engine(live, overdue), everything=True) == ["c0", "c1"]


def test_a_zombie_owner_is_gone() -> None:
    """A killed owner whose parent never reaps it (an init that does not reap orphans)
    stays a zombie holding its pid and start time: it runs nothing, so its containers
    are stale, not kept forever."""
    from pathlib import Path

    from sandboxrun._backends.labels import DEADLINE, PID, STARTED

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    labels = {**owner_labels(), PID: str(child.pid), STARTED: started(child.pid) or "",
              DEADLINE: str(int(time.time()) + 3600)}  # fmt: skip
    stat = Path(f"/proc/{child.pid}/stat")
    try:
        deadline = time.monotonic() + 30
        while not stat.read_bytes().rsplit(b")", 1)[-1].strip().startswith(b"Z"):
            assert time.monotonic() < deadline, "the child did not end"
            time.sleep(0.05)
        assert is_stale(labels, time.time())
    finally:
        child.wait()
    assert not is_stale({**labels, PID: str(os.getpid()),
                         STARTED: started(os.getpid()) or ""}, time.time())  # fmt: skip
