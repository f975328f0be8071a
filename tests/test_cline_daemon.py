"""A Cline hook started from the CLI's hub daemon (issue 30, item 2): `cline
--cline-hub-daemon` runs the hooks of every later run with the folder and environment
of the run that started it, so an installed shim's process folder may be another
project's. `run --answer agent` for Cline takes the workspace from the event's
`workspaceRoots` alone: a global forwarder's relative `--hooks-dir` is read against the
event's root (it was read against the process's folder, and ran the other project's
moved hooks there as trusted `explicit` ones), and an event without roots runs nothing.
FakeBackend: protocol logic only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecResult
from tests.test_cli_unit import _restore_library_logging, engine, feed, ws  # noqa: F401

REWRITE = {"cancel": False, "overrideInput": {"commands": ["echo rewritten"]}}
MOVED = ".sandboxrun/moved/.clinerules/hooks"  # what `install --global` forwards to


def project(root: Path, home: Path) -> Path:
    """A checkout whose `.clinerules/hooks/PreToolUse` `install` moved aside."""
    (root / ".clinerules/hooks").mkdir(parents=True)
    (root / ".clinerules/hooks/PreToolUse").write_text("#!/bin/sh\n")
    args = ["install", "--agent", "cline", "--workspace", str(root), "--home", str(home)]
    assert cli.main(args) == 0
    assert (root / MOVED / "PreToolUse").is_file()
    return root


def forward(*options: str) -> list[str]:
    """A global forwarder's command line (`install --global`), its event on stdin."""
    return ["run", "PreToolUse", "--agent", "cline", "--answer", "agent", "--hooks-dir", MOVED,
            "--no-serve", *options]  # fmt: skip


def test_the_workspace_is_the_events_not_the_process_folder(
    tmp_path: Path, home: Path, ws: Path, engine, monkeypatch: pytest.MonkeyPatch, capsys,  # noqa: F811
) -> None:  # fmt: skip
    """The process's folder (`ws`) is another checkout, as the daemon's may be: the
    hooks run are those of the event's root, as workspace hooks (`overrideInput`
    dropped), with that root mounted."""
    other = project(ws, home)  # the daemon's folder: the run that started it
    mine = project(tmp_path / "mine", home)
    seen = engine(default=ExecResult(0, json.dumps(REWRITE).encode(), b"", 3))
    event = {"hookName": "tool_call", "workspaceRoots": [str(mine)],
             "tool_call": {"id": "call_1", "name": "run_commands", "input": {"commands": ["ls"]}}}  # fmt: skip
    feed(monkeypatch, json.dumps(event))
    capsys.readouterr()  # install's notes
    code = cli.main(forward())
    out, err = capsys.readouterr()
    [request] = seen.requests
    assert str(mine / MOVED / "PreToolUse") in request.argv, request.argv
    assert request.workdir == str(mine) and str(other) not in request.mounts
    assert code == 0 and json.loads(out) == {"cancel": False, "contextModification": "",
                                              "errorMessage": ""}, (out, err)  # fmt: skip


@pytest.mark.parametrize("fail_closed", [False, True])
def test_an_event_without_roots_runs_nothing(
    home: Path, ws: Path, engine, monkeypatch: pytest.MonkeyPatch, capsys,  # noqa: F811
    fail_closed: bool,
) -> None:  # fmt: skip
    """No `workspaceRoots` (nor a relative one): no workspace, never the process's folder;
    Cline reads the failure as a failed hook, or a cancel under fail-closed."""
    project(ws, home)
    capsys.readouterr()  # install's notes
    for roots in ([], ["relative/root"]):
        seen = engine(default=ExecResult(0, b'{"cancel": false}', b"", 3))
        feed(monkeypatch, json.dumps({"hookName": "tool_call", "workspaceRoots": roots}))
        code = cli.main(forward(*(["--fail-closed"] if fail_closed else [])))
        out, err = capsys.readouterr()
        assert seen.requests == []
        assert ("no current folder" in err) or ("no current folder" in out), (out, err)
        if fail_closed:
            assert code == 0 and json.loads(out)["cancel"] is True
        else:
            assert (code, out) == (1, "")


def test_exec_takes_the_events_root_too(
    tmp_path: Path, ws: Path, engine, monkeypatch: pytest.MonkeyPatch, capsys,  # noqa: F811
) -> None:  # fmt: skip
    """`exec --agent cline` (a Cline hook file that wraps its command in exec): the
    event's root is mounted and the command starts there; the process's folder is not
    read. Without roots, nothing runs."""
    mine = tmp_path / "mine"
    mine.mkdir()
    seen = engine(default=ExecResult(0, b'{"cancel": false}', b"", 3))
    feed(monkeypatch, json.dumps({"hookName": "tool_call", "workspaceRoots": [str(mine)]}))
    assert cli.main(["exec", "--agent", "cline", "--no-serve", "--", "./guard.sh"]) == 0
    [request] = seen.requests
    assert request.workdir == str(mine) and str(ws) not in request.mounts, request
    seen = engine(default=ExecResult(0, b'{"cancel": false}', b"", 3))
    feed(monkeypatch, json.dumps({"hookName": "tool_call"}))
    assert cli.main(["exec", "--agent", "cline", "--no-serve", "--", "./guard.sh"]) == 1
    assert seen.requests == [] and "no absolute workspaceRoots" in capsys.readouterr().err
