"""Real-world hook shapes behave the same sandboxed (issue #9): each hook runs as the agent
runs it, on the host, and then through sandboxrun, and the decisions are compared."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxrun import DockerBackend, HookFactory
from sandboxrun._settings import account_home

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
def plugin() -> Iterator[Path]:
    """A plugin installed in the user's ~/.claude/plugins, with a python guard."""
    plugins = Path(account_home()) / ".claude" / "plugins"
    created = not plugins.exists()
    root = plugins / f"sandboxrun-test-{uuid.uuid4().hex[:8]}"
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "guard.py").write_text(GUARD)
    yield root
    shutil.rmtree(plugins if created else root)


@pytest.mark.parametrize("event", [RM, LS], ids=["rm", "ls"])
def test_a_plugin_hook_through_its_plugin_root(
    engine: DockerBackend, plugin: Path, tmp_path: Path, event: str
) -> None:
    """`python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"`, wrapped whole by exec, reaches the
    plugin's files (mounted read-only) and decides as it does unsandboxed."""
    command = 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(plugin)}
    bare = subprocess.run(["sh", "-c", command], input=event, capture_output=True, text=True,
                          cwd=tmp_path, env=env)  # fmt: skip
    boxed = subprocess.run(cli("exec", "--", command), input=event, capture_output=True,
                           text=True, cwd=tmp_path, env=env, timeout=120)  # fmt: skip
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
