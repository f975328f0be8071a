"""Public Windsurf hooks (tests/real_hooks/windsurf/PROVENANCE.md), each run as Windsurf
runs it on the host (`sh -c` in the workspace root, the event on stdin) and through
`sandboxrun run --agent windsurf` and `exec`, Windsurf's reading of both compared: the
dialect's `interpret`/`combine` read the host run, as Windsurf would (exit codes only)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.windsurf import WINDSURF
from sandboxrun._types import ExecResult, HookSpec

from .conftest import cli

HOOKS = Path(__file__).resolve().parents[1] / "real_hooks" / "windsurf"
ONEPASSWORD = HOOKS / "1Password__agent-hooks"  # its .windsurf/hooks.json; the scripts:
SCRIPTS = HOOKS.parent / "cursor" / "1Password__agent-hooks"  # the same commit's, kept once


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(account home for sandboxrun, the host's $HOME for bare runs, workspace)."""
    home, host, ws = tmp_path / "home", tmp_path / "host-home", tmp_path / "ws"
    for d in (home, host, ws):
        d.mkdir()
    return home, host, ws


def project_1password(ws: Path) -> str:
    """1Password/agent-hooks as its own repository configures it for Windsurf (its
    `.windsurf/hooks.json`, with bin/, adapters/, lib/ and hooks/ at the root)."""
    for folder in ("bin", "adapters", "lib", "hooks"):
        shutil.copytree(SCRIPTS / folder, ws / folder)
    shutil.copytree(ONEPASSWORD / ".windsurf", ws / ".windsurf")
    config = json.loads((ws / ".windsurf" / "hooks.json").read_text())
    command: str = config["hooks"]["pre_run_command"][0]["command"]
    return command


def event_of(ws: Path, command_line: str) -> dict[str, Any]:
    return {"trajectory_id": "t1", "execution_id": "e1", "timestamp": "2026-11-25T15:00:00Z",
            "tool_info": {"command_line": command_line, "cwd": str(ws)}}  # fmt: skip


def bare(command: str, event: dict[str, Any], ws: Path, host: Path) -> ExecResult:
    """The hook as Windsurf starts it on the host: `sh -c` in the workspace root, the
    event as sandboxrun hands it on, the host's own $HOME."""
    stdin = WINDSURF.prepare_input("pre_run_command", event, [str(ws)])
    done = subprocess.run(["sh", "-c", command], input=stdin, capture_output=True, cwd=ws,
                          env={**os.environ, "HOME": str(host)}, timeout=120)  # fmt: skip
    return ExecResult(done.returncode, done.stdout, done.stderr, 1)


def reading(result: ExecResult) -> dict[str, Any]:
    """Windsurf's reading of one host run of a workspace hook."""
    hook = HookSpec("pre_run_command", "h", "workspace", ("x",), "/", ())
    return WINDSURF.combine([WINDSURF.interpret(hook, result, 30.0)], False)


def boxed(event: dict[str, Any], home: Path, ws: Path) -> dict[str, Any]:
    done = subprocess.run(
        cli("run", "pre_run_command", "--agent", "windsurf", "--workspace", str(ws), home=home),
        input=json.dumps(event), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_without_the_apps_database_the_guard_allows_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path, Path]
) -> None:
    """No 1Password app on the machine: the hook fails inside run-hook.sh, which fails
    open (exit 0). Same decision through `run` and through `exec --untrusted`."""
    home, host, ws = setup
    hook = project_1password(ws)
    (ws / ".1password").mkdir()
    (ws / ".1password" / "environments.toml").write_text('mount_paths = [".env"]\n')
    event = event_of(ws, "npm test")
    raw = bare(hook, event, ws, host)
    assert raw.exit_code == 0
    answer = boxed(event, home, ws)
    assert answer["blocked"] is reading(raw)["blocked"] is False
    [report] = answer["hooks"]
    assert (report["source"], report["status"]) == ("workspace", "completed")
    stdin = WINDSURF.prepare_input("pre_run_command", event, [str(ws)])
    done = subprocess.run(cli("exec", "--agent", "windsurf", "--untrusted", "--", hook),
                          input=stdin, capture_output=True, cwd=ws, timeout=240)  # fmt: skip
    assert (done.returncode, done.stdout) == (raw.exit_code, raw.stdout), done.stderr


def test_a_guard_reading_the_users_home_loses_it_in_the_sandbox(
    engine: DockerBackend, setup: tuple[Path, Path, Path]
) -> None:
    """Needs what the sandbox withholds: the hook reads the 1Password app's database in
    $HOME (with sqlite3). On the host a mount disabled in the app is blocked (Windsurf's
    exit 2, the reason on stderr); sandboxed, the home is not there (nor sqlite3), the
    hook fails and run-hook.sh fails open. The sandbox loosens this guard; named here,
    not hidden (PROVENANCE.md)."""
    if shutil.which("sqlite3") is None:
        pytest.skip("the host run needs sqlite3, as the hook does")
    home, host, ws = setup
    hook = project_1password(ws)
    db = host / ".config" / "1Password" / "1Password.sqlite"
    db.parent.mkdir(parents=True)
    mount = {"mountPath": str(ws / ".env"), "isEnabled": False, "environmentName": "prod",
             "uuid": "u1", "environmentUuid": "e1"}  # fmt: skip
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("CREATE TABLE objects_associated (key_name TEXT, data BLOB)")
        conn.execute("INSERT INTO objects_associated VALUES (?, ?)",
                     ("dev-environment-mount/0", json.dumps(mount).encode()))  # fmt: skip
    conn.close()
    event = event_of(ws, "npm test")
    raw = bare(hook, event, ws, host)
    on_host = reading(raw)
    assert raw.exit_code == 2 and on_host["blocked"] is True
    assert "not mounted" in on_host["reason"]
    answer = boxed(event, home, ws)
    assert answer["blocked"] is False
