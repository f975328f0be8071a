"""Pure logic of terminal hygiene and container ownership: escaping, is_stale."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun._owner import here, owner_labels, started
from sandboxrun._reaper import is_stale
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
