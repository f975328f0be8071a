"""Public Kiro hooks (tests/real_hooks/kiro/PROVENANCE.md), each run as Kiro runs it on
the host (`bash -c` in the project, the event on stdin) and through `sandboxrun run
--agent kiro`, Kiro's reading of both compared: the dialect's `interpret`/`combine`
read the host run, as Kiro would (`_dialects/kiro/dialect.py`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.kiro import KIRO
from sandboxrun._dialects.kiro.config import KiroHook
from sandboxrun._types import ExecResult

from .conftest import cli

HOOKS = Path(__file__).resolve().parents[1] / "real_hooks" / "kiro"
DOCS = HOOKS / "amazon-q-developer-cli__agent-format.json"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(account home for sandboxrun, the host's $HOME for bare runs, project)."""
    home, host, ws = tmp_path / "home", tmp_path / "host-home", tmp_path / "ws"
    for d in (home, host, ws):
        d.mkdir()
    (ws / ".kiro" / "agents").mkdir(parents=True)
    shutil.copy2(DOCS, ws / ".kiro" / "agents" / "docs.json")
    (ws / "README.md").write_text("hello\n")
    return home, host, ws


def host_reading(event: str, fields: dict[str, Any], ws: Path, host: Path) -> dict[str, Any]:
    """Every hook of the file that applies, run as Kiro runs it, read as Kiro reads it."""
    outcomes = []
    for spec in KIRO.discover(event, [str(ws)], str(host)).hooks:
        if not KIRO.matches(spec, fields):
            continue
        stdin = KIRO.prepare_input(event, fields, [str(ws)])
        env = {**os.environ, "HOME": str(host), **KIRO.event_env(fields, str(ws), None)}
        done = subprocess.run(["bash", "-c", spec.name], input=stdin, capture_output=True,
                              cwd=ws, env=env, timeout=120)  # fmt: skip
        result = ExecResult(done.returncode, done.stdout, done.stderr, 1)
        assert isinstance(spec, KiroHook)
        outcomes.append(KIRO.interpret(spec, result, 30.0))
    return KIRO.combine(outcomes, False)


def boxed(event: str, fields: dict[str, Any], home: Path) -> dict[str, Any]:
    done = subprocess.run(
        cli("run", event, "--agent", "kiro", home=home),
        input=json.dumps(fields), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def decision(answer: dict[str, Any]) -> tuple[Any, ...]:
    """What Kiro does with the answer: block or not, context or not, a warning or not."""
    return (answer["blocked"], bool(answer["additional_context"]), bool(answer["warnings"]))


@pytest.mark.parametrize(
    ("event", "fields", "expected"),
    [
        # `ls -la`: exit 0, its listing becomes context
        ("userPromptSubmit", {"prompt": "hi"}, (False, True, False)),
        # the audit hook appends to /tmp/bash_audit_log: exit 0, the tool runs
        ("preToolUse", {"tool_name": "execute_bash", "tool_input": {"command": "ls"}},
         (False, False, False)),
        # `git status` outside a repository (or without git): a warning, no context
        ("agentSpawn", {}, (False, False, True)),
    ],
)  # fmt: skip
def test_the_documented_agent_hooks_decide_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path, Path], event: str, fields: dict[str, Any],
    expected: tuple[Any, ...],
) -> None:  # fmt: skip
    home, host, ws = setup
    fields = {**fields, "cwd": str(ws)}
    assert decision(host_reading(event, fields, ws, host)) == expected
    assert decision(boxed(event, fields, home)) == expected
