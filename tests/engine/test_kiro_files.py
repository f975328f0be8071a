"""Kiro's standalone hook files through the real sandbox: one Kiro CLI v3 command hook
(`.kiro/hooks/guard.json`, the guard of kiro.dev/docs/cli/v3/hooks's shape: the event on
stdin, exit 2 with stderr blocks PreToolUse) and one Kiro IDE `runCommand` hook
(`.kiro/hooks/prompt.kiro.hook`, promptSubmit: the prompt in `USER_PROMPT`, stdout
becomes context), each run by `sandboxrun run --agent kiro` and by the wrapper
`install` writes (`exec`). The rules: `sandboxrun/_dialects/kiro/dialect.py`."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend

from .conftest import _test_config, cli

GUARD = {
    "version": "v1",
    "hooks": [{
        "name": "guard-shell",
        "trigger": "PreToolUse",
        "matcher": "shell|execute_bash",
        "action": {"type": "command", "command": (
            "cmd=$(jq -r '.tool_input.command // empty');"
            " case \"$cmd\" in *'rm -rf'*) echo \"Blocked: $cmd\" >&2; exit 2;; esac")},
        "timeout": 30,
        "enabled": True,
    }],
}  # fmt: skip
PROMPT = {
    "version": "1",
    "enabled": True,
    "name": "prompt-context",
    "when": {"type": "promptSubmit"},
    "then": {"type": "runCommand", "command": 'printf "you asked: %s" "$USER_PROMPT"'},
}


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / ".kiro" / "hooks").mkdir(parents=True)
    (ws / ".git").mkdir()
    home.mkdir()
    (ws / ".kiro" / "hooks" / "guard.json").write_text(json.dumps(GUARD))
    (ws / ".kiro" / "hooks" / "prompt.kiro.hook").write_text(json.dumps(PROMPT))
    return home, ws


def run(event: str, fields: dict[str, Any], home: Path) -> dict[str, Any]:
    done = subprocess.run(cli("run", event, "--agent", "kiro", home=home),
                          input=json.dumps(fields), capture_output=True, text=True,
                          timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_a_v3_guard_blocks_in_the_sandbox_and_lets_the_rest_through(
    engine: DockerBackend, project: tuple[Path, Path]
) -> None:
    home, ws = project
    tool = {"tool_name": "shell", "cwd": str(ws)}
    blocked = run("PreToolUse", {**tool, "tool_input": {"command": "rm -rf /"}}, home)
    assert blocked["blocked"] is True and "Blocked: rm -rf /" in blocked["reason"]
    allowed = run("PreToolUse", {**tool, "tool_input": {"command": "ls"}}, home)
    assert allowed["blocked"] is False and allowed["warnings"] == []
    other = run("PreToolUse", {"tool_name": "read", "tool_input": {"command": "rm -rf /"},
                               "cwd": str(ws)}, home)  # fmt: skip
    assert other["blocked"] is False  # the matcher does not select `read`


def test_an_ide_run_command_hook_reads_user_prompt_in_the_sandbox(
    engine: DockerBackend, project: tuple[Path, Path]
) -> None:
    home, ws = project
    answer = run("promptSubmit", {"prompt": "add tests", "cwd": str(ws)}, home)
    assert answer["additional_context"] == "you asked: add tests"


def test_the_installed_ide_wrapper_carries_user_prompt_from_the_ide(
    engine: DockerBackend, project: tuple[Path, Path]
) -> None:
    """The IDE starts the wrapper with `USER_PROMPT` set and nothing on stdin."""
    home, ws = project
    # Review off, as tests/engine/test_install.py installs: the install has a `--home` of
    # its own, while the wrapper's exec pins in the account's home.
    config = home / "install.toml"
    config.write_text(_test_config() + 'review = "off"\n')
    install = cli("install", "--agent", "kiro", "--workspace", str(ws), "--home", str(home),
                  config=config)  # fmt: skip
    subprocess.run(install, check=True, capture_output=True, timeout=120)
    wrapper = json.loads((ws / ".kiro" / "hooks" / "prompt.kiro.hook").read_text())
    command = wrapper["then"]["command"]
    assert "exec --agent kiro --untrusted" in command
    env = {**os.environ, "USER_PROMPT": "ship it"}
    done = subprocess.run(["bash", "-c", command], cwd=ws, env=env, input=b"",
                          capture_output=True, timeout=240)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b"you asked: ship it"), done.stderr
    assert shlex.split(command)[-1] == PROMPT["then"]["command"]
