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
LONGBOI = HOOKS / "SynthNoirLabs__longboi"


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


def bare(
    command: str, event: dict[str, Any], ws: Path, host: Path, name: str = "pre_run_command"
) -> ExecResult:
    """The hook as Windsurf starts it on the host: `sh -c` in the workspace root, the
    event as sandboxrun hands it on, the host's own $HOME."""
    stdin = WINDSURF.prepare_input(name, event, [str(ws)])
    done = subprocess.run(["sh", "-c", command], input=stdin, capture_output=True, cwd=ws,
                          env={**os.environ, "HOME": str(host)}, timeout=120)  # fmt: skip
    return ExecResult(done.returncode, done.stdout, done.stderr, 1)


def reading(result: ExecResult, name: str = "pre_run_command") -> dict[str, Any]:
    """Windsurf's reading of one host run of a workspace hook."""
    hook = HookSpec(name, "h", "workspace", ("x",), "/", ())
    return WINDSURF.combine([WINDSURF.interpret(hook, result, 30.0)], False)


def boxed(
    event: dict[str, Any], home: Path, ws: Path, name: str = "pre_run_command"
) -> dict[str, Any]:
    done = subprocess.run(
        cli("run", name, "--agent", "windsurf", "--workspace", str(ws), home=home),
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


def project_longboi(ws: Path) -> dict[str, Any]:
    """SynthNoirLabs/longboi's `.windsurf` hooks (hooks.json with its two scripts)."""
    shutil.copytree(LONGBOI / ".windsurf", ws / ".windsurf")
    config: dict[str, Any] = json.loads((ws / ".windsurf" / "hooks.json").read_text())
    return config["hooks"]


def write_event(ws: Path, path: Path, new: str) -> dict[str, Any]:
    return {"trajectory_id": "t1", "execution_id": "e1", "timestamp": "2026-11-25T15:00:00Z",
            "tool_info": {"file_path": str(path),
                          "edits": [{"old_string": "", "new_string": new}]}}  # fmt: skip


@pytest.mark.parametrize(
    ("content", "blocked"),
    [('const val API_KEY = "sk-live-123"\n', True),  # a hardcoded secret: blocked
     ('Log.d("Tag", "hi")\n', False),  # a warning only: proceeds
     ("fun main() {}\n", False)],
)  # fmt: skip
def test_longboi_security_check_reads_the_file_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path, Path], content: str, blocked: bool
) -> None:
    """longboi's pre_write_code `security.sh` greps the file Windsurf names (its
    absolute path, `tool_info.file_path`) and exits 2 on a critical finding (its
    report on stdout, which Windsurf never reads). The workspace is mounted at its own
    path, so the sandboxed hook reads the same file and decides the same."""
    home, host, ws = setup
    hooks = project_longboi(ws)
    [entry] = hooks["pre_write_code"]
    source = ws / "app" / "Main.kt"
    source.parent.mkdir()
    source.write_text(content)
    event = write_event(ws, source, "// more")
    raw = bare(entry["command"], event, ws, host, "pre_write_code")
    on_host = reading(raw, "pre_write_code")
    assert raw.exit_code == (2 if blocked else 0) and on_host["blocked"] is blocked
    assert raw.stderr == b""  # its report is on stdout: the agent is told no reason
    answer = boxed(event, home, ws, "pre_write_code")
    assert answer["blocked"] is blocked
    if blocked:  # no reason from the hook on either side: sandboxrun names the hook
        assert answer["reason"] == f"blocked by hook {entry['command']} (exit 2)"


def test_longboi_formatter_cannot_rewrite_the_read_only_workspace(
    engine: DockerBackend, setup: tuple[Path, Path, Path]
) -> None:
    """Needs what the sandbox withholds: longboi's post_write_code `format.sh` rewrites
    a JSON file with `jq .` through a temporary file beside it. On the host the file is
    reformatted; sandboxed the workspace is read-only: the redirect fails, the script
    still exits 0 (post hooks decide nothing), and the file is left as it was."""
    home, host, ws = setup
    hooks = project_longboi(ws)
    [entry] = hooks["post_write_code"]
    data = ws / "config.json"
    squashed = '{"a":1,"b":[1,2]}\n'
    data.write_text(squashed)
    event = write_event(ws, data, squashed)
    raw = bare(entry["command"], event, ws, host, "post_write_code")
    assert raw.exit_code == 0 and data.read_text() != squashed  # formatted on the host
    data.write_text(squashed)
    answer = boxed(event, home, ws, "post_write_code")
    assert answer["blocked"] is reading(raw, "post_write_code")["blocked"] is False
    assert data.read_text() == squashed  # the sandbox wrote nothing
