"""Auggie (Augment) hooks from public repositories (issue 18, item 7; provenance and
licences in tests/real_hooks/augment/PROVENANCE.md), each run as Auggie runs it on the
host (`sh -c` in the workspace, the event on stdin; Auggie sets no project variable that
its docs confirm) and through `sandboxrun exec --agent augment`, with the same decision:
an inline jq logger, a PowerShell-only guard (the image carries no PowerShell: a named "cannot start"), and a
SessionStart context hook whose tool (`bd`) is absent. `run --agent augment` reads the
repository's `.augment/settings.json` as Auggie does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sandboxrun import DockerBackend, ExecResult
from sandboxrun._dialects.claude.agents import AUGMENT
from sandboxrun._types import HookSpec

from .claudelike_hooks import bare, boxed, checkout, event_for, run_event


def both(tmp_path: Path, folder: str) -> tuple[Path, Path]:
    return (checkout("augment", folder, tmp_path / "host" / folder),
            checkout("augment", folder, tmp_path / "box" / folder))  # fmt: skip


def auggie_event(ws: Path, hook_event: str, **fields: object) -> str:
    """Auggie's input: `conversation_id` and `workspace_roots` (docs.augmentcode.com)."""
    event = json.loads(event_for(ws, hook_event, **fields))
    del event["session_id"]
    return json.dumps({**event, "conversation_id": "c1", "workspace_roots": [str(ws)]})


def decision(hook_event: str, done: object) -> tuple[str, bool, str]:
    """What Auggie (Claude-compatible answers) makes of a run: the dialect's reading."""
    code, out, err = done.returncode, done.stdout, done.stderr  # type: ignore[attr-defined]
    spec = HookSpec(hook_name=hook_event, name="h", source="project", argv=("h",),
                    workdir="/", mounts=("/",))  # fmt: skip
    outcome = AUGMENT.interpret(spec, ExecResult(code, out.encode(), err.encode(), 1), 60.0)
    return (outcome.status, bool(outcome.answer.get("blocked", False)),
            outcome.answer.get("additionalContext", ""))  # fmt: skip


def hooks_of(ws: Path, hook_event: str) -> list[str]:
    settings = json.loads((ws / ".augment" / "settings.json").read_text())
    return [h["command"] for group in settings["hooks"][hook_event] for h in group["hooks"]]


def test_agentsbridge_inline_logger_the_same_sandboxed(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """sampleXbro/agentsbridge `.augment/settings.json` PreToolUse: `echo "Running:
    $(jq ...)"` (jq in the image): the same line on stdout, exit 0, no decision."""
    host, box = both(tmp_path, "sampleXbro__agentsbridge")
    [command] = hooks_of(host, "PreToolUse")
    args = {"tool_name": "launch-process", "tool_input": {"command": "ls -la"}}
    done = bare(host, command, auggie_event(host, "PreToolUse", **args), None)
    sandboxed = boxed(box, "augment", command, auggie_event(box, "PreToolUse", **args))
    assert (done.returncode, done.stdout) == (0, "Running: ls -la\n"), done.stderr
    assert (sandboxed.returncode, sandboxed.stdout) == (0, done.stdout), sandboxed.stderr
    assert decision("PreToolUse", sandboxed) == decision("PreToolUse", done)
    assert decision("PreToolUse", done)[:2] == ("completed", False)


def test_agentsbridge_matcher_names_no_auggie_tool(engine: DockerBackend, tmp_path: Path) -> None:
    """The same file's matchers name Claude's tools (`Bash`, `Edit|Write`); Auggie's
    shell tool is `launch-process`, so for it no hook runs, through `run` as in Auggie."""
    _, box = both(tmp_path, "sampleXbro__agentsbridge")
    home = tmp_path / "home"
    home.mkdir()
    args = {"tool_name": "launch-process", "tool_input": {"command": "ls"}}
    answer = run_event(home, "augment", "PreToolUse", auggie_event(box, "PreToolUse", **args))
    assert (answer["blocked"], answer["hooks"]) == (False, [])


def test_orchestrator_powershell_guard_cannot_start(engine: DockerBackend, tmp_path: Path) -> None:
    """rbenzing/Orchestrator `.augment/hooks/validate-orchestration-command.sh` (PreToolUse
    on launch-process) hands the event to `powershell.exe`: Windows only. Neither Linux
    nor the image has it (PowerShell is not added to the image): exit 127 naming the
    missing command, a non-blocking error on both sides, never a silent allow."""
    if shutil.which("powershell.exe"):
        pytest.skip("the host has powershell.exe")
    host, box = both(tmp_path, "rbenzing__Orchestrator")
    command = ".augment/hooks/validate-orchestration-command.sh"  # its settings.json entry
    args = {"tool_name": "launch-process", "tool_input": {"command": "git push"}}
    done = bare(host, command, auggie_event(host, "PreToolUse", **args), None)
    sandboxed = boxed(box, "augment", command, auggie_event(box, "PreToolUse", **args))
    assert done.returncode == sandboxed.returncode == 127, sandboxed.stderr
    assert "powershell.exe" in sandboxed.stderr and "not found" in sandboxed.stderr
    assert decision("PreToolUse", sandboxed) == decision("PreToolUse", done)
    assert decision("PreToolUse", done)[:2] == ("failed", False)


def test_nts_beads_prime_without_bd(engine: DockerBackend, tmp_path: Path) -> None:
    """nick-llewellyn/nts `.augment/hooks/beads-prime.sh` (SessionStart) primes context
    from the `bd` tool; without it (not a Debian package, not in the image) it exits 0
    silently by design, on both sides: no context."""
    if shutil.which("bd"):
        pytest.skip("the host has bd")
    host, box = both(tmp_path, "nick-llewellyn__nts")
    command = ".augment/hooks/beads-prime.sh"
    done = bare(host, command, auggie_event(host, "SessionStart"), None)
    sandboxed = boxed(box, "augment", command, auggie_event(box, "SessionStart"))
    assert (done.returncode, done.stdout) == (sandboxed.returncode, sandboxed.stdout) == (0, "")
    assert decision("SessionStart", sandboxed) == decision("SessionStart", done)
