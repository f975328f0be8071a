"""Claude Code (`@anthropic-ai/claude-code`, the version in package-lock.json), its own CLI
headless (`claude -p --allowedTools Bash`) against the fake model, before and after
`sandboxrun install`, cold and warm, with failing hooks, uninstalled, and managed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import fakemodel, observe
from .conftest import Account, Netns, command_hooks, make_account, make_project, snapshot

MANAGED = Path("/etc/claude-code/managed-settings.json")

GUARD = """#!/bin/bash
input=$(cat)
case "$input" in
  *'rm -r'*) echo "GUARD-%(token)s: rm -r is not allowed here" >&2; exit 2 ;;
esac
exit 0
"""
MARKER = """#!/bin/bash
cat >/dev/null
echo ran >%(marker)s
exit 0
"""
SLOW = """#!/bin/bash
cat >/dev/null
sleep 60
"""
# An interpreter the host has (in the account's ~/.local/bin) and the sandbox lacks.
MISSING = """#!/usr/bin/env sbx-interp
cat >/dev/null
exit 0
"""


# What Claude Code sets for a hook (observed/claude.json) that goes inside the sandbox,
# the same as on the host, and what never does (docs/agents/claude.md has the table).
PASSED = (
    "CLAUDE_PROJECT_DIR",
    "AI_AGENT",
    "CLAUDECODE",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ATTENDED",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_EFFORT",
    "COREPACK_ENABLE_AUTO_PIN",
    "NoDefaultCurrentDirectoryInExePath",
)
WITHHELD = ("CLAUDE_PID", "CLAUDE_CODE_CHILD_NOTES_DIR", "CLAUDE_CODE_MESSAGING_SOCKET",
            "CLAUDE_CODE_MESSAGING_TOKEN")  # fmt: skip
# Every variable, then the event's `session_id` (a bash match: no tool the host may lack),
# one `PROBE NAME=VALUE` line each, to OUT: a file (the host's probe), or stderr with
# exit 2 (the sandboxed one's: the model reads the block's reason).
PROBE = (
    "#!/bin/bash\ninput=$(cat)\n{\n"
    + "".join(f'echo "PROBE {name}=${{{name}-<unset>}}"\n' for name in (*PASSED, *WITHHELD))
    + '[[ $input =~ \\"session_id\\":\\"([^\\"]*)\\" ]] && sid=${BASH_REMATCH[1]}\n'
    + 'echo "PROBE event_session=${sid-<unset>}"\n} %(out)s\n'
)


def settings(*hooks: tuple[str, int | None]) -> str:
    return json.dumps(command_hooks({"PreToolUse": hooks}, "Bash"))


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    yield from make_account("claude")


@pytest.fixture
def guarded(account: Account) -> Iterator[tuple[Path, str, Path]]:
    """A project whose guard blocks `rm -r` naming a token, and whose marker hook writes
    a file outside the workspace: (project, token, marker path)."""
    token, marker = uuid.uuid4().hex[:10], Path(f"/tmp/marker-{uuid.uuid4().hex}")
    project = make_project(account, {
        ".claude/hooks/guard.sh": GUARD % {"token": token},
        ".claude/hooks/marker.sh": MARKER % {"marker": marker},
        ".claude/settings.json": settings(('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh', None),
                                          ('"$CLAUDE_PROJECT_DIR"/.claude/hooks/marker.sh', None)),
    })  # fmt: skip
    yield project, token, marker
    marker.unlink(missing_ok=True)


def environment(account: Account, model: fakemodel.FakeModel) -> dict[str, str]:
    """What the CLI is started with beyond the account's own variables."""
    return {
        "ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "sk-ant-fake",
        "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_BUG_COMMAND": "1",
        "PATH": f"{account.home}/.local/bin:/usr/local/bin:/usr/bin:/bin",
    }  # fmt: skip


def claude(
    account: Account, agents_bin: Path, project: Path, model: fakemodel.FakeModel, netns: Netns
) -> dict[str, Any]:
    """One headless run of the real CLI in `project`, as the account, in the namespace:
    its JSON result."""
    argv = [str(agents_bin / "claude"), "-p", "Remove the victim folder.", "--allowedTools",
            "Bash", "--output-format", "json"]  # fmt: skip
    env = environment(account, model)
    done = subprocess.run(account.as_me(argv, netns.name, env), cwd=project, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, f"claude: {done.returncode}\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    assert result.get("result") == fakemodel.FINAL_TEXT, result
    return result


def blocked_with(model: fakemodel.FakeModel, project: Path, token: str) -> str:
    """The guard blocked: the victim is there, and the model read the guard's reason."""
    assert (project / "victim" / "keep.txt").exists(), (
        f"the guard did not block: {model.tool_results()}"
    )
    told = [text for text in model.tool_results() if f"GUARD-{token}" in text]
    assert told, f"the model was not told the guard's reason: {model.tool_results()}"
    return told[0]


@pytest.fixture
def serve(account: Account) -> Iterator[None]:
    """A `sandboxrun serve` of the account's, started by the test (setpriv execs it, so
    the pid is the server's); the account's config uses it and starts none."""
    socket = account.home / ".cache" / "sandboxrun" / "serve.sock"  # not in the home itself:
    # a socket's folder is sandboxrun's own, and no workspace may hold one
    account.config(f'serve = "use"\nserve_socket = "{socket}"\n')
    uid = str(os.stat(account.home).st_uid)
    argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--init-groups", *account.env(),
            *account.sandboxrun, "serve"]  # fmt: skip
    log = open(account.home / "serve.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(argv, cwd=account.home, stderr=log)
    deadline = time.monotonic() + 60
    while not socket.exists():
        assert server.poll() is None, (account.home / "serve.log").read_text()
        assert time.monotonic() < deadline, "serve did not start"
        time.sleep(0.2)
    yield
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=120) == 0
    log.close()
    account.config('serve = "off"\n')


def records(account: Account, since: int) -> list[dict[str, Any]]:
    """The audit trail's hook records written after record `since` (the account's runs
    are the test's own, one after another)."""
    return [r for r in account.audit()[since:] if r.get("hook")]


def test_before_install_the_guard_blocks_and_the_marker_lands_on_the_host(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fakemodel.FakeModel, netns: Netns,
) -> None:  # fmt: skip
    project, token, marker = guarded
    claude(account, agents_bin, project, model, netns)
    blocked_with(model, project, token)
    assert marker.exists(), "the marker hook did not run on the host"
    assert account.audit() == []


def test_installed_cold_and_warm_contain_the_hooks_and_uninstall_restores_every_byte(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fakemodel.FakeModel, netns: Netns, request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    project, token, marker = guarded
    account.config('serve = "off"\n')
    watched = [project / ".claude", account.home / ".claude" / "settings.json"]
    before = snapshot(watched)
    done = account.sbx("install", "--agent", "claude", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    assert snapshot(watched) != before
    launcher = account.home / ".local/share/sandboxrun/hook"  # install's, in the user's data folder
    assert f"{launcher} exec --agent claude" in (project / ".claude/settings.json").read_text()

    seen = len(account.audit())
    claude(account, agents_bin, project, model, netns)  # cold
    blocked_with(model, project, token)
    assert not marker.exists(), "the installed marker hook wrote on the host"
    cold = records(account, seen)
    assert len(cold) == 2 and all(r["warm"] is False for r in cold), cold
    assert any(f"GUARD-{token}" in json.dumps(r) for r in cold), cold

    request.getfixturevalue("serve")  # warm: a server of the account's
    seen = len(account.audit())
    model.requests.clear()
    claude(account, agents_bin, project, model, netns)
    blocked_with(model, project, token)
    assert not marker.exists()
    warm = records(account, seen)
    assert len(warm) == 2 and all(r["warm"] is True for r in warm), warm
    assert any(f"GUARD-{token}" in json.dumps(r) for r in warm), warm

    done = account.sbx("uninstall", "--agent", "claude", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    assert snapshot(watched) == before


def test_what_the_model_reads_of_an_installed_hook_holds_no_venv_path(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fakemodel.FakeModel, netns: Netns,
) -> None:  # fmt: skip
    """Claude Code hands the model the hook's command with the block (`hook error:
    [COMMAND]: REASON`): it names install's launcher, one short path of the user's."""
    project, token, _ = guarded
    account.config('serve = "off"\n')
    assert account.sbx("install", "--agent", "claude", "--workspace", str(project)).returncode == 0
    try:
        claude(account, agents_bin, project, model, netns)
        told = blocked_with(model, project, token)
    finally:
        account.sbx("uninstall", "--agent", "claude", "--workspace", str(project))
    venv = str(Path(account.python).parent.parent)
    assert venv not in told and "sandboxrun-hook" not in told, told
    assert f"{account.home}/.local/share/sandboxrun/hook exec" in told, told


@pytest.mark.parametrize("case", ["timeout", "missing-interpreter"])
def test_installed_failing_hooks(
    case: str, account: Account, agents_bin: Path, model: fakemodel.FakeModel, netns: Netns
) -> None:
    """A hook past its timeout, and one whose interpreter the host has and the sandbox
    lacks (a sandbox failure, named in the audit trail), are answered with Claude's
    wrapper failure, its non-blocking error (not `--fail-closed`): the task goes on."""
    interp = account.home / ".local" / "bin" / "sbx-interp"
    interp.parent.mkdir(parents=True, exist_ok=True)
    interp.write_text('#!/bin/bash\nexec bash "$@"\n')
    interp.chmod(0o755)
    account.own(account.home / ".local")
    hook, timeout = (SLOW, 6) if case == "timeout" else (MISSING, None)
    project = make_project(account, {
        ".claude/hooks/hook.sh": hook,
        ".claude/settings.json": settings(('"$CLAUDE_PROJECT_DIR"/.claude/hooks/hook.sh', timeout)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    assert account.sbx("install", "--agent", "claude", "--workspace", str(project)).returncode == 0
    seen = len(account.audit())
    start = time.monotonic()
    try:
        claude(account, agents_bin, project, model, netns)
    finally:
        account.sbx("uninstall", "--agent", "claude", "--workspace", str(project))
    audited = records(account, seen)
    if case == "timeout":
        assert not (project / "victim").exists(), "the task did not go on past the slow hook"
        assert [r["status"] for r in audited] == ["timed out"], audited
        assert time.monotonic() - start < 55, "sandboxrun did not end the hook at its deadline"
    else:
        assert not (project / "victim").exists(), "the task did not go on past the failed hook"
        assert [r["status"] for r in audited] == ["error"], audited
        assert "`sbx-interp`" in audited[0]["reason"] and "not in image" in audited[0]["reason"]


@pytest.fixture
def managed_file() -> Iterator[None]:
    """Whatever managed settings file this machine has is restored afterwards."""
    old = MANAGED.read_bytes() if MANAGED.exists() else None
    existed_dir = MANAGED.parent.exists()
    yield
    if old is None:
        MANAGED.unlink(missing_ok=True)
        if not existed_dir and MANAGED.parent.exists() and not any(MANAGED.parent.iterdir()):
            MANAGED.parent.rmdir()
    else:
        MANAGED.write_bytes(old)


def test_managed_forwarders_run_the_projects_hooks_sandboxed(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fakemodel.FakeModel, netns: Netns, managed_file: None,
) -> None:  # fmt: skip
    """`install --managed` (root): Claude Code runs only the managed forwarders, which
    `run --answer agent` the project's hooks in the sandbox (cold here: `serve = "off"`;
    through a server they are answered warm as any `run`, issue 31)."""
    project, token, marker = guarded
    account.config('serve = "off"\n')
    before = MANAGED.read_bytes() if MANAGED.exists() else None
    done = subprocess.run([*account.sandboxrun, "install", "--agent", "claude", "--managed"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(MANAGED.read_text())["allowManagedHooksOnly"] is True
    seen = len(account.audit())
    claude(account, agents_bin, project, model, netns)
    blocked_with(model, project, token)
    assert not marker.exists(), "a project hook ran on the host under managed settings"
    audited = records(account, seen)
    assert len(audited) == 2 and all(r["warm"] is False for r in audited), audited
    done = subprocess.run([*account.sandboxrun, "uninstall", "--agent", "claude", "--managed"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (MANAGED.read_bytes() if MANAGED.exists() else None) == before


def test_observation(
    account: Account, agents_bin: Path, model: fakemodel.FakeModel, netns: Netns
) -> None:
    """What Claude Code hands a hook, as `tests/agents/observed/claude.json` records it
    (observe.py; `scripts/agents-drift` runs it against the newest version)."""

    def configure(probe: observe.Probe) -> Path:
        return make_project(
            account, {".claude/settings.json": json.dumps(command_hooks(probe.hooks()))}
        )

    observe.observe(
        "claude", "@anthropic-ai/claude-code", account=account, agents_bin=agents_bin,
        events=("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"),
        timed="PreToolUse", given=environment(account, model), configure=configure,
        run=lambda project: claude(account, agents_bin, project, model, netns),
    )  # fmt: skip


def probed(lines: str) -> dict[str, str]:
    """The `PROBE NAME=VALUE` lines of a probe's output (anywhere in a line: the model
    reads a block's reason after Claude's own words)."""
    found: dict[str, str] = {}
    for line in lines.splitlines():
        name, _, value = line.partition("PROBE ")[2].partition("=")
        if name:
            found[name] = value
    return found


@pytest.fixture(params=["cold", "warm"])
def variables(
    account: Account, agents_bin: Path, model: fakemodel.FakeModel, netns: Netns,
    request: pytest.FixtureRequest,
) -> Iterator[tuple[Path, dict[str, str], dict[str, str]]]:  # fmt: skip
    """(project, what a PreToolUse hook sees on the host, and inside the sandbox, cold or
    through `serve`) in one run of Claude Code: the project's probe installed (`install
    --workspace`), the same probe unsandboxed in the user's settings (which that install
    leaves alone)."""
    host_out = Path(f"/tmp/probe-{uuid.uuid4().hex}")
    project = make_project(account, {
        ".claude/hooks/probe.sh": PROBE % {"out": ">&2; exit 2"},
        ".claude/settings.json": settings(('"$CLAUDE_PROJECT_DIR"/.claude/hooks/probe.sh', None)),
    })  # fmt: skip
    user = account.home / ".claude" / "settings.json"
    before = user.read_bytes() if user.exists() else None
    host_probe = account.home / "host-probe.sh"
    host_probe.write_text(PROBE % {"out": f">{host_out}; exit 0"})
    host_probe.chmod(0o755)
    account.config('serve = "off"\n')
    assert account.sbx("install", "--agent", "claude", "--workspace", str(project)).returncode == 0
    if request.param == "warm":
        request.getfixturevalue("serve")
    try:
        user.parent.mkdir(exist_ok=True)
        user.write_text(settings((str(host_probe), None)))
        account.own(user.parent)
        account.own(host_probe)
        claude(account, agents_bin, project, model, netns)
        host = probed(host_out.read_text())
        inside = probed("\n".join(model.tool_results()))
    finally:
        if before is None:
            user.unlink(missing_ok=True)
        else:
            user.write_bytes(before)
        account.sbx("uninstall", "--agent", "claude", "--workspace", str(project))
        host_out.unlink(missing_ok=True)
    yield project, host, inside


def test_the_variables_claude_sets_for_hooks_and_those_inside_the_sandbox(
    variables: tuple[Path, dict[str, str], dict[str, str]],
) -> None:
    """Within one run (one session): what Claude Code sets that goes inside is the same
    inside; its pid, its children's notes folder and its messaging socket and token are
    set on the host and unset inside."""
    project, host, inside = variables
    assert host["CLAUDE_PROJECT_DIR"] == str(project), host
    assert host["CLAUDE_CODE_SESSION_ID"] == host["event_session"] != "<unset>", host
    assert host["CLAUDE_EFFORT"] != "<unset>", host
    assert {k: inside.get(k) for k in PASSED} == {k: host[k] for k in PASSED}, (host, inside)
    assert all(host[k] != "<unset>" for k in WITHHELD), host
    assert {k: inside.get(k) for k in WITHHELD} == dict.fromkeys(WITHHELD, "<unset>"), inside
