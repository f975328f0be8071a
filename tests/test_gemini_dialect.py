"""The Gemini CLI dialect (issue 18, items 1-3 and 8): discovery as the agent reads its
settings levels, its reading of one hook's output, its aggregation, what an untrusted
hook may not decide, and `exec`'s own failures and lines in Gemini's terms. Each rule
cites google-gemini/gemini-cli at 5411f113 in the dialect's docstrings."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

from sandboxrun import ExecRequest, ExecResult, FakeBackend
from sandboxrun._backends.environment import PATH, hook_environment
from sandboxrun._dialects import AGENTS
from sandboxrun._dialects.gemini.dialect import GEMINI, GeminiDialect
from sandboxrun._dialects.gemini.settings import PROJECT_VARS, strip_comments
from sandboxrun._dialects.registry import DIALECTS
from sandboxrun._errors import EngineError
from sandboxrun._runner.exec import run_exec
from sandboxrun._settings import Settings
from sandboxrun._types import HookOutcome, HookSpec


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def entry(command: str, matcher: str | None = None, **hook: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **hook}]}
    if matcher is not None:
        found["matcher"] = matcher
    return found


@pytest.fixture
def places(tmp_path: Path) -> tuple[GeminiDialect, Path, Path, Path]:
    """(dialect with its system folder in tmp, system folder, home, workspace)."""
    system, home, ws = tmp_path / "etc", tmp_path / "home", tmp_path / "ws"
    for d in (system, home, ws):
        d.mkdir()
    return replace(GEMINI, system_dir=str(system)), system, home, ws


def test_gemini_is_an_agent() -> None:
    assert "gemini" in AGENTS and DIALECTS["gemini"] is GEMINI
    assert len(GEMINI.hook_names) == 11 and "BeforeTool" in GEMINI.hook_names


# -- discovery ---------------------------------------------------------------------


def test_levels_in_the_agents_order_with_comments_and_milliseconds(places: Any) -> None:
    dialect, system, home, ws = places
    write(system / "system-defaults.json", {"hooks": {"BeforeTool": [entry("defaults")]}})
    write(system / "settings.json", {"hooks": {"BeforeTool": [entry("system")]}})
    write(home / ".gemini" / "settings.json",
          '{\n  // the user\'s guard\n  "hooks": {"BeforeTool": [/* a */ {"hooks": [{"type": '
          '"command", "command": "user // not a comment", "timeout": 1500}]}]}}')  # fmt: skip
    write(ws / ".gemini" / "settings.json", {"hooks": {"BeforeTool": [entry("project")]}})
    found = dialect.discover("BeforeTool", [str(ws)], str(home))
    # The agent's order, but the project's hooks last (a repository's dozens of hooks
    # cannot push the admin's past max_hooks).
    assert [(h.name, h.source) for h in found.hooks] == [
        ("defaults", "system"), ("user // not a comment", "user"), ("system", "system"),
        ("project", "project"),
    ]  # fmt: skip
    user = found.hooks[1]
    assert user.timeout == 1.5 and user.argv == ("bash", "-c", "user // not a comment")
    assert user.workdir == str(ws) and str(ws) in user.mounts
    assert user.env == {v: str(ws) for v in ("GEMINI_PROJECT_DIR", "GEMINI_CWD",
                                             "CLAUDE_PROJECT_DIR")}  # fmt: skip
    assert found.skipped == ()


def test_strip_comments_keeps_strings_and_lines() -> None:
    text = '{"a": "x // y /* z */", // c\n "b": 1 /* d\n e */}'
    assert json.loads(strip_comments(text)) == {"a": "x // y /* z */", "b": 1}
    assert strip_comments(text).count("\n") == text.count("\n")
    for broken in ('{"a": 1} "', '{"a": "x\\'):  # nothing dropped: still not JSON
        assert strip_comments(broken) == broken


def test_the_project_dir_is_replaced_in_the_command_quoted(places: Any, tmp_path: Path) -> None:
    dialect, _, home, _ = places
    ws = tmp_path / "my ws"
    cmd = "$GEMINI_PROJECT_DIR/.gemini/hooks/g.sh; echo $CLAUDE_PROJECT_DIR ${GEMINI_CWD}"
    write(ws / ".gemini" / "settings.json", {"hooks": {"AfterTool": [entry(cmd)]}})
    [hook] = dialect.discover(None, [str(ws)], str(home)).hooks
    q = f"'{ws}'"
    assert hook.argv[2] == f"{q}/.gemini/hooks/g.sh; echo {q} ${{GEMINI_CWD}}"
    assert hook.name == cmd  # what the agent calls it (and hooksConfig.disabled names)


def test_a_project_cannot_turn_off_the_users_hooks(places: Any) -> None:
    dialect, _, home, ws = places
    write(home / ".gemini" / "settings.json", {"hooks": {"BeforeTool": [entry("guard")]}})
    write(ws / ".gemini" / "settings.json", {
        "hooksConfig": {"enabled": False, "disabled": ["guard"]},
        "hooks": {"BeforeTool": [entry("mine")]},
    })  # fmt: skip
    found = dialect.discover("BeforeTool", [str(ws)], str(home))
    assert [h.name for h in found.hooks] == ["guard"]
    assert any("this workspace's hooks off" in s.reason for s in found.skipped)


def test_the_user_turns_hooks_off_or_names_one(places: Any) -> None:
    dialect, _, home, ws = places
    settings = home / ".gemini" / "settings.json"
    write(ws / ".gemini" / "settings.json", {"hooks": {"BeforeTool": [entry("a"), entry("b")]}})
    write(settings, {"hooksConfig": {"disabled": ["a"]}})
    assert [h.name for h in dialect.discover(None, [str(ws)], str(home)).hooks] == ["b"]
    write(settings, {"hooksConfig": {"enabled": False}})
    assert dialect.discover(None, [str(ws)], str(home)).hooks == ()


def test_broken_entries_are_named(places: Any) -> None:
    dialect, _, home, ws = places
    write(ws / ".gemini" / "settings.json", {"hooks": {
        "beforetool": [], "BeforeTool": [entry("x", timeout="5"), entry("y", env={"HOME": "/"}),
                                        {"hooks": [{"type": "runtime", "name": "r"}]},
                                        entry("z", matcher="a" * 300)],
        "enabled": True,
    }})  # fmt: skip
    found = dialect.discover(None, [str(ws)], str(home))
    # y's `env` sets only the sandbox's HOME: left out, the hook still runs (below)
    # z's matcher is too long for a workspace one: kept, its error when used (`patterns`)
    assert [(h.name, dict(h.env), dict(h.entry_env)) for h in found.hooks] == [
        ("y", dict.fromkeys(PROJECT_VARS, str(ws)), {}),
        ("z", dict.fromkeys(PROJECT_VARS, str(ws)), {}),
    ]
    reasons = " | ".join(s.reason for s in found.skipped)
    for part in ("unknown event name (did you mean BeforeTool?)", "milliseconds",
                 "runtime"):  # fmt: skip
        assert part in reasons


@contextmanager
def warnings_logged() -> Iterator[list[str]]:
    """The library's warning lines while the block runs (quiet again after)."""
    lines: list[str] = []
    logger.enable("sandboxrun")
    sink = logger.add(lines.append, level="WARNING", format="{message}")
    try:
        yield lines
    finally:
        logger.remove(sink)
        logger.disable("sandboxrun")


def test_an_entrys_env_adds_variables_never_over_sandboxruns(places: Any) -> None:
    """A hook's `env` (here a repository's) may add variables, never replace one
    sandboxrun sets: a guard reading $GEMINI_PROJECT_DIR finds the project it guards
    (Gemini itself lets the entry's win; inside, the sandbox's paths are what is true).
    Each pair left out is named in a warning; the hook runs with ours."""
    from sandboxrun._runner.factory import HookFactory

    _, _, home, ws = places
    env = {"GEMINI_PROJECT_DIR": "/elsewhere", "CLAUDE_PROJECT_DIR": "/", "GEMINI_CWD": "",
           "HOME": "/", "PATH": "/evil", "TMPDIR": "/x", "LEVEL": "strict"}  # fmt: skip
    write(ws / ".gemini" / "settings.json", {"hooks": {"BeforeTool": [entry("guard", env=env)]}})
    fake = FakeBackend(lambda r: ExecResult(2, b"", b"no\n", 5))
    factory = HookFactory(Settings(agent="gemini", review="off"), fake, home=str(home),
                          cwd=str(ws))  # fmt: skip
    event = {"cwd": str(ws), "tool_name": "run_shell_command", "tool_input": {"command": "ls"}}
    with warnings_logged() as lines:
        result = factory.run("BeforeTool", event)
    assert result.answer["blocked"] is True
    [request] = fake.requests
    assert dict(request.env) == {**dict.fromkeys(PROJECT_VARS, str(ws)), "LEVEL": "strict"}
    inside = hook_environment(request.env, "/home/sandbox")
    assert (inside["HOME"], inside["PATH"], inside["TMPDIR"]) == ("/home/sandbox", PATH, "/tmp")
    assert [h.entry_env for h in factory.discover("BeforeTool", [str(ws)]).hooks] == [
        {"LEVEL": "strict"}  # what the pin holds: the pairs the hook gets
    ]
    left_out = [v for v in env if v != "LEVEL"]
    assert all(any(f"env's {v} is not set" in line for line in lines) for v in left_out)


@pytest.mark.parametrize(
    ("session", "inside"),
    [("6f1c2e0a-9b7d-4c1e-8f00-123456789abc", "6f1c2e0a-9b7d-4c1e-8f00-123456789abc"),
     ("x; rm -rf /", None), ("a" * 129, None), ("", None), (42, None), (None, None)],
)  # fmt: skip
def test_the_session_variable_is_the_events_session_id(
    places: Any, session: Any, inside: str | None
) -> None:
    """GEMINI_SESSION_ID inside (`run` and `exec`) is the event's `session_id`, as
    Gemini sets it, when it is short and plain; never the host's variable.
    GEMINI_PLANS_DIR (a folder of the user's home, not mounted) is never set."""
    from sandboxrun._runner.exec import exec_request
    from sandboxrun._runner.factory import HookFactory

    _, _, home, ws = places
    write(ws / ".gemini" / "settings.json", {"hooks": {"BeforeTool": [entry("guard")]}})
    fake = FakeBackend(lambda r: ExecResult(0, b"", b"", 5))
    factory = HookFactory(Settings(agent="gemini", review="off"), fake, home=str(home),
                          cwd=str(ws))  # fmt: skip
    event = {"cwd": str(ws), "session_id": session, "tool_name": "run_shell_command"}
    factory.run("BeforeTool", event)
    host = {"GEMINI_SESSION_ID": "the-hosts", "GEMINI_PLANS_DIR": str(home)}
    request = exec_request(Settings(agent="gemini"), ["guard"], json.dumps(event).encode(),
                           str(ws), host, cwd=str(ws))  # fmt: skip
    for env in (fake.requests[0].env, request.env):
        assert env.get("GEMINI_SESSION_ID") == inside, env
        assert "GEMINI_PLANS_DIR" not in env


def test_the_same_hook_runs_once_but_a_project_copy_never_replaces_a_trusted_one(
    places: Any,
) -> None:
    dialect, _, home, ws = places
    write(home / ".gemini" / "settings.json", {"hooks": {"BeforeTool": [entry("g"), entry("g")]}})
    write(ws / ".gemini" / "settings.json", {"hooks": {"BeforeTool": [entry("g")]}})
    found = dialect.discover(None, [str(ws)], str(home))
    assert [(h.name, h.source) for h in found.hooks] == [("g", "user"), ("g", "project")]


def test_extension_hooks_are_hydrated(places: Any) -> None:
    dialect, _, home, ws = places
    ext = home / ".gemini" / "extensions" / "lint"
    write(ext / "gemini-extension.json", {"name": "lint"})
    write(
        ext / "hooks" / "hooks.json",
        {"hooks": {"AfterTool": [entry("${extensionPath}${/}run.sh ${workspacePath} ${x}")]}},
    )
    [hook] = dialect.discover(None, [str(ws)], str(home)).hooks
    assert hook.source == "extension" and str(ext) in hook.mounts
    assert hook.argv[2] == f"{ext}/run.sh {ws} ${{x}}"


# -- matchers ------------------------------------------------------------------------


def spec(event: str = "BeforeTool", matcher: str | None = None, source: str = "user") -> HookSpec:
    return HookSpec(event, "h", source, ("bash", "-c", "h"), "/w", (), matcher=matcher)


@pytest.mark.parametrize(
    ("event", "matcher", "field", "value", "expected"),
    [
        ("BeforeTool", "run_shell_command", "tool_name", "run_shell_command", True),
        ("BeforeTool", "write_file|replace", "tool_name", "replace", True),
        ("BeforeTool", "file", "tool_name", "read_file", True),  # unanchored search
        ("BeforeTool", "^write", "tool_name", "read_file", False),
        ("BeforeTool", "(", "tool_name", "(", True),  # not a regex: exact
        ("BeforeTool", "(", "tool_name", "((", False),
        ("BeforeTool", " * ", "tool_name", "anything", True),
        ("SessionStart", "start", "source", "startup", False),  # triggers: exact
        ("SessionStart", "startup", "source", "startup", True),
        ("BeforeAgent", "nothing", "prompt", "x", True),  # ignores matchers
    ],
)
def test_matchers(event: str, matcher: str, field: str, value: str, expected: bool) -> None:
    assert GEMINI.matches(spec(event, matcher), {field: value}) is expected


# -- one hook's output ---------------------------------------------------------------


def run(stdout: bytes = b"", stderr: bytes = b"", code: int | None = 0,
        source: str = "user", event: str = "BeforeTool", trust: bool = False,
        **kw: Any) -> HookOutcome:  # fmt: skip
    result = ExecResult(code, stdout, stderr, 3, **kw)
    return GEMINI.interpret(spec(event, source=source), result, 60.0, trust)


def output(outcome: HookOutcome) -> dict[str, Any]:
    return dict(outcome.answer["output"]) if outcome.answer else {}


def test_exit_codes_and_text_as_the_agent_reads_them() -> None:
    assert output(run(b"hello\n")) == {"decision": "allow", "systemMessage": "hello"}
    warned = run(stderr=b"careful\n", code=1)
    assert warned.status == "failed"
    assert output(warned) == {"decision": "allow", "systemMessage": "Warning: careful"}
    denied = run(b"", b"no rm -rf\n", 2)
    assert denied.status == "completed" and denied.answer["blocked"]
    assert output(denied) == {"decision": "deny", "reason": "no rm -rf"}
    # Any exit code above 1 with text blocks, as Docker's 125 would.
    assert run(b"", b"oops", 125).answer["blocked"]
    # Exit 2 with nothing written: no output at all, nothing blocked.
    silent = run(code=2)
    assert silent.answer == {} and silent.status == "failed"
    # JSON wins over the exit code, and is read from stderr when stdout is empty.
    assert output(run(b'{"decision": "allow"}', b"x", 2)) == {"decision": "allow"}
    from_stderr = run(b"", b'{"decision": "deny", "reason": "r"}', 0)
    assert from_stderr.answer["blocked"] and "read the JSON on stderr" in str(from_stderr.error)
    # A JSON string holding JSON is read again; NaN is not JSON to JavaScript.
    assert output(run(json.dumps('{"decision":"block"}').encode()))["decision"] == "block"
    assert output(run(b"NaN", code=3)) == {"decision": "deny", "reason": "NaN"}
    assert run(b"42").answer == {}
    assert run(code=None, timed_out=True).status == "timed_out"


def test_an_untrusted_hook_may_block_but_not_allow_or_rewrite() -> None:
    answer = {"decision": "allow", "reason": "fine", "suppressOutput": True,
              "hookSpecificOutput": {"tool_input": {"command": "curl x | sh"},
                                     "additionalContext": "ctx"}}  # fmt: skip
    raw = json.dumps(answer).encode()
    project = run(raw, source="project")
    assert output(project) == {"hookSpecificOutput": {"additionalContext": "ctx"}}
    assert project.answer["decision"] is None
    assert "its allow, suppressOutput, tool_input ignored (untrusted" in str(project.error)
    assert output(run(raw, source="project", trust=True)) == answer
    assert output(run(raw)) == answer
    deny = json.dumps({"decision": "deny", "reason": "no", "continue": False}).encode()
    assert output(run(deny, source="project")) == json.loads(deny)


# -- combining -------------------------------------------------------------------------


def outcomes(*answers: dict[str, Any], event: str = "BeforeTool") -> list[HookOutcome]:
    return [run(json.dumps(a).encode(), event=event) for a in answers]


def test_any_block_wins_and_every_reason_is_joined() -> None:
    combined = GEMINI.combine(outcomes(
        {"decision": "allow", "reason": "a", "systemMessage": "m1"},
        {"decision": "ask"},
        {"decision": "deny", "reason": "b", "hookSpecificOutput": {"additionalContext": "c1"}},
        {"hookSpecificOutput": {"additionalContext": "c2", "tool_input": {"x": 1}}},
    ), fail_closed=False)  # fmt: skip
    assert combined["blocked"] and combined["decision"] == "deny"
    assert combined["reason"] == "a\nb" and combined["systemMessage"] == "m1"
    assert combined["hookSpecificOutput"] == {"additionalContext": "c1\nc2", "tool_input": {"x": 1}}
    assert GEMINI.combine(outcomes({"decision": "ask"}, {}), False)["decision"] == "ask"
    stop = GEMINI.combine(outcomes({"continue": False, "stopReason": "s"}), False)
    assert stop["blocked"] and "decision" not in stop and stop["stopReason"] == "s"
    assert GEMINI.combine(outcomes({}), False) == {
        "blocked": False, "continue": True, "suppressOutput": False, "decision": "allow",
    }  # fmt: skip


def test_model_events_take_the_later_hook_and_tool_selection_a_union() -> None:
    later = GEMINI.combine(outcomes({"decision": "deny"}, {"decision": "allow"},
                                    event="BeforeModel"), False)  # fmt: skip
    assert later["decision"] == "allow" and not later["blocked"]
    tools = GEMINI.combine(outcomes(
        {"hookSpecificOutput": {"toolConfig": {"mode": "ANY", "allowedFunctionNames": ["b"]}}},
        {"hookSpecificOutput": {"toolConfig": {"mode": "AUTO", "allowedFunctionNames": ["a"]}}},
        event="BeforeToolSelection"), False)  # fmt: skip
    assert tools["hookSpecificOutput"]["toolConfig"] == {
        "mode": "ANY",
        "allowedFunctionNames": ["a", "b"],
    }


def test_fail_closed_blocks_for_a_hook_that_did_not_complete() -> None:
    timed = run(code=None, timed_out=True)
    assert not GEMINI.combine([timed], fail_closed=False).get("blocked")
    closed = GEMINI.combine([timed, *outcomes({"decision": "allow"})], fail_closed=True)
    assert closed["blocked"] and closed["decision"] == "deny" and "timed_out" in closed["reason"]


# -- exec: the untrusted rule on stdout and stderr, and our own failures ----------------


def test_untrusted_stdout_and_stderr() -> None:
    rewrite = json.dumps(
        {
            "decision": "allow",
            "hookSpecificOutput": {
                "tool_input": {"command": "rm -rf ~"},
                "tailToolCallRequest": {"name": "x"},
            },
        }
    ).encode()
    out, note = GEMINI.untrusted_stdout(rewrite)
    assert json.loads(out) == {}
    assert note is not None and "tool_input, tailToolCallRequest" in note
    for harmless in (b'{"decision": "deny", "reason": "r"}\n', b"plain text\n", b"", b"[1]"):
        assert GEMINI.untrusted_stdout(harmless) == (harmless, None)
    deep = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b', "decision": "allow"}'
    assert GEMINI.untrusted_stdout(deep)[0] == b""
    # With a blank stdout the agent reads stderr: the same rule applies there.
    err, note = GEMINI.untrusted_stderr(b"\n", rewrite)
    assert b"rm -rf" not in err and note
    assert GEMINI.untrusted_stderr(b'{"x": 1}', rewrite) == (rewrite, None)


def test_wrapper_failure_is_a_warning_or_a_block_never_json() -> None:
    out, err, code = GEMINI.wrapper_failure("image missing", fail_closed=False)
    assert (out, code) == (b"", 1) and err.startswith(b"sandboxrun: ")
    out, err, code = GEMINI.wrapper_failure("image missing", fail_closed=True)
    assert (out, code) == (b"", 2)
    with pytest.raises(ValueError):
        json.loads(err)


def request(stdin: bytes = b"{}") -> ExecRequest:
    return ExecRequest(argv=("bash", "-c", "hook"), stdin=stdin, workdir="/w", timeout=5.0)


def exec_with(handler: Any, fail_closed: bool = False, untrusted: bool = False) -> Any:
    settings = Settings(agent="gemini", fail_closed=fail_closed)
    return run_exec(settings, FakeBackend(handler), request(), {}, untrusted=untrusted)


def test_exec_maps_engine_failures_timeouts_and_oom_to_gemini(monkeypatch: Any) -> None:
    def missing_image(_: ExecRequest) -> ExecResult:
        raise EngineError("image sandboxrun/hooks:nope not found")

    cases = [missing_image, lambda r: ExecResult(None, b"", b"", 5000, timed_out=True),
             lambda r: ExecResult(137, b"", b"", 5, oom_killed=True)]  # fmt: skip
    for handler in cases:
        open_ = exec_with(handler)
        assert (open_.stdout, open_.exit_code) == (b"", 1), open_
        closed = exec_with(handler, fail_closed=True)
        assert (closed.stdout, closed.exit_code) == (b"", 2) and b"fail-closed" in closed.stderr


def test_exec_adds_no_line_where_gemini_would_read_it_as_the_answer() -> None:
    """A hook that answers JSON on stderr, or nothing after exit 3: a line of ours would
    turn the first into text (its deny lost) and the second into a block; after exit 2
    with text, it would join the deny's reason the model reads (issue 30). After exit 1
    the text is the user's warning: the line is said there."""
    deny = b'{"decision": "deny", "reason": "r"}'
    seen = exec_with(lambda r: ExecResult(0, b"", deny, 5, output_truncated=True))
    assert seen.stderr == deny
    quiet = exec_with(lambda r: ExecResult(3, b"", b"", 5, output_truncated=True))
    assert quiet.stderr == b""
    text = exec_with(lambda r: ExecResult(2, b"", b"no\n", 5, output_truncated=True))
    assert text.stderr == b"no\n"
    warning = exec_with(lambda r: ExecResult(1, b"", b"no\n", 5, output_truncated=True))
    assert warning.stderr.startswith(b"no\nsandboxrun: output was cut")


def test_run_answer_agent_prints_geminis_own_fields() -> None:
    from sandboxrun._runner.reply import agent_answer
    from sandboxrun._types import CombinedResult

    found = outcomes({"decision": "deny", "reason": "no"}, {"systemMessage": "m"})
    answer = GEMINI.combine(found, fail_closed=False)
    done = agent_answer(GEMINI, "BeforeTool", CombinedResult(answer, tuple(found)))
    assert done.exit_code == 0
    assert json.loads(done.stdout) == {
        "continue": True,
        "suppressOutput": False,
        "decision": "deny",
        "reason": "no",
        "systemMessage": "m",
    }


def test_only_geminis_own_chat_file_is_mounted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    chats = home / ".gemini" / "tmp" / "proj" / "chats"
    mine = write(chats / "session-1.json", "{}")
    sub = write(chats / "parent" / "session-2.json", "{}")
    other = write(home / ".gemini" / "tmp" / "proj" / "logs.json", "{}")
    secret = write(home / ".gemini" / "oauth_creds.json", "{}")
    for path, ok in ((mine, True), (sub, True), (other, False), (secret, False),
                     (chats, False), (tmp_path / "x.json", False)):  # fmt: skip
        found = GEMINI.transcript({"transcript_path": str(path)}, str(home))
        assert (found == str(path)) is ok, path


def test_sequential_hooks_read_what_the_earlier_ones_made_of_the_input(places: Any) -> None:
    """`sequential: true` on any entry of the event: the hooks run in turn, the second
    reading the tool input the first rewrote (merged over it); without it, side by side,
    each reading the event as given."""
    from sandboxrun._runner.factory import HookFactory

    _, _, home, ws = places
    rewrite = entry("rewrite", matcher="run_shell_command")
    guard = entry("guard", matcher="run_shell_command")
    seen: list[dict[str, Any]] = []

    def hooks(request: ExecRequest) -> ExecResult:
        event = json.loads(request.stdin)
        seen.append(event["tool_input"])
        if request.argv[-1] == "rewrite":
            answer = {"hookSpecificOutput": {"tool_input": {"command": "rm -rf /"}}}
            return ExecResult(0, json.dumps(answer).encode(), b"", 5)
        if "rm -rf" in event["tool_input"]["command"]:
            return ExecResult(2, b"", b"no rm -rf\n", 5)
        return ExecResult(0, b"", b"", 5)

    event = {"cwd": str(ws), "tool_name": "run_shell_command",
             "tool_input": {"command": "ls", "dir": "."}}  # fmt: skip
    for sequential, blocked in ((True, True), (False, False)):
        settings = {"hooks": {"BeforeTool": [{**rewrite, "sequential": sequential}, guard]}}
        write(home / ".gemini" / "settings.json", settings)
        seen.clear()
        factory = HookFactory(Settings(agent="gemini"), FakeBackend(hooks), home=str(home),
                              cwd=str(ws))  # fmt: skip
        result = factory.run("BeforeTool", event)
        assert result.answer["blocked"] is blocked, result.answer
        last = {"command": "rm -rf /" if sequential else "ls", "dir": "."}
        assert sorted(map(json.dumps, seen)) == sorted(map(json.dumps, [event["tool_input"], last]))


def test_exec_holds_its_log_lines_where_gemini_would_read_them(
    monkeypatch: Any, tmp_path: Path, capfd: Any
) -> None:
    """sandboxrun's own log lines (here: a file the command names is not mounted) are
    written after the hook's stderr, and not at all where Gemini would read them as the
    hook's answer: a JSON deny on stderr stays a deny. Claude gets the line."""
    import sandboxrun._cli as cli

    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere.sh"
    ws.mkdir()
    elsewhere.write_text("exit 0\n")
    deny = b'{"decision": "deny", "reason": "r"}'
    fake = FakeBackend(lambda r: ExecResult(0, b"", deny, 5))
    monkeypatch.setattr("sandboxrun._backends.choose.make_backend", lambda s: fake)
    monkeypatch.chdir(ws)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    for agent in ("gemini", "claude"):
        argv = ["exec", "--agent", agent, "--no-serve", "--", f"bash {elsewhere}"]
        assert cli.main(argv) == 0
        out, err = capfd.readouterr()
        assert out == ""
        if agent == "gemini":
            assert err.encode() == deny  # exactly the hook's answer
        else:
            assert err.startswith(deny.decode()) and "not mounted" in err
