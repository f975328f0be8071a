"""Public GitHub Copilot CLI hooks (tests/real_hooks/copilot/PROVENANCE.md: repository,
path, commit, licence, and the expected outcome of each), each run as the CLI runs it on
the host (`bash -c` of the entry's `bash` field, in the repository root, the camelCase
event on stdin) and then wrapped in `sandboxrun exec --agent copilot`: the same stdout and
exit code, or, for a hook that needs what the sandbox withholds (a write into the
repository), the failure named. Also `run preToolUse --agent copilot` over a repository's
`.github/hooks/*.json`, and exec's own failures (a missing image, a timeout, out of
memory) mapped to Copilot's non-blocking outcome or, under --fail-closed, its deny; and
`install --agent copilot`: the rewritten entry run as the CLI runs it, the same way."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._install.status import hand_wrapper
from tests.fake_home import command as as_account

from .conftest import _test_config, cli

DATA = Path(__file__).resolve().parent.parent / "real_hooks" / "copilot"
WRITE_STOPPED = b"the sandbox stopped a write"


def repository(tmp_path: Path, name: str) -> Path:
    """A clone of one public repository's hook files (a `.git` marks its root). Its hooks
    folder is writable by the hook's user, as your own clone is yours (run as root,
    sandboxrun runs hooks as nobody, and EACCES would come before the read-only mount's
    EROFS)."""
    root = tmp_path / name
    shutil.copytree(DATA / name, root)
    (root / ".git").mkdir()
    (root / ".github" / "hooks").chmod(0o777)
    return root


def entry(root: Path, file: str, event: str, index: int = 0) -> str:
    """The `bash` command of one entry of the repository's hooks file, as the CLI reads it."""
    document = json.loads((root / ".github" / "hooks" / file).read_text())
    return str(document["hooks"][event][index]["bash"])


def pre_tool_use(cwd: Path, tool: str, args: dict[str, Any]) -> str:
    """The CLI's camelCase preToolUse payload: `toolArgs` as a JSON string."""
    return json.dumps({"sessionId": "s1", "timestamp": 1795600000000, "cwd": str(cwd),
                       "toolName": tool, "toolArgs": json.dumps(args)})  # fmt: skip


def post_tool_use(cwd: Path) -> str:
    return json.dumps({"sessionId": "s1", "timestamp": 1795600000000, "cwd": str(cwd),
                       "toolName": "bash", "toolArgs": '{"command":"ls"}',
                       "toolResult": {"resultType": "success", "textResultForLlm": "a\n"}})  # fmt: skip


def bare(root: Path, command: str, event: str) -> subprocess.CompletedProcess[bytes]:
    """The hook as the CLI runs it on the host: `bash -c`, in the repository root."""
    return subprocess.run(["bash", "-c", command], input=event.encode(), capture_output=True,
                          cwd=root, timeout=60)  # fmt: skip


def boxed(
    tmp_path: Path, root: Path, command: str, event: str, *options: str
) -> subprocess.CompletedProcess[bytes]:
    """The same entry wrapped: `sandboxrun exec --agent copilot -- '<bash field>'`."""
    argv = cli("exec", "--agent", "copilot", *options, "--", command)
    return subprocess.run(as_account(tmp_path / "home", argv), input=event.encode(),
                          capture_output=True, cwd=root, timeout=180)  # fmt: skip


def both(
    tmp_path: Path, root: Path, command: str, event: str
) -> tuple[subprocess.CompletedProcess[bytes], subprocess.CompletedProcess[bytes]]:
    """(bare, sandboxed) runs of one hook command that writes nothing."""
    return bare(root, command, event), boxed(tmp_path, root, command, event)


@pytest.fixture(autouse=True)
def _home(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()


@pytest.mark.parametrize(
    ("tool", "args", "decision"),
    [
        ("bash", {"command": "npm install left-pad"}, "deny"),
        ("edit", {"path": "README.md", "new_str": "x"}, "deny"),
        ("bash", {"command": "ls -la"}, "allow"),
    ],
    ids=["npm-install", "edit-outside-src", "ls"],
)
def test_the_demo_guard_decides_the_same(
    engine: DockerBackend, tmp_path: Path, tool: str, args: dict[str, Any], decision: str
) -> None:
    """AlexDeMichieli/copilot-hooks-demo: the guard that blocks, byte for byte."""
    root = repository(tmp_path, "copilot-hooks-demo")
    event = pre_tool_use(root, tool, args)
    on_host, done = both(tmp_path, root, entry(root, "hooks.json", "preToolUse"), event)
    assert on_host.returncode == 0 and json.loads(on_host.stdout)["permissionDecision"] == decision
    assert (done.returncode, done.stdout) == (on_host.returncode, on_host.stdout), done.stderr


def test_run_reads_the_repositorys_hooks_and_denies(engine: DockerBackend, tmp_path: Path) -> None:
    """`run preToolUse --agent copilot` finds .github/hooks/hooks.json and its guard's deny
    is the combined answer; its allow, from an untrusted repository, is no decision."""
    root = repository(tmp_path, "copilot-hooks-demo")
    home = tmp_path / "home"
    argv = as_account(home, cli("run", "preToolUse", "--agent", "copilot", home=home))
    denied = subprocess.run(argv, input=pre_tool_use(root, "bash", {"command": "npm install x"}),
                            capture_output=True, text=True, cwd=root, timeout=180)  # fmt: skip
    answer = json.loads(denied.stdout)
    assert (answer["permissionDecision"], answer["blocked"]) == ("deny", True), denied.stderr
    assert "Dependency installation not permitted" in answer["reason"]
    allowed = subprocess.run(argv, input=pre_tool_use(root, "bash", {"command": "ls"}),
                             capture_output=True, text=True, cwd=root, timeout=180)  # fmt: skip
    answer = json.loads(allowed.stdout)
    assert answer["permissionDecision"] is None, allowed.stderr
    assert "its allow ignored (untrusted" in answer["hooks"][0]["error"]


def test_a_guard_that_reads_the_wrong_field_lets_all_through_both_ways(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """natekot/dev-ai validate-command.sh reads a top-level `command` the CLI never sends."""
    root = repository(tmp_path, "dev-ai")
    event = pre_tool_use(root, "bash", {"command": "rm -rf /"})
    on_host, done = both(tmp_path, root, entry(root, "security.json", "preToolUse"), event)
    assert (on_host.returncode, on_host.stdout) == (0, b"")
    assert (done.returncode, done.stdout) == (0, b""), done.stderr


def test_an_audit_log_into_the_repository_is_stopped_and_named(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """natekot/dev-ai audit-log.sh (postToolUse) appends to .github/hooks/audit.log: on the
    host it writes the repository; sandboxed the write is stopped and named on stderr,
    the exit code and stdout are the hook's own."""
    root = repository(tmp_path, "dev-ai")
    log = root / ".github" / "hooks" / "audit.log"
    command, event = entry(root, "security.json", "postToolUse"), post_tool_use(root)
    on_host = bare(root, command, event)
    assert on_host.returncode == 0 and "Tool executed: unknown" in log.read_text()
    log.unlink()
    done = boxed(tmp_path, root, command, event)
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    assert b"Read-only file system" in done.stderr and WRITE_STOPPED in done.stderr
    assert not log.exists()


def test_an_inline_session_start_write_fails_named_and_blocks_nothing(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """natekot/dev-ai's sessionStart `echo ... >> .github/hooks/audit.log`, run by bash as
    the CLI runs it: sandboxed the redirection fails (exit 1, which the CLI logs for
    sessionStart and goes on: nothing is blocked), and the stopped write is named."""
    root = repository(tmp_path, "dev-ai")
    log = root / ".github" / "hooks" / "audit.log"
    command = entry(root, "security.json", "sessionStart")
    event = json.dumps({"sessionId": "s1", "timestamp": 1795600000000, "cwd": str(root),
                        "source": "startup"})  # fmt: skip
    on_host = bare(root, command, event)
    assert on_host.returncode == 0 and "Session started" in log.read_text()
    log.unlink()
    done = boxed(tmp_path, root, command, event)
    assert (done.returncode, done.stdout) == (1, b""), done.stderr
    assert done.stderr.startswith(b"bash: line 1: .github/hooks/audit.log: Read-only file system")
    assert WRITE_STOPPED in done.stderr and not log.exists()


@pytest.mark.parametrize("event_name", ["preToolUse", "postToolUse"])
def test_vs_code_shaped_hooks_answer_the_same(
    engine: DockerBackend, tmp_path: Path, event_name: str
) -> None:
    """0GiS0/github-copilot-and-jenkins lint.sh and format.sh, written for VS Code's
    snake_case payload: under the CLI's camelCase one the same bytes come out both ways."""
    root = repository(tmp_path, "github-copilot-and-jenkins")
    event = (pre_tool_use(root, "bash", {"command": "ls"}) if event_name == "preToolUse"
             else post_tool_use(root))  # fmt: skip
    on_host, done = both(tmp_path, root, entry(root, "hooks.json", event_name), event)
    assert on_host.returncode == 0 and on_host.stdout
    assert (done.returncode, done.stdout) == (on_host.returncode, on_host.stdout), done.stderr


# -- exec's own failures -------------------------------------------------------------

MEMORY_HOG = "python3 -c 'import os\nhoard = []\nwhile True: hoard.append(b\"x\" * (16 << 20))'"


@pytest.mark.parametrize(
    ("options", "command", "why"),
    [
        (("--image", "sandboxrun/hooks:no-such-tag"), "true", b"sandboxrun/hooks:no-such-tag"),
        (("--timeout", "1"), "sleep 30", b"timed out after 1s"),
        ((), MEMORY_HOG, b"out of memory"),
    ],
    ids=["missing-image", "timeout", "oom"],
)
@pytest.mark.parametrize("fail_closed", [False, True], ids=["open", "fail-closed"])
def test_execs_own_failures_never_deny_unless_fail_closed(
    engine: DockerBackend, tmp_path: Path, options: tuple[str, ...], command: str, why: bytes,
    fail_closed: bool,
) -> None:  # fmt: skip
    """Copilot denies a preToolUse hook's ANY non-zero exit: without --fail-closed
    sandboxrun's own failure is exit 0, nothing on stdout (no decision), the reason on
    stderr; with it, exit 2 (the deny), still nothing on stdout."""
    root = repository(tmp_path, "copilot-hooks-demo")
    flags = (*options, "--fail-closed") if fail_closed else options
    # Sandboxed only: never a memory hog on the host.
    done = boxed(tmp_path, root, command, pre_tool_use(root, "bash", {"command": "ls"}), *flags)
    assert (done.returncode, done.stdout) == (2 if fail_closed else 0, b""), done.stderr
    assert why in done.stderr
    prefix = b"sandboxrun (fail-closed): " if fail_closed else b"sandboxrun: "
    assert prefix in done.stderr


# -- install: the rewritten entry, run as the CLI runs it -------------------------------


def install(root: Path, home: Path, *options: str, config: Path | None = None) -> None:
    argv = cli("install", "--agent", "copilot", "--workspace", str(root), "--home", str(home),
               *options, config=config)  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_installed_wrapper_runs_the_repositorys_hook_sandboxed(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """install --agent copilot, then the rewritten `bash` field run as the CLI runs it
    (`bash -c` in the repository root): the guard's deny byte for byte; its allow, from
    an untrusted repository, becomes no decision, named on stderr. uninstall gives the
    file back byte for byte."""
    root = repository(tmp_path, "copilot-hooks-demo")
    home = tmp_path / "home"
    hooks = root / ".github" / "hooks" / "hooks.json"
    before, original = hooks.read_bytes(), entry(root, "hooks.json", "preToolUse")
    deny = pre_tool_use(root, "bash", {"command": "npm install left-pad"})
    allow = pre_tool_use(root, "bash", {"command": "ls -la"})
    on_host = bare(root, original, deny)
    install(root, home)
    wrapped = entry(root, "hooks.json", "preToolUse")
    assert " exec --agent copilot --untrusted --workspace " in wrapped
    done = bare(root, wrapped, deny)
    assert (done.returncode, done.stdout) == (on_host.returncode, on_host.stdout), done.stderr
    assert json.loads(done.stdout)["permissionDecision"] == "deny"
    done = bare(root, wrapped, allow)
    assert (done.returncode, json.loads(done.stdout)) == (0, {}), done.stderr
    assert b"its allow ignored (untrusted" in done.stderr
    uninstall = cli("uninstall", "--agent", "copilot", "--workspace", str(root), "--home",
                    str(home))  # fmt: skip
    assert subprocess.run(uninstall, capture_output=True, timeout=120).returncode == 0
    assert hooks.read_bytes() == before


@pytest.mark.parametrize("fail_closed", [False, True], ids=["open", "fail-closed"])
def test_the_installed_wrappers_own_failure_never_denies_unless_fail_closed(
    engine: DockerBackend, tmp_path: Path, fail_closed: bool
) -> None:
    """Installed with a config whose image is missing: the wrapper's own failure is
    exit 0 and nothing on stdout (Copilot's permission flow decides, never the deny
    any non-zero preToolUse exit is); under --fail-closed exit 2, the deny."""
    root = repository(tmp_path, "copilot-hooks-demo")
    config = tmp_path / "missing-image.toml"
    kept = [line for line in _test_config().splitlines() if line.startswith("runtime")]
    config.write_text(
        "\n".join([*kept, 'image = "sandboxrun/hooks:no-such-tag"', 'serve = "off"', ""])
    )
    install(root, tmp_path / "home", *(["--fail-closed"] if fail_closed else []), config=config)
    wrapped = entry(root, "hooks.json", "preToolUse")
    done = bare(root, wrapped, pre_tool_use(root, "bash", {"command": "npm install left-pad"}))
    assert (done.returncode, done.stdout) == (2 if fail_closed else 0, b""), done.stderr
    assert b"sandboxrun/hooks:no-such-tag" in done.stderr


def test_list_names_every_hook_found_and_skipped(engine: DockerBackend, tmp_path: Path) -> None:
    """`list --agent copilot` in a repository: its hooks, and each entry it will not run
    with the reason."""
    root = repository(tmp_path, "dev-ai")
    (root / ".github/hooks/broken.json").write_text('{"version": 2, "hooks": {}}')
    (root / ".github/hooks/ps.json").write_text(
        json.dumps({"version": 1, "hooks": {"sessionEnd": [{"powershell": "Write-Host x"}]}})
    )
    home = tmp_path / "home"
    done = subprocess.run(as_account(home, cli("list", "--agent", "copilot", "--json", home=home)),
                          capture_output=True, text=True, cwd=root, timeout=180)  # fmt: skip
    listed = json.loads(done.stdout)
    assert [(h["hook"], h["source"]) for h in listed["hooks"]] == [
        ("preToolUse", "project"), ("postToolUse", "project"), ("sessionStart", "project"),
        ("sessionEnd", "project")]  # fmt: skip
    reasons = "\n".join(s["reason"] for s in listed["skipped"])
    assert "version must be 1, not 2" in reasons
    assert "a powershell-only hook (no PowerShell in the sandbox)" in reasons
    assert os.path.basename(listed["skipped"][0]["path"]) in ("broken.json", "ps.json")
    # Never installed: nothing is named (as for Claude Code); once installed, neither.
    assert listed["notWrapped"] == []
    install(root, home)

    def not_wrapped() -> list[str]:
        argv = as_account(home, cli("list", "--agent", "copilot", "--json", home=home))
        done = subprocess.run(argv, capture_output=True, text=True, cwd=root, timeout=180)
        return list(json.loads(done.stdout)["notWrapped"])

    assert not_wrapped() == []
    # A wrapper a pull brings, however exact its form, is a hook: named, with the fix.
    line = hand_wrapper("copilot", "./guard.sh", True)  # by absolute paths, isolated
    wrapped = {"version": 1, "hooks": {"preToolUse": [{"bash": line}]}}
    (root / ".github/hooks/wrapped.json").write_text(json.dumps(wrapped))
    (note,) = not_wrapped()
    assert "wrapped.json hooks.preToolUse[0]" in note
    assert "install did not write it: a command shaped like a wrapper runs on the host" in note
    assert note.endswith(f"run `sandboxrun install --agent copilot --workspace {root}` again")


# -- what the CLI sets for its hooks, and its order (issue 30) ---------------------------

GUARD = """#!/bin/bash
input=$(cat)
case "$input" in
  *'rm -r'*) printf '{"permissionDecision":"deny","permissionDecisionReason":"no rm (%s)"}' \\
               "$COPILOT_HOOK_DIR" ;;
esac
"""


def test_a_guard_named_through_copilot_project_dir_blocks_installed_and_through_run(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Copilot sets COPILOT_PROJECT_DIR and COPILOT_HOOK_DIR for its hooks (1.0.102), and a
    guard named `"$COPILOT_PROJECT_DIR"/hooks/guard.sh` exited 127 in the sandbox, which
    Copilot reads as a deny of every tool call, the guard's reason lost. Installed, the
    wrapper run as the CLI runs it (`bash -c` in the root, both variables set) gives the
    guard's own deny, naming the hooks folder; so does `run`, which also runs Copilot's
    preToolUse hooks in order and starts none after the deny (reported as not run)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    guard = root / "hooks" / "guard.sh"
    guard.parent.mkdir()
    guard.write_text(GUARD)
    guard.chmod(0o755)
    folder = root / ".github" / "hooks"
    folder.mkdir(parents=True)
    entries = [{"bash": '"$COPILOT_PROJECT_DIR"/hooks/guard.sh'}, {"bash": "echo second"}]
    (folder / "guard.json").write_text(json.dumps({"version": 1, "hooks": {"preToolUse": entries}}))
    home = tmp_path / "home"
    event = pre_tool_use(root, "bash", {"command": "rm -r victim"})
    reason = f"no rm ({folder})"
    copilot = {"COPILOT_PROJECT_DIR": str(root), "COPILOT_HOOK_DIR": str(folder)}
    install(root, home)
    wrapped = entry(root, "guard.json", "preToolUse")
    assert f"--hook-dir {folder} --event preToolUse" in wrapped
    done = subprocess.run(["bash", "-c", wrapped], input=event.encode(), capture_output=True,
                          cwd=root, timeout=180, env={**os.environ, **copilot})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"permissionDecision": "deny",
                                       "permissionDecisionReason": reason}  # fmt: skip
    argv = as_account(home, cli("run", "preToolUse", "--agent", "copilot", home=home))
    ran = subprocess.run(argv, input=event, capture_output=True, text=True, cwd=root,
                         timeout=180)  # fmt: skip
    answer = json.loads(ran.stdout)
    assert (answer["permissionDecision"], answer["reason"]) == ("deny", reason), ran.stderr
    assert [h["status"] for h in answer["hooks"]] == ["completed"]
    [second] = answer["notRun"]
    assert second["name"] == "echo second" and "blocked first" in second["reason"]
