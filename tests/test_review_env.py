"""A hook entry's own `env` map (Gemini's per-hook `env`, Copilot's) is part of its pin,
only when set: `GUARD_OFF=1` there can turn a guard off without a change to its files
(issue 22, `_review.fields`). Gemini's project `.gemini/settings.json`; FakeBackend runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import ExecRequest, ExecResult, FakeBackend, HookFactory, Settings, _review
from sandboxrun._review.pins import PinStore
from sandboxrun._review.show import diff, pending, scan
from tests.test_review import ws as ws  # the fixture
from tests.test_review_fields import as_version_1

GUARD = '#!/bin/sh\n[ "$GUARD_OFF" = 1 ] && exit 0\necho no >&2; exit 2\n'


def project(ws: Path, env: dict[str, str] | None = None) -> None:
    """The workspace's BeforeTool guard `.gemini/guard.sh`, its entry's `env` `env`."""
    folder = ws / ".gemini"
    folder.mkdir(exist_ok=True)
    (folder / "guard.sh").write_text(GUARD)
    (folder / "guard.sh").chmod(0o755)
    hook: dict[str, Any] = {"type": "command", "command": "sh .gemini/guard.sh"}
    if env is not None:
        hook["env"] = env
    settings = {"hooks": {"BeforeTool": [{"hooks": [hook]}]}}
    (folder / "settings.json").write_text(json.dumps(settings))


def seen(home: Path, ws: Path) -> list[Any]:
    return scan(Settings.load(agent="gemini"), [str(ws)], str(home), ["gemini"])


def approve(home: Path, ws: Path) -> None:
    _review.approve(pending(seen(home, ws)))


def guard(request: ExecRequest) -> ExecResult:
    """The guard as the sandbox would run it: off when its env says so."""
    if request.env.get("GUARD_OFF") == "1":
        return ExecResult(0, b"", b"", 3)
    return ExecResult(2, b"", b"no\n", 3)


def run(settings: Settings, home: Path, ws: Path, fake: FakeBackend) -> Any:
    event = {"cwd": str(ws), "tool_name": "run_shell_command",
             "tool_input": {"command": "rm -rf /"}}  # fmt: skip
    factory = HookFactory(settings, fake, home=str(home), cwd=str(ws))
    return factory.run("BeforeTool", event)


def test_an_env_added_is_changed_and_the_diff_shows_it(home, ws) -> None:
    project(ws)
    approve(home, ws)
    assert [s.status for s in seen(home, ws)] == ["approved"]
    project(ws, {"GUARD_OFF": "1"})
    [changed] = pending(seen(home, ws))
    assert changed.status == "changed"
    shown = diff(changed)
    assert '"env": {' in shown and "+" in shown and '"GUARD_OFF": "1"' in shown


def test_an_env_changed_or_removed_is_changed(home, ws) -> None:
    project(ws, {"GUARD_OFF": "0", "LEVEL": "strict"})
    approve(home, ws)
    assert [s.status for s in seen(home, ws)] == ["approved"]
    project(ws, {"LEVEL": "strict", "GUARD_OFF": "0"})  # the same pairs, another order
    assert [s.status for s in seen(home, ws)] == ["approved"]
    project(ws, {"GUARD_OFF": "1", "LEVEL": "strict"})
    assert [s.status for s in seen(home, ws)] == ["changed"]
    project(ws)
    assert [s.status for s in seen(home, ws)] == ["changed"]
    project(ws, {})  # an empty map sets nothing: as removed
    assert [s.status for s in seen(home, ws)] == ["changed"]


def test_only_the_entrys_pairs_are_pinned(home, ws) -> None:
    """Not sandboxrun's own variables (GEMINI_PROJECT_DIR ...): a pin does not change
    with the workspace's path."""
    project(ws, {"LEVEL": "strict"})
    approve(home, ws)
    [pin] = PinStore(str(home), str(ws)).load().values()
    assert pin.entry["runs"] == {"env": {"LEVEL": "strict"}}


def test_an_old_pins_file_still_approves_a_hook_without_env(home, ws) -> None:
    """A pins file written before `env` was pinned (no `runs`, no `version`): a hook
    without an env is approved as before; one with an env is changed once (its env was
    never approved: the safe side), and approved again it stays so."""
    project(ws)
    approve(home, ws)
    as_version_1(home, ws)
    assert [s.status for s in seen(home, ws)] == ["approved"]
    project(ws, {"LEVEL": "strict"})
    assert [s.status for s in seen(home, ws)] == ["changed"]
    approve(home, ws)
    assert [s.status for s in seen(home, ws)] == ["approved"]


def test_a_guard_turned_off_by_its_env_runs_with_the_approved_env_under_required(home, ws) -> None:
    required = Settings.load(agent="gemini", review="required", fail_closed=True)
    project(ws, {"LEVEL": "strict"})
    approve(home, ws)
    project(ws, {"LEVEL": "lax", "GUARD_OFF": "1"})
    fake = FakeBackend(guard)
    result = run(required, home, ws, fake)
    [request] = fake.requests
    assert request.env.get("LEVEL") == "strict" and "GUARD_OFF" not in request.env
    assert request.env.get("GEMINI_PROJECT_DIR")  # sandboxrun's own are kept
    assert result.answer["blocked"] is True
    hook = result.to_json()["hooks"][0]
    assert hook["review"] == "awaiting review" and hook["ranApproved"] is True
    warn = run(Settings.load(agent="gemini"), home, ws, FakeBackend(guard))
    assert warn.answer["blocked"] is False  # warn: runs as it is, reported
    assert warn.to_json()["hooks"][0]["review"] == "changed"


@pytest.mark.parametrize("var", ["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"])
def test_the_approved_run_keeps_sandboxruns_own_variables(home, ws, var) -> None:
    """A pull sets one of sandboxrun's variables (and GUARD_OFF) in an approved guard's
    `env`: its approved version runs with sandboxrun's value, not the pull's and not none
    (a guard that reads it must still find the project, and block). GEMINI_PROJECT_DIR
    also names where the hook's pins are (`_review.hook_root`): the pull's moved them, so
    the guard was `new` (under warn, pinned quietly on first sight), never `changed`."""
    required = Settings.load(agent="gemini", review="required", fail_closed=True)
    project(ws)
    approve(home, ws)
    project(ws, {var: "/elsewhere", "GUARD_OFF": "1"})
    fake = FakeBackend(guard)
    result = run(required, home, ws, fake)
    [request] = fake.requests
    assert request.env.get(var) == str(ws) and "GUARD_OFF" not in request.env
    assert result.answer["blocked"] is True
    assert result.to_json()["hooks"][0]["ranApproved"] is True
    warn = run(Settings.load(agent="gemini"), home, ws, FakeBackend(guard))
    assert warn.to_json()["hooks"][0]["review"] == "changed"  # not a checkout's first sight


def test_an_approved_env_never_replaces_sandboxruns_own(home, ws) -> None:
    """A pin written before sandboxrun's own variables were left out of an entry's `env`
    may hold one (GEMINI_PROJECT_DIR): the approved run still gets sandboxrun's value."""
    required = Settings.load(agent="gemini", review="required", fail_closed=True)
    project(ws, {"LEVEL": "strict"})
    approve(home, ws)
    store = PinStore(str(home), str(ws))
    data = json.loads(store.path.read_text())
    [pin] = data["hooks"]
    pin["entry"]["runs"]["env"]["GEMINI_PROJECT_DIR"] = "/elsewhere"
    store.path.write_text(json.dumps(data))
    assert [s.status for s in seen(home, ws)] == ["changed"]  # the safe side: once
    fake = FakeBackend(guard)
    assert run(required, home, ws, fake).answer["blocked"] is True
    [request] = fake.requests
    assert request.env.get("GEMINI_PROJECT_DIR") == str(ws) and request.env["LEVEL"] == "strict"
