"""Review of repository hooks (issue 22) on the real engine, through the command line:
a guard a later commit weakens still blocks under `review = "required"` (its approved
version runs in its place), a new hook is held (a block under fail-closed), and under
`warn` the weakened guard runs with its report saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sandboxrun import DockerBackend
from sandboxrun._backends.labels import MANAGED, PID

from .conftest import WarmOnly, cli, engine_image, engine_runtime, engine_settings

GUARD = '#!/bin/sh\ncase "$(cat)" in *"rm -rf"*) echo "no rm -rf" >&2; exit 2;; esac\n'
WEAK = "#!/bin/sh\nexit 0\n"
EVENT = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": "rm -rf /"}}  # fmt: skip


def config(tmp_path: Path, review: str) -> Path:
    """The test's config: its pins in a file of its own (`review_pins`), never in the
    account's data folder, which commands in a subprocess would write."""
    lines = [f'{k} = "{v}"' for k, v in (("runtime", engine_runtime()),
                                          ("image", engine_image())) if v]  # fmt: skip
    path = tmp_path / f"{review}.toml"
    pins = tmp_path / "pins.json"
    path.write_text("\n".join([*lines, 'serve = "off"', f'review = "{review}"',
                               f'review_pins = "{pins}"', "fail_closed = true"]) + "\n")  # fmt: skip
    return path


def run(ws: Path, cfg: Path, engine: DockerBackend | None = None) -> dict:
    """`run` through the command line, its temporary files in a folder of the test's
    own (TMPDIR): empty again afterwards, and no container of it left."""
    argv = cli("run", "PreToolUse", "--agent", "claude", "--workspace", str(ws), config=cfg)
    event = json.dumps({**EVENT, "cwd": str(ws)}).encode()
    tmp = ws.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)  # fmt: skip
    out, err = child.communicate(event, timeout=180)
    assert child.returncode == 0, err.decode()
    assert list(tmp.iterdir()) == [], "temporary files left behind"
    if engine is not None:
        mine = {"label": [f"{MANAGED}=1", f"{PID}={child.pid}"]}
        assert engine.api.containers(all=True, filters=mine) == [], "a container left behind"
    return json.loads(out)


def project(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace whose guard blocks `rm -rf`, and the guard."""
    ws = tmp_path / "ws"
    hook = ws / ".claude" / "hooks" / "guard.sh"
    hook.parent.mkdir(parents=True)
    hook.write_text(GUARD)
    hook.chmod(0o755)
    entry = {"matcher": "Bash", "hooks": [{"type": "command",
             "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'}]}  # fmt: skip
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    return ws, hook


def test_a_weakened_guard_runs_its_approved_version_under_required(
    engine: DockerBackend, tmp_path: Path
) -> None:
    ws, hook = project(tmp_path)
    required, warn = config(tmp_path, "required"), config(tmp_path, "warn")
    review = cli("review", "--agent", "claude", "--workspace", str(ws), "--approve",
                 "--pins", str(tmp_path / "pins.json"), config=required)  # fmt: skip
    subprocess.run(review, capture_output=True, timeout=120, check=True)
    first = run(ws, required)
    assert first["permissionDecision"] == "deny" and first["hooks"][0]["exitCode"] == 2
    hook.write_text(WEAK)  # a later commit takes the check out
    again = run(ws, required, engine)
    [report] = again["hooks"]
    assert again["permissionDecision"] == "deny"  # the approved guard ran and blocked
    assert report["exitCode"] == 2 and "no rm -rf" in report["stderr"]
    assert report["review"] == "awaiting review" and report["ranApproved"] is True
    assert report["warm"] is False
    assert hook.read_text() == WEAK  # the workspace is as the commit left it
    warned = run(ws, warn)
    assert warned["permissionDecision"] != "deny" and warned["hooks"][0]["exitCode"] == 0
    assert warned["hooks"][0]["review"] == "changed"


def test_a_new_hook_is_held_under_required(engine: DockerBackend, tmp_path: Path) -> None:
    ws, _ = project(tmp_path)
    held = run(ws, config(tmp_path, "required"), engine)
    assert held["permissionDecision"] == "deny"  # fail-closed: the hold blocks
    assert held["hooks"][0]["review"] == "awaiting review"
    assert held["hooks"][0]["exitCode"] is None  # never started
    assert "ranApproved" not in held["hooks"][0]


def test_exec_untrusted_runs_the_approved_version(engine: DockerBackend, tmp_path: Path) -> None:
    """What `install` writes: `exec --untrusted` of the repository's command."""
    ws, hook = project(tmp_path)
    required = config(tmp_path, "required")
    review = cli("review", "--agent", "claude", "--workspace", str(ws), "--approve",
                 "--pins", str(tmp_path / "pins.json"), config=required)  # fmt: skip
    subprocess.run(review, capture_output=True, timeout=120, check=True)
    hook.write_text(WEAK)
    argv = cli("exec", "--agent", "claude", "--untrusted", "--",
               '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh', config=required)  # fmt: skip
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    event = json.dumps({**EVENT, "cwd": str(ws)}).encode()
    done = subprocess.run(argv, input=event, capture_output=True, timeout=180, cwd=ws,
                          env={**os.environ, "TMPDIR": str(tmp)})  # fmt: skip
    assert done.returncode == 2 and b"no rm -rf" in done.stderr  # the approved guard's block
    assert list(tmp.iterdir()) == []
    (ws / "other.sh").write_text(WEAK)  # a new command: held, a block under fail-closed
    argv = cli("exec", "--agent", "claude", "--untrusted", "--", "sh ./other.sh", config=required)
    done = subprocess.run(argv, input=event, capture_output=True, timeout=180, cwd=ws)
    assert done.returncode == 2 and b"awaiting review" in done.stderr


def test_a_warm_backend_runs_the_approved_version_cold(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """`serve` and the Python API keep pools: a pooled container's mounts were fixed when
    it started, so the approved version runs in a cold one, on the same backend. (`engine`:
    skipped without one, a failure in CI.)"""
    from sandboxrun import HookFactory
    from sandboxrun._review import approve
    from sandboxrun._review.show import scan

    ws, hook = project(tmp_path)
    pins = str(tmp_path / "pins.json")
    settings = engine_settings(agent="claude", review="required", review_pins=pins,
                               fail_closed=True, pool_size=1)  # fmt: skip
    approve(scan(settings, [str(ws)], str(tmp_path / "home"), ["claude"]), pins)
    hook.write_text(WEAK)
    with WarmOnly(settings) as backend:
        factory = HookFactory(settings, backend, home=str(tmp_path / "home"))
        result = factory.run("PreToolUse", {**EVENT, "cwd": str(ws)})
    [outcome] = result.outcomes
    assert outcome.exit_code == 2 and not outcome.warm and outcome.spec.approved
    assert result.answer.get("permissionDecision") == "deny"


def test_a_deleted_guard_blocks_under_required_and_is_noted_under_warn(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """A later commit deletes the guard's entry: nothing is left to run, and under
    required + fail-closed the event it guarded is blocked, naming it; under warn the
    event goes on and the report says what was removed."""
    ws, _ = project(tmp_path)
    required, warn = config(tmp_path, "required"), config(tmp_path, "warn")
    review = cli("review", "--agent", "claude", "--workspace", str(ws), "--approve",
                 "--pins", str(tmp_path / "pins.json"), config=required)  # fmt: skip
    subprocess.run(review, capture_output=True, timeout=120, check=True)
    assert run(ws, required, engine)["permissionDecision"] == "deny"  # the guard itself
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {}}))
    blocked = run(ws, required, engine)
    assert blocked["permissionDecision"] == "deny"
    [report] = blocked["hooks"]
    assert report["review"] == "removed" and report["status"] == "error"
    assert report["reviewNote"].startswith("removed since approved: awaiting review")
    assert report["exitCode"] is None  # nothing ran: the removal blocked
    noted = run(ws, warn, engine)
    assert noted.get("permissionDecision") != "deny" and noted["hooks"] == []
    [note] = noted["notRun"]
    assert note["reason"].startswith("removed since approved") and "guard.sh" in note["name"]


def test_a_guard_made_async_still_blocks_under_required(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """A later commit turns the guard `async` (Claude Code then does not wait for it: its
    answer decides nothing). `async` is part of its pin, so it is changed; under
    required its approved version runs, synchronously, and still blocks; under warn it
    runs as it is now, reported changed, and blocks nothing."""
    ws, _ = project(tmp_path)
    required, warn = config(tmp_path, "required"), config(tmp_path, "warn")
    review = cli("review", "--agent", "claude", "--workspace", str(ws), "--approve",
                 "--pins", str(tmp_path / "pins.json"), config=required)  # fmt: skip
    subprocess.run(review, capture_output=True, timeout=120, check=True)
    settings = ws / ".claude" / "settings.json"
    settings.write_text(
        settings.read_text().replace('"type": "command"', '"async": true, "type": "command"')
    )
    assert '"async": true' in settings.read_text()
    blocked = run(ws, required, engine)
    [report] = blocked["hooks"]
    assert blocked["permissionDecision"] == "deny"  # the approved (synchronous) guard
    assert report["exitCode"] == 2 and "no rm -rf" in report["stderr"]
    assert report["review"] == "awaiting review" and report["ranApproved"] is True
    warned = run(ws, warn, engine)
    assert warned.get("permissionDecision") != "deny"  # as it is now: async decides nothing
    assert warned["hooks"][0]["review"] == "changed"


def climbing(tmp_path: Path) -> tuple[Path, Path, str]:
    """Issue 29's repository: `.claude/hooks -> ../a/b` and a command that climbs out of
    it with `..`; the workspace, the file that runs (a guard), and the command."""
    ws, _ = project(tmp_path)
    command = 'sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/../hooks/guard.sh'
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    (ws / ".claude" / "hooks" / "guard.sh").unlink()
    (ws / ".claude" / "hooks").rmdir()
    runs = ws / "a" / "hooks" / "guard.sh"
    for path, body in ((ws / "a" / "b" / "guard.sh", "#!/bin/sh\nexit 0\n"),
                       (runs, GUARD.replace("no rm -rf", "the guard that runs"))):  # fmt: skip
        path.parent.mkdir(parents=True)
        path.write_text(body)
    (ws / ".claude" / "hooks").symlink_to("../a/b")
    return ws, runs, command


UNREVIEWED = "#!/bin/sh\necho UNREVIEWED-CODE-RAN >&2; exit 0\n"


def test_review_pins_the_file_that_runs_through_a_symlink(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Issue 29: `.claude/hooks -> ../a/b` and a command that climbs out of it with `..`.
    The kernel follows the link before `..`: `a/hooks/guard.sh` runs, and that is the
    file `review` shows and pins. A later commit that changes it is held under
    required (reached through a symlink: its approved bytes are never bound), through
    `run` and `exec --untrusted`, and reported by `review`."""
    ws, runs, command = climbing(tmp_path)
    required, warn = config(tmp_path, "required"), config(tmp_path, "warn")
    pins = ["--pins", str(tmp_path / "pins.json")]
    review = cli("review", "--agent", "claude", "--workspace", str(ws), *pins, config=required)
    shown = subprocess.run(review, capture_output=True, timeout=120, check=True).stdout.decode()
    assert "now: a/hooks/guard.sh" in shown and "the guard that runs" in shown
    subprocess.run([*review, "--approve"], capture_output=True, timeout=120, check=True)
    first = run(ws, required)
    assert first["permissionDecision"] == "deny"
    assert "the guard that runs" in first["hooks"][0]["stderr"]
    runs.write_text(UNREVIEWED)  # a later commit
    held = run(ws, required, engine)
    [report] = held["hooks"]
    assert held["permissionDecision"] == "deny" and report["exitCode"] is None
    assert report["review"] == "awaiting review" and "is or was a symlink" in report["error"]
    argv = cli("exec", "--agent", "claude", "--untrusted", "--", command, config=required)
    event = json.dumps({**EVENT, "cwd": str(ws)}).encode()
    done = subprocess.run(argv, input=event, capture_output=True, timeout=180, cwd=ws)
    assert done.returncode == 2 and b"awaiting review" in done.stderr
    assert b"UNREVIEWED-CODE-RAN" not in done.stderr
    shown = subprocess.run(review, capture_output=True, timeout=120, check=True).stdout.decode()
    assert "changed: claude PreToolUse" in shown and "+echo UNREVIEWED-CODE-RAN" in shown
    warned = run(ws, warn, engine)  # warn runs it as it is, and says so
    assert warned["hooks"][0]["review"] == "changed"


def test_serve_holds_the_changed_file_that_runs(engine: DockerBackend) -> None:
    """The same through `sandboxrun serve`'s unix socket as cold: `run` and `exec
    --untrusted` of issue 29's repository after a commit changed the file that runs."""
    from .test_serve import Server, answer, both

    folder = Path(tempfile.mkdtemp(prefix="srv-", dir="/tmp"))  # a socket's path is short
    try:
        ws, runs, command = climbing(folder)
        pins = folder / "pins.json"
        srv = Server(folder, config=f'review = "required"\nreview_pins = "{pins}"\n'
                                    "fail_closed = true\n")  # fmt: skip
        try:
            approve = [sys.executable, "-m", "sandboxrun", "review", "--config", str(srv.config),
                       "--agent", "claude", "--workspace", str(ws), "--approve"]  # fmt: skip
            subprocess.run(approve, capture_output=True, timeout=120, check=True)
            runs.write_text(UNREVIEWED)
            event = json.dumps({**EVENT, "cwd": str(ws)}).encode()
            args = ("run", "PreToolUse", "--agent", "claude", "--workspace", str(ws))
            cold, warm = both(srv, *args, stdin=event, cwd=ws)
            assert answer(cold) == answer(warm)
            assert answer(warm)["permissionDecision"] == "deny"
            assert answer(warm)["hooks"][0]["exitCode"] is None  # held: never started
            exec_ = ("exec", "--agent", "claude", "--untrusted", "--", command)
            for done in both(srv, *exec_, stdin=event, cwd=ws):
                assert done.returncode == 2 and b"awaiting review" in done.stderr
                assert b"UNREVIEWED-CODE-RAN" not in done.stderr
        finally:
            srv.stop()
        assert srv.proc.returncode == 0, srv.logged()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
