"""Issue 17 item 8: real hooks that hit a sandbox wall often answer with a decision (exit 0
with `cancel: true`, exit 2, a JSON deny) rather than fail. `run`'s report names what the
sandbox stopped (`sandboxStopped`) and `exec` adds the sentence to stderr, whatever the
exit code, and the decision, exit code and stdout stay the hook's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend

from .conftest import HookWriter, cli

# A Cline audit hook: it cannot record the call (the workspace is read-only), so it cancels.
AUDIT = """
if ! echo "$(date) call" >> "$(dirname "$0")/../../audit.log"; then
  echo '{"cancel": true, "errorMessage": "audit log not writable: refusing the tool call"}'
  exit 0
fi
echo '{"cancel": false}'
"""
CANCEL = '{"cancel": true, "errorMessage": "audit log not writable: refusing the tool call"}\n'
# A Claude guard that must ask a registry (none: the sandbox has no network), and blocks.
REGISTRY_EXIT_2 = (
    "curl -sS -m 10 -o /dev/null http://registry.test/ || "
    "{ echo 'cannot reach the registry: blocking' >&2; exit 2; }"
)
REGISTRY_DENY = (
    "curl -sS -m 10 -o /dev/null http://registry.test/ || "
    '{ echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
    '"permissionDecision": "deny", "permissionDecisionReason": "registry unreachable"}}\'; }'
)
# uv with a dependency, pointed at an index on a `.test` name (nothing leaves anyway): uv
# exits 2 when it cannot fetch, which Claude Code reads as a block.
UV_SCRIPT = '# /// script\n# dependencies = ["requests"]\n# ///\nimport requests\n'
UV = "UV_DEFAULT_INDEX=http://pypi.test/simple UV_HTTP_RETRIES=0 uv run --script guard.py"
BASH = {"tool_name": "Bash", "tool_input": {"command": "npm install left-pad"}}


def _run(*args: str, stdin: str, cwd: Path, home: Path | None = None) -> Any:
    return subprocess.run(cli(*args, home=home), input=stdin, capture_output=True, text=True,
                          cwd=cwd, timeout=180)  # fmt: skip


def test_a_cline_hook_that_cancels_on_the_read_only_workspace(
    engine: DockerBackend, workspace: Path, hook: HookWriter
) -> None:
    """Exit 0 with `cancel: true`: `run` still cancels, with the hook's own message, and
    its report says `sandboxStopped: "read-only workspace write"`; `exec` of the same hook
    prints the hook's stdout byte for byte, exits 0, and adds the sentence to stderr."""
    path = hook(AUDIT)
    # Writable by the hook's user, as your own workspace is yours: as root, hooks run as
    # nobody, and gVisor checks that before the read-only mount (EACCES, not EROFS).
    workspace.chmod(0o777)
    event = json.dumps({"workspaceRoots": [str(workspace)], "preToolUse": {"toolName": "x"}})
    ran = _run("run", "PreToolUse", "--workspace", str(workspace), stdin=event, cwd=workspace)
    answer = json.loads(ran.stdout)
    assert answer["cancel"] is True, answer
    assert "audit log not writable" in answer["errorMessage"], answer
    [report] = answer["hooks"]
    assert (report["status"], report["exitCode"]) == ("completed", 0), report
    assert report["sandboxStopped"] == "read-only workspace write", report
    assert report["error"] is None, report  # a hint, not a failure
    done = _run("exec", "--agent", "cline", "--", str(path), stdin=event, cwd=workspace)
    assert (done.returncode, done.stdout) == (0, CANCEL), done.stderr
    assert "Read-only file system" in done.stderr, done.stderr
    assert "sandboxrun: the sandbox stopped a write: the workspace" in done.stderr, done.stderr


def _claude_user(tmp_path: Path, command: str) -> tuple[Path, Path]:
    """(home, workspace) with `command` as the user's PreToolUse hook for Bash."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".claude").mkdir(parents=True)
    ws.mkdir()
    (ws / "guard.py").write_text(UV_SCRIPT)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    settings = {"hooks": {"PreToolUse": [entry]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    return home, ws


@pytest.mark.parametrize(
    ("command", "exit_code", "said"),
    [(REGISTRY_EXIT_2, 2, "cannot reach the registry: blocking"),
     (REGISTRY_DENY, 0, "Could not resolve host"),
     (UV, 2, "Temporary failure in name resolution")],
    ids=["exit-2", "json-deny", "uv"],
)  # fmt: skip
def test_a_claude_hook_that_blocks_without_network(
    engine: DockerBackend, tmp_path: Path, command: str, exit_code: int, said: str
) -> None:
    """Exit 2 (a curl guard, uv), or a JSON deny: the tool is still blocked, the report
    says `sandboxStopped: "network connection"`; `exec` keeps the exit code and stdout.
    After a JSON deny it adds the sentence to stderr after the hook's own words; after exit
    2 Claude Code hands that stderr to the model as the reason, so nothing of ours joins
    it (issue 30: the hint goes to the -v log)."""
    home, ws = _claude_user(tmp_path, command)
    event = json.dumps({**BASH, "cwd": str(ws), "hook_event_name": "PreToolUse"})
    ran = _run("run", "PreToolUse", "--agent", "claude", stdin=event, cwd=ws, home=home)
    answer = json.loads(ran.stdout)
    assert answer["blocked"] is True, answer
    [report] = answer["hooks"]
    assert (report["status"], report["exitCode"]) == ("completed", exit_code), report
    assert report["sandboxStopped"] == "network connection", report
    assert said in report["stderr"], report
    done = _run("exec", "--agent", "claude", "--", command, stdin=event, cwd=ws)
    assert done.returncode == exit_code, done.stderr
    if exit_code == 0:
        assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    else:
        assert done.stdout == ""
    hint = "sandboxrun: the sandbox stopped a network connection: hooks have no network"
    assert said in done.stderr, done.stderr
    if exit_code == 2:
        assert "sandboxrun" not in done.stderr, done.stderr
    else:
        assert done.stderr.index(said) < done.stderr.index(hint), done.stderr


def test_a_hook_that_echoes_the_event_is_not_taken_for_a_wall(
    engine: DockerBackend, workspace: Path, hook: HookWriter
) -> None:
    """A logger that copies the event (here a tool's output naming a read-only file
    system) to its stderr hit no wall: no `sandboxStopped`, no sentence on `exec`."""
    path = hook("cat >&2; echo '{\"cancel\": false}'")
    event = json.dumps({
        "workspaceRoots": [str(workspace)],
        "postToolUse": {"toolName": "execute_command", "result": "mkdir: Read-only file system"},
    })  # fmt: skip
    ran = _run("run", "PreToolUse", "--workspace", str(workspace), stdin=event, cwd=workspace)
    [report] = json.loads(ran.stdout)["hooks"]
    assert "Read-only file system" in report["stderr"] and "sandboxStopped" not in report
    done = _run("exec", "--agent", "cline", "--", str(path), stdin=event, cwd=workspace)
    assert done.returncode == 0 and "sandboxrun: the sandbox stopped" not in done.stderr
