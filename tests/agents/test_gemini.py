"""Gemini CLI (`@google/gemini-cli`, the version in package-lock.json), its own CLI headless
(`gemini -p --approval-mode yolo`) against the fake Gemini API (`fake_gemini.py`), before
and after `sandboxrun install`, cold and warm, with failing hooks, and uninstalled.

Offline by its own switches: API-key auth with a dummy key (`GEMINI_API_KEY`,
`security.auth.selectedType`), the endpoint from `GOOGLE_GEMINI_BASE_URL`, telemetry,
usage statistics and update checks off in `~/.gemini/settings.json`, the model named
(`-m`: no routing classifier call), and the project trusted as a user trusts it
(`~/.gemini/trustedFolders.json`; Gemini runs no hook in a folder it does not trust).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import fake_gemini, observe
from .conftest import Account, Netns, command_hooks, make_account, make_project, snapshot, watched
from .fakemodel import FINAL_TEXT
from .test_claude import GUARD, MARKER, MISSING, SLOW, records, serve  # noqa: F401 - a fixture

MODEL = "gemini-2.5-flash"
# The variables Gemini CLI sets for a hook (agent-hooks-2026.md §18), each echoed by the probe.
VARIABLES = ("GEMINI_PROJECT_DIR", "GEMINI_CWD", "CLAUDE_PROJECT_DIR", "GEMINI_SESSION_ID",
             "GEMINI_PLANS_DIR")  # fmt: skip
# Blocks with every variable on stderr: the model reads them, from the host or the sandbox.
# And the event's `session_id` (a bash match: no tool the host may lack), `event_session`.
PROBE = (
    "#!/bin/bash\ninput=$(cat)\n"
    + "".join(f'echo "PROBE {name}=${{{name}-<unset>}}" >&2\n' for name in VARIABLES)
    + '[[ $input =~ \\"session_id\\":\\"([^\\"]*)\\" ]] && sid=${BASH_REMATCH[1]}\n'
    + 'echo "PROBE event_session=${sid-<unset>}" >&2\n'
    + 'echo "PROBE cwd=$PWD" >&2\nexit 2\n'
)


def settings(*hooks: tuple[str, int | None]) -> str:
    """A project's `.gemini/settings.json`: `hooks` (command, timeout in ms) on BeforeTool
    of the shell tool."""
    return json.dumps(command_hooks({"BeforeTool": hooks}, fake_gemini.SHELL_TOOL), indent=2)


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    for made in make_account("gemini"):
        user = made.home / ".gemini"
        user.mkdir()
        (user / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }, indent=2))  # fmt: skip
        made.own(user)
        yield made


@pytest.fixture
def model(netns: Netns) -> Iterator[fake_gemini.FakeGemini]:
    """The fake Gemini API."""
    yield from watched(netns, fake_gemini.start)


def gemini_project(account: Account, files: dict[str, str]) -> Path:
    """A project the account's Gemini trusts (as "Trust folder" records it)."""
    project = make_project(account, files)
    trusted = account.home / ".gemini" / "trustedFolders.json"
    folders = json.loads(trusted.read_text()) if trusted.exists() else {}
    trusted.write_text(json.dumps({**folders, str(project): "TRUST_FOLDER"}, indent=2))
    account.own(trusted)
    return project


@pytest.fixture
def guarded(account: Account) -> Iterator[tuple[Path, str, Path]]:
    """A project whose guard blocks `rm -r` naming a token, and whose marker hook writes
    a file outside the workspace: (project, token, marker path)."""
    token, marker = uuid.uuid4().hex[:10], Path(f"/tmp/marker-{uuid.uuid4().hex}")
    project = gemini_project(account, {
        ".gemini/hooks/guard.sh": GUARD % {"token": token},
        ".gemini/hooks/marker.sh": MARKER % {"marker": marker},
        ".gemini/settings.json": settings(("$GEMINI_PROJECT_DIR/.gemini/hooks/guard.sh", None),
                                          ("$GEMINI_PROJECT_DIR/.gemini/hooks/marker.sh", None)),
    })  # fmt: skip
    yield project, token, marker
    marker.unlink(missing_ok=True)


def environment(account: Account, model: fake_gemini.FakeGemini) -> dict[str, str]:
    """What the CLI is started with beyond the account's own variables."""
    return {
        "GOOGLE_GEMINI_BASE_URL": model.base_url, "GEMINI_API_KEY": "fake-gemini-key",
        "PATH": f"{account.home}/.local/bin:/usr/local/bin:/usr/bin:/bin",
    }  # fmt: skip


def gemini(
    account: Account, agents_bin: Path, project: Path, model: fake_gemini.FakeGemini, netns: Netns
) -> dict[str, Any]:
    """One headless run of the real CLI in `project`, as the account, in the namespace:
    its JSON result."""
    argv = [str(agents_bin / "gemini"), "-p", "Remove the victim folder.", "--approval-mode",
            "yolo", "--output-format", "json", "-m", MODEL]  # fmt: skip
    env = environment(account, model)
    done = subprocess.run(account.as_me(argv, netns.name, env), cwd=project, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, f"gemini: {done.returncode}\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    assert result.get("response") == FINAL_TEXT, result
    return result


def blocked_with(model: fake_gemini.FakeGemini, project: Path, token: str) -> str:
    """The guard blocked: the victim is there, and the model read the guard's reason."""
    assert (project / "victim" / "keep.txt").exists(), (
        f"the guard did not block: {model.tool_results()}"
    )
    told = [text for text in model.tool_results() if f"GUARD-{token}" in text]
    assert told, f"the model was not told the guard's reason: {model.tool_results()}"
    return told[0]


def after_the_call(model: fake_gemini.FakeGemini) -> str:
    """Everything the model was sent after its shell call (the conversation's turns
    past the `functionCall`, of every later request), as JSON text."""
    sent = []
    for body in model.generations():
        contents = body.get("contents") or []
        called = [i for i, c in enumerate(contents) if "functionCall" in json.dumps(c)]
        if called:
            sent.append(json.dumps(contents[called[0] + 1 :], ensure_ascii=False))
    return "\n".join(sent)


def test_before_install_the_guard_blocks_and_the_marker_lands_on_the_host(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_gemini.FakeGemini, netns: Netns,
) -> None:  # fmt: skip
    project, token, marker = guarded
    gemini(account, agents_bin, project, model, netns)
    told = blocked_with(model, project, token)
    assert "Tool execution blocked:" in told, told
    assert marker.exists(), "the marker hook did not run on the host"
    assert account.audit() == []


def test_installed_cold_and_warm_contain_the_hooks_and_uninstall_restores_every_byte(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_gemini.FakeGemini, netns: Netns, request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    project, token, marker = guarded
    account.config('serve = "off"\n')
    watched = [project / ".gemini", account.home / ".gemini" / "settings.json"]
    before = snapshot(watched)
    done = account.sbx("install", "--agent", "gemini", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    assert snapshot(watched) != before
    launcher = account.home / ".local/share/sandboxrun/hook"  # install's, in the user's data folder
    assert f"{launcher} exec --agent gemini" in (project / ".gemini/settings.json").read_text()

    seen = len(account.audit())
    gemini(account, agents_bin, project, model, netns)  # cold
    told = blocked_with(model, project, token)
    assert not marker.exists(), "the installed marker hook wrote on the host"
    venv = str(Path(account.python).parent.parent)
    assert venv not in told and "sandboxrun" not in told, told  # the guard's words only
    cold = records(account, seen)
    assert len(cold) == 2 and all(r["warm"] is False for r in cold), cold
    guard = [r for r in cold if f"GUARD-{token}" in json.dumps(r)]
    assert len(guard) == 1 and guard[0]["event"] == "BeforeTool", cold
    assert guard[0]["decision"] in ("deny", "block"), guard

    request.getfixturevalue("serve")  # warm: a server of the account's
    seen = len(account.audit())
    model.requests.clear()
    gemini(account, agents_bin, project, model, netns)
    blocked_with(model, project, token)
    assert not marker.exists()
    warm = records(account, seen)
    assert len(warm) == 2 and all(r["warm"] is True for r in warm), warm
    assert any(f"GUARD-{token}" in json.dumps(r) for r in warm), warm

    done = account.sbx("uninstall", "--agent", "gemini", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    assert snapshot(watched) == before


@pytest.mark.parametrize("case", ["timeout", "missing-interpreter"])
def test_installed_failing_hooks(
    case: str, account: Account, agents_bin: Path, model: fake_gemini.FakeGemini, netns: Netns
) -> None:
    """A hook past its timeout (Gemini does not end it: §18), and one whose interpreter
    the host has and the sandbox lacks (a sandbox failure, named in the audit trail), are
    answered with Gemini's wrapper failure, exit 1, a warning (not `--fail-closed`): the
    task goes on, and nothing of sandboxrun's reaches the model (issue 30: the missing
    interpreter's `sandboxrun:` line once did, as the block reason)."""
    interp = account.home / ".local" / "bin" / "sbx-interp"
    interp.parent.mkdir(parents=True, exist_ok=True)
    interp.write_text('#!/bin/bash\nexec bash "$@"\n')
    interp.chmod(0o755)
    account.own(account.home / ".local")
    hook, timeout = (SLOW, 6000) if case == "timeout" else (MISSING, None)
    project = gemini_project(account, {
        ".gemini/hooks/hook.sh": hook,
        ".gemini/settings.json": settings(("$GEMINI_PROJECT_DIR/.gemini/hooks/hook.sh", timeout)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    assert account.sbx("install", "--agent", "gemini", "--workspace", str(project)).returncode == 0
    seen = len(account.audit())
    start = time.monotonic()
    try:
        gemini(account, agents_bin, project, model, netns)
    finally:
        account.sbx("uninstall", "--agent", "gemini", "--workspace", str(project))
    audited = records(account, seen)
    assert not (project / "victim").exists(), f"the task did not go on: {model.tool_results()}"
    read = after_the_call(model)
    assert read, "the model was sent nothing after its call"
    ours = [line for line in re.split(r"\n|\\n", read) if "sandboxrun" in line]
    assert not ours, f"sandboxrun's own words reached the model: {ours}"
    if case == "timeout":
        assert [r["status"] for r in audited] == ["timed out"], audited
        assert time.monotonic() - start < 55, "sandboxrun did not end the hook at its deadline"
    else:
        assert [r["status"] for r in audited] == ["error"], audited
        # (the reason is the first line Gemini would show: the hook's own, from `env`)
        assert "sbx-interp" in audited[0]["reason"], audited


def probed(model: fake_gemini.FakeGemini) -> dict[str, str]:
    """The variables the probe hook echoed, as the model read them."""
    found: dict[str, str] = {}
    for text in model.tool_results():
        for line in json.loads(text).get("error", "").splitlines():
            name, _, value = line.removeprefix("Tool execution blocked: ").partition("=")
            if name.startswith("PROBE "):
                found[name.removeprefix("PROBE ")] = value
    return found


@pytest.fixture
def variables(
    account: Account, agents_bin: Path, model: fake_gemini.FakeGemini, netns: Netns
) -> tuple[Path, dict[str, str], dict[str, str]]:
    """(project, the variables a hook sees from Gemini on the host, and from sandboxrun
    inside the sandbox after `install --workspace`)."""
    project = gemini_project(account, {
        ".gemini/hooks/probe.sh": PROBE,
        ".gemini/settings.json": settings(("$GEMINI_PROJECT_DIR/.gemini/hooks/probe.sh", None)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    gemini(account, agents_bin, project, model, netns)
    host = probed(model)
    assert account.sbx("install", "--agent", "gemini", "--workspace", str(project)).returncode == 0
    model.requests.clear()
    try:
        gemini(account, agents_bin, project, model, netns)
    finally:
        account.sbx("uninstall", "--agent", "gemini", "--workspace", str(project))
    return project, host, probed(model)


def test_the_variables_gemini_sets_for_hooks_and_those_inside_the_sandbox(
    variables: tuple[Path, dict[str, str], dict[str, str]], account: Account
) -> None:
    """What Gemini CLI sets for a hook (§18), recorded with a probe before install; inside,
    the project variables name the mounted project (its path is the same inside), and the
    cwd is the project. `GEMINI_PLANS_DIR` names a folder of the user's home, which the
    sandbox withholds: it is not set inside (docs/agents/gemini.md)."""
    project, host, inside = variables
    assert set(host) == {*VARIABLES, "event_session", "cwd"}, host
    for name in ("GEMINI_PROJECT_DIR", "GEMINI_CWD", "CLAUDE_PROJECT_DIR", "cwd"):
        assert host[name] == str(project), host
        assert inside[name] == str(project), inside
    assert re.fullmatch(r"[0-9a-f-]{36}", host["GEMINI_SESSION_ID"]), host
    assert host["GEMINI_PLANS_DIR"].startswith(f"{account.home}/.gemini/tmp/"), host
    assert host["GEMINI_PLANS_DIR"].endswith(f"/{host['GEMINI_SESSION_ID']}/plans"), host
    assert inside["GEMINI_PLANS_DIR"] == "<unset>", inside


def test_the_session_variable_reaches_the_sandboxed_hook(
    variables: tuple[Path, dict[str, str], dict[str, str]],
) -> None:
    """Gemini sets GEMINI_SESSION_ID to the event's `session_id`; inside the sandbox it is
    the same (each run is a session of its own: compared within one run)."""
    _, host, inside = variables
    assert host["GEMINI_SESSION_ID"] == host["event_session"] != "<unset>", host
    assert inside["GEMINI_SESSION_ID"] == inside["event_session"] != "<unset>", inside


def test_observation(
    account: Account, agents_bin: Path, model: fake_gemini.FakeGemini, netns: Netns
) -> None:
    """What Gemini CLI hands a hook, as `tests/agents/observed/gemini.json` records it
    (observe.py; `scripts/agents-drift` runs it against the newest version)."""

    def configure(probe: observe.Probe) -> Path:
        config = json.dumps(command_hooks(probe.hooks()), indent=2)
        return gemini_project(account, {".gemini/settings.json": config})

    observe.observe(
        "gemini", "@google/gemini-cli", account=account, agents_bin=agents_bin,
        events=("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"),
        timed="BeforeTool", given=environment(account, model), configure=configure,
        run=lambda project: gemini(account, agents_bin, project, model, netns),
    )  # fmt: skip
