"""Real-world hook shapes behave the same sandboxed (issue #9): each hook runs as the agent
runs it, on the host, and then through sandboxrun, and the decisions are compared."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxrun import DockerBackend, HookFactory
from sandboxrun._settings import account_home
from tests.fake_home import command as as_account

from .conftest import HookWriter, cli

GUARD = """import json, sys
event = json.load(sys.stdin)
if "rm -rf" in event.get("tool_input", {}).get("command", ""):
    print("plugin guard: no rm -rf", file=sys.stderr)
    sys.exit(2)
"""
RM = '{"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}'
LS = '{"tool_name": "Bash", "tool_input": {"command": "ls"}}'


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    """A plugin installed in the ~/.claude/plugins of a fake account home (tmp_path/home:
    tests/fake_home.py), listed in its installed_plugins.json, with a python guard."""
    plugins = tmp_path / "home" / ".claude" / "plugins"
    root = plugins / "cache" / "market" / "guard" / "1.0.0"
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "guard.py").write_text(GUARD)
    registry = {"version": 2, "plugins": {"guard@market": [{"installPath": str(root)}]}}
    (plugins / "installed_plugins.json").write_text(json.dumps(registry))
    return root


@pytest.mark.parametrize("event", [RM, LS], ids=["rm", "ls"])
def test_a_plugin_hook_through_its_plugin_root(
    engine: DockerBackend, plugin: Path, tmp_path: Path, event: str
) -> None:
    """`python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"`, wrapped whole by exec, reaches the
    plugin's files (mounted read-only) and decides as it does unsandboxed."""
    command = 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(plugin)}
    project = tmp_path / "project"
    project.mkdir()
    bare = subprocess.run(["sh", "-c", command], input=event, capture_output=True, text=True,
                          cwd=project, env=env)  # fmt: skip
    boxed = subprocess.run(as_account(tmp_path / "home", cli("exec", "--", command)),
                           input=event, capture_output=True, text=True, cwd=project, env=env,
                           timeout=120)  # fmt: skip
    assert (boxed.returncode, boxed.stdout) == (bare.returncode, bare.stdout), boxed.stderr
    assert bare.returncode == (2 if "rm -rf" in event else 0)
    assert boxed.stderr.endswith(bare.stderr)


def test_a_plugin_root_outside_the_plugin_folder_is_not_mounted(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """A CLAUDE_PLUGIN_ROOT a repository's env block points elsewhere is ignored, said so."""
    other = tmp_path / "not-a-plugin"
    other.mkdir()
    (other / "secret").write_text("s3cret\n")
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(other)}
    done = subprocess.run(cli("exec", "--", 'cat "$CLAUDE_PLUGIN_ROOT/secret"'), capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)  # fmt: skip
    assert done.returncode != 0 and "s3cret" not in done.stdout
    assert "CLAUDE_PLUGIN_ROOT ignored" in done.stderr


def test_a_logger_writing_into_the_workspace_says_what_stopped_it(
    engine: DockerBackend, workspace: Path, hook: HookWriter
) -> None:
    """A hook that fails on the read-only workspace is reported with one sentence saying
    so, not only with its own error."""
    hook("echo entry >> hooks.log")
    result = HookFactory(engine.settings, engine).run(
        "PreToolUse", {"workspaceRoots": [str(workspace)]}
    )
    [outcome] = result.outcomes
    assert outcome.status == "failed" and "read-only" in (outcome.error or ""), outcome


# Claude Code's documented logging example (hooks guide): a PreToolUse logger appending
# to a file in ~/.claude.
LOGGER = (
    'jq -r \'"\\(.tool_input.command) - \\(.tool_input.description // "No description")"\''
    " >> ~/.claude/bash-command-log.txt"
)


def test_a_logger_to_the_users_claude_folder_works_as_on_the_host(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Issue #9 item 4: `>> ~/.claude/...` lands in the hook's own ~/.claude (emptied after
    the run), so the hook ends as it does on the host; the host's file is untouched."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".claude").mkdir(parents=True)
    ws.mkdir()
    bare = subprocess.run(["sh", "-c", LOGGER], input=LS, capture_output=True, text=True,
                          cwd=ws, env={**os.environ, "HOME": str(home)})  # fmt: skip
    host_log = Path(account_home()) / ".claude" / "bash-command-log.txt"
    before = host_log.read_bytes() if host_log.exists() else None
    boxed = subprocess.run(cli("exec", "--", LOGGER), input=LS, capture_output=True, text=True,
                           cwd=ws, timeout=120)  # fmt: skip
    assert (boxed.returncode, boxed.stdout, boxed.stderr) == (0, "", ""), boxed
    assert (bare.returncode, bare.stdout, bare.stderr) == (0, "", ""), bare
    assert (home / ".claude" / "bash-command-log.txt").read_text() == "ls - No description\n"
    assert (host_log.read_bytes() if host_log.exists() else None) == before


READ_TRANSCRIPT = (
    "python3 -c 'import json, sys; "
    'print(open(json.load(sys.stdin)["transcript_path"]).read().strip())\''
)


@pytest.fixture
def transcript() -> Iterator[Path]:
    """A session transcript where Claude Code keeps them: ~/.claude/projects/<project>/."""
    projects = Path(account_home()) / ".claude" / "projects"
    created = not projects.exists()
    folder = projects / f"sandboxrun-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    path = folder / "session.jsonl"
    path.write_text('{"type": "assistant", "text": "done"}\n')
    yield path
    shutil.rmtree(projects if created else folder)


def test_a_stop_hook_reads_its_transcript(
    engine: DockerBackend, transcript: Path, tmp_path: Path
) -> None:
    """The transcript the event names in the agent's own folder is mounted read-only, for
    exec and for run, and the hook reads what it reads unsandboxed."""
    event = json.dumps({"hook_event_name": "Stop", "transcript_path": str(transcript),
                        "cwd": str(tmp_path)})  # fmt: skip
    bare = subprocess.run(["sh", "-c", READ_TRANSCRIPT], input=event, capture_output=True,
                          text=True, cwd=tmp_path)  # fmt: skip
    boxed = subprocess.run(cli("exec", "--", READ_TRANSCRIPT), input=event, capture_output=True,
                           text=True, cwd=tmp_path, timeout=120)  # fmt: skip
    assert (boxed.returncode, boxed.stdout) == (0, bare.stdout) == (0, transcript.read_text())
    # run: the user's home is --home; its transcript folder is the one that counts.
    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    own = home / ".claude" / "projects" / "p" / "session.jsonl"
    own.parent.mkdir(parents=True)
    own.write_text("from run\n")
    entry = {"hooks": [{"type": "command", "command": READ_TRANSCRIPT}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [entry]}}))
    event = json.dumps({"transcript_path": str(own), "cwd": str(ws)})
    ran = subprocess.run(cli("run", "Stop", "--agent", "claude", home=home), input=event,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    [report] = json.loads(ran.stdout)["hooks"]
    assert (report["status"], report["exitCode"]) == ("completed", 0), report


def test_a_transcript_path_outside_the_agents_folder_is_not_mounted(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """An event naming any other file as its transcript gets nothing mounted."""
    secret = tmp_path / "elsewhere" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_text("s3cret\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    event = json.dumps({"transcript_path": str(secret)})
    done = subprocess.run(cli("exec", "--", READ_TRANSCRIPT), input=event, capture_output=True,
                          text=True, cwd=ws, timeout=120)  # fmt: skip
    assert done.returncode != 0 and "s3cret" not in done.stdout
