"""Cursor's hooks (`--agent cursor`): hooks.json levels, matchers, failClosed and
loop_limit, the permission answer combined strictest-first, repository hooks untrusted,
exec's own failures, the input cap. Protocol logic only (the fake backend); the real
engine runs public Cursor hooks in tests/engine/test_real_hooks_cursor.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import HookFactory, Settings
from sandboxrun._dialects.cursor import CURSOR, CursorDialect, untrusted_stdout
from sandboxrun._errors import ConfigError, EngineError
from sandboxrun._runner.exec import exec_request, run_exec
from sandboxrun._types import ExecRequest, ExecResult, HookOutcome, HookSpec

from .conftest import FakeBackend


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def write(path: Path, hooks: dict[str, list[dict[str, Any]]], version: Any = 1) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": version, "hooks": hooks}))


def dialect(tmp_path: Path) -> CursorDialect:
    """Cursor with its enterprise folder in tmp_path (the real one is /etc/cursor)."""
    return CursorDialect(enterprise_dir=str(tmp_path / "etc-cursor"))


def answer(stdout: Any = b"", code: int = 0, stderr: bytes = b"") -> Any:
    body = stdout if isinstance(stdout, bytes) else json.dumps(stdout).encode()
    return lambda request: ExecResult(code, body, stderr, 1)


def outcome(
    event: str, stdout: Any, source: str = "user", code: int = 0, **spec: Any
) -> HookOutcome:
    body = stdout if isinstance(stdout, bytes) else json.dumps(stdout).encode()
    hook = HookSpec(event, "h", source, ("x",), "/", (), **spec)
    return CURSOR.interpret(hook, ExecResult(code, body, b"why", 1), 30.0)


# -- discovery ---------------------------------------------------------------------------


def test_every_level_is_read_user_first_and_each_runs_where_cursor_runs_it(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    """Enterprise, user and project files all count (no dedup: the same command at two
    levels runs twice); user hooks start in ~/.cursor with only its hooks folder mounted."""
    d = dialect(tmp_path)
    entry = [{"command": "./hooks/g.sh"}]
    write(tmp_path / "etc-cursor" / "hooks.json", {"beforeShellExecution": entry})
    write(home / ".cursor" / "hooks.json", {"beforeShellExecution": entry})
    write(ws / ".cursor" / "hooks.json", {"beforeShellExecution": [{"command": ".cursor/g.sh"}]})
    (home / ".cursor" / "hooks").mkdir()
    found = d.discover(None, [str(ws)], str(home))
    assert [(h.source, h.workdir) for h in found.hooks] == [
        ("enterprise", str(tmp_path / "etc-cursor")),
        ("user", str(home / ".cursor")),
        ("project", str(ws)),
    ]
    user = found.hooks[1]
    assert str(home / ".cursor" / "hooks") in user.mounts
    assert str(home / ".cursor") not in user.mounts  # its credentials stay out
    assert user.env == {"CURSOR_PROJECT_DIR": str(ws), "CLAUDE_PROJECT_DIR": str(ws)}
    assert user.argv == ("/bin/sh", "-c", "./hooks/g.sh")


def test_bad_entries_are_named_and_good_ones_kept(tmp_path: Path, ws: Path, home: Path) -> None:
    write(
        ws / ".cursor" / "hooks.json",
        {
            "beforeShellExec": [{"command": "x"}],
            "beforeshellexecution": [{"command": "x"}],
            "stop": [{"command": "s", "loop_limit": -1}, {"command": "ok", "loop_limit": None}],
            "preToolUse": [
                {"command": "a", "timeout": "5"},
                {"command": "b", "failClosed": "yes"},
                {"command": "c", "matcher": "(("},
                {"type": "prompt", "prompt": "is this safe?"},
                {"command": "d", "timeout": 5, "failClosed": True, "matcher": "Shell"},
            ],
        },
        version=2,
    )
    found = dialect(tmp_path).discover(None, [str(ws)], str(home))
    reasons = [s.reason for s in found.skipped]
    assert "version is 2, not 1: read as version 1" in reasons
    assert any("beforeShellExec: unknown event name" in r for r in reasons)
    assert any("did you mean beforeShellExecution?" in r for r in reasons)
    assert any("loop_limit must be a whole number or null" in r for r in reasons)
    assert any("timeout must be a number of seconds" in r for r in reasons)
    assert any("failClosed must be true or false" in r for r in reasons)
    assert any("not run: a prompt hook" in r for r in reasons)
    [ok, c, d] = found.hooks  # c: a workspace's broken matcher is its error when used
    assert (ok.name, ok.loop_limit, c.matcher) == ("ok", None, "((")
    assert (d.timeout, d.fail_closed, d.matcher) == (5.0, True, "Shell")


def test_a_users_broken_matcher_runs_for_every_event(tmp_path: Path, ws: Path, home: Path) -> None:
    write(home / ".cursor" / "hooks.json", {"preToolUse": [{"command": "g", "matcher": "(("}]})
    [hook] = dialect(tmp_path).discover(None, [str(ws)], str(home)).hooks
    assert CURSOR.matches(hook, {"tool_name": "Read"})


@pytest.mark.parametrize(
    ("event", "matcher", "value", "runs"),
    [
        ("preToolUse", "Shell", {"tool_name": "Shell"}, True),
        ("preToolUse", "Write", {"tool_name": "TabWrite"}, True),  # a search: runs more
        ("preToolUse", "^Write$", {"tool_name": "TabWrite"}, False),
        ("preToolUse", "Shell", {"tool_name": "Read"}, False),
        ("beforeShellExecution", r"git\s+push", {"command": "git  push -f"}, True),
        ("beforeShellExecution", r"git\s+push", {"command": "ls"}, False),
        ("subagentStart", "explore", {"subagent_type": "explore"}, True),
        ("afterFileEdit", "nothing", {"file_path": "/x"}, True),  # not applied there
    ],
)
def test_matchers_search_the_events_own_field(
    event: str, matcher: str, value: dict[str, Any], runs: bool
) -> None:
    hook = HookSpec(event, "h", "project", ("x",), "/", (), matcher=matcher)
    assert CURSOR.matches(hook, value) is runs


def test_a_stop_hook_past_its_loop_limit_does_not_run() -> None:
    hook = HookSpec("stop", "h", "user", ("x",), "/", (), loop_limit=5)
    assert CURSOR.matches(hook, {"loop_count": 4})
    assert not CURSOR.matches(hook, {"loop_count": 5})
    unlimited = HookSpec("stop", "h", "user", ("x",), "/", (), loop_limit=None)
    assert CURSOR.matches(unlimited, {"loop_count": 500})


# -- answers ---------------------------------------------------------------------------


def test_the_strictest_permission_wins_with_the_deciders_messages() -> None:
    outcomes = [
        outcome("beforeShellExecution", {"permission": "allow", "user_message": "fine"}),
        outcome("beforeShellExecution", {"permission": "ask", "user_message": "sure?"}),
        outcome(
            "beforeShellExecution",
            {"permission": "deny", "userMessage": "no", "agentMessage": "try ls"},
        ),
    ]
    combined = CURSOR.combine(outcomes, False)
    assert combined["permission"] == "deny" and combined["blocked"] is True
    assert (combined["user_message"], combined["agent_message"]) == ("no", "try ls")
    ask = CURSOR.combine(outcomes[:2], False)
    assert (ask["permission"], ask["blocked"], ask["user_message"]) == ("ask", False, "sure?")


def test_exit_2_denies_and_other_exits_fail_open_unless_fail_closed() -> None:
    denied = outcome("beforeReadFile", b"", code=2)
    assert denied.answer["permission"] == "deny" and denied.answer["agent_message"] == "why"
    failed = outcome("beforeReadFile", b"", code=1)
    assert failed.status == "failed"
    assert CURSOR.combine([failed], False)["permission"] is None
    closed = outcome("beforeReadFile", b"", code=1, fail_closed=True)
    assert CURSOR.combine([closed], False)["permission"] == "deny"
    assert CURSOR.combine([failed], True)["permission"] == "deny"
    garbage = outcome("beforeShellExecution", b"not json", fail_closed=True)
    assert garbage.status == "failed"
    assert CURSOR.combine([garbage], False)["blocked"] is True
    stop = outcome("stop", b"", code=2)  # a no-op on stop
    assert stop.status == "completed" and CURSOR.combine([stop], False)["blocked"] is False


def test_event_specific_fields() -> None:
    follow = outcome("stop", {"followup_message": "run the tests"})
    assert CURSOR.combine([follow], False)["followup_message"] == "run the tests"
    prompt = outcome("beforeSubmitPrompt", {"continue": False, "user_message": "no secrets"})
    combined = CURSOR.combine([prompt], False)
    assert combined["continue"] is False and combined["blocked"] is True
    start = outcome("sessionStart", {"env": {"A": "1"}, "additional_context": "hi"})
    assert CURSOR.combine([start], False)["env"] == {"A": "1"}
    bad = outcome("beforeShellExecution", {"permission": "maybe"})
    assert bad.status == "failed" and "permission must be one of" in (bad.error or "")


def test_a_repository_hook_approves_nothing_and_hands_on_no_env() -> None:
    allow = outcome("beforeShellExecution", {"permission": "allow", "user_message": "ok"},
                    source="project")  # fmt: skip
    assert allow.answer["permission"] is None and "its allow" in (allow.error or "")
    start = outcome("sessionStart", {"env": {"PATH": "/repo/bin"}, "additional_context": "c"},
                    source="project")  # fmt: skip
    assert start.answer["env"] == {} and "env" in (start.error or "")
    assert start.answer["additional_context"] == "c"
    rewrite = outcome("preToolUse", {"permission": "deny", "updated_input": {"a": 1}},
                      source="project")  # fmt: skip
    assert rewrite.answer["permission"] == "deny" and rewrite.answer["updated_input"] is None
    trusted = CURSOR.interpret(
        HookSpec("beforeShellExecution", "h", "project", ("x",), "/", ()),
        ExecResult(0, b'{"permission":"allow"}', b"", 1), 30.0, trust_workspace=True,
    )  # fmt: skip
    assert trusted.answer["permission"] == "allow"


def test_untrusted_stdout_keeps_only_what_a_repository_may_say() -> None:
    out, note = untrusted_stdout(b'{"permission":"allow","env":{"A":"1"},"agent_message":"m"}')
    assert json.loads(out) == {"agent_message": "m"}
    assert note is not None and "its allow" in note and "env" in note
    same = b'{"permission":"deny","user_message":"no"}\n'
    assert untrusted_stdout(same) == (same, None)
    assert untrusted_stdout(b"plain text") == (b"plain text", None)
    assert untrusted_stdout(b"{broken")[0] == b""


# -- run: the whole path, with the fake backend -------------------------------------------


def test_run_gives_the_hook_cursors_event_and_variables(ws: Path, home: Path) -> None:
    write(ws / ".cursor" / "hooks.json", {"beforeShellExecution": [{"command": "g"}]})
    transcript = home / ".cursor" / "projects" / "p" / "agent-transcripts" / "t.txt"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("user: hi\n")
    fake = FakeBackend(answer({"permission": "deny", "user_message": "no"}))
    event = {"command": "rm -rf /", "cwd": str(ws), "workspace_roots": [str(ws)],
             "cursor_version": "2.1.0", "user_email": "a@b.c",
             "transcript_path": str(transcript)}  # fmt: skip
    result = HookFactory(Settings.load(agent="cursor"), fake, home=str(home)).run(
        "beforeShellExecution", event
    )
    assert result.answer["permission"] == "deny" and result.answer["blocked"] is True
    [request] = fake.requests
    sent = json.loads(request.stdin)
    assert sent["hook_event_name"] == "beforeShellExecution" and sent["command"] == "rm -rf /"
    assert request.env["CURSOR_PROJECT_DIR"] == str(ws) == request.env["CLAUDE_PROJECT_DIR"]
    assert request.env["CURSOR_VERSION"] == "2.1.0"
    assert request.env["CURSOR_TRANSCRIPT_PATH"] == str(transcript)
    assert str(transcript) in request.mounts


def test_a_file_over_the_input_cap_is_an_error_never_a_cut(ws: Path, home: Path) -> None:
    write(ws / ".cursor" / "hooks.json", {"beforeReadFile": [{"command": "scan"}]})
    fake = FakeBackend(answer({"permission": "allow"}))
    big = {"file_path": str(ws / "f"), "content": "x" * (CURSOR.max_input + 1),
           "workspace_roots": [str(ws)]}  # fmt: skip
    with pytest.raises(ConfigError, match="over the input cap"):
        HookFactory(Settings.load(agent="cursor"), fake, home=str(home)).run("beforeReadFile", big)
    closed = Settings.load(agent="cursor", fail_closed=True)
    result = HookFactory(closed, fake, home=str(home)).run("beforeReadFile", big)
    assert result.answer["blocked"] is True and result.answer["permission"] == "deny"
    assert fake.requests == []


# -- exec -------------------------------------------------------------------------------


def _exec(ws: Path, stdin: bytes, handler: Any, fail_closed: bool = False,
          untrusted: bool = False, cwd: Path | None = None) -> Any:  # fmt: skip
    settings = Settings.load(agent="cursor", fail_closed=fail_closed)
    request = exec_request(settings, ["hook"], stdin, None, cwd=str(cwd or ws))
    return request, run_exec(settings, FakeBackend(handler), request, {}, untrusted=untrusted)


def _raise(request: ExecRequest) -> ExecResult:
    raise EngineError("image sandboxrun-hook not found")


@pytest.mark.parametrize(
    ("handler", "why"),
    [
        (_raise, "could not run the hook"),
        (lambda r: ExecResult(None, b"", b"", 1, timed_out=True), "timed out"),
        (lambda r: ExecResult(137, b"", b"", 1, oom_killed=True), "out of memory"),
    ],
    ids=["missing-image", "timeout", "oom"],
)
@pytest.mark.parametrize("fail_closed", [False, True])
def test_our_failures_are_a_hook_failure_or_with_fail_closed_a_block(
    ws: Path, home: Path, handler: Any, why: str, fail_closed: bool
) -> None:
    """Exit 1: Cursor lets the action through, unless the user's entry is failClosed.
    Exit 2: Cursor's block. Never a word on stdout."""
    event = json.dumps({"command": "ls", "workspace_roots": [str(ws)]}).encode()
    _, out = _exec(ws, event, handler, fail_closed)
    assert (out.stdout, out.exit_code) == (b"", 2 if fail_closed else 1)
    assert why in out.stderr.decode()


def test_exec_passes_a_users_answer_byte_for_byte_and_strips_a_repositorys(
    ws: Path, home: Path
) -> None:
    body = b'{"permission":"allow","env":{"A":"1"}}'
    event = json.dumps({"hook_event_name": "sessionStart", "workspace_roots": [str(ws)]})
    _, out = _exec(ws, event.encode(), answer(body))
    assert (out.stdout, out.exit_code) == (body, 0)
    _, out = _exec(ws, event.encode(), answer(body), untrusted=True)
    assert out.stdout == b"{}\n" and b"its allow, env ignored" in out.stderr


def test_exec_of_a_user_hook_starts_in_cursors_folder(ws: Path, home: Path) -> None:
    """Cursor runs `./hooks/g.sh` from ~/.cursor: the event names the project."""
    (home / ".cursor" / "hooks").mkdir(parents=True)
    event = json.dumps({"workspace_roots": [str(ws)], "cursor_version": "2.1.0"}).encode()
    request, _ = _exec(ws, event, answer(b""), cwd=home / ".cursor")
    assert request.workdir == str(home / ".cursor")
    assert str(home / ".cursor" / "hooks") in request.mounts
    assert str(home / ".cursor") not in request.mounts
    assert request.env["CURSOR_PROJECT_DIR"] == str(ws)
    assert request.env["CURSOR_VERSION"] == "2.1.0"


def test_exec_refuses_an_event_over_the_input_cap(ws: Path, home: Path) -> None:
    big = json.dumps({"content": "x" * CURSOR.max_input, "workspace_roots": [str(ws)]})
    for fail_closed, code in ((False, 1), (True, 2)):
        _, out = _exec(ws, big.encode(), answer(b"{}"), fail_closed)
        assert out.exit_code == code and b"over the input cap" in out.stderr


def test_check_names_cursors_own_words_for_a_block() -> None:
    from sandboxrun._check.replay import reason_of

    assert reason_of({"blocked": True, "agent_message": "use ls", "user_message": "no"}) == "use ls"


def test_untrusted_stdout_reads_past_what_javascript_trims() -> None:
    out, note = untrusted_stdout('\ufeff {"permission":"allow"}'.encode())
    assert out == b"{}\n" and note is not None and "its allow" in note


def test_exec_mounts_the_root_the_hook_starts_in(tmp_path: Path, home: Path) -> None:
    """A multi-root workspace: the project hook of the second root runs there."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    event = json.dumps({"workspace_roots": [str(first), str(second)]}).encode()
    request, _ = _exec(second, event, answer(b""), cwd=second)
    assert request.workdir == str(second) and request.env["CURSOR_PROJECT_DIR"] == str(second)


def test_exec_mounts_every_root_it_may_and_no_other(tmp_path: Path, home: Path) -> None:
    """A multi-root workspace: every root mounted read-only at its own path (as `run`
    mounts them); one `_sandbox.mounts` refuses (a dot-folder of the home) is left out."""
    first, second, secret = tmp_path / "a", tmp_path / "b", home / ".ssh"
    for folder in (first, second, secret):
        folder.mkdir()
    roots = [str(first), str(second), str(secret)]
    event = json.dumps({"workspace_roots": roots}).encode()
    request, _ = _exec(first, event, answer(b""), cwd=first)
    assert request.workdir == str(first)
    assert str(first) in request.mounts and str(second) in request.mounts
    assert not any(m.startswith(str(secret)) for m in request.mounts)
