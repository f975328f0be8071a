"""The audit trail (issue 21, item 1): one JSON line per hook run on every entry point
(`run` cold and served, `exec` cold and served, `check`, the Python API), never the
environment, the event only when asked; a repository can neither turn it off nor
redirect it; whole lines under concurrent writers and rotation; `sandboxrun audit`.
FakeBackend: protocol logic only, no isolation claim rests on these tests."""

from __future__ import annotations

import io
import json
import multiprocessing
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun import ExecRequest, ExecResult, FakeBackend, HookFactory, Settings
from sandboxrun import _client as client
from sandboxrun._audit.log import AuditLog, read_lines
from tests.test_cli_unit import _restore_library_logging  # noqa: F401 - autouse, shared
from tests.test_exec_untrusted import serving

DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "rm -rf is not allowed"}}  # fmt: skip
EVENT = {"hook_event_name": "PreToolUse", "session_id": "s-42", "tool_name": "Bash",
         "tool_use_id": "toolu_1", "tool_input": {"command": "rm -rf /"}}  # fmt: skip


class _Closable(FakeBackend):
    image_id = "sha256:feed"

    def close(self) -> None:
        return None

    def abort(self) -> None:
        return None


def deny(request: ExecRequest) -> ExecResult:
    return ExecResult(0, json.dumps(DENY).encode(), b"", 7)


class Setup:
    def __init__(self, ws: Path, config: Path, log: Path, socket: str) -> None:
        self.ws, self.config, self.log, self.socket = ws, config, log, socket

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in read_lines([str(self.log)])]


@pytest.fixture
def setup(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Setup]:
    """A project with one Claude project hook, the user's config keeping an audit trail,
    and a server (in-process) on the config's socket."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".claude").mkdir()
    hook = {"type": "command", "command": "./guard.sh"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))
    monkeypatch.chdir(ws)
    short = Path(tempfile.mkdtemp(prefix="sr-", dir="/tmp"))
    socket = str(short / "serve.sock")
    log = home / "audit" / "audit.jsonl"
    config = home / "config.toml"
    config.write_text(f'serve_socket = "{socket}"\naudit_log = "{log}"\n')
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")  # the host's environment: never recorded
    with serving(_Closable(deny), socket, monkeypatch):
        yield Setup(ws, config, log, socket)
    shutil.rmtree(short, ignore_errors=True)


def call(argv: list[str], stdin: bytes, cold: bool) -> int | None:
    before = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        return cli.main([argv[0], "--no-serve", *argv[1:]]) if cold else client.via_server(argv)
    finally:
        sys.stdin = before
        if cold:
            logger.remove()
            logger.enable("sandboxrun")


def check_common(record: dict[str, Any], entry: str, served: bool) -> None:
    assert record["entry"] == entry and record["served"] is served
    assert record["agent"] == "claude" and record["event"] == "PreToolUse"
    assert (record["sessionId"], record["toolName"], record["toolUseId"]) == (
        "s-42", "Bash", "toolu_1")  # fmt: skip
    assert record["decision"] == "block" and record["reason"] == "rm -rf is not allowed"
    assert record["status"] == "completed" and record["exitCode"] == 0
    assert record["imageId"] == "sha256:feed" and record["backend"] == "docker"
    assert len(record["hook"]["sha256"]) == 64
    assert "payload" not in record
    assert "hunter2" not in json.dumps(record)  # nothing of the host's environment


@pytest.mark.parametrize("cold", [True, False], ids=["cold", "serve"])
def test_run_records_each_hook(setup: Setup, cold: bool) -> None:
    argv = ["run", "PreToolUse", "--agent", "claude", "--config", str(setup.config)]
    assert call(argv, json.dumps(EVENT).encode(), cold) == 0
    [record] = setup.records()
    check_common(record, "run", served=not cold)
    assert record["hook"]["name"] == "./guard.sh" and record["hook"]["source"] == "project"


@pytest.mark.parametrize("cold", [True, False], ids=["cold", "serve"])
def test_exec_records_the_hook_as_the_agent_reads_it(setup: Setup, cold: bool) -> None:
    argv = ["exec", "--config", str(setup.config), "--agent", "claude", "--untrusted", "--",
            "./guard.sh"]  # fmt: skip
    assert call(argv, json.dumps(EVENT).encode(), cold) == 0
    [record] = setup.records()
    check_common(record, "exec", served=not cold)
    assert record["hook"] == {"name": "./guard.sh", "source": "untrusted", "of": "command",
                              "sha256": record["hook"]["sha256"]}  # fmt: skip


def test_check_and_the_api_record_their_entry(setup: Setup, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps(EVENT) + "\n")
    argv = ["check", "--agent", "claude", "--config", str(setup.config),
            "--events", str(events)]  # fmt: skip
    cli.main(argv)
    settings = Settings.load(config=str(setup.config), agent="claude")
    HookFactory(settings, _Closable(deny)).run("PreToolUse", EVENT)
    entries = [r["entry"] for r in setup.records()]
    assert entries == ["check", "api"]


def test_the_payload_only_when_asked(setup: Setup) -> None:
    setup.config.write_text(setup.config.read_text() + "audit_payload = true\n")
    argv = ["run", "PreToolUse", "--agent", "claude", "--config", str(setup.config)]
    assert call(argv, json.dumps(EVENT).encode(), cold=True) == 0
    [record] = setup.records()
    assert record["payload"]["tool_input"] == {"command": "rm -rf /"}


def test_a_repository_can_neither_turn_it_off_nor_redirect_it(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a repository controls: the environment the agent starts hooks with (Claude
    Code applies a project's `env` block) and the files in the workspace. Neither is a
    source of settings: the trail stays on, in the user's file."""
    elsewhere = tmp_path / "elsewhere.jsonl"
    monkeypatch.setenv("SANDBOXRUN_AUDIT_LOG", str(elsewhere))
    monkeypatch.setenv("SANDBOXRUN_AUDIT_MAX_BYTES", "0")
    (setup.ws / ".sandboxrun.toml").write_text(f'audit_log = "{elsewhere}"\n')
    (setup.ws / ".env").write_text(f"SANDBOXRUN_AUDIT_LOG={elsewhere}\n")
    settings = json.loads((setup.ws / ".claude" / "settings.json").read_text())
    settings["env"] = {"SANDBOXRUN_AUDIT_LOG": str(elsewhere)}
    (setup.ws / ".claude" / "settings.json").write_text(json.dumps(settings))
    for cold in (True, False):
        argv = ["run", "PreToolUse", "--agent", "claude", "--config", str(setup.config)]
        assert call(argv, json.dumps(EVENT).encode(), cold) == 0
    assert len(setup.records()) == 2
    assert not elsewhere.exists()


def test_a_failure_of_ours_is_recorded_without_a_hook(setup: Setup) -> None:
    """No engine under fail-closed: the block is sandboxrun's, recorded as such."""
    from sandboxrun import EngineUnavailable

    class Down(_Closable):
        def check(self) -> None:
            raise EngineUnavailable("the engine does not answer")

    settings = Settings.load(config=str(setup.config), agent="claude", fail_closed=True)
    HookFactory(settings, Down(deny)).run("PreToolUse", EVENT)
    [record] = setup.records()
    assert record["hook"] is None and record["status"] == "error"
    assert record["decision"] == "block" and "does not answer" in record["reason"]


def test_an_exec_the_sandbox_ended_is_recorded_with_why(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """exec's own failure where the agent's answer carries no reason (Copilot's: exit 0,
    nothing on stdout, the reason on stderr only): the record names it all the same."""
    from sandboxrun._backends.docker import backend as _docker
    from sandboxrun._errors import EngineError

    class Down(_Closable):
        def check(self) -> None:
            raise EngineError("the image sandboxrun-hook:none is not there")

    monkeypatch.setattr(_docker, "DockerBackend", lambda settings, warm=False: Down(deny))
    argv = ["exec", "--config", str(setup.config), "--agent", "copilot", "--untrusted",
            "--event", "preToolUse", "--", "./guard.sh"]  # fmt: skip
    event = {"sessionId": "s-42", "timestamp": 1, "cwd": str(setup.ws), "toolName": "bash"}
    assert call(argv, json.dumps(event).encode(), cold=True) == 0
    [record] = [r for r in setup.records() if r["entry"] == "exec"]
    assert (record["status"], record["decision"], record["event"]) == (
        "error", "none", "preToolUse")  # fmt: skip
    assert "sandboxrun-hook:none is not there" in record["reason"], record


def _writer(path: str, n: int, size: int) -> None:
    log = AuditLog(path, 4096, 50)
    for i in range(n):
        line = json.dumps({"i": i, "pad": "x" * size}) + "\n"
        log.append([line.encode()])


def test_concurrent_writers_and_rotation_keep_whole_lines(tmp_path: Path) -> None:
    path = str(tmp_path / "audit.jsonl")
    ctx = multiprocessing.get_context("fork")  # the writer needs nothing re-imported
    procs = [ctx.Process(target=_writer, args=(path, 60, 200)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    log = AuditLog(path, 4096, 50)
    files = log.files()
    assert len(files) > 1  # it rotated
    records = [json.loads(line) for line in read_lines(files)]
    assert len(records) == 240  # every line whole, none lost (50 copies are plenty)
    for name in files:
        assert Path(name).stat().st_size <= 4096
        assert Path(name).stat().st_mode & 0o777 == 0o600


def test_rotation_keeps_only_keep_files(tmp_path: Path) -> None:
    path = str(tmp_path / "audit.jsonl")
    log = AuditLog(path, 4096, 2)
    for _ in range(100):
        log.append([b'{"pad": "' + b"x" * 300 + b'"}\n'])
    assert [Path(f).name for f in log.files()] == ["audit.jsonl.2", "audit.jsonl.1",
                                                   "audit.jsonl"]  # fmt: skip


def test_audit_summarises_per_hook(
    setup: Setup, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["run", "PreToolUse", "--agent", "claude", "--config", str(setup.config)]
    for _ in range(3):
        assert call(argv, json.dumps(EVENT).encode(), cold=True) == 0
    with setup.log.open("a") as f:  # a line someone else wrote, and an old record
        f.write("not json\n")
        old = {**setup.records()[0], "time": "2020-01-01T00:00:00.000+00:00"}
        f.write(json.dumps(old) + "\n")
    capsys.readouterr()
    assert cli.main(["audit", "--config", str(setup.config), "--json", "--since", "1d"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    [row] = document["hooks"]
    assert (row["hook"], row["runs"], row["blocks"], row["failures"]) == ("./guard.sh", 3, 3, 0)
    assert document["unreadableLines"] == 1 and "not audit records" in err
    assert cli.main(["audit", "--config", str(setup.config)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["RUNS", "BLOCKS", "ASKS"]
    assert table[1].split()[:2] == ["4", "4"]
    assert cli.main(["audit", "--config", str(setup.config), "--hook", "nothing-like"]) == 0
    assert capsys.readouterr().out == "no hook runs recorded\n"


def test_audit_without_a_trail_is_one_clear_line(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["audit"]) == 2
    assert "no audit trail: set audit_log" in capsys.readouterr().err


def test_an_unwritable_trail_never_changes_the_answer(
    setup: Setup, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    blocker = setup.ws.parent / "a-file"
    blocker.write_text("")
    setup.config.write_text(f'audit_log = "{blocker}/audit.jsonl"\n')
    argv = ["run", "PreToolUse", "--agent", "claude", "--config", str(setup.config)]
    assert call(argv, json.dumps(EVENT).encode(), cold=True) == 0
    out, err = capsysbinary.readouterr()
    assert json.loads(out)["blocked"] is True
    assert b"audit_log" in err and b"not written" in err


def test_a_relative_audit_log_is_refused(home: Path, tmp_path: Path) -> None:
    from sandboxrun import ConfigError

    config = tmp_path / "c.toml"
    config.write_text('audit_log = "audit.jsonl"\n')
    with pytest.raises(ConfigError, match="audit_log"):
        Settings.load(config=str(config))


@pytest.mark.parametrize(("age", "status"), [(30.0, "timed out"), (1.0, "error")])
def test_an_exec_the_agent_killed_is_timed_out_only_past_its_deadline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, age: float, status: str
) -> None:
    """The record of an `exec` the agent killed (`_runner.exec.ended_by_agent`): timed out when
    the process had lived past the hook's deadline (the agent's own came first), else an
    error that says the agent ended it early."""
    import signal

    from sandboxrun._runner import exec as _exec

    monkeypatch.setattr(_exec, "process_age", lambda: age)
    settings = Settings(agent="claude", timeout=4, audit_log=str(tmp_path / "audit.jsonl"))
    stdin = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash"}).encode()
    out = _exec.ended_by_agent(settings, signal.SIGTERM, 0.0, stdin)
    assert out.sandbox_ended and out.exit_code == 128 + signal.SIGTERM
    _exec.audit_exec(settings, object(), stdin, ["sleep", "60"], False, out, 0.0, False)
    [record] = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert (record["event"], record["status"]) == ("PreToolUse", status), record
    assert "the agent ended the hook (SIGTERM)" in record["reason"]
