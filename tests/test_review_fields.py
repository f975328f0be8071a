"""The entry's fields that change what a hook's answer decides or when it runs (`async`,
`once`, `failClosed`, `loop_limit`, `sequential`, `timeout`) are part of its pin, only
when set: the pins of hooks that set none stay as they were (issue 22). Claude Code's
settings as in tests/test_review.py; Cursor's `.cursor/hooks.json`; FakeBackend runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sandboxrun import ExecRequest, ExecResult, FakeBackend, HookFactory, Settings, _review
from sandboxrun._dialects.cursor import CURSOR
from sandboxrun._review.pins import PinStore, identify
from sandboxrun._review.show import diff, pending, scan
from sandboxrun._types import HookSpec
from tests.test_review import COMMAND, approve_all, project, run
from tests.test_review import ws as ws  # the fixture


def entry(ws: Path, **fields: Any) -> None:
    """The workspace's PreToolUse guard (tests.test_review.project) with `fields` set."""
    hook = {"type": "command", "command": COMMAND, **fields}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))


def status(home: Path, ws: Path) -> list[str]:
    seen = scan(Settings.load(agent="claude"), [str(ws)], str(home), ["claude"])
    return [s.status for s in seen]


def as_version_1(home: Path, ws: Path) -> None:
    """The workspace's pins file as sandboxrun wrote it before these fields were pinned:
    no `version` and no `runs` in any pin."""
    store = PinStore(str(home), str(ws))
    data = json.loads(store.path.read_text())
    for pin in data["hooks"]:
        pin.pop("version", None)
        pin["entry"].pop("runs", None)
    store.path.write_text(json.dumps(data))


def blocking(request: ExecRequest) -> ExecResult:
    return ExecResult(2, b"", b"no rm -rf", 3)


def test_a_guard_made_async_is_changed_and_shows_it(home, ws) -> None:
    project(ws)
    approve_all(Settings.load(agent="claude"), home, ws)
    assert status(home, ws) == ["approved"]
    entry(ws, **{"async": True})
    [seen] = pending(scan(Settings.load(agent="claude"), [str(ws)], str(home), ["claude"]))
    assert seen.status == "changed"
    assert '"async": true' in diff(seen)


def test_async_turned_off_is_changed_too(home, ws) -> None:
    project(ws)
    entry(ws, **{"async": True})
    approve_all(Settings.load(agent="claude"), home, ws)
    assert status(home, ws) == ["approved"]
    entry(ws, **{"async": False})
    assert status(home, ws) == ["changed"]


def test_fields_at_their_default_leave_the_pin_as_it_was(home, ws) -> None:
    """`async: false`, `once: false` are what no field gives: no `runs` in the pin, so a
    pin written before fields were pinned still approves it."""
    project(ws)
    approve_all(Settings.load(agent="claude"), home, ws)
    entry(ws, **{"async": False, "once": False})
    assert status(home, ws) == ["approved"]
    [pin] = PinStore(str(home), str(ws)).load().values()
    assert "runs" not in pin.entry


def test_an_old_pins_file_still_approves_unchanged_hooks(home, ws) -> None:
    """Version 1 pins (no `runs`, no `version`): the hook as it was is approved, one
    with a timeout too (version 1 did not pin it: it is not compared); a field turned
    on since is a change."""
    project(ws)
    entry(ws, timeout=30)
    approve_all(Settings.load(agent="claude"), home, ws)
    as_version_1(home, ws)
    assert status(home, ws) == ["approved"]
    [pin] = PinStore(str(home), str(ws)).load().values()
    assert pin.version == 1
    entry(ws, timeout=5)
    assert status(home, ws) == ["approved"]  # unknown to a version 1 pin
    entry(ws, timeout=30, **{"async": True})
    assert status(home, ws) == ["changed"]


def test_an_old_pin_stays_version_1_when_the_file_is_saved_again(home, ws) -> None:
    project(ws)
    entry(ws, timeout=30)
    approve_all(Settings.load(agent="claude"), home, ws)
    as_version_1(home, ws)
    [old] = PinStore(str(home), str(ws)).load().values()
    with PinStore(str(home), str(ws)).locked() as pins:  # another hook approved: saved
        pins["other"] = identify("claude", HookSpec("Stop", "x", "project", ("x",), str(ws), ()),
                                 str(ws.resolve()))  # fmt: skip
    assert PinStore(str(home), str(ws)).load()[old.key] == old
    assert old.version == 1


def test_a_shortened_timeout_is_changed_and_runs_as_approved_under_required(home, ws) -> None:
    """A timeout shortened so that the guard is killed before it answers (a timeout
    lets the action through unless fail-closed): changed; under required the approved
    version runs, with the approved timeout."""
    required = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    entry(ws, timeout=30)
    approve_all(required, home, ws)
    entry(ws, timeout=1)
    assert status(home, ws) == ["changed"]
    fake = FakeBackend(lambda request: ExecResult(0, b"", b"", 3))
    report = run(required, home, ws, fake).to_json()["hooks"][0]
    [request] = fake.requests
    assert request.timeout == 30
    assert report["review"] == "awaiting review" and report["ranApproved"] is True


def test_a_guard_made_async_runs_synchronously_under_required(home, ws) -> None:
    """Its approved version (not async) runs in its place: its block decides."""
    required = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    approve_all(required, home, ws)
    entry(ws, **{"async": True})
    fake = FakeBackend(blocking)
    res = run(required, home, ws, fake)
    assert len(fake.requests) == 1
    assert res.answer.get("permissionDecision") == "deny"
    assert res.outcomes[0].spec.run_async is False
    assert res.to_json()["hooks"][0]["review"] == "awaiting review"
    warn = run(Settings.load(agent="claude", fail_closed=True), home, ws, FakeBackend(blocking))
    assert warn.answer.get("permissionDecision") != "deny"  # warn: runs as it is, async
    assert warn.to_json()["hooks"][0]["review"] == "changed"


def cursor_stop(ws: Path, **fields: Any) -> None:
    folder = ws / ".cursor"
    folder.mkdir(exist_ok=True)
    hooks = {"stop": [{"command": ".cursor/follow.sh", **fields}]} if fields is not None else {}
    (folder / "hooks.json").write_text(json.dumps({"version": 1, "hooks": hooks}))
    (folder / "follow.sh").write_text("#!/bin/sh\necho '{}'\n")


def cursor_pin(home: Path, ws: Path) -> Any:
    [spec] = CURSOR.discover("stop", [str(ws)], str(home)).hooks
    return identify("cursor", spec, str(ws.resolve()))


def test_cursor_loop_limit_is_pinned_only_when_not_its_default(home, ws) -> None:
    cursor_stop(ws)
    default = cursor_pin(home, ws)
    assert "runs" not in default.entry
    cursor_stop(ws, loop_limit=5)  # Cursor's default, spelled out
    assert cursor_pin(home, ws).digest == default.digest
    cursor_stop(ws, loop_limit=1)
    assert cursor_pin(home, ws).entry["runs"] == {"loop_limit": 1}
    cursor_stop(ws, loop_limit=None)  # no limit
    assert cursor_pin(home, ws).entry["runs"] == {"loop_limit": None}
    cursor_stop(ws, failClosed=True)
    assert cursor_pin(home, ws).entry["runs"] == {"failClosed": True}


def test_a_deleted_cursor_follow_up_hook_is_removed_only_within_its_loop_limit(home, ws) -> None:
    """Its approved loop limit is pinned: past it, Cursor would not have run it, so
    nothing is missing there."""
    settings = Settings.load(agent="cursor", review="required", fail_closed=True)
    cursor_stop(ws, loop_limit=1)
    seen = _review.survey("cursor", CURSOR.discover(None, [str(ws)], str(home)).hooks,
                          [str(ws)], None)  # fmt: skip
    _review.approve(seen)
    (ws / ".cursor" / "hooks.json").write_text(json.dumps({"version": 1, "hooks": {}}))
    factory = HookFactory(settings, FakeBackend(blocking), home=str(home))

    def stop(count: int) -> Any:
        return factory.run("stop", {"hook_event_name": "stop", "workspace_roots": [str(ws)],
                                    "loop_count": count, "status": "completed"})  # fmt: skip

    [gone] = stop(0).outcomes
    assert gone.spec.review == "removed" and gone.status == "error"
    assert stop(1).outcomes == ()


def test_a_deleted_async_hook_is_reported_but_no_block(home, ws) -> None:
    """Its answer decided nothing (the agent does not wait for it): its removal is an
    error in the report under required, but takes nothing away, so no block."""
    required = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    entry(ws, **{"async": True})
    approve_all(required, home, ws)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {}}))
    res = run(required, home, ws)
    [gone] = res.outcomes
    assert gone.spec.review == "removed" and gone.spec.run_async is True
    assert res.answer.get("permissionDecision") != "deny"
