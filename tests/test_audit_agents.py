"""The audit trail's event and decision for every agent of the registry (issue 30, item
2): a guard's deny, in its agent's own form, through `exec` (as `install` writes it: the
agent's event on stdin, the command after `--`) and through `run`, is recorded with the
event it ran for and `block`. Before, `exec` guessed the event's name from a list of
fields (Copilot's camelCase events carry none: `event: ""`), read the answer for that
guess, and recorded Copilot's JSON deny as `decision: none`.
FakeBackend: protocol logic only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecResult, Settings
from sandboxrun._audit.log import read_lines
from sandboxrun._dialects.registry import DIALECTS
from sandboxrun._runner.exec import ExecOutput, audit_exec
from tests.test_answer_agent import _exec_result, case
from tests.test_cli_unit import engine, feed, ws  # noqa: F401

TOOL = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
# The tool call in an agent's own fields, where they are not Claude's (by dialect class).
TOOLS = {"CopilotDialect": {"toolName": "bash", "toolArgs": '{"command": "rm -rf /"}'}}


def _config(home: Path) -> tuple[Path, Path]:
    log = home / "audit" / "audit.jsonl"
    config = home / "config.toml"
    config.write_text(f'audit_log = "{log}"\n')
    return config, log


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in read_lines([str(log)])]


def _stdin(agent: str, event: str, root: Path) -> bytes:
    """The event as the agent hands it to one of its hooks (`prepare_input`: its own
    fields; Copilot's camelCase payload names no event)."""
    dialect = DIALECTS[agent]
    tool = TOOLS.get(type(dialect).__name__, TOOL)
    return dialect.prepare_input(event, {"cwd": str(root), **tool}, [str(root)])


@pytest.mark.parametrize("agent", list(DIALECTS))
def test_exec_records_a_guards_deny_with_its_event(
    agent: str, home: Path, ws: Path, engine, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:  # fmt: skip
    event, _, deny, _ = case(agent)
    config, log = _config(home)
    engine(default=_exec_result(deny))
    feed(monkeypatch, _stdin(agent, event, ws))
    cli.main(["exec", "--no-serve", "--config", str(config), "--agent", agent, "--", "g"])
    [record] = _records(log)
    assert (record["event"], record["decision"]) == (event, "block"), record
    assert record["reason"].endswith("no"), record  # (Kiro's names the hook first)


@pytest.mark.parametrize("agent", list(DIALECTS))
def test_run_records_a_guards_deny_with_its_event(
    agent: str, home: Path, tmp_path: Path, ws: Path, engine, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:  # fmt: skip
    event, config_of, deny, _ = case(agent)
    config, log = _config(home)
    explicit = config_of(tmp_path / "hooks")
    engine(default=_exec_result(deny))
    feed(monkeypatch, json.dumps({"cwd": str(ws), "working_dir": str(ws), **TOOL}))
    cli.main(["run", event, "--no-serve", "--config", str(config), "--agent", agent,
              "--workspace", str(ws), "--hooks-dir", str(explicit)])  # fmt: skip
    [record] = _records(log)
    assert (record["event"], record["decision"]) == (event, "block"), record


def _audited(home: Path, stdin: bytes, event_name: str | None = None) -> dict[str, Any]:
    config, log = _config(home)
    settings = Settings.load(config=str(config), agent="copilot")
    deny = b'{"permissionDecision": "deny", "permissionDecisionReason": "no"}'
    out = ExecOutput(deny, b"", 0, result=ExecResult(0, deny, b"", 3))
    audit_exec(settings, None, stdin, ["g"], False, out, 0.0, False, event_name)
    [record] = _records(log)
    return record


def test_an_event_the_caller_names_wins(home: Path) -> None:
    """A wrapper that names its event (Copilot's `exec --event NAME`, to come): the
    audit's exec path takes it over what the payload's fields suggest."""
    stdin = json.dumps({"sessionId": "s", "toolName": "bash", "toolArgs": "{}"}).encode()
    record = _audited(home, stdin, "permissionRequest")
    # permissionRequest reads `behavior`, not permissionDecision: no decision of its own
    assert (record["event"], record["decision"]) == ("permissionRequest", "none")


def test_an_event_nothing_names_is_recorded_unknown(home: Path) -> None:
    record = _audited(home, json.dumps({"sessionId": "s", "cwd": "/w"}).encode())
    assert record["event"] == "unknown"


def test_exec_event_names_the_audited_event(
    home: Path, ws: Path, engine, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:  # fmt: skip
    """`exec --event NAME` (what `install --agent copilot` writes) is the event the audit
    records, whatever the payload's fields suggest."""
    config, log = _config(home)
    deny = b'{"permissionDecision": "deny", "permissionDecisionReason": "no"}'
    engine(default=ExecResult(0, deny, b"", 3))
    feed(monkeypatch, json.dumps({"sessionId": "s", "cwd": str(ws)}).encode())
    cli.main(["exec", "--no-serve", "--config", str(config), "--agent", "copilot",
              "--event", "preToolUse", "--", "g"])  # fmt: skip
    [record] = _records(log)
    assert (record["event"], record["decision"]) == ("preToolUse", "block"), record


# Cline's tool events, as each engine sends them: the CLI's (3.0.65) names its call.
CLINE_CLI = {"hookName": "tool_call", "taskId": "conv_1",
             "tool_call": {"id": "call_1", "name": "run_commands", "input": {"commands": ["ls"]}},
             "preToolUse": {"toolName": "run_commands", "parameters": {"commands": '["ls"]'}}}  # fmt: skip
CLINE_EXTENSION = {"hookName": "PreToolUse", "taskId": "task-1",
                   "preToolUse": {"toolName": "execute_command", "parameters": {"command": "ls"}}}  # fmt: skip


@pytest.mark.parametrize(
    ("hook", "event", "tool"),
    [("tool_call", CLINE_CLI, ("conv_1", "run_commands", "call_1")),
     ("PreToolUse", CLINE_EXTENSION, ("task-1", "execute_command", None))],
    ids=["cli", "extension"],
)  # fmt: skip
@pytest.mark.parametrize("entry", ["run", "exec"])
def test_cline_records_its_tool_call(
    hook: str, event: dict[str, Any], tool: tuple[Any, ...], entry: str, home: Path,
    ws: Path, tmp_path: Path, engine, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:  # fmt: skip
    """The Cline CLI's tool call id (`tool_call.id`) is the audit's `toolUseId`; it was
    null. The extension names no call."""
    config, log = _config(home)
    engine(default=ExecResult(0, b'{"cancel": true, "errorMessage": "no"}', b"", 3))
    feed(monkeypatch, json.dumps({**event, "workspaceRoots": [str(ws)]}))
    common = ["--no-serve", "--config", str(config), "--agent", "cline"]
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "PreToolUse").write_text("#!/bin/sh\n")
    if entry == "run":
        cli.main(["run", hook, *common, "--hooks-dir", str(hooks)])
    else:
        cli.main(["exec", *common, "--", "g"])
    [record] = _records(log)
    assert (record["sessionId"], record["toolName"], record["toolUseId"]) == tool, record
    assert record["decision"] == "block", record  # exec read a `tool_call` cancel as none
