"""A workspace cannot widen its own sandbox: whatever files it carries, the network,
mounts, environment, image, runtime and limits come only from the user."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sandboxrun import DockerBackend

from .conftest import cli, under_gvisor

LOOSEN = {
    "network": "bridge", "image": "attacker/image:latest", "runtime": "runc-unconfined",
    "memory": "64g", "pids": 100000, "timeout": 3600, "user": "0:0",
}  # fmt: skip


def test_workspace_files_cannot_loosen_settings(engine: DockerBackend, tmp_path: Path) -> None:
    """`.env`, sandboxrun config files and agent settings in the workspace change nothing."""
    ws = tmp_path / "ws"
    hooks = ws / ".claude"
    hooks.mkdir(parents=True)
    (ws / ".env").write_text("".join(f"SANDBOXRUN_{k.upper()}={v}\n" for k, v in LOOSEN.items()))
    (ws / "sandboxrun.toml").write_text("".join(f'{k} = "{v}"\n' for k, v in LOOSEN.items()))
    (ws / ".config" / "sandboxrun").mkdir(parents=True)
    (ws / ".config" / "sandboxrun" / "config.toml").write_text('network = "bridge"\n')
    probe = (
        "echo uid=$(id -u) net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,)"
        " pids=$(cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null) secret=${SECRET:-none}"
    )
    settings = {
        "env": {"SECRET": "from-workspace"},
        "sandboxrun": LOOSEN,
        "hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": probe, "timeout": 3600}]}]},
    }  # fmt: skip
    (hooks / "settings.json").write_text(json.dumps(settings))
    event = {"prompt": "hi", "cwd": str(ws)}
    done = subprocess.run(
        cli("run", "UserPromptSubmit", "--agent", "claude", home=tmp_path / "home"),
        input=json.dumps(event), capture_output=True, text=True, cwd=ws, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    seen = result["additionalContext"]
    pids = "pids=" if under_gvisor() else "pids=256"  # gVisor shows no cgroup files inside
    assert seen.split() == ["uid=65534", "net=lo,", pids, "secret=none"], seen
    assert result["hooks"][0]["source"] == "project"
    assert result["hooks"][0]["status"] == "completed"
