"""A hook that cannot start in the sandbox is a sandbox failure, never a silent allow
(issue 9, item 2). The names are clearly nonexistent: the image gains node and uv."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend

from .conftest import HookWriter, Runner, cli, engine_settings

IMAGE = engine_settings().image  # the default, or SANDBOX_TEST_IMAGE

EVENT = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def claude_settings(folder: Path, command: str) -> None:
    """A settings.json in `folder` with one PreToolUse command hook for Bash."""
    folder.mkdir(parents=True, exist_ok=True)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    (folder / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))


def run_claude(project: Path, home: Path, *flags: str) -> dict[str, Any]:
    done = subprocess.run(
        cli("run", "PreToolUse", "--agent", "claude", *flags, home=home),
        input=json.dumps(EVENT | {"cwd": str(project)}), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def only_report(result: dict[str, object]) -> dict[str, object]:
    [report] = result["hooks"]  # type: ignore[misc]
    return report  # type: ignore[no-any-return]


def test_cline_hook_with_missing_interpreter(hook: HookWriter, run_hooks: Runner) -> None:
    """`#!/usr/bin/env nosuchlang`: an error naming it, not a failed run; fail-closed cancels."""
    path = hook("echo '{\"cancel\": true}'", shebang="#!/usr/bin/env nosuchlang")
    result = run_hooks()
    [report] = result["hooks"]
    assert report["status"] == "error"
    # Cline's SDK rules (the default) start the shebang's program themselves; the VS Code
    # extension's name the file whose interpreter it is.
    assert report["error"] == f"not run: `nosuchlang` is not in image {IMAGE}"
    vscode = only_report(run_hooks(cline_variant="vscode"))
    assert vscode["error"] == (
        f"not run: `nosuchlang` (the interpreter of {path}) is not in image {IMAGE}"
    )
    assert run_hooks(fail_closed=True)["cancel"] is True


def test_a_bash_hook_still_runs(hook: HookWriter, run_hooks: Runner) -> None:
    """The preflight lets a hook whose interpreter is there run as before."""
    hook('cat >/dev/null; echo \'{"cancel": true, "errorMessage": "no"}\'')
    result = run_hooks(fail_closed=True)
    assert [h["status"] for h in result["hooks"]] == ["completed"]
    assert (result["cancel"], result["errorMessage"]) == (True, "no")


def test_claude_project_hook_missing_tool_denies_fail_closed(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """`nosuchtool check`: an error (not a 127 read as a non-blocking allow); fail-closed denies."""
    project, home = tmp_path / "project", tmp_path / "home"
    claude_settings(project / ".claude", "nosuchtool check")
    home.mkdir()
    open_result = run_claude(project, home)
    [report] = open_result["hooks"]
    assert (report["status"], report["exitCode"]) == ("error", None)
    assert "`nosuchtool` is not in image" in report["error"]
    closed = run_claude(project, home, "--fail-closed")
    assert (closed["blocked"], closed["permissionDecision"]) == (True, "deny")
    assert "nosuchtool" in closed["reason"]


def test_claude_user_hook_script_not_mounted(engine: DockerBackend, tmp_path: Path) -> None:
    """`python3 /nonexistent/x.py`: "not mounted", not python's exit 2 (a deny to Claude)."""
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".git").mkdir(parents=True)
    claude_settings(home / ".claude", "python3 /nonexistent/x.py")
    result = run_claude(project, home)
    [report] = result["hooks"]
    assert report["status"] == "error"
    assert report["error"] == "not run: script /nonexistent/x.py is not mounted"
    assert result["permissionDecision"] is None
    closed = run_claude(project, home, "--fail-closed")
    assert (closed["blocked"], closed["permissionDecision"]) == (True, "deny")


def test_exec_missing_tool_is_a_sandbox_failure(engine: DockerBackend, tmp_path: Path) -> None:
    """`exec -- nosuchtool`: exit 1 with the sentence (not 127); fail-closed exit 2, and
    Cline's cancel JSON for `--agent cline`."""
    tmp_path.chmod(0o755)

    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cli("exec", *flags, "--", "nosuchtool --check"), input="{}", capture_output=True,
            text=True, cwd=tmp_path, timeout=120,
        )  # fmt: skip

    plain = run()
    assert plain.returncode == 1
    assert plain.stderr.strip() == (
        f"sandboxrun: the hook cannot start: `nosuchtool` is not in image {IMAGE}"
    )
    assert run("--fail-closed").returncode == 2
    cline = run("--agent", "cline", "--fail-closed")
    assert cline.returncode == 0
    assert json.loads(cline.stdout)["cancel"] is True


def test_list_shows_why_a_hook_will_not_run(hook: HookWriter, workspace: Path) -> None:
    """`list` (text and JSON) says which hook will not run and why, before anything runs."""
    path = hook("true", shebang="#!/usr/bin/env nosuchlang")
    hook("true", name="PostToolUse")
    args = ("list", "--workspace", str(workspace))
    home = workspace.parent / "home"
    text = subprocess.run(cli(*args, home=home), capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert f"{path}\n    will not run: `nosuchlang` is not in image" in text.stdout
    assert text.stdout.count("will not run") == 1
    doc = json.loads(
        subprocess.run(
            cli(*args, "--json", home=home), capture_output=True, text=True, timeout=120
        ).stdout
    )
    found = {h["hook"]: (h["runnable"], h["why"]) for h in doc["hooks"]}
    assert found["PostToolUse"] == (True, None)
    assert found["PreToolUse"][0] is False
    assert "nosuchlang" in found["PreToolUse"][1]
    assert doc["check"] is None


def test_list_without_engine_says_the_check_was_skipped(
    hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """No engine answering: `list` still lists, and says the interpreters were not checked."""
    hook("true", shebang="#!/usr/bin/env nosuchlang")
    config = tmp_path / "noengine.toml"
    config.write_text(f'docker_host = "unix://{tmp_path}/no.sock"\n')
    done = subprocess.run(
        cli("list", "--json", "--workspace", str(workspace), config=config),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["hooks"][0]["runnable"] is None
    assert doc["check"].startswith("interpreters not checked:")


def test_image_probe_once_then_cached(engine: DockerBackend, tmp_path: Path) -> None:
    """The image's executables come from one probe, then from memory and the disk cache."""
    fresh = DockerBackend(engine.settings, client=engine.client, cache_dir=str(tmp_path))
    tools = fresh.image_tools()
    assert tools is not None and {"sh", "bash", "python3", "jq"} <= tools.names
    assert len(list(tmp_path.glob("image-*.json"))) == 1
    assert fresh.image_tools() is tools
    again = DockerBackend(engine.settings, client=engine.client, cache_dir=str(tmp_path))
    again.run = None  # type: ignore[method-assign,assignment]  # a probe would fail
    assert again.image_tools() == tools


def test_doctor_names_a_hook_that_will_not_run(hook: HookWriter, workspace: Path) -> None:
    """`doctor` in a workspace fails on a hook whose interpreter the image lacks, naming it."""
    hook("true", shebang="#!/usr/bin/env nosuchlang")
    workspace.chmod(0o755)
    done = subprocess.run(
        cli("doctor"), capture_output=True, text=True, cwd=workspace, timeout=120
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("FAIL")]
    assert "hook PreToolUse" in line and "`nosuchlang`" in line


def test_doctor_checks_every_agent_with_hooks_here(tmp_path: Path) -> None:
    """Without --agent, `doctor` names a Cursor hook that cannot start (the configured
    agent is Cline's); `--agent gemini` checks only Gemini's hooks, and passes."""
    project = tmp_path / "project"
    (project / ".cursor").mkdir(parents=True)
    (project / ".cursor" / "hooks.json").write_text(
        json.dumps({"version": 1, "hooks": {"beforeShellExecution": [{"command": ".cursor/g.sh"}]}})
    )
    guard = project / ".cursor" / "g.sh"
    guard.write_text("#!/usr/bin/env nosuchlang\n")
    guard.chmod(0o755)
    for folder in (tmp_path, project, project / ".cursor"):
        folder.chmod(0o755)

    def doctor(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cli("doctor", *args), capture_output=True, text=True, cwd=project, timeout=120
        )  # fmt: skip

    done = doctor()
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("FAIL")]
    assert "cursor hook beforeShellExecution" in line and "`nosuchlang`" in line
    only = doctor("--agent", "gemini")
    assert "cursor" not in only.stdout and "no hooks, each can start" in only.stdout


def test_a_workspace_the_hooks_user_cannot_read(tmp_path: Path) -> None:
    """Run as root, hooks run as nobody: a root-only (0700) workspace, as `mktemp -d` makes,
    would fail every guard with "Permission denied". Through `run` and `exec` alike the
    hook is not run, the error names the folder, and fail-closed blocks."""
    if os.getuid() != 0:
        pytest.skip("only root's hooks run as another user (nobody)")
    project, home = tmp_path / "project", tmp_path / "home"
    claude_settings(project / ".claude", "echo '{}'")
    project.chmod(0o700)
    result = run_claude(project, home)
    [report] = result["hooks"]
    assert report["status"] == "error", report
    assert f"{project} is not readable by the hook's user, uid 65534" in report["error"]
    assert run_claude(project, home, "--fail-closed")["blocked"] is True
    done = subprocess.run(
        cli("exec", "--fail-closed", "--", "echo hi"), cwd=project, input="{}",
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == "", done
    assert f"{project} is not readable by the hook's user" in done.stderr
