"""Five public Codex hooks (tests/real_hooks/codex, provenance in its PROVENANCE.md), each
run as Codex runs it on the host (`sh -lc` in the repository, the event on stdin) and then
through `sandboxrun exec --agent codex`, read the way Codex reads it: the same decision,
or, for the hook that needs a workspace write, the failure named (issue 18, item 7).
`run --agent codex` finds the repository's hooks and blocks with the guard."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.codex import CODEX
from sandboxrun._types import ExecResult, HookSpec

from .conftest import _test_config, cli

HOOKS = Path(__file__).parent.parent / "real_hooks" / "codex"


def repository(tmp_path: Path, name: str) -> Path:
    """A git repository holding one public project's copied hooks."""
    ws = tmp_path / name
    shutil.copytree(HOOKS / name, ws)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def command(ws: Path, event: str, index: int = 0) -> str:
    """The command of the `index`th handler Codex finds for `event` in .codex/hooks.json."""
    table = json.loads((ws / ".codex" / "hooks.json").read_text())["hooks"][event]
    return str([h for group in table for h in group["hooks"]][index]["command"])


def codex_event(ws: Path, name: str, **fields: Any) -> bytes:
    base = {"session_id": "s1", "turn_id": "t1", "transcript_path": None, "cwd": str(ws),
            "hook_event_name": name, "model": "gpt-5", "permission_mode": "default"}  # fmt: skip
    return json.dumps({**base, **fields}).encode()


def both(ws: Path, cmd: str, event: bytes) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    """(bare on the host as Codex runs it, through `sandboxrun exec --agent codex`)."""
    bare = subprocess.run(["/bin/sh", "-lc", cmd], input=event, capture_output=True, cwd=ws,
                          timeout=60)  # fmt: skip
    boxed = subprocess.run(cli("exec", "--agent", "codex", "--untrusted", "--", cmd),
                           input=event, capture_output=True, cwd=ws, timeout=120)  # fmt: skip
    return bare, boxed


def decision(hook: str, done: subprocess.CompletedProcess[bytes]) -> tuple[Any, ...]:
    """What Codex makes of a run: (status, blocked, reason, context)."""
    spec = HookSpec(hook, "h", "user", (), "/", ())
    out = CODEX.interpret(spec, ExecResult(done.returncode, done.stdout, done.stderr, 1), 60)
    answer = out.answer
    return (out.status, answer.get("blocked"), answer.get("reason"),
            answer.get("additionalContext"))  # fmt: skip


def test_devkit_guard_blocks_rm_rf_root_on_both_sides(
    engine: DockerBackend, tmp_path: Path
) -> None:
    ws = repository(tmp_path, "devkit")
    cmd = command(ws, "PreToolUse", 0)
    event = codex_event(ws, "PreToolUse", tool_name="Bash", tool_use_id="c1",
                        tool_input={"command": "rm -rf /"})  # fmt: skip
    bare, boxed = both(ws, cmd, event)
    assert bare.returncode == 2, bare.stderr
    assert (
        decision("PreToolUse", bare)
        == decision("PreToolUse", boxed)
        == ("completed", True, "BLOCKED: destructive rm targeting root or home directory", "")
    )


def test_devkit_ask_is_ignored_by_codex_on_both_sides(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """`permissionDecision: "ask"` is unsupported in Codex: the hook failed, the command
    runs. Through `exec --untrusted` the answer Codex would ignore is dropped whole."""
    ws = repository(tmp_path, "devkit")
    event = codex_event(ws, "PreToolUse", tool_name="Bash", tool_use_id="c2",
                        tool_input={"command": "git reset --hard HEAD~1"})  # fmt: skip
    bare, boxed = both(ws, command(ws, "PreToolUse", 0), event)
    assert b'"permissionDecision": "ask"' in bare.stdout
    assert decision("PreToolUse", bare)[:2] == ("failed", None)
    assert decision("PreToolUse", boxed)[:2] == ("completed", False)  # dropped: no answer
    assert boxed.stdout == b"" and b"Codex would ignore it" in boxed.stderr


def test_devkit_audit_log_needs_a_workspace_write(engine: DockerBackend, tmp_path: Path) -> None:
    """On the host the hook writes .devkit/audit.log and .gitignore in the repository;
    in the sandbox the project is read-only: the same answer (it always allows), nothing
    written, and the failure named on stderr."""
    ws = repository(tmp_path, "devkit")
    cmd = command(ws, "PreToolUse", 1)
    event = codex_event(ws, "PreToolUse", tool_name="Bash", tool_use_id="c3",
                        tool_input={"command": "ls"})  # fmt: skip
    boxed = subprocess.run(cli("exec", "--agent", "codex", "--untrusted", "--", cmd),
                           input=event, capture_output=True, cwd=ws, timeout=120)  # fmt: skip
    assert not (ws / ".devkit").exists() and not (ws / ".gitignore").exists()
    assert b"Read-only file system" in boxed.stderr, boxed.stderr
    assert b"sandboxrun: the sandbox stopped a write" in boxed.stderr
    bare = subprocess.run(["/bin/sh", "-lc", cmd], input=event, capture_output=True, cwd=ws,
                          timeout=60)  # fmt: skip
    assert (ws / ".devkit" / "audit.log").read_text().endswith(f"| {ws} | ls\n")
    assert decision("PreToolUse", bare) == decision("PreToolUse", boxed) == (
        "completed", False, "", "")  # fmt: skip


def test_codex_bug_session_start_context(engine: DockerBackend, tmp_path: Path) -> None:
    ws = repository(tmp_path, "codex-bug")
    event = codex_event(ws, "SessionStart", source="startup")
    bare, boxed = both(ws, command(ws, "SessionStart"), event)
    assert boxed.stdout == bare.stdout and boxed.returncode == bare.returncode == 0
    context = decision("SessionStart", boxed)[3]
    assert context.startswith("Bug bounty workspace loaded.")
    assert decision("SessionStart", bare) == decision("SessionStart", boxed)


def test_codex_bug_stop_reminder_decides_nothing(engine: DockerBackend, tmp_path: Path) -> None:
    ws = repository(tmp_path, "codex-bug")
    event = codex_event(ws, "Stop", stop_hook_active=False, last_assistant_message="done")
    bare, boxed = both(ws, command(ws, "Stop"), event)
    assert boxed.stdout == bare.stdout and b"Reminder: save evidence" in bare.stdout
    assert decision("Stop", bare) == decision("Stop", boxed) == ("completed", False, "", "")


def test_gh_zen_go_gate_skips_a_patch_without_go(engine: DockerBackend, tmp_path: Path) -> None:
    ws = repository(tmp_path, "gh-zen")
    patch = "*** Begin Patch\n*** Update File: README.md\n+hello\n*** End Patch\n"
    event = codex_event(ws, "PostToolUse", tool_name="apply_patch", tool_use_id="c4",
                        tool_input={"command": patch}, tool_response="ok")  # fmt: skip
    bare, boxed = both(ws, command(ws, "PostToolUse"), event)
    assert (bare.returncode, bare.stdout) == (boxed.returncode, boxed.stdout) == (0, b"")
    assert decision("PostToolUse", bare) == decision("PostToolUse", boxed)


@pytest.mark.parametrize("tool_command", ["rm -rf /", "ls"])
def test_run_finds_the_repository_hooks_and_blocks_with_the_guard(
    engine: DockerBackend, tmp_path: Path, tool_command: str
) -> None:
    """`run PreToolUse --agent codex`: both project hooks found (untrusted), run
    sandboxed, combined as Codex combines them."""
    ws = repository(tmp_path, "devkit")
    home = tmp_path / "home"
    home.mkdir()
    event = codex_event(ws, "PreToolUse", tool_name="Bash", tool_use_id="c5",
                        tool_input={"command": tool_command})  # fmt: skip
    ran = subprocess.run(cli("run", "PreToolUse", "--agent", "codex", home=home), input=event,
                         capture_output=True, cwd=ws, timeout=180)  # fmt: skip
    answer = json.loads(ran.stdout)
    assert [h["source"] for h in answer["hooks"]] == ["project", "project"], answer
    assert answer["blocked"] is (tool_command == "rm -rf /")
    assert not (ws / ".devkit").exists()


WRAPPER_FAILURES = {
    "timeout": (["--timeout", "1"], "sleep 30", "timed out after 1s"),
    "oom": ([], "python3 -c 'x = bytearray(512 << 20)'", "out of memory"),
    "missing image": (["--image", "nope/absent:0"], "true", "nope/absent:0"),
}


@pytest.mark.parametrize("fail_closed", [False, True], ids=["default", "fail-closed"])
@pytest.mark.parametrize("case", list(WRAPPER_FAILURES))
def test_exec_own_failures_are_codex_non_blocking_or_its_block(
    engine: DockerBackend, tmp_path: Path, case: str, fail_closed: bool
) -> None:
    """The sandbox, not the hook, ended the run: nothing on stdout, exit 1 (Codex lets the
    action through on any non-zero exit but 2), or with --fail-closed exit 2 and a
    non-empty reason on stderr (Codex blocks on 2 only with one)."""
    options, hook, why = WRAPPER_FAILURES[case]
    config = tmp_path / "config.toml"
    config.write_text(_test_config() + 'memory = "64m"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    flags = ["--fail-closed"] if fail_closed else []
    argv = cli("exec", "--agent", "codex", *flags, *options, "--", hook, config=config)
    event = codex_event(ws, "PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    done = subprocess.run(argv, input=event, capture_output=True, cwd=ws, timeout=120)
    assert done.stdout == b""
    assert done.returncode == (2 if fail_closed else 1), done.stderr
    assert why.encode() in done.stderr and done.stderr.strip()
    blocked = decision("PreToolUse", done)[1]
    assert blocked is (True if fail_closed else None)


def test_installed_wrapper_runs_the_guard_sandboxed_and_uninstall_gives_bytes_back(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """`install --agent codex --workspace` rewrites the repository's hooks.json; the
    rewritten command, run as Codex runs it (`sh -lc` in the repository, the event on
    stdin), runs the guard in the sandbox and blocks as the bare guard does."""
    ws = repository(tmp_path, "devkit")
    home = tmp_path / "home"
    home.mkdir()
    before = (ws / ".codex" / "hooks.json").read_bytes()
    event = codex_event(ws, "PreToolUse", tool_name="Bash", tool_use_id="c1",
                        tool_input={"command": "rm -rf /"})  # fmt: skip
    bare = subprocess.run(["/bin/sh", "-lc", command(ws, "PreToolUse", 0)], input=event,
                          capture_output=True, cwd=ws, timeout=60)  # fmt: skip
    install = ["--agent", "codex", "--workspace", str(ws), "--home", str(home)]
    done = subprocess.run(cli("install", *install), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    wrapped = command(ws, "PreToolUse", 0)
    assert " exec --agent codex --untrusted " in wrapped and "--timeout 5 " in wrapped
    boxed = subprocess.run(["/bin/sh", "-lc", wrapped], input=event, capture_output=True,
                           cwd=ws, timeout=120, env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert (
        decision("PreToolUse", bare)
        == decision("PreToolUse", boxed)
        == ("completed", True, "BLOCKED: destructive rm targeting root or home directory", "")
    )
    done = subprocess.run(cli("uninstall", *install), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (ws / ".codex" / "hooks.json").read_bytes() == before
