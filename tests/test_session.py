"""The rules every entry point shares (`_runner.session`), over a FakeBackend: a missing runtime
blocks, fail-closed blocks on any failure of ours, the event has an overall deadline,
and the hooks of one event are bounded in number and in parallelism."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import (
    EngineUnavailable,
    ExecRequest,
    ExecResult,
    FakeBackend,
    HookFactory,
    RuntimeMissing,
    Settings,
)
from sandboxrun._runner import combined
from sandboxrun._runner import session as _session

LOCAL = Path(".clinerules/hooks")
CANCEL = ExecResult(0, b'{"cancel": true, "errorMessage": "no"}', b"", 1)


class Refusing(FakeBackend):
    """A backend whose preflight fails with `error`."""

    def __init__(self, error: Exception) -> None:
        super().__init__(lambda r: CANCEL)
        self.error = error

    def check(self) -> None:
        raise self.error


@pytest.fixture
def ws(home: Path, tmp_path: Path, make_hook: Any) -> Path:
    root = tmp_path / "ws"
    make_hook(root / LOCAL, body="#!/bin/sh\n")
    return root


def test_missing_runtime_blocks_through_the_api_without_fail_closed(ws: Path) -> None:
    """The Python API keeps the CLI's promise: a missing runtime is a cancel, never a pass."""
    factory = HookFactory(Settings.load(runtime="kata"), Refusing(RuntimeMissing("no kata")))
    result = factory.run("PreToolUse", {}, [str(ws)])
    assert result.answer["cancel"] is True and "no kata" in result.answer["errorMessage"]


def test_engine_failure_raises_without_fail_closed(ws: Path) -> None:
    """Without fail-closed our failure is an exception the caller reports, not an answer."""
    factory = HookFactory(Settings.load(), Refusing(EngineUnavailable("no engine")))
    with pytest.raises(EngineUnavailable):
        factory.run("PreToolUse", {}, [str(ws)])


def test_engine_failure_blocks_under_fail_closed(ws: Path) -> None:
    """Under fail-closed an engine that cannot run the hooks answers the block."""
    factory = HookFactory(Settings.load(fail_closed=True), Refusing(EngineUnavailable("no engine")))
    assert factory.run("PreToolUse", {}, [str(ws)]).answer["cancel"] is True


def test_a_crash_of_ours_blocks_under_fail_closed(ws: Path) -> None:
    """An unexpected exception of ours (a bug) answers the block under fail-closed."""

    def boom(request: ExecRequest) -> ExecResult:
        raise RuntimeError("bug")

    factory = HookFactory(Settings.load(fail_closed=True), FakeBackend(boom))
    # The runner turns a hook's SandboxrunError into an outcome; a bug escapes to the session.
    result = factory.run("PreToolUse", {}, [str(ws)])
    assert result.answer["cancel"] is True and "RuntimeError" in result.answer["errorMessage"]


def test_a_refused_workspace_blocks_under_fail_closed(home: Path) -> None:
    """An event naming a system folder as its root answers the block under fail-closed."""
    factory = HookFactory(Settings.load(fail_closed=True), FakeBackend(lambda r: CANCEL))
    result = factory.run("PreToolUse", {"workspaceRoots": ["/etc"]})
    assert result.answer["cancel"] is True and "/etc" in result.answer["errorMessage"]


def test_a_stalled_hook_run_is_answered_at_the_overall_deadline(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend that never returns cannot hold the answer: past the budget the hook counts
    as timed out, fail-closed cancels, and the result says the work was abandoned."""
    monkeypatch.setattr(combined, "RUN_GRACE", 0.2)
    monkeypatch.setattr(_session, "EXTRA_GRACE", 0.2)
    never = threading.Event()
    factory = HookFactory(
        Settings.load(fail_closed=True, timeout=0.2),
        FakeBackend(lambda r: never.wait() or CANCEL),  # type: ignore[func-returns-value]
    )
    started = time.monotonic()
    result = factory.run("PreToolUse", {}, [str(ws)])
    never.set()
    assert time.monotonic() - started < 20  # the budget is about 0.6 s: generous slack
    assert result.abandoned and result.answer["cancel"] is True
    assert [o.status for o in result.outcomes] == ["timed_out"]


def test_a_stalled_discovery_is_answered_at_the_prepare_deadline(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Matching that never ends (a hostile pattern) cannot hold the answer either."""
    monkeypatch.setattr(_session, "PREPARE_BUDGET", 0.3)
    never = threading.Event()
    factory = HookFactory(Settings.load(fail_closed=True), FakeBackend(lambda r: CANCEL))
    monkeypatch.setattr(factory, "_create", lambda *a, **k: never.wait())
    result = factory.run("PreToolUse", {}, [str(ws)])
    never.set()
    assert result.abandoned and result.answer["cancel"] is True


def test_hooks_past_max_hooks_are_reported_not_run_and_block_under_fail_closed(
    home: Path, tmp_path: Path, make_hook: Any
) -> None:
    """A repository with many hooks gets `max_hooks` of them run, the rest reported."""
    roots = []
    for i in range(5):
        root = tmp_path / f"ws{i}"
        make_hook(root / LOCAL, body="#!/bin/sh\n")
        roots.append(str(root))
    backend = FakeBackend(lambda r: ExecResult(0, b"{}", b"", 1))
    for fail_closed in (False, True):
        settings = Settings.load(max_hooks=3, fail_closed=fail_closed)
        result = HookFactory(settings, backend).run("PreToolUse", {}, roots)
        statuses = [o.status for o in result.outcomes]
        assert statuses == ["completed"] * 3 + ["error"] * 2
        assert "max_hooks" in (result.outcomes[-1].error or "")
        assert result.answer["cancel"] is fail_closed


def test_hooks_run_at_most_max_parallel_at_once(home: Path, tmp_path: Path, make_hook: Any) -> None:
    """Six hooks with max_parallel 2 never have more than two runs in flight."""
    roots = []
    for i in range(6):
        root = tmp_path / f"ws{i}"
        make_hook(root / LOCAL, body="#!/bin/sh\n")
        roots.append(str(root))
    lock, running, peak = threading.Lock(), [0], [0]

    def slow(request: ExecRequest) -> ExecResult:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return ExecResult(0, b"{}", b"", 1)

    settings = Settings.load(max_parallel=2)
    result = HookFactory(settings, FakeBackend(slow)).run("PreToolUse", {}, roots)
    assert [o.status for o in result.outcomes] == ["completed"] * 6
    assert peak[0] == 2


def test_a_runtime_missing_mid_run_blocks_without_fail_closed(ws: Path) -> None:
    """The engine answered the preflight, then lacked the runtime for the hook's run: a
    block as `exec` answers it, never a pass (`run` recorded an error that blocked only
    under fail-closed)."""

    def missing(request: ExecRequest) -> ExecResult:
        raise RuntimeMissing("no kata")

    factory = HookFactory(Settings.load(runtime="kata"), FakeBackend(missing))
    result = factory.run("PreToolUse", {}, [str(ws)])
    assert result.answer["cancel"] is True and "no kata" in result.answer["errorMessage"]
    assert [o.status for o in result.outcomes] == ["error"]
