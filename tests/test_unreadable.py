"""Issue 29 item 4: a config file sandboxrun cannot read never turns a policy off in
silence. For every agent of the registry, a broken file at the project's level is named
in `run`'s report (`skipped`) and on stderr, and under --fail-closed the answer blocks in
the agent's own terms, naming the file."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun._dialects.files import DANGLING, read_json, read_regular
from sandboxrun._dialects.registry import DIALECTS
from tests.test_check import engine  # noqa: F401 - a fixture, shared
from tests.test_exec_untrusted import Setup, exec_, setup  # noqa: F401 - a fixture, shared

# A file at the project's level of each agent, and an event its hooks can block.
PROJECT_FILES: dict[str, tuple[str, str]] = {
    "cline": (".clinerules/hooks/PreToolUse", "PreToolUse"),
    "careti": (".agents/hooks/PreToolUse", "PreToolUse"),
    "claude": (".claude/settings.json", "PreToolUse"),
    "qoder": (".qoder/settings.json", "PreToolUse"),
    "qoder-cn": (".qoder/settings.json", "PreToolUse"),
    "factory": (".factory/settings.json", "PreToolUse"),
    "qwen": (".qwen/settings.json", "PreToolUse"),
    "codebuddy": (".codebuddy/settings.json", "PreToolUse"),
    "iflow": (".iflow/settings.json", "PreToolUse"),
    "devin": (".devin/config.json", "PreToolUse"),
    "augment": (".augment/settings.json", "PreToolUse"),
    "trae": (".trae/hooks.json", "PreToolUse"),
    "codex": (".codex/hooks.json", "PreToolUse"),
    "cursor": (".cursor/hooks.json", "beforeShellExecution"),
    "copilot": (".github/hooks/guard.json", "preToolUse"),
    "gemini": (".gemini/settings.json", "BeforeTool"),
    "goose": (".agents/plugins/guard/hooks/hooks.json", "PreToolUse"),
    "crush": ("crush.json", "PreToolUse"),
    "windsurf": (".windsurf/hooks.json", "pre_run_command"),
    "kiro": (".kiro/hooks/guard.kiro.hook", "preToolUse"),
}
# Cline's hooks are executables, not a config file: a dangling link stands for one.
SCRIPT_AGENTS = ("cline", "careti")
BROKEN = {
    "not JSON": b'{"hooks": {',
    "hooks of the wrong type": b'{"hooks": "all"}',
    "top level of the wrong type": b'["hooks"]',
    "a dangling link": None,
}


def test_every_agent_of_the_registry_is_covered() -> None:
    assert set(PROJECT_FILES) == set(DIALECTS)


@pytest.fixture(autouse=True)
def _restore_library_logging() -> Iterator[None]:
    yield
    logger.remove()
    logger.disable("sandboxrun")


@pytest.fixture
def ws(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def break_file(ws: Path, agent: str, how: str) -> Path:
    """The agent's project file, made unreadable `how` (`BROKEN`); for Cline's SDK, which
    runs regular files only (a link is a near-miss it skips too), its hooks folder is the
    dangling link."""
    path = ws / PROJECT_FILES[agent][0]
    if agent == "cline":
        path = path.parent
    path.parent.mkdir(parents=True, exist_ok=True)
    content = BROKEN[how]
    if content is None or agent in SCRIPT_AGENTS:
        path.symlink_to(ws.parent / "nowhere")
    else:
        path.write_bytes(content)
    return path


def run(monkeypatch: pytest.MonkeyPatch, capsys: Any, agent: str, *flags: str) -> Any:
    event = PROJECT_FILES[agent][1]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    assert cli.main(["run", event, "--agent", agent, *flags]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


@pytest.mark.parametrize("how", list(BROKEN))
@pytest.mark.parametrize("agent", list(PROJECT_FILES))
def test_run_names_an_unreadable_file_and_fail_closed_blocks(
    agent: str, how: str, home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    if agent in SCRIPT_AGENTS and BROKEN[how] is not None:
        pytest.skip("Cline's hooks are executables: only a dangling link stands for one")
    path = break_file(ws, agent, how)
    open_doc, err = run(monkeypatch, capsys, agent)
    assert [s["path"] for s in open_doc["skipped"]] == [str(path)], open_doc
    assert open_doc["skipped"][0]["source"] in ("project", "workspace")
    assert str(path) in err and "could not be read" in err
    closed_doc, _ = run(monkeypatch, capsys, agent, "--fail-closed")
    answer = {k: v for k, v in closed_doc.items() if k not in ("hooks", "skipped")}
    assert str(path) in json.dumps(answer), closed_doc  # the block names the file
    assert answer != {k: v for k, v in open_doc.items() if k not in ("hooks", "skipped")}


def test_a_readable_file_is_not_skipped(home: Path, ws: Path, monkeypatch, capsys) -> None:
    """The control: a valid file without hooks is no problem, fail-closed or not."""
    (ws / ".claude").mkdir()
    (ws / ".claude/settings.json").write_text('{"hooks": {}}')
    doc, err = run(monkeypatch, capsys, "claude", "--fail-closed")
    assert "skipped" not in doc and doc["blocked"] is False, doc
    assert "could not be read" not in err


def test_a_wrong_typed_entry_of_the_event_is_named_and_blocks(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """An entry of the wrong type inside a readable file: named, a block under fail-closed;
    one of another event concerns this event's hooks not."""
    (ws / ".claude").mkdir()
    settings = ws / ".claude/settings.json"
    settings.write_text('{"hooks": {"PreToolUse": "guard.sh"}}')
    doc, _ = run(monkeypatch, capsys, "claude", "--fail-closed")
    assert doc["skipped"][0]["reason"].startswith("hooks.PreToolUse: must be a list"), doc
    assert doc["blocked"] is True
    settings.write_text('{"hooks": {"Stop": "guard.sh"}}')
    doc, _ = run(monkeypatch, capsys, "claude", "--fail-closed")
    assert "skipped" not in doc and doc["blocked"] is False, doc


def test_read_regular_names_a_dangling_link_and_ignores_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    assert read_regular(str(tmp_path / "link")) == (None, DANGLING)
    assert read_regular(str(tmp_path / "missing")) == (None, None)
    assert read_json(str(tmp_path / "missing"), must_exist=True) == (None, "not found")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}")
    path.chmod(0)
    assert read_json(str(path), must_exist=False)[1] == "cannot read: Permission denied"


@pytest.mark.parametrize("agent", list(PROJECT_FILES))
def test_check_fails_on_an_unreadable_file(
    agent: str,
    home: Path,
    ws: Path,
    tmp_path: Path,
    engine: Any,  # noqa: F811 - the fixture imported above
    capsys: Any,
) -> None:
    """`check` exits 1 naming the file, fail-open or not; without it the line passes."""
    from sandboxrun._check.events import name_field

    engine(lambda request: pytest.fail(f"no hook to run: {request.argv}"))  # the gate's check
    event = PROJECT_FILES[agent][1]
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({name_field(DIALECTS[agent]): event}) + "\n")
    assert cli.main(["check", "--agent", agent, "--events", str(events)]) == 0
    capsys.readouterr()
    path = break_file(ws, agent, "a dangling link")
    for extra in ((), ("--fail-open",)):
        assert cli.main(["check", "--agent", agent, "--events", str(events), *extra]) == 1
        out = capsys.readouterr().out
        assert f"line 1 {event}: unreadable config ({path.relative_to(ws)})" in out, out
        assert "FAILED: 1 of 1 events did not pass (1 unreadable config" in out


@pytest.mark.parametrize("agent", list(PROJECT_FILES))
def test_doctor_fails_on_an_unreadable_file(agent: str, home: Path, ws: Path) -> None:
    """`doctor`'s hook checks: a FAIL line naming the file (its exit is 1 on any FAIL)."""
    from sandboxrun import FakeBackend, Settings
    from sandboxrun._cli.doctor import hook_checks

    path = break_file(ws, agent, "a dangling link")
    lines = hook_checks(Settings(), FakeBackend(lambda request: None), [agent])  # type: ignore[arg-type]
    named = [(ok, what, detail) for ok, what, detail in lines if str(path) in what]
    assert named and named[0][0] is False, lines
    assert named[0][2].startswith("could not be read: ")
    assert not any(what == "hooks here" for _, what, _ in lines)


@pytest.mark.parametrize("agent", [a for a in PROJECT_FILES if a not in SCRIPT_AGENTS])
def test_exec_under_fail_closed_blocks_on_an_unreadable_file(
    agent: str, home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    """`exec --fail-closed` (as install writes it) does not run the command and answers
    the agent's own block naming the file; without --fail-closed the command runs."""
    from sandboxrun import ExecResult, FakeBackend
    from sandboxrun._backends.docker import backend as _docker

    ran: list[Any] = []
    backend = FakeBackend(lambda request: ran.append(request) or ExecResult(0, b"", b"", 1))
    backend.close = lambda: None  # type: ignore[method-assign]
    monkeypatch.setattr(_docker, "DockerBackend", lambda settings, warm=False: backend)
    path = break_file(ws, agent, "not JSON")

    def exec_(*flags: str) -> tuple[int, bytes, bytes]:
        event = json.dumps({"hook_event_name": PROJECT_FILES[agent][1], "cwd": str(ws)})
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(event.encode())))
        code = cli.main(["exec", "--no-serve", "--agent", agent, *flags, "--", "guard"])
        out, err = capsysbinary.readouterr()
        return code, out, err

    code, out, err = exec_("--fail-closed")
    assert ran == []
    assert code == DIALECTS[agent].wrapper_failure("why", True)[2]
    assert str(path).encode() in out + err and b"could not be read" in out + err
    code, _, _ = exec_()
    assert code == 0 and len(ran) == 1


@pytest.mark.parametrize("cold", [True, False], ids=["cold", "serve"])
def test_exec_under_fail_closed_blocks_through_serve(
    setup: Setup,  # noqa: F811 - the fixture imported above
    capsysbinary: Any,
    cold: bool,
) -> None:
    """The same through `serve`'s socket: the block, on the client's stderr; and once the
    file reads again (the server's cached discovery sees the change), the command runs."""
    settings = setup.ws / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {')
    code, out, err = exec_(setup, capsysbinary, "--fail-closed", cold=cold)
    assert (code, out) == (2, b""), err
    assert f"{settings} (project): could not be read: not valid JSON".encode() in err
    settings.write_text('{"hooks": {}}')
    code, out, err = exec_(setup, capsysbinary, "--fail-closed", cold=cold)
    assert code == 0 and b'"permissionDecision":"allow"' not in out, err
    assert b"could not be read" not in err


def test_an_unreadable_plugin_list_loses_the_enabled_plugins_hooks(home: Path, ws: Path) -> None:
    """The user's enabled plugin whose installed_plugins.json does not parse: its hooks
    are lost (unreadable); one enabled but not installed is a remark (the agent has none)."""
    from sandboxrun._dialects.claude.dialect import CLAUDE

    (home / ".claude" / "plugins").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text('{"enabledPlugins": {"guard@team": true}}')
    listed = home / ".claude" / "plugins" / "installed_plugins.json"
    listed.write_text('{"plugins": {}}')
    [note] = CLAUDE.discover("PreToolUse", [str(ws)], str(home)).skipped
    assert not note.unreadable and "not in installed_plugins.json" in note.reason
    listed.write_text('{"plugins": ')
    [lost] = CLAUDE.discover("PreToolUse", [str(ws)], str(home)).skipped
    assert lost.unreadable and lost.reason.startswith("installed_plugins.json: not valid JSON")
