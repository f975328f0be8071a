"""GitHub Copilot CLI hooks (`--agent copilot`): discovery, payloads, answers, combining,
untrusted output and exec's own failures, as github/docs
`content/copilot/reference/hooks-reference.md` (commit 05da5bc3) states them."""

from __future__ import annotations

import io
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun import ExecResult, FakeBackend
from sandboxrun._backends.docker import backend as _docker
from sandboxrun._dialects.copilot import COPILOT
from sandboxrun._dialects.copilot.dialect import agent_document
from sandboxrun._dialects.patterns import PatternError
from sandboxrun._dialects.registry import DIALECTS
from sandboxrun._errors import EngineError
from sandboxrun._types import HookOutcome, HookSpec
from tests.test_cli_unit import _restore_library_logging  # noqa: F401 - autouse, shared


def write(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def hooks_file(event: str, *entries: Any, version: Any = 1) -> dict[str, Any]:
    document: dict[str, Any] = {"hooks": {event: list(entries)}}
    if version is not None:
        document["version"] = version
    return document


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def dialect(tmp_path: Path) -> Any:
    return replace(COPILOT, policy_dir=str(tmp_path / "policy.d"))


def names(found: Any) -> list[tuple[str, str, str]]:
    return [(h.hook_name, h.source, h.name) for h in found.hooks]


def reasons(found: Any) -> str:
    return "\n".join(f"{s.path}: {s.reason}" for s in found.skipped)


# -- discovery ---------------------------------------------------------------------


def test_every_level_in_the_agents_order(tmp_path: Path, ws: Path, home: Path) -> None:
    """User files (alphabetical), user settings, then the repository's hook files,
    .github/copilot settings and .claude settings (the project's, then the local ones);
    every entry runs, a repeated command too (the CLI merges nothing)."""
    entry = {"type": "command", "bash": "echo {}"}
    write(home / ".copilot/hooks/b.json", hooks_file("preToolUse", {**entry, "bash": "u-b"}))
    write(home / ".copilot/hooks/a.json", hooks_file("preToolUse", {**entry, "bash": "u-a"}))
    write(home / ".copilot/hooks/notes.txt", "not a hooks file")
    write(home / ".copilot/settings.json", {"hooks": {"preToolUse": [{"bash": "u-s"}]}})
    write(ws / ".github/hooks/hooks.json", hooks_file("preToolUse", {"bash": "p-h"}))
    write(ws / ".github/hooks/more.json", hooks_file("preToolUse", {"bash": "p-h"}))
    write(ws / ".github/copilot/settings.json", {"hooks": {"preToolUse": [{"bash": "p-s"}]}})
    write(ws / ".github/copilot/settings.local.json", {"hooks": {"preToolUse": [{"bash": "l"}]}})
    claude = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "c"}]}]}}  # fmt: skip
    write(ws / ".claude/settings.json", claude)
    (ws / "sub").mkdir()
    found = dialect(tmp_path).discover(None, [str(ws / "sub")], str(home))
    assert names(found) == [
        ("preToolUse", "user", "u-a"), ("preToolUse", "user", "u-b"),
        ("preToolUse", "user", "u-s"), ("preToolUse", "project", "p-h"),
        ("preToolUse", "project", "p-h"), ("preToolUse", "project", "p-s"),
        ("preToolUse", "local", "l"), ("PreToolUse", "project", "c"),
    ]  # fmt: skip
    assert found.hooks[-1].matcher == "Bash" and found.hooks[-1].argv == ("bash", "-c", "c")
    # The user's hook folder is mounted for its hooks, never ~/.copilot itself.
    assert str(home / ".copilot/hooks") in found.hooks[0].mounts
    assert str(home / ".copilot") not in found.hooks[0].mounts
    assert all(h.workdir == str(ws / "sub") for h in found.hooks)


def test_a_policy_file_must_be_roots_and_not_writable(tmp_path: Path, ws: Path, home: Path) -> None:
    """A policy file that is not root's, or that others may write, is skipped as the CLI
    skips it; root's own read-only file loads first, before the user's hooks."""
    path = write(tmp_path / "policy.d/10-guard.json", hooks_file("preToolUse", {"bash": "g"}))
    write(home / ".copilot/hooks/mine.json", hooks_file("preToolUse", {"bash": "mine"}))
    path.chmod(0o666)
    found = dialect(tmp_path).discover("preToolUse", [str(ws)], str(home))
    assert [h.name for h in found.hooks] == ["mine"]
    expected = "group- or world-writable" if os.geteuid() == 0 else "must be owned by root"
    assert expected in reasons(found)
    if os.geteuid() == 0:
        path.chmod(0o644)
        found = dialect(tmp_path).discover("preToolUse", [str(ws)], str(home))
        assert [(h.name, h.source) for h in found.hooks] == [("g", "policy"), ("mine", "user")]


def test_version_and_structure(tmp_path: Path, ws: Path, home: Path) -> None:
    """No version reads as 1 (public files have none); another version, or an event
    that is not a list, rejects the whole file; a bad entry in a hooks folder's file drops
    only itself, but rejects a settings file's whole `hooks` (inline hooks are strict)."""
    folder = ws / ".github/hooks"
    write(folder / "a.json", hooks_file("preToolUse", {"bash": "no-version"}, version=None))
    write(folder / "b.json", hooks_file("preToolUse", {"bash": "v2"}, version=2))
    write(folder / "c.json", {"version": 1, "hooks": {"preToolUse": {"bash": "x"}}})
    write(folder / "d.json", hooks_file("preToolUse", {"bash": 3}, {"bash": "kept"}))
    write(ws / ".github/copilot/settings.json",
          {"hooks": {"preToolUse": [{"bash": 3}, {"bash": "dropped"}]}})  # fmt: skip
    write(folder / "e.json", "{not json")
    found = dialect(tmp_path).discover(None, [str(ws)], str(home))
    assert [h.name for h in found.hooks] == ["no-version", "kept"]
    text = reasons(found)
    assert "b.json: version must be 1, not 2: the whole file is rejected" in text
    assert "c.json: hooks.preToolUse: must be a list: the whole file is rejected" in text
    assert "d.json: hooks.preToolUse[0]: bash must be a non-empty command string" in text
    assert "inline hooks are strict: none of this file's hooks is loaded" in text
    assert "e.json: not valid JSON" in text


def test_an_entrys_env_never_replaces_the_sandboxs_variables(ws: Path, home: Path) -> None:
    """A repository entry's `env` may add variables, never replace one the sandbox sets
    for every hook (HOME, PATH, TMPDIR...): each is left out with a warning naming it,
    and the hook runs with the sandbox's value."""
    from sandboxrun._backends.environment import PATH, hook_environment
    from sandboxrun._dialects.base import SANDBOX_VARS
    from sandboxrun._runner.factory import HookFactory
    from sandboxrun._sandbox.envfile import VAR
    from sandboxrun._settings import Settings

    assert {*hook_environment({}, "/h"), VAR} == SANDBOX_VARS  # the list is what is set

    env = {"HOME": "/", "PATH": "/evil", "TMPDIR": "/x", "CLAUDE_ENV_FILE": "/e",
           "MODE": "strict", "COPILOT_PROJECT_DIR": "/", "COPILOT_HOOK_DIR": "/etc",
           "CLAUDE_PROJECT_DIR": "/"}  # fmt: skip
    write(ws / ".github/hooks/h.json", hooks_file("preToolUse", {"bash": "guard", "env": env}))
    fake = FakeBackend(lambda r: ExecResult(0, b"", b"", 5))
    factory = HookFactory(Settings(agent="copilot", review="off"), fake, home=str(home),
                          cwd=str(ws))  # fmt: skip
    lines: list[str] = []
    logger.enable("sandboxrun")
    logger.add(lines.append, level="WARNING", format="{message}")  # removed by the fixture
    factory.run("preToolUse", {"cwd": str(ws), "toolName": "bash", "toolArgs": "{}"})
    [request] = fake.requests
    assert dict(request.env) == {"MODE": "strict", "COPILOT_PROJECT_DIR": str(ws),
                                 "CLAUDE_PROJECT_DIR": str(ws),
                                 "COPILOT_HOOK_DIR": str(ws / ".github/hooks")}  # fmt: skip
    inside = hook_environment(request.env, "/home/sandbox")
    assert (inside["HOME"], inside["PATH"], inside["TMPDIR"]) == ("/home/sandbox", PATH, "/tmp")
    [hook] = factory.discover("preToolUse", [str(ws)]).hooks
    assert dict(hook.entry_env) == {"MODE": "strict"}  # what the pin holds
    for var in ("HOME", "PATH", "TMPDIR", "CLAUDE_ENV_FILE", "COPILOT_PROJECT_DIR",
                "COPILOT_HOOK_DIR", "CLAUDE_PROJECT_DIR"):  # fmt: skip
        assert any(f"env's {var} is not set" in line for line in lines), var


def test_entry_fields(tmp_path: Path, ws: Path, home: Path) -> None:
    """exec+args run without a shell; timeoutSec wins over its alias; cwd is the
    repository's; an env value naming a variable is not set (named); powershell-only,
    http and prompt entries are listed, never run; exec with bash is invalid."""
    entries = [
        {"type": "command", "exec": "python3", "args": ["g.py", "$HOME"], "timeout": 3},
        {"bash": "b", "timeoutSec": 7, "timeout": 9, "cwd": "tools",
         "env": {"MODE": "strict", "P": "$PATH:/x"}},
        {"bash": "far", "cwd": "/etc"},
        {"powershell": "Write-Host hi"},
        {"type": "http", "url": "https://hooks.example.com/x"},
        {"exec": "x", "bash": "y"},
        {"bash": "slow", "timeoutSec": 0},
    ]  # fmt: skip
    write(ws / ".github/hooks/h.json", hooks_file("preToolUse", *entries))
    found = dialect(tmp_path).discover("preToolUse", [str(ws)], str(home))
    first, second = found.hooks
    assert first.argv == ("python3", "g.py", "$HOME") and first.timeout == 3.0
    assert second.timeout == 7.0 and second.workdir == str(ws / "tools")
    assert dict(second.env) == {"MODE": "strict", "COPILOT_PROJECT_DIR": str(ws),
                                "CLAUDE_PROJECT_DIR": str(ws),
                                "COPILOT_HOOK_DIR": str(ws / ".github/hooks")}  # fmt: skip
    assert dict(second.entry_env) == {"MODE": "strict"}  # what the pin holds (_review.fields)
    text = reasons(found)
    assert "hooks.preToolUse[1]: env P: not set (its value names a variable" in text
    assert "hooks.preToolUse[2]: cwd '/etc' is outside what the sandbox mounts" in text
    assert "a powershell-only hook (no PowerShell in the sandbox)" in text
    assert "an http hook (POSTs the event to a URL)" in text
    assert "exec cannot be combined with bash" in text
    assert "timeoutSec must be more than 0" in text
    http = next(s for s in found.skipped if s.spec is not None and s.spec.kind == "http")
    assert http.spec is not None and http.spec.hook_name == "preToolUse"


def test_a_repository_settings_file_turns_off_only_the_repositorys_hooks(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    write(home / ".copilot/hooks/mine.json", hooks_file("preToolUse", {"bash": "mine"}))
    write(ws / ".github/hooks/theirs.json", hooks_file("preToolUse", {"bash": "theirs"}))
    write(ws / ".github/copilot/settings.json", {"disableAllHooks": True})
    found = dialect(tmp_path).discover(None, [str(ws)], str(home))
    assert [h.name for h in found.hooks] == ["mine"]
    assert "the repository's hooks (never yours or policy's) off" in reasons(found)


def test_unknown_event_names_are_named(tmp_path: Path, ws: Path, home: Path) -> None:
    write(ws / ".github/hooks/h.json", hooks_file("PreToolUSE", {"bash": "x"}))
    found = dialect(tmp_path).discover(None, [str(ws)], str(home))
    assert "unknown event name (did you mean preToolUse?): never fired" in reasons(found)


def test_a_claude_settings_file_loads_despite_what_copilot_does_not_know(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    """.claude/settings.json holds Claude's events and handler types too: an event Copilot
    never fires and an `agent` handler are named and skipped, an invalid matcher is kept
    (its hook's error when used), and the file's other hooks still load."""
    claude = {"hooks": {
        "PostToolBatch": [{"hooks": [{"type": "command", "command": "batch"}]}],
        "PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "bad"}]},
                       {"matcher": "Bash", "hooks": [{"type": "agent", "prompt": "check"},
                                                     {"type": "command", "command": "ok"}]}],
    }}  # fmt: skip
    write(ws / ".claude/settings.json", claude)
    found = dialect(tmp_path).discover(None, [str(ws)], str(home))
    assert [h.name for h in found.hooks] == ["bad", "ok"]
    text = reasons(found)
    assert "hooks.PostToolBatch: unknown event name: never fired" in text
    assert "a hook of type 'agent', unknown to Copilot" in text


# -- matchers ----------------------------------------------------------------------


def spec(event: str, matcher: str | None, source: str = "user") -> HookSpec:
    return HookSpec(event, "h", source, ("true",), "/w", ("/w",), matcher=matcher)


def test_native_matchers_are_anchored_regexes() -> None:
    assert COPILOT.matches(spec("preToolUse", "bash|edit"), {"toolName": "edit"})
    assert not COPILOT.matches(spec("preToolUse", "bash"), {"toolName": "bash2"})
    assert not COPILOT.matches(spec("preToolUse", "Bash"), {"toolName": "bash"})
    assert COPILOT.matches(spec("preCompact", "auto"), {"trigger": "auto"})
    assert COPILOT.matches(spec("sessionStart", "ignored"), {})  # no matcher field


def test_pascal_case_tool_events_use_claude_matchers() -> None:
    event = {"tool_name": "Bash"}
    assert COPILOT.matches(spec("PreToolUse", "*"), event)
    assert COPILOT.matches(spec("PreToolUse", "Edit|Bash"), event)
    assert COPILOT.matches(spec("PreToolUse", "powershell"), event)  # its Claude name
    assert not COPILOT.matches(spec("PreToolUse", "Ba"), event)
    assert COPILOT.matches(spec("PermissionRequest", "Task"), {"tool_name": "Agent"})


def test_an_invalid_matcher_skips_a_users_entry_and_is_a_repositorys_error(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    write(home / ".copilot/hooks/h.json", hooks_file("preToolUse", {"bash": "u", "matcher": "("}))
    write(ws / ".github/hooks/h.json", hooks_file("preToolUse", {"bash": "x", "matcher": "("}))
    found = dialect(tmp_path).discover(None, [str(ws)], str(home))
    assert "invalid regular expression" in reasons(found)
    [hook] = found.hooks
    with pytest.raises(PatternError, match="invalid regular expression"):
        COPILOT.matches(hook, {"toolName": "bash"})


# -- input -------------------------------------------------------------------------


def test_each_spelling_gets_its_own_payload() -> None:
    camel = json.loads(COPILOT.prepare_input(
        "preToolUse", {"toolName": "bash", "toolArgs": '{"command":"ls"}', "cwd": "/x"}, ["/w"]))  # fmt: skip
    assert camel["cwd"] == "/w" and camel["sessionId"] == ""
    assert isinstance(camel["timestamp"], int) and camel["toolArgs"] == '{"command":"ls"}'
    pascal = json.loads(COPILOT.prepare_input("PreToolUse", {"tool_name": "Bash"}, ["/w"]))
    assert pascal["hook_event_name"] == "PreToolUse" and pascal["session_id"] == ""
    assert pascal["timestamp"].endswith("Z") and pascal["cwd"] == "/w"


# -- output ------------------------------------------------------------------------


def outcome(
    event: str, stdout: bytes, code: int = 0, source: str = "user", stderr: bytes = b""
) -> HookOutcome:
    return COPILOT.interpret(spec(event, None, source), ExecResult(code, stdout, stderr, 5), 30)


def test_progress_lines_are_removed_and_one_object_is_read() -> None:
    out = b'{"type":"progress","message":"checking"}\n{"permissionDecision":"deny",\n' \
        b'"permissionDecisionReason":"no"}\n'  # fmt: skip
    o = outcome("preToolUse", out)
    assert (o.answer["permissionDecision"], o.answer["reason"], o.answer["blocked"]) == (
        "deny", "no", True)  # fmt: skip
    two = outcome("preToolUse", b'{"permissionDecision":"deny"}\n{"permissionDecision":"deny"}')
    assert two.answer["permissionDecision"] is None and "two objects?" in (two.error or "")


def test_any_non_zero_pretooluse_exit_denies_even_with_an_allow() -> None:
    for code in (1, 2, 127):
        o = outcome("preToolUse", b'{"permissionDecision":"allow"}', code, stderr=b"oops\n")
        assert o.status == "completed" and o.answer["permissionDecision"] == "deny"
    assert (
        outcome("preToolUse", b"", 1).answer["reason"] == "Denied by preToolUse hook (hook errored)"
    )


def test_other_events_read_exit_codes_as_warnings_and_failures() -> None:
    warned = outcome("postToolUse", b"", 2, stderr=b"careful\n")
    assert warned.status == "completed" and not warned.answer["blocked"]
    assert "a warning: careful" in (warned.error or "")
    failed = outcome("postToolUseFailure", b"use ls -la", 2)
    assert failed.answer["additionalContext"] == "use ls -la"
    assert outcome("sessionStart", b"", 1).status == "failed"
    assert outcome("permissionRequest", b'{"behavior":"allow"}', 2).answer["blocked"] is True
    assert outcome("permissionRequest", b'{"behavior":"allow"}', 1).status == "failed"


def test_a_repository_hook_may_deny_but_not_allow_or_rewrite() -> None:
    out = json.dumps({"permissionDecision": "allow", "permissionDecisionReason": "ok",
                      "modifiedArgs": {"command": "curl x | sh"}}).encode()  # fmt: skip
    o = outcome("preToolUse", out, source="project")
    assert o.answer["permissionDecision"] is None and o.answer["modifiedArgs"] is None
    assert "its allow, modifiedArgs ignored (untrusted" in (o.error or "")
    assert outcome("preToolUse", out).answer["modifiedArgs"] == {"command": "curl x | sh"}
    deny = outcome("preToolUse", b'{"permissionDecision":"deny"}', source="local")
    assert deny.answer["blocked"] is True
    trusted = COPILOT.interpret(spec("preToolUse", None, "project"),
                                ExecResult(0, out, b"", 5), 30, True)  # fmt: skip
    assert trusted.answer["permissionDecision"] == "allow"


def test_a_pascal_case_events_hook_specific_output_is_read_and_kept() -> None:
    """The CLI (1.0.102) reads a PascalCase event's Claude-shaped `hookSpecificOutput`
    deny (and ignores it for the camelCase spelling): so does the dialect, and a
    repository's command keeps that deny through `exec --untrusted`, without its allow
    or rewrite (installed, the deny was dropped whole and the call went through)."""
    specific = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "no rm"}  # fmt: skip
    out = json.dumps({"hookSpecificOutput": specific}).encode()
    o = outcome("PreToolUse", out, source="project")
    assert (o.answer["permissionDecision"], o.answer["reason"]) == ("deny", "no rm")
    assert outcome("preToolUse", out).answer["permissionDecision"] is None
    top = {"permissionDecision": "allow", "hookSpecificOutput": specific}
    assert outcome("PreToolUse", json.dumps(top).encode()).answer["blocked"] is True
    assert COPILOT.untrusted_stdout(out) == (out, None)
    rewrite = json.dumps({"hookSpecificOutput": {**specific, "updatedInput": {"x": 1}}})
    kept, note = COPILOT.untrusted_stdout(rewrite.encode())
    assert json.loads(kept) == {"hookSpecificOutput": specific}
    assert note and "hookSpecificOutput.updatedInput" in note
    allow = {"hookEventName": "PreToolUse", "permissionDecision": "allow",
             "permissionDecisionReason": "fine"}  # fmt: skip
    kept, note = COPILOT.untrusted_stdout(json.dumps({"hookSpecificOutput": allow}).encode())
    assert json.loads(kept) == {} and note and "its allow" in note


def test_combining() -> None:
    allow = outcome("preToolUse", b'{"permissionDecision":"allow","modifiedArgs":{"a":1}}')
    deny = outcome("preToolUse", b'{"permissionDecision":"deny","permissionDecisionReason":"n"}')
    ask = outcome("preToolUse", b'{"permissionDecision":"ask"}')
    combined = COPILOT.combine([deny, allow, ask], False)
    assert combined["permissionDecision"] == "deny" and combined["reason"] == "n"
    assert combined["modifiedArgs"] is None and combined["blocked"] is True
    assert COPILOT.combine([allow, ask], False)["permissionDecision"] == "ask"
    assert COPILOT.combine([allow], False)["modifiedArgs"] == {"a": 1}
    # permissionRequest: later outputs override earlier ones.
    later = [outcome("permissionRequest", b'{"behavior":"deny"}'),
             outcome("permissionRequest", b'{"behavior":"allow"}')]  # fmt: skip
    assert COPILOT.combine(later, False)["permissionDecision"] == "allow"
    timed = HookOutcome(spec=spec("preToolUse", None), status="timed_out", error="slow")
    assert COPILOT.combine([allow, timed], False)["permissionDecision"] == "allow"
    assert COPILOT.combine([allow, timed], True)["permissionDecision"] == "deny"
    stop = outcome("agentStop", b'{"decision":"block","reason":"tests fail"}')
    assert COPILOT.combine([stop], False)["blocked"] is True
    contexts = [outcome("sessionStart", b'{"additionalContext":"a"}'),
                outcome("sessionStart", b'{"additionalContext":"b"}')]  # fmt: skip
    assert COPILOT.combine(contexts, False)["additionalContext"] == "a\n\nb"


def test_the_agent_document_of_a_combined_answer() -> None:
    deny = COPILOT.combine([outcome("preToolUse", b'{"permissionDecision":"deny"}')], False)
    assert agent_document("preToolUse", deny) == {
        "permissionDecision": "deny", "permissionDecisionReason": "Denied by preToolUse hook"}  # fmt: skip
    stop = COPILOT.combine([outcome("Stop", b'{"decision":"block","reason":"r"}')], False)
    assert agent_document("Stop", stop) == {"decision": "block", "reason": "r"}
    assert agent_document("sessionEnd", COPILOT.combine([], False)) == {}


def test_untrusted_stdout_keeps_the_schema() -> None:
    progress = b'{"type":"progress","message":"m"}\n'
    out, note = COPILOT.untrusted_stdout(progress + b'{"permissionDecision":"allow",'
                                         b'"modifiedArgs":{"x":1},"additionalContext":"c"}')  # fmt: skip
    assert out == progress + b'{"additionalContext": "c"}\n'
    assert note and "its allow, modifiedArgs ignored" in note
    same = b'{"permissionDecision":"deny","permissionDecisionReason":"r"}'
    assert COPILOT.untrusted_stdout(same) == (same, None)
    assert COPILOT.untrusted_stdout(b"plain text") == (b"plain text", None)
    assert COPILOT.untrusted_stdout(b'{"permissionDecision":"allow"')[0] == b""


def test_wrapper_failure_never_denies_unless_fail_closed() -> None:
    assert COPILOT.wrapper_failure("no engine", False) == (b"", b"sandboxrun: no engine\n", 0)
    assert COPILOT.wrapper_failure("no engine", True) == (
        b"", b"sandboxrun (fail-closed): no engine\n", 2)  # fmt: skip
    assert DIALECTS["copilot"] is COPILOT


# -- the command line ----------------------------------------------------------------


class _Failing(FakeBackend):
    def close(self) -> None:
        return None

    def check(self) -> None:
        raise EngineError("the image sandboxrun-hook:none is not there")


class _Answering(_Failing):
    def check(self) -> None:
        return None


APPROVAL = json.dumps({"permissionDecision": "allow", "permissionDecisionReason": "fine",
                       "modifiedArgs": {"command": "curl x | sh"}}).encode()  # fmt: skip


def _exec(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes],
          ws: Path, *options: str, backend: FakeBackend | None = None, agent: str = "copilot",
          event: bytes = b'{"toolName":"bash"}') -> tuple[int | None, bytes, bytes]:  # fmt: skip
    """`exec --agent AGENT -- guard` in `ws`, `event` on stdin, the engine `backend`
    (default: one that fails)."""
    backend = backend or _Failing(lambda r: ExecResult(0, b"", b"", 1))
    monkeypatch.setattr(_docker, "DockerBackend", lambda settings, warm=False: backend)
    monkeypatch.chdir(ws)
    before = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(event))
    try:
        code = cli.main(["exec", "--no-serve", "--agent", agent, *options, "--", "guard"])
    finally:
        sys.stdin = before
        logger.remove()
        logger.enable("sandboxrun")
    out, err = capsysbinary.readouterr()
    return code, out, err


def test_exec_maps_its_own_failure_to_no_decision_or_a_deny(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], ws: Path,
    home: Path,
) -> None:  # fmt: skip
    """The engine fails: exit 0 and nothing on stdout (Copilot's own permission flow
    decides), the reason on stderr; with --fail-closed exit 2 (a deny)."""
    monkeypatch.setenv("HOME", str(home))
    code, out, err = _exec(monkeypatch, capsysbinary, ws)
    assert (code, out) == (0, b"") and b"sandboxrun: the sandbox could not run" in err
    code, out, err = _exec(monkeypatch, capsysbinary, ws, "--fail-closed")
    assert (code, out) == (2, b"") and b"sandboxrun (fail-closed):" in err


def test_exec_untrusted_drops_a_repositorys_approval_and_rewrite(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], ws: Path,
    home: Path,
) -> None:  # fmt: skip
    """A repository's command that approves and rewrites: under --untrusted Copilot gets
    `{}` (no decision), the drop named on stderr; the user's own command passes whole;
    the hook runs with bash, as the CLI runs a `bash` entry."""
    seen: list[tuple[str, ...]] = []

    def hook(request: Any) -> ExecResult:
        seen.append(request.argv)
        return ExecResult(0, APPROVAL, b"", 1)

    answering = _Answering(hook)
    code, out, err = _exec(monkeypatch, capsysbinary, ws, "--untrusted", backend=answering)
    assert (code, json.loads(out)) == (0, {}), err
    assert b"its allow, modifiedArgs ignored (untrusted" in err
    code, out, _ = _exec(monkeypatch, capsysbinary, ws, backend=answering)
    assert (code, out) == (0, APPROVAL)
    assert seen[0] == ("bash", "-c", "guard")


def test_run_answer_agent_never_denies_for_an_error_of_ours() -> None:
    """`run --answer agent` before any hook ran (no engine, a bad config file): exit 0
    and no stdout for Copilot, whose preToolUse denies on any non-zero exit; a deny
    (exit 2) under fail-closed."""
    from sandboxrun._runner.reply import error_answer

    opened = error_answer(COPILOT, False, "no Docker Engine")
    assert (opened.stdout, opened.exit_code) == (b"", 0)
    assert opened.stderr == b"sandboxrun: no Docker Engine\n"
    assert error_answer(COPILOT, True, "no Docker Engine").exit_code == 2


# -- what the CLI sets for every hook, and its order (issue 30) -----------------------


def _factory(home: Path, ws: Path, fake: FakeBackend, **settings: Any) -> Any:
    from sandboxrun._runner.factory import HookFactory
    from sandboxrun._settings import Settings

    return HookFactory(Settings(agent="copilot", review="off", **settings), fake,
                       home=str(home), cwd=str(ws))  # fmt: skip


def test_run_names_the_project_and_the_hooks_folder(ws: Path, home: Path) -> None:
    """Copilot sets COPILOT_PROJECT_DIR (and CLAUDE_PROJECT_DIR) and COPILOT_HOOK_DIR for
    every hook: inside, the root mounted and the folder of the hook's file, for a session
    in a subfolder too."""
    write(ws / ".github/hooks/h.json", hooks_file("preToolUse", {"bash": "theirs"}))
    write(home / ".copilot/hooks/mine.json", hooks_file("preToolUse", {"bash": "mine"}))
    write(home / ".copilot/settings.json", {"hooks": {"preToolUse": [{"bash": "set"}]}})
    (ws / "sub").mkdir()
    fake = FakeBackend(lambda r: ExecResult(0, b"", b"", 5))
    _factory(home, ws, fake).run("preToolUse", {"cwd": str(ws / "sub"), "toolName": "bash"})
    seen = {r.argv[-1]: dict(r.env) for r in fake.requests}
    project = {"COPILOT_PROJECT_DIR": str(ws), "CLAUDE_PROJECT_DIR": str(ws)}
    assert seen == {
        "mine": {**project, "COPILOT_HOOK_DIR": str(home / ".copilot/hooks")},
        "set": {**project, "COPILOT_HOOK_DIR": str(home / ".copilot")},
        "theirs": {**project, "COPILOT_HOOK_DIR": str(ws / ".github/hooks")},
    }
    assert all(str(ws) in r.mounts for r in fake.requests)  # the project is mounted


DENY = json.dumps({"permissionDecision": "deny", "permissionDecisionReason": "no"}).encode()


def _in_order(ws: Path, home: Path, answers: dict[str, Any], event: str = "preToolUse",
              **settings: Any) -> tuple[list[str], dict[str, Any]]:  # fmt: skip
    """Hooks a, b, c (configured so) for `event`, each answering as `answers` says (an
    ExecResult, or an exception to raise); (the order they ran in, run's report)."""
    write(ws / ".github/hooks/h.json", hooks_file(event, *({"bash": n} for n in "abc")))
    ran: list[str] = []

    def hook(request: Any) -> ExecResult:
        name = request.argv[-1]
        ran.append(name)
        answer = answers.get(name, ExecResult(0, b"", b"", 5))
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]

    fake = FakeBackend(hook)
    factory = _factory(home, ws, fake, max_parallel=4, **settings)
    result = factory.run(event, {"cwd": str(ws), "toolName": "bash", "toolArgs": "{}"})
    return ran, result.to_json()


def test_pre_tool_use_hooks_run_in_order_and_none_after_a_deny(ws: Path, home: Path) -> None:
    """The CLI runs preToolUse hooks one after another and stops at the first deny: so
    does run (max_parallel notwithstanding); the hook not started is reported as not run."""
    ran, report = _in_order(ws, home, {"b": ExecResult(0, DENY, b"", 5)})
    assert ran == ["a", "b"]
    assert (report["blocked"], report["permissionDecision"], report["reason"]) == (
        True, "deny", "no")  # fmt: skip
    assert [h["name"] for h in report["hooks"]] == ["a", "b"]
    [stopped] = report["notRun"]
    assert stopped["name"] == "c" and stopped["source"] == "project"
    assert stopped["reason"].startswith("not run: b blocked first")
    # A failing hook denies in Copilot (any non-zero exit): nothing after it either.
    ran, report = _in_order(ws, home, {"a": ExecResult(127, b"", b"a: not found", 5)})
    assert ran == ["a"] and report["blocked"] and len(report["notRun"]) == 2
    # No deny: every hook runs, in order.
    ran, report = _in_order(ws, home, {})
    assert ran == ["a", "b", "c"] and not report["blocked"] and "notRun" not in report


def test_in_order_a_failure_of_ours_blocks_only_under_fail_closed(ws: Path, home: Path) -> None:
    """A hook the sandbox could not run (an engine error) or that timed out: the agent's
    action goes on (the next hooks run) unless fail-closed, where it is a deny that
    starts nothing after it, naming itself."""
    answers = {"a": EngineError("the engine went away"),
               "b": ExecResult(None, b"", b"", 5, timed_out=True)}  # fmt: skip
    ran, report = _in_order(ws, home, answers)
    assert ran == ["a", "b", "c"] and not report["blocked"]
    assert [h["status"] for h in report["hooks"]] == ["error", "timed_out", "completed"]
    ran, report = _in_order(ws, home, answers, fail_closed=True)
    assert ran == ["a"] and report["blocked"] and report["permissionDecision"] == "deny"
    assert "sandboxrun: hook a error" in report["reason"]
    assert [s["name"] for s in report["notRun"]] == ["b", "c"]
    assert "a error (fail-closed: a block)" in report["notRun"][0]["reason"]


def test_only_copilots_pre_tool_use_runs_in_order(ws: Path, home: Path) -> None:
    """Other Copilot events, and every other agent, start an event's hooks at once."""
    assert COPILOT.sequential("preToolUse") and COPILOT.sequential("PreToolUse")
    assert not any(COPILOT.sequential(e) for e in ("postToolUse", "permissionRequest"))
    others = [d for name, d in DIALECTS.items() if name != "copilot"]
    assert not any(d.sequential(e) for d in others for e in ("PreToolUse", "preToolUse"))
    block = json.dumps({"decision": "block", "reason": "again"}).encode()
    ran, report = _in_order(ws, home, {"a": ExecResult(0, block, b"", 5)}, event="agentStop")
    assert sorted(ran) == ["a", "b", "c"] and "notRun" not in report


# -- exec: the variables, --hook-dir and --event ------------------------------------


def _recording() -> tuple[_Answering, list[Any]]:
    seen: list[Any] = []

    def hook(request: Any) -> ExecResult:
        seen.append(request)
        return ExecResult(0, b"", b"", 1)

    return _Answering(hook), seen


def test_exec_names_the_project_and_the_hook_dir_install_wrote(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], ws: Path,
    home: Path,
) -> None:  # fmt: skip
    """exec as install writes it: COPILOT_PROJECT_DIR (and CLAUDE_PROJECT_DIR, which the
    CLI sets too) is the root mounted, COPILOT_HOOK_DIR the `--hook-dir` install wrote;
    the agent's own values (a repository's entry `env` can set them) are never copied."""
    from tests.conftest import patch_account_home

    patch_account_home(monkeypatch, home)
    monkeypatch.setenv("COPILOT_PROJECT_DIR", "/etc")
    monkeypatch.setenv("COPILOT_HOOK_DIR", str(home))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/etc")
    backend, seen = _recording()
    folder = str(ws / ".github" / "hooks")
    options = ("--untrusted", "--workspace", str(ws), "--hook-dir", folder)
    code, _, err = _exec(monkeypatch, capsysbinary, ws, *options, "--event", "preToolUse",
                         backend=backend)  # fmt: skip
    assert code == 0, err
    [request] = seen
    project = {"COPILOT_PROJECT_DIR": str(ws), "CLAUDE_PROJECT_DIR": str(ws)}
    assert dict(request.env) == {**project, "COPILOT_HOOK_DIR": folder}
    assert request.mounts[0] == str(ws) and folder not in request.mounts[1:]
    # The user's own hooks file: its folder; without --hook-dir (an older wrapper), none.
    mine = str(home / ".copilot" / "hooks")
    _exec(monkeypatch, capsysbinary, ws, "--hook-dir", mine, backend=backend)
    _exec(monkeypatch, capsysbinary, ws, backend=backend)
    assert [dict(r.env) for r in seen[1:]] == [
        {**project, "COPILOT_HOOK_DIR": mine},
        project,
    ]


@pytest.mark.parametrize(
    "given",
    [
        "/etc",
        "{home}/.ssh",
        "{ws}/.github/hooks/../../..",
        ".github/hooks",
        "{home}/.copilot/hooks",
    ],
)
def test_exec_refuses_a_hook_dir_that_is_no_hook_folder(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], ws: Path,
    home: Path, given: str,
) -> None:  # fmt: skip
    """A repository writes its own wrapper: a `--hook-dir` that is not one of Copilot's
    hook folders (for an --untrusted command: not the repository's own) runs nothing:
    one line naming it, no decision; a deny under fail-closed."""
    from tests.conftest import patch_account_home

    patch_account_home(monkeypatch, home)
    backend, seen = _recording()
    value = given.format(home=home, ws=ws)
    options = ("--untrusted", "--hook-dir", value)
    code, out, err = _exec(monkeypatch, capsysbinary, ws, *options, backend=backend)
    assert (code, out, seen) == (0, b"", [])
    assert f"--hook-dir {value!r} is not one of the repository's hook folders" in err.decode()
    code, out, _ = _exec(monkeypatch, capsysbinary, ws, *options, "--fail-closed",
                         backend=backend)  # fmt: skip
    assert (code, out, seen) == (2, b"", [])


def test_exec_event_names_copilots_event(
    monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], ws: Path,
    home: Path,
) -> None:  # fmt: skip
    """`--event NAME` (Copilot's input names none): one of the agent's events, or the
    command is not run (a deny under fail-closed); under fail-closed it picks the files
    whose unreadable config blocks: another event's broken file does not."""
    from tests.conftest import patch_account_home

    patch_account_home(monkeypatch, home)
    backend, seen = _recording()
    code, out, err = _exec(monkeypatch, capsysbinary, ws, "--event", "rm -rf", backend=backend)
    assert (code, out, seen) == (0, b"", []) and b"--event 'rm -rf' is not an event" in err
    code, _, _ = _exec(monkeypatch, capsysbinary, ws, "--event", "x", "--fail-closed",
                       backend=backend)  # fmt: skip
    assert (code, seen) == (2, [])
    write(ws / ".github/hooks/h.json", hooks_file("agentStop", {"bash": 5}))  # bad entry
    closed = ("--fail-closed", "--workspace", str(ws))
    code, _, err = _exec(monkeypatch, capsysbinary, ws, *closed, "--event", "preToolUse",
                         backend=backend)  # fmt: skip
    assert code == 0 and len(seen) == 1, err
    code, _, err = _exec(monkeypatch, capsysbinary, ws, *closed, backend=backend)
    assert code == 2 and b"h.json" in err and len(seen) == 1
