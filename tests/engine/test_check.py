"""`sandboxrun check` on the real engine, as CI runs it: the pack of examples/policies in a
workspace, the recorded sessions of examples/policies/events, one violating event each."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from sandboxrun import DockerBackend

from .conftest import cli
from .test_policies import PACK, install

# family: (events file, the violating line, its event, the hook that blocks, its decision)
SESSIONS = {
    "cline": ("cline-session.jsonl", 6, "PreToolUse", ".cline/hooks/PreToolUse", "blocked"),
    "claude": (
        "claude-session.jsonl",
        5,
        "PreToolUse",
        ".claude/policies/no-js-in-ts.sh",
        "denied",
    ),
}


def workspace_with_pack(tmp_path: Path, family: str) -> Path:
    ws = tmp_path / "shop"
    ws.mkdir()
    (ws / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    install(family, ws)
    return ws


def check(
    tmp_path: Path, family: str, ws: Path, events: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    argv = cli("check", "--agent", family, "--workspace", str(ws), "--events", str(events), *extra)
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.parametrize("family", sorted(SESSIONS))
def test_recorded_session_with_one_violation_fails_the_gate(
    engine: DockerBackend, tmp_path: Path, family: str
) -> None:
    """Exit 1; the summary names the line, the event and the hook; the JUnit report has one
    case per line, the violating one a failure, and a JUnit parser reads it."""
    name, line, event, hook, verdict = SESSIONS[family]
    ws = workspace_with_pack(tmp_path, family)
    events = PACK / "events" / name
    report = tmp_path / "report.xml"
    done = check(tmp_path, family, ws, events, "--junit", str(report))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "\r" not in done.stderr  # not a terminal: nothing redrawn
    rows = {int(r.split()[0]): r.split()[1:] for r in done.stdout.split("\n\n")[0].splitlines()[1:]}
    total = len(events.read_text().splitlines())
    assert sorted(rows) == list(range(1, total + 1))
    assert rows[line][:2] == [event, verdict] and hook in rows[line][3:]
    assert all(rows[n][1] == "allowed" for n in rows if n != line), done.stdout
    assert f"line {line} {event}: {verdict} ({hook}): Blocked by policy" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith(f"FAILED: 1 of {total} events")

    [suite] = list(JUnitXml.fromfile(str(report)))
    assert (suite.tests, suite.failures, suite.errors) == (total, 1, 0)
    cases = list(suite)
    [failed] = [c for c in cases if not c.is_passed]
    assert failed.name == f"line {line}: {event}"
    [result] = failed.result
    assert isinstance(result, Failure) and result.type == verdict
    assert hook in (result.text or "")
    assert json.loads(failed.system_out or "")["hooks"]


@pytest.mark.parametrize("family", sorted(SESSIONS))
def test_clean_session_passes_and_a_bad_line_fails(
    engine: DockerBackend, tmp_path: Path, family: str
) -> None:
    """Without the violating line the gate passes (exit 0); with a malformed line added it
    fails naming that line, and the other lines still run."""
    name, line, *_ = SESSIONS[family]
    ws = workspace_with_pack(tmp_path, family)
    lines = (PACK / "events" / name).read_text().splitlines()
    clean = [text for number, text in enumerate(lines, start=1) if number != line][:3]
    events = tmp_path / "clean.jsonl"
    events.write_text("\n".join(clean) + "\n")
    done = check(tmp_path, family, ws, events)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().splitlines()[-1].startswith("passed: 3 events")

    events.write_text("\n".join([clean[0], '{"truncated": ', clean[1]]) + "\n")
    done = check(tmp_path, family, ws, events)
    assert done.returncode == 1
    assert "line 2: unreadable: not JSON" in done.stdout
    assert "FAILED: 1 of 3 events did not pass (2 allowed, 1 unreadable" in done.stdout


def test_a_policy_file_that_does_not_parse_fails_the_gate(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Issue 29 item 4: the CI example with `.claude/settings.json` cut short fails every
    line (exit 1), naming the file in the summary and the JUnit report, fail-open or not;
    `run` names it in `skipped` and on stderr, and blocks under --fail-closed."""
    ws = workspace_with_pack(tmp_path, "claude")
    settings = ws / ".claude" / "settings.json"
    settings.write_text('{"hooks": {')
    events = PACK / "events" / "claude-session.jsonl"
    total = len(events.read_text().splitlines())
    report = tmp_path / "report.xml"
    for extra in ((), ("--fail-open",)):
        done = check(tmp_path, "claude", ws, events, "--junit", str(report), *extra)
        assert done.returncode == 1, done.stdout + done.stderr
        assert f"{total} unreadable config" in done.stdout.rstrip().splitlines()[-1]
        assert f"line 1 SessionStart: unreadable config ({settings.relative_to(ws)})" in (
            done.stdout
        )
        assert "could not be read: not valid JSON" in done.stdout
        [suite] = list(JUnitXml.fromfile(str(report)))
        assert (suite.tests, suite.failures, suite.errors) == (total, 0, total)

    event = json.dumps({"cwd": str(ws), "tool_name": "Bash", "tool_input": {"command": "ls"}})
    for extra in ((), ("--fail-closed",)):
        argv = cli("run", "PreToolUse", "--agent", "claude", *extra)
        done = subprocess.run(argv, input=event, capture_output=True, text=True, timeout=120,
                              check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert doc["skipped"] == [{"path": str(settings), "source": "project",
                                   "reason": doc["skipped"][0]["reason"]}]  # fmt: skip
        assert doc["skipped"][0]["reason"].startswith("not valid JSON")
        assert str(settings) in done.stderr
        assert doc["blocked"] is bool(extra), doc
