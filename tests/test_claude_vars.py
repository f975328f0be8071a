"""Claude Code's variables for a hook, inside the sandbox: what the real 2.1.332 sets
(tests/agents/observed/claude.json; tests/agents/test_claude.py probes it) and what of it
`exec` and `run` hand a sandboxed hook (docs/agents/claude.md: the table)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecResult
from sandboxrun._client import PASSED_ENV
from sandboxrun._dialects.registry import DIALECTS
from sandboxrun._runner.exec import exec_request
from sandboxrun._settings import Settings
from tests.test_claudelike import table, write
from tests.test_cli_unit import (  # noqa: F401 - a shared fixture
    _restore_library_logging,
    engine,
    feed,
)

SESSION = "0b6c7f4e-3f7a-4a8e-9d55-1c2f0e7d9a10"
EVENT = {"session_id": SESSION, "hook_event_name": "PreToolUse", "effort": {"level": "high"},
         "tool_name": "Bash", "tool_input": {"command": "ls"}}  # fmt: skip
# What the real CLI's environment holds when it starts a hook (observed with `claude -p`),
# and what never goes inside: its pid, a host folder, the capability to talk to it.
AGENT_ENV = {
    "AI_AGENT": "claude-code_2-1-332_harness", "CLAUDE_CODE_ENTRYPOINT": "sdk-cli",
    "CLAUDE_CODE_SESSION_ATTENDED": "0", "CLAUDECODE": "1", "CLAUDE_CODE_CHILD_SESSION": "1",
    "CLAUDE_CODE_SESSION_ID": "from-the-environment", "CLAUDE_EFFORT": "max",
    "CLAUDE_PID": "4242", "CLAUDE_CODE_CHILD_NOTES_DIR": "/home/u/.claude/child-notes/x",
    "CLAUDE_CODE_MESSAGING_SOCKET": "/tmp/claude-messaging.sock",
    "CLAUDE_CODE_MESSAGING_TOKEN": "secret-token", "ANTHROPIC_API_KEY": "sk-ant-secret",
}  # fmt: skip
INSIDE = {
    "CLAUDECODE": "1", "CLAUDE_CODE_CHILD_SESSION": "1", "COREPACK_ENABLE_AUTO_PIN": "0",
    "NoDefaultCurrentDirectoryInExePath": "1", "CLAUDE_CODE_SESSION_ID": SESSION,
    "CLAUDE_EFFORT": "high",
}  # fmt: skip


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    return tmp_path / "ws"


@pytest.fixture
def cwd(ws: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ws)
    return ws


PASSED = {k: AGENT_ENV[k] for k in ("AI_AGENT", "CLAUDE_CODE_ENTRYPOINT",
                                    "CLAUDE_CODE_SESSION_ATTENDED")}  # fmt: skip
NEVER = ("CLAUDE_PID", "CLAUDE_CODE_CHILD_NOTES_DIR", "CLAUDE_CODE_MESSAGING_SOCKET",
         "CLAUDE_CODE_MESSAGING_TOKEN")  # fmt: skip


def claude_env(env: dict[str, str]) -> dict[str, str]:
    """The variables of a request that are Claude Code's own (not the project's)."""
    ours = {*AGENT_ENV, *INSIDE}
    return {k: v for k, v in env.items() if k in ours}


def exec_env(ws: Path, event: dict[str, Any], environ: dict[str, str], agent: str = "claude"):
    event = {**event, "cwd": str(ws)}
    request = exec_request(Settings(agent=agent), ["hook"], json.dumps(event).encode(), None,
                           environ, cwd=str(ws))  # fmt: skip
    return request.env


def test_exec_gives_a_claude_hook_the_variables_claude_sets_and_nothing_of_the_host(
    home: Path, ws: Path
) -> None:
    """The session's from the event (never the environment's), the constants, the names
    the agent's environment holds when allowed; never its pid, a host folder, the
    messaging socket and token, nor anything else of the agent's environment."""
    env = exec_env(ws, EVENT, AGENT_ENV)
    assert claude_env(env) == {**INSIDE, **PASSED}
    assert env["CLAUDE_PROJECT_DIR"] == str(ws)
    assert not [k for k in NEVER if k in env]
    assert "secret" not in json.dumps(env)


def test_run_gives_a_claude_hook_the_variables_of_its_event(
    home: Path, cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    engine: Any,  # noqa: F811 - the shared fixture
) -> None:  # fmt: skip
    """`run` (the forwarders of `install --managed`) has the event, not the agent's
    environment: the session's variables and the constants, none of the environment's."""
    write(cwd / ".claude/settings.json", {"hooks": table("guard.sh")})
    seen = engine(default=ExecResult(0, b"", b"", 3))
    feed(monkeypatch, json.dumps({**EVENT, "cwd": str(cwd)}))
    for name, value in AGENT_ENV.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["run", "PreToolUse", "--agent", "claude"]) == 0
    (request,) = seen.requests
    assert claude_env(dict(request.env)) == INSIDE


def test_claude_effort_is_unset_where_the_event_has_none(home: Path, ws: Path) -> None:
    """Claude Code sets CLAUDE_EFFORT from `effort.level`, only on the events that carry
    one (tool events, Stop): not on UserPromptSubmit, nor empty."""
    event = {"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    env = exec_env(ws, event, {})
    assert "CLAUDE_EFFORT" not in env
    assert env["CLAUDE_CODE_SESSION_ID"] == SESSION


@pytest.mark.parametrize(
    "value", ["a\nINJECTED=1", "x" * 257, "two words", "", 42, None, ["s"], {"level": "x"}]
)
def test_a_claude_session_variable_holds_an_identifier_or_is_unset(
    home: Path, ws: Path, value: Any
) -> None:
    """The event and the environment a repository's hook runs with are the repository's to
    shape: a value that is not allowed is unset inside, never passed as is."""
    event = {"session_id": value, "effort": {"level": value}}
    environ = {k: value for k in PASSED} if isinstance(value, str) else {}
    env = exec_env(ws, event, environ)
    assert claude_env(env) == {k: v for k, v in INSIDE.items()
                               if k not in ("CLAUDE_CODE_SESSION_ID", "CLAUDE_EFFORT")}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "value"),
    [("AI_AGENT", "cursor"), ("AI_AGENT", "claude-code_2-1-332_harness/../x"),
     ("AI_AGENT", "claude-code_2-1-332_other"), ("CLAUDE_CODE_ENTRYPOINT", "/usr/bin/claude"),
     ("CLAUDE_CODE_ENTRYPOINT", "CLI"), ("CLAUDE_CODE_SESSION_ATTENDED", "yes"),
     ("CLAUDE_CODE_SESSION_ATTENDED", "10")],
)  # fmt: skip
def test_an_environment_variable_goes_inside_only_from_its_allow_list(
    home: Path, ws: Path, name: str, value: str
) -> None:
    """AI_AGENT is Claude's own name for itself (a user's other agent's value stays the
    user's), the entry point a short name, SESSION_ATTENDED 0 or 1."""
    assert name not in exec_env(ws, EVENT, {name: value})


@pytest.mark.parametrize("agent", ["qoder", "qoder-cn"])
def test_qoder_gets_none_of_claudes_variables(home: Path, ws: Path, agent: str) -> None:
    """Qoder and Qoder CN share the dialect, not Claude Code's variables."""
    assert claude_env(exec_env(ws, EVENT, AGENT_ENV, agent)) == {}


def test_serve_is_handed_every_variable_exec_may_pass_on() -> None:
    """Through `serve`, the client's environment is all exec reads of the agent's: it
    carries every variable a dialect passes on (`passed_vars`), else a warm hook would
    miss what a cold one gets."""
    passed = {var for d in DIALECTS.values() for var, _ in getattr(d, "passed_vars", ())}
    assert passed and passed <= set(PASSED_ENV)
