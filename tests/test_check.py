"""`sandboxrun check`, the CI gate, over a fake engine: verdicts, the summary table, exit
codes, malformed lines, fail-open, the JUnit report read back, and progress."""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml

import sandboxrun._cli as cli
from sandboxrun import EngineUnavailable, ExecRequest, ExecResult, FakeBackend, Settings
from sandboxrun._backends.docker import backend as _docker
from sandboxrun._check.events import EventLine
from sandboxrun._check.replay import LineResult
from sandboxrun._check.report import Progress, short_name
from sandboxrun._dialects import AGENTS
from tests import test_cli_unit
from tests.conftest import user_config

# The CLI tests' fixtures: a workspace that is the cwd; the library's logging restored.
ws = test_cli_unit.ws
_restore_library_logging = test_cli_unit._restore_library_logging

LOCAL = Path(".clinerules/hooks")


Handler = Callable[[ExecRequest], ExecResult]


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Callable[..., list[ExecRequest]]:
    """`engine(handler, check_error=None)` puts a fake engine behind the CLI; returns the
    list of requests it will see."""

    def install(handler: Handler, check_error: Exception | None = None) -> list[ExecRequest]:
        inner = FakeBackend(handler)

        class FakeDocker:
            def __init__(self, settings: Settings, warm: bool = False) -> None:
                self.settings = settings

            def check(self) -> None:
                if check_error is not None:
                    raise check_error

            def run(self, request: ExecRequest) -> ExecResult:
                return inner.run(request)

            def image_tools(self) -> None:
                return None

            def abort(self) -> None:
                return None

            def close(self) -> None:
                return None

            def __enter__(self) -> FakeDocker:
                return self

            def __exit__(self, *exc_info: object) -> None:
                return None

        # The CLI imports the backend when a command needs it: patch it at its source.
        monkeypatch.setattr(_docker, "DockerBackend", FakeDocker)
        return inner.requests

    return install


def guard(request: ExecRequest) -> ExecResult:
    """A Cline guard: cancels `rm`, allows anything else."""
    event = json.loads(request.stdin)
    command = event.get("preToolUse", {}).get("parameters", {}).get("command", "")
    if command.startswith("rm"):
        return ExecResult(0, b'{"cancel": true, "errorMessage": "no rm, please"}', b"", 5)
    return ExecResult(0, b'{"cancel": false}', b"", 5)


def cline_event(command: str, **extra: Any) -> str:
    event = {
        "hookName": "PreToolUse",
        "preToolUse": {"toolName": "execute_command", "parameters": {"command": command}},
    }
    return json.dumps({**event, **extra})  # fmt: skip


def events_file(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def table_rows(out: str) -> dict[int, list[str]]:
    """The rows of the summary table by line number: [event, decision, ms, hooks...]."""
    rows = {}
    for text in out.split("\n\n")[0].splitlines()[1:]:
        number, *cells = text.split()
        rows[int(number)] = cells
    return rows


# -- verdicts and exit codes ------------------------------------------------------------


def test_all_allowed_passes(home, ws, make_hook, engine, tmp_path, capsys) -> None:
    """Every event allowed: exit 0, one table row per line, a `passed` verdict."""
    make_hook(ws / LOCAL)
    engine(guard)
    events = events_file(tmp_path, cline_event("ls"), cline_event("git status"))
    assert cli.main(["check", "--events", str(events)]) == 0
    out, err = capsys.readouterr()
    rows = table_rows(out)
    assert [rows[n][:2] for n in (1, 2)] == [["PreToolUse", "allowed"]] * 2
    assert rows[1][3] == ".clinerules/hooks/PreToolUse"
    assert out.splitlines()[0].split() == ["LINE", "EVENT", "DECISION", "MS", "HOOKS"]
    assert out.rstrip().splitlines()[-1].startswith("passed: 2 events")
    assert err == ""  # not a terminal, and quick: no progress line


def test_a_blocked_event_fails_naming_line_event_and_hook(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    """One violating line: exit 1, and the summary names its line, event, hook and reason."""
    hook = make_hook(ws / LOCAL)
    engine(guard)
    events = events_file(tmp_path, cline_event("ls"), cline_event("rm -rf /"), cline_event("pwd"))
    assert cli.main(["check", "--events", str(events)]) == 1
    out = capsys.readouterr().out
    assert table_rows(out)[2][:2] == ["PreToolUse", "blocked"]
    assert [table_rows(out)[n][1] for n in (1, 3)] == ["allowed", "allowed"]
    assert "line 2 PreToolUse: blocked (.clinerules/hooks/PreToolUse): no rm, please" in out
    assert out.rstrip().splitlines()[-1].startswith("FAILED: 1 of 3 events did not pass")
    assert str(hook) not in out  # names inside the workspace are shown relative to it


def test_sdk_events_replay_through_the_pretooluse_files(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    """A recorded `tool_call` (Cline's SDK names its events so: hook-file-config.ts
    HOOK_CONFIG_FILE_EVENT_MAP) runs the PreToolUse hooks; under the extension's rules
    (`cline_variant = "vscode"`) it is no event."""
    make_hook(ws / LOCAL, "pretooluse.sh", mode=0o644)
    engine(guard)
    sdk = json.loads(
        cline_event("rm -rf /", hookName="tool_call", timestamp="2026-08-22T20:03:18.123Z")
    )
    events = events_file(tmp_path, json.dumps(sdk), cline_event("ls"))
    assert cli.main(["check", "--events", str(events)]) == 1
    out = capsys.readouterr().out
    assert table_rows(out)[1][:2] == ["tool_call", "blocked"]
    assert "line 1 tool_call: blocked (.clinerules/hooks/pretooluse.sh): no rm, please" in out
    user_config(home, 'cline_variant = "vscode"\n')
    assert cli.main(["check", "--events", str(events)]) == 1
    assert "'tool_call' is not a cline hook event" in capsys.readouterr().out


def test_malformed_lines_are_reported_with_their_numbers(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    """Bad lines fail the gate, each named by number and why; every good line still runs."""
    make_hook(ws / LOCAL)
    requests = engine(guard)
    events = tmp_path / "events.jsonl"
    events.write_bytes(b"\n".join([
        cline_event("ls").encode(), b"{not json", b"[1, 2]", b"",
        json.dumps({"hook_event_name": "PreToolUse"}).encode(), b'{"hookName": "Nope"}',
        b"\xff\xfe", cline_event("pwd").encode(),
    ]))  # fmt: skip
    assert cli.main(["check", "--events", str(events)]) == 1
    out = capsys.readouterr().out
    assert len(requests) == 2  # lines 1 and 8
    rows = table_rows(out)
    assert sorted(rows) == [1, 2, 3, 5, 6, 7, 8]  # the blank line 4 is no event
    assert [rows[n][1] for n in (2, 3, 5, 6, 7)] == ["unreadable"] * 5
    assert "line 2: unreadable: not JSON:" in out
    assert "line 3: unreadable: not a JSON object but list" in out
    assert "line 5: unreadable: no 'hookName'" in out and "Claude-family event?" in out
    assert "line 6: unreadable: 'Nope' is not a cline hook event" in out
    assert "line 7: unreadable: not UTF-8 (byte 1)" in out
    assert rows[8][1] == "allowed"


def test_a_failed_hook_fails_the_gate_unless_fail_open(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    """Fail-closed by default: a crashed or timed-out hook fails the gate; --fail-open
    reports it and passes."""
    make_hook(ws / LOCAL)

    def crash(request: ExecRequest) -> ExecResult:
        if b"sleep" in request.stdin:
            return ExecResult(None, b"", b"", 30_000, timed_out=True)
        return ExecResult(3, b"", b"boom", 5)

    engine(crash)
    events = events_file(tmp_path, cline_event("ls"), cline_event("sleep 99"))
    assert cli.main(["check", "--events", str(events)]) == 1
    out = capsys.readouterr().out
    assert [table_rows(out)[n][1] for n in (1, 2)] == ["failed", "failed"]
    assert "exited with code 3" in out and "timed out after 120s" in out
    assert "fail-closed)" in out
    assert cli.main(["check", "--events", str(events), "--fail-open"]) == 0
    out = capsys.readouterr().out
    assert [table_rows(out)[n][1:3] for n in (1, 2)] == [["failure", "ignored"]] * 2
    assert "line 1 PreToolUse: failure ignored (.clinerules/hooks/PreToolUse): ignored" in out
    assert out.rstrip().endswith("fail-open)")


def test_no_hooks_passes_and_says_so(home, ws, engine, tmp_path, capsys) -> None:
    """A workspace without hooks: every line `no hooks`, exit 0."""
    engine(guard)
    assert cli.main(["check", "--events", str(events_file(tmp_path, cline_event("ls")))]) == 0
    assert table_rows(capsys.readouterr().out)[1][1:3] == ["no", "hooks"]


def test_claude_family_deny_and_ask(home, ws, engine, tmp_path, capsys) -> None:
    """Claude family: exit 2 is `denied` (fails), an `ask` passes; events name themselves
    with hook_event_name."""
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
        }
    }
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))

    def claude_guard(request: ExecRequest) -> ExecResult:
        command = json.loads(request.stdin)["tool_input"]["command"]
        if command.startswith("rm"):
            return ExecResult(2, b"", b"rm is not allowed\n", 5)
        ask = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
        return ExecResult(0, json.dumps(ask).encode(), b"", 5)

    engine(claude_guard)
    lines = [json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                         "tool_input": {"command": c}, "cwd": "/elsewhere"}) for c in ("ls", "rm -rf /")]  # fmt: skip
    assert (
        cli.main(["check", "--agent", "claude", "--events", str(events_file(tmp_path, *lines))])
        == 1
    )
    out = capsys.readouterr().out
    rows = table_rows(out)
    assert (rows[1][1], rows[2][1]) == ("ask", "denied")
    assert "line 2 PreToolUse: denied (guard): rm is not allowed" in out


def test_gemini_deny_and_ask(home, ws, engine, tmp_path, capsys) -> None:
    """Gemini CLI: a JSON deny (or exit 2 with stderr) is `denied`, an ask passes as `ask`;
    its events name themselves with hook_event_name too."""
    entry = {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "guard"}]}
    (ws / ".gemini").mkdir()
    (ws / ".gemini" / "settings.json").write_text(json.dumps({"hooks": {"BeforeTool": [entry]}}))

    def gemini_guard(request: ExecRequest) -> ExecResult:
        command = json.loads(request.stdin)["tool_input"]["command"]
        if command.startswith("rm"):
            return ExecResult(2, b"", b"rm is not allowed\n", 5)
        return ExecResult(0, b'{"decision": "ask"}', b"", 5)

    engine(gemini_guard)
    lines = [json.dumps({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                         "tool_input": {"command": c}, "cwd": str(ws)}) for c in ("ls", "rm -rf /")]  # fmt: skip
    argv = ["check", "--agent", "gemini", "--events", str(events_file(tmp_path, *lines))]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert (table_rows(out)[1][1], table_rows(out)[2][1]) == ("ask", "denied")
    assert "line 2 BeforeTool: denied (guard): rm is not allowed" in out


def test_a_handler_sandboxrun_cannot_run_fails_closed(home, ws, engine, tmp_path, capsys) -> None:
    """An `http` handler that applies is a guard that did not run: `failed` naming it, or
    `failure ignored` under --fail-open."""
    settings = {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "http", "url": "https://policy.example/check"}]}]}}  # fmt: skip
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))
    engine(guard)
    event = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "ls"}})  # fmt: skip
    argv = ["check", "--agent", "claude", "--events", str(events_file(tmp_path, event))]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert table_rows(out)[1][1] == "failed" and "https://policy.example/check" in out
    assert cli.main([*argv, "--fail-open"]) == 0
    out = capsys.readouterr().out
    assert table_rows(out)[1][1:3] == ["failure", "ignored"]
    assert "not run:" in out and "https://policy.example/check" in out


def test_the_workspace_replaces_the_recorded_roots(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    """Events recorded on another machine are checked in this workspace: the hook reads
    the current roots, not the recorded ones."""
    make_hook(ws / LOCAL)
    requests = engine(guard)
    events = events_file(tmp_path, cline_event("ls", workspaceRoots=["/home/alice/proj"]))
    assert cli.main(["check", "--events", str(events)]) == 0
    assert json.loads(requests[0].stdin)["workspaceRoots"] == [str(ws)]


def test_events_from_stdin(home, ws, make_hook, engine, monkeypatch, capsys) -> None:
    """`--events -` reads the events on stdin."""
    make_hook(ws / LOCAL)
    engine(guard)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(cline_event("rm x").encode())))
    assert cli.main(["check", "--events", "-"]) == 1
    assert table_rows(capsys.readouterr().out)[1][1] == "blocked"


# -- errors before any event is judged: exit 2, one line ------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read events file"), ("\n\n", "holds no events")],
)
def test_unusable_events_file_is_exit_2(
    home, ws, engine, tmp_path, capsys, content, message
) -> None:
    """A missing or empty events file: a gate that checked nothing does not pass."""
    engine(guard)
    path = tmp_path / "events.jsonl"
    if content is not None:
        path.write_text(content)
    assert cli.main(["check", "--events", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("sandboxrun: ") and message in err and str(path) in err
    assert err.count("\n") == 1


def test_no_engine_is_exit_2_at_once(home, ws, make_hook, engine, tmp_path, capsys) -> None:
    """No engine: one line and exit 2, not one error per event."""
    make_hook(ws / LOCAL)
    requests = engine(guard, check_error=EngineUnavailable("no engine at unix:///x"))
    events = events_file(tmp_path, cline_event("ls"), cline_event("pwd"))
    assert cli.main(["check", "--events", str(events)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", "sandboxrun: no engine at unix:///x\n")
    assert requests == []


def test_event_lines_cannot_drive_the_terminal(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    """A hook's reason with escape sequences and line breaks is escaped in the summary."""
    make_hook(ws / LOCAL)
    answer = {"cancel": True, "errorMessage": "\x1b[2Jgone\nFAKE: passed"}
    engine(lambda r: ExecResult(0, json.dumps(answer).encode(), b"", 1))
    assert cli.main(["check", "--events", str(events_file(tmp_path, cline_event("x")))]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[2Jgone | FAKE: passed" in out


# -- the JUnit report -------------------------------------------------------------------------


def test_junit_report_reads_back(home, ws, make_hook, engine, tmp_path, capsys) -> None:
    """One test case per event line: a block is a failure, a failed hook or an unreadable
    line an error, with the line, event and hook named; a JUnit parser reads it back."""
    make_hook(ws / LOCAL)

    def answers(request: ExecRequest) -> ExecResult:
        if b"crash" in request.stdin:
            return ExecResult(1, b"", b"\x00\x1bnasty", 5)
        return guard(request)

    engine(answers)
    events = events_file(tmp_path, cline_event("ls"), cline_event("rm -rf /"), "oops",
                         cline_event("crash"))  # fmt: skip
    report = tmp_path / "report.xml"
    assert cli.main(["check", "--events", str(events), "--junit", str(report)]) == 1
    capsys.readouterr()
    ET.parse(report)  # well-formed XML, whatever the hooks printed
    [suite] = list(JUnitXml.fromfile(str(report)))
    assert (suite.tests, suite.failures, suite.errors) == (4, 1, 2)
    cases = {case.name: case for case in suite}
    assert list(cases) == ["line 1: PreToolUse", "line 2: PreToolUse", "line 3: unreadable",
                           "line 4: PreToolUse"]  # fmt: skip
    assert cases["line 1: PreToolUse"].is_passed
    [blocked] = cases["line 2: PreToolUse"].result
    assert isinstance(blocked, Failure) and blocked.type == "blocked"
    assert blocked.message == "blocked: no rm, please"
    assert str(ws / LOCAL / "PreToolUse") in (blocked.text or "")
    [unreadable] = cases["line 3: unreadable"].result
    assert isinstance(unreadable, Error) and "not JSON" in (unreadable.message or "")
    [failed] = cases["line 4: PreToolUse"].result
    assert isinstance(failed, Error) and failed.type == "failed"
    assert cases["line 2: PreToolUse"].classname == "sandboxrun.cline.PreToolUse"
    assert json.loads(cases["line 2: PreToolUse"].system_out or "")["cancel"] is True


def test_junit_report_that_cannot_be_written_is_exit_2(
    home, ws, make_hook, engine, tmp_path, capsys
) -> None:
    """A report path in a missing folder: the summary is printed, then one line, exit 2."""
    make_hook(ws / LOCAL)
    engine(guard)
    report = tmp_path / "missing" / "report.xml"
    argv = [
        "check",
        "--events",
        str(events_file(tmp_path, cline_event("ls"))),
        "--junit",
        str(report),
    ]
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out.rstrip().endswith("fail-closed)")
    assert err == f"sandboxrun: cannot write the JUnit report {report}: No such file or directory\n"


# -- progress ---------------------------------------------------------------------------------


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _line_result(number: int, decision: str) -> LineResult:
    return LineResult(EventLine(number, "PreToolUse", {}), decision)


def test_progress_on_a_terminal_redraws_one_line() -> None:
    """On a terminal: one line redrawn per event, cleared at the end."""
    stream = Stream(tty=True)
    progress = Progress(stream, 2)
    for i in range(2):
        progress.start(i, EventLine(i + 1, "PreToolUse", {}))
        progress.done(i, _line_result(i + 1, "allowed"))
    progress.close()
    text = stream.getvalue()
    assert "\n" not in text
    assert text.count("\r\x1b[K") == 3
    assert "checking 2/2: line 2 PreToolUse" in text
    assert text.endswith("\r\x1b[K")


def test_progress_elsewhere_is_line_oriented_and_quiet() -> None:
    """Not on a terminal: nothing redrawn; a plain line at most every `every` seconds,
    none for the last event (the summary follows)."""
    now = [0.0]
    stream = Stream(tty=False)
    progress = Progress(stream, 10, every=10.0, clock=lambda: now[0])
    for i in range(10):
        now[0] += 4.0
        progress.start(i, EventLine(i + 1, "PreToolUse", {}))
        progress.done(i, _line_result(i + 1, "blocked" if i == 0 else "allowed"))
    progress.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()
    assert lines == [
        "sandboxrun check: 3/10 events, 1 not passed",
        "sandboxrun check: 6/10 events, 1 not passed",
        "sandboxrun check: 9/10 events, 1 not passed",
    ]


# -- the GitHub Actions example ---------------------------------------------------------------

WORKFLOW = (
    Path(__file__).resolve().parents[1] / "examples" / "github-actions" / "sandboxrun-check.yml"
)


def test_the_workflow_example_runs_commands_that_exist() -> None:
    """Every `sandboxrun` command of the workflow parses with today's flags; the gate
    writes the JUnit report that the upload step picks up."""
    text = WORKFLOW.read_text()
    env = dict(re.findall(r"^      ([A-Z_]+): (\S+)", text, flags=re.MULTILINE))
    assert env["AGENT"] in AGENTS
    commands = re.findall(r"^\s+(?:run: (?:>-\n\s+)?)?(sandboxrun [^\n]+(?:\n\s+--[^\n]+)*)", text,
                          flags=re.MULTILINE)  # fmt: skip
    assert [c.split()[1] for c in commands] == ["images", "doctor", "check"]
    values = {**{k: v.strip('"') for k, v in env.items()}, "GITHUB_WORKSPACE": "/ws"}
    for command in commands:
        words = [re.sub(r"\$(\w+)", lambda m: values[m.group(1)], w) for w in shlex.split(command)]
        args = cli._parser().parse_args(words[1:])
        if args.command == "check":
            assert (args.agent, args.workspace, args.events) == ("claude", ["/ws"], env["EVENTS"])
            assert f"path: {args.junit}" in text


def test_short_names() -> None:
    """Paths in a workspace show relative to it; commands from the project variable show
    the path after it; anything else whole."""
    assert short_name("/ws/.cline/hooks/PreToolUse", ["/ws"]) == ".cline/hooks/PreToolUse"
    assert short_name("/wsx/PreToolUse", ["/ws"]) == "/wsx/PreToolUse"
    var = "CLAUDE_PROJECT_DIR"
    assert short_name('"$CLAUDE_PROJECT_DIR"/.claude/g.sh', ["/ws"], var) == ".claude/g.sh"
    assert short_name("$CLAUDE_PROJECT_DIR/g.sh --x", ["/ws"], var) == "g.sh --x"
    assert short_name("python3 /opt/g.py", ["/ws"], var) == "python3 /opt/g.py"


def test_a_long_replay_runs_warm_a_short_one_cold(
    home, ws, make_hook, engine, tmp_path, monkeypatch
) -> None:
    """Issue 19, item 7: from `WARM_FROM` events on, the replay's backend keeps a pool; a
    shorter replay, or one without a pool (`pool_size = 0`), stays cold. Unreadable lines
    do not count."""
    from sandboxrun._check import command as check_command

    make_hook(ws / LOCAL)
    engine(guard)
    made: list[bool] = []
    real = _docker.DockerBackend

    def spy(settings: Settings, warm: bool = False) -> Any:
        made.append(warm)
        return real(settings, warm=warm)

    monkeypatch.setattr(_docker, "DockerBackend", spy)
    n = check_command.WARM_FROM
    short = events_file(tmp_path, *[cline_event("ls")] * (n - 1), "not json")
    assert cli.main(["check", "--events", str(short)]) == 1  # the bad line fails the gate
    long = events_file(tmp_path, *[cline_event("ls")] * n)
    assert cli.main(["check", "--events", str(long)]) == 0
    config = tmp_path / "config.toml"
    config.write_text("pool_size = 0\n")
    assert cli.main(["check", "--config", str(config), "--events", str(long)]) == 0
    assert made == [False, True, False]
