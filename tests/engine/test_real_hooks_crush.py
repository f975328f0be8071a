"""Public Crush hooks (tests/real_hooks/crush/PROVENANCE.md), each run as Crush runs it
on the host (in the project, its `CRUSH_*` variables, the payload on stdin) and through
`sandboxrun run --agent crush` from the project's crush.json, Crush's reading of both
compared: the dialect's `interpret`/`combine` read the host run, as Crush would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.crush import CRUSH
from sandboxrun._types import ExecResult, HookSpec

from .conftest import cli

HOOKS = Path(__file__).resolve().parents[1] / "real_hooks" / "crush" / "charmbracelet__crush"


def project_hook(ws: Path, name: str) -> str:
    shutil.copy2(HOOKS / name, ws / name)
    command = f"./{name}"
    entry = {"matcher": "^bash$", "command": command}
    (ws / "crush.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    return command


def event_of(ws: Path, command: str) -> dict[str, Any]:
    return {"event": "PreToolUse", "session_id": "s1", "cwd": str(ws), "tool_name": "bash",
            "tool_input": {"command": command}}  # fmt: skip


def on_host(command: str, event: dict[str, Any], ws: Path) -> dict[str, Any]:
    """The hook as Crush starts it (a `#!` script: exec'd), read as Crush reads it."""
    stdin = CRUSH.prepare_input("PreToolUse", event, [str(ws)])
    env = {**os.environ, **CRUSH.event_env(event, str(ws))}
    done = subprocess.run(["bash", "-c", command], input=stdin, capture_output=True,
                          cwd=ws, env=env, timeout=120)  # fmt: skip
    hook = HookSpec("PreToolUse", "h", "project", ("x",), str(ws), ())
    result = ExecResult(done.returncode, done.stdout, done.stderr, 1)
    return CRUSH.combine([CRUSH.interpret(hook, result, 30.0)], False)


def boxed(event: dict[str, Any], home: Path, ws: Path) -> dict[str, Any]:
    done = subprocess.run(
        cli("run", "PreToolUse", "--agent", "crush", "--workspace", str(ws), home=home),
        input=json.dumps(event), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def decision(answer: dict[str, Any]) -> tuple[Any, ...]:
    return (answer["decision"], answer["halt"], answer["blocked"], answer["reason"])


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


@pytest.mark.parametrize(("command", "denied"), [("ghc Main.hs", True), ("ls -la", False)])
def test_no_haskell_denies_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path], command: str, denied: bool
) -> None:
    home, ws = setup
    hook = project_hook(ws, "no-haskell.sh")
    event = event_of(ws, command)
    host = on_host(hook, event, ws)
    answer = boxed(event, home, ws)
    assert decision(answer) == decision(host)
    assert (answer["decision"] == "deny") is denied
    if denied:
        assert answer["reason"] == "No Haskell allowed, kiddo."


def test_rtk_rewrite_without_rtk_has_no_opinion_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path]
) -> None:
    home, ws = setup
    hook = project_hook(ws, "rtk-rewrite.sh")
    event = event_of(ws, "git status")
    host = on_host(hook, event, ws)
    answer = boxed(event, home, ws)
    assert decision(answer) == decision(host) == (None, False, False, "")
    assert answer["updated_input"] is None
