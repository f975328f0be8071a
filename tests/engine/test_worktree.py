"""Issue 29 item 6 on the real engine: in a linked worktree (`git worktree add`), whose
`.git` is a file naming `<main>/.git/worktrees/<name>`, git inside the sandbox answers
as on the host, through `run` and `exec`, so a guard that asks git for the branch still
blocks; a crafted `.git` file mounts nothing (and the report or exec's stderr says so);
the main checkout's working tree stays out of sight.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, HookFactory
from tests.fake_home import command

from .conftest import cli, engine_settings

# What a guard asks git, each answer after a marker line; the main checkout's files last.
PROBE = (
    "echo '== status'; git status --porcelain=v2 --branch 2>&1;"
    " echo '== toplevel'; git rev-parse --show-toplevel 2>&1;"
    " echo '== worktrees'; git worktree list --porcelain 2>&1;"
    " echo '== cached'; git diff --cached 2>&1"
)
MAIN_FILES = "echo '== main'; ls -A {main} 2>&1; cat {main}/MAIN-ONLY.txt 2>&1; exit 0"
# A guard that fails open when git cannot answer: an empty branch allows.
BRANCH_GUARD = (
    'b=$(git branch --show-current 2>/dev/null); if [ "$b" = feature ]; then'
    ' echo "guard: no edits on branch $b" >&2; exit 2; fi; exit 0'
)
EVENT = {"tool_name": "Bash", "tool_input": {"command": "ls"}}


@pytest.fixture
def scene() -> Iterator[Path]:
    """A folder in /tmp (neither /root nor a home dot-folder) holding `main`, a repository
    with a file only its working tree has, and `wt`, a worktree of it on branch
    `feature` with a staged change; readable by the hooks' uid (nobody, as root)."""
    folder = Path(tempfile.mkdtemp(prefix="srwt-", dir="/tmp"))
    main = folder / "main"
    main.mkdir()
    (main / "MAIN-ONLY.txt").write_text("MAIN-CHECKOUT-ONLY\n")
    (main / "a.txt").write_text("a\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."],
                 ["commit", "-qm", "init"], ["worktree", "add", "-q", "../wt", "-b", "feature"]):  # fmt: skip
        git(main, *args)
    (folder / "wt" / "a.txt").write_text("b\n")
    git(folder / "wt", "add", "a.txt")
    subprocess.run(["chmod", "-R", "a+rX", str(folder)], check=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def git(where: Path, *args: str) -> str:
    """git on the host, without the account's own git config."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(where), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=where, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def on_host(wt: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(wt), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["sh", "-c", PROBE], cwd=wt, env=env, capture_output=True, text=True)
    return done.stdout


def user_hook(home: Path, command_text: str) -> None:
    """The user's own PreToolUse hook (in the fake home given with `--home`)."""
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    entry = {"hooks": [{"type": "command", "command": command_text}]}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))


def run(argv: list[str], cwd: Path, event: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """`run PreToolUse` as Claude Code runs it: (its one JSON line, its stderr)."""
    done = subprocess.run(argv, input=json.dumps({"cwd": str(cwd), **event}).encode(),
                          capture_output=True, cwd=cwd, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return json.loads(done.stdout), done.stderr.decode(errors="replace")


def execute(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`exec` as install writes it, started by the agent in the project."""
    stdin = json.dumps({"cwd": str(cwd), "hook_event_name": "PreToolUse", **EVENT})
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd, timeout=120)


def run_argv(home: Path) -> list[str]:
    return cli("run", "PreToolUse", "--agent", "claude", home=home)


def exec_argv(shell: str) -> list[str]:
    return cli("exec", "--agent", "claude", "--untrusted", "--", shell)


def test_git_answers_in_a_worktree_as_on_the_host(engine: DockerBackend, scene: Path) -> None:
    """`git status`, `rev-parse --show-toplevel`, `worktree list` and `diff --cached`
    print inside what they print on the host, through `run` (the hook's stderr in its
    report) and `exec` (stdout passed through); the main checkout's files are not there."""
    wt, main = scene / "wt", scene / "main"
    host = on_host(wt)
    assert "branch.head feature" in host and "+b" in host, host
    probe = f"{PROBE}; {MAIN_FILES.format(main=main)}"
    user_hook(scene / "home", f"({probe}) >&2")
    result, _ = run(run_argv(scene / "home"), wt, EVENT)
    [hook] = result["hooks"]
    assert hook["status"] == "completed", hook
    inside, seen_main = hook["stderr"].split("== main\n")
    assert inside == host
    done = execute(exec_argv(probe), wt)
    assert done.returncode == 0, done.stderr
    inside, seen_main_exec = done.stdout.split("== main\n")
    assert inside == host
    for seen in (seen_main, seen_main_exec):  # only its git folder: no MAIN-ONLY.txt
        assert seen.splitlines()[0] == ".git" and "MAIN-CHECKOUT-ONLY" not in seen, seen


@pytest.mark.parametrize("entry", ["run", "exec", "check", "api"])
def test_a_guard_that_asks_for_the_branch_blocks(
    engine: DockerBackend, scene: Path, tmp_path: Path, entry: str
) -> None:
    """The issue's fail-open: a guard that blocks on branch `feature` sees no branch when
    git cannot find the worktree's folder, and allows. On every entry point."""
    wt, home = scene / "wt", scene / "home"
    user_hook(home, BRANCH_GUARD)
    reason = "guard: no edits on branch feature"
    if entry == "run":
        result, _ = run(run_argv(home), wt, EVENT)
        assert result["blocked"] is True and reason in result["reason"], result
    elif entry == "exec":
        done = execute(exec_argv(BRANCH_GUARD), wt)
        assert done.returncode == 2 and reason in done.stderr, done.stderr
    elif entry == "check":
        events = tmp_path / "events.jsonl"
        events.write_text(json.dumps({"hook_event_name": "PreToolUse", "cwd": str(wt), **EVENT}))
        argv = cli("check", "--agent", "claude", "--home", str(home), "--events", str(events))
        done = subprocess.run(argv, capture_output=True, text=True, cwd=wt, timeout=300)
        assert done.returncode == 1 and reason in done.stdout + done.stderr, done
    else:
        factory = HookFactory(engine_settings(agent="claude"), engine, home=str(home))
        answer = factory.run("PreToolUse", {"cwd": str(wt), **EVENT}).answer
        assert answer["blocked"] is True and reason in answer["reason"], answer


def _crafted(scene: Path, name: str, gitdir: Path) -> Path:
    ws = scene / name
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {gitdir}\n")
    subprocess.run(["chmod", "-R", "a+rX", str(ws)], check=True)
    return ws


def test_a_crafted_git_file_mounts_nothing(engine: DockerBackend, scene: Path) -> None:
    """A workspace's `.git` file naming the account's `~/.ssh` (shaped as a worktree
    folder, with the backlinks git writes), another worktree's folder, or another
    checkout's `.git`: nothing is mounted, the hook reads none of it, and the report
    (`run`) or stderr (`exec`) says why. Run with a fake account home, so the home's
    dot-folder rule is the real one."""
    home, main = scene / "home", scene / "main"
    ssh = home / ".ssh"
    (ssh / "worktrees" / "evil").mkdir(parents=True)
    (ssh / "id_rsa").write_text("PRIVATE-KEY-worktree-test\n")
    (ssh / "HEAD").write_text("ref: refs/heads/main\n")
    for sub in ("objects", "refs"):
        (ssh / sub).mkdir()
    evil = _crafted(scene, "evil", ssh / "worktrees" / "evil")
    (ssh / "worktrees" / "evil" / "gitdir").write_text(f"{evil}/.git\n")
    (ssh / "worktrees" / "evil" / "commondir").write_text("../..\n")
    subprocess.run(["chmod", "-R", "a+rX", str(home)], check=True)
    other = _crafted(scene, "other", main / ".git" / "worktrees" / "wt")
    checkout = _crafted(scene, "checkout", main / ".git")
    snoop = f"cat {ssh}/id_rsa {main}/.git/HEAD 2>&1; ls {main}/.git 2>&1; exit 0"
    user_hook(home, f"({snoop}) >&2")
    for ws, why in ((evil, "dot-folder"), (other, "another worktree"),
                    (checkout, "not a worktree's folder")):  # fmt: skip
        result, stderr = run(command(home, run_argv(home)), ws, EVENT)
        [hook] = result["hooks"]
        assert "PRIVATE-KEY" not in hook["stderr"] and "ref: refs/heads" not in hook["stderr"]
        assert hook["stderr"].count("No such file or directory") == 3, hook
        assert f"git folder of {ws} not mounted" in hook["error"], hook
        assert why in hook["error"], hook
        assert why in stderr, stderr
        done = execute(command(home, exec_argv(snoop)), ws)
        assert done.returncode == 0, done.stderr
        assert "PRIVATE-KEY" not in done.stdout and "ref: refs/heads" not in done.stdout
        assert done.stdout.count("No such file or directory") == 3, done.stdout
        assert f"git folder of {ws} not mounted" in done.stderr, done.stderr
        assert why in done.stderr, done.stderr
