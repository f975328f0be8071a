"""`run --answer agent` for every agent of the registry (issue 29, item 5): a guard's
deny, in its agent's own form, comes out of `run --answer agent` as that agent's deny,
read back with the agent's own reading (its dialect's `interpret` and `combine`); a
guard's allow stays an allow. Before, every agent the answer module did not name
(Cursor, Kiro, Goose, Crush) got Cline's fields: `{}`, an allow."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecResult, HookSpec
from sandboxrun._dialects import base
from sandboxrun._dialects.registry import DIALECTS
from sandboxrun._errors import ConfigError
from sandboxrun._install.answer import answer_form
from sandboxrun._install.cline import shim_text
from sandboxrun._install.managed import forwarder
from sandboxrun._runner.reply import agent_answer, error_answer
from sandboxrun._types import CombinedResult
from tests.test_cli_unit import engine, feed, ws  # noqa: F401

Config = Callable[[Path], Path]  # writes the agent's config of one hook `g` under a folder


def _json(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return path


def _claude_like(event: str) -> Config:
    group = {"matcher": "", "hooks": [{"type": "command", "command": "g"}]}
    return lambda d: _json(d / "settings.json", {"hooks": {event: [group]}})


def _cline(executable: bool) -> Config:
    def write(d: Path) -> Path:
        (d / "hooks").mkdir(parents=True)
        (d / "hooks" / "PreToolUse").write_text("#!/bin/sh\n")
        (d / "hooks" / "PreToolUse").chmod(0o755 if executable else 0o644)
        return d / "hooks"

    return write


def _goose(d: Path) -> Path:
    entry = {"hooks": [{"command": "g"}]}
    _json(d / "p" / "hooks" / "hooks.json", {"hooks": {"PreToolUse": [entry]}})
    return d / "p"


# Per dialect class: the event, the config, a guard's deny and allow in the agent's own
# form (exit code, stdout, stderr). A new agent's class without a row fails the test.
CASES: dict[str, tuple[str, Config | None, tuple[int, Any, str], tuple[int, Any, str]]] = {
    "ClineDialect": ("PreToolUse", None, (0, {"cancel": True, "errorMessage": "no"}, ""),
                     (0, {"cancel": False}, "")),
    "ClaudeDialect": ("PreToolUse", _claude_like("PreToolUse"), (2, "", "no"),
                      (0, {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                  "permissionDecision": "allow",
                                                  "permissionDecisionReason": "ok"}}, "")),
    "CursorDialect": ("preToolUse",
                      lambda d: _json(d / "hooks.json",
                                      {"version": 1, "hooks": {"preToolUse": [{"command": "g"}]}}),
                      (0, {"permission": "deny", "user_message": "no"}, ""),
                      (0, {"permission": "allow"}, "")),
    "CopilotDialect": ("preToolUse",
                       lambda d: _json(d / "hooks.json", {"version": 1, "hooks": {
                           "preToolUse": [{"type": "command", "bash": "g"}]}}),
                       (0, {"permissionDecision": "deny", "permissionDecisionReason": "no"}, ""),
                       (0, {"permissionDecision": "allow"}, "")),
    "GeminiDialect": ("BeforeTool", _claude_like("BeforeTool"),
                      (0, {"decision": "deny", "reason": "no"}, ""), (0, {"decision": "allow"}, "")),
    "GooseDialect": ("PreToolUse", _goose, (0, {"decision": "block", "reason": "no"}, ""),
                     (0, {"decision": "allow"}, "")),
    "CrushDialect": ("PreToolUse",
                     lambda d: _json(d / "crush.json", {"hooks": {"PreToolUse": [{"command": "g"}]}}),
                     (0, {"decision": "deny", "reason": "no"}, ""), (0, {"decision": "allow"}, "")),
    "WindsurfDialect": ("pre_run_command",
                        lambda d: _json(d / "hooks.json",
                                        {"hooks": {"pre_run_command": [{"command": "g"}]}}),
                        (2, "", "no"), (0, "", "")),
    "KiroDialect": ("preToolUse",
                    lambda d: _json(d / "a.json",
                                    {"name": "a", "hooks": {"preToolUse": [{"command": "g"}]}}),
                    (2, "", "no"), (0, "", "")),
}  # fmt: skip


def case(agent: str) -> tuple[str, Config, tuple[int, Any, str], tuple[int, Any, str]]:
    dialect = DIALECTS[agent]
    event, config, deny, allow = CASES[type(dialect).__name__]
    if config is None:  # Cline's family: its hook folder, as its variant finds a file
        config = _cline(executable=getattr(dialect, "variant", "") == "vscode")
    return event, config, deny, allow


def _exec_result(given: tuple[int, Any, str]) -> ExecResult:
    code, out, err = given
    stdout = out.encode() if isinstance(out, str) else json.dumps(out).encode()
    return ExecResult(code, stdout, err.encode(), 1)


def read_back(agent: str, event: str, code: int, stdout: bytes, stderr: bytes) -> bool:
    """Whether the agent blocks on what `run --answer agent` said, by its own reading."""
    dialect = DIALECTS[agent]
    spec = HookSpec(hook_name=event, name="sandboxrun", source="user", argv=("sandboxrun",),
                    workdir="/", mounts=())  # fmt: skip
    outcome = dialect.interpret(spec, ExecResult(code, stdout, stderr, 1), 30.0, True)
    combined = dialect.combine([outcome], False)
    return bool(combined.get("blocked", combined.get("cancel")))


Answered = Callable[[str, tuple[int, Any, str]], tuple[int, bytes, bytes]]


@pytest.fixture
def answered(tmp_path: Path, ws: Path, engine, monkeypatch, capsys) -> Answered:  # type: ignore[no-untyped-def]  # noqa: F811
    """`answered(agent, guard)`: (exit code, stdout, stderr) of `run --answer agent` with
    `guard`'s (exit code, stdout, stderr) as the one hook's run (the fake engine)."""

    def run(agent: str, guard: tuple[int, Any, str]) -> tuple[int, bytes, bytes]:
        event, config, _, _ = case(agent)
        explicit = config(tmp_path / "config")
        engine(default=_exec_result(guard))
        feed(monkeypatch, json.dumps({"cwd": str(ws), "tool_name": "Bash", "working_dir": str(ws),
                                      "tool_input": {"command": "rm -rf /"}}))  # fmt: skip
        code = cli.main(["run", event, "--agent", agent, "--answer", "agent", "--workspace",
                         str(ws), "--hooks-dir", str(explicit), "--no-serve"])  # fmt: skip
        out, err = capsys.readouterr()
        return code, out.encode(), err.encode()

    return run


@pytest.mark.parametrize("agent", list(DIALECTS))
def test_a_guards_deny_stays_the_agents_deny(agent: str, answered: Answered) -> None:
    event, _, deny, _ = case(agent)
    code, out, err = answered(agent, deny)
    assert read_back(agent, event, code, out, err), (agent, code, out, err)


@pytest.mark.parametrize("agent", list(DIALECTS))
def test_a_guards_allow_stays_an_allow(agent: str, answered: Answered) -> None:
    event, _, _, allow = case(agent)
    code, out, err = answered(agent, allow)
    assert not read_back(agent, event, code, out, err), (agent, code, out, err)


GUARDS = [(2, "", "no"), (1, "", "oops"), (0, "", ""), (0, "not json", ""), (49, "", "halt")]


@pytest.mark.parametrize("guard", GUARDS, ids=["exit2", "exit1", "silent", "garbage", "exit49"])
@pytest.mark.parametrize("agent", list(DIALECTS))
def test_the_agent_blocks_on_the_answer_exactly_when_it_blocks_on_the_guard(
    agent: str, guard: tuple[int, Any, str], answered: Answered
) -> None:
    """Whatever the agent makes of the guard run bare (exit 2, a crash, silence, text),
    it makes the same of `run --answer agent` running it."""
    event = case(agent)[0]
    bare = _exec_result(guard)
    expected = read_back(agent, event, guard[0], bare.stdout, bare.stderr)
    code, out, err = answered(agent, guard)
    assert read_back(agent, event, code, out, err) is expected, (code, out, err)


@pytest.mark.parametrize("agent", list(DIALECTS))
def test_fail_closed_blocks_a_failed_guard_in_the_agents_terms(agent: str) -> None:
    """Under fail-closed, a hook that failed blocks, read back as the agent reads it."""
    dialect = DIALECTS[agent]
    event = case(agent)[0]
    spec = HookSpec(hook_name=event, name="g", source="user", argv=("g",), workdir="/",
                    mounts=())  # fmt: skip
    failed = dialect.interpret(spec, ExecResult(None, b"", b"", 1, start_error="gone"), 30.0)
    combined = CombinedResult(dialect.combine([failed], True), (failed,))
    out = agent_answer(dialect, event, combined)
    assert read_back(agent, event, out.exit_code, out.stdout, out.stderr), out


@pytest.mark.parametrize("agent", list(DIALECTS))
def test_an_error_of_ours_blocks_only_under_fail_closed(agent: str) -> None:
    """No engine, a bad config: the dialect's wrapper failure (Kiro read the JSON that
    was printed for it at exit 0 as context: an allow)."""
    dialect, event = DIALECTS[agent], case(agent)[0]
    closed = error_answer(dialect, True, "no engine")
    assert read_back(agent, event, closed.exit_code, closed.stdout, closed.stderr), closed
    opened = error_answer(dialect, False, "no engine")
    assert not read_back(agent, event, opened.exit_code, opened.stdout, opened.stderr), opened
    assert b"no engine" in closed.stderr + closed.stdout and b"no engine" in opened.stderr


class _Mute:
    """A dialect with no answer form: Cline's, but for `agent_answer` (the default)."""

    agent = "mute"
    hook_names = ("PreToolUse",)

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    agent_answer = staticmethod(base.no_answer_form)


@pytest.mark.parametrize("agent", ["claude", "cline"])
def test_an_agent_without_an_answer_form_is_refused_with_a_block(
    agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal is the dialect's wrapper failure under fail-closed (a block in its
    terms) and one stderr line naming the agent; install writes no such hook for it."""
    mute = _Mute(DIALECTS[agent])
    monkeypatch.setitem(DIALECTS, "mute", mute)  # type: ignore[arg-type]
    allow = DIALECTS[agent].combine([], False)
    out = agent_answer(mute, "PreToolUse", CombinedResult(allow, ()))  # type: ignore[arg-type]
    assert b"no answer form for agent mute" in out.stderr
    assert len(out.stderr.splitlines()) == 1
    assert read_back(agent, "PreToolUse", out.exit_code, out.stdout, out.stderr)
    with pytest.raises(ConfigError, match="mute"):
        answer_form("mute")
    with pytest.raises(ConfigError, match="mute"):
        forwarder(["sandboxrun"], "PreToolUse", [], agent="mute")
    with pytest.raises(ConfigError, match="mute"):
        shim_text(["sandboxrun"], "mute", "PreToolUse", [])


def test_every_agent_has_an_answer_form() -> None:
    for agent in DIALECTS:
        answer_form(agent)
