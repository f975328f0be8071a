"""Current Claude Code: `args`, `if`, `async`, `once`, other handler types, new events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import HookFactory, Settings
from sandboxrun._dialects.claude.dialect import CLAUDE, QODER
from sandboxrun._dialects.claude.matchers import MAX_WORKSPACE_PATTERN, condition_matches
from sandboxrun._errors import PatternError
from sandboxrun._types import ExecRequest, ExecResult, HookSpec

from .conftest import FakeBackend


def write(
    ws: Path, *handlers: dict[str, Any], event: str = "PreToolUse", matcher: str | None = "Bash"
) -> None:
    """The project settings with one entry of `handlers` for `event`."""
    entry: dict[str, Any] = {"hooks": list(handlers)}
    if matcher is not None:
        entry["matcher"] = matcher
    path = ws / ".claude/settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": {event: [entry]}}))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A project root."""
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def cmd(command: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **extra}


def discover(ws: Path, home: Path, agent: Any = CLAUDE) -> Any:
    return agent.discover(None, [str(ws)], str(home))


def spec(condition: str, source: str = "user", event: str = "PreToolUse") -> HookSpec:
    return HookSpec(event, "h", source, ("x",), "/", (), condition=condition)


def bash(command: str, tool: str = "Bash") -> dict[str, Any]:
    return {"tool_name": tool, "tool_input": {"command": command}, "cwd": "/w"}


# -- args ------------------------------------------------------------------------------


def test_args_is_an_argv_without_a_shell(ws, home) -> None:
    """`command` + `args` run as argv: spaces and `$HOME` stay literal, no `sh -c`."""
    write(ws, cmd("/w/guard.py", args=["a b", "$HOME"]))
    [hook] = discover(ws, home).hooks
    assert hook.argv == ("/w/guard.py", "a b", "$HOME")
    assert hook.name == "/w/guard.py 'a b' '$HOME'"


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ("x", "args must be a list of strings"),
        ([1], "args must be a list of strings"),
        (["a\0b"], "no NUL"),
        (["\ud800"], "no lone surrogate"),
    ],
)
def test_bad_args_are_skipped_with_the_reason(ws, home, args: Any, why: str) -> None:
    """args that cannot be an argv are reported, never run."""
    write(ws, cmd("g.sh", args=args))
    found = discover(ws, home)
    assert found.hooks == ()
    assert why in found.skipped[0].reason


def test_shell_bash_and_powershell(ws, home) -> None:
    """`shell: "bash"` runs with bash -c; powershell is listed as not run."""
    write(ws, cmd("echo a", shell="bash"), cmd("Write-Host", shell="powershell"))
    found = discover(ws, home)
    assert [h.argv for h in found.hooks] == [("bash", "-c", "echo a")]
    assert "PowerShell" in found.skipped[0].reason


def test_the_same_string_as_shell_and_as_args_are_two_hooks(ws, home) -> None:
    """A shell command and an argv that print alike are not merged as one command."""
    write(ws, cmd("g.sh 'a b'"), cmd("g.sh", args=["a b"]))
    assert len(discover(ws, home).hooks) == 2


# -- other handler types --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["http", "prompt", "agent", "mcp_tool"])
def test_other_handler_types_are_listed_as_not_run(ws, home, kind: str) -> None:
    """http/prompt/agent/mcp_tool are Skipped with the reason and their spec, never hooks."""
    write(ws, {"type": kind, "url": "http://x", "prompt": "p"}, cmd("g.sh"))
    found = discover(ws, home)
    assert [h.name for h in found.hooks] == ["g.sh"]
    [skip] = found.skipped
    assert skip.reason.startswith("hooks.PreToolUse[0].hooks[0]: not run:")
    assert "only command hooks" in skip.reason
    assert skip.spec is not None and skip.spec.kind == kind and skip.spec.argv == ()


def test_run_reports_not_run_handlers_that_match_the_event(ws, home) -> None:
    """`run` lists a matching http handler under notRun while the command hook runs."""
    write(ws, {"type": "http", "url": "http://127.0.0.1:9/h"}, cmd("g.sh"))
    fake = FakeBackend(lambda r: ExecResult(exit_code=0, stdout=b"", stderr=b"", duration_ms=1))
    result = HookFactory(Settings.load(agent="claude"), fake, home=str(home)).run(
        "PreToolUse", {**bash("ls"), "cwd": str(ws)}
    )
    doc = result.to_json()
    assert [h["name"] for h in doc["hooks"]] == ["g.sh"]
    assert doc["notRun"] == [
        {
            "name": "http: http://127.0.0.1:9/h",
            "source": "project",
            "reason": result.not_run[0].reason,
        }
    ]
    assert [r.argv for r in fake.requests] == [("/bin/sh", "-c", "g.sh")]


def test_not_run_handlers_of_another_tool_are_not_reported(ws, home) -> None:
    """An http handler whose matcher does not match the event is not in notRun."""
    write(ws, {"type": "http", "url": "http://x"}, matcher="Edit")
    fake = FakeBackend(_exit(0))
    result = HookFactory(Settings.load(agent="claude"), fake, home=str(home)).run(
        "PreToolUse", {**bash("ls"), "cwd": str(ws)}
    )
    assert "notRun" not in result.to_json()


# -- if ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("Bash(git *)", "git push --force", True),
        ("Bash(git *)", "git", True),
        ("Bash(git *)", "gitk", False),
        ("Bash(git *)", "ls && git push", True),
        ("Bash(git *)", "FOO=bar git push", True),
        ("Bash(git *)", "echo 'git push'", False),
        ("Bash(npm run test:*)", "npm run test:unit", True),
        ("Bash", "anything", True),
        ("Bash(*)", "anything", True),
        ("Edit", "anything", False),
        ("Bash(rm -rf *)", "rm -rf /", True),
    ],
)
def test_if_rules_on_bash(rule: str, command: str, expected: bool) -> None:
    """Bash rules glob the command and each subcommand without `VAR=x` prefixes."""
    assert condition_matches(spec(rule), bash(command)) is expected


@pytest.mark.parametrize(
    ("rule", "path", "expected"),
    [
        ("Edit(*.ts)", "/w/src/a.ts", True),
        ("Edit(*.ts)", "/w/a.py", False),
        ("Edit(src/**)", "/w/src/x/y.ts", True),
        ("Edit(./src/*)", "/w/src/a", True),
        ("Edit(src/*)", "/w/lib/a", False),
    ],
)
def test_if_rules_on_file_tools(rule: str, path: str, expected: bool) -> None:
    """File rules glob the path, the path relative to cwd and the file name."""
    event = {"tool_name": "Edit", "tool_input": {"file_path": path}, "cwd": "/w"}
    assert condition_matches(spec(rule), event) is expected


def test_if_on_a_tool_whose_content_is_unknown_runs() -> None:
    """Content sandboxrun cannot read for a tool makes the hook run (never lose a guard)."""
    event = {"tool_name": "mcp__x__y", "tool_input": {"q": 1}}
    assert condition_matches(spec("mcp__x__y(anything)"), event) is True


def test_if_on_a_non_tool_event_is_skipped_at_discovery(ws, home) -> None:
    """Claude Code never runs a hook with `if` outside tool events: listed as skipped."""
    write(ws, cmd("s.sh", **{"if": "Bash(git *)"}), event="Stop", matcher=None)
    found = discover(ws, home)
    assert found.hooks == ()
    assert "only on tool events" in found.skipped[0].reason


def test_a_long_workspace_if_is_an_error(ws, home) -> None:
    """A repository's `if` longer than the bound is kept, and cannot be evaluated: its
    hook's error (`PatternError`), never a guard dropped at discovery."""
    write(ws, cmd("g.sh", **{"if": "Bash(" + "a" * MAX_WORKSPACE_PATTERN + ")"}))
    [hook] = discover(ws, home).hooks
    with pytest.raises(PatternError, match="longer than"):
        condition_matches(hook, bash("ls"))


def test_a_catastrophic_workspace_if_does_not_match_in_time() -> None:
    """A workspace glob that backtracks is cut off by the budget: its hook's error; the
    same rule from the user's own settings matches."""
    rule = "Bash(" + "*a" * 40 + "b)"
    event = bash("a" * 5000)
    with pytest.raises(PatternError, match="search took over"):
        condition_matches(spec(rule, "project"), event)
    assert condition_matches(spec(rule, "user"), event) is True


def test_if_must_be_a_string(ws, home) -> None:
    """A non-string `if` is skipped with the reason."""
    write(ws, cmd("g.sh", **{"if": ["Bash"]}))
    assert "if must be a string" in discover(ws, home).skipped[0].reason


def test_if_is_applied_by_the_factory(ws, home) -> None:
    """Only the hook whose `if` matches the command runs."""
    write(ws, cmd("git.sh", **{"if": "Bash(git *)"}), cmd("rm.sh", **{"if": "Bash(rm *)"}))
    fake = FakeBackend(lambda r: ExecResult(exit_code=0, stdout=b"", stderr=b"", duration_ms=1))
    HookFactory(Settings.load(agent="claude"), fake, home=str(home)).run(
        "PreToolUse", {**bash("rm -rf /"), "cwd": str(ws)}
    )
    assert [r.argv[-1] for r in fake.requests] == ["rm.sh"]


# -- async and once -----------------------------------------------------------------------


def _exit(code: int, stderr: bytes = b"") -> Any:
    def run(request: ExecRequest) -> ExecResult:
        return ExecResult(exit_code=code, stdout=b"", stderr=stderr, duration_ms=1)

    return run


def test_an_async_hooks_block_decides_nothing(ws, home) -> None:
    """An async hook runs, but its exit 2 does not block (the agent does not wait)."""
    write(ws, cmd("log.sh", **{"async": True}))
    fake = FakeBackend(_exit(2, b"no"))
    result = HookFactory(Settings.load(agent="claude"), fake, home=str(home)).run(
        "PreToolUse", {**bash("ls"), "cwd": str(ws)}
    )
    assert result.answer["blocked"] is False and len(fake.requests) == 1
    assert "async hook" in (result.outcomes[0].error or "")


def test_an_async_hook_failing_does_not_block_under_fail_closed(ws, home) -> None:
    """fail-closed counts failures the agent waits for; an async hook's is not one."""
    write(ws, cmd("log.sh", **{"async": True}))
    settings = Settings.load(agent="claude", fail_closed=True)
    result = HookFactory(settings, FakeBackend(_exit(1)), home=str(home)).run(
        "PreToolUse", {**bash("ls"), "cwd": str(ws)}
    )
    assert result.answer["blocked"] is False


@pytest.mark.parametrize(("key", "value"), [("async", "yes"), ("once", 1)])
def test_async_and_once_must_be_booleans(ws, home, key: str, value: Any) -> None:
    """A non-boolean async/once is skipped with the reason."""
    write(ws, cmd("g.sh", **{key: value}))
    assert f"{key} must be true or false" in discover(ws, home).skipped[0].reason


def test_once_runs_every_time(ws, home) -> None:
    """sandboxrun has no session: a `once` hook runs at each event (flagged in the spec)."""
    write(ws, cmd("g.sh", once=True))
    fake = FakeBackend(_exit(0))
    factory = HookFactory(Settings.load(agent="claude"), fake, home=str(home))
    for _ in range(2):
        factory.run("PreToolUse", {**bash("ls"), "cwd": str(ws)})
    assert len(fake.requests) == 2
    assert discover(ws, home).hooks[0].once is True


# -- events and timeouts -------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        "PermissionDenied",
        "PostToolBatch",
        "StopFailure",
        "TaskCreated",
        "WorktreeCreate",
        "FileChanged",
    ],
)
def test_current_events_are_known_to_claude_only(ws, home, event: str) -> None:
    """Claude Code's newer events are found for claude; Qoder keeps the classic twelve."""
    write(ws, cmd("e.sh"), event=event, matcher=None)
    assert [h.hook_name for h in discover(ws, home).hooks] == [event]
    qoder = ws / ".qoder/settings.json"
    qoder.parent.mkdir()
    qoder.write_text((ws / ".claude/settings.json").read_text())
    assert "unknown event name" in discover(ws, home, QODER).skipped[0].reason


def test_claude_default_timeout_is_600_and_the_users_limit_caps_workspace_hooks(ws, home) -> None:
    """Without any timeout a hook gets 600 s; the user's `timeout` caps a workspace one."""
    write(ws, cmd("g.sh", timeout=900))
    fake = FakeBackend(_exit(0))
    HookFactory(Settings.load(agent="claude"), fake, home=str(home)).run(
        "PreToolUse", {**bash("ls"), "cwd": str(ws)}
    )
    HookFactory(Settings.load(agent="claude", timeout=30), fake, home=str(home)).run(
        "PreToolUse", {**bash("ls"), "cwd": str(ws)}
    )
    assert [r.timeout for r in fake.requests] == [600.0, 30.0]


def test_a_handler_that_cannot_run_blocks_under_fail_closed(ws, home) -> None:
    """An http (prompt, agent...) handler matching the event cannot be run by sandboxrun:
    reported in notRun always, and under fail-closed it blocks, naming itself."""
    entry = {"hooks": [{"type": "http", "url": "http://127.0.0.1:9/x"}]}
    (ws / ".claude").mkdir(exist_ok=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [entry]}}))
    backend = FakeBackend(lambda r: ExecResult(0, b"", b"", 1))
    for fail_closed, blocked in ((False, False), (True, True)):
        settings = Settings.load(agent="claude", fail_closed=fail_closed)
        result = HookFactory(settings, backend, home=str(home)).run("Stop", {"cwd": str(ws)})
        assert result.to_json()["notRun"], result.to_json()
        assert result.answer["blocked"] is blocked
        if blocked:
            assert "http" in result.answer["reason"]
