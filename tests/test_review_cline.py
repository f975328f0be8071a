"""Review's first sight of a Cline checkout after `install` (issue 30, item 2): each shim
runs the hooks of one moved folder (`--hooks-dir`), and a checkout may have two
(`.clinerules/hooks` and `.cline/hooks`, both scanned by the CLI). The first run pinned
only the folder of the shim that ran first; the other folder's hook was then `new`.
FakeBackend: protocol logic only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sandboxrun._cli as cli
from sandboxrun import ExecResult, FakeBackend, HookFactory, Settings
from tests.test_cli_unit import _restore_library_logging  # noqa: F401 - autouse, shared

FOLDERS = (".clinerules/hooks", ".cline/hooks")


def checkout(ws: Path, home: Path) -> None:
    """A Cline checkout with a PreToolUse hook in each of its two folders, installed."""
    for folder in FOLDERS:
        (ws / folder).mkdir(parents=True)
        (ws / folder / "PreToolUse").write_text("#!/bin/sh\necho '{\"cancel\": false}'\n")
    args = ["install", "--agent", "cline", "--workspace", str(ws), "--home", str(home)]
    assert cli.main(args) == 0


def shim_run(ws: Path, home: Path, folder: str) -> list[dict[str, Any]]:
    """What the shim of `folder` runs for the CLI's tool_call event: its hooks' reports."""
    settings = Settings.load(agent="cline")
    fake = FakeBackend(lambda request: ExecResult(0, b'{"cancel": false}', b"", 3))
    moved = ws / ".sandboxrun" / "moved" / folder
    factory = HookFactory(settings, fake, home=str(home), hooks_dirs=[str(moved)])
    event = {"hookName": "tool_call", "workspaceRoots": [str(ws)],
             "tool_call": {"id": "call_1", "name": "run_commands", "input": {"commands": ["ls"]}}}  # fmt: skip
    hooks: list[dict[str, Any]] = factory.run("tool_call", event).to_json()["hooks"]
    return hooks


def test_the_first_run_pins_every_hook_folder_quietly(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    checkout(ws, home)
    for folder in FOLDERS:  # each shim's first run: nothing reported new
        [report] = shim_run(ws, home, folder)
        assert folder in report["name"] and "review" not in report, json.dumps(report)
    # A hook a pull adds later is still new.
    (ws / ".sandboxrun/moved/.cline/hooks/PreToolUse.py").write_text("print('{}')\n")
    reports = shim_run(ws, home, ".cline/hooks")
    assert [r.get("review") for r in reports] == [None, "new"], reports
