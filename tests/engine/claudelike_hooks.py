"""Running a public hook of a Claude-shaped agent (tests/real_hooks/<agent>/) as its agent
runs it on the host, and through `sandboxrun exec --agent X`: the helpers the
test_real_hooks_<agent>.py files share."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .conftest import cli

REAL_HOOKS = Path(__file__).resolve().parent.parent / "real_hooks"


def checkout(agent: str, folder: str, where: Path) -> Path:
    """A copy of a repository's hook files (with their modes) as a workspace at `where`:
    what a clone brings. A `.git` folder makes it the project root, as a clone is."""
    shutil.copytree(REAL_HOOKS / agent / folder, where)
    (where / ".git").mkdir(exist_ok=True)
    return where


def event_for(ws: Path, hook_event: str, **fields: Any) -> str:
    """The agent's event JSON (Claude-shaped: session, cwd, event name, then the rest)."""
    return json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": hook_event,
                       **fields})  # fmt: skip


def bare(
    ws: Path, command: str, event: str, project_var: str | None, **extra: str
) -> subprocess.CompletedProcess[str]:
    """The hook as the agent runs it on the host: `sh -c COMMAND` in the project, the
    event on stdin, the project variable set (None: the agent sets none, as iFlow and
    Augment), with the user's full rights; `extra` adds to the environment (a HOME)."""
    env = {**os.environ, **({project_var: str(ws)} if project_var else {}), **extra}
    return subprocess.run(["sh", "-c", command], input=event, capture_output=True, text=True,
                          cwd=ws, env=env, timeout=120)  # fmt: skip


def boxed(
    ws: Path, agent: str, command: str, event: str, *options: str
) -> subprocess.CompletedProcess[str]:
    """The same command through `sandboxrun exec --agent AGENT` (the one form a wrapper
    takes), started where the agent starts it; exec sets the project variable inside."""
    return subprocess.run(cli("exec", "--agent", agent, *options, "--", command), input=event,
                          capture_output=True, text=True, cwd=ws, timeout=180)  # fmt: skip


def run_event(home: Path, agent: str, hook_event: str, event: str) -> dict[str, Any]:
    """`sandboxrun run EVENT --agent AGENT`: discovery from the workspace's own config
    file, every hook sandboxed, the combined answer."""
    done = subprocess.run(cli("run", hook_event, "--agent", agent, home=home), input=event,
                          capture_output=True, text=True, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
