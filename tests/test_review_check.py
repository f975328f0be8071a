"""`check --require-reviewed --pins FILE` (issue 22): the CI gate fails on a replayed
repository hook that is not as approved in the pins `review --approve --pins FILE`
wrote; the pins never come from the workspace under test. Cline hooks, FakeBackend."""

from __future__ import annotations

import json
import shutil

import sandboxrun._cli as cli
from sandboxrun import ExecResult
from tests import test_check, test_cli_unit
from tests.conftest import user_config
from tests.test_check import cline_event, engine, events_file, guard
from tests.test_review import WEAK, event
from tests.test_review_resolved import reproduction

ws = test_cli_unit.ws
__all__ = ["engine", "ws"]  # fixtures


def test_the_gate_fails_on_a_hook_changed_since_the_export(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    hook = make_hook(ws / test_check.LOCAL)
    pins = tmp_path / "ci" / "pins.json"
    assert cli.main(["review", "--approve", "--pins", str(pins)]) == 0
    assert "approved: cline PreToolUse" in capsys.readouterr().out
    assert json.loads(pins.read_text())["hooks"] and str(ws) not in pins.read_text()
    requests = engine(guard)
    events = events_file(tmp_path, cline_event("ls"))
    gate = ["check", "--events", str(events), "--require-reviewed", "--pins", str(pins)]
    assert cli.main(gate) == 0
    assert len(requests) == 1
    capsys.readouterr()
    hook.write_text("#!/bin/sh\necho '{\"cancel\": false}'  # the guard, gone\n")
    assert cli.main(gate) == 1
    out = capsys.readouterr().out
    assert "not as approved in" in out and "PreToolUse" in out
    assert len(requests) == 2  # the changed hook never ran: its approved version did
    assert [t for t, _ in requests[1].overlays] == [str(hook)]
    # --fail-open does not open this gate
    assert cli.main([*gate, "--fail-open"]) == 1


def test_the_pins_never_come_from_the_workspace(home, ws, make_hook, engine, tmp_path, capsys):
    make_hook(ws / test_check.LOCAL)
    outside = tmp_path / "pins.json"
    assert cli.main(["review", "--approve", "--pins", str(outside)]) == 0
    shutil.copy(outside, ws / "pins.json")
    engine(guard)
    events = events_file(tmp_path, cline_event("ls"))
    argv = ["check", "--events", str(events), "--require-reviewed", "--pins", "pins.json"]
    assert cli.main(argv) == 2
    assert "inside the workspace under test" in capsys.readouterr().err
    assert cli.main(["check", "--events", str(events), "--require-reviewed"]) == 2


def test_review_lists_and_approves(home, ws, make_hook, capsys) -> None:
    hook = make_hook(ws / test_check.LOCAL)
    assert cli.main(["review", "--agent", "cline"]) == 0
    out = capsys.readouterr().out
    assert "1 repository hook(s) await review (1 new)" in out and "+#!/bin/sh" in out
    assert cli.main(["review", "--agent", "cline", "--approve", "nothing-by-this-name"]) == 2
    assert cli.main(["review", "--agent", "cline", "--approve"]) == 0
    capsys.readouterr()
    hook.write_text("#!/bin/sh\nexit 0\n")
    assert cli.main(["review", "--agent", "cline", "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)["hooks"]
    assert item["status"] == "changed" and "+exit 0" in item["diff"]


def test_list_says_what_awaits_review(home, ws, make_hook, capsys, monkeypatch) -> None:
    """The engine is not asked: whether each hook can start is left unchecked."""
    make_hook(ws / test_check.LOCAL)
    user_config(home, 'review = "required"\n')  # under warn, a first run pins quietly
    monkeypatch.setattr("sandboxrun._sandbox.preflight.check_discovered",
                        lambda hooks, backend: ([None] * len(hooks), "not checked"))  # fmt: skip
    monkeypatch.setattr("sandboxrun._backends.choose.make_backend", lambda settings: None)
    assert cli.main(["list", "--agent", "cline"]) == 0
    assert "1 repository hook(s) await review (1 new)" in capsys.readouterr().out
    assert cli.main(["list", "--agent", "cline", "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)["awaitingReview"]
    assert item["status"] == "new"


def test_check_require_reviewed_fails_on_the_file_that_runs(
    home, ws, engine, tmp_path, capsys
) -> None:
    runs = reproduction(ws)
    pins = tmp_path / "ci" / "pins.json"
    assert cli.main(["review", "--agent", "claude", "--approve", "--pins", str(pins)]) == 0
    requests = engine(lambda request: ExecResult(0, b"", b"", 3))
    events = events_file(tmp_path, json.dumps(event(ws)))
    gate = ["check", "--agent", "claude", "--events", str(events), "--require-reviewed",
            "--pins", str(pins)]  # fmt: skip
    assert cli.main(gate) == 0 and len(requests) == 1
    capsys.readouterr()
    runs.write_text(WEAK)
    assert cli.main(gate) == 1
    assert "not as approved in" in capsys.readouterr().out
    assert len(requests) == 1  # held: never started
