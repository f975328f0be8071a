"""Nothing of sandboxrun's in what the model reads as a hook's answer (issue 30, item 2).
Gemini CLI (and Qwen Code, its fork) hands the model a blocking hook's stderr as the
reason (`Tool execution blocked: <stderr>`, from `stdout.trim() || stderr.trim()` after
exit 2 or more); the Claude family hands it the stderr of an exit 2. The real Gemini
CLI showed the model `/usr/bin/env: '…': No such file or directory\\nsandboxrun:
something the hook needs is not in the sandbox…`. Now: a command or interpreter the host
has and the sandbox lacks is a sandbox failure (the dialect's wrapper failure: for
Gemini exit 1, a warning the user sees; a block under fail-closed), and sandboxrun's
lines (hints, notes, its log) go after a hook's stderr only where the agent does not read
it as the answer. FakeBackend: protocol logic only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecResult
from sandboxrun._dialects.gemini.dialect import BLOCKING, GEMINI, read_output
from sandboxrun._runner.exec import may_add_lines
from tests.test_cli_unit import engine, feed, ws  # noqa: F401

EVENT = {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
         "tool_input": {"command": "rm -rf build"}}  # fmt: skip
TOOL = "sr-host-only-tool"  # on the host's PATH in these tests, never in an image


def gemini_model_reads(code: int, stdout: bytes, stderr: bytes) -> str:
    """What Gemini CLI hands the model of one hook's run: a deny's reason (BeforeTool's
    `Tool execution blocked: ...`), a stop's reason, added context (the user's
    systemMessage is not the model's)."""
    output, _, _ = read_output(stdout, stderr, code)
    if not output:
        return ""
    said = []
    if output.get("decision") in BLOCKING or output.get("continue") is False:
        said += [str(output.get("reason") or ""), str(output.get("stopReason") or "")]
    specific = output.get("hookSpecificOutput")
    if isinstance(specific, dict):
        said.append(str(specific.get("additionalContext") or ""))
    return "\n".join(s for s in said if s)


@pytest.fixture
def host_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An executable `TOOL` on this process's PATH (the host has it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / TOOL).write_text("#!/bin/sh\n")
    (bin_dir / TOOL).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return TOOL


def _exec(agent: str, result: ExecResult, engine, monkeypatch, capsysbinary, *options: str):  # type: ignore[no-untyped-def]  # noqa: F811
    engine(default=result)
    feed(monkeypatch, json.dumps(EVENT))
    code = cli.main(["exec", "--no-serve", "--agent", agent, *options, "--", "./hook.rb"])
    out, err = capsysbinary.readouterr()
    return code, out, err


def _missing(name: str) -> ExecResult:
    return ExecResult(127, b"", f"/usr/bin/env: '{name}': No such file or directory\n".encode(), 3)


def test_an_interpreter_the_host_has_is_a_warning_not_the_models_deny(
    host_tool: str, ws: Path, engine: Any, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any  # noqa: F811
) -> None:  # fmt: skip
    code, out, err = _exec("gemini", _missing(host_tool), engine, monkeypatch, capsysbinary)
    assert code == 1 and out == b""  # Gemini's own warning: the tool runs
    assert gemini_model_reads(code, out, err) == ""
    assert b"sandboxrun: the hook cannot start" in err  # the user's warning says why
    assert host_tool.encode() in err


def test_under_fail_closed_it_is_the_dialects_block(
    host_tool: str, ws: Path, engine: Any, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any  # noqa: F811
) -> None:  # fmt: skip
    code, out, err = _exec("gemini", _missing(host_tool), engine, monkeypatch, capsysbinary,
                           "--fail-closed")  # fmt: skip
    assert code == 2 and out == b""
    assert GEMINI.wrapper_failure("x", True)[2] == code
    assert "sandboxrun (fail-closed)" in gemini_model_reads(code, out, err)  # its block


def test_a_hook_that_fails_the_same_way_unsandboxed_follows_geminis_rule(
    ws: Path, engine: Any, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any  # noqa: F811
) -> None:  # fmt: skip
    """Not on the host either: its exit 127 is its own (Gemini denies with its text),
    and no line of sandboxrun's (the hint) joins that text."""
    missing = _missing("sr-nowhere-tool")
    code, out, err = _exec("gemini", missing, engine, monkeypatch, capsysbinary)
    assert (code, out, err) == (127, b"", missing.stderr)
    assert "sandboxrun" not in gemini_model_reads(code, out, err)


@pytest.mark.parametrize("agent", ["gemini", "qwen", "claude"])
def test_no_hint_joins_a_blocking_stderr(
    agent: str, ws: Path, engine: Any, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any  # noqa: F811
) -> None:  # fmt: skip
    """A guard that blocks with exit 2 after a write the sandbox stopped: the agent hands
    its stderr to the model; the hint goes to the log only."""
    stderr = b"cannot log: Read-only file system\nrm -rf is not allowed\n"
    code, out, err = _exec(agent, ExecResult(2, b"", stderr, 3), engine, monkeypatch,
                           capsysbinary)  # fmt: skip
    assert (code, out, err) == (2, b"", stderr)


def test_a_hint_still_joins_a_warning_the_user_reads(
    ws: Path, engine: Any, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any  # noqa: F811
) -> None:  # fmt: skip
    """Exit 1 with text: Gemini's warning (a systemMessage, the user's): the hint is said."""
    stderr = b"cannot log: Read-only file system\n"
    code, out, err = _exec("gemini", ExecResult(1, b"", stderr, 3), engine, monkeypatch,
                           capsysbinary)  # fmt: skip
    assert code == 1 and err.startswith(stderr) and b"sandboxrun: the sandbox stopped" in err
    assert gemini_model_reads(code, out, err) == ""


@pytest.mark.parametrize(
    ("stdout", "stderr", "code", "may"),
    [
        (b"", b"denied", 2, False),  # the deny's reason
        (b"", b"denied", 127, False),
        (b"", b"", 0, False),  # any text would be a message
        (b"", b'{"decision": "deny"}', 0, False),  # JSON: a line more makes it text
        (b"", b"warning", 1, True),  # the user's systemMessage
        (b"", b"note", 0, True),
        (b'{"decision": "deny", "reason": "r"}', b"", 2, True),  # stdout is the answer
    ],
)
def test_gemini_lines_only_where_the_model_does_not_read_them(
    stdout: bytes, stderr: bytes, code: int, may: bool
) -> None:
    assert may_add_lines("gemini", stdout, stderr, code) is may


@pytest.mark.parametrize(("agent", "code"), [("claude", 2), ("qwen", 2), ("codex", 2),
                                             ("windsurf", 2), ("kiro", 2), ("crush", 49)])  # fmt: skip
def test_stderr_read_as_a_block_gets_no_line(agent: str, code: int) -> None:
    assert may_add_lines(agent, b"", b"no", code) is False
    assert may_add_lines(agent, b"", b"oops", 1) is True
