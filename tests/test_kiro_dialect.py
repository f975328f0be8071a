"""Kiro's agent-config hooks (`--agent kiro`): agent files at both levels, a file Kiro
refuses whole, matchers as `hook_matches_tool` reads them, exit-code answers (context,
block, warning), `USER_PROMPT`, exec's own failures, hostile files. Protocol logic only
(the fake backend); the real engine runs public Kiro hooks in
tests/engine/test_real_hooks_kiro.py. Sources: `_dialects/kiro/dialect.py`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import HookFactory, Settings
from sandboxrun._dialects.kiro import KIRO
from sandboxrun._dialects.kiro.config import KiroHook
from sandboxrun._dialects.kiro.dialect import truncate, user_prompt
from sandboxrun._dialects.kiro.matcher import _TooMany, parse, tool_matches
from sandboxrun._errors import EngineError, PatternError
from sandboxrun._runner.exec import exec_request, run_exec
from sandboxrun._types import ExecRequest, ExecResult, HookOutcome

from .conftest import FakeBackend


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def agent(folder: Path, name: str, hooks: Any, **more: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "hooks": hooks, **more}))
    return path


def answer(stdout: bytes = b"", code: int = 0, stderr: bytes = b"") -> Any:
    return lambda request: ExecResult(code, stdout, stderr, 1)


def outcome(event: str, stdout: bytes = b"", code: int = 0, stderr: bytes = b"",
            **spec: Any) -> HookOutcome:  # fmt: skip
    hook = KiroHook(event, "h", "user", ("x",), "/", (), **spec)
    return KIRO.interpret(hook, ExecResult(code, stdout, stderr, 1), 30.0)


# -- discovery ---------------------------------------------------------------------------


def test_both_levels_user_first_each_run_in_the_project_with_bash(ws: Path, home: Path) -> None:
    agent(
        home / ".kiro" / "agents",
        "dev",
        {"preToolUse": [{"command": "~/.kiro/hooks/g.sh", "matcher": "fs_*"}]},
    )
    agent(
        ws / ".kiro" / "agents",
        "dev",
        {"agentSpawn": [{"command": "git status", "timeout_ms": 5000}]},
    )
    (home / ".kiro" / "hooks").mkdir()
    found = KIRO.discover(None, [str(ws)], str(home))
    assert [(h.source, h.hook_name, h.workdir) for h in found.hooks] == [
        ("user", "preToolUse", str(ws)),  # a project agent of the same name shadows nothing
        ("project", "agentSpawn", str(ws)),
    ]
    user, project = found.hooks
    assert user.argv == ("bash", "-c", "~/.kiro/hooks/g.sh") and user.matcher == "fs_*"
    assert user.timeout == 30.0 and project.timeout == 5.0
    assert str(home / ".kiro" / "hooks") in user.mounts
    assert (
        str(home / ".kiro") not in user.mounts and str(home / ".kiro" / "agents") not in user.mounts
    )
    assert str(home / ".kiro" / "hooks") not in project.mounts
    assert user.env == {}  # Kiro sets no project variable


@pytest.mark.parametrize(
    ("hooks", "why"),
    [
        ({"PreToolUse": [{"command": "x"}]}, "unknown event name (did you mean preToolUse?)"),
        ({"preToolUse": [{"command": "x", "timeout_ms": -1}]}, "timeout_ms must be a whole"),
        ({"preToolUse": [{"command": "x", "timeout_ms": 1.5}]}, "timeout_ms must be a whole"),
        ({"preToolUse": [{"command": "x", "cache_ttl_seconds": "60"}]}, "cache_ttl_seconds"),
        ({"preToolUse": [{"command": ["x"]}]}, "has no command string"),
        ({"preToolUse": [{"command": "x", "matcher": ["fs_*"]}]}, "matcher must be a string"),
        ({"preToolUse": {"command": "x"}}, "must be a list"),
        (["x"], "hooks: must be an object"),
    ],
)
def test_a_file_kiro_refuses_runs_none_of_its_hooks_and_is_named(
    ws: Path, home: Path, hooks: Any, why: str
) -> None:
    """serde: one bad entry fails the whole agent; the good entries before it too."""
    entries = {"stop": [{"command": "ok"}]}
    bad = agent(ws / ".kiro" / "agents", "bad", {**entries, **hooks} if isinstance(hooks, dict)
                else hooks)  # fmt: skip
    agent(ws / ".kiro" / "agents", "good", entries)
    found = KIRO.discover(None, [str(ws)], str(home))
    assert [h.name for h in found.hooks] == ["ok"]  # the good file's only
    [skip] = [s for s in found.skipped if s.path == str(bad)]
    assert why in skip.reason and "Kiro does not load this agent" in skip.reason


def test_unknown_entry_fields_are_ignored_and_defaults_apply(ws: Path, home: Path) -> None:
    agent(ws / ".kiro" / "agents", "a", {"postToolUse": [{"command": "fmt", "only_when": 1}]})
    [hook] = KIRO.discover("postToolUse", [str(ws)], str(home)).hooks
    assert isinstance(hook, KiroHook) and hook.max_output == 10240 and hook.cache_ttl == 0


def test_cache_ttl_is_named_sandboxrun_runs_every_time(ws: Path, home: Path) -> None:
    agent(
        ws / ".kiro" / "agents",
        "a",
        {"userPromptSubmit": [{"command": "date", "cache_ttl_seconds": 60}]},
    )
    found = KIRO.discover(None, [str(ws)], str(home))
    assert len(found.hooks) == 1
    assert any("cache_ttl_seconds 60" in s.reason and "every time" in s.reason
               for s in found.skipped)  # fmt: skip


def test_a_symlinked_agent_file_is_read_once_as_the_project_s(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    """A repository linking the user's own agent file in: read once, as the user's."""
    user = agent(home / ".kiro" / "agents", "mine", {"stop": [{"command": "x"}]})
    (ws / ".kiro" / "agents").mkdir(parents=True)
    os.symlink(user, ws / ".kiro" / "agents" / "mine.json")
    found = KIRO.discover(None, [str(ws)], str(home))
    assert [h.source for h in found.hooks] == ["user"]


def test_wanted_event_only(ws: Path, home: Path) -> None:
    agent(ws / ".kiro" / "agents", "a", {"stop": [{"command": "s"}],
                                         "preToolUse": [{"command": "p"}]})  # fmt: skip
    assert [h.name for h in KIRO.discover("stop", [str(ws)], str(home)).hooks] == ["s"]


# -- matchers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "tool", "hit"),
    [
        (None, "@git/status", True),
        ("*", "@git/status", True),
        ("fs_write", "fs_write", True),
        ("fs_write", "fs_writer", False),
        ("fs_*", "fs_read", True),
        ("fs_*", "execute_bash", False),
        ("@git", "@git/status", True),
        ("@git", "@github/x", False),
        ("@git/status", "@git/status", True),
        ("@git/status", "@git/diff", False),
        ("@git/*", "@git/diff", True),
        ("@builtin", "fs_read", True),
        ("@builtin", "@git/status", False),
        ("fs_?ead", "fs_read", True),
        ("fs_[rw]*", "fs_write", True),
        ("fs_[!r]*", "fs_read", False),
        ("{fs,execute}_*", "execute_bash", True),
        ("fs_[*", "fs_[x", False),  # globset refuses the glob: no match
        ("*bash", "execute bash\nx", False),
        ("*a*a*a*a*a*a*a*a*a*b", "a" * 200, False),
        ("fs_read", "FS_READ", False),
    ],
)
def test_matchers_as_kiro_reads_them(matcher: str | None, tool: str, hit: bool) -> None:
    assert tool_matches(matcher, tool) is hit


def test_only_tool_events_filter_by_matcher() -> None:
    spec = KiroHook("agentSpawn", "h", "user", ("x",), "/", (), matcher="fs_write")
    assert KIRO.matches(spec, {}) is True
    tool = KiroHook("preToolUse", "h", "user", ("x",), "/", (), matcher="fs_write")
    assert KIRO.matches(tool, {"tool_name": "fs_write"})
    assert not KIRO.matches(tool, {"tool_name": "fs_read"})
    assert not KIRO.matches(tool, {"tool_name": ["fs_write"]})


def test_invalid_globs_parse_to_none() -> None:
    assert parse("{a,{b}}*") is None and parse("a*\\") is None
    assert parse("{a*") is None and parse("a*]") is not None
    with pytest.raises(_TooMany):  # 512 alternatives: sandboxrun's bound, never expanded
        parse("{a,b}" * 9 + "*")


# A glob Kiro matches `execute_bash` with: 512 alternatives, past sandboxrun's bound.
CASED = "{e,E}{x,X}{e,E}{c,C}{u,U}{t,T}{e,E}{_,-}{b,B}ash*"


def test_a_glob_past_the_bound_is_an_error_never_no_match() -> None:
    """Kiro would use it; sandboxrun will not: named, never a guard dropped in silence."""
    tool = KiroHook("preToolUse", "h", "project", ("x",), "/", (), matcher=CASED)
    with pytest.raises(PatternError, match="more than 256 alternatives"):
        KIRO.matches(tool, {"tool_name": "execute_bash"})


# -- answers -----------------------------------------------------------------------------


def test_exit_0_stdout_is_context_only_for_spawn_and_prompt() -> None:
    for event in ("agentSpawn", "userPromptSubmit"):
        got = outcome(event, b"branch main\n")
        assert got.answer["additional_context"] == "branch main\n"
    for event in ("preToolUse", "postToolUse", "stop"):
        assert outcome(event, b"ignored").answer["additional_context"] == ""


def test_exit_2_blocks_pretooluse_only_with_stderr_for_the_model() -> None:
    got = outcome("preToolUse", b"out", 2, b"no writes to .env")
    assert got.answer["blocked"] is True
    assert got.answer["reason"] == "PreToolHook blocked the tool execution: no writes to .env"
    for event in ("postToolUse", "userPromptSubmit", "stop", "agentSpawn"):
        assert outcome(event, b"", 2, b"x").status == "failed"


def test_other_codes_warn_and_the_tool_runs() -> None:
    got = outcome("preToolUse", b"", 1, b"oops")
    assert got.status == "failed" and "exit code 1: oops" in (got.error or "")
    combined = KIRO.combine([got], fail_closed=False)
    assert combined["blocked"] is False and combined["warnings"]
    assert KIRO.combine([got], fail_closed=True)["blocked"] is True
    stop = outcome("stop", b"", 1, b"oops")
    assert KIRO.combine([stop], fail_closed=True)["blocked"] is False  # nothing to block


def test_output_is_cut_at_max_output_size_as_kiro_cuts_it() -> None:
    got = outcome("agentSpawn", "é".encode() * 10, max_output=5)
    assert got.answer["additional_context"] == "éé ... truncated"
    assert truncate("abc", 3) == "abc"


def test_combine_joins_contexts_and_block_reasons() -> None:
    a, b = outcome("userPromptSubmit", b"one"), outcome("userPromptSubmit", b"two")
    assert KIRO.combine([a, b], False)["additional_context"] == "one\n\ntwo"
    x, y = outcome("preToolUse", b"", 2, b"r1"), outcome("preToolUse", b"", 0)
    combined = KIRO.combine([x, y], False)
    assert combined["blocked"] is True and combined["reason"].endswith("r1")


def test_user_prompt_is_sanitised_as_kiro_sanitises_it() -> None:
    assert user_prompt("a\x1b[31mb\x00c\n\td\x7f") == "a[31mbc\n\td"
    assert len(user_prompt("é" * 5000).encode()) <= 4096


# -- run ---------------------------------------------------------------------------------


def test_run_gives_the_hook_kiros_event_and_user_prompt(ws: Path, home: Path) -> None:
    agent(
        ws / ".kiro" / "agents", "a", {"userPromptSubmit": [{"command": "ctx", "timeout_ms": 1500}]}
    )
    fake = FakeBackend(answer(b"remember X"))
    result = HookFactory(Settings.load(agent="kiro"), fake, home=str(home)).run(
        "userPromptSubmit", {"prompt": "hi\x07 there", "cwd": str(ws)}
    )
    assert result.answer["additional_context"] == "remember X"
    [request] = fake.requests
    sent = json.loads(request.stdin)
    assert sent == {"hook_event_name": "userPromptSubmit", "cwd": str(ws),
                    "prompt": "hi\x07 there"}  # fmt: skip
    assert request.env["USER_PROMPT"] == "hi there"
    assert request.argv == ("bash", "-c", "ctx") and request.timeout == 1.5


def test_run_matches_the_tool_and_blocks(ws: Path, home: Path) -> None:
    agent(ws / ".kiro" / "agents", "a", {"preToolUse": [
        {"command": "guard", "matcher": "execute_bash"},
        {"command": "mcp", "matcher": "@git"}]})  # fmt: skip
    fake = FakeBackend(answer(b"", 2, b"denied"))
    event = {"tool_name": "execute_bash", "tool_input": {"command": "rm"}, "cwd": str(ws)}
    result = HookFactory(Settings.load(agent="kiro"), fake, home=str(home)).run("preToolUse", event)
    assert result.answer["blocked"] is True and "denied" in result.answer["reason"]
    assert [r.argv[-1] for r in fake.requests] == ["guard"]


def test_a_guard_whose_glob_is_past_the_bound_is_an_error_a_block_under_fail_closed(
    ws: Path, home: Path
) -> None:
    agent(ws / ".kiro" / "agents", "a", {"preToolUse": [
        {"command": "guard", "matcher": CASED}]})  # fmt: skip
    event = {"tool_name": "execute_bash", "tool_input": {"command": "rm"}, "cwd": str(ws)}
    for fail_closed in (False, True):
        fake = FakeBackend(answer(b"", 2, b"denied"))
        settings = Settings.load(agent="kiro", fail_closed=fail_closed)
        result = HookFactory(settings, fake, home=str(home)).run("preToolUse", event)
        [hook] = result.to_json()["hooks"]
        assert hook["status"] == "error" and "256 alternatives" in hook["error"], hook
        assert result.answer["blocked"] is fail_closed and fake.requests == []


# -- exec --------------------------------------------------------------------------------


def _exec(ws: Path, stdin: bytes, handler: Any, fail_closed: bool = False,
          untrusted: bool = False, command: str = "hook") -> Any:  # fmt: skip
    settings = Settings.load(agent="kiro", fail_closed=fail_closed)
    request = exec_request(settings, [command], stdin, None, cwd=str(ws))
    return request, run_exec(settings, FakeBackend(handler), request, {}, untrusted=untrusted)


def _raise(request: ExecRequest) -> ExecResult:
    raise EngineError("image sandboxrun-hook not found")


@pytest.mark.parametrize(
    "handler",
    [_raise, lambda r: ExecResult(None, b"", b"", 1, timed_out=True),
     lambda r: ExecResult(137, b"", b"", 1, oom_killed=True)],
    ids=["missing-image", "timeout", "oom"],
)  # fmt: skip
@pytest.mark.parametrize("fail_closed", [False, True])
def test_our_failures_warn_or_with_fail_closed_block(
    ws: Path, home: Path, handler: Any, fail_closed: bool
) -> None:
    """Exit 1: Kiro warns and the tool runs; exit 2: its block. Never a word on stdout."""
    event = json.dumps({"hook_event_name": "preToolUse", "tool_name": "fs_write"}).encode()
    _, out = _exec(ws, event, handler, fail_closed)
    assert (out.stdout, out.exit_code) == (b"", 2 if fail_closed else 1)
    assert out.stderr.startswith(b"sandboxrun")


def test_exec_passes_the_hook_through_and_a_repository_s_context_too(ws: Path, home: Path) -> None:
    event = json.dumps({"hook_event_name": "agentSpawn", "prompt": "p\x1bq"}).encode()
    for untrusted in (False, True):
        request, out = _exec(ws, event, answer(b"ctx\n", 0, b"w"), untrusted=untrusted)
        assert (out.stdout, out.stderr, out.exit_code) == (b"ctx\n", b"w", 0)
    assert request.argv == ("bash", "-c", "hook") and request.env == {"USER_PROMPT": "pq"}
    assert request.workdir == str(ws) and request.stdin == event
    assert request.timeout == 25.0  # before Kiro's own 30 s, which would block nothing


def test_exec_mounts_no_agent_file_a_command_names(ws: Path, home: Path) -> None:
    """A repository's command naming the user's agent file (MCP keys) mounts nothing."""
    secret = agent(home / ".kiro" / "agents", "mine", {}, mcpServers={"x": {"env": {"K": "v"}}})
    script = home / ".kiro" / "hooks" / "g.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    request, _ = _exec(ws, b"{}", answer(), command=f"cat {secret}; sh {script}")
    assert str(secret) not in request.mounts and str(secret.parent) not in request.mounts
    assert str(script.parent) in request.mounts
