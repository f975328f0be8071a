"""Gemini CLI hooks from public repositories (issue 18, item 7; provenance and licences in
tests/real_hooks/gemini/PROVENANCE.md). Each runs as Gemini CLI runs it on the host
(`bash -c` in the project, `$GEMINI_PROJECT_DIR` replaced by the quoted path, the three
project variables set: `hookRunner.ts` at 5411f113) and through sandboxrun three ways:
`run` finding it in the project's `.gemini/settings.json` (untrusted), `exec` around the
command (the user's own: bytes and exit code unchanged), and `exec --untrusted`. The
decision, as Gemini reads it (`read_output`), is the same every time; the hook that needs a
workspace write gets the same answer, writes nothing, and its report names why."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.gemini.dialect import read_output

from .conftest import cli, engine_image, engine_runtime

HOOKS = Path(__file__).resolve().parent.parent / "real_hooks" / "gemini"
COMMAND = "$GEMINI_PROJECT_DIR/.gemini/hooks/{}"


def project(tmp_path: Path, script: str, event: str, matcher: str) -> tuple[Path, str]:
    """A project holding the hook in `.gemini/hooks/`, registered as its repository
    registers it; (the project, the command as written in its settings)."""
    ws = tmp_path / "ws"
    hooks = ws / ".gemini" / "hooks"
    hooks.mkdir(parents=True)
    name = Path(script).name
    shutil.copy(HOOKS / script, hooks / name)
    (hooks / name).chmod(0o755)
    command = COMMAND.format(name)
    handler = {"name": name, "type": "command", "command": command}
    settings = {"hooks": {event: [{"matcher": matcher, "hooks": [handler]}]}}
    (ws / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return ws, command


def event(ws: Path, name: str, tool: str, tool_input: dict[str, Any]) -> str:
    return json.dumps({
        "session_id": "s1", "transcript_path": "", "cwd": str(ws), "hook_event_name": name,
        "timestamp": "2026-11-25T10:00:00.000Z", "tool_name": tool, "tool_input": tool_input,
    })  # fmt: skip


def expanded(command: str, ws: Path) -> str:
    """`HookRunner.expandCommand`: the project variables replaced, shell-quoted."""
    return command.replace("$GEMINI_PROJECT_DIR", shlex.quote(str(ws)))


def on_host(ws: Path, command: str, stdin: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **dict.fromkeys(("GEMINI_PROJECT_DIR", "GEMINI_CWD",
                                          "CLAUDE_PROJECT_DIR"), str(ws))}  # fmt: skip
    return subprocess.run(["bash", "-c", expanded(command, ws)], input=stdin.encode(),
                          capture_output=True, cwd=ws, env=env, timeout=60)  # fmt: skip


def decision(done: subprocess.CompletedProcess[bytes]) -> tuple[bool, str | None]:
    """(blocked, reason) as Gemini reads one hook's run."""
    output = read_output(done.stdout, done.stderr, done.returncode)[0] or {}
    blocked = output.get("decision") in ("deny", "block") or output.get("continue") is False
    return blocked, output.get("reason") if blocked else None


def sandboxed(ws: Path, tmp_path: Path, command: str, stdin: str, name: str) -> dict[str, Any]:
    """The three sandboxed runs of one event: what each decided, and their outputs."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    ran = subprocess.run(cli("run", name, "--agent", "gemini", home=home), input=stdin.encode(),
                         capture_output=True, cwd=ws, timeout=180)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    wrapped = cli("exec", "--agent", "gemini", "--", expanded(command, ws))
    trusted = subprocess.run(wrapped, input=stdin.encode(), capture_output=True, cwd=ws,
                             timeout=180)  # fmt: skip
    untrusted_argv = cli("exec", "--agent", "gemini", "--untrusted", "--",
                         expanded(command, ws))  # fmt: skip
    untrusted = subprocess.run(untrusted_argv, input=stdin.encode(), capture_output=True,
                               cwd=ws, timeout=180)  # fmt: skip
    return {"run": answer, "exec": trusted, "untrusted": untrusted}


CASES = [
    # (script, event, matcher, tool, tool_input, blocked on the host)
    ("mortgage-analyzer/block-destructive-ops.sh", "BeforeTool", "run_shell_command",
     "run_shell_command", {"command": "rm -rf /"}, True),
    ("mortgage-analyzer/block-destructive-ops.sh", "BeforeTool", "run_shell_command",
     "run_shell_command", {"command": "ls -la"}, False),
    ("mortgage-analyzer/block-protected-paths.sh", "BeforeTool", "write_file|replace",
     "write_file", {"file_path": "{ws}/.gemini/settings.json", "content": "{}"}, True),
    ("mortgage-analyzer/block-protected-paths.sh", "BeforeTool", "write_file|replace",
     "write_file", {"file_path": "{ws}/src/app.ts", "content": "x"}, False),
    ("hmsp_nc_pk/block-dangerous-commands.sh", "BeforeTool", "run_shell_command",
     "run_shell_command", {"command": "dd if=/dev/zero of=/dev/sda"}, True),
    ("hmsp_nc_pk/block-dangerous-commands.sh", "BeforeTool", "run_shell_command",
     "run_shell_command", {"command": "git status"}, False),
]  # fmt: skip


def _fill(value: Any, ws: Path) -> Any:
    return {k: v.replace("{ws}", str(ws)) for k, v in value.items()}


@pytest.mark.parametrize(
    ("script", "name", "matcher", "tool", "tool_input", "blocks"), CASES,
    ids=["destructive-rm", "destructive-ls", "paths-settings", "paths-src", "dangerous-dd",
         "dangerous-git"],
)  # fmt: skip
def test_a_public_guard_decides_the_same_sandboxed(
    engine: DockerBackend, tmp_path: Path, script: str, name: str, matcher: str, tool: str,
    tool_input: dict[str, Any], blocks: bool,
) -> None:  # fmt: skip
    ws, command = project(tmp_path, script, name, matcher)
    stdin = event(ws, name, tool, _fill(tool_input, ws))
    host = on_host(ws, command, stdin)
    assert decision(host)[0] is blocks, host
    got = sandboxed(ws, tmp_path, command, stdin, name)
    [report] = got["run"]["hooks"]
    assert report["source"] == "project" and report["status"] == "completed", report
    assert got["run"]["blocked"] is blocks
    assert got["run"].get("reason") == decision(host)[1]
    exec_ = got["exec"]
    assert (exec_.returncode, exec_.stdout) == (host.returncode, host.stdout), exec_.stderr
    assert decision(got["untrusted"]) == decision(host)
    if not blocks:  # a repository's allow is no decision: dropped, and said so
        assert json.loads(got["untrusted"].stdout) == {}
        assert b"its allow ignored (untrusted" in got["untrusted"].stderr


CALCULATIONS = """export function dti(ratio: number) {
  if (ratio <= 0.35) return "ok";
  if (ratio <= 0.4) return "warning";
  return "fail";
}
export function ltv(ratio: number) { return ratio <= 0.8 ? "ok" : ratio <= 0.9 ? "warn" : "x"; }
export function stressed(stressedRatio: number) {
  return stressedRatio <= 0.4 ? "ok" : stressedRatio <= 0.45 ? "warn" : "x";
}
"""


@pytest.mark.parametrize(("new", "blocks"), [("ratio <= 0.5", True), ("ratio <= 0.4 ", False)])
def test_a_guard_that_reads_the_project_file_decides_the_same(
    engine: DockerBackend, tmp_path: Path, new: str, blocks: bool
) -> None:
    """enforce-mortgage-rules.sh reads `lib/calculations.ts` itself (a `replace` names only
    the strings): the project is mounted read-only at its own path, so it reads the same."""
    script = "mortgage-analyzer/enforce-mortgage-rules.sh"
    ws, command = project(tmp_path, script, "BeforeTool", "write_file|replace")
    target = ws / "lib" / "calculations.ts"
    target.parent.mkdir()
    target.write_text(CALCULATIONS)
    tool_input = {"file_path": str(target), "old_string": "ratio <= 0.4)", "new_string": f"{new})"}
    stdin = event(ws, "BeforeTool", "replace", tool_input)
    host = on_host(ws, command, stdin)
    assert decision(host)[0] is blocks, host
    got = sandboxed(ws, tmp_path, command, stdin, "BeforeTool")
    assert got["run"]["blocked"] is blocks and got["run"].get("reason") == decision(host)[1]
    assert (got["exec"].returncode, got["exec"].stdout) == (host.returncode, host.stdout)
    assert decision(got["untrusted"]) == decision(host)
    assert target.read_text() == CALCULATIONS


def test_a_context_hook_reads_the_plan_in_its_cwd(engine: DockerBackend, tmp_path: Path) -> None:
    """planning-with-files' BeforeTool hook turns the first lines of `task_plan.md` (read
    from its working directory, the project) into a systemMessage: the same sandboxed."""
    ws, command = project(tmp_path, "planning-with-files/before-tool.sh", "BeforeTool", "")
    (ws / "task_plan.md").write_text('# Plan\n- [ ] step one: "quoted"\n')
    stdin = event(ws, "BeforeTool", "read_file", {"file_path": str(ws / "README.md")})
    host = on_host(ws, command, stdin)
    message = json.loads(host.stdout)["systemMessage"]
    assert "step one" in message
    got = sandboxed(ws, tmp_path, command, stdin, "BeforeTool")
    assert got["run"]["systemMessage"] == message and not got["run"]["blocked"]
    assert (got["exec"].returncode, got["exec"].stdout) == (host.returncode, host.stdout)
    assert got["untrusted"].stdout == host.stdout  # nothing in it a repository may not say


def test_a_hook_that_writes_the_workspace_answers_the_same_and_writes_nothing(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """The docs' own first hook appends to `.gemini/tool-log.txt` in the project. On the
    host it does; sandboxed the project is read-only: the answer (`{}`) is the same, the
    file is not written, and the report names the read-only workspace."""
    ws, command = project(tmp_path, "gemini-cli-docs/log-tools.sh", "AfterTool", "")
    log = ws / ".gemini" / "tool-log.txt"
    stdin = event(ws, "AfterTool", "read_file", {"file_path": str(ws / "README.md")})
    host = on_host(ws, command, stdin)
    assert (host.returncode, host.stdout) == (0, b"{}\n") and log.read_text().count("\n") == 1
    log.unlink()
    # Writable by the hook's user, as your own project is yours: as root, hooks run as
    # nobody, and gVisor checks that before the read-only mount (EACCES, not EROFS).
    (ws / ".gemini").chmod(0o777)
    got = sandboxed(ws, tmp_path, command, stdin, "AfterTool")
    assert not got["run"]["blocked"] and got["run"]["decision"] == "allow"
    [report] = got["run"]["hooks"]
    assert report["sandboxStopped"] == "read-only workspace write", report
    assert (got["exec"].returncode, got["exec"].stdout) == (host.returncode, host.stdout)
    assert b"sandboxrun: the sandbox stopped a write: the workspace" in got["exec"].stderr
    assert not log.exists()


@pytest.mark.parametrize("fail_closed", [False, True], ids=["open", "fail-closed"])
@pytest.mark.parametrize("failure", ["missing-image", "timeout", "oom"])
def test_the_sandboxs_own_failures_never_block_unless_fail_closed(
    engine: DockerBackend, tmp_path: Path, failure: str, fail_closed: bool
) -> None:
    """Gemini blocks on any exit code above 1 that comes with text (and reads stderr when
    stdout is empty): a missing image (Docker's own exit 125), a timeout or an OOM must
    reach it as exit 1 (a warning; the tool runs), or as exit 2 with the reason under
    --fail-closed; never anything on stdout."""
    lines = [f'{k} = "{v}"' for k, v in (("runtime", engine_runtime()),
                                          ("image", engine_image())) if v]  # fmt: skip
    command = "exit 0"
    options: list[str] = []
    if failure == "missing-image":
        lines = [ln for ln in lines if not ln.startswith("image")]
        lines.append('image = "sandboxrun/no-such-image:never"')
    elif failure == "timeout":
        command, options = "sleep 30", ["--timeout", "1"]
    else:
        lines.append('memory = "64m"')
        command = "python3 -c 'x = bytearray(512 * 1024 * 1024)'"
    config = tmp_path / "config.toml"
    config.write_text("".join(f"{ln}\n" for ln in lines))
    argv = cli("exec", "--agent", "gemini", *options,
               *(["--fail-closed"] if fail_closed else []), "--", command, config=config)  # fmt: skip
    done = subprocess.run(argv, input=b"{}", capture_output=True, cwd=tmp_path, timeout=180)
    assert done.stdout == b"" and done.returncode == (2 if fail_closed else 1), done.stderr
    output = read_output(done.stdout, done.stderr, done.returncode)[0] or {}
    assert (output.get("decision") == "deny") is fail_closed, done.stderr


def test_the_transcript_is_the_only_file_of_geminis_folder_inside(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Item 8: the event's `transcript_path` (an absolute host path) reads the same inside
    when it is Gemini's own chat file, mounted read-only at its path; another file of
    `~/.gemini` that an event names is not there."""
    home = tmp_path / "home"
    chat = home / ".gemini" / "tmp" / "p" / "chats" / "session-1.json"
    chat.parent.mkdir(parents=True)
    chat.write_text('{"messages": ["hello transcript"]}')
    creds = home / ".gemini" / "oauth_creds.json"
    creds.write_text('{"messages": ["a secret"]}')
    ws = tmp_path / "ws"
    (ws / ".gemini").mkdir(parents=True)
    command = "jq -r .transcript_path | xargs cat | jq -c '{systemMessage: .messages[0]}'"
    settings = {"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": command}]}]}}
    (ws / ".gemini" / "settings.json").write_text(json.dumps(settings))
    for path, seen in ((chat, "hello transcript"), (creds, None)):
        stdin = json.dumps({"cwd": str(ws), "transcript_path": str(path), "prompt": "p"})
        ran = subprocess.run(cli("run", "AfterAgent", "--agent", "gemini", home=home),
                             input=stdin.encode(), capture_output=True, cwd=ws, timeout=180)  # fmt: skip
        answer = json.loads(ran.stdout)
        if seen:
            assert answer["systemMessage"] == seen, answer
        else:
            assert "secret" not in ran.stdout.decode() and "No such file" in answer["systemMessage"]


@pytest.mark.parametrize(("tool_input", "blocks"), [({"command": "rm -rf /"}, True),
                                                    ({"command": "ls -la"}, False)])  # fmt: skip
def test_install_then_gemini_runs_the_wrapper_sandboxed(
    engine: DockerBackend, tmp_path: Path, tool_input: dict[str, Any], blocks: bool
) -> None:
    """Item 4 end to end: `install --agent gemini` rewrites the project's settings, the
    wrapper is run as Gemini runs it (its textual substitutions, then `bash -c` in a
    project whose path holds a space and a quote), the public guard runs in the
    sandbox and decides as on the host; `uninstall` gives the file back byte for byte."""
    from ..test_install_gemini import as_gemini_runs

    script = "mortgage-analyzer/block-destructive-ops.sh"
    ws, command = project(tmp_path, script, "BeforeTool", "run_shell_command")
    ws = ws.rename(tmp_path / "it's a project")
    settings = ws / ".gemini" / "settings.json"
    before = settings.read_bytes()
    stdin = event(ws, "BeforeTool", "run_shell_command", tool_input)
    host = on_host(ws, command, stdin)
    assert decision(host)[0] is blocks, host
    home = tmp_path / "home"
    home.mkdir()
    where = ("--workspace", str(ws), "--home", str(home))
    done = subprocess.run(cli("install", "--agent", "gemini", *where), capture_output=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    wrapper = json.loads(settings.read_text())["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    assert "--untrusted" in wrapper
    env = {**os.environ, **dict.fromkeys(("GEMINI_PROJECT_DIR", "GEMINI_CWD",
                                          "CLAUDE_PROJECT_DIR"), str(ws))}  # fmt: skip
    ran = subprocess.run(["bash", "-c", as_gemini_runs(wrapper, os.environ, str(ws))],
                         input=stdin.encode(), capture_output=True, cwd=ws, env=env,
                         timeout=180)  # fmt: skip
    assert decision(ran) == decision(host), ran.stderr
    if blocks:
        assert (ran.returncode, ran.stdout) == (host.returncode, host.stdout), ran.stderr
    done = subprocess.run(cli("uninstall", "--agent", "gemini", *where), capture_output=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and settings.read_bytes() == before, done.stderr


@pytest.mark.parametrize("seen", ["before", "after"], ids=["preflight", "exit127"])
def test_an_interpreter_only_the_host_has_reaches_the_model_as_nothing(
    tmp_path: Path, seen: str
) -> None:
    """Issue 30: a `#!/usr/bin/env INTERP` hook whose interpreter this machine has and the
    image lacks, installed for Gemini and run as Gemini runs it: the sandbox's failure,
    Gemini's own wrapper failure (exit 1, a warning the user sees; the tool runs), and
    nothing the model would read (before: exit 127 with `/usr/bin/env: ...` and a
    `sandboxrun:` hint, which Gemini handed the model as `Tool execution blocked: ...`).
    Seen before the run (the shebang, `_sandbox.preflight`) or after it (a construct the check
    does not read: the sandbox's exit 127 and stderr)."""
    from ..test_install_gemini import as_gemini_runs
    from ..test_model_reads import gemini_model_reads

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    interp = bin_dir / "sr-host-only-interp"
    interp.write_text("#!/bin/sh\nexit 0\n")
    interp.chmod(0o755)
    ws = tmp_path / "ws"
    (ws / ".gemini" / "hooks").mkdir(parents=True)
    (ws / ".git").mkdir()
    hook = ws / ".gemini" / "hooks" / "g.rb"
    hook.write_text(f"#!/usr/bin/env {interp.name}\n")
    hook.chmod(0o755)
    command = "$GEMINI_PROJECT_DIR/.gemini/hooks/g.rb"
    if seen == "after":
        command = f"if true; then {command}; fi"
    group = {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": command}]}
    settings = ws / ".gemini" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"BeforeTool": [group]}}))
    for folder in (tmp_path, ws, ws / ".gemini", ws / ".gemini" / "hooks"):
        folder.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    where = ("--workspace", str(ws), "--home", str(home))
    done = subprocess.run(cli("install", "--agent", "gemini", *where), capture_output=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    wrapper = json.loads(settings.read_text())["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
           **dict.fromkeys(("GEMINI_PROJECT_DIR", "GEMINI_CWD"), str(ws))}  # fmt: skip
    stdin = json.dumps({"session_id": "s", "cwd": str(ws), "hook_event_name": "BeforeTool",
                        "tool_name": "run_shell_command",
                        "tool_input": {"command": "rm -rf /"}})  # fmt: skip
    ran = subprocess.run(["bash", "-c", as_gemini_runs(wrapper, env, str(ws))],
                         input=stdin.encode(), capture_output=True, cwd=ws, env=env,
                         timeout=180)  # fmt: skip
    assert (ran.returncode, ran.stdout) == (1, b""), ran.stderr
    assert gemini_model_reads(ran.returncode, ran.stdout, ran.stderr) == "", ran.stderr
    assert b"sandboxrun: the hook cannot start" in ran.stderr, ran.stderr
    assert interp.name.encode() in ran.stderr
