"""The CLI as users and agents meet it: a subprocess, JSON on stdin, one JSON on stdout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandboxrun import DockerBackend
from sandboxrun._backends.labels import MANAGED as LABEL

from ..test_demo_guard import cli_event
from .conftest import HookWriter, cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo"
EVENT = (DEMO / "event.json").read_text()


def sandboxrun(
    *args: str, stdin: str = "", env: dict[str, str] | None = None, config: Path | None = None,
    **kw,
):  # fmt: skip
    """Run the real command line, as an agent would (with this test run's settings file)."""
    return subprocess.run(
        cli(*args, config=config),
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        **kw,
    )


@pytest.mark.parametrize("hook", ["PreToolUse", "tool_call"])
def test_demo_blocks_rm_rf_and_contains_the_snoop(engine: DockerBackend, hook: str) -> None:
    """The README's demo: the guard cancels, the cloned hook reaches nothing, stdout is one
    JSON; in the VS Code extension's event (scripts/demo's) and in the Cline CLI's."""
    event = EVENT if hook == "PreToolUse" else json.dumps(cli_event({"commands": ["rm -rf ~/x"]}))
    done = sandboxrun(
        "run",
        hook,
        "--workspace",
        str(DEMO / "app"),
        "--workspace",
        str(DEMO / "cloned-plugin"),
        stdin=event,
        env={"DEMO_API_TOKEN": "hunter2"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["cancel"] is True
    assert "rm -rf" in result["errorMessage"]
    assert "GOT IT" not in result["contextModification"]
    # The CLI drops the contexts of a cancelled call; the extension keeps the snoop's.
    assert result["contextModification"].count("failed (") == (7 if hook == "PreToolUse" else 0)
    assert [h["status"] for h in result["hooks"]] == ["completed", "completed"]
    assert not (DEMO / "cloned-plugin" / "PWNED").exists()


def test_missing_image_is_one_line(engine: DockerBackend) -> None:
    """A missing image exits 2 with one line saying how to build it; stdout stays empty."""
    ws = str(DEMO / "app")
    done = sandboxrun(
        "run", "PreToolUse", "--workspace", ws, "--image", "nope/absent:0", stdin="{}"
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "sandboxrun images build" in done.stderr


def test_unreachable_engine_is_one_line(tmp_path: Path) -> None:
    """An engine that does not answer exits 2 with one line naming the address."""
    sock, ws = f"unix://{tmp_path}/none.sock", str(DEMO / "app")
    config = tmp_path / "config.toml"
    config.write_text(f'docker_host = "{sock}"\n')
    done = sandboxrun("run", "PreToolUse", "--workspace", ws, stdin="{}", config=config)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and sock in done.stderr


def test_unreachable_engine_fail_closed_cancels(tmp_path: Path) -> None:
    """With --fail-closed an engine that cannot run hooks is a cancel, in Cline's terms."""
    config = tmp_path / "config.toml"
    config.write_text(f'docker_host = "unix://{tmp_path}/none.sock"\n')
    ws = str(DEMO / "app")
    done = sandboxrun(
        "run", "PreToolUse", "--workspace", ws, "--fail-closed", stdin="{}", config=config
    )
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["cancel"] is True and "fail-closed" in result["errorMessage"]


def test_list_names_hooks_and_near_misses(
    workspace: Path, hook: HookWriter, tmp_path: Path
) -> None:
    """`list` shows the hooks and explains the files it skipped, under each Cline
    variant's rules (the SDK/CLI's by default: any extension it runs, no exec bit;
    the VS Code extension's: an executable file named exactly after the event)."""
    hook("true")
    (workspace / ".clinerules" / "hooks" / "PostToolUse").write_text("#!/bin/sh\n")
    (workspace / ".clinerules" / "hooks" / "TaskStart.ps1").write_text("#!/bin/sh\n")
    (workspace / ".clinerules" / "hooks" / "TaskStart.rb").write_text("#!/bin/sh\n")
    done = sandboxrun("list", "--workspace", str(workspace), "--json")
    listing = json.loads(done.stdout)
    assert [h["hook"] for h in listing["hooks"]] == ["PostToolUse", "PreToolUse", "TaskStart"]
    reasons = {Path(s["path"]).name: s["reason"] for s in listing["skipped"]}
    assert "extension .rb is not one Cline's SDK/CLI runs" in reasons["TaskStart.rb"]
    config = tmp_path / "vscode.toml"
    config.write_text('cline_variant = "vscode"\n')
    done = sandboxrun("list", "--workspace", str(workspace), "--json", config=config)
    listing = json.loads(done.stdout)
    assert [h["hook"] for h in listing["hooks"]] == ["PreToolUse"]
    reasons = {Path(s["path"]).name: s["reason"] for s in listing["skipped"]}
    assert "not executable" in reasons["PostToolUse"]
    assert "runs only the file named TaskStart" in reasons["TaskStart.ps1"]


def test_no_hooks_needs_no_engine(tmp_path: Path) -> None:
    """An event with no hook to run is answered without touching the engine."""
    config = tmp_path / "config.toml"
    config.write_text(f'docker_host = "unix://{tmp_path}/none.sock"\n')
    done = sandboxrun("run", "PreToolUse", "--workspace", str(tmp_path), stdin="{}", config=config)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "cancel": False, "contextModification": "", "errorMessage": "", "hooks": []
    }  # fmt: skip


def test_doctor_passes(engine: DockerBackend) -> None:
    """On this machine the engine, runtime and image checks pass."""
    done = sandboxrun("doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout


def start_run_and_wait_for_container(
    engine: DockerBackend, workspace: Path
) -> subprocess.Popen[bytes]:
    """Start `sandboxrun run` on a sleeping hook; return once its container runs."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandboxrun", "run", "PreToolUse", "--no-serve", "--workspace",
         str(workspace)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(b"{}")
    proc.stdin.close()
    give_up = time.monotonic() + 60  # a fresh interpreter, a connect and a sweep come first
    while time.monotonic() < give_up:
        if engine.api.containers(filters=owned_by(proc.pid)):
            return proc
        time.sleep(0.05)
    raise AssertionError("the run never started its container")


def owned_by(pid: int) -> dict[str, list[str]]:
    return {"label": [f"{LABEL}=1", f"sandboxrun.pid={pid}"]}


def test_sigterm_removes_the_containers_at_once(
    engine: DockerBackend, workspace: Path, hook: HookWriter
) -> None:
    """An agent that gives up on its hook (SIGTERM) leaves no container running."""
    hook("sleep 120")
    proc = start_run_and_wait_for_container(engine, workspace)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert engine.api.containers(all=True, filters=owned_by(proc.pid)) == []


def test_killed_run_leaves_a_container_that_reap_removes(
    engine: DockerBackend, workspace: Path, hook: HookWriter
) -> None:
    """SIGKILL on sandboxrun mid-run leaves a labelled container; `reap` removes it at once."""
    hook("sleep 120")
    proc = start_run_and_wait_for_container(engine, workspace)
    owned = owned_by(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert engine.api.containers(all=True, filters=owned), "the orphan should still be there"
    done = sandboxrun("reap")
    assert done.returncode == 0, done.stderr
    assert engine.api.containers(all=True, filters=owned) == []


def test_reap_spares_containers_of_live_runs(engine: DockerBackend) -> None:
    """A container whose owner lives and whose deadline is ahead survives `reap`. (`reap --all`
    would remove every sandboxrun container on the engine, other runs' too: it is tested on a
    fake engine, tests/test_hygiene.py.)"""
    labels = {
        LABEL: "1",
        "sandboxrun.pid": str(os.getpid()),
        "sandboxrun.host": os.uname().nodename,
        "sandboxrun.deadline": str(int(time.time() + 600)),
    }
    cid = engine.api.create_container(engine.settings.image, ["true"], labels=labels)["Id"]
    try:
        assert sandboxrun("reap").returncode == 0
        assert engine.api.containers(all=True, filters={"id": cid})
    finally:
        if engine.api.containers(all=True, filters={"id": cid}):
            engine.api.remove_container(cid, force=True)


def test_readme_forwarding_global_hook(
    engine: DockerBackend, workspace: Path, tmp_path: Path
) -> None:
    """The README's wiring: Cline runs a global hook that forwards to `sandboxrun run
    --hooks-dir`, and the repository's moved hook answers from inside the sandbox."""
    moved = workspace / ".clinerules" / "sandboxed-hooks"
    moved.mkdir()
    (moved / "PreToolUse").write_text(
        '#!/bin/sh\necho \'{"cancel": true, "errorMessage": "no"}\'\n'
    )
    (moved / "PreToolUse").chmod(0o755)
    forward = tmp_path / "home" / "Documents" / "Cline" / "Hooks" / "PreToolUse"
    forward.parent.mkdir(parents=True)
    forward.write_text(
        f"#!/bin/sh\nexec {sys.executable} -m sandboxrun run PreToolUse --no-serve \\\n"
        "     --hooks-dir .clinerules/sandboxed-hooks --fail-closed\n"
    )
    forward.chmod(0o755)
    event = {"hookName": "PreToolUse", "workspaceRoots": [str(workspace)]}
    # As Cline does it: `/bin/sh -c '<path>'` in the primary root, the event on stdin.
    done = subprocess.run(
        ["/bin/sh", "-c", str(forward)], input=json.dumps(event), capture_output=True,
        text=True, cwd=workspace, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["cancel"], result["errorMessage"]) == (True, "no")
    assert [h["source"] for h in result["hooks"]] == ["workspace"]  # it is in the workspace


def test_doctor_fails_naming_a_weakened_property(engine: DockerBackend, tmp_path: Path) -> None:
    """Loosening confinement in the user's config (network bridge) makes doctor fail and say
    which; a root user cannot even be configured."""
    config = tmp_path / "config.toml"
    config.write_text('network = "bridge"\n')
    done = sandboxrun("doctor", config=config)
    assert done.returncode == 1
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert [line.split(":")[0] for line in failed] == ["FAIL  network absent"]
    config.write_text('user = "0:0"\n')
    refused = sandboxrun("doctor", config=config)
    assert refused.returncode == 2 and "never run as root" in refused.stderr


def test_missing_runtime_fails_closed(engine: DockerBackend) -> None:
    """A requested runtime that is not registered blocks, never falls back to a weaker one."""
    ws = str(DEMO / "app")
    done = sandboxrun("run", "PreToolUse", "--workspace", ws, "--runtime", "absent", stdin="{}")
    assert done.returncode == 0
    assert json.loads(done.stdout)["cancel"] is True
    wrapped = sandboxrun("exec", "--runtime", "absent", "--", "true")
    assert wrapped.returncode == 2 and "refusing" in wrapped.stderr
