"""`sandboxrun install` end to end, per agent: a workspace configured the agent's usual
way, installed, then driven exactly as the agent drives it (a Cline shim executed by
path with Cline's JSON on stdin; a rewritten Claude-family command run with `sh -c` in
the project, its project-dir variable set). The decisions must be those of the original
hooks run unsandboxed on the host; `uninstall` must give every byte (and mode) back.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.cline import parse_output

from .conftest import _CONFIG_DIR, _test_config, cli

CLINE_GUARD = """#!/bin/bash
# The team's guard: bash + jq, Cline's contract.
cmd=$(jq -r '.preToolUse.parameters.command // ""')
if [[ "$cmd" == *"rm -rf"* ]]; then
  echo '{"cancel": true, "errorMessage": "Blocked by team policy: rm -rf"}'
else
  echo "checked: $cmd"   # a log line before the JSON: Cline reads the last object
  echo '{"cancel": false}'
fi
"""
CLINE_CONTEXT = """#!/usr/bin/env python3
import json, sys
event = json.load(sys.stdin)
task = event["taskStart"]["taskMetadata"]["initialTask"]
print(json.dumps({"contextModification": f"task: {task}; roots: {event['workspaceRoots']}"}))
"""
# Where each Cline-family agent reads workspace hooks (the guard's folder, the other's).
CLINE_FOLDERS = {"cline": (".clinerules/hooks", ".cline/hooks"), "careti": (".agents/hooks",) * 2}


def snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path below `root`: its mode and, for files, its bytes."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder) / name
            st = path.lstat()
            out[str(path.relative_to(root))] = (
                st.st_mode,
                path.read_bytes() if stat.S_ISREG(st.st_mode) else None,
            )
    return out


def sandboxrun(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line with the run's config, review off: these tests install with a
    `--home` of their own, while the installed `exec`s pin in the account's home, where
    no record of this install is (a user's install and exec share one home). The review
    of changed hooks is tested in tests/engine/test_review.py."""
    config = _CONFIG_DIR / "install.toml"
    config.write_text(_test_config() + 'review = "off"\n')
    done = subprocess.run(cli(*args, config=config), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def cline_event(hook: str, root: Path, payload: Mapping[str, Any]) -> bytes:
    """An event as Cline writes it: compact, its field order, no trailing newline."""
    key = hook[0].lower() + hook[1:]
    event = {"clineVersion": "3.36.0", "hookName": hook, "timestamp": "1732000000000",
             "taskId": "t1", "workspaceRoots": [str(root)], "userId": "u1",
             "model": {"provider": "anthropic", "slug": "claude"}, key: payload}  # fmt: skip
    return json.dumps(event, separators=(",", ":")).encode()


def cline_runs(hook_file: Path, root: Path, event: bytes) -> tuple[bool, str, str]:
    """Run a hook file as Cline does (`/bin/sh -c '<path>'` in the root, the event on
    stdin) and read its answer as Cline does: (cancel, context, error message)."""
    done = subprocess.run(["/bin/sh", "-c", shlex.quote(str(hook_file))], input=event,
                          capture_output=True, cwd=root, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr  # Cline: a non-zero exit is a failed hook
    answer, _ = parse_output(done.stdout.decode())
    return (answer["cancel"], answer.get("contextModification", "").strip(),
            answer.get("errorMessage", "").strip())  # fmt: skip


@pytest.mark.parametrize("agent", sorted(CLINE_FOLDERS))
def test_cline_family_shims_decide_as_the_originals(
    engine: DockerBackend, tmp_path: Path, agent: str
) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    guard_dir, other_dir = (root / d for d in CLINE_FOLDERS[agent])
    for folder, name, body in ((guard_dir, "PreToolUse", CLINE_GUARD),
                               (other_dir, "TaskStart", CLINE_CONTEXT)):  # fmt: skip
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(body)
        (folder / name).chmod(0o755)
    events = [
        ("PreToolUse", guard_dir, {"toolName": "execute_command",
                                   "parameters": {"command": "rm -rf ~/projects"}}),
        ("PreToolUse", guard_dir, {"toolName": "execute_command",
                                   "parameters": {"command": "ls"}}),
        ("TaskStart", other_dir, {"taskMetadata": {"taskId": "t1", "ulid": "u",
                                                   "initialTask": "fix the build"}}),
    ]  # fmt: skip
    before = snapshot(root)
    unsandboxed = [cline_runs(d / h, root, cline_event(h, root, p)) for h, d, p in events]
    assert unsandboxed[0] == (True, "", "Blocked by team policy: rm -rf")
    assert unsandboxed[2][1] == f"task: fix the build; roots: ['{root}']"

    sandboxrun("install", "--agent", agent, "--workspace", str(root), "--home", str(home))
    assert snapshot(root) != before
    for (h, d, p), expected in zip(events, unsandboxed, strict=True):
        assert cline_runs(d / h, root, cline_event(h, root, p)) == expected

    sandboxrun("uninstall", "--agent", agent, "--workspace", str(root), "--home", str(home))
    assert snapshot(root) == before


CLAUDE_GUARD = """#!/bin/bash
# Blocks rm -rf the Claude Code way: exit 2, the reason on stderr.
cmd=$(jq -r '.tool_input.command // ""')
case "$cmd" in *"rm -rf"*) echo "rm -rf is not allowed ($cmd)" >&2; exit 2 ;; esac
exit 0
"""
CLAUDE_STOP = """import json, sys
event = json.load(sys.stdin)
print(json.dumps({"systemMessage": f"stop [{sys.argv[1]}] {event['hook_event_name']}"}))
"""
ASK = ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",'
       ' "permissionDecisionReason": "mentions a secret"}}')  # fmt: skip
# (project folder, project-dir variable) of each Claude-family agent.
CLAUDE_AGENTS = {
    "claude": (".claude", "CLAUDE_PROJECT_DIR"),
    "qoder": (".qoder", "QODER_PROJECT_DIR"),
    "qoder-cn": (".qoder", "QODERCN_PROJECT_DIR"),
}


def claude_project(root: Path, agent: str) -> Path:
    """A project configured the agent's usual way: hooks as shell commands (a script by
    the project-dir variable, a pipeline with `&&`/`||`, a redirection, a `$(...)`), and
    for Claude Code an `args` handler."""
    folder, var = CLAUDE_AGENTS[agent]
    hooks = root / folder / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "guard.sh").write_text(CLAUDE_GUARD)
    (hooks / "guard.sh").chmod(0o755)
    (hooks / "stop.py").write_text(CLAUDE_STOP)
    (root / ".git").mkdir()
    (root / "README.md").write_text("hello from the project\n")
    secret = f"jq -r .tool_input.command | grep -q secret && echo '{ASK}' || true"
    stop: dict[str, Any] = {"type": "command", "command": "python3",
                            "args": [f"{folder}/hooks/stop.py", "a b"]}  # fmt: skip
    if agent != "claude":  # the classic clones know only shell strings
        stop = {"type": "command", "command": f"python3 {folder}/hooks/stop.py 'a b'"}
    settings = {"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": f'"${var}"/{folder}/hooks/guard.sh', "timeout": 30},
            {"type": "command", "command": secret},
        ]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": 'echo "context: $(head -n 1 README.md)" 2>/dev/null'},
        ]}],
        "Stop": [{"hooks": [stop]}],
    }}  # fmt: skip
    path = root / folder / "settings.json"
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


def claude_runs(
    settings: Path, root: Path, event: Mapping[str, Any], var: str
) -> list[tuple[int, bytes, bytes]]:
    """Every handler of the event's entries (all match: Bash, or no matcher), run as the
    agent runs it: `sh -c` (or the argv of an `args` handler) in the project, the event
    on stdin, the project-dir variable set; (exit code, stdout, stderr) of each."""
    data = json.loads(settings.read_text())
    env = {**os.environ, var: str(root)}
    out = []
    for entry in data["hooks"].get(event["hook_event_name"], []):
        for hook in entry["hooks"]:
            argv = [hook["command"], *hook["args"]] if "args" in hook else [
                "sh", "-c", hook["command"]]  # fmt: skip
            done = subprocess.run(argv, input=json.dumps(event).encode(), capture_output=True,
                                  cwd=root, env=env, timeout=120)  # fmt: skip
            out.append((done.returncode, done.stdout, done.stderr))
    return out


def claude_event(name: str, root: Path, **fields: Any) -> dict[str, Any]:
    return {"session_id": "s1", "transcript_path": str(root / "no-transcript.jsonl"),
            "cwd": str(root), "hook_event_name": name, **fields}  # fmt: skip


def bash(command: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "u1"}


@pytest.mark.parametrize("agent", sorted(CLAUDE_AGENTS))
def test_claude_family_wrapped_commands_decide_as_the_originals(
    engine: DockerBackend, tmp_path: Path, agent: str
) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    settings = claude_project(root, agent)
    var = CLAUDE_AGENTS[agent][1]
    events = [
        claude_event("PreToolUse", root, **bash("rm -rf /")),
        claude_event("PreToolUse", root, **bash("cat secret.txt")),
        claude_event("PreToolUse", root, **bash("ls")),
        claude_event("UserPromptSubmit", root, prompt="hi"),
        claude_event("Stop", root, stop_hook_active=False),
    ]
    before = settings.read_bytes()
    unsandboxed = [claude_runs(settings, root, e, var) for e in events]
    assert unsandboxed[0][0] == (2, b"", b"rm -rf is not allowed (rm -rf /)\n")
    assert unsandboxed[1][1] == (0, ASK.encode() + b"\n", b"")
    assert unsandboxed[3] == [(0, b"context: hello from the project\n", b"")]
    assert unsandboxed[4] == [(0, b'{"systemMessage": "stop [a b] Stop"}\n', b"")]

    sandboxrun("install", "--agent", agent, "--workspace", str(root), "--home", str(home))
    assert settings.read_bytes() != before
    launcher = home / ".local/share/sandboxrun/hook"  # install's, in the user's data folder
    assert f"{launcher} exec" in settings.read_text() or '"exec"' in settings.read_text()
    for event, expected in zip(events, unsandboxed, strict=True):
        assert claude_runs(settings, root, event, var) == expected, event

    sandboxrun("uninstall", "--agent", agent, "--workspace", str(root), "--home", str(home))
    assert settings.read_bytes() == before


def test_claude_managed_runs_a_hook_the_repository_adds_later_sandboxed(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """The strong setup: with `allowManagedHooksOnly` the agent runs only the managed
    forwarding hooks; a hook the repository adds after install (here: one that also
    tries to leave a mark in the project) still runs, and runs in the sandbox."""
    root, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    claude_project(root, "claude")
    managed = tmp_path / "etc" / "claude-code" / "managed-settings.json"
    managed.parent.mkdir(parents=True)
    sandboxrun("install", "--agent", "claude", "--managed-file", str(managed),
               "--home", str(home))  # fmt: skip
    data = json.loads(managed.read_text())
    assert data["allowManagedHooksOnly"] is True

    # A pull brings a new hook; nobody runs `install` again.
    (root / ".claude" / "settings.local.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"hooks": [{"type": "command",
                    "command": 'touch "$CLAUDE_PROJECT_DIR/pwned" 2>/dev/null;'
                               ' echo "the new hook says no" >&2; exit 2'}]}]}}))  # fmt: skip

    def agent_answers(event: dict[str, Any]) -> tuple[int, bytes, bytes]:
        (result,) = claude_runs(managed, root, event, "CLAUDE_PROJECT_DIR")
        return result

    code, out, err = agent_answers(claude_event("PreToolUse", root, **bash("ls")))
    assert (code, out) == (2, b""), err
    assert b"the new hook says no" in err
    assert not (root / "pwned").exists()  # it ran, read-only: in the sandbox
    code, out, err = agent_answers(claude_event("PreToolUse", root, **bash("rm -rf /")))
    assert code == 2 and b"rm -rf is not allowed (rm -rf /)" in err
    code, out, err = agent_answers(claude_event("UserPromptSubmit", root, prompt="hi"))
    assert code == 0, err
    assert json.loads(out) == {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": "context: hello from the project"}}  # fmt: skip

    sandboxrun("uninstall", "--agent", "claude", "--managed-file", str(managed),
               "--home", str(home))  # fmt: skip
    assert not managed.exists()


def test_cline_global_forwarders_run_the_moved_workspace_hooks(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """`--global`: the forwarding hooks in the user's folders run the hooks `install`
    moved out of the workspace (Cline runs global hooks in the primary root). Cline has
    no switch that turns workspace hooks off: a hook a pull adds is run by Cline itself,
    and `list` says so."""
    root, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    (root / ".clinerules/hooks").mkdir(parents=True)
    (root / ".clinerules/hooks/PreToolUse").write_text(CLINE_GUARD)
    (root / ".clinerules/hooks/PreToolUse").chmod(0o755)
    sandboxrun("install", "--agent", "cline", "--global", "--home", str(home))
    sandboxrun("install", "--agent", "cline", "--workspace", str(root), "--home", str(home))
    assert os.listdir(root / ".clinerules/hooks") == []  # moved; the forwarders run them
    event = cline_event("PreToolUse", root, {"toolName": "execute_command",
                                             "parameters": {"command": "rm -rf ~"}})  # fmt: skip
    # One forwarder, in the folder both engines read: the CLI reads ~/.cline/hooks too.
    forwarder = home / "Documents/Cline/Hooks/PreToolUse"
    assert cline_runs(forwarder, root, event) == (True, "", "Blocked by team policy: rm -rf")
    assert not (home / ".cline/hooks").exists()
    (root / ".clinerules/hooks/PostToolUse").write_text("#!/bin/sh\necho '{}'\n")
    (root / ".clinerules/hooks/PostToolUse").chmod(0o755)
    listed = sandboxrun("list", "--workspace", str(root), "--home", str(home)).stdout
    assert f"not wrapped: {root}/.clinerules/hooks/PostToolUse runs unsandboxed" in listed


SANDBOXRUN = os.path.join(os.path.dirname(sys.executable), "sandboxrun")  # what install finds


def test_a_look_alike_wrapper_runs_nothing_on_the_host(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """A repository's commands shaped like install's wrappers (`$(...)` in double quotes,
    `>>` glued to the quoted word, options naming settings) are no wrappers of
    install's: it wraps them whole, or migrates the one argument of an earlier
    sandboxrun's shape into a new wrapper, and the agent's shell, running the installed
    command, runs nothing of them on the host."""
    root, home, host = tmp_path / "project", tmp_path / "home", tmp_path / "host"
    for folder in (root / ".claude", root / ".git", home, host):
        folder.mkdir(parents=True)
    substituted, appended = host / "substituted", host / "appended"
    alike = [
        f'{SANDBOXRUN} exec --agent claude -- "$(touch {substituted})"',
        f"{SANDBOXRUN} exec -- 'true'>>{appended}",
        f"{SANDBOXRUN} exec --config /proc/self/cwd/x.toml -- 'touch {host}/config'",
        f"{SANDBOXRUN} exec --network bridge -- 'touch {host}/network'",
    ]
    settings = root / ".claude" / "settings.json"
    hooks = [{"type": "command", "command": c} for c in alike]
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": hooks}]}}))
    (root / "x.toml").write_text('network = "bridge"\n')  # never read: not the user's
    done = sandboxrun("install", "--agent", "claude", "--workspace", str(root), "--home", str(home))
    assert "3 of them migrated from an earlier sandboxrun's wrapper" in done.stdout
    # Each runs in the sandbox (where the host's folder is not mounted: `>>` fails
    # there, exit 2, the hook's own answer), nothing on the host.
    claude_runs(settings, root, claude_event("PreToolUse", root, **bash("ls")),
                "CLAUDE_PROJECT_DIR")  # fmt: skip
    assert list(host.iterdir()) == []


def test_an_earlier_install_still_blocks_after_install_again(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """A guard wrapped by an earlier sandboxrun (its wrapper, no record), installed
    again: the new wrapper runs the guard itself in the sandbox, so it still blocks
    (exit 2, its reason), rather than a second wrapper that cannot start it."""
    root, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    settings = claude_project(root, "claude")
    config = Path(cli("install")[-1])  # this run's settings, as the earlier install named them
    data = json.loads(settings.read_text())
    guard = data["hooks"]["PreToolUse"][0]["hooks"][0]
    why = shlex.quote(f"sandboxrun (fail-closed): {SANDBOXRUN} is missing")
    guard["command"] = (  # byte for byte what the earlier install (35cbcc0) wrote
        f"[ -x {shlex.quote(SANDBOXRUN)} ] || {{ echo {why} >&2; exit 2; }}; "
        + shlex.join([SANDBOXRUN, "exec", "--agent", "claude", "--fail-closed", "--config",
                      str(config), "--timeout", "25", "--", guard["command"]])
    )  # fmt: skip
    data["hooks"]["PreToolUse"][0]["hooks"][1:] = []
    del data["hooks"]["UserPromptSubmit"], data["hooks"]["Stop"]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    sandboxrun("install", "--agent", "claude", "--workspace", str(root), "--home", str(home))
    rm = claude_event("PreToolUse", root, **bash("rm -rf /"))
    ls = claude_event("PreToolUse", root, **bash("ls"))
    assert claude_runs(settings, root, rm, "CLAUDE_PROJECT_DIR") == [
        (2, b"", b"rm -rf is not allowed (rm -rf /)\n")
    ]
    assert claude_runs(settings, root, ls, "CLAUDE_PROJECT_DIR") == [(0, b"", b"")]


def test_the_installed_command_starts_python_isolated(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """A project's settings `env` sets the environment of every hook process the agent
    starts; the installed command's own Python ignores it (`-I`): no `sitecustomize.py`
    from `PYTHONPATH` or the user site runs on the host, `PYTHONHOME` changes nothing."""
    root, home, evil = tmp_path / "project", tmp_path / "home", tmp_path / "project" / "evil"
    for folder in (root / ".claude", root / ".git", home, evil):
        folder.mkdir(parents=True)
    marker = tmp_path / "marker"
    code = f"open({str(marker)!r}, 'a').write('ran on the host\\n')\n"
    (evil / "sitecustomize.py").write_text(code)
    site = evil / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True)
    (site / "usercustomize.py").write_text(code)
    settings = root / ".claude" / "settings.json"
    hook = {"type": "command", "command": "echo checked"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    sandboxrun("install", "--agent", "claude", "--workspace", str(root), "--home", str(home))
    command = json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    event = json.dumps(claude_event("PreToolUse", root, **bash("ls"))).encode()
    for env in (
        {"PYTHONPATH": str(evil), "PYTHONUSERBASE": str(evil), "PYTHONSTARTUP": str(evil)},
        {"PYTHONHOME": str(evil), "PYTHONPATH": str(evil)},
    ):
        done = subprocess.run(
            ["sh", "-c", command], input=event, capture_output=True, cwd=root, timeout=120,
            env={**os.environ, "CLAUDE_PROJECT_DIR": str(root), **env},
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, b"checked\n"), done.stderr
    assert not marker.exists()


def test_installed_fail_closed_exec_blocks_on_a_config_file_it_cannot_read(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Issue 29 item 4: the files `install --fail-closed` rewrote read fine (nothing
    skipped), and its wrapper, run as Claude Code runs it, blocks (exit 2, the file named)
    once the project's local settings stop parsing; they read again, it decides again."""
    from sandboxrun._dialects.claude.dialect import CLAUDE

    root, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    settings = claude_project(root, "claude")
    sandboxrun("install", "--agent", "claude", "--fail-closed", "--workspace", str(root),
               "--home", str(home))  # fmt: skip
    assert [s for s in CLAUDE.discover(None, [str(root)], str(home)).skipped if s.unreadable] == []
    ls = claude_event("PreToolUse", root, **bash("ls"))
    rm = claude_event("PreToolUse", root, **bash("rm -rf /"))
    assert claude_runs(settings, root, ls, "CLAUDE_PROJECT_DIR")[0] == (0, b"", b"")
    local = root / ".claude" / "settings.local.json"
    local.write_text('{"hooks": {')
    [(code, out, err), *_] = claude_runs(settings, root, ls, "CLAUDE_PROJECT_DIR")
    assert (code, out) == (2, b""), err
    assert f"{local} (local): could not be read: not valid JSON".encode() in err
    local.write_text("{}")
    assert claude_runs(settings, root, ls, "CLAUDE_PROJECT_DIR")[0] == (0, b"", b"")
    assert claude_runs(settings, root, rm, "CLAUDE_PROJECT_DIR")[0][0] == 2
