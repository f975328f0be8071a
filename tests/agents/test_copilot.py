"""GitHub Copilot CLI (`@github/copilot`, the version in package-lock.json), its own CLI
headless (`copilot -p --allow-all-tools --trust-folder`) against the fake Chat
Completions API (`fake_chat.py`), before and after `sandboxrun install`, cold and warm,
with failing hooks, and uninstalled; what it hands a hook against `observed/copilot.json`
(`observe.py`).

Offline by its own switches, with no login: `COPILOT_OFFLINE=true` (no GitHub
authentication, telemetry, web tools, GitHub MCP server or auto-update) and its own-model
mode (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_TYPE=openai`, a dummy
`COPILOT_PROVIDER_API_KEY`, the model named by `COPILOT_MODEL`: Chat Completions unless
`COPILOT_PROVIDER_WIRE_API=responses`). `--trust-folder` trusts the project for this one
run, as a user's "trust this folder" does: Copilot runs no repository hook in a folder it
does not trust.

A Copilot guard denies with JSON (`permissionDecision`); the model reads
`Denied by preToolUse hook: <its reason>`. An exit 2 denies too, but the model reads only
`hook exited with code 2`, none of its stderr: the guards here speak JSON.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from . import fake_chat, observe
from .conftest import Account, Netns, make_account, make_project, snapshot, watched
from .fakebase import FINAL_TEXT
from .test_claude import MARKER, MISSING, SLOW, serve  # noqa: F401 - a fixture

MODEL = "gpt-4.1"
HOOKS = ".github/hooks"
DENIED = "Denied by preToolUse hook: "
# Copilot's camelCase events (hooks-reference, 14): each one observed, so that one
# `copilot -p` starts to run shows as drift (`preToolUse`, the timed one, not last).
EVENTS = ("sessionStart", "userPromptSubmitted", "userPromptTransformed", "notification",
          "permissionRequest", "preCompact", "subagentStart", "subagentStop", "errorOccurred",
          "preToolUse", "postToolUse", "postToolUseFailure", "agentStop", "sessionEnd")  # fmt: skip
GUARD = """#!/bin/bash
input=$(cat)
case "$input" in
  *'rm -r'*) echo '{"permissionDecision":"deny","permissionDecisionReason":"GUARD-%(token)s: rm -r is not allowed here"}' ;;
esac
exit 0
"""
# A guard in the Claude-shaped form a PascalCase ("VS Code compatible") event takes.
SPECIFIC_GUARD = """#!/bin/bash
input=$(cat)
case "$input" in
  *'rm -r'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"GUARD-%(token)s: rm -r is not allowed here"}}' ;;
esac
exit 0
"""
# The variables Copilot CLI sets for a hook (agent-hooks-2026.md §18), each named in the
# probe's deny reason, which the model reads; the probe runs on the host or in the sandbox.
VARIABLES = ("COPILOT_PROJECT_DIR", "COPILOT_HOOK_DIR", "CLAUDE_PROJECT_DIR", "COPILOT_CLI")
PROBE = (
    "#!/bin/bash\ncat >/dev/null\nreason=''\n"
    + "".join(f'reason="$reason PROBE {name}=${{{name}-<unset>}};"\n' for name in VARIABLES)
    + 'reason="$reason PROBE cwd=$PWD;"\n'
    + 'printf \'{"permissionDecision":"deny","permissionDecisionReason":"%s"}\\n\' "$reason"\n'
)


def hooks_file(events: Mapping[str, Sequence[tuple[str, int | None]]]) -> str:
    """A `.github/hooks/*.json` file: per event its entries (bash command, timeoutSec),
    in that order."""
    made: dict[str, list[dict[str, Any]]] = {}
    for event, entries in events.items():
        made[event] = []
        for command, timeout in entries:
            entry: dict[str, Any] = {"type": "command", "bash": command}
            if timeout is not None:
                entry["timeoutSec"] = timeout
            made[event].append(entry)
    return json.dumps({"version": 1, "hooks": made}, indent=2)


def hooks(*entries: tuple[str, int | None]) -> str:
    """A `.github/hooks/*.json` file: `entries` (bash command, timeoutSec) on preToolUse."""
    return hooks_file({"preToolUse": entries})


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    yield from make_account("copilot")


@pytest.fixture
def model(netns: Netns) -> Iterator[fake_chat.FakeChat]:
    """The fake Chat Completions API."""
    yield from watched(netns, fake_chat.start)


@pytest.fixture
def guarded(account: Account) -> Iterator[tuple[Path, str, Path]]:
    """A project whose marker hook writes a file outside the workspace and whose guard,
    after it, denies `rm -r` naming a token (Copilot stops at the first deny: the marker
    comes first), each named as Copilot's variables allow: (project, token, marker)."""
    token, marker = uuid.uuid4().hex[:10], Path(f"/tmp/marker-{uuid.uuid4().hex}")
    project = make_project(account, {
        f"{HOOKS}/guard.sh": GUARD % {"token": token},
        f"{HOOKS}/marker.sh": MARKER % {"marker": marker},
        f"{HOOKS}/hooks.json": hooks(('"$COPILOT_HOOK_DIR"/marker.sh', None),
                                     (f'"$COPILOT_PROJECT_DIR"/{HOOKS}/guard.sh', None)),
    })  # fmt: skip
    yield project, token, marker
    marker.unlink(missing_ok=True)


def environment(account: Account, model: fake_chat.FakeChat) -> dict[str, str]:
    """What the CLI is started with beyond the account's own basics."""
    return {
        "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": model.base_url,
        "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_API_KEY": "fake-copilot-key",
        "COPILOT_MODEL": MODEL, "COPILOT_AUTO_UPDATE": "false",
        "PATH": f"{account.home}/.local/bin:/usr/local/bin:/usr/bin:/bin",
    }  # fmt: skip


def copilot(
    account: Account, agents_bin: Path, project: Path, model: fake_chat.FakeChat, netns: Netns
) -> list[dict[str, Any]]:
    """One headless run of the real CLI in `project`, as the account, in the namespace:
    its JSON lines (`--output-format json`)."""
    env = environment(account, model)
    argv = [str(agents_bin / "copilot"), "-p", "Remove the victim folder.", "--allow-all-tools",
            "--trust-folder", "--no-auto-update", "--disable-client-telemetry",
            "--output-format", "json"]  # fmt: skip
    done = subprocess.run(account.as_me(argv, netns.name, env), cwd=project, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, f"copilot: {done.returncode}\n{done.stdout}\n{done.stderr}"
    found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    said = [e["data"].get("content") for e in found if e.get("type") == "assistant.message"]
    assert said and said[-1] == FINAL_TEXT, done.stdout[-3000:]
    assert [e.get("exitCode") for e in found if e.get("type") == "result"] == [0], found[-1]
    return found


def blocked_with(model: fake_chat.FakeChat, project: Path, token: str) -> str:
    """The guard blocked: the victim is there, and the model read the guard's reason."""
    assert (project / "victim" / "keep.txt").exists(), (
        f"the guard did not block: {model.tool_results()}"
    )
    told = [text for text in model.tool_results() if f"GUARD-{token}" in text]
    assert told, f"the model was not told the guard's reason: {model.tool_results()}"
    return told[0]


def records(account: Account, since: int) -> list[dict[str, Any]]:
    """The audit trail's records of hooks exec ran after record `since` (not the review
    lines that say a repository's hook was new)."""
    return [r for r in account.audit()[since:] if r.get("entry") == "exec"]


def name(record: dict[str, Any]) -> str:
    """The file name of the hook an audit record names."""
    return str(record["hook"]["name"]).rsplit("/", 1)[-1]


def install(account: Account, project: Path) -> None:
    done = account.sbx("install", "--agent", "copilot", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    launcher = account.home / ".local/share/sandboxrun/hook"  # install's, in the user's data folder
    assert f"{launcher} exec --agent copilot" in (project / HOOKS / "hooks.json").read_text()


def uninstall(account: Account, project: Path) -> None:
    done = account.sbx("uninstall", "--agent", "copilot", "--workspace", str(project))
    assert done.returncode == 0, done.stderr


def run_installed(
    account: Account, agents_bin: Path, project: Path, model: fake_chat.FakeChat, netns: Netns
) -> list[dict[str, Any]]:
    """`install`, one run (the model's record cleared first), `uninstall` whatever the run
    did: the audit trail's exec records of that run."""
    install(account, project)
    seen = len(account.audit())
    model.requests.clear()
    try:
        copilot(account, agents_bin, project, model, netns)
    finally:
        uninstall(account, project)
    return records(account, seen)


def after_the_call(model: fake_chat.FakeChat) -> str:
    """Everything the model was sent after its shell call (the messages past the one
    with `tool_calls`, of every later request), as JSON text."""
    sent = []
    for body in model.completions():
        messages = body.get("messages") or []
        called = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("tool_calls")]
        if called:
            sent.append(json.dumps(messages[called[0] + 1 :], ensure_ascii=False))
    return "\n".join(sent)


def ours(text: str, account: Account) -> list[str]:
    """The lines of `text` that are sandboxrun's own: its name, or its venv's path."""
    venv = str(Path(account.python).parent.parent)
    return [line for line in re.split(r"\n|\\n", text) if "sandboxrun" in line or venv in line]


def test_before_install_the_guard_blocks_and_the_marker_lands_on_the_host(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_chat.FakeChat, netns: Netns,
) -> None:  # fmt: skip
    project, token, marker = guarded
    copilot(account, agents_bin, project, model, netns)
    told = blocked_with(model, project, token)
    assert told == f"{DENIED}GUARD-{token}: rm -r is not allowed here", told
    assert marker.exists(), "the marker hook did not run on the host"
    assert account.audit() == []


def test_installed_cold_and_warm_contain_the_hooks_and_uninstall_restores_every_byte(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_chat.FakeChat, netns: Netns, request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    """Installed, the guard named `"$COPILOT_PROJECT_DIR"/...` still blocks (the
    variable is the project inside), the marker named `"$COPILOT_HOOK_DIR"/...` runs in
    the sandbox (its file never reaches the host), and the audit trail names both, with
    the event install wrote (`--event`) and the guard's JSON deny as a block (the trail's
    word for a deny)."""
    project, token, marker = guarded
    account.config('serve = "off"\n')
    before = snapshot([project / ".github"])
    install(account, project)
    assert snapshot([project / ".github"]) != before

    seen = len(account.audit())
    copilot(account, agents_bin, project, model, netns)  # cold
    told = blocked_with(model, project, token)
    assert told == f"{DENIED}GUARD-{token}: rm -r is not allowed here", told
    assert not ours(after_the_call(model), account), after_the_call(model)
    assert not marker.exists(), "the installed marker hook wrote on the host"
    cold = records(account, seen)
    assert len(cold) == 2 and all(r["warm"] is False for r in cold), cold
    assert all(r["event"] == "preToolUse" and r["status"] == "completed" for r in cold), cold
    guard = [r for r in cold if name(r) == "guard.sh"]  # a deny is a block in the trail
    assert len(guard) == 1 and guard[0]["decision"] == "block", cold
    assert f"GUARD-{token}" in guard[0]["reason"], guard

    request.getfixturevalue("serve")  # warm: a server of the account's
    seen = len(account.audit())
    model.requests.clear()
    copilot(account, agents_bin, project, model, netns)
    blocked_with(model, project, token)
    assert not marker.exists()
    warm = records(account, seen)
    assert len(warm) == 2 and all(r["warm"] is True for r in warm), warm
    assert [r["decision"] for r in warm if name(r) == "guard.sh"] == ["block"], warm

    uninstall(account, project)
    assert snapshot([project / ".github"]) == before


def test_a_pascal_case_guards_claude_shaped_deny_blocks_before_and_after_install(
    account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> None:
    """`PreToolUse` (the PascalCase spelling): the hook reads Claude's payload and may
    deny in `hookSpecificOutput`, which Copilot reads. Installed, exec --untrusted once
    dropped that deny whole (not a field it knew) and the call went through."""
    token = uuid.uuid4().hex[:10]
    entry = {"type": "command", "command": f"./{HOOKS}/guard.sh", "matcher": "Bash"}
    project = make_project(account, {
        f"{HOOKS}/guard.sh": SPECIFIC_GUARD % {"token": token},
        f"{HOOKS}/hooks.json": json.dumps({"version": 1, "hooks": {"PreToolUse": [entry]}}),
    })  # fmt: skip
    account.config('serve = "off"\n')
    copilot(account, agents_bin, project, model, netns)
    told = blocked_with(model, project, token)
    assert told == f"{DENIED}GUARD-{token}: rm -r is not allowed here", told
    audited = run_installed(account, agents_bin, project, model, netns)
    assert blocked_with(model, project, token) == told
    assert [(r["event"], r["decision"]) for r in audited] == [("PreToolUse", "block")], audited


def test_after_a_deny_the_next_hook_never_runs_unsandboxed_or_installed(
    account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> None:
    """Copilot runs preToolUse hooks one after another and stops at the first deny
    (§18): the marker after the guard never runs, neither on the host nor installed
    (the audit trail has the guard only)."""
    token, marker = uuid.uuid4().hex[:10], Path(f"/tmp/marker-{uuid.uuid4().hex}")
    project = make_project(account, {
        f"{HOOKS}/guard.sh": GUARD % {"token": token},
        f"{HOOKS}/marker.sh": MARKER % {"marker": marker},
        f"{HOOKS}/hooks.json": hooks((f"./{HOOKS}/guard.sh", None), (f"./{HOOKS}/marker.sh", None)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    try:
        copilot(account, agents_bin, project, model, netns)
        blocked_with(model, project, token)
        assert not marker.exists(), "the hook after the deny ran on the host"
        audited = run_installed(account, agents_bin, project, model, netns)
        blocked_with(model, project, token)
        assert [(name(r), r["decision"]) for r in audited] == [("guard.sh", "block")], audited
        assert not marker.exists()
    finally:
        marker.unlink(missing_ok=True)


@pytest.mark.parametrize("case", ["timeout", "missing-interpreter"])
def test_installed_failing_hooks(
    case: str, account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> None:
    """A hook past its timeout (Copilot lets the tool call through: a timeout is
    fail-open), and one whose interpreter the host has and the sandbox lacks (a sandbox
    failure, named in the audit trail), are answered with Copilot's wrapper failure:
    exit 0, no decision (not `--fail-closed`), so Copilot's own permission flow (here
    `--allow-all-tools`) decides and the task goes on, as it does unsandboxed. Nothing
    of sandboxrun's reaches the model."""
    interp = account.home / ".local" / "bin" / "sbx-interp"
    interp.parent.mkdir(parents=True, exist_ok=True)
    interp.write_text('#!/bin/bash\nexec bash "$@"\n')
    interp.chmod(0o755)
    account.own(account.home / ".local")
    hook, timeout = (SLOW, 10) if case == "timeout" else (MISSING, None)
    project = make_project(account, {
        f"{HOOKS}/hook.sh": hook,
        f"{HOOKS}/hooks.json": hooks((f'"$COPILOT_PROJECT_DIR"/{HOOKS}/hook.sh', timeout)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    start = time.monotonic()
    audited = run_installed(account, agents_bin, project, model, netns)
    assert not (project / "victim").exists(), f"the task did not go on: {model.tool_results()}"
    read = after_the_call(model)
    assert read, "the model was sent nothing after its call"
    assert not ours(read, account), f"sandboxrun's own words reached the model: {read}"
    if case == "timeout":
        assert [r["status"] for r in audited] == ["timed out"], audited
        assert "timed out" in audited[0]["reason"], audited
        assert time.monotonic() - start < 55, "sandboxrun did not end the hook at its deadline"
    else:
        assert [r["status"] for r in audited] == ["error"], audited
        assert "sbx-interp" in audited[0]["reason"], audited


def test_installed_under_fail_closed_a_hook_past_its_timeout_denies(
    account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> None:
    """`fail_closed`: sandboxrun ends the slow hook before Copilot's own `timeoutSec`
    (install's `--timeout`, `below_deadline`) and answers exit 2, a deny. Copilot's own
    timeout lets the call through, so the answer must be in first: with a 2 s margin it
    was not on a loaded machine (the wrapper answered after 10.1 to 10.8 s for a 10 s
    entry), and the fail-closed deny was lost."""
    project = make_project(account, {
        f"{HOOKS}/hook.sh": SLOW,
        f"{HOOKS}/hooks.json": hooks((f'"$COPILOT_PROJECT_DIR"/{HOOKS}/hook.sh', 10)),
    })  # fmt: skip
    account.config('serve = "off"\nfail_closed = true\n')
    try:
        audited = run_installed(account, agents_bin, project, model, netns)
    finally:
        account.config('serve = "off"\n')
    assert (project / "victim").exists(), f"the call went through: {model.tool_results()}"
    assert model.tool_results() == [f"{DENIED}hook exited with code 2"], model.tool_results()
    assert [(r["status"], r["decision"]) for r in audited] == [("timed out", "block")], audited


def test_a_hook_that_fails_everywhere_denies_every_tool_call_installed_too(
    account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> None:
    """Copilot's own rule: a preToolUse hook that exits non-zero (here 127: its script
    is not there) denies the tool call, `hook errored`. Installed, the hook fails the same
    way inside: its exit code is its own, and Copilot still denies."""
    project = make_project(account, {
        f"{HOOKS}/hooks.json": hooks((f'"$COPILOT_PROJECT_DIR"/{HOOKS}/absent.sh', None)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    errored = 'Denied by preToolUse hook from ".github/hooks/hooks.json" (hook errored)'
    copilot(account, agents_bin, project, model, netns)
    assert (project / "victim").exists() and model.tool_results() == [errored]
    audited = run_installed(account, agents_bin, project, model, netns)
    assert (project / "victim").exists() and model.tool_results() == [errored]
    # Read as Copilot reads it: its non-zero exit is a deny (a block in the trail).
    assert [(r["status"], r["exitCode"], r["decision"]) for r in audited] == [
        ("completed", 127, "block")], audited  # fmt: skip
    assert "absent.sh: No such file or directory" in audited[0]["reason"], audited


def probed(model: fake_chat.FakeChat) -> dict[str, str]:
    """The variables the probe hook named, as the model read them."""
    found: dict[str, str] = {}
    for text in model.tool_results():
        for part in text.removeprefix(DENIED).split(";"):
            name, _, value = part.strip().partition("=")
            if name.startswith("PROBE "):
                found[name.removeprefix("PROBE ")] = value
    return found


@pytest.fixture
def variables(
    account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> tuple[Path, dict[str, str], dict[str, str]]:
    """(project, the variables a hook sees from Copilot on the host, and from sandboxrun
    inside the sandbox after `install --workspace`)."""
    project = make_project(account, {
        f"{HOOKS}/probe.sh": PROBE,
        f"{HOOKS}/hooks.json": hooks((f'"$COPILOT_PROJECT_DIR"/{HOOKS}/probe.sh', None)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    copilot(account, agents_bin, project, model, netns)
    host = probed(model)
    run_installed(account, agents_bin, project, model, netns)
    return project, host, probed(model)


def test_the_variables_copilot_sets_for_hooks_and_those_inside_the_sandbox(
    variables: tuple[Path, dict[str, str], dict[str, str]],
) -> None:
    """What Copilot CLI sets for a hook (§18), recorded with a probe before install:
    `COPILOT_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`) the project, `COPILOT_HOOK_DIR` the
    folder of the hook's file, the cwd the project. Inside, the same values (the project
    is mounted at its own path); `COPILOT_CLI=1` is not set there."""
    project, host, inside = variables
    assert set(host) == {*VARIABLES, "cwd"}, host
    hook_dir = str(project / HOOKS)
    for name, value in [("COPILOT_PROJECT_DIR", str(project)), ("COPILOT_HOOK_DIR", hook_dir),
                        ("CLAUDE_PROJECT_DIR", str(project)), ("cwd", str(project))]:  # fmt: skip
        assert host[name] == value, host
        assert inside[name] == value, inside
    assert host["COPILOT_CLI"] == "1", host
    assert inside["COPILOT_CLI"] == "<unset>", inside  # (docs/agents/copilot.md)


def test_under_review_required_the_approved_guard_blocks_installed(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_chat.FakeChat, netns: Netns,
) -> None:  # fmt: skip
    """`review = "required"`: the repository's hooks, approved with `review --approve`,
    run installed as approved (a guard held unreviewed would be no decision: Copilot's
    own flow would let the call through)."""
    project, token, marker = guarded
    account.config('serve = "off"\nreview = "required"\n')
    try:
        install(account, project)
        approved = account.sbx("review", "--agent", "copilot", "--workspace", str(project),
                               "--approve")  # fmt: skip
        assert approved.returncode == 0, approved.stderr
        seen = len(account.audit())
        try:
            copilot(account, agents_bin, project, model, netns)
        finally:
            uninstall(account, project)
        audited = account.audit()[seen:]
        blocked_with(model, project, token)
        assert not marker.exists(), "the installed marker hook wrote on the host"
        assert [r.get("decision") for r in audited if r.get("entry") == "review"] == [], audited
        assert [(name(r), r["decision"]) for r in records(account, seen)] == [
            ("marker.sh", "none"), ("guard.sh", "block")], audited  # fmt: skip
    finally:
        account.config('serve = "off"\n')


def test_observation(
    account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> None:
    """What Copilot CLI hands a hook, as `tests/agents/observed/copilot.json` records it
    (observe.py; `scripts/agents-drift` runs it against the newest version): the
    camelCase `.github/hooks/*.json` file, the one Copilot's users write."""

    def configure(probe: observe.Probe) -> Path:
        return make_project(account, {f"{HOOKS}/hooks.json": hooks_file(probe.hooks())})

    observe.observe(
        "copilot", "@github/copilot", account=account, agents_bin=agents_bin,
        events=EVENTS, timed="preToolUse", given=environment(account, model),
        configure=configure, run=lambda project: copilot(account, agents_bin, project, model, netns),
    )  # fmt: skip
