"""Codex (`@openai/codex`, the version in package-lock.json), its own CLI headless (`codex
exec`, a `model_providers` entry with `wire_api = "responses"`) against the fake Responses
API of `fake_responses.py`, before and after `sandboxrun install`, cold and warm, with
failing hooks, uninstalled, and managed.

Codex runs a project's hooks only in a project the user trusted (`[projects."<dir>"]
trust_level = "trusted"`) and each non-managed hook only once the user reviewed it in
`/hooks`, which stores the hook's hash in `~/.codex/config.toml`
(`[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash`). The tests trust the
hooks as a user would, by writing that store as `/hooks` writes it (`trust`; the hash is
codex-rs `hooks/src/engine/discovery.rs` `command_hook_hash`: sha256 of the compact,
key-sorted JSON of the hook's normalized entry), never with
`--dangerously-bypass-hook-trust`; one test shows an untrusted hook refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from . import fake_responses, fakemodel, observe
from .conftest import Account, Netns, command_hooks, make_account, make_project, snapshot, watched

REQUIREMENTS = Path("/etc/codex/requirements.toml")
MODEL = "gpt-fake"

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
# Codex has no project-dir variable: a hook finds its repository with git.
ROOT = '"$(git rev-parse --show-toplevel)"'


def hooks_json(*hooks: tuple[str, int | None]) -> str:
    return json.dumps(command_hooks({"PreToolUse": hooks}, "Bash"))


# -- Codex's trust store, as `/hooks` writes it ----------------------------------------

# Events whose matcher Codex ignores (`matcher_pattern_for_event`): hashed without one.
NO_MATCHER = {"UserPromptSubmit", "Stop"}


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_hash(event: str, matcher: str | None, handler: Mapping[str, Any]) -> str:
    """Codex's `command_hook_hash`: the normalized entry (timeout filled, `async` false
    by default, `commandWindows` dropped, unset fields left out) as compact key-sorted
    JSON, sha256."""
    normalized: dict[str, Any] = {
        "type": "command", "command": handler["command"],
        "timeout": max(int(handler.get("timeout") or 600), 1),
        "async": bool(handler.get("async", False)),
    }  # fmt: skip
    for key in ("statusMessage", "additionalContextLimit"):
        if handler.get(key) is not None:
            normalized[key] = handler[key]
    identity: dict[str, Any] = {"event_name": _snake(event), "hooks": [normalized]}
    if matcher is not None and event not in NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def review(files: list[Path]) -> dict[str, str]:
    """What `/hooks` lists for these hooks.json files: key -> the hash it trusts."""
    found: dict[str, str] = {}
    for path in files:
        if not path.is_file():
            continue
        for event, groups in json.loads(path.read_text()).get("hooks", {}).items():
            for g, group in enumerate(groups):
                for h, handler in enumerate(group.get("hooks") or []):
                    if handler.get("type") == "command":
                        key = f"{path}:{_snake(event)}:{g}:{h}"
                        found[key] = hook_hash(event, group.get("matcher"), handler)
    return found


def configure(
    account: Account, model: fake_responses.FakeResponses, project: Path,
    trusted: Mapping[str, str] | None = None,
) -> None:  # fmt: skip
    """The account's `~/.codex/config.toml`: the fake model as a provider of its own, the
    project trusted, and `trusted` (`/hooks`' store, key -> hash)."""
    lines = [
        f'model = "{MODEL}"', 'model_provider = "fake"', "check_for_update_on_startup = false",
        # off by their own switches: the curated plugins' sync (`git ls-remote` of
        # github.com/openai/plugins, api.github.com), apps, analytics, feedback, otel
        "[features]", "plugins = false", "remote_plugin = false", "apps = false",
        "[analytics]", "enabled = false", "[feedback]", "enabled = false",
        "[otel]", 'exporter = "none"',
        "[model_providers.fake]", 'name = "fake"', f'base_url = "{model.base_url}"',
        'wire_api = "responses"', 'env_key = "FAKE_OPENAI_KEY"',
        f'[projects."{project}"]', 'trust_level = "trusted"',
    ]  # fmt: skip
    for key, value in (trusted or {}).items():
        lines += [f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(value)}"]
    folder = account.home / ".codex"
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_text("\n".join(lines) + "\n")
    account.own(folder)


def trust(account: Account, model: fake_responses.FakeResponses, project: Path) -> dict[str, str]:
    """Trust every hook of the project's and the account's hooks.json, as a user does once
    in `/hooks`; the store written."""
    trusted = review([project / ".codex" / "hooks.json", account.home / ".codex" / "hooks.json"])
    configure(account, model, project, trusted)
    return trusted


# -- fixtures --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    yield from make_account("codex")


@pytest.fixture
def model(netns: Netns) -> Iterator[fake_responses.FakeResponses]:
    """The fake Responses API on loopback inside the namespace."""
    yield from watched(netns, fake_responses.start)


@pytest.fixture
def guarded(account: Account) -> Iterator[tuple[Path, str, Path]]:
    """A project whose guard blocks `rm -r` naming a token, and whose marker hook writes
    a file outside the workspace: (project, token, marker path)."""
    token, marker = uuid.uuid4().hex[:10], Path(f"/tmp/marker-{uuid.uuid4().hex}")
    project = make_project(account, {
        ".codex/hooks/guard.sh": GUARD % {"token": token},
        ".codex/hooks/marker.sh": MARKER % {"marker": marker},
        ".codex/hooks.json": hooks_json((f"{ROOT}/.codex/hooks/guard.sh", None),
                                        (f"{ROOT}/.codex/hooks/marker.sh", None)),
    })  # fmt: skip
    yield project, token, marker
    marker.unlink(missing_ok=True)


def environment(account: Account) -> dict[str, str]:
    """What the CLI is started with beyond the account's own variables."""
    return {"FAKE_OPENAI_KEY": "sk-fake", "CODEX_DISABLE_TELEMETRY": "1",
            "PATH": f"{account.home}/.local/bin:/usr/local/bin:/usr/bin:/bin"}  # fmt: skip


def codex(
    account: Account, agents_bin: Path, project: Path, model: fake_responses.FakeResponses,
    netns: Netns,
) -> str:  # fmt: skip
    """One headless run of the real CLI in `project`, as the account, in the namespace:
    its last message. Codex's own sandbox is off (`danger-full-access`): the hooks, not
    its sandbox, are under test."""
    argv = [str(agents_bin / "codex"), "exec", "--sandbox", "danger-full-access", "--color",
            "never", "Remove the victim folder."]  # fmt: skip
    env = environment(account)
    done = subprocess.run(account.as_me(argv, netns.name, env), cwd=project, capture_output=True,
                          text=True, timeout=300, check=False,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 0, f"codex: {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "--dangerously-bypass-hook-trust" not in argv
    assert done.stdout.strip() == fakemodel.FINAL_TEXT, done.stdout + done.stderr
    return done.stderr


def blocked_with(model: fake_responses.FakeResponses, project: Path, token: str) -> str:
    """The guard blocked: the victim is there, and the model read the guard's reason."""
    assert (project / "victim" / "keep.txt").exists(), (
        f"the guard did not block: {model.tool_outputs()}"
    )
    told = [text for text in model.tool_outputs() if f"GUARD-{token}" in text]
    assert told, f"the model was not told the guard's reason: {model.tool_outputs()}"
    return told[0]


@pytest.fixture
def serve(account: Account) -> Iterator[None]:
    """A `sandboxrun serve` of the account's, started by the test (setpriv execs it, so
    the pid is the server's); the account's config uses it and starts none."""
    socket = account.home / ".cache" / "sandboxrun" / "serve.sock"
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
    """The audit trail's hook records written after record `since`."""
    return [r for r in account.audit()[since:] if r.get("hook")]


def install(account: Account, project: Path, *more: str) -> None:
    done = account.sbx("install", "--agent", "codex", "--workspace", str(project), *more,
                       cwd=project)  # fmt: skip
    assert done.returncode == 0, done.stderr


def uninstall(account: Account, project: Path) -> None:
    done = account.sbx("uninstall", "--agent", "codex", "--workspace", str(project), cwd=project)
    assert done.returncode == 0, done.stderr


# -- the cases -------------------------------------------------------------------------


def test_before_install_the_guard_blocks_and_the_marker_lands_on_the_host(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_responses.FakeResponses, netns: Netns,
) -> None:  # fmt: skip
    project, token, marker = guarded
    assert len(trust(account, model, project)) == 2
    codex(account, agents_bin, project, model, netns)
    blocked_with(model, project, token)
    assert marker.exists(), "the marker hook did not run on the host"
    assert account.audit() == []
    # what Codex hands a hook (issue 30, §18): its shell tool as "Bash", the command
    body = model.responses()[0]
    assert "exec_command" in [t.get("name") for t in body.get("tools") or []]


def test_an_untrusted_hook_is_refused_and_install_asks_for_trust_again(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_responses.FakeResponses, netns: Netns,
) -> None:  # fmt: skip
    """Codex runs no hook the user has not trusted: the project's hooks trusted before
    `install` are refused once install rewrote their commands (their hashes changed),
    until the user trusts them again in `/hooks`."""
    project, token, marker = guarded
    account.config('serve = "off"\n')
    before = trust(account, model, project)
    install(account, project)
    try:
        after = review([project / ".codex" / "hooks.json"])
        assert set(after) == {k for k in before if k.startswith(str(project))}
        assert not set(after.values()) & set(before.values()), "install left a hash unchanged"
        seen = len(account.audit())
        codex(account, agents_bin, project, model, netns)
    finally:
        uninstall(account, project)
    assert not (project / "victim").exists(), "an untrusted hook ran (the guard blocked)"
    assert not any(f"GUARD-{token}" in text for text in model.tool_outputs())
    assert not marker.exists()
    assert records(account, seen) == [], "Codex ran an untrusted installed hook"


def test_installed_cold_and_warm_contain_the_hooks_and_uninstall_restores_every_byte(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_responses.FakeResponses, netns: Netns, request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    project, token, marker = guarded
    account.config('serve = "off"\n')
    configure(account, model, project)
    watched = [project / ".codex", account.home / ".codex" / "hooks.json"]
    before = snapshot(watched)
    install(account, project)
    assert snapshot(watched) != before
    launcher = account.home / ".local/share/sandboxrun/hook"  # install's, in the user's data folder
    assert f"{launcher} exec --agent codex" in (project / ".codex/hooks.json").read_text()
    trust(account, model, project)  # as the user does in /hooks

    seen = len(account.audit())
    codex(account, agents_bin, project, model, netns)  # cold
    told = blocked_with(model, project, token)
    # Codex hands the model the reason and the tool's command, not the hook's: no venv path
    venv = str(Path(account.python).parent.parent)
    assert venv not in told and "sandboxrun" not in told, told
    assert not marker.exists(), "the installed marker hook wrote on the host"
    cold = records(account, seen)
    assert len(cold) == 2 and all(r["warm"] is False for r in cold), cold
    assert any(f"GUARD-{token}" in json.dumps(r) for r in cold), cold
    assert {r.get("event") for r in cold} == {"PreToolUse"}, cold

    request.getfixturevalue("serve")  # warm: a server of the account's
    seen = len(account.audit())
    model.requests.clear()
    codex(account, agents_bin, project, model, netns)
    blocked_with(model, project, token)
    assert not marker.exists()
    warm = records(account, seen)
    assert len(warm) == 2 and all(r["warm"] is True for r in warm), warm
    assert any(f"GUARD-{token}" in json.dumps(r) for r in warm), warm

    uninstall(account, project)
    assert snapshot(watched) == before


@pytest.mark.parametrize(
    ("case", "where"),
    [
        ("timeout", ".codex/hooks"),
        ("missing-interpreter", ".codex/hooks"),  # Codex's cwd is the session's: the root
        ("missing-interpreter", f"{ROOT}/.codex/hooks"),  # the preflight reads ROOT
    ],
    ids=["timeout", "missing-interpreter", "missing-interpreter-git-root"],
)
def test_installed_failing_hooks(
    case: str, where: str, account: Account, agents_bin: Path,
    model: fake_responses.FakeResponses, netns: Netns,
) -> None:  # fmt: skip
    """A hook past its timeout, and one whose interpreter the host has and the sandbox
    lacks (a sandbox failure, named in the audit trail), are answered with Codex's wrapper
    failure (exit 1, not `--fail-closed`), which Codex's rule lets through: the task goes
    on."""
    interp = account.home / ".local" / "bin" / "sbx-interp"
    interp.parent.mkdir(parents=True, exist_ok=True)
    interp.write_text('#!/bin/bash\nexec bash "$@"\n')
    interp.chmod(0o755)
    account.own(account.home / ".local")
    # 15 s, not less: install leaves the wrapper 2 s below Codex's deadline, and on a loaded
    # machine a cold sandbox's start and end took longer; Codex then killed the wrapper
    # before it wrote its audit record (seen once at 6 s)
    hook, timeout = (SLOW, 15) if case == "timeout" else (MISSING, None)
    project = make_project(account, {
        ".codex/hooks/hook.sh": hook,
        ".codex/hooks.json": hooks_json((f"{where}/hook.sh", timeout)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    configure(account, model, project)
    install(account, project)
    trust(account, model, project)
    seen = len(account.audit())
    start = time.monotonic()
    try:
        codex(account, agents_bin, project, model, netns)
    finally:
        uninstall(account, project)
    audited = records(account, seen)
    assert not (project / "victim").exists(), f"the task did not go on past the {case} hook"
    if case == "timeout":
        assert [r["status"] for r in audited] == ["timed out"], audited
        assert time.monotonic() - start < 55, "the hook was not ended at its deadline"
    else:
        assert [r["status"] for r in audited] == ["error"], audited
        assert "`sbx-interp`" in audited[0]["reason"] and "not in image" in audited[0]["reason"]


@pytest.fixture
def requirements_file() -> Iterator[None]:
    """Whatever requirements.toml this machine has is restored afterwards."""
    old = REQUIREMENTS.read_bytes() if REQUIREMENTS.exists() else None
    existed_dir = REQUIREMENTS.parent.exists()
    yield
    if old is None:
        REQUIREMENTS.unlink(missing_ok=True)
        folder = REQUIREMENTS.parent
        if not existed_dir and folder.exists() and not any(folder.iterdir()):
            folder.rmdir()
    else:
        REQUIREMENTS.write_bytes(old)


def test_managed_forwarders_run_the_projects_hooks_sandboxed(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_responses.FakeResponses, netns: Netns, requirements_file: None,
) -> None:  # fmt: skip
    """`install --managed` (root): Codex runs only the managed forwarders (managed hooks
    need no trust), which `run --answer agent` the project's hooks in the sandbox, the
    project's hooks trusted or not (cold here: `serve = "off"`; through a server they
    are answered warm as any `run`, issue 31)."""
    project, token, marker = guarded
    account.config('serve = "off"\n')
    configure(account, model, project)  # no hook trusted in /hooks
    before = REQUIREMENTS.read_bytes() if REQUIREMENTS.exists() else None
    done = subprocess.run([*account.sandboxrun, "install", "--agent", "codex", "--managed"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "allow_managed_hooks_only = true" in REQUIREMENTS.read_text()
    seen = len(account.audit())
    try:
        codex(account, agents_bin, project, model, netns)
    finally:
        done = subprocess.run([*account.sandboxrun, "uninstall", "--agent", "codex",
                               "--managed"], capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (REQUIREMENTS.read_bytes() if REQUIREMENTS.exists() else None) == before
    blocked_with(model, project, token)
    assert not marker.exists(), "a project hook ran on the host under managed requirements"
    audited = records(account, seen)
    assert len(audited) == 2 and all(r["warm"] is False for r in audited), audited


def test_observation(
    account: Account, agents_bin: Path, model: fake_responses.FakeResponses, netns: Netns
) -> None:
    """What Codex hands a hook, as `tests/agents/observed/codex.json` records it
    (observe.py; `scripts/agents-drift` runs it against the newest version); the probe's
    hooks trusted as `/hooks` trusts them."""

    def configure(probe: observe.Probe) -> Path:
        project = make_project(
            account, {".codex/hooks.json": json.dumps(command_hooks(probe.hooks()))}
        )
        trust(account, model, project)
        return project

    observe.observe(
        "codex", "@openai/codex", account=account, agents_bin=agents_bin,
        events=("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"),
        timed="PreToolUse", given=environment(account), configure=configure,
        run=lambda project: codex(account, agents_bin, project, model, netns),
    )  # fmt: skip
