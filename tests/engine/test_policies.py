"""The policy pack of examples/policies, installed as its README says, run through the
sandbox for both hook families on allowing and blocking events, and run unsandboxed on
the host with the same decision (the same discovery and combination, another backend)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, ExecRequest, ExecResult, HookFactory, Settings

from .conftest import engine_settings

PACK = Path(__file__).resolve().parents[2] / "examples" / "policies"
# Cline's two event shapes: the VS Code extension's (`cline`) and the CLI's (`cline-cli`).
FAMILIES = ("cline", "cline-cli", "claude")
# Built from parts, so that no secret scanner takes this file for a leak.
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PRIVATE_KEY = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


def install(family: str, ws: Path) -> None:
    """Install the pack into workspace `ws` with the commands of its README."""
    if family.startswith("cline"):
        shutil.copytree(PACK / "scripts", ws / ".cline" / "hooks" / "policies")
        shutil.copytree(PACK / "cline", ws / ".cline" / "hooks", dirs_exist_ok=True)
    else:
        shutil.copytree(PACK / "scripts", ws / ".claude" / "policies")
        shutil.copy(PACK / "claude" / "settings.json", ws / ".claude" / "settings.json")


@pytest.fixture
def project(tmp_path: Path) -> Callable[..., Path]:
    """`project(family, typescript=True)`: a git repository on `main` with the pack."""

    def make(family: str, typescript: bool = True) -> Path:
        ws = tmp_path / f"shop-{family}-{typescript}"
        (ws / "src").mkdir(parents=True)
        if typescript:
            (ws / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
        (ws / "PROJECT_CONTEXT.md").write_text("Prices are integers in cents.\n")
        subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
        install(family, ws)
        return ws

    return make


def tool_event(
    family: str, ws: Path, kind: str, value: str, path: str = ""
) -> tuple[str, dict[str, Any]]:
    """A PreToolUse event of `family`: a shell command (`kind` "shell") or a file write."""
    if family == "cline-cli":  # as the CLI 3.0.65 sends it (its `preToolUse` left out)
        tool_input = {"commands": [value]} if kind == "shell" else {"path": path, "new_text": value}
        tool = "run_commands" if kind == "shell" else "editor"
        return "tool_call", {
            "hookName": "tool_call",
            "workspaceRoots": [str(ws)],
            "tool_call": {"id": "call_1", "name": tool, "input": tool_input},
        }
    if family == "cline":
        params = {"command": value} if kind == "shell" else {"path": path, "content": value}
        tool = "execute_command" if kind == "shell" else "write_to_file"
        return "PreToolUse", {
            "hookName": "PreToolUse",
            "workspaceRoots": [str(ws)],
            "preToolUse": {"toolName": tool, "parameters": params},
        }
    tool_input = {"command": value} if kind == "shell" else {"file_path": path, "content": value}
    return "PreToolUse", {
        "hook_event_name": "PreToolUse",
        "cwd": str(ws),
        "session_id": "s",
        "tool_name": "Bash" if kind == "shell" else "Write",
        "tool_input": tool_input,
    }


class HostBackend:
    """Runs each hook as a plain process on the host: the decision the hooks give
    without sandboxrun's sandbox (what the agent alone would get)."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def check(self) -> None:
        return None

    def image_tools(self) -> None:
        return None

    def run(self, request: ExecRequest) -> ExecResult:
        env = {"PATH": os.environ["PATH"], "HOME": str(self.home), "LANG": "C.UTF-8", **request.env}
        done = subprocess.run(
            request.argv,
            input=request.stdin,
            cwd=request.workdir,
            env=env,
            capture_output=True,
            timeout=request.timeout,
            check=False,
        )
        return ExecResult(done.returncode, done.stdout, done.stderr, 1)


def answer(
    settings: Settings, backend: Any, home: Path, hook: str, event: dict[str, Any], ws: Path
) -> dict[str, Any]:
    result = HookFactory(settings, backend, home=str(home)).run(hook, event, [str(ws)])
    return result.to_json()


def sandboxed_and_host(
    engine: DockerBackend,
    tmp_path: Path,
    family: str,
    hook: str,
    event: dict[str, Any],
    ws: Path,
    **overrides: Any,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The answer through the sandbox, and the answer of the same hooks run on the host."""
    settings = engine_settings(agent=family.split("-")[0], fail_closed=True, **overrides)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    boxed = answer(settings, DockerBackend(settings, client=engine.client), home, hook, event, ws)
    host = answer(settings, HostBackend(tmp_path), home, hook, event, ws)
    return boxed, host


def decision(doc: dict[str, Any]) -> dict[str, Any]:
    """What the agent acts on: the answer without the per-hook report."""
    for h in doc["hooks"]:
        assert h["status"] == "completed", h
    return {k: v for k, v in doc.items() if k != "hooks"}


def is_blocked(doc: dict[str, Any]) -> bool:
    return doc.get("cancel") is True or doc.get("blocked") is True


GUARD_CASES = [
    # (kind, value, path, blocked, what the reason says)
    ("shell", "ls -la && npm test", "", False, ""),
    ("shell", "rm -rf /", "", True, "deletes / recursively"),
    ("shell", "cd /tmp; sudo rm -fr ~/", "", True, "deletes ~/ recursively"),
    ("shell", 'rm -r --force "$HOME"', "", True, "deletes $HOME recursively"),
    ("shell", "rm -rf build dist", "", False, ""),
    ("shell", "git push --force origin main", "", True, "protected branch main"),
    ("shell", "git push origin +master", "", True, "protected branch master"),
    ("shell", "git push -f", "", True, "protected branch main"),  # the checked-out branch
    ("shell", "git push --force origin feature/x", "", False, ""),
    ("shell", "git push origin main", "", False, ""),
    ("write", "export const x = 1;\n", "src/x.ts", False, ""),
    ("write", "module.exports = 1;\n", "src/x.js", True, "TypeScript project"),
    ("write", "export default {};\n", "eslint.config.js", False, ""),
    ("write", f"AWS_ACCESS_KEY_ID={AWS_KEY}\n", "src/env.ts", True, "an AWS access key id"),
    ("write", PRIVATE_KEY, "deploy/key.ts", True, "a private key"),
    ("shell", f"echo {GITHUB_TOKEN} > .token", "", True, "a GitHub token"),
]


@pytest.mark.parametrize("family", FAMILIES)
def test_guards_block_and_allow_like_on_the_host(
    engine: DockerBackend, project: Callable[..., Path], tmp_path: Path, family: str
) -> None:
    """Every guard case gives its decision in the sandbox, and the same decision on the host."""
    ws = project(family)
    for kind, value, path, blocked, why in GUARD_CASES:
        hook, event = tool_event(family, ws, kind, value, path)
        boxed, host = sandboxed_and_host(engine, tmp_path, family, hook, event, ws)
        case = f"{family} {kind} {value[:40]!r} {path}"
        assert is_blocked(boxed) is blocked, (case, boxed)
        assert decision(boxed) == decision(host), case
        reason = boxed.get("errorMessage") or boxed.get("reason") or ""
        assert why in reason and AWS_KEY not in reason and GITHUB_TOKEN not in reason, case


@pytest.mark.parametrize("family", FAMILIES)
def test_js_is_fine_outside_a_typescript_project(
    engine: DockerBackend, project: Callable[..., Path], tmp_path: Path, family: str
) -> None:
    """No tsconfig.json: a .js file may be written."""
    ws = project(family, typescript=False)
    hook, event = tool_event(family, ws, "write", "module.exports = 1;\n", "src/x.js")
    boxed, host = sandboxed_and_host(engine, tmp_path, family, hook, event, ws)
    assert not is_blocked(boxed) and decision(boxed) == decision(host)


@pytest.mark.parametrize(
    ("family", "hook", "field"),
    [
        ("cline", "TaskStart", "contextModification"),
        ("claude", "SessionStart", "additionalContext"),
    ],
)
def test_project_context_at_task_start(
    engine: DockerBackend,
    project: Callable[..., Path],
    tmp_path: Path,
    family: str,
    hook: str,
    field: str,
) -> None:
    """Task start adds the project's name, stack, branch and PROJECT_CONTEXT.md."""
    ws = project(family)
    event = (
        {"hookName": hook, "workspaceRoots": [str(ws)], "taskStart": {"taskMetadata": {}}}
        if family == "cline"
        else {"hook_event_name": hook, "cwd": str(ws), "source": "startup"}
    )
    boxed, host = sandboxed_and_host(engine, tmp_path, family, hook, event, ws)
    context = boxed[field]
    assert f"Project: {ws.name}" in context and "Stack: TypeScript" in context
    assert "Git branch: main" in context and "Prices are integers in cents." in context
    assert decision(boxed) == decision(host)


@pytest.mark.parametrize(
    ("family", "glob"),
    [
        ("cline", "*/.cline/hooks/PostToolUse"),
        ("claude", "*log-tool-use.sh*"),
    ],
)
def test_tool_use_log_persists_in_the_hook_state(
    engine: DockerBackend, project: Callable[..., Path], tmp_path: Path, family: str, glob: str
) -> None:
    """With the state setting of the pack's README, each tool use adds a line to the
    hook's own persistent log; without it, nothing persists and the hook still passes."""
    ws = project(family)

    def post(command: str) -> dict[str, Any]:
        if family == "cline":
            return {
                "hookName": "PostToolUse",
                "workspaceRoots": [str(ws)],
                "postToolUse": {
                    "toolName": "execute_command",
                    "parameters": {"command": command},
                    "success": True,
                },
            }
        return {
            "hook_event_name": "PostToolUse",
            "cwd": str(ws),
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_response": {},
        }

    state_dir = tmp_path / "state"
    for command in ("npm test", "git status"):
        boxed, _ = sandboxed_and_host(
            engine,
            tmp_path,
            family,
            "PostToolUse",
            post(command),
            ws,
            state=(glob,),
            state_dir=str(state_dir),
        )
        assert not is_blocked(boxed) and boxed["hooks"][0]["error"] is None, boxed
    [log] = state_dir.glob("*/tool-use.jsonl")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["agent"], e["tool"], e["what"]) for e in entries] == [
        (family, "execute_command" if family == "cline" else "Bash", c)
        for c in ("npm test", "git status")
    ]
    assert all(e["workspace"] == str(ws) for e in entries)

    no_state = tmp_path / "no-state"
    boxed, _ = sandboxed_and_host(
        engine, tmp_path, family, "PostToolUse", post("ls"), ws, state_dir=str(no_state)
    )
    assert not is_blocked(boxed) and not no_state.exists()
