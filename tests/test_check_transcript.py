"""`check --transcript` (issue 21, item 3): a real session's record replayed through
today's hooks, and `--diff AUDIT_LOG` against what the audit trail recorded.

The transcripts are built here in the agents' own formats (see
`sandboxrun/_check/transcript.py` for the sources of each): Claude Code's transcript
JSONL (`~/.claude/projects/<project>/<session>.jsonl`: entries with `type`,
`sessionId`, `cwd` and a Messages API `message`) and Codex's rollout JSONL
(`RolloutLine {timestamp, type, payload}`, codex-rs/protocol). FakeBackend: the replay
logic only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecRequest, ExecResult
from tests import test_check

ws = test_check.ws
engine = test_check.engine
_restore_library_logging = test_check._restore_library_logging
RECORDED = "/home/alice/proj"


def claude_guard(request: ExecRequest) -> ExecResult:
    """A Claude guard: denies `rm -rf`, else says nothing."""
    event = json.loads(request.stdin)
    command = str((event.get("tool_input") or {}).get("command", ""))
    if "rm -rf" in command and event.get("hook_event_name") == "PreToolUse":
        deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no rm -rf"}}  # fmt: skip
        return ExecResult(0, json.dumps(deny).encode(), b"", 5)
    return ExecResult(0, b"", b"", 5)


def entry(kind: str, content: Any, **more: Any) -> str:
    """One line of a Claude Code transcript."""
    line = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": RECORDED,
            "sessionId": "6f1c2d3e-0000-4000-8000-000000000001", "version": "2.0.30",
            "gitBranch": "main", "type": kind, "uuid": f"u-{len(json.dumps(content))}",
            "timestamp": "2026-11-20T10:00:00.000Z",
            "message": {"role": kind, "content": content}, **more}  # fmt: skip
    return json.dumps(line)


def claude_transcript(tmp_path: Path) -> Path:
    use = lambda i, cmd: {"type": "tool_use", "id": f"toolu_0{i}", "name": "Bash",  # noqa: E731
                          "input": {"command": cmd, "description": "run it"}}  # fmt: skip
    result = lambda i: [{"tool_use_id": f"toolu_0{i}", "type": "tool_result",  # noqa: E731
                         "content": "ok", "is_error": False}]  # fmt: skip
    lines = [
        json.dumps({"type": "summary", "summary": "Cleaning", "leafUuid": "x"}),
        entry("user", "clean the build folder"),
        entry("assistant", [{"type": "text", "text": "Sure."}, use(1, f"ls {RECORDED}/build")]),
        entry("user", result(1), toolUseResult={"stdout": "a.o", "stderr": ""}),
        entry("assistant", [use(2, f"rm -rf {RECORDED}/build")]),
        entry("user", result(2)),
        entry("user", [{"type": "text", "text": "<command-name>/clear</command-name>"}],
              isMeta=True),
        "{not json: a line being written",
    ]  # fmt: skip
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def claude_hooks(ws: Path) -> None:
    hook = {"type": "command", "command": "./guard.sh"}
    settings = {"hooks": {e: [{"matcher": "*", "hooks": [hook]}]
                          for e in ("PreToolUse", "PostToolUse", "UserPromptSubmit")}}  # fmt: skip
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.split("\n\n")[0].splitlines()[1:]]


def test_a_claude_transcript_replays_its_prompts_and_tool_calls(
    ws: Path, tmp_path: Path, engine: Callable[..., list[ExecRequest]],
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    claude_hooks(ws)
    requests = engine(claude_guard)
    path = claude_transcript(tmp_path)
    code = cli.main(["check", "--agent", "claude", "--transcript", str(path)])
    out = capsys.readouterr().out
    assert [r[1:3] for r in rows(out)] == [
        ["UserPromptSubmit", "allowed"], ["PreToolUse", "allowed"], ["PostToolUse", "allowed"],
        ["PreToolUse", "denied"], ["PostToolUse", "allowed"],
    ]  # fmt: skip
    assert code == 1  # the replayed session holds a call today's hooks deny
    events = [json.loads(r.stdin) for r in requests]
    assert events[0]["prompt"] == "clean the build folder"
    # The recording machine's folder is this workspace, in the command too.
    assert events[1]["tool_input"]["command"] == f"ls {ws}/build"
    assert events[1]["tool_use_id"] == "toolu_01" and events[1]["cwd"] == str(ws)
    assert events[2]["tool_response"] == {"stdout": "a.o", "stderr": ""}


def codex_rollout(tmp_path: Path) -> Path:
    line = lambda kind, payload: json.dumps(  # noqa: E731
        {"timestamp": "2026-11-20T10:00:00.000Z", "type": kind, "payload": payload})  # fmt: skip
    call = lambda i, name, args: line("response_item", {  # noqa: E731
        "type": "function_call", "name": name, "arguments": json.dumps(args),
        "call_id": f"call_{i}"})  # fmt: skip
    out = lambda i: line("response_item", {"type": "function_call_output",  # noqa: E731
                                           "call_id": f"call_{i}", "output": "done"})  # fmt: skip
    lines = [
        line("session_meta", {"id": "0199aaaa-bbbb", "cwd": RECORDED, "cli_version": "0.160.0",
                              "originator": "codex_cli_rs", "source": "cli"}),
        line("turn_context", {"cwd": RECORDED, "model": "gpt-5.5-codex",
                              "approval_policy": "on-request"}),
        line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>..</environment_context>"}]}),
        line("event_msg", {"type": "user_message", "message": "tidy up", "kind": "plain"}),
        call(1, "shell", {"command": ["bash", "-lc", f"rm -rf {RECORDED}/tmp"], "workdir": RECORDED}),
        out(1),
        call(2, "exec_command", {"cmd": "git status"}),
        out(2),
    ]  # fmt: skip
    path = tmp_path / "rollout-2026-11-20T10-00-00-0199aaaa.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_codex_rollout_replays_as_codex_hooks_see_it(
    ws: Path, tmp_path: Path, engine: Callable[..., list[ExecRequest]],
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    (ws / ".git").mkdir()
    hook = {"type": "command", "command": "./guard.sh"}
    hooks = {"hooks": {e: [{"hooks": [hook]}] for e in ("PreToolUse", "UserPromptSubmit")}}
    (ws / ".codex").mkdir()
    (ws / ".codex" / "hooks.json").write_text(json.dumps(hooks))
    requests = engine(claude_guard)
    code = cli.main(["check", "--agent", "codex", "--transcript", str(codex_rollout(tmp_path))])
    out = capsys.readouterr().out
    assert [r[1:3] for r in rows(out)] == [
        ["UserPromptSubmit", "allowed"], ["PreToolUse", "denied"], ["PostToolUse", "no"],
        ["PreToolUse", "allowed"], ["PostToolUse", "no"],
    ]  # fmt: skip
    assert code == 1
    events = [json.loads(r.stdin) for r in requests]
    assert events[1]["tool_name"] == "Bash"
    assert events[1]["tool_input"] == {"command": f"rm -rf {ws}/tmp"}
    assert events[1]["tool_use_id"] == "call_1" and events[1]["model"] == "gpt-5.5-codex"
    assert events[2]["tool_input"] == {"command": "git status"}


def audit_line(use: str, event: str, decision: str) -> str:
    return json.dumps({"time": "2026-11-20T10:00:01.000+00:00", "entry": "run",
                       "agent": "claude", "event": event, "toolUseId": use,
                       "hook": {"name": "./guard.sh", "source": "project"},
                       "decision": decision, "reason": "", "status": "completed"})  # fmt: skip


def test_diff_names_the_calls_decided_otherwise_today(
    ws: Path, tmp_path: Path, engine: Callable[..., list[ExecRequest]],
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Last week the guard let `rm -rf` through (recorded: none); today it denies it."""
    claude_hooks(ws)
    engine(claude_guard)
    log = tmp_path / "audit.jsonl"
    log.write_text("\n".join([
        audit_line("toolu_01", "PreToolUse", "none"),
        audit_line("toolu_02", "PreToolUse", "none"),
        "garbage",
    ]) + "\n")  # fmt: skip
    argv = ["check", "--agent", "claude", "--transcript", str(claude_transcript(tmp_path)),
            "--diff", str(log)]  # fmt: skip
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    diffs = [line for line in out.splitlines() if line.startswith("DIFF")]
    assert diffs == ["DIFF line 5 PreToolUse toolu_02: recorded allow (./guard.sh), now block"]
    assert "1 of 2 recorded call(s) decided differently today (3 line(s) not in" in out


def test_transcript_errors_are_one_line(
    ws: Path, tmp_path: Path, engine: Callable[..., list[ExecRequest]],
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    engine(claude_guard)
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"type": "summary"}) + "\n")
    for argv, said in (
        (["--agent", "claude", "--transcript", str(empty)], "no tool call or prompt"),
        (["--agent", "cline", "--transcript", str(empty)], "no transcript format known"),
        (["--agent", "claude", "--transcript", str(tmp_path / "nope")], "cannot read transcript"),
        (["--agent", "claude", "--transcript", str(claude_transcript(tmp_path)),
          "--workspace-map", "relative=/x"], "OLD=NEW, both absolute"),
        (["--agent", "claude", "--transcript", str(claude_transcript(tmp_path)),
          "--diff", str(tmp_path / "none.jsonl")], "no such audit file"),
    ):  # fmt: skip
        assert cli.main(["check", *argv]) == 2
        assert said in capsys.readouterr().err
