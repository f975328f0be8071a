"""The Cline CLI (`cline`, the version in package-lock.json), its own CLI headless (`cline
--json -c WS "..."`) against the fake Chat Completions API (`fake_chat.py`, Cline's
`openai-compatible` provider, its shell tool `run_commands`), before and after `sandboxrun
install --agent cline`, cold and warm, with failing hooks, uninstalled, and through the
hub daemon that runs the hooks of later runs.

Offline by its own switches: the provider set with `cline auth -p openai-compatible -b
URL`, `CLINE_NO_AUTO_UPDATE=1`, telemetry and auto-update off in `global-settings.json`,
and `E2E_TEST=true` (the one switch that stops its feature-flag lookup). The runs keep
their sessions in-process (`CLINE_SESSION_BACKEND_MODE=local`), except the hub's test:
by default the first run starts a daemon (`cline --cline-hub-daemon`) on a fixed
loopback port, later runs hand it their sessions, and it starts their hooks, with the
environment of the run that started it.

What the CLI does with a guard's `{"cancel": true}` (docs/agents/cline.md): it stops the
whole run (`finishReason: aborted`): the tool is not run, the model is never told, and the
reason is in the CLI's log (`~/.cline/data/logs/cline.log`, `ControlledStopError`),
nowhere in its JSON output. So "blocked" here is that.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from . import fake_chat, observe
from .conftest import Account, Netns, make_account, make_project, snapshot, watched
from .fakebase import FINAL_TEXT
from .test_claude import MARKER, records, serve  # noqa: F401 - a fixture

PROMPT = "Remove the victim folder."
# A guard as the CLI reads one: a cancel, its reason in errorMessage (any exit code).
GUARD = """#!/bin/bash
input=$(cat)
case "$input" in
  *'rm -r'*) echo '{"cancel": true, "errorMessage": "GUARD-%(token)s: rm -r is not allowed here"}' ;;
  *) echo '{}' ;;
esac
"""
SLOW = """#!/bin/bash
cat >/dev/null
sleep 60
echo '{"cancel": true, "errorMessage": "too late"}'
"""
# The SDK starts a `.ts` hook with `bun run`: the host has no bun, nor has the sandbox.
MISSING = 'console.log(JSON.stringify({cancel: true, errorMessage: "bun ran"}));\n'
# Tells the model (a hook's `context` reaches its next request) what the hook saw: whose
# hook it is, its working directory, the event's workspace roots and tool call id, which
# of the test's projects it can see, and every variable that names a run of the test.
PROBE = """#!/usr/bin/env python3
import json, os, sys
event = json.load(sys.stdin)
seen = {
    "of": %(of)r,
    "uid": os.getuid(),
    "cwd": os.getcwd(),
    "roots": event.get("workspaceRoots"),
    "id": (event.get("tool_call") or {}).get("id"),
    "projects": [p for p in %(projects)r if os.path.isdir(p)],
    "marks": sorted(v for k, v in os.environ.items() if k == "SBX_RUN_MARK"),
}
print(json.dumps({"context": "PROBE " + json.dumps(seen)}))
"""


@pytest.fixture(scope="module")
def chat(netns: Netns) -> Iterator[fake_chat.FakeChat]:
    """The fake Chat Completions API, one for the module: the account's provider names
    its port (`cline auth`)."""
    yield from watched(netns, fake_chat.start)


def cline_account(
    agent: str, chat: fake_chat.FakeChat, agents_bin: Path, netns: Netns
) -> Iterator[Account]:
    """An account whose Cline CLI uses the fake model, with telemetry and updates off."""
    for made in make_account(agent):
        settings = made.home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True)
        (settings / "global-settings.json").write_text(
            json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}, indent=2)
        )
        made.own(made.home / ".cline")
        argv = [str(agents_bin / "cline"), "auth", "-p", "openai-compatible", "-b",
                chat.base_url, "-k", "sk-fake", "-m", "gpt-fake"]  # fmt: skip
        done = subprocess.run(made.as_me(argv, netns.name, ENV), cwd=made.home,
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0, f"cline auth: {done.stdout}\n{done.stderr}"
        yield made
        end_hub_daemons(made)  # (the hub tests end their own: this is for an interrupted one)


@pytest.fixture(scope="module")
def account(chat: fake_chat.FakeChat, agents_bin: Path, netns: Netns) -> Iterator[Account]:
    yield from cline_account("cline", chat, agents_bin, netns)


ENV = {"CLINE_NO_AUTO_UPDATE": "1", "E2E_TEST": "true"}


def environment(*, hub: bool = False, mark: str = "") -> dict[str, str]:
    """What a run of the CLI is started with beyond the account's own (`cline`)."""
    env = {**ENV, "PATH": "/usr/local/bin:/usr/bin:/bin"}
    if not hub:
        env["CLINE_SESSION_BACKEND_MODE"] = "local"
    if mark:
        env["SBX_RUN_MARK"] = mark
    return env


def cline(
    account: Account, agents_bin: Path, project: Path, netns: Netns, *, hub: bool = False,
    mark: str = "", prompt: str = PROMPT,
) -> dict[str, Any]:  # fmt: skip
    """One headless run of the real CLI in `project`, as the account, in the namespace
    (in-process, or through the hub daemon when `hub`; `mark` in `SBX_RUN_MARK`): its
    `run_result` line."""
    argv = [str(agents_bin / "cline"), "--json", "-c", str(project), prompt]
    env = environment(hub=hub, mark=mark)
    done = subprocess.run(account.as_me(argv, netns.name, env), cwd=project, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, f"cline: {done.returncode}\n{done.stdout}\n{done.stderr}"
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    results = [line for line in lines if line.get("type") == "run_result"]
    assert len(results) == 1, done.stdout
    result: dict[str, Any] = results[0]
    result["stdout"] = done.stdout
    return result


def stopped_by(account: Account) -> list[str]:
    """The reasons of the runs a hook stopped, from the CLI's log (its JSON output has
    none)."""
    log = account.home / ".cline" / "data" / "logs" / "cline.log"
    reasons = []
    for line in log.read_text().splitlines() if log.exists() else []:
        entry = json.loads(line) if line.startswith("{") else {}
        if entry.get("errorName") == "ControlledStopError":
            reasons.append(str(entry.get("errorMessage")))
    return reasons


def blocked_with(
    account: Account, chat: fake_chat.FakeChat, project: Path, result: dict[str, Any], token: str
) -> None:
    """The guard's cancel stopped the run: the victim is there, the run was aborted, the
    model was never asked again, and the CLI logged exactly the guard's reason."""
    assert (project / "victim" / "keep.txt").exists(), f"the guard did not block: {result}"
    assert result["finishReason"] == "aborted", result
    assert len(chat.completions()) == 1 and chat.tool_results() == [], chat.completions()
    assert f"GUARD-{token}" not in result["stdout"], result["stdout"]
    assert stopped_by(account)[-1] == f"GUARD-{token}: rm -r is not allowed here"


def went_on(chat: fake_chat.FakeChat, project: Path, result: dict[str, Any]) -> None:
    """The task went on: the tool ran, the model read its result and answered."""
    assert not (project / "victim").exists(), f"the tool did not run: {result}"
    assert result["finishReason"] == "completed" and result["text"] == FINAL_TEXT, result
    assert chat.tool_results(), chat.completions()


@pytest.fixture
def guarded(account: Account, chat: fake_chat.FakeChat) -> Iterator[tuple[Path, str, Path]]:
    """A project whose guard (in `.cline/hooks`) cancels `rm -r` naming a token, and whose
    marker hook (in `.clinerules/hooks`, the older folder) writes a file outside the
    workspace: (project, token, marker path)."""
    token, marker = uuid.uuid4().hex[:10], Path(f"/tmp/marker-{uuid.uuid4().hex}")
    project = make_project(account, {
        ".cline/hooks/PreToolUse": GUARD % {"token": token},
        ".clinerules/hooks/PreToolUse": MARKER % {"marker": marker},
    })  # fmt: skip
    chat.requests.clear()
    yield project, token, marker
    marker.unlink(missing_ok=True)


def test_before_install_the_guard_blocks_and_the_marker_lands_on_the_host(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    chat: fake_chat.FakeChat, netns: Netns,
) -> None:  # fmt: skip
    project, token, marker = guarded
    result = cline(account, agents_bin, project, netns)
    blocked_with(account, chat, project, result, token)
    assert marker.exists(), "the marker hook did not run on the host"
    assert account.audit() == []


def test_a_cancel_stops_the_whole_run_and_the_model_is_never_told(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    chat: fake_chat.FakeChat, netns: Netns,
) -> None:  # fmt: skip
    """Documented behaviour of the CLI (docs/agents/cline.md): a PreToolUse hook's
    `{"cancel": true}` does not block one call and tell the model: it stops the run
    (`ControlledStopError`, exit 0, `finishReason: aborted`, an `agent_error` hook
    event), the tool never starts, the model is not asked again, and the reason is only
    in the CLI's log."""
    project, token, _ = guarded
    result = cline(account, agents_bin, project, netns)
    lines = [json.loads(line) for line in result["stdout"].splitlines()]
    events = [line.get("hookEventName") for line in lines if line.get("type") == "hook_event"]
    assert events == ["agent_start", "tool_call", "agent_error"], events
    done = [line["event"] for line in lines if line.get("type") == "agent_event"
            and line["event"].get("type") == "done"]  # fmt: skip
    assert [d["reason"] for d in done] == ["aborted"] and result["text"] == "", done
    assert not any(line.get("event", {}).get("contentType") == "tool" for line in lines), lines
    assert len(chat.completions()) == 1, "the model was asked again after the cancel"
    assert stopped_by(account)[-1] == f"GUARD-{token}: rm -r is not allowed here"


def cline_records(account: Account, since: int) -> list[dict[str, Any]]:
    """The audit trail's records of hook runs after record `since` (not the review's)."""
    return [r for r in records(account, since) if r.get("entry") == "run"]


def test_installed_cold_and_warm_contain_the_hooks_and_uninstall_restores_every_byte(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    chat: fake_chat.FakeChat, netns: Netns, request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    project, token, marker = guarded
    account.config('serve = "off"\n')
    watched = [project / ".cline", project / ".clinerules", project / ".sandboxrun",
               account.home / ".cline" / "hooks", account.home / "Documents"]  # fmt: skip
    before = snapshot(watched)
    done = account.sbx("install", "--agent", "cline", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    assert snapshot(watched) != before
    for folder in (".cline/hooks", ".clinerules/hooks"):
        shim = (project / folder / "PreToolUse").read_text()
        assert "run PreToolUse --agent cline --answer agent" in shim, shim

    seen = len(account.audit())
    result = cline(account, agents_bin, project, netns)  # cold
    blocked_with(account, chat, project, result, token)
    assert not marker.exists(), "the installed marker hook wrote on the host"
    check_records(cline_records(account, seen), token, served=False)
    # the first run in a checkout pins the hooks of both folders quietly: none is "new"
    # (each shim's run searches only its own moved folder)
    assert [r for r in account.audit()[seen:] if r.get("entry") == "review"] == []

    # warm: a server of the account's answers the shims' `run --answer agent` (issue 31,
    # item 4: `serve` declined it before), from containers started ahead of time.
    request.getfixturevalue("serve")
    seen = len(account.audit())
    chat.requests.clear()
    result = cline(account, agents_bin, project, netns)
    blocked_with(account, chat, project, result, token)
    assert not marker.exists()
    check_records(cline_records(account, seen), token, served=True)

    done = account.sbx("uninstall", "--agent", "cline", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    assert snapshot(watched) == before


def check_records(audited: list[dict[str, Any]], token: str, served: bool) -> None:
    """One record per hook, each for the CLI's event and its tool call, `served` by the
    account's server (then warm, as Claude Code's through it) or run cold; the guard's
    a block with its reason, the marker's no opinion."""
    assert len(audited) == 2 and all(r["served"] is served for r in audited), audited
    assert {r["toolUseId"] for r in audited} == {"call_fake0001"}, audited
    assert {r["event"] for r in audited} == {"PreToolUse"}, audited
    assert all(r["warm"] is served and r["status"] == "completed" for r in audited), audited
    guard = [r for r in audited if r["decision"] == "block"]
    assert len(guard) == 1 and guard[0]["reason"] == f"GUARD-{token}: rm -r is not allowed here"
    others = [r for r in audited if r is not guard[0]]
    assert others[0]["decision"] == "none", others


def after_the_call(chat: fake_chat.FakeChat) -> str:
    """Everything the model was sent after its shell call (the messages past the
    assistant's `tool_calls`, of every later request), as JSON text."""
    sent = []
    for body in chat.completions():
        messages = body.get("messages") or []
        called = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("tool_calls")]
        if called:
            sent.append(json.dumps(messages[called[0] + 1 :], ensure_ascii=False))
    return "\n".join(sent)


@pytest.mark.parametrize("case", ["timeout", "missing-interpreter"])
def test_installed_failing_hooks(
    case: str, account: Account, agents_bin: Path, chat: fake_chat.FakeChat, netns: Netns
) -> None:
    """A hook past its timeout (sandboxrun's `timeout`: the CLI would wait 120 s), and a
    `.ts` hook the SDK starts with `bun`, which the image lacks: an error of the hook in
    the audit trail, not a cancel (not `--fail-closed`): the task goes on, and nothing of
    sandboxrun's reaches the model."""
    name, hook = ("PreToolUse", SLOW) if case == "timeout" else ("PreToolUse.ts", MISSING)
    project = make_project(account, {f".cline/hooks/{name}": hook})
    account.config('serve = "off"\ntimeout = 6\n')
    assert account.sbx("install", "--agent", "cline", "--workspace", str(project)).returncode == 0
    chat.requests.clear()
    seen = len(account.audit())
    start = time.monotonic()
    try:
        result = cline(account, agents_bin, project, netns)
    finally:
        account.sbx("uninstall", "--agent", "cline", "--workspace", str(project))
    went_on(chat, project, result)
    read = after_the_call(chat)
    assert read, "the model was sent nothing after its call"
    assert "sandboxrun" not in read, f"sandboxrun's own words reached the model: {read}"
    audited = cline_records(account, seen)
    if case == "timeout":
        assert [r["status"] for r in audited] == ["timed out"], audited
        assert time.monotonic() - start < 55, "sandboxrun did not end the hook at its deadline"
    else:
        assert [r["status"] for r in audited] == ["error"], audited
        assert "`bun`" in audited[0]["reason"] and "not in image" in audited[0]["reason"]


def test_global_forwarders_run_each_hook_once(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    chat: fake_chat.FakeChat, netns: Netns,
) -> None:  # fmt: skip
    project, token, marker = guarded
    account.config('serve = "off"\n')
    installs = [["--global"], ["--workspace", str(project)]]
    for args in installs:
        assert account.sbx("install", "--agent", "cline", *args).returncode == 0
    seen = len(account.audit())
    try:
        result = cline(account, agents_bin, project, netns)
    finally:
        for args in reversed(installs):
            assert account.sbx("uninstall", "--agent", "cline", *args).returncode == 0
    blocked_with(account, chat, project, result, token)
    assert not marker.exists(), "the installed marker hook wrote on the host"
    folders = sorted(
        Path(r["hook"]["name"]).parent.parent.name for r in cline_records(account, seen)
    )
    assert folders == [".cline", ".clinerules"], folders


# -- the hub daemon -------------------------------------------------------------------


def processes(account: Account, matches: Callable[[list[bytes]], bool]) -> list[int]:
    """The pids of the account's processes whose command line `matches` (only its own:
    by uid, then command line)."""
    uid = os.stat(account.home).st_uid
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        if matches(argv):
            found.append(int(entry))
    return found


def hub_daemons(account: Account) -> list[int]:
    """The pids of the account's hub daemons."""
    return processes(account, lambda argv: b"--cline-hub-daemon" in argv)


def end_hub_daemons(account: Account) -> None:
    """End the account's hub daemons by their pids (SIGTERM, then SIGKILL)."""
    for pid in hub_daemons(account):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while hub_daemons(account) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in hub_daemons(account):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def hub(account: Account) -> Iterator[None]:
    """No hub daemon of the account before the test (its first run starts one), and
    none after it."""
    assert hub_daemons(account) == [], "a hub daemon of the account is running already"
    yield
    end_hub_daemons(account)


def texts(body: dict[str, Any]) -> Iterator[str]:
    """The text of every message of a request."""
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from (str(p.get("text", "")) for p in content if isinstance(p, dict))


def probed(chat: fake_chat.FakeChat, prompt: str) -> list[dict[str, Any]]:
    """What the probes of the run with `prompt` told the model (each once)."""
    found: list[dict[str, Any]] = []
    for body in chat.completions():
        said = list(texts(body))
        if prompt not in said:
            continue
        for text in said:
            for match in re.finditer("PROBE ", text):
                one = json.JSONDecoder().raw_decode(text, match.end())[0]
                if one not in found:
                    found.append(one)
    return found


def test_the_hub_daemon_runs_each_runs_hooks_with_its_own_workspace_and_nothing_else(
    account: Account, agents_bin: Path, chat: fake_chat.FakeChat, netns: Netns,
    hub: None,
) -> None:  # fmt: skip
    """Two runs in two projects through one hub daemon (the first run starts it), before
    `install`, after `install --workspace`, and with `install --global`'s forwarders.
    Before: the daemon starts every later run's hooks with the first run's environment
    (Cline's, recorded here: run B's hook reads run A's variable). Installed: each
    sandboxed hook is its own project's, sees its own event's workspace only (not the
    daemon's folder, which is the first project, nor the other project) and no variable
    of any run, with `install --global`'s forwarders too (their `--hooks-dir` is relative:
    read against the event's root, the second run runs the second project's hooks)."""
    first, second = make_project(account, {}), make_project(account, {})
    projects = [str(first), str(second)]
    for project in (first, second):
        hooks = project / ".cline" / "hooks"
        hooks.mkdir(parents=True)
        (hooks / "PreToolUse").write_text(PROBE % {"of": str(project), "projects": projects})
        account.own(project)
    account.config('serve = "off"\n')

    def both_runs() -> tuple[list[dict[str, Any]], list[int]]:
        """A run in each project, the first one first, through the hub: what each run's
        probes told the model (the first's, then the second's), and the daemons' pids."""
        for project in (first, second):
            if not (project / "victim").exists():
                (project / "victim").mkdir()
                account.own(project)
        chat.requests.clear()
        seen, marks = [], []
        for project in (first, second):
            marks.append(uuid.uuid4().hex[:12])
            prompt = f"{PROMPT} (run {marks[-1]})"
            result = cline(account, agents_bin, project, netns, hub=True, mark=marks[-1],
                           prompt=prompt)  # fmt: skip
            went_on(chat, project, result)
            probes = probed(chat, prompt)
            assert len(probes) == 1, probes
            seen.append({**probes[0], "mark": marks[-1]})
        return seen, hub_daemons(account)

    a, b = (seen := both_runs())[0]
    daemons = seen[1]
    assert len(daemons) == 1, f"not one hub daemon: {daemons}"
    daemon = Path(f"/proc/{daemons[0]}/cmdline").read_bytes().split(b"\0")
    assert daemon[daemon.index(b"--cwd") + 1] == str(first).encode(), daemon
    for probe, project in ((a, first), (b, second)):
        assert probe["of"] == probe["cwd"] == str(project), probe
        assert probe["roots"] == [str(project)] and probe["projects"] == projects, probe
    assert [p["id"] for p in (a, b)] == ["call_fake0001", "call_fake0003"], (a, b)
    assert a["marks"] == [a["mark"]] and b["marks"] == [a["mark"]], b  # the first run's

    def contained(installs: list[list[str]]) -> list[dict[str, Any]]:
        """Installed so, each run's sandboxed hook is its own project's and sees only
        it: the audit trail's records of the runs."""
        for args in installs:
            done = account.sbx("install", "--agent", "cline", *args)
            assert done.returncode == 0, done.stderr
        start = len(account.audit())
        try:
            seen, now = both_runs()
        finally:
            for args in reversed(installs):
                done = account.sbx("uninstall", "--agent", "cline", *args)
                assert done.returncode == 0, done.stderr
        assert now == daemons, "the runs did not go through the one daemon"
        for probe, project in zip(seen, (first, second), strict=True):
            assert probe["of"] == probe["cwd"] == str(project), probe
            assert probe["roots"] == [str(project)], probe
            assert probe["projects"] == [str(project)], probe  # not the other run's
            assert probe["marks"] == [], probe  # no variable of any run
        audited = cline_records(account, start)
        for record in audited:  # each of its own project's hook and run
            mine = record["hook"]["name"].startswith(f"{first}/")
            assert mine or record["hook"]["name"].startswith(f"{second}/"), audited
            assert record["toolUseId"] == ("call_fake0001" if mine else "call_fake0003"), audited
        return audited

    audited = contained([["--workspace", str(first)], ["--workspace", str(second)]])
    assert [r["toolUseId"] for r in audited] == ["call_fake0001", "call_fake0003"], audited
    # (each moved hook runs twice here: test_global_forwarders_run_each_hook_once)
    assert contained([["--global"], ["--workspace", str(first)], ["--workspace", str(second)]])


def test_another_accounts_run_keeps_its_hooks_out_of_the_hub_daemon(
    account: Account, agents_bin: Path, chat: fake_chat.FakeChat, netns: Netns,
    hub: None,
) -> None:  # fmt: skip
    """The daemon's port is one for the machine (here: the namespace), but a run of
    another account does not hand its session to the first account's daemon: it starts
    its hooks itself, as itself (the CLI logs `compatible_hub_unavailable`, "Falling back
    to local runtime host"), and starts no daemon of its own."""
    for other in cline_account("cline-b", chat, agents_bin, netns):
        projects = {}
        for owner in (account, other):
            project = make_project(owner, {})
            hooks = project / ".cline" / "hooks"
            hooks.mkdir(parents=True)
            (hooks / "PreToolUse").write_text(PROBE % {"of": str(project), "projects": []})
            owner.own(project)
            projects[owner.name] = project
        chat.requests.clear()
        cline(account, agents_bin, projects[account.name], netns, hub=True)
        daemons = hub_daemons(account)
        assert len(daemons) == 1, daemons
        prompt = f"{PROMPT} (another account)"
        result = cline(other, agents_bin, projects[other.name], netns, hub=True, prompt=prompt)
        went_on(chat, projects[other.name], result)
        [probe] = probed(chat, prompt)
        assert probe["of"] == str(projects[other.name]), probe
        assert probe["uid"] == os.stat(other.home).st_uid != os.stat(account.home).st_uid, probe
        assert hub_daemons(account) == daemons and hub_daemons(other) == [], "a daemon changed"
        log = (other.home / ".cline" / "data" / "logs" / "cline.log").read_text()
        assert "compatible_hub_unavailable" in log, log[-2000:]


# -- what the CLI hands a hook ---------------------------------------------------------

# Every hook file name the SDK or the extension runs (docs/agents/cline.md), each observed,
# so that one the CLI starts (or stops) running shows as drift.
EVENTS = ("TaskStart", "TaskResume", "UserPromptSubmit", "PreToolUse", "PostToolUse",
          "PreCompact", "Notification", "TaskCancel", "TaskError", "TaskComplete",
          "SessionShutdown")  # fmt: skip


def test_observation(
    account: Account, agents_bin: Path, chat: fake_chat.FakeChat, netns: Netns
) -> None:
    """What the Cline CLI (in-process) hands a hook, as `tests/agents/observed/cline.json`
    records it (observe.py; `scripts/agents-drift` runs it against the newest version):
    a file per event in `.cline/hooks`, one line, `exec` of the probe. Its hooks take no
    timeout of their own (one for all: `timed=None`)."""

    probes: list[bytes] = []

    def configure(probe: observe.Probe) -> Path:
        probes.append(str(probe.folder).encode())
        files = {f".cline/hooks/{event}": f"exec {hooks[0][0]}\n"
                 for event, hooks in probe.hooks().items()}  # fmt: skip
        return make_project(account, files)

    def run(project: Path) -> None:
        chat.requests.clear()
        went_on(chat, project, cline(account, agents_bin, project, netns))
        # The CLI starts the hooks of its other events detached and may exit before they
        # are done (TaskComplete): wait for them (the hook file's bash, then the probe it
        # execs), or the record would depend on that race.
        ours = (str(project / ".cline" / "hooks").encode(), *probes)
        deadline = time.monotonic() + 60
        while processes(account, lambda argv: any(a.startswith(ours) for a in argv)):
            assert time.monotonic() < deadline, "a hook of the run is still running"
            time.sleep(0.2)

    observe.observe(
        "cline", "cline", account=account, agents_bin=agents_bin, events=EVENTS, timed=None,
        given=environment(), configure=configure, run=run,
    )  # fmt: skip
