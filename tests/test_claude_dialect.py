"""The Claude/Qoder dialect end to end over a FakeBackend (discover -> match -> run ->
combine), plus its matchers, event workspaces and the hook's stdin."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import (
    CombinedResult,
    ExecRequest,
    ExecResult,
    FakeBackend,
    HookFactory,
    HookSpec,
    NoOpHookRunner,
    Settings,
)
from sandboxrun._dialects.claude.dialect import CLAUDE, MATCH_FIELDS, QODER, QODER_CN

Answer = ExecResult | Callable[[ExecRequest], ExecResult]


def result(
    doc: Any = None, *, exit_code: int | None = 0, stderr: bytes = b"", **kw: Any
) -> ExecResult:
    """An ExecResult whose stdout is `doc` as JSON (str/bytes as is, None as nothing)."""
    if doc is None:
        stdout = b""
    elif isinstance(doc, bytes):
        stdout = doc
    elif isinstance(doc, str):
        stdout = doc.encode()
    else:
        stdout = json.dumps(doc).encode()
    return ExecResult(exit_code, stdout, stderr, 5, **kw)


def backend(
    answers: Mapping[str, Answer] | None = None, default: Answer | None = None
) -> FakeBackend:
    """A FakeBackend answering by the hook's command string; others fail the test."""
    table = dict(answers or {})

    def handler(request: ExecRequest) -> ExecResult:
        answer = table.get(request.argv[-1], default)
        if answer is None:
            raise AssertionError(f"unexpected hook run: {request.argv}")
        return answer if isinstance(answer, ExecResult) else answer(request)

    return FakeBackend(handler)


def hooks_doc(event: str, *entries: tuple[str | None, list[str]], **hook: Any) -> dict[str, Any]:
    """Settings whose `event` has one matcher entry per (matcher, [commands])."""
    out = []
    for matcher, commands in entries:
        entry: dict[str, Any] = {
            "hooks": [{"type": "command", "command": c, **hook} for c in commands]
        }
        if matcher is not None:
            entry["matcher"] = matcher
        out.append(entry)
    return {"hooks": {event: out}}


def write(path: Path, doc: Any) -> Path:
    """Write `doc` as JSON (or a str as is), creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The project root."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def claude(home: Path) -> Settings:
    """Settings for the claude agent, built in the isolated environment of `home`."""
    return Settings.load(agent="claude")


def flow(
    settings: Settings, fake: FakeBackend, home: Path, event: str, payload: dict[str, Any]
) -> CombinedResult:
    """Discover, match, run and combine one event with a fake HOME."""
    return HookFactory(settings, fake, home=str(home)).run(event, payload)


def bash(ws: Path, command: str = "rm -rf /") -> dict[str, Any]:
    """A PreToolUse event for the Bash tool in `ws`."""
    return {
        "session_id": "s1",
        "cwd": str(ws),
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "t1",
    }


def deny(reason: str) -> dict[str, Any]:
    """A PreToolUse JSON deny."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def allow(reason: str = "") -> dict[str, Any]:
    """A PreToolUse JSON allow."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": reason,
        }
    }


# -- whole flow --------------------------------------------------------------------------


def test_exit_2_blocks_with_stderr(home, claude, ws) -> None:
    """A project hook exiting 2 blocks the tool, its stderr being the reason."""
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", ("Bash", ["./guard.sh"])))
    fake = backend({"./guard.sh": result(exit_code=2, stderr=b"rm -rf is not allowed\n")})
    doc = flow(claude, fake, home, "PreToolUse", bash(ws)).to_json()
    assert list(doc) == [
        "blocked",
        "permissionDecision",
        "reason",
        "additionalContext",
        "systemMessage",
        "continue",
        "stopReason",
        "updatedInput",
        "hooks",
    ]
    assert (doc["blocked"], doc["permissionDecision"], doc["reason"]) == (
        True,
        "deny",
        "rm -rf is not allowed",
    )
    [report] = doc["hooks"]
    assert (report["name"], report["source"], report["status"], report["exitCode"]) == (
        "./guard.sh",
        "project",
        "completed",
        2,
    )
    assert report["stderr"] == "rm -rf is not allowed\n"


def test_exit_1_does_not_block(home, claude, ws) -> None:
    """A hook exiting 1 is a reported failure; the tool goes ahead."""
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["./guard.sh"])))
    fake = backend({"./guard.sh": result(exit_code=1, stderr=b"jq: not found\n")})
    res = flow(claude, fake, home, "PreToolUse", bash(ws))
    assert res.answer["blocked"] is False
    [outcome] = res.outcomes
    assert outcome.status == "failed"
    # The hook's own words first, then what the sandbox stopped (`_sandbox.hints`).
    assert outcome.error.startswith("jq: not found; ") and "not in the sandbox" in outcome.error


def test_missing_command_is_non_blocking(home, claude, ws) -> None:
    """A command sh cannot find (exit 127) does not block."""
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["./missing.sh"])))
    fake = backend(
        {"./missing.sh": result(exit_code=127, stderr=b"/bin/sh: 1: ./missing.sh: not found\n")}
    )
    res = flow(claude, fake, home, "PreToolUse", bash(ws))
    assert res.answer["blocked"] is False
    assert res.outcomes[0].status == "failed"


def test_strictest_wins_and_every_hook_runs(home, claude, ws) -> None:
    """Every matching hook runs even when one denies; deny beats ask beats allow."""
    write(home / ".claude/settings.json", hooks_doc("PreToolUse", ("*", ["allow.sh"])))
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", ("Bash", ["deny.sh", "ask.sh"])))
    write(ws / ".claude/settings.local.json", hooks_doc("PreToolUse", (None, ["ctx.sh"])))
    ask = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
    ctx = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "noted"}}
    fake = backend(
        {
            "allow.sh": result(allow("ok")),
            "deny.sh": result(deny("dangerous")),
            "ask.sh": result(ask),
            "ctx.sh": result(ctx),
        }
    )
    res = flow(claude, fake, home, "PreToolUse", bash(ws))
    assert sorted(r.argv[-1] for r in fake.requests) == ["allow.sh", "ask.sh", "ctx.sh", "deny.sh"]
    assert [o.spec.name for o in res.outcomes] == ["allow.sh", "deny.sh", "ask.sh", "ctx.sh"]
    assert res.answer["permissionDecision"] == "deny"
    assert res.answer["reason"] == "dangerous"
    assert res.answer["additionalContext"] == "noted"
    assert res.answer["blocked"] is True


def test_exit_2_beats_another_hooks_allow(home, claude, ws) -> None:
    """One hook's exit 2 denies although another hook's JSON allows."""
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["a.sh", "b.sh"])))
    fake = backend(
        {"a.sh": result(allow("fine")), "b.sh": result(allow("ignored"), exit_code=2, stderr=b"no")}
    )
    res = flow(claude, fake, home, "PreToolUse", bash(ws))
    assert (res.answer["permissionDecision"], res.answer["reason"]) == ("deny", "no")


def test_matcher_selects_the_hooks_that_run(home, claude, ws) -> None:
    """Only hooks whose matcher matches the tool run; the others are never started."""
    write(
        ws / ".claude/settings.json",
        hooks_doc(
            "PreToolUse",
            ("Bash", ["bash.sh"]),
            ("Edit.*", ["edit.sh"]),
            ("Read|Glob", ["read.sh"]),
            ("", ["all.sh"]),
        ),
    )
    fake = backend(default=result())
    flow(claude, fake, home, "PreToolUse", {**bash(ws), "tool_name": "NotebookEdit"})
    assert sorted(r.argv[-1] for r in fake.requests) == ["all.sh", "edit.sh"]


def test_no_matching_hook_is_a_noop(home, claude, ws) -> None:
    """With no matching hook nothing runs and nothing is blocked."""
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", ("Write", ["w.sh"])))
    fake = backend()
    factory = HookFactory(claude, fake, home=str(home))
    assert isinstance(factory.create("PreToolUse", [str(ws)], bash(ws)), NoOpHookRunner)
    doc = factory.run("PreToolUse", bash(ws)).to_json()
    assert doc["blocked"] is False and doc["hooks"] == []
    assert fake.requests == []


def test_request_fields(home, claude, ws) -> None:
    """argv, stdin, workdir, mounts, env (the project-dir variable) and timeout reach the backend."""
    (home / ".claude/hooks").mkdir(parents=True)
    user_hook = f"{home}/.claude/hooks/u.sh"
    write(home / ".claude/settings.json", hooks_doc("PreToolUse", (None, [user_hook]), timeout=5))
    write(
        ws / ".claude/settings.json",
        hooks_doc("PreToolUse", (None, ['"$CLAUDE_PROJECT_DIR"/p.sh'])),
    )
    fake = backend(default=result())
    event = bash(ws)
    flow(claude, fake, home, "PreToolUse", event)
    by_command = {r.argv[-1]: r for r in fake.requests}
    user, project = by_command[user_hook], by_command['"$CLAUDE_PROJECT_DIR"/p.sh']
    assert user.argv == ("/bin/sh", "-c", user_hook)
    assert project.argv == ("/bin/sh", "-c", '"$CLAUDE_PROJECT_DIR"/p.sh')
    assert user.timeout == 5.0 and project.timeout == 600.0  # current Claude Code
    assert user.mounts == (str(ws), str(home / ".claude/hooks"))
    assert project.mounts == (str(ws),)
    for req in (user, project):
        assert req.workdir == str(ws)
        # (and what Claude Code sets from the event: tests/test_claude_vars.py)
        assert dict(req.env) == {"CLAUDE_PROJECT_DIR": str(ws), **CLAUDE.event_env(event, "")}
        assert req.stdin == CLAUDE.prepare_input("PreToolUse", event, [str(ws)])
        assert json.loads(req.stdin)["hook_event_name"] == "PreToolUse"


def test_settings_timeout_applies_when_the_hook_has_none(home, ws) -> None:
    """--timeout is used for hooks without their own; a hook's own timeout still wins."""
    write(
        ws / ".claude/settings.json",
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "hooks": [
                            {"type": "command", "command": "a"},
                            {"type": "command", "command": "b", "timeout": 2},
                        ]
                    }
                ]
            }
        },
    )
    fake = backend(default=result())
    flow(Settings.load(agent="claude", timeout=9), fake, home, "PreToolUse", bash(ws))
    assert sorted((r.argv[-1], r.timeout) for r in fake.requests) == [("a", 9.0), ("b", 2.0)]


def test_duplicate_across_levels_runs_once_per_source(home, claude, ws) -> None:
    """The same command in user and project settings runs once for each: trust differs."""
    write(home / ".claude/settings.json", hooks_doc("PreToolUse", ("Bash", ["./same.sh"])))
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", ("Bash", ["./same.sh"])))
    fake = backend({"./same.sh": result()})
    res = flow(claude, fake, home, "PreToolUse", bash(ws))
    assert len(fake.requests) == 2
    assert [o.spec.source for o in res.outcomes] == ["user", "project"]


def test_disable_all_hooks_runs_nothing(home, claude, ws) -> None:
    """disableAllHooks in the user's settings runs no hook of any level."""
    write(
        home / ".claude/settings.json",
        {**hooks_doc("PreToolUse", (None, ["u.sh"])), "disableAllHooks": True},
    )
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["p.sh"])))
    fake = backend()
    assert flow(claude, fake, home, "PreToolUse", bash(ws)).outcomes == ()
    assert fake.requests == []


def test_invalid_settings_file_does_not_stop_the_others(home, claude, ws) -> None:
    """A broken project settings file is skipped; the user and local hooks still run."""
    write(home / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["u.sh"])))
    write(ws / ".claude/settings.json", "{not json")
    write(ws / ".claude/settings.local.json", hooks_doc("PreToolUse", (None, ["l.sh"])))
    fake = backend(default=result())
    res = flow(claude, fake, home, "PreToolUse", bash(ws))
    assert [o.spec.name for o in res.outcomes] == ["u.sh", "l.sh"]


def test_stop_blocking(home, claude, ws) -> None:
    """A Stop hook's decision block keeps the agent working, with the reason as instruction."""
    write(ws / ".claude/settings.json", hooks_doc("Stop", ("ignored|matcher", ["tests.sh"])))
    fake = backend({"tests.sh": result({"decision": "block", "reason": "3 tests fail"})})
    event = {"session_id": "s", "cwd": str(ws), "stop_hook_active": False}
    res = flow(claude, fake, home, "Stop", event)
    assert (res.answer["blocked"], res.answer["reason"]) == (True, "3 tests fail")
    assert res.answer["permissionDecision"] is None


def test_continue_false_beats_allow(home, claude, ws) -> None:
    """One hook's continue:false stops the agent although the other allows."""
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["a", "b"])))
    fake = backend(
        {"a": result(allow()), "b": result({"continue": False, "stopReason": "quota exceeded"})}
    )
    answer = flow(claude, fake, home, "PreToolUse", bash(ws)).answer
    assert (answer["blocked"], answer["continue"], answer["stopReason"]) == (
        True,
        False,
        "quota exceeded",
    )


def test_user_prompt_submit_plain_text_context(home, claude, ws) -> None:
    """UserPromptSubmit hooks ignore matchers and their plain stdout becomes context."""
    write(ws / ".claude/settings.json", hooks_doc("UserPromptSubmit", ("Nothing", ["date.sh"])))
    fake = backend({"date.sh": result("Today is Monday\n")})
    answer = flow(claude, fake, home, "UserPromptSubmit", {"cwd": str(ws), "prompt": "hi"}).answer
    assert (answer["additionalContext"], answer["blocked"]) == ("Today is Monday", False)


def test_session_start_matches_source(home, claude, ws) -> None:
    """SessionStart hooks match on `source`, and plain stdout is context."""
    write(
        ws / ".claude/settings.json",
        hooks_doc("SessionStart", ("startup", ["fresh.sh"]), ("resume|compact", ["again.sh"])),
    )
    fake = backend({"fresh.sh": result("fresh"), "again.sh": result("again")})
    event = {"cwd": str(ws), "source": "resume"}
    assert flow(claude, fake, home, "SessionStart", event).answer["additionalContext"] == "again"
    assert [r.argv[-1] for r in fake.requests] == ["again.sh"]


def test_fail_closed_through_the_factory(home, ws) -> None:
    """With fail_closed, a timed-out guard denies the tool, naming the hook."""
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["slow.sh"])))
    fake = backend({"slow.sh": result(exit_code=None, timed_out=True)})
    settings = Settings.load(agent="claude", fail_closed=True, timeout=60)
    answer = flow(settings, fake, home, "PreToolUse", bash(ws)).answer
    assert (answer["blocked"], answer["permissionDecision"]) == (True, "deny")
    assert answer["reason"] == (
        "sandboxrun: hook slow.sh timed_out: PreToolUse hook timed out after 60s and was killed"
    )


def test_fail_open_by_default(home, claude, ws) -> None:
    """By default a timed-out guard neither blocks nor decides."""
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["slow.sh"])))
    fake = backend({"slow.sh": result(exit_code=None, timed_out=True)})
    answer = flow(claude, fake, home, "PreToolUse", bash(ws)).answer
    assert (answer["blocked"], answer["permissionDecision"]) == (False, None)


@pytest.mark.parametrize(
    ("agent", "user_dir", "project_dir", "var"),
    [
        ("qoder", ".qoder", ".qoder", "QODER_PROJECT_DIR"),
        ("qoder-cn", ".qoder-cn", ".qoder", "QODERCN_PROJECT_DIR"),
    ],
)
def test_qoder_agents_through_the_factory(home, ws, agent, user_dir, project_dir, var) -> None:
    """Qoder and Qoder CN read their own folders and give hooks their own variable."""
    write(home / user_dir / "settings.json", hooks_doc("PreToolUse", (None, ["u.sh"])))
    write(ws / project_dir / "settings.json", hooks_doc("PreToolUse", (None, ["p.sh"])))
    write(ws / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["claude.sh"])))
    fake = backend(default=result())
    res = flow(Settings.load(agent=agent), fake, home, "PreToolUse", bash(ws))
    assert [(o.spec.name, o.spec.source) for o in res.outcomes] == [
        ("u.sh", "user"),
        ("p.sh", "project"),
    ]
    assert all(dict(r.env) == {var: str(ws)} for r in fake.requests)


def test_event_cwd_drives_discovery(home, claude, tmp_path) -> None:
    """Without --workspace the event's cwd is the project whose settings are read."""
    other = tmp_path / "other"
    write(other / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["o.sh"])))
    fake = backend({"o.sh": result()})
    flow(claude, fake, home, "PreToolUse", bash(other))
    assert [r.workdir for r in fake.requests] == [str(other)]


def test_given_workspace_overrides_the_event_cwd(home, claude, ws, tmp_path) -> None:
    """An explicit workspace wins over the event's cwd, and the hook sees it as cwd."""
    other = tmp_path / "other"
    write(other / ".claude/settings.json", hooks_doc("PreToolUse", (None, ["o.sh"])))
    fake = backend({"o.sh": result()})
    HookFactory(claude, fake, home=str(home)).run("PreToolUse", bash(ws), [str(other)])
    [req] = fake.requests
    assert json.loads(req.stdin)["cwd"] == str(other)
    assert dict(req.env) == {"CLAUDE_PROJECT_DIR": str(other), **CLAUDE.event_env(bash(ws), "")}


# -- matchers -----------------------------------------------------------------------------


def spec(event: str = "PreToolUse", matcher: str | None = None) -> HookSpec:
    """A hook for `event` with `matcher`."""
    return HookSpec(event, "h", "project", ("/bin/sh", "-c", "h"), "/", (), matcher=matcher)


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        ("Bash", "Bash", True),
        ("Bash", "bash", False),  # case-sensitive
        ("Bash", "BashOutput", False),  # exact, not a prefix
        ("Edit|Write", "Write", True),
        ("Edit|Write", "MultiEdit", False),  # a `|` list is exact names too
        ("Edit.*", "NotebookEdit", True),  # a regex is unanchored
        ("Edit.*", "Edit", True),
        ("^Edit", "NotebookEdit", False),
        ("mcp__memory__.*", "mcp__memory__create_entities", True),
        ("mcp__memory__.*", "mcp__github__search", False),
        ("Notebook.*|Bash", "Bash", True),
        ("[Bb]ash", "bash", True),
        ("*", "Anything", True),
        ("", "Anything", True),
        (None, "Anything", True),
    ],
)
def test_matcher_table(matcher: str | None, tool: str, expected: bool) -> None:
    """Exact names, `|` lists of exact names, unanchored case-sensitive regexes, match-all forms."""
    assert CLAUDE.matches(spec(matcher=matcher), {"tool_name": tool}) is expected


@pytest.mark.parametrize(("event", "field"), sorted(MATCH_FIELDS.items()))
def test_matched_field_per_event(event: str, field: str) -> None:
    """Each event's matcher is tested against its own field, and only that one."""
    hook = spec(event, "wanted")
    assert CLAUDE.matches(hook, {field: "wanted"})
    assert not CLAUDE.matches(hook, {field: "other"})
    others = {
        f: "wanted"
        for f in ("tool_name", "source", "reason", "notification_type", "trigger", "agent_type")
        if f != field
    }
    assert not CLAUDE.matches(hook, {field: "other", **others})


def test_matched_fields_are_the_references() -> None:
    """Tool events match tool_name; the others their documented field."""
    assert MATCH_FIELDS == {
        "PreToolUse": "tool_name",
        "PostToolUse": "tool_name",
        "PostToolUseFailure": "tool_name",
        "PermissionRequest": "tool_name",
        "SessionStart": "source",
        "SessionEnd": "reason",
        "Notification": "notification_type",
        "PreCompact": "trigger",
        "SubagentStart": "agent_type",
        "SubagentStop": "agent_type",
        "PermissionDenied": "tool_name",
        "Setup": "trigger",
        "PostCompact": "trigger",
        "UserPromptExpansion": "command_name",
    }


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop"])
@pytest.mark.parametrize("matcher", ["Bash", "x.*", "("])
def test_prompt_and_stop_ignore_matchers(event: str, matcher: str) -> None:
    """UserPromptSubmit and Stop hooks always run, whatever their matcher."""
    assert CLAUDE.matches(spec(event, matcher), {"tool_name": "Read", "prompt": "x"})


@pytest.mark.parametrize("value", [None, 5, ["Bash"]])
def test_missing_field_matches_only_match_all(value: object) -> None:
    """An event without the matched field (or a non-string) matches only match-all matchers."""
    event = {} if value is None else {"tool_name": value}
    assert not CLAUDE.matches(spec(matcher="Bash"), event)
    assert CLAUDE.matches(spec(matcher="*"), event)


# -- event workspaces and input ---------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "roots"),
    [
        ({"cwd": "/p"}, ["/p"]),
        ({"cwd": ""}, []),
        ({"cwd": 3}, []),
        ({}, []),
        ({"workspaceRoots": ["/w"]}, []),
    ],
)
def test_event_workspaces(event: dict[str, Any], roots: list[str]) -> None:
    """The event's workspace is its cwd when that is a non-empty string."""
    assert CLAUDE.event_workspaces(event) == roots


def test_prepare_input_fills_the_base_fields() -> None:
    """Missing base fields are filled: session_id "", cwd the project, hook_event_name the hook."""
    raw = CLAUDE.prepare_input(
        "PreToolUse", {"tool_name": "Bash", "tool_input": {"a": "é"}}, ["/p", "/q"]
    )
    assert (
        raw
        == (
            '{"session_id":"","cwd":"/p","hook_event_name":"PreToolUse",'
            '"tool_name":"Bash","tool_input":{"a":"é"}}'
        ).encode()
    )


def test_prepare_input_keeps_given_fields() -> None:
    """session_id and transcript_path are kept as given; base fields come first."""
    event = {
        "tool_name": "Bash",
        "transcript_path": "/t.jsonl",
        "session_id": "abc",
        "permission_mode": "default",
    }
    doc = json.loads(CLAUDE.prepare_input("PreToolUse", event, ["/p"]))
    assert list(doc) == [
        "session_id",
        "transcript_path",
        "cwd",
        "hook_event_name",
        "tool_name",
        "permission_mode",
    ]
    assert (doc["session_id"], doc["transcript_path"]) == ("abc", "/t.jsonl")


def test_prepare_input_states_the_hook_and_real_cwd() -> None:
    """hook_event_name is the hook being run and cwd the root it runs in, whatever the event said."""
    event = {"hook_event_name": "PostToolUse", "cwd": "/elsewhere"}
    doc = json.loads(QODER.prepare_input("PreToolUse", event, ["/p"]))
    assert (doc["hook_event_name"], doc["cwd"]) == ("PreToolUse", "/p")


def test_variants_differ_only_in_data() -> None:
    """Qoder and Qoder CN are ClaudeDialect instances with other folders and variable."""
    assert type(QODER) is type(QODER_CN) is type(CLAUDE)
    assert (QODER.hook_names, QODER.default_timeout) == (QODER_CN.hook_names, 60.0)
    assert set(QODER.hook_names) < set(CLAUDE.hook_names)
