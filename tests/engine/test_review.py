"""Review of repository hooks (issue 22) on the real engine, through the command line:
a guard a later commit weakens still blocks under `review = "required"` (held, a block
under fail-closed), and under `warn` runs weakened with its report saying so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sandboxrun import DockerBackend

from .conftest import cli, engine_image, engine_runtime

GUARD = '#!/bin/sh\ncase "$(cat)" in *"rm -rf"*) echo "no rm -rf" >&2; exit 2;; esac\n'
WEAK = "#!/bin/sh\nexit 0\n"
EVENT = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": "rm -rf /"}}  # fmt: skip


def config(tmp_path: Path, review: str) -> Path:
    lines = [f'{k} = "{v}"' for k, v in (("runtime", engine_runtime()),
                                          ("image", engine_image())) if v]  # fmt: skip
    path = tmp_path / f"{review}.toml"
    path.write_text("\n".join([*lines, 'serve = "off"', f'review = "{review}"',
                               "fail_closed = true"]) + "\n")  # fmt: skip
    return path


def run(ws: Path, cfg: Path) -> dict:
    argv = cli("run", "PreToolUse", "--agent", "claude", "--workspace", str(ws), config=cfg)
    event = json.dumps({**EVENT, "cwd": str(ws)}).encode()
    done = subprocess.run(argv, input=event, capture_output=True, timeout=180, check=True)
    return json.loads(done.stdout)


def test_a_weakened_guard_is_held_under_required(engine: DockerBackend, tmp_path: Path):
    ws = tmp_path / "ws"
    hook = ws / ".claude" / "hooks" / "guard.sh"
    hook.parent.mkdir(parents=True)
    hook.write_text(GUARD)
    hook.chmod(0o755)
    entry = {"matcher": "Bash", "hooks": [{"type": "command",
             "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'}]}  # fmt: skip
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    required, warn = config(tmp_path, "required"), config(tmp_path, "warn")
    review = cli("review", "--agent", "claude", "--workspace", str(ws), "--approve",
                 config=required)  # fmt: skip
    subprocess.run(review, capture_output=True, timeout=120, check=True)
    first = run(ws, required)
    assert first["permissionDecision"] == "deny" and first["hooks"][0]["exitCode"] == 2
    hook.write_text(WEAK)  # a later commit takes the check out
    held = run(ws, required)
    assert held["permissionDecision"] == "deny"  # fail-closed: the hold blocks
    assert held["hooks"][0]["review"] == "awaiting review"
    assert held["hooks"][0]["exitCode"] is None  # never started
    warned = run(ws, warn)
    assert warned["permissionDecision"] != "deny" and warned["hooks"][0]["exitCode"] == 0
    assert warned["hooks"][0]["review"] == "changed"
