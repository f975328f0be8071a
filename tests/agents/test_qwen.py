"""Qwen Code (`@qwen-code/qwen-code`, the version in package-lock.json), its own CLI headless
(`qwen -p --yolo --output-format json`) against the fake Chat Completions API of
`fake_chat.py`, before and after `sandboxrun install`, cold and warm, with failing hooks,
and uninstalled; what it hands a hook against `observed/qwen.json` (`observe.py`).

Offline by its own switches: OpenAI-compatible auth (`security.auth.selectedType`
"openai", a dummy `OPENAI_API_KEY`), the endpoint from `OPENAI_BASE_URL`, the model from
`OPENAI_MODEL`, and telemetry, usage statistics and update checks off in
`~/.qwen/settings.json`. Folder trust is off by default (`security.folderTrust.enabled`):
Qwen runs the project's hooks without a trust step. The account's environment holds no
proxy variable (Qwen sends even loopback requests through `HTTPS_PROXY`: `conftest`).
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

from . import fake_chat, observe
from .conftest import (
    Account,
    Netns,
    command_hooks,
    make_account,
    make_project,
    snapshot,
    watched,
)
from .fakebase import FINAL_TEXT
from .test_claude import (  # noqa: F401 - serve: a fixture
    GUARD,
    MARKER,
    MISSING,
    SLOW,
    blocked_with,  # (any fake model's `tool_results`)
    records,
    serve,
)

MODEL = "gpt-fake"
SHELL_TOOL = "run_shell_command"
# Qwen Code migrates every settings file it reads to its current version and writes the
# version in (`"$version": 4`, SETTINGS_VERSION of 0.24.4): the tests' files are written
# as Qwen leaves them, so that what uninstall restores is what the user had.
VERSION = {"$version": 4}
# What Qwen Code sets for a command hook besides the environment it inherits (0.24.4,
# hookRunner.ts and getShellContextEnvVars), each echoed by the probe.
VARIABLES = ("QWEN_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR",
             "QWEN_CODE_SESSION_ID", "QWEN_CODE_PROMPT_ID", "QWEN_CODE_AGENT_ID",
             "QWEN_CODE_MODEL", "QWEN_CODE_MODEL_IDENTITY", "QWEN_CODE_PROJECT_DIR",
             "QWEN_CODE_CLI")  # fmt: skip
# Blocks with every variable on stderr (Qwen hands it to the model as the tool's result),
# and the session fields of its input, to compare.
PROBE = (
    "#!/bin/bash\ninput=$(cat)\n"
    + "".join(f'echo "PROBE {name}=${{{name}-<unset>}}" >&2\n' for name in VARIABLES)
    + 'echo "PROBE cwd=$PWD" >&2\n'
    + 'echo "PROBE input=$(printf %s "$input" | jq -c "{session_id, prompt_id, cwd}")" >&2\n'
    + "exit 2\n"
)


def settings(*hooks: tuple[str, int | None]) -> str:
    """A project's `.qwen/settings.json`: `hooks` (command, timeout in seconds) on
    PreToolUse of the shell tool."""
    return json.dumps({**command_hooks({"PreToolUse": hooks}, SHELL_TOOL), **VERSION}, indent=2)


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    for made in make_account("qwen"):
        user = made.home / ".qwen"
        user.mkdir()
        (user / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "openai"}},
            "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False}, **VERSION,
        }, indent=2))  # fmt: skip
        made.own(user)
        yield made


@pytest.fixture
def model(netns: Netns) -> Iterator[fake_chat.FakeChat]:
    """The fake Chat Completions API."""
    yield from watched(netns, fake_chat.start)


@pytest.fixture
def guarded(account: Account) -> Iterator[tuple[Path, str, Path]]:
    """A project whose guard blocks `rm -r` naming a token, and whose marker hook writes
    a file outside the workspace: (project, token, marker path)."""
    token, marker = uuid.uuid4().hex[:10], Path(f"/tmp/marker-{uuid.uuid4().hex}")
    project = make_project(account, {
        ".qwen/hooks/guard.sh": GUARD % {"token": token},
        ".qwen/hooks/marker.sh": MARKER % {"marker": marker},
        ".qwen/settings.json": settings(('"$QWEN_PROJECT_DIR"/.qwen/hooks/guard.sh', None),
                                        ('"$QWEN_PROJECT_DIR"/.qwen/hooks/marker.sh', None)),
    })  # fmt: skip
    yield project, token, marker
    marker.unlink(missing_ok=True)


def environment(account: Account, model: fake_chat.FakeChat) -> dict[str, str]:
    """What the CLI is started with beyond the account's own variables."""
    return {
        "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-fake", "OPENAI_MODEL": MODEL,
        "PATH": f"{account.home}/.local/bin:/usr/local/bin:/usr/bin:/bin",
    }  # fmt: skip


def qwen(
    account: Account, agents_bin: Path, project: Path, model: fake_chat.FakeChat, netns: Netns
) -> list[dict[str, Any]]:
    """One headless run of the real CLI in `project`, as the account, in the namespace:
    its JSON messages."""
    env = environment(account, model)
    argv = [str(agents_bin / "qwen"), "-p", "Remove the victim folder.", "--yolo",
            "--output-format", "json"]  # fmt: skip
    done = subprocess.run(account.as_me(argv, netns.name, env), cwd=project, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, f"qwen: {done.returncode}\n{done.stdout}\n{done.stderr}"
    messages: list[dict[str, Any]] = json.loads(done.stdout)
    result = [m for m in messages if m.get("type") == "result"]
    assert result and result[-1].get("result") == FINAL_TEXT, messages
    return messages


def after_the_call(model: fake_chat.FakeChat) -> str:
    """Everything the model was sent after its shell call (the messages past the
    assistant's `tool_calls`, of every later request), as JSON text."""
    sent = []
    for body in model.completions():
        messages = body.get("messages") or []
        called = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("tool_calls")]
        if called:
            sent.append(json.dumps(messages[called[0] + 1 :], ensure_ascii=False))
    return "\n".join(sent)


def test_before_install_the_guard_blocks_and_the_marker_lands_on_the_host(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_chat.FakeChat, netns: Netns,
) -> None:  # fmt: skip
    project, token, marker = guarded
    qwen(account, agents_bin, project, model, netns)
    told = blocked_with(model, project, token)
    assert told == f"GUARD-{token}: rm -r is not allowed here", told  # the stderr, as is
    assert marker.exists(), "the marker hook did not run on the host"
    assert account.audit() == []


def test_installed_cold_and_warm_contain_the_hooks_and_uninstall_restores_every_byte(
    account: Account, agents_bin: Path, guarded: tuple[Path, str, Path],
    model: fake_chat.FakeChat, netns: Netns, request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    project, token, marker = guarded
    account.config('serve = "off"\n')
    watched = [project / ".qwen", account.home / ".qwen" / "settings.json"]
    before = snapshot(watched)
    done = account.sbx("install", "--agent", "qwen", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    assert snapshot(watched) != before
    launcher = account.home / ".local/share/sandboxrun/hook"  # install's, in the user's data folder
    assert f"{launcher} exec --agent qwen" in (project / ".qwen/settings.json").read_text()

    seen = len(account.audit())
    qwen(account, agents_bin, project, model, netns)  # cold
    told = blocked_with(model, project, token)
    assert told == f"GUARD-{token}: rm -r is not allowed here", told  # the guard's words only
    assert not marker.exists(), "the installed marker hook wrote on the host"
    venv = str(Path(account.python).parent.parent)
    read = after_the_call(model)
    assert venv not in read and "sandboxrun" not in read, read
    cold = records(account, seen)
    assert len(cold) == 2 and all(r["warm"] is False for r in cold), cold
    assert all(r["event"] == "PreToolUse" for r in cold), cold
    guard = [r for r in cold if f"GUARD-{token}" in json.dumps(r)]
    assert len(guard) == 1 and guard[0]["decision"] in ("deny", "block"), cold

    request.getfixturevalue("serve")  # warm: a server of the account's
    seen = len(account.audit())
    model.requests.clear()
    qwen(account, agents_bin, project, model, netns)
    told = blocked_with(model, project, token)
    assert told == f"GUARD-{token}: rm -r is not allowed here", told
    read = after_the_call(model)
    assert venv not in read and "sandboxrun" not in read, read
    assert not marker.exists()
    warm = records(account, seen)
    assert len(warm) == 2 and all(r["warm"] is True for r in warm), warm
    assert all(r["event"] == "PreToolUse" for r in warm), warm
    guard = [r for r in warm if f"GUARD-{token}" in json.dumps(r)]
    assert len(guard) == 1 and guard[0]["decision"] in ("deny", "block"), warm

    done = account.sbx("uninstall", "--agent", "qwen", "--workspace", str(project))
    assert done.returncode == 0, done.stderr
    assert snapshot(watched) == before


@pytest.mark.parametrize("sandboxed", [False, True], ids=["host", "installed"])
@pytest.mark.parametrize("case", ["timeout", "missing-interpreter"])
def test_failing_hooks(
    case: str, sandboxed: bool, account: Account, agents_bin: Path, model: fake_chat.FakeChat,
    netns: Netns,
) -> None:  # fmt: skip
    """A hook past its timeout (6: seconds; Qwen ends it itself on the host) and one whose
    interpreter the host has and the sandbox lacks: on the host Qwen reads both as a
    non-blocking error and the task goes on. Installed, the same: sandboxrun ends the
    slow hook before Qwen would (the wrapper's `--timeout` is shorter), and the missing
    interpreter is a sandbox failure (exit 1, named in the audit trail); the model reads
    no line of sandboxrun's."""
    interp = account.home / ".local" / "bin" / "sbx-interp"
    interp.parent.mkdir(parents=True, exist_ok=True)
    interp.write_text('#!/bin/bash\nexec bash "$@"\n')
    interp.chmod(0o755)
    account.own(account.home / ".local")
    hook, timeout = (SLOW, 6) if case == "timeout" else (MISSING, None)
    project = make_project(account, {
        ".qwen/hooks/hook.sh": hook,
        ".qwen/settings.json": settings(('"$QWEN_PROJECT_DIR"/.qwen/hooks/hook.sh', timeout)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    if sandboxed:
        done = account.sbx("install", "--agent", "qwen", "--workspace", str(project))
        assert done.returncode == 0, done.stderr
    seen = len(account.audit())
    start = time.monotonic()
    try:
        qwen(account, agents_bin, project, model, netns)
    finally:
        if sandboxed:
            account.sbx("uninstall", "--agent", "qwen", "--workspace", str(project))
    audited = records(account, seen)
    assert not (project / "victim").exists(), f"the task did not go on: {model.tool_results()}"
    read = after_the_call(model)
    assert read, "the model was sent nothing after its call"
    ours = [line for line in re.split(r"\n|\\n", read) if "sandboxrun" in line]
    assert not ours, f"sandboxrun's own words reached the model: {ours}"
    if not sandboxed:
        assert audited == []
    elif case == "timeout":
        assert [r["status"] for r in audited] == ["timed out"], audited
    else:
        assert [r["status"] for r in audited] == ["error"], audited
        assert "`sbx-interp`" in audited[0]["reason"], audited
    if case == "timeout":  # ended at its deadline (Qwen's on the host, sandboxrun's inside)
        assert time.monotonic() - start < 55, "the slow hook was not ended at its deadline"


def probed(model: fake_chat.FakeChat) -> dict[str, str]:
    """The variables the probe hook echoed, as the model read them."""
    found: dict[str, str] = {}
    for text in model.tool_results():
        for line in text.splitlines():
            name, _, value = line.partition("=")
            if name.startswith("PROBE "):
                found[name.removeprefix("PROBE ")] = value
    return found


@pytest.fixture
def variables(
    account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> tuple[Path, dict[str, str], dict[str, str]]:
    """(project, the variables a hook sees from Qwen on the host, and from sandboxrun
    inside the sandbox after `install --workspace`)."""
    project = make_project(account, {
        ".qwen/hooks/probe.sh": PROBE,
        ".qwen/settings.json": settings(('"$QWEN_PROJECT_DIR"/.qwen/hooks/probe.sh', None)),
    })  # fmt: skip
    account.config('serve = "off"\n')
    qwen(account, agents_bin, project, model, netns)
    host = probed(model)
    assert account.sbx("install", "--agent", "qwen", "--workspace", str(project)).returncode == 0
    model.requests.clear()
    try:
        qwen(account, agents_bin, project, model, netns)
    finally:
        account.sbx("uninstall", "--agent", "qwen", "--workspace", str(project))
    return project, host, probed(model)


def test_the_variables_qwen_sets_for_hooks_and_those_inside_the_sandbox(
    variables: tuple[Path, dict[str, str], dict[str, str]], account: Account, agents_bin: Path
) -> None:
    """What Qwen Code sets for a hook, recorded with a probe before install. Inside, the
    project variables name the mounted project (its path is the same inside) and the cwd
    is the project; the session's variables are the event's (`session_id`, `prompt_id`,
    no `agent_id` outside a subagent: empty) and the model's Qwen's own. Two name folders
    of the host the sandbox withholds and are not set inside: `QWEN_CODE_PROJECT_DIR`
    (Qwen's folder for the project in the user's home) and `QWEN_CODE_CLI` (Qwen's own
    entry script)."""
    project, host, inside = variables
    assert set(host) == {*VARIABLES, "cwd", "input"}, host
    given = json.loads(host["input"])
    for name in ("QWEN_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "cwd"):
        assert host[name] == str(project) == given["cwd"], host
        assert inside[name] == str(project), inside
    assert re.fullmatch(r"[0-9a-f-]{36}", host["QWEN_CODE_SESSION_ID"]), host
    assert host["QWEN_CODE_SESSION_ID"] == given["session_id"], host
    assert host["QWEN_CODE_PROMPT_ID"] == given["prompt_id"], host
    assert host["QWEN_CODE_AGENT_ID"] == "", host
    assert host["QWEN_CODE_MODEL"] == MODEL, host
    assert host["QWEN_CODE_MODEL_IDENTITY"].startswith(f"{MODEL}@"), host
    assert host["QWEN_CODE_PROJECT_DIR"].startswith(f"{account.home}/.qwen/projects/"), host
    assert Path(host["QWEN_CODE_CLI"]).is_relative_to(agents_bin.parent), host

    inside_given = json.loads(inside["input"])
    for name, field in (("QWEN_CODE_SESSION_ID", "session_id"),
                        ("QWEN_CODE_PROMPT_ID", "prompt_id")):  # fmt: skip
        assert inside[name] == inside_given[field] != "<unset>", inside
    assert inside["QWEN_CODE_AGENT_ID"] == "", inside
    assert inside["QWEN_CODE_MODEL"] == MODEL, inside
    assert inside["QWEN_CODE_MODEL_IDENTITY"].startswith(f"{MODEL}@"), inside
    assert inside["QWEN_CODE_PROJECT_DIR"] == inside["QWEN_CODE_CLI"] == "<unset>", inside


def test_observation(
    account: Account, agents_bin: Path, model: fake_chat.FakeChat, netns: Netns
) -> None:
    """What Qwen Code hands a hook, as `tests/agents/observed/qwen.json` records it
    (observe.py; `scripts/agents-drift` runs it against the newest version)."""

    def configure(probe: observe.Probe) -> Path:
        config = {**command_hooks(probe.hooks()), **VERSION}
        return make_project(account, {".qwen/settings.json": json.dumps(config, indent=2)})

    observe.observe(
        "qwen", "@qwen-code/qwen-code", account=account, agents_bin=agents_bin,
        # SessionEnd: 0.24.4 fires it in its interactive UI and over ACP, not in `qwen -p`,
        # so the record has none; a version that starts to shows as drift
        events=("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
                "SessionEnd"),
        timed="PreToolUse", given=environment(account, model), configure=configure,
        run=lambda project: qwen(account, agents_bin, project, model, netns),
    )  # fmt: skip
