"""An approved repository hook that a change removes (issue 22's follow-up): its config
entry deleted, its matcher narrowed so it no longer applies, or (Cline) its hook file
deleted. `review`, `list`, `check --require-reviewed` name it; under `required` a run
reports it and, under fail-closed, blocks the event it would have matched; under `warn`
a run only notes it. And `review --approve` writes where the runs read.

Claude Code's settings as in tests/test_review.py; runs go to a FakeBackend.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sandboxrun._cli as cli
from sandboxrun import HookFactory, Settings, _review
from sandboxrun._review.pins import PinStore
from sandboxrun._review.show import awaiting, diff, pending, scan, summary
from tests import test_check, test_cli_unit
from tests.conftest import user_config
from tests.test_check import cline_event, engine, events_file, guard
from tests.test_review import GUARD, allow, approve_all, event, project, run

ws = test_cli_unit.ws
__all__ = ["engine", "ws"]  # fixtures
NOTE = "removed since approved: awaiting review"


def delete_entry(ws: Path) -> None:
    """A change that takes the hook out of the settings (its file stays)."""
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {}}))


def narrow(ws: Path, matcher: str) -> None:
    path = ws / ".claude" / "settings.json"
    path.write_text(path.read_text().replace('"Bash"', json.dumps(matcher)))


def claude_scan(ws: Path, home: Path, settings: Settings | None = None) -> list[Any]:
    return pending(scan(settings or Settings.load(agent="claude"), [str(ws)], str(home),
                        ["claude"]))  # fmt: skip


def test_review_shows_a_deleted_hook_as_removed_with_what_was_deleted(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required")
    project(ws)
    approve_all(settings, home, ws)
    delete_entry(ws)
    [seen] = claude_scan(ws, home, settings)
    assert seen.status == "removed" and seen.pin.event == "PreToolUse"
    text = diff(seen)
    assert "--- approved: config entry" in text and "+++ /dev/null" in text
    assert '- "matcher": "Bash",' in text  # the approved entry, as deleted
    assert '-case "$(cat)" in *"rm -rf"*) echo no >&2; exit 2;; esac' in text  # its bytes
    assert "(1 removed)" in (summary([seen]) or "")
    assert awaiting(settings, [seen]) == [seen]  # list, doctor
    _review.approve([seen])  # approving the removal forgets the pin
    assert claude_scan(ws, home, settings) == []
    assert PinStore(str(home), str(ws)).load() == {}


def test_required_fail_closed_blocks_the_event_a_deleted_guard_matched(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    approve_all(settings, home, ws)
    delete_entry(ws)
    fake = allow()
    res = run(settings, home, ws, fake)
    assert fake.requests == []
    [outcome] = res.outcomes
    assert outcome.status == "error" and NOTE in (outcome.error or "")
    report = res.to_json()["hooks"][0]
    assert report["review"] == "removed" and report["reviewNote"].startswith(NOTE)
    assert "guard.sh" in report["name"]
    assert res.answer.get("permissionDecision") == "deny"
    # fail-open: reported, the event goes on
    res = run(Settings.load(agent="claude", review="required"), home, ws, allow())
    assert res.outcomes[0].spec.review == "removed"
    assert res.answer.get("permissionDecision") != "deny"


def test_a_removed_hook_blocks_only_the_events_it_matched(home, ws) -> None:
    """Its approved matcher is Bash: a Read event was never its to guard."""
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    approve_all(settings, home, ws)
    delete_entry(ws)
    read = {**event(ws), "tool_name": "Read", "tool_input": {"file_path": "x"}}
    res = HookFactory(settings, allow(), home=str(home)).run("PreToolUse", read)
    assert res.outcomes == () and res.answer.get("permissionDecision") != "deny"
    stop = HookFactory(settings, allow(), home=str(home)).run("Stop", {"cwd": str(ws)})
    assert stop.outcomes == ()


def test_a_narrowed_matcher_is_a_removal_for_the_events_it_no_longer_matches(home, ws):
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    approve_all(settings, home, ws)
    narrow(ws, "Bash(git *)|Read")  # no longer matches Bash
    [seen] = claude_scan(ws, home, settings)
    assert seen.status == "changed"  # the hook is there: its matcher's diff shows
    assert '- "matcher": "Bash",' in diff(seen)
    fake = allow()
    res = run(settings, home, ws, fake)
    assert fake.requests == []
    [outcome] = res.outcomes
    assert outcome.spec.review == "removed" and NOTE in (outcome.error or "")
    assert res.answer.get("permissionDecision") == "deny"


def test_warn_notes_a_removed_hook_and_decides_nothing(home, ws, tmp_path) -> None:
    log = tmp_path / "audit.jsonl"
    settings = Settings.load(agent="claude", fail_closed=True, audit_log=str(log))
    project(ws)
    run(settings, home, ws)  # first sight: pinned quietly
    delete_entry(ws)
    res = run(settings, home, ws)
    assert res.outcomes == ()
    assert res.answer.get("permissionDecision") != "deny"  # even under fail-closed
    [note] = res.to_json()["notRun"]
    assert note["reason"].startswith(NOTE) and "guard.sh" in note["name"]
    [record] = [r for r in map(json.loads, log.read_text().splitlines())
                if r["entry"] == "review"]  # fmt: skip
    assert (record["status"], record["decision"]) == ("removed", "noted")


def test_required_audits_a_removed_hook_as_held(home, ws, tmp_path) -> None:
    log = tmp_path / "audit.jsonl"
    settings = Settings.load(agent="claude", review="required", audit_log=str(log))
    project(ws)
    approve_all(settings, home, ws)
    delete_entry(ws)
    run(settings, home, ws)
    [record] = [r for r in map(json.loads, log.read_text().splitlines())
                if r["entry"] == "review"]  # fmt: skip
    assert (record["status"], record["decision"], record["event"]) == (
        "removed", "held", "PreToolUse")  # fmt: skip


def test_every_hook_of_a_subfolder_session_s_project_deleted(home, ws) -> None:
    """A session in a subfolder: the project's pins are found from the filesystem (no
    hook is left to name the project)."""
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    approve_all(settings, home, ws)
    (ws / ".git").mkdir()
    sub = ws / "src"
    sub.mkdir()
    delete_entry(ws)
    res = HookFactory(settings, allow(), home=str(home)).run("PreToolUse", event(sub))
    assert res.outcomes[0].spec.review == "removed"
    assert res.answer.get("permissionDecision") == "deny"


def test_hooks_dirs_are_the_only_folders_searched_so_nothing_is_removed(home, ws, tmp_path):
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    approve_all(settings, home, ws)
    factory = HookFactory(settings, allow(), home=str(home), hooks_dirs=[str(tmp_path / "x")])
    assert factory.run("PreToolUse", event(ws)).outcomes == ()


def test_an_unchanged_or_renamed_hook_is_no_removal(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    approve_all(settings, home, ws)
    assert run(settings, home, ws).answer.get("permissionDecision") != "deny"
    (ws / ".claude" / "hooks" / "guard.sh").rename(ws / ".claude" / "hooks" / "g2.sh")
    project(ws, command='"$CLAUDE_PROJECT_DIR"/.claude/hooks/g2.sh', name="g2.sh")
    [seen] = claude_scan(ws, home, settings)
    assert seen.status == "renamed"
    res = run(settings, home, ws)
    assert [o.spec.review for o in res.outcomes] == ["renamed"]


# -- Cline: the hook file is the hook; the CLI -------------------------------------------


def test_a_deleted_cline_hook_file_fails_the_ci_gate(home, ws, make_hook, engine, tmp_path,
                                                     capsys) -> None:  # fmt: skip
    hook = make_hook(ws / test_check.LOCAL)
    pins = tmp_path / "ci" / "pins.json"
    assert cli.main(["review", "--agent", "cline", "--approve", "--pins", str(pins)]) == 0
    requests = engine(guard)
    events = events_file(tmp_path, cline_event("ls"))
    gate = ["check", "--events", str(events), "--require-reviewed", "--pins", str(pins)]
    assert cli.main(gate) == 0 and len(requests) == 1
    capsys.readouterr()
    hook.unlink()
    assert cli.main(gate) == 1
    out = capsys.readouterr().out
    [line] = [x for x in out.splitlines() if "not as approved in" in x]  # one line
    assert "not as approved in" in line and "PreToolUse (removed)" in line
    assert len(requests) == 1
    assert cli.main([*gate, "--fail-open"]) == 1


def test_the_ci_gate_fails_on_a_removed_hook_no_event_replays(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    make_hook(ws / test_check.LOCAL)
    session = make_hook(ws / test_check.LOCAL, name="TaskStart")
    pins = tmp_path / "pins.json"
    assert cli.main(["review", "--agent", "cline", "--approve", "--pins", str(pins)]) == 0
    engine(guard)
    session.unlink()
    events = events_file(tmp_path, cline_event("ls"))
    capsys.readouterr()
    assert cli.main(["check", "--events", str(events), "--require-reviewed", "--pins",
                     str(pins)]) == 1  # fmt: skip
    assert "TaskStart (removed)" in capsys.readouterr().out


def test_review_and_list_name_a_deleted_cline_hook(home, ws, make_hook, capsys, monkeypatch):
    hook = make_hook(ws / test_check.LOCAL)
    user_config(home, 'review = "required"\n')
    assert cli.main(["review", "--agent", "cline", "--approve"]) == 0
    hook.unlink()
    capsys.readouterr()
    assert cli.main(["review", "--agent", "cline"]) == 0
    out = capsys.readouterr().out
    assert "(1 removed)" in out and "removed: cline PreToolUse" in out
    assert "+++ /dev/null" in out and "-echo '{\"cancel\": false}'" in out
    monkeypatch.setattr("sandboxrun._sandbox.preflight.check_discovered",
                        lambda hooks, backend: ([None] * len(hooks), "not checked"))  # fmt: skip
    monkeypatch.setattr("sandboxrun._backends.choose.make_backend", lambda settings: None)
    assert cli.main(["list", "--agent", "cline", "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)["awaitingReview"]
    assert item["status"] == "removed"
    assert cli.main(["review", "--agent", "cline", "--approve"]) == 0
    assert "approved removal: cline PreToolUse" in capsys.readouterr().out
    assert cli.main(["review", "--agent", "cline"]) == 0
    assert "no repository hook awaits review" in capsys.readouterr().out


def test_approve_writes_where_the_runs_read(home, ws, make_hook, tmp_path, capsys) -> None:
    """`review_pins` in the config: `review` compares with it, and `--approve` (without
    `--pins`) writes there, not to the data folder the runs never read then."""
    make_hook(ws / test_check.LOCAL)
    pins = tmp_path / "team" / "pins.json"
    user_config(home, f'review = "required"\nreview_pins = "{pins}"\n')
    assert cli.main(["review", "--agent", "cline", "--approve"]) == 0
    assert json.loads(pins.read_text())["hooks"]
    assert not PinStore(str(home), str(ws)).path.exists()
    capsys.readouterr()
    assert cli.main(["review", "--agent", "cline"]) == 0
    assert "no repository hook awaits review" in capsys.readouterr().out
    settings = Settings.load()
    assert settings.review_pins == str(pins)
    res = HookFactory(settings.model_copy(update={"agent": "cline"}), allow(),
                      home=str(home)).run("PreToolUse", json.loads(cline_event("ls")),
                                          [str(ws)])  # fmt: skip
    assert [o.spec.review for o in res.outcomes] == [None]  # approved: runs as it is


def test_unreadable_pins_under_required_are_an_error_even_with_no_hook_left(home, ws):
    """Which approved guard is missing cannot be known: never a silent pass."""
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    approve_all(settings, home, ws)
    delete_entry(ws)
    PinStore(str(home), str(ws)).path.write_text("{not json")
    res = run(settings, home, ws)
    [outcome] = res.outcomes
    assert outcome.status == "error" and "pins not read" in (outcome.error or "")
    assert res.answer.get("permissionDecision") == "deny"
    assert run(Settings.load(agent="claude"), home, ws).outcomes == ()  # warn: a warning
    project(ws)  # warn, with a hook to run: it runs (first sight's reading is no error)
    assert [o.status for o in run(Settings.load(agent="claude"), home, ws).outcomes] == [
        "completed"
    ]


def test_a_guard_is_kept_in_the_pins_of_an_unchanged_project(home, ws) -> None:
    """Sanity: nothing removed while the hook is as approved (`GUARD` unchanged)."""
    settings = Settings.load(agent="claude", review="required")
    project(ws, body=GUARD)
    approve_all(settings, home, ws)
    assert claude_scan(ws, home, settings) == []


def test_doctor_names_a_removed_hook(home, ws) -> None:
    from sandboxrun._cli.doctor import _review_line

    settings = Settings.load(agent="claude", review="required")
    project(ws)
    approve_all(settings, home, ws)
    delete_entry(ws)
    [(_, name, line)] = _review_line(settings, [str(ws)], str(home))
    assert name == "review" and "(1 removed)" in line
