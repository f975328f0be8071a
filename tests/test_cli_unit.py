"""The command line without an engine: `list`, and `run` over a fake DockerBackend."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun import (
    EngineUnavailable,
    ExecRequest,
    ExecResult,
    FakeBackend,
    ImageMissing,
    Settings,
)
from sandboxrun._backends.docker import backend as _docker
from sandboxrun._backends.image_tools import ImageTools
from sandboxrun._dialects.cline import CLINE
from tests.conftest import user_config
from tests.test_preflight import TOOLS

GLOBAL = Path("Documents/Cline/Hooks")
LOCAL = Path(".clinerules/hooks")


@pytest.fixture(autouse=True)
def _restore_library_logging() -> Iterator[None]:
    """main() enables the library's logger and adds a stderr sink: undo that afterwards."""
    yield
    logger.remove()
    logger.disable("sandboxrun")


@pytest.fixture
def ws(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace root that is also the current directory (HOME is isolated)."""
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def feed(monkeypatch: pytest.MonkeyPatch, data: bytes | str) -> None:
    """Make `data` the process's stdin."""
    raw = data.encode() if isinstance(data, str) else data
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))


class Engine:
    """What the patched DockerBackend saw: the backends built, the sweeps run."""

    def __init__(self) -> None:
        self.backends: list[Any] = []
        self.reaped: list[Any] = []

    @property
    def requests(self) -> list[ExecRequest]:
        return [r for b in self.backends for r in b.requests]


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch, fake: Callable[..., FakeBackend]):  # type: ignore[no-untyped-def]
    """`engine(answers, default=None, error=None)` patches the CLI's DockerBackend and reap."""

    def install(
        answers: dict[Any, Any] | None = None,
        default: Any = None,
        error: Exception | None = None,
        check_error: Exception | None = None,
        tools: ImageTools | None = None,
    ) -> Engine:
        seen = Engine()

        class FakeDocker:
            def __init__(self, settings: Settings, warm: bool = False) -> None:
                self.settings = settings
                self.client = object()
                self.inner = fake(answers, default)
                self.requests = self.inner.requests
                seen.backends.append(self)

            def check(self) -> None:  # the real one connects here: building never fails
                if error is not None:
                    raise error
                if check_error is not None:
                    raise check_error

            def run(self, request: ExecRequest) -> ExecResult:
                return self.inner.run(request)

            def image_tools(self) -> ImageTools | None:
                return tools

            def close(self) -> None:
                return None

        # The CLI imports the backend when a command needs it: patch it at its source.
        monkeypatch.setattr(_docker, "DockerBackend", FakeDocker)
        return seen

    return install


def one_json_line(out: str) -> dict[str, Any]:
    """stdout holds exactly one line, a JSON object."""
    assert out.endswith("\n")
    assert out.count("\n") == 1
    doc = json.loads(out)
    assert isinstance(doc, dict)
    return doc


def one_stderr_line(err: str) -> str:
    """stderr holds exactly one line, which is returned."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("sandboxrun: ")
    return lines[0]


# -- list ----------------------------------------------------------------------------


def test_list_text(home, ws, make_hook, engine, capsys) -> None:
    """`list` prints the hooks found and the files skipped, each with its reason."""
    engine(tools=TOOLS)  # the image has /bin/sh: no hook line says "will not run"
    g = make_hook(home / GLOBAL)
    w = make_hook(ws / LOCAL, "PostToolUse")
    (ws / LOCAL / "PreToolUse.ps1").write_text("#!/bin/sh\n")
    disabled = make_hook(ws / LOCAL, "TaskStart", mode=0o644)
    vscode = ws.parent / "vscode.toml"  # the VS Code extension's rules name near-misses
    vscode.write_text('cline_variant = "vscode"\n')
    assert cli.main(["list", "--config", str(vscode), "--workspace", str(ws)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == "hooks (cline):"
    assert lines[1].split() == ["PreToolUse", "global", str(g)]
    assert lines[2].split() == ["PostToolUse", "workspace", str(w)]
    assert lines[3] == "skipped:"
    assert f"{ws / LOCAL / 'PreToolUse.ps1'} (workspace): the VS Code extension runs" in lines[4]
    assert f"{disabled} (workspace): not executable" in lines[5]
    assert len(lines) == 6


def test_list_text_without_hooks(home, ws, capsys) -> None:
    """`list` with nothing found says so."""
    assert cli.main(["list"]) == 0
    assert capsys.readouterr().out == "no hooks found (cline)\n"


def test_list_json(home, ws, make_hook, capsys) -> None:
    """`list --json` prints one JSON document with hooks and skipped files with reasons."""
    g = make_hook(home / GLOBAL)
    (ws / LOCAL / "pretooluse").parent.mkdir(parents=True)
    (ws / LOCAL / "pretooluse").write_text("")
    vscode = ws.parent / "vscode.toml"  # the SDK/CLI would run `pretooluse` (any case)
    vscode.write_text('cline_variant = "vscode"\n')
    assert cli.main(["list", "--json", "--config", str(vscode), "--workspace", str(ws)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    doc = one_json_line(out)
    assert doc["agent"] == "cline"
    [found] = doc["hooks"]
    assert found | {"runnable": None, "why": None} == {
        "hook": "PreToolUse", "path": str(g), "source": "global", "matcher": None,
        "runnable": None, "why": None,
    }  # fmt: skip
    [skip] = doc["skipped"]
    assert set(skip) == {"path", "source", "reason"}
    assert (skip["path"], skip["source"]) == (str(ws / LOCAL / "pretooluse"), "workspace")
    assert "case" in skip["reason"]


def test_list_json_filters_by_hook_name(home, ws, make_hook, capsys) -> None:
    """`list HOOK --json` shows only that hook's files."""
    make_hook(ws / LOCAL, "PreToolUse")
    post = make_hook(ws / LOCAL, "PostToolUse")
    assert cli.main(["list", "PostToolUse", "--json"]) == 0
    doc = one_json_line(capsys.readouterr().out)
    assert [(h["hook"], h["path"], h["source"]) for h in doc["hooks"]] == [
        ("PostToolUse", str(post), "workspace")
    ]
    assert doc["skipped"] == []


def test_list_uses_the_cwd_as_workspace(home, ws, make_hook, capsys) -> None:
    """Without --workspace, `list` searches the current directory."""
    w = make_hook(ws / LOCAL)
    assert cli.main(["list", "--json"]) == 0
    assert one_json_line(capsys.readouterr().out)["hooks"][0]["path"] == str(w)


def test_list_careti(home, ws, make_hook, capsys) -> None:
    """`list --agent careti` searches Careti's folders."""
    w = make_hook(ws / ".agents/hooks")
    make_hook(ws / LOCAL)
    assert cli.main(["list", "--agent", "careti", "--json"]) == 0
    doc = one_json_line(capsys.readouterr().out)
    assert doc["agent"] == "careti"
    assert [h["path"] for h in doc["hooks"]] == [str(w)]


def test_list_missing_workspace_is_exit_2(home, ws, tmp_path, capsys) -> None:
    """A workspace that does not exist is a one-line error and exit 2."""
    assert cli.main(["list", "--workspace", str(tmp_path / "gone")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "gone" in one_stderr_line(err)


# -- run: input and settings errors ----------------------------------------------------


@pytest.mark.parametrize("data", ["{not json", '{"a": 1', "\xff\xfe", "[1, 2]", '"text"', "42"])
def test_run_with_a_bad_event_is_exit_2(home, ws, engine, monkeypatch, capsys, data) -> None:
    """Malformed or non-object JSON on stdin: exit 2, one stderr line, nothing on stdout."""
    seen = engine(default=ExecResult(0, b"{}", b"", 1))
    feed(monkeypatch, data.encode("latin-1"))
    assert cli.main(["run", "PreToolUse"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "event on stdin" in one_stderr_line(err)
    assert seen.requests == []


def test_run_bad_event_with_fail_closed_answers_the_block(
    home, ws, engine, monkeypatch, capsys
) -> None:
    """Under --fail-closed a malformed event answers the block: the hooks could not see it."""
    seen = engine(default=ExecResult(0, b"{}", b"", 1))
    feed(monkeypatch, "{oops")
    assert cli.main(["run", "PreToolUse", "--fail-closed"]) == 0
    out, err = capsys.readouterr()
    doc = one_json_line(out)
    assert doc["cancel"] is True and "event on stdin" in doc["errorMessage"]
    assert "event on stdin" in err
    assert seen.requests == []


def test_run_invalid_timeout_flag_is_exit_2(home, ws, engine, monkeypatch, capsys) -> None:
    """`--timeout -1` is a one-line configuration error naming the setting."""
    engine()
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse", "--timeout", "-1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "timeout" in one_stderr_line(err)


def test_settings_variables_are_ignored_with_a_warning(
    home, ws, make_hook, engine, monkeypatch, capsys
) -> None:
    """SANDBOXRUN_TIMEOUT (any setting but fail-closed) is not read: a repository can set
    the environment of hook processes; the warning names the variable."""
    w = make_hook(ws / LOCAL)
    seen = engine({w: ExecResult(0, b"{}", b"", 1)})
    monkeypatch.setenv("SANDBOXRUN_TIMEOUT", "0.001")
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse"]) == 0
    err = capsys.readouterr().err
    assert [r.timeout for r in seen.requests] == [120.0]  # the Cline SDK's own
    assert "SANDBOXRUN_TIMEOUT" in one_stderr_line(err)


def test_broken_toml_config_is_exit_2_naming_the_file(
    home, ws, engine, tmp_path, monkeypatch, capsys
) -> None:
    """A garbage config file is a one-line error that names the file."""
    engine()
    config = tmp_path / "broken.toml"
    config.write_text("timeout = = [\n\x00garbage")
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse", "--config", str(config)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert str(config) in one_stderr_line(err)


def test_broken_toml_config_breaks_list_too(home, ws, tmp_path, monkeypatch, capsys) -> None:
    """`list` reads the same config and fails the same way."""
    config = tmp_path / "broken.toml"
    config.write_text("[[[")
    assert cli.main(["list", "--config", str(config)]) == 2
    assert str(config) in one_stderr_line(capsys.readouterr().err)


def test_unknown_config_key_is_exit_2(home, ws, engine, tmp_path, monkeypatch, capsys) -> None:
    """A config file with an unknown setting is rejected, not ignored."""
    engine()
    user_config(home, "timeuot = 5\n")
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse"]) == 2
    assert "timeuot" in one_stderr_line(capsys.readouterr().err)


# -- run: end to end over the fake engine ----------------------------------------------


def test_run_end_to_end(home, ws, make_hook, engine, monkeypatch, capsys) -> None:
    """stdout is one JSON line: the combined answer and the per-hook report."""
    g = make_hook(home / GLOBAL)
    w = make_hook(ws / LOCAL)
    seen = engine(
        {
            g: ExecResult(0, b'log\n{"contextModification": "ctx"}\n', b"", 3),
            w: ExecResult(0, b'{"cancel": true, "errorMessage": "denied"}', b"why\n", 4),
        }
    )
    event = {
        "hookName": "PreToolUse",
        "timestamp": "1",
        "workspaceRoots": [str(ws)],
        "preToolUse": {"toolName": "execute_command", "parameters": {"command": "rm"}},
    }
    feed(monkeypatch, json.dumps(event))
    assert cli.main(["run", "PreToolUse"]) == 0
    out, err = capsys.readouterr()
    doc = one_json_line(out)
    assert err == ""
    assert list(doc) == ["cancel", "contextModification", "errorMessage", "hooks"]
    assert (doc["cancel"], doc["contextModification"], doc["errorMessage"]) == (
        True,
        "ctx",
        "denied",
    )
    assert [(h["name"], h["source"], h["status"]) for h in doc["hooks"]] == [
        (str(g), "global", "completed"),
        (str(w), "workspace", "completed"),
    ]
    assert doc["hooks"][1]["stderr"] == "why\n"
    expected_stdin = CLINE.prepare_input("PreToolUse", event, [str(ws)])
    assert [r.stdin for r in seen.requests] == [expected_stdin, expected_stdin]
    assert len(seen.backends) == 1


def test_run_without_hooks(home, ws, engine, monkeypatch, capsys) -> None:
    """No hooks: the empty answer with an empty report, exit 0."""
    seen = engine()
    feed(monkeypatch, b"")
    assert cli.main(["run", "PreToolUse"]) == 0
    assert one_json_line(capsys.readouterr().out) == {
        "cancel": False,
        "contextModification": "",
        "errorMessage": "",
        "hooks": [],
    }
    assert seen.requests == []


def test_run_failed_hook_is_exit_0_fail_open(
    home, ws, make_hook, engine, monkeypatch, capsys
) -> None:
    """A hook exiting non-zero is reported, exit 0, and does not cancel."""
    w = make_hook(ws / LOCAL)
    engine({w: ExecResult(1, b'{"cancel": true}', b"crash", 2)})
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse"]) == 0
    doc = one_json_line(capsys.readouterr().out)
    assert doc["cancel"] is False
    [hook] = doc["hooks"]
    assert (hook["status"], hook["exitCode"], hook["error"]) == (
        "failed",
        1,
        "PreToolUse hook exited with code 1",
    )


def test_run_fail_closed_flag_cancels_a_failed_hook(
    home, ws, make_hook, engine, monkeypatch, capsys
) -> None:
    """--fail-closed turns a failed hook into a cancel naming it."""
    w = make_hook(ws / LOCAL)
    engine({w: ExecResult(None, b"", b"", 30_000, timed_out=True)})
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse", "--fail-closed"]) == 0
    doc = one_json_line(capsys.readouterr().out)
    assert doc["cancel"] is True
    assert str(w) in doc["errorMessage"] and "timed_out" in doc["errorMessage"]


def test_run_flags_and_config_reach_the_request(
    home, ws, make_hook, engine, tmp_path, monkeypatch, capsys
) -> None:
    """The config file sets the timeout; the command line overrides it."""
    w = make_hook(ws / LOCAL)
    user_config(home, "timeout = 9\n")
    seen = engine({w: ExecResult(0, b"{}", b"", 1)})
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse"]) == 0
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse", "--timeout", "2.5"]) == 0
    assert [r.timeout for r in seen.requests] == [9.0, 2.5]
    capsys.readouterr()


def test_run_workspace_flag(home, ws, tmp_path, make_hook, engine, monkeypatch, capsys) -> None:
    """--workspace wins over the event's roots for discovery and the hook's input."""
    other = tmp_path / "other"
    other.mkdir()
    w = make_hook(other / LOCAL)
    seen = engine({w: ExecResult(0, b"{}", b"", 1)})
    feed(monkeypatch, json.dumps({"workspaceRoots": [str(ws)]}))
    assert cli.main(["run", "PreToolUse", "--workspace", str(other)]) == 0
    [req] = seen.requests
    assert req.workdir == str(other)
    assert one_json_line(capsys.readouterr().out)["hooks"][0]["name"] == str(w)


# -- run: no engine ---------------------------------------------------------------------


def test_no_engine_is_exit_2(home, ws, make_hook, engine, monkeypatch, capsys) -> None:
    """Without --fail-closed, an unavailable engine is exit 2 and nothing on stdout."""
    make_hook(ws / LOCAL)
    engine(error=EngineUnavailable("no engine at unix:///var/run/docker.sock"))
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "no engine" in one_stderr_line(err)


@pytest.mark.parametrize("how", ["flag", "env"])
def test_no_engine_fail_closed_answers_cancel(
    home, ws, make_hook, engine, monkeypatch, capsys, how
) -> None:
    """With fail-closed, an unavailable engine answers a cancel on stdout and exits 0."""
    make_hook(ws / LOCAL)
    engine(error=EngineUnavailable("no engine at unix:///var/run/docker.sock"))
    feed(monkeypatch, "{}")
    argv = ["run", "PreToolUse"]
    if how == "flag":
        argv.append("--fail-closed")
    else:
        monkeypatch.setenv("SANDBOXRUN_FAIL_CLOSED", "true")
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    doc = one_json_line(out)
    assert doc["cancel"] is True
    assert doc["hooks"] == []
    assert set(doc) == {"cancel", "contextModification", "errorMessage", "hooks"}
    assert "no engine" in doc["errorMessage"]
    assert "no engine" in one_stderr_line(err)


def test_missing_image_fail_closed_answers_cancel(
    home, ws, make_hook, engine, monkeypatch, capsys
) -> None:
    """With --fail-closed, a failing preflight check also answers a cancel."""
    make_hook(ws / LOCAL)
    seen = engine(check_error=ImageMissing("image sandboxrun/hooks:latest is missing"))
    feed(monkeypatch, "{}")
    assert cli.main(["run", "PreToolUse", "--fail-closed"]) == 0
    doc = one_json_line(capsys.readouterr().out)
    assert doc["cancel"] is True and "missing" in doc["errorMessage"]
    assert seen.requests == []
