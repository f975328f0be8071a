"""Public Kiro hook files (tests/real_hooks/kiro/PROVENANCE.md): a Kiro CLI v3 file
(`.kiro/hooks/guards.json`, rwn34/rwn-multi-cli-skills) and a Kiro IDE `.kiro.hook`
(andresatziack/skills-engineers), each run as Kiro runs it on the host (`bash -c` in
the project, the event on stdin: `files.py`) and through `sandboxrun run --agent kiro`
or the wrapper `install` writes (`exec`), Kiro's reading of both compared: the
dialect's `interpret`/`combine` read the host run (`_dialects/kiro/dialect.py`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend

from .conftest import cli
from .test_real_hooks_kiro import boxed, host_reading  # Kiro's run on the host, and ours

HOOKS = Path(__file__).resolve().parents[1] / "real_hooks" / "kiro"
RWN = HOOKS / "rwn34__rwn-multi-cli-skills"
GUARDRAILS = HOOKS / "andresatziack__skills-engineers"


def project(ws: Path, source: Path) -> Path:
    """The repository's `.kiro` folder in a fresh project, as its repository keeps it."""
    ws.mkdir(parents=True)
    shutil.copytree(source / ".kiro", ws / ".kiro")
    return ws


def decision(answer: dict[str, Any]) -> tuple[Any, ...]:
    """What Kiro does with the answer: block or not (and why), the context it adds."""
    return (answer["blocked"], answer["reason"], answer["additional_context"])


def tool(ws: Path, name: str, **tool_input: str) -> dict[str, Any]:
    return {"session_id": "s1", "cwd": str(ws), "tool_name": name, "tool_input": tool_input}


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path]:
    """(account home for sandboxrun, the host's $HOME for bare runs)."""
    home, host = tmp_path / "home", tmp_path / "host-home"
    home.mkdir()
    host.mkdir()
    return home, host


@pytest.mark.parametrize(
    ("command", "blocked"),
    [("rm -rf /", True), ("git push --force origin main", True),
     ("echo 'DROP TABLE users' | psql", True), ("ls -la", False)],
)  # fmt: skip
def test_destructive_command_guard_decides_the_same_sandboxed(
    engine: DockerBackend, homes: tuple[Path, Path], tmp_path: Path, command: str,
    blocked: bool,
) -> None:  # fmt: skip
    """guards.json's `destructive-cmd-guard` (matcher `shell|execute_bash|bash`): exit 2
    with the reason on stderr for `rm -rf /`, a force-push, DROP; silence otherwise."""
    home, host = homes
    ws = project(tmp_path / "ws", RWN)
    fields = tool(ws, "execute_bash", command=command)
    on_host = host_reading("PreToolUse", fields, ws, host)
    assert on_host["blocked"] is blocked
    assert decision(boxed("PreToolUse", fields, home)) == decision(on_host)


@pytest.mark.parametrize(
    ("relative", "why"),
    [("evil.txt", "Root file policy"), ("config/.env", "Sensitive file protection"),
     (".claude/settings.json", "Edit-boundary rule"), ("src/app.py", None),
     ("README.md", None)],
)  # fmt: skip
def test_write_guards_read_kiros_absolute_path_the_same_sandboxed(
    engine: DockerBackend, homes: tuple[Path, Path], tmp_path: Path, relative: str,
    why: str | None,
) -> None:  # fmt: skip
    """The five `fs_write|str_replace|write` guards. Kiro names the file by its absolute
    path; root-file-guard makes it relative to `pwd` (the project): so the sandbox must
    start the hook in the project at the same path, or a root file would pass."""
    home, host = homes
    ws = project(tmp_path / "ws", RWN)
    fields = tool(ws, "fs_write", command="create", path=str(ws / relative), file_text="x")
    on_host = host_reading("PreToolUse", fields, ws, host)
    assert on_host["blocked"] is (why is not None)
    if why:
        assert why in on_host["reason"]
    assert decision(boxed("PreToolUse", fields, home)) == decision(on_host)


def test_worktree_confinement_reads_pwd_the_same_sandboxed(
    engine: DockerBackend, homes: tuple[Path, Path], tmp_path: Path
) -> None:
    """worktree-confinement-guard applies only when `pwd` is an executor worktree
    (`*/.wt/*/*`): a write outside it is blocked, inside it allowed. Sandboxed, `pwd`
    is the same path, so the same decision."""
    home, host = homes
    ws = project(tmp_path / "repo" / ".wt" / "coder" / "ws", RWN)
    for target, blocked in ((tmp_path / "repo" / "src" / "x.py", True), (ws / "src" / "x.py", False)):  # fmt: skip
        fields = tool(ws, "fs_write", command="create", path=str(target), file_text="x")
        on_host = host_reading("PreToolUse", fields, ws, host)
        assert on_host["blocked"] is blocked
        if blocked:
            assert "Worktree confinement" in on_host["reason"]
        assert decision(boxed("PreToolUse", fields, home)) == decision(on_host)


def test_session_start_context_is_the_same_sandboxed(
    engine: DockerBackend, homes: tuple[Path, Path], tmp_path: Path
) -> None:
    """SessionStart's `activity-log-inject` and `dispatch-own-queue`: exit 0, stdout is
    context. In a git project with an open handoff and an uncommitted file the context
    names the activity entries, the git status and the handoff, on both sides."""
    home, host = homes
    ws = project(tmp_path / "ws", RWN)
    entries = ws / ".ai" / "activity" / "entries"
    entries.mkdir(parents=True)
    (entries / "2026-11-25.md").write_text("- kiro: vendored the guards\n")
    handoffs = ws / ".ai" / "handoffs" / "to-kiro" / "open"
    handoffs.mkdir(parents=True)
    (handoffs / "h1.md").write_text("Auto: no\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=ws, check=True)
    subprocess.run([*git, "add", ".kiro"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "hooks"], cwd=ws, check=True)
    (ws / "notes.txt").write_text("draft\n")
    fields = {"session_id": "s1", "cwd": str(ws)}
    on_host = host_reading("SessionStart", fields, ws, host)
    context = on_host["additional_context"]
    assert "vendored the guards" in context and "?? notes.txt" in context
    assert ".ai/handoffs/to-kiro/open/h1.md" in context
    assert decision(boxed("SessionStart", fields, home)) == decision(on_host)


def test_ide_git_guardrails_hook_decides_the_same_through_its_wrapper(
    engine: DockerBackend, homes: tuple[Path, Path], tmp_path: Path
) -> None:
    """The IDE's `git-guardrails.kiro.hook` (preToolUse, runCommand). The IDE starts it
    with no stdin (Kiro#7408): `jq` reads nothing, the hook exits 0 and blocks nothing,
    on the host and through the wrapper `install` writes (`exec --untrusted`). Given
    the tool's data (as its author's own check does), it exits 2 with BLOCKED on
    stderr: the same exit and stderr sandboxed. A `.kiro.hook` never blocks in the IDE
    (stderr goes to the agent as the hook's error)."""
    host = homes[1]
    ws = project(tmp_path / "ws", GUARDRAILS)
    hook = json.loads((ws / ".kiro" / "hooks" / "git-guardrails.kiro.hook").read_text())
    command = hook["then"]["command"]
    push = json.dumps({"tool_input": {"command": "git push origin main"}}).encode()
    for stdin, code in ((b"", 0), (push, 2)):
        env = {**os.environ, "HOME": str(host)}
        raw = subprocess.run(["bash", "-c", command], input=stdin, capture_output=True,
                             cwd=ws, env=env, timeout=120)  # fmt: skip
        assert raw.returncode == code
        done = subprocess.run(
            cli("exec", "--agent", "kiro", "--untrusted", "--", command),
            input=stdin, capture_output=True, cwd=ws, timeout=300,
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (raw.returncode, raw.stdout), done.stderr
        if code:
            assert b"BLOCKED: 'git push origin main'" in raw.stderr
            assert raw.stderr in done.stderr
