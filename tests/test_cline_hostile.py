"""Cline dialect against hostile bytes: events and answers holding lone surrogates, hook
folders holding names that are not UTF-8, and the untrusted-decision rule (issue #8)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sandboxrun import ExecResult, HookSpec
from sandboxrun._dialects.cline import CLINE, CLINE_VSCODE

SPEC = HookSpec(
    "PreToolUse", "/ws/.clinerules/hooks/PreToolUse", "workspace", ("x",), "/ws", ("/ws",)
)


def test_event_with_a_lone_surrogate_gives_bytes_that_read_back_the_same() -> None:
    """An event holding a lone surrogate becomes valid UTF-8 that decodes to the same event."""
    event = {"preToolUse": {"toolName": "x\ud800", "parameters": {"k\udcff": "\\\udc00"}}}
    raw = CLINE.prepare_input("PreToolUse", event, ["/ws"])
    raw.decode("utf-8")
    assert json.loads(raw)["preToolUse"] == event["preToolUse"]


def test_answer_with_a_lone_surrogate_still_cancels() -> None:
    """`{"cancel": true, "errorMessage": "\\ud800"}` cancels, with a message that encodes."""
    out = b'{"cancel": true, "errorMessage": "bad \\ud800", "contextModification": "\\udfff"}'
    outcome = CLINE_VSCODE.interpret(SPEC, ExecResult(0, out, b"", 1), 30)
    combined = CLINE_VSCODE.combine([outcome], False)
    assert combined == {
        "cancel": True,
        "contextModification": "\ufffd",
        "errorMessage": "bad \ufffd",
    }
    json.dumps(combined, ensure_ascii=False).encode("utf-8")
    # The SDK: a cancel's context is dropped (beforeToolResultFromControl).
    sdk = CLINE.combine([CLINE.interpret(SPEC, ExecResult(0, out, b"", 1), 30)], False)
    assert sdk == {"cancel": True, "contextModification": "", "errorMessage": "bad \ufffd"}


def test_trust_changes_nothing_for_cline_without_override_input() -> None:
    """Without the SDK's overrideInput no Cline field approves or widens: a workspace
    answer reads the same either way (the SDK's rewrite: test_cline_sdk_answer)."""
    out = b'{"cancel": false, "contextModification": "ctx"}'
    plain = CLINE.interpret(SPEC, ExecResult(0, out, b"", 1), 30)
    trusted = CLINE.interpret(SPEC, ExecResult(0, out, b"", 1), 30, True)
    assert plain == trusted and plain.error is None


def test_non_utf8_names_in_a_hook_folder_are_reported_escaped(home: Path, tmp_path: Path) -> None:
    """Names that are not UTF-8 (and a workspace whose own path is not) never crash
    discovery, and reports show them escaped as \\xNN."""
    ws = Path(os.fsdecode(bytes(tmp_path) + b"/w\xff"))
    folder = ws / ".clinerules/hooks"
    folder.mkdir(parents=True)
    hook = folder / "PreToolUse"
    hook.write_text("#!/bin/sh\necho '{}'\n")
    hook.chmod(0o755)
    (folder / os.fsdecode(b"PreToolUse.\xfe")).write_text("")
    (folder / os.fsdecode(b"\x1b]0;x\x07\xfd")).write_text("")
    found = CLINE.discover("PreToolUse", [str(ws)], str(home))
    [spec] = found.hooks
    assert spec.name == f"{tmp_path}/w\\xff/.clinerules/hooks/PreToolUse"
    assert str(hook) in spec.argv[-1]  # the real path still runs
    [skip] = found.skipped
    assert skip.path.endswith("/w\\xff/.clinerules/hooks/PreToolUse.\\xfe")
    json.dumps([spec.name, skip.path], ensure_ascii=False).encode("utf-8")
