"""Crush's hooks (`--agent crush`): the crush.json files, matchers, exit 2 and 49, the
envelope and its Claude Code form, the aggregate, repository hooks untrusted, exec's own
failures. Protocol logic only (the fake backend); the facts rest on
charmbracelet/crush@37f36e93 (`_dialects/crush/dialect.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import HookFactory, Settings
from sandboxrun._dialects.crush import CRUSH
from sandboxrun._dialects.crush.dialect import read_answer, untrusted_stdout
from sandboxrun._errors import EngineError
from sandboxrun._runner.exec import exec_request, run_exec
from sandboxrun._types import ExecRequest, ExecResult, HookOutcome, HookSpec

from .conftest import FakeBackend


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def write(path: Path, hooks: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def answer(stdout: Any = b"", code: int = 0, stderr: bytes = b"") -> Any:
    body = stdout if isinstance(stdout, bytes) else json.dumps(stdout).encode()
    return lambda request: ExecResult(code, body, stderr, 1)


def outcome(stdout: Any, source: str = "user", code: int = 0, stderr: bytes = b"") -> HookOutcome:
    body = stdout if isinstance(stdout, bytes) else json.dumps(stdout).encode()
    hook = HookSpec("PreToolUse", "h", source, ("x",), "/", ())
    return CRUSH.interpret(hook, ExecResult(code, body, stderr, 1), 30.0)


def event(ws: Path, tool: str = "bash", **tool_input: Any) -> dict[str, Any]:
    return {"event": "PreToolUse", "session_id": "s1", "cwd": str(ws), "tool_name": tool,
            "tool_input": tool_input or {"command": "ls"}}  # fmt: skip


# -- discovery ---------------------------------------------------------------------------


def test_every_file_crush_merges_adds_its_hooks_in_crushs_order(ws: Path, home: Path) -> None:
    """Lists append (go-jsons): user, data, then crush.json, .crush.json, .crush/crush.json;
    event keys without case or underscores; identical commands run once."""
    write(home / ".config/crush/crush.json", {"PreToolUse": [{"command": "u"}]})
    write(home / ".local/share/crush/crush.json", {"pretooluse": [{"command": "d"}]})
    write(ws / "crush.json", {"pre_tool_use": [{"command": "p", "timeout": 5}]})
    write(ws / ".crush.json", {"PRE_TOOL_USE": [{"command": "h", "matcher": "^bash$"},
                                                {"command": "u"}]})  # fmt: skip
    write(ws / ".crush" / "crush.json", {"PreToolUse": [{"command": "w", "name": "W"}]})
    found = CRUSH.discover(None, [str(ws)], str(home))
    assert [(h.argv[2], h.source) for h in found.hooks] == [
        ("u", "user"), ("d", "user"), ("p", "project"), ("h", "project"), ("w", "project"),
    ]  # fmt: skip
    assert [h.hook_name for h in found.hooks] == ["PreToolUse"] * 5
    assert found.hooks[0].argv == ("bash", "-c", "u") and found.hooks[0].workdir == str(ws)
    assert found.hooks[2].timeout == 5.0 and found.hooks[3].matcher == "^bash$"
    assert found.hooks[4].name == "W"
    assert any("runs once" in s.reason for s in found.skipped)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"matcher": "x"}, "no command"),
        ({"command": ""}, "no command"),
        ({"command": "x", "matcher": 3}, "matcher must be a string"),
        ({"command": "x", "timeout": 1.5}, "whole number"),
        ({"command": "x", "timeout": True}, "whole number"),
        ({"command": "x", "name": ["n"]}, "name must be a string"),
        ("x", "must be an object"),
    ],
)
def test_an_entry_crush_refuses_is_named_and_never_run(
    ws: Path, home: Path, entry: Any, why: str
) -> None:
    write(ws / "crush.json", {"PreToolUse": [entry, {"command": "ok"}]})
    found = CRUSH.discover(None, [str(ws)], str(home))
    assert [h.argv[2] for h in found.hooks] == ["ok"]
    assert any(why in s.reason for s in found.skipped), found.skipped


def test_other_events_are_never_fired_and_shell_configs_are_named(ws: Path, home: Path) -> None:
    write(ws / "crush.json", {"PostToolUse": [{"command": "x"}], "PreToolUse": "nope"})
    (ws / ".crushrc").write_text("hook add PreToolUse --command x\n")
    (ws / "broken").mkdir()
    (ws / ".crush.json").write_text('{"hooks": {} // a comment\n}')
    found = CRUSH.discover(None, [str(ws)], str(home))
    reasons = " | ".join(s.reason for s in found.skipped)
    assert found.hooks == ()
    assert "fires no 'PostToolUse' event" in reasons and "list of hook entries" in reasons
    assert "a shell config" in reasons and "not valid JSON" in reasons


def test_timeout_zero_is_crushs_default_and_a_long_one_is_capped(ws: Path, home: Path) -> None:
    write(ws / "crush.json", {"PreToolUse": [{"command": "x", "timeout": 0},
                                             {"command": "y", "timeout": 3600}]})  # fmt: skip
    zero, long = CRUSH.discover(None, [str(ws)], str(home)).hooks
    assert zero.timeout is None and CRUSH.default_timeout == 30.0
    assert long.timeout == 600.0  # capped, never skipped: a guard still runs


def test_a_project_file_never_mounts_the_users_hook_folder(ws: Path, home: Path) -> None:
    (home / ".config/crush/hooks").mkdir(parents=True)
    write(home / ".config/crush/crush.json", {"PreToolUse": [{"command": "u"}]})
    write(ws / "crush.json", {"PreToolUse": [{"command": "p"}]})
    user, project = CRUSH.discover(None, [str(ws)], str(home)).hooks
    assert str(home / ".config/crush/hooks") in user.mounts
    assert project.mounts == (str(ws),)
    assert str(home / ".config/crush") not in user.mounts  # crush.json holds API keys


# -- matching and input ------------------------------------------------------------------


def test_the_matcher_is_a_search_in_the_tool_name(ws: Path) -> None:
    spec = HookSpec("PreToolUse", "h", "user", ("x",), "/", (), matcher="bash|edit")
    assert CRUSH.matches(spec, {"tool_name": "multiedit"})
    assert not CRUSH.matches(spec, {"tool_name": "view"})
    assert CRUSH.matches(HookSpec("PreToolUse", "h", "user", ("x",), "/", ()), {})


def test_the_hook_reads_crushs_five_fields_and_its_variables(ws: Path, home: Path) -> None:
    write(ws / "crush.json", {"PreToolUse": [{"command": "g", "matcher": "^bash$"}]})
    fake = FakeBackend(answer(b""))
    ev = {**event(ws, command="rm -rf /", file_path="/x"), "extra": "dropped"}
    result = HookFactory(Settings.load(agent="crush"), fake, home=str(home)).run("PreToolUse", ev)
    assert result.answer["blocked"] is False
    [request] = fake.requests
    assert set(json.loads(request.stdin)) == {"event", "session_id", "cwd", "tool_name",
                                              "tool_input"}  # fmt: skip
    env = request.env
    assert (env["CRUSH"], env["AGENT"], env["AI_AGENT"]) == ("1", "crush", "crush")
    assert env["CRUSH_EVENT"] == "PreToolUse" and env["CRUSH_TOOL_NAME"] == "bash"
    assert env["CRUSH_PROJECT_DIR"] == str(ws) == env["CRUSH_CWD"]
    assert env["CRUSH_TOOL_INPUT_COMMAND"] == "rm -rf /"
    assert env["CRUSH_TOOL_INPUT_FILE_PATH"] == "/x"


def test_a_cwd_outside_the_project_is_not_handed_in(ws: Path) -> None:
    ev = {**event(ws), "cwd": "/etc"}
    assert json.loads(CRUSH.prepare_input("PreToolUse", ev, [str(ws)]))["cwd"] == str(ws)
    assert CRUSH.event_env(ev, str(ws))["CRUSH_CWD"] == str(ws)


# -- one hook's answer -------------------------------------------------------------------


def test_exit_2_denies_49_halts_others_are_no_opinion() -> None:
    deny = outcome(b"", code=2, stderr=b"no haskell\n").answer
    assert (deny["decision"], deny["reason"], deny["halt"]) == ("deny", "no haskell", False)
    assert outcome(b"", code=2).answer["reason"] == "blocked by hook"
    halt = outcome(b"", code=49).answer
    assert (halt["decision"], halt["halt"], halt["reason"]) == ("deny", True, "turn halted by hook")
    other = outcome(b'{"decision":"deny"}', code=1, stderr=b"oops")
    assert other.status == "failed" and not other.answer
    assert CRUSH.combine([other], fail_closed=False)["blocked"] is False
    assert CRUSH.combine([other], fail_closed=True)["decision"] == "deny"


@pytest.mark.parametrize(
    ("stdout", "decision", "rest"),
    [
        ({"decision": "deny", "reason": "r"}, "deny", {"reason": "r"}),
        ({"Decision": "ALLOW"}, "allow", {}),  # Go matches names and decisions without case
        ({"decision": "ask"}, None, {}),
        ({"decision": "deny", "halt": "yes"}, None, {"reason": ""}),  # wrong type: nothing
        ({"version": 1.5, "decision": "deny"}, None, {}),
        ({"context": ["a", "", "b"]}, None, {"context": "a\nb"}),
        ({"context": [1]}, None, {"context": ""}),
        ({"updated_input": '{"command":"ls -l"}'}, None, {"updated_input": {"command": "ls -l"}}),
        ({"updated_input": [1]}, None, {"updated_input": None}),
        (
            {
                "hookSpecificOutput": {
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no",
                }
            },
            "deny",
            {"reason": "no"},
        ),
        ({"hookSpecificOutput": {"permissionDecision": "ask"}, "decision": "deny"}, None, {}),
        (b"not json", None, {}),
        (b"[1]", None, {}),
    ],
)
def test_the_envelope_is_read_as_go_reads_it(stdout: Any, decision: Any, rest: Any) -> None:
    body = stdout if isinstance(stdout, bytes) else json.dumps(stdout).encode()
    read = read_answer(body)
    assert read["decision"] == decision
    for key, value in rest.items():
        assert read.get(key) == value


def test_a_repositorys_allow_and_rewrite_are_dropped_its_deny_and_halt_kept() -> None:
    out = outcome({"decision": "allow", "updated_input": {"command": "curl x|sh"},
                   "context": "c"}, source="project")  # fmt: skip
    assert out.answer["decision"] is None and out.answer["updated_input"] is None
    assert out.answer["context"] == "c" and "ignored (untrusted" in (out.error or "")
    compat = outcome({"hookSpecificOutput": {"permissionDecision": "allow",
                                             "updatedInput": {"command": "x"}}}, "project")  # fmt: skip
    assert compat.answer["decision"] is None and compat.answer["updated_input"] is None
    halt = outcome({"decision": "deny", "halt": True, "reason": "stop"}, source="project")
    assert halt.answer["halt"] is True and halt.answer["decision"] == "deny"


def test_answers_combine_as_crushs_aggregate() -> None:
    a = outcome({"decision": "allow", "context": "one", "updated_input": {"a": 1, "b": 1}})
    b = outcome({"halt": True, "reason": "why", "updated_input": {"b": 2}})
    c = outcome(b"", code=2, stderr=b"no")
    both = CRUSH.combine([a, b], fail_closed=False)
    assert both["decision"] == "allow" and both["halt"] is True and both["blocked"] is True
    assert both["reason"] == "why" and both["context"] == "one"
    assert both["updated_input"] == {"a": 1, "b": 2}
    denied = CRUSH.combine([a, c, b], fail_closed=False)
    assert denied["decision"] == "deny" and denied["reason"] == "no\nwhy"


# -- exec and untrusted stdout -----------------------------------------------------------


def _exec(ws: Path, stdin: bytes, handler: Any, fail_closed: bool = False,
          untrusted: bool = False) -> Any:  # fmt: skip
    settings = Settings.load(agent="crush", fail_closed=fail_closed)
    request = exec_request(settings, ["./g.sh"], stdin, None, cwd=str(ws))
    return request, run_exec(settings, FakeBackend(handler), request, {}, untrusted=untrusted)


def _raise(request: ExecRequest) -> ExecResult:
    raise EngineError("image sandboxrun-hook not found")


@pytest.mark.parametrize(
    "handler",
    [_raise, lambda r: ExecResult(None, b"", b"", 1, timed_out=True)],
    ids=["missing-image", "timeout"],
)
@pytest.mark.parametrize("fail_closed", [False, True])
def test_our_failures_are_crushs_no_opinion_or_under_fail_closed_a_deny(
    ws: Path, home: Path, handler: Any, fail_closed: bool
) -> None:
    _, out = _exec(ws, json.dumps(event(ws)).encode(), handler, fail_closed)
    assert (out.stdout, out.exit_code) == (b"", 2 if fail_closed else 1)
    assert out.stderr.startswith(b"sandboxrun")


def test_exec_runs_in_bash_with_crushs_variables(ws: Path, home: Path) -> None:
    request, out = _exec(ws, json.dumps(event(ws)).encode(), answer(b"", code=49, stderr=b"h"))
    assert request.argv == ("bash", "-c", "./g.sh") and out.exit_code == 49
    assert request.env["CRUSH_PROJECT_DIR"] == str(ws)
    assert request.env["CRUSH_TOOL_INPUT_COMMAND"] == "ls"


def test_exec_untrusted_drops_allow_and_rewrite_byte_for_byte_otherwise(
    ws: Path, home: Path
) -> None:
    body = b'{"decision":"allow","updated_input":{"command":"x"},"reason":"r"}'
    stdin = json.dumps(event(ws)).encode()
    _, out = _exec(ws, stdin, answer(body))
    assert out.stdout == body
    _, out = _exec(ws, stdin, answer(body), untrusted=True)
    assert json.loads(out.stdout) == {"reason": "r"} and b"ignored (untrusted" in out.stderr
    deny = b'{"decision":"deny","halt":true}'
    _, out = _exec(ws, stdin, answer(deny), untrusted=True)
    assert out.stdout == deny


@pytest.mark.parametrize(
    "body",
    [
        b'{"DECISION":"Allow"}',
        b'{"decision":"deny","Decision":"allow"}',  # Go: the later spelling wins
        b'{"Updated_Input":{"command":"x"}}',
        b'{"hookSpecificOutput":{"PermissionDecision":"allow","UPDATEDINPUT":{"a":1}}}',
        b'{"decision":"allow",',  # looks like JSON: Crush's parser might differ: dropped
    ],
)
def test_hostile_spellings_of_allow_and_rewrite_are_dropped(body: bytes) -> None:
    kept, note = untrusted_stdout(body)
    assert note is not None
    read = read_answer(kept)
    assert read["decision"] != "allow" and read.get("updated_input") is None


def test_check_reads_crushs_event_field() -> None:
    from sandboxrun._check.events import parse_line

    line = parse_line(1, b'{"event": "PreToolUse", "tool_name": "bash"}', CRUSH)
    assert (line.hook_name, line.problem) == ("PreToolUse", None)
