"""`sandboxrun exec` as a hook command: same bytes and exit code as the unwrapped hook,
only confined."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandboxrun import DockerBackend

from .conftest import cli

EVENT = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                    "tool_input": {"command": "rm -rf /"}})  # fmt: skip
GUARD = """#!/bin/sh
# Blocks rm -rf the Claude Code way: exit 2, the reason on stderr.
input=$(cat)
printf 'seen %s bytes\\n' "$(printf %s "$input" | wc -c)"
case "$input" in
  *"rm -rf"*) echo "rm -rf is not allowed" >&2; exit 2 ;;
esac
echo "fine" >&2
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "guard.sh").write_text(GUARD)
    (root / "hooks" / "guard.sh").chmod(0o755)
    return root


def agent_runs(
    command: str, project: Path, stdin: str, **env: str
) -> subprocess.CompletedProcess[bytes]:
    """Run a settings entry's command as Claude Code does: `sh -c` in the project dir."""
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    return subprocess.run(
        ["sh", "-c", command], input=stdin.encode(), capture_output=True, cwd=project,
        env={**os.environ, "PATH": path, "CLAUDE_PROJECT_DIR": str(project), **env}, timeout=90,
    )  # fmt: skip


def settings_command(project: Path, command: str) -> str:
    """Write a real .claude/settings.json entry and read its command back, as the agent does."""
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    loaded = json.loads(settings.read_text())
    return str(loaded["hooks"]["PreToolUse"][0]["hooks"][0]["command"])


@pytest.mark.parametrize(
    "stdin",
    [EVENT, json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}})],
    ids=["blocking", "non-blocking"],
)
def test_exec_passes_everything_through(engine: DockerBackend, project: Path, stdin: str) -> None:
    """A settings entry wrapped in `sandboxrun exec` gives the agent the same stdout,
    stderr and exit code as the unwrapped entry, for a blocking and a non-blocking hook."""
    bare = agent_runs(settings_command(project, "./hooks/guard.sh"), project, stdin)
    wrapped = agent_runs(
        settings_command(project, "sandboxrun exec -- ./hooks/guard.sh"), project, stdin
    )
    assert (wrapped.returncode, wrapped.stdout, wrapped.stderr) == (
        bare.returncode, bare.stdout, bare.stderr,
    )  # fmt: skip
    assert bare.returncode == (2 if "rm -rf" in stdin else 0)


def test_run_agent_claude_blocks_from_the_sandbox(engine: DockerBackend, project: Path) -> None:
    """`sandboxrun run --agent claude` finds the project's hook, runs it confined, and blocks."""
    settings_command(project, "./hooks/guard.sh")
    event = json.loads(EVENT) | {"cwd": str(project)}
    done = subprocess.run(
        # --home: no user-level hooks of ours
        cli("run", "PreToolUse", "--agent", "claude", home=project.parent),
        input=json.dumps(event), capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["blocked"], result["permissionDecision"]) == (True, "deny")
    assert result["reason"] == "rm -rf is not allowed"
    assert [(h["name"], h["source"], h["exitCode"]) for h in result["hooks"]] == [
        ("./hooks/guard.sh", "project", 2)
    ]


def test_exec_binary_output_and_exit_code(engine: DockerBackend, project: Path) -> None:
    """NUL bytes, invalid UTF-8 and any exit code come back unchanged."""
    cmd = "printf 'a\\000b\\377'; printf 'e\\001' >&2; exit 7"
    done = agent_runs(f"sandboxrun exec -- {json.dumps(cmd)}", project, "")
    assert (done.returncode, done.stdout, done.stderr) == (7, b"a\0b\xff", b"e\x01")


def test_exec_is_confined(engine: DockerBackend, project: Path) -> None:
    """Inside exec: no network, read-only project, no host variables, project dir set."""
    probe = (
        "touch x 2>/dev/null && echo wrote; "
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\" 2>/dev/null && echo net; "
        'env | grep -q HOSTSECRET && echo leaked; echo "dir=$CLAUDE_PROJECT_DIR"'
    )
    done = agent_runs(f"sandboxrun exec -- {json.dumps(probe)}", project, "", HOSTSECRET="x")
    assert done.stdout.decode().split() == [f"dir={project}"], done.stderr
    assert not (project / "x").exists()


def test_exec_timeout_is_a_non_blocking_error(engine: DockerBackend, project: Path) -> None:
    """A hook past its deadline: exit 1 and one line on stderr; fail-closed makes it exit 2."""
    done = agent_runs("sandboxrun exec --timeout 1 -- 'sleep 30'", project, "")
    assert done.returncode == 1
    assert done.stderr.decode().strip().startswith("sandboxrun: hook timed out after 1s")
    closed = agent_runs("sandboxrun exec --fail-closed --timeout 1 -- 'sleep 30'", project, "")
    assert closed.returncode == 2 and b"timed out" in closed.stderr


def test_exec_cline_fail_closed_answers_cancel(engine: DockerBackend, project: Path) -> None:
    """For the Cline family a fail-closed timeout is a cancel on stdout."""
    done = agent_runs("sandboxrun exec --agent cline --fail-closed --timeout 1 -- 'sleep 30'",
                      project, "")  # fmt: skip
    assert done.returncode == 0
    assert json.loads(done.stdout)["cancel"] is True


def test_exec_engine_unreachable_is_exit_1(project: Path, tmp_path: Path) -> None:
    """No engine at the configured address: a non-blocking error with one line, never a
    traceback."""
    config = tmp_path / "config.toml"
    config.write_text(f'docker_host = "unix://{tmp_path}/none.sock"\n')
    done = agent_runs(f"sandboxrun exec --config {config} -- true", project, "")
    assert done.returncode == 1
    assert done.stderr.decode().count("\n") == 1 and b"no Docker Engine" in done.stderr


def test_exec_says_when_output_was_cut(engine: DockerBackend, project: Path) -> None:
    """Past stdout_tail the tail is passed on, the exit code stays, and stderr says so."""
    cmd = "yes x | head -c 2000000; echo done; exit 3"
    done = agent_runs(f"sandboxrun exec -- {json.dumps(cmd)}", project, "")
    assert done.returncode == 3
    assert done.stdout.endswith(b"x\ndone\n") and len(done.stdout) == 1 << 20, done.stdout[-30:]
    assert b"output was cut to its last 1048576 bytes" in done.stderr


def test_image_entrypoint_cannot_stand_between(
    engine: DockerBackend, project: Path, tmp_path: Path
) -> None:
    """An image's ENTRYPOINT is reset: the hook itself runs, not a wrapper of the image's."""
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "Dockerfile").write_text(
        f'FROM {engine.settings.image}\nENTRYPOINT ["echo", "ENTRYPOINT-RAN"]\n'
    )
    tag = "sandboxrun-test/entrypoint:1"
    engine.client.images.build(path=str(tmp_path / "img"), tag=tag, rm=True)
    try:
        done = agent_runs(f"sandboxrun exec --image {tag} -- 'echo hook-ran'", project, "")
        assert (done.returncode, done.stdout) == (0, b"hook-ran\n"), done.stderr
    finally:
        engine.client.images.remove(tag, force=True)
