"""The observation's own rules (observe.py), on made-up records: no agent runs here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from . import observe

PROJECT = Path("/home/u/project")


def record(event: str, start: float, **more: Any) -> dict[str, Any]:
    stdin = json.dumps(more.pop("stdin", {"hook_event_name": event}))
    return {"event": event, "start": start, "stdin": stdin, "cwd": str(PROJECT),
            "env": {"HOME": "/home/u"}, **more}  # fmt: skip


@pytest.mark.parametrize(
    ("went_on", "ended", "unit"),
    [
        (100.4, None, "milliseconds"),  # killed at once: the agent went on in no time
        (101.9, None, "milliseconds"),  # ... with a slow tool run after it
        (103.6, None, "seconds"),  # after about 4 s (the first hook's start was late)
        (104.2, None, "seconds"),  # went on after 4 s, the hook never finished
        (104.2, 108.5, "seconds"),  # ... or finished after the agent had gone on
        (108.3, 108.1, "not enforced"),  # the agent waited for the hook's end
    ],
)
def test_the_timeout_unit_is_read_from_when_the_agent_went_on(
    went_on: float, ended: float | None, unit: str
) -> None:
    records = [record("SessionStart", 99.0), record("PreToolUse", 100.0),
               record("PostToolUse", went_on), record("Stop", went_on + 1)]  # fmt: skip
    assert observe.timeout_unit(records, "PreToolUse", ended) == (unit, went_on - 100.0)


def test_no_unit_without_a_hook_on_the_timed_event_or_after_it() -> None:
    with pytest.raises(AssertionError, match="no hook ran on PreToolUse"):
        observe.timeout_unit([record("Stop", 1.0)], "PreToolUse", None)
    with pytest.raises(AssertionError, match="no hook ran after PreToolUse"):
        observe.timeout_unit([record("SessionStart", 0.5), record("PreToolUse", 1.0)],
                             "PreToolUse", None)  # fmt: skip


def test_fields_variables_and_cwd_are_described_without_their_values() -> None:
    stdin = {"session_id": "abc", "tool_input": {"command": "rm -r victim", "n": 1},
             "transcript_path": None, "flags": [1], "ok": True}  # fmt: skip
    env = {"HOME": "/home/u", "PWD": str(PROJECT), "AGENT_DIR": str(PROJECT),
           "AGENT_FILE": f"{PROJECT}/x", "AGENT_TOKEN": "s3cret", "AGENT_EMPTY": ""}  # fmt: skip
    records = [record("PreToolUse", 1.0, stdin=stdin, env=env),
               record("PreToolUse", 2.0, stdin={"session_id": 7}, env=env, cwd="/tmp")]  # fmt: skip
    described = observe.described(records, {"HOME"}, PROJECT)
    assert described == {"PreToolUse": {
        "cwd": ".|other",
        "stdin": {"flags": "array", "ok": "boolean", "session_id": "number|string",
                  "tool_input": "object", "tool_input.command": "string",
                  "tool_input.n": "number", "transcript_path": "null"},
        "variables": {"AGENT_DIR": "project", "AGENT_EMPTY": "empty",
                      "AGENT_FILE": "in-project", "AGENT_TOKEN": "set"},
    }}  # fmt: skip
    assert "s3cret" not in json.dumps(described)


def test_stdin_that_is_not_an_object_is_named_so() -> None:
    assert observe.fields("not json") == [("(stdin)", "not JSON")]
    assert observe.fields("[1]") == [("(stdin)", "array")]
