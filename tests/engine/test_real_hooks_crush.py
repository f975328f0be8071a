"""Public Crush hooks (tests/real_hooks/crush/PROVENANCE.md), each run as Crush runs it
on the host (in the project, its `CRUSH_*` variables, the payload on stdin) and through
`sandboxrun run --agent crush` from the project's crush.json, Crush's reading of both
compared: the dialect's `interpret`/`combine` read the host run, as Crush would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.crush import CRUSH
from sandboxrun._types import ExecResult, HookSpec

from .conftest import cli

HOOKS = Path(__file__).resolve().parents[1] / "real_hooks" / "crush" / "charmbracelet__crush"


def project_hook(ws: Path, name: str) -> str:
    shutil.copy2(HOOKS / name, ws / name)
    command = f"./{name}"
    entry = {"matcher": "^bash$", "command": command}
    (ws / "crush.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    return command


def event_of(ws: Path, command: str) -> dict[str, Any]:
    return {"event": "PreToolUse", "session_id": "s1", "cwd": str(ws), "tool_name": "bash",
            "tool_input": {"command": command}}  # fmt: skip


def on_host(command: str, event: dict[str, Any], ws: Path, crush: bool = False) -> dict[str, Any]:
    """The hook as Crush starts it (a `#!` script: exec'd), read as sandboxrun reads a
    project's hook; with `crush`, as Crush itself reads it (an `allow` counts)."""
    stdin = CRUSH.prepare_input("PreToolUse", event, [str(ws)])
    env = {**os.environ, **CRUSH.event_env(event, str(ws))}
    done = subprocess.run(["bash", "-c", command], input=stdin, capture_output=True,
                          cwd=ws, env=env, timeout=120)  # fmt: skip
    hook = HookSpec("PreToolUse", "h", "project", ("x",), str(ws), ())
    result = ExecResult(done.returncode, done.stdout, done.stderr, 1)
    return CRUSH.combine([CRUSH.interpret(hook, result, 30.0, trust_workspace=crush)], False)


def boxed(event: dict[str, Any], home: Path, ws: Path) -> dict[str, Any]:
    done = subprocess.run(
        cli("run", "PreToolUse", "--agent", "crush", "--workspace", str(ws), home=home),
        input=json.dumps(event), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def decision(answer: dict[str, Any]) -> tuple[Any, ...]:
    return (answer["decision"], answer["halt"], answer["blocked"], answer["reason"])


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


@pytest.mark.parametrize(("command", "denied"), [("ghc Main.hs", True), ("ls -la", False)])
def test_no_haskell_denies_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path], command: str, denied: bool
) -> None:
    home, ws = setup
    hook = project_hook(ws, "no-haskell.sh")
    event = event_of(ws, command)
    host = on_host(hook, event, ws)
    answer = boxed(event, home, ws)
    assert decision(answer) == decision(host)
    assert (answer["decision"] == "deny") is denied
    if denied:
        assert answer["reason"] == "No Haskell allowed, kiddo."


def test_rtk_rewrite_without_rtk_has_no_opinion_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path]
) -> None:
    home, ws = setup
    hook = project_hook(ws, "rtk-rewrite.sh")
    event = event_of(ws, "git status")
    host = on_host(hook, event, ws)
    answer = boxed(event, home, ws)
    assert decision(answer) == decision(host) == (None, False, False, "")
    assert answer["updated_input"] is None


DOCS = HOOKS / "hooks"  # the docs' "Examples" (README.md), each block as the file it names
MCP_OFF = "echo 'MCP tools are disabled' >&2; exit 2"  # "Block all MCP tools", inline
LOG_ALL = 'echo "$(date -Iseconds) $CRUSH_TOOL_NAME" >> ./tools.log'  # "Log every tool call"


def configure(ws: Path, *entries: dict[str, str]) -> None:
    (ws / "crush.json").write_text(json.dumps({"hooks": {"PreToolUse": list(entries)}}))


def docs_hook(ws: Path, name: str, matcher: str) -> str:
    """One of the docs' example scripts in the project's `hooks/`, entered as the docs
    enter it (`./hooks/x.sh`; the JavaScript one through `node`)."""
    (ws / "hooks").mkdir(exist_ok=True)
    shutil.copy2(DOCS / name, ws / "hooks" / name)
    command = f"node ./hooks/{name}" if name.endswith(".js") else f"./hooks/{name}"
    configure(ws, {"matcher": matcher, "command": command})
    return command


def tool_event(ws: Path, tool: str, **tool_input: str) -> dict[str, Any]:
    return {"event": "PreToolUse", "session_id": "s1", "cwd": str(ws), "tool_name": tool,
            "tool_input": tool_input}  # fmt: skip


@pytest.mark.parametrize("name", ["no-rm-rf.sh", "no-rm-rf.js"])
@pytest.mark.parametrize(("command", "denied"), [("rm -rf /", True), ("rm -rf ./build", False)])
def test_no_rm_rf_denies_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path], name: str, command: str, denied: bool
) -> None:
    """ "Block destructive commands" (bash, `$CRUSH_TOOL_INPUT_COMMAND`) and its
    JavaScript variant (node, the payload's `tool_input.command`): exit 2 with the
    reason on stderr for `rm -rf /`, silence otherwise."""
    home, ws = setup
    hook = docs_hook(ws, name, "^bash$")
    event = tool_event(ws, "bash", command=command)
    host = on_host(hook, event, ws, crush=True)
    assert (host["decision"] == "deny") is denied
    if denied:
        assert host["reason"] == "Refusing to run rm -rf against root"
    assert decision(boxed(event, home, ws)) == decision(host)


@pytest.mark.parametrize(("path", "context"), [
    ("main.go", "Remember: run gofumpt after editing Go files."), ("README.md", ""),
])  # fmt: skip
def test_go_context_adds_the_same_context_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path], path: str, context: str
) -> None:
    """ "Inject context into file writes" (`$CRUSH_TOOL_INPUT_FILE_PATH`): context for
    a Go file, `{}` otherwise; no decision either way."""
    home, ws = setup
    hook = docs_hook(ws, "go-context.sh", "^(edit|write|multiedit)$")
    event = tool_event(ws, "write", file_path=str(ws / path), content="package main\n")
    host = on_host(hook, event, ws, crush=True)
    answer = boxed(event, home, ws)
    assert (answer["context"], answer["decision"]) == (host["context"], host["decision"])
    assert host["context"] == context and host["decision"] is None


def test_mcp_block_denies_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path]
) -> None:
    """ "Block all MCP tools": the inline one-liner on `^mcp_` denies with its stderr."""
    home, ws = setup
    configure(ws, {"matcher": "^mcp_", "command": MCP_OFF})
    event = tool_event(ws, "mcp_github_create_issue", title="x")
    host = on_host(MCP_OFF, event, ws, crush=True)
    assert (host["decision"], host["reason"]) == ("deny", "MCP tools are disabled")
    assert decision(boxed(event, home, ws)) == decision(host)
    other = boxed(tool_event(ws, "bash", command="ls"), home, ws)
    assert other["decision"] is None  # `^mcp_` does not select bash


def test_safe_bash_allow_counts_only_from_the_users_own_config(
    engine: DockerBackend, setup: tuple[Path, Path]
) -> None:
    """ "Auto-approve read-only tools" (`hooks/safe-bash.sh`): `{"decision":"allow"}`
    for `ls`, which Crush reads as pre-approved. From the project's crush.json the
    sandboxed answer keeps no `allow` (a repository cannot approve: stricter than the
    host, never looser); from the user's own config it is the same `allow`."""
    home, ws = setup
    hook = docs_hook(ws, "safe-bash.sh", "^bash$")
    event = tool_event(ws, "bash", command="ls -la")
    assert on_host(hook, event, ws, crush=True)["decision"] == "allow"
    assert boxed(event, home, ws)["decision"] is None
    (ws / "crush.json").unlink()
    own = home / ".config" / "crush"
    (own / "hooks").mkdir(parents=True)
    shutil.copy2(DOCS / "safe-bash.sh", own / "hooks" / "safe-bash.sh")
    script = str(own / "hooks" / "safe-bash.sh")
    (own / "crush.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "^bash$", "command": script}]}}))  # fmt: skip
    assert boxed(event, home, ws)["decision"] == "allow"
    silent = tool_event(ws, "bash", command="rm notes.txt")
    assert on_host(script, silent, ws, crush=True)["decision"] is None
    assert boxed(silent, home, ws)["decision"] is None


def test_tool_logger_cannot_write_the_read_only_workspace(
    engine: DockerBackend, setup: tuple[Path, Path]
) -> None:
    """ "Log every tool call" (inline, no matcher) appends to `./tools.log`. Needs what
    the sandbox withholds: on the host the line is written and the hook exits 0;
    sandboxed the workspace is read-only, the redirect fails (exit 1, a non-blocking
    error to Crush): the tool proceeds either way, the log line is lost."""
    home, ws = setup
    configure(ws, {"command": LOG_ALL})
    event = tool_event(ws, "view", file_path=str(ws / "README.md"))
    host = on_host(LOG_ALL, event, ws, crush=True)
    assert " view" in (ws / "tools.log").read_text()
    (ws / "tools.log").unlink()
    answer = boxed(event, home, ws)
    assert decision(answer) == decision(host) == (None, False, False, "")
    assert not (ws / "tools.log").exists()
