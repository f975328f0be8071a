"""Cline hook input: what prepare_input writes on the hook's stdin."""

from __future__ import annotations

import json
import time

import pytest

from sandboxrun._dialects.cline import CARETI, CLINE

ROOTS = ["/work/a", "/work/b"]
PAYLOAD = {"toolName": "execute_command", "parameters": {"command": "ls", "requires_approval": ""}}


def decode(data: bytes) -> dict[str, object]:
    """The JSON object a hook would read."""
    doc = json.loads(data)
    assert isinstance(doc, dict)
    return doc


def full_event() -> dict[str, object]:
    """A complete PreToolUse event, as Cline sends it."""
    return {
        "clineVersion": "3.36.0",
        "hookName": "PreToolUse",
        "timestamp": "1700000000123",
        "taskId": "task-1",
        "workspaceRoots": ["/work/a", "/work/b"],
        "userId": "user-9",
        "model": {"provider": "anthropic", "slug": "claude"},
        "preToolUse": PAYLOAD,
    }


def test_fills_hook_name_timestamp_and_workspace_roots() -> None:
    """Missing hookName, timestamp and workspaceRoots are filled in."""
    before = int(time.time() * 1000)
    doc = decode(CLINE.prepare_input("PreToolUse", {"preToolUse": PAYLOAD}, ROOTS))
    after = int(time.time() * 1000)
    assert doc["hookName"] == "PreToolUse"
    assert doc["workspaceRoots"] == ROOTS
    stamp = doc["timestamp"]
    assert isinstance(stamp, str) and stamp.isdigit()
    assert before <= int(stamp) <= after


@pytest.mark.parametrize("empty", [None, "", []])
def test_empty_values_are_filled_too(empty: object) -> None:
    """A null or empty hookName/timestamp/workspaceRoots is filled like a missing one."""
    event = {"hookName": empty, "timestamp": empty, "workspaceRoots": empty}
    doc = decode(CLINE.prepare_input("PostToolUse", event, ROOTS))
    assert doc["hookName"] == "PostToolUse"
    assert doc["workspaceRoots"] == ROOTS
    assert isinstance(doc["timestamp"], str) and doc["timestamp"].isdigit()


def test_absent_optional_fields_stay_absent() -> None:
    """clineVersion, taskId and userId are not invented when the event lacks them."""
    doc = decode(CLINE.prepare_input("PreToolUse", {}, ROOTS))
    assert set(doc) == {"hookName", "timestamp", "workspaceRoots"}


def test_given_values_are_kept() -> None:
    """Values the event carries are passed through unchanged."""
    event = full_event()
    doc = decode(CLINE.prepare_input("PreToolUse", event, ROOTS))
    assert doc == event


def test_compact_json_without_trailing_newline() -> None:
    """The input is compact JSON (no spaces between tokens) and ends without a newline."""
    data = CLINE.prepare_input("PreToolUse", full_event(), ROOTS)
    assert data == json.dumps(full_event(), separators=(",", ":")).encode()
    assert not data.endswith(b"\n")
    assert b", " not in data and b": " not in data


def test_non_ascii_is_utf8_not_escaped() -> None:
    """Non-ASCII text is written as UTF-8, as Node's JSON.stringify does."""
    event = {"userPromptSubmit": {"prompt": "héllo ✓"}}
    data = CLINE.prepare_input("UserPromptSubmit", event, ROOTS)
    assert "héllo ✓".encode() in data
    assert decode(data)["userPromptSubmit"] == {"prompt": "héllo ✓"}


def test_field_order_common_fields_first_then_the_rest() -> None:
    """clineVersion, hookName, timestamp, taskId, workspaceRoots, userId, then the rest."""
    event = {
        "model": {"provider": "p", "slug": "s"},
        "preToolUse": PAYLOAD,
        "userId": "u",
        "workspaceRoots": ["/r"],
        "taskId": "t",
        "timestamp": "1",
        "hookName": "PreToolUse",
        "clineVersion": "3.36.0",
    }
    doc = decode(CLINE.prepare_input("PreToolUse", event, ROOTS))
    assert list(doc) == [
        "clineVersion",
        "hookName",
        "timestamp",
        "taskId",
        "workspaceRoots",
        "userId",
        "model",
        "preToolUse",
    ]


def test_filled_fields_take_their_place_in_the_order() -> None:
    """Filled-in fields sit in Cline's order, before the event's other fields."""
    event = {"taskId": "t", "model": "unknown", "preToolUse": PAYLOAD}
    doc = decode(CLINE.prepare_input("PreToolUse", event, ROOTS))
    assert list(doc) == ["hookName", "timestamp", "taskId", "workspaceRoots", "model", "preToolUse"]


def test_model_comes_before_the_payload_whatever_the_event_order() -> None:
    """The hook object is last: `model` precedes the payload even if the event lists it after."""
    event = {"hookName": "PreToolUse", "preToolUse": PAYLOAD, "model": {"provider": "p"}}
    doc = decode(CLINE.prepare_input("PreToolUse", event, ROOTS))
    assert list(doc)[-2:] == ["model", "preToolUse"]


def test_payload_is_preserved_exactly() -> None:
    """The hook's payload object and any unknown top-level fields pass through untouched."""
    payload = {
        "toolName": "write_to_file",
        "parameters": {"path": "a b/ü.txt", "content": 'x\n"y"\t{z}'},
        "result": "",
        "success": False,
        "executionTimeMs": 0,
        "nested": {"deep": [1, 2.5, None, True, {"k": []}]},
    }
    event = {"postToolUse": payload, "somethingNew": [1, {"a": None}]}
    doc = decode(CLINE.prepare_input("PostToolUse", event, ROOTS))
    assert doc["postToolUse"] == payload
    assert doc["somethingNew"] == [1, {"a": None}]


def test_event_is_not_mutated() -> None:
    """prepare_input leaves the caller's event as it was."""
    event = {"preToolUse": PAYLOAD}
    CLINE.prepare_input("PreToolUse", event, ROOTS)
    assert event == {"preToolUse": PAYLOAD}


def test_careti_prepares_the_same_input() -> None:
    """Careti's dialect speaks the same input protocol as Cline's."""
    event = full_event()
    assert CARETI.prepare_input("PreToolUse", event, ROOTS) == CLINE.prepare_input(
        "PreToolUse", event, ROOTS
    )


def test_workspace_roots_are_the_roots_really_mounted() -> None:
    """The hook is told the roots it was given (and can read), not the event's originals."""
    event = {**full_event(), "workspaceRoots": ["/somewhere/else"]}
    doc = decode(CLINE.prepare_input("PreToolUse", event, ROOTS))
    assert doc["workspaceRoots"] == ROOTS


def test_numeric_timestamp_becomes_a_string() -> None:
    """Cline sends the timestamp as a string; a number given by a caller is converted."""
    doc = decode(CLINE.prepare_input("PreToolUse", {"timestamp": 1700000000123}, ROOTS))
    assert doc["timestamp"] == "1700000000123"
