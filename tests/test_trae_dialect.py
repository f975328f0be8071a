"""Trae IDE (`--agent trae`, a row of `_dialects/claude/agents.py`): its files, events,
project variables and answers, `exec` and `run` on the fake backend, and `install`'s
byte-exact round trip (the engine's: tests/engine/test_install_trae.py).

What the table rests on is unconfirmed against Trae's own reference (the dialect's
docstring names each source): `.trae/hooks.json` is `{"version": 1, "hooks": {...}}`
in public repositories (lancedb/lance@4ed1063, learnwy/skills@8a044d2), the user's is
`~/.trae/hooks.json` (`~/.trae-cn/hooks.json` for Trae CN), and Trae runs Claude Code's
`.claude/settings.json` hooks too. Where a rule is unknown the reading lists more hooks
and honours more denies, never fewer."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecRequest, ExecResult, FakeBackend
from sandboxrun._dialects import AGENTS
from sandboxrun._dialects.claude.agents import TRAE
from sandboxrun._dialects.registry import DIALECTS
from sandboxrun._errors import ImageMissing
from sandboxrun._install import command as _command
from sandboxrun._runner.exec import exec_request, run_exec
from sandboxrun._settings import Settings
from sandboxrun._types import HookSpec
from tests.test_claudelike import write
from tests.test_cli_unit import (  # noqa: F401 - shared fixtures
    _restore_library_logging,
    engine,
    feed,
)

GUARD = "./hooks/guard.sh | tee -a /tmp/log 2>&1"
DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "no"}}  # fmt: skip


def table(command: str = GUARD, event: str = "PreToolUse", **extra: Any) -> dict[str, Any]:
    """An event table with one command handler, matched as public Trae files match."""
    hook = {"type": "command", "command": command, **extra}
    return {event: [{"matcher": "RunCommand|Bash", "hooks": [hook]}]}


def trae_file(hooks: dict[str, Any]) -> str:
    """A `.trae/hooks.json` as public files have it: a `version`, the table under `hooks`."""
    return json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def cwd(ws: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ws)
    return ws


def found(home: Path, ws: Path, hook: str | None = "PreToolUse"):
    got = TRAE.discover(hook, [str(ws)], str(home))
    return [(h.name, h.source) for h in got.hooks], [s.reason for s in got.skipped]


def event(ws: Path, command: str = "rm -rf /", name: str = "PreToolUse") -> dict[str, Any]:
    return {"session_id": "s", "cwd": str(ws), "hook_event_name": name,
            "tool_name": "RunCommand", "tool_input": {"command": command}}  # fmt: skip


def test_trae_is_registered_and_offered() -> None:
    assert DIALECTS["trae"] is TRAE
    assert "trae" in AGENTS


# -- discovery -------------------------------------------------------------------------


def test_every_level_is_read_in_order_trusted_first(home: Path, ws: Path) -> None:
    """The user's files (Trae's, Trae CN's, Claude Code's), then the repository's
    `.trae/hooks.json` and Claude Code's project and local files, untrusted."""
    files = [
        "~/.trae/hooks.json",
        "~/.trae-cn/hooks.json",
        "~/.claude/settings.json",
        ".trae/hooks.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ]
    for i, name in enumerate(files):
        path = home / name[2:] if name.startswith("~/") else ws / name
        write(path, trae_file(table(f"h{i}.sh")))
    hooks, skipped = found(home, ws)
    assert hooks == [
        ("h0.sh", "user"),
        ("h1.sh", "user"),
        ("h2.sh", "user"),
        ("h3.sh", "project"),
        ("h4.sh", "project"),
        ("h5.sh", "local"),
    ], skipped


def test_the_version_key_is_the_files_and_hooks_must_be_an_object(home: Path, ws: Path) -> None:
    """`version` beside `hooks` is the file's, not an event. A `hooks` that is no object
    is a file that could not be read (fail-closed blocks on it, tests/test_unreadable.py),
    never read as a bare event table that would only warn."""
    write(ws / ".trae/hooks.json", trae_file(table("wrapped.sh")))
    assert found(home, ws) == ([("wrapped.sh", "project")], [])
    write(ws / ".trae/hooks.json", {"version": 1, "hooks": "all"})
    assert found(home, ws) == ([], ["hooks: must be an object mapping event names to lists"])


def test_the_six_documented_events_and_no_other(home: Path, ws: Path) -> None:
    """docs.trae.cn names six events; another agent's name (Cursor's) is named as unknown,
    never silently dropped."""
    names = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
             "Notification")  # fmt: skip
    hooks: dict[str, Any] = {}
    for name in names:
        hooks.update(table(f"{name}.sh", event=name))
    hooks["beforeShellExecution"] = []
    write(ws / ".trae/hooks.json", trae_file(hooks))
    listed, skipped = found(home, ws, None)
    assert [n for n, _ in listed] == [f"{name}.sh" for name in names]
    assert skipped == ["hooks.beforeShellExecution: unknown event name"]


def test_a_stop_entrys_loop_limit_does_not_hide_its_hook(home: Path, ws: Path) -> None:
    """A matcher group's `loop_limit` (Trae's own Stop follow-up cap) is Trae's to
    enforce: the hook is listed as any other."""
    write(
        ws / ".trae/hooks.json",
        trae_file(
            {"Stop": [{"loop_limit": 3, "hooks": [{"type": "command", "command": "stop.sh"}]}]}
        ),
    )
    assert found(home, ws, "Stop") == ([("stop.sh", "project")], [])


def test_timeouts_are_seconds(home: Path, ws: Path) -> None:
    write(ws / ".trae/hooks.json", trae_file(table("t.sh", timeout=10)))
    assert [h.timeout for h in TRAE.discover("PreToolUse", [str(ws)], str(home)).hooks] == [10.0]


def test_project_variables_name_the_project_root(home: Path, ws: Path) -> None:
    """TRAE_PROJECT_DIR and CLAUDE_PROJECT_DIR, both the project root, in `run` and `exec`."""
    sub = ws / "src"
    sub.mkdir()
    write(ws / ".trae/hooks.json", trae_file(table("v.sh")))
    variables = {"TRAE_PROJECT_DIR", "CLAUDE_PROJECT_DIR"}
    spec = TRAE.discover("PreToolUse", [str(sub)], str(home)).hooks[0]
    assert spec.env == dict.fromkeys(variables, str(ws))
    request = exec_request(Settings(agent="trae"), ["hook"], b"{}", None, cwd=str(sub))
    assert {k: v for k, v in request.env.items() if k.endswith("PROJECT_DIR")} == dict.fromkeys(
        variables, str(ws)
    )


# -- the answer -------------------------------------------------------------------------


def _outcome(stdout: dict[str, Any], source: str = "project"):
    spec = HookSpec(hook_name="PreToolUse", name="h", source=source, argv=("h",), workdir="/w",
                    mounts=("/w",))  # fmt: skip
    return TRAE.interpret(spec, ExecResult(0, json.dumps(stdout).encode(), b"", 1), 5.0)


def test_a_deny_blocks_with_or_without_its_event_name() -> None:
    """Public Trae guards name the event (gotocx/superpowers-trae@205a1ed); whether Trae
    requires it is unconfirmed, so a deny without it still blocks (the lenient reading
    blocks more, never less)."""
    for answer in (DENY, {"hookSpecificOutput": {"permissionDecision": "deny"}}):
        denied = _outcome(answer)
        assert (denied.status, denied.answer["blocked"]) == ("completed", True), answer


def test_exit_2_blocks_with_its_stderr(home: Path, ws: Path) -> None:
    spec = HookSpec(hook_name="PreToolUse", name="h", source="project", argv=("h",),
                    workdir="/w", mounts=("/w",))  # fmt: skip
    out = TRAE.interpret(spec, ExecResult(2, b"", b"rm is not allowed\n", 1), 5.0)
    assert (out.answer["blocked"], out.answer["reason"]) == (True, "rm is not allowed")


@pytest.mark.parametrize("fail_closed", [False, True])
def test_exec_wrapper_failures_are_a_non_blocking_error_or_a_block(
    home: Path, ws: Path, fail_closed: bool
) -> None:
    """The sandbox failing (no image, a timeout, an OOM): exit 1 and one line on stderr,
    exit 2 under fail-closed; nothing on stdout."""
    settings = Settings(agent="trae", fail_closed=fail_closed)

    def missing(_request: ExecRequest) -> ExecResult:
        raise ImageMissing("image sandboxrun/hooks:latest is not present")

    for answer in (missing, lambda _r: ExecResult(None, b"", b"", 1, timed_out=True),
                   lambda _r: ExecResult(137, b"", b"", 1, oom_killed=True)):  # fmt: skip
        request = exec_request(settings, ["hook"], b"{}", str(ws), cwd=str(ws))
        out = run_exec(settings, FakeBackend(answer), request)
        assert (out.stdout, out.exit_code) == (b"", 2 if fail_closed else 1)
        assert out.stderr.decode().count("\n") == 1


def test_exec_passes_a_deny_through_byte_for_byte(home: Path, ws: Path) -> None:
    answer = json.dumps(DENY).encode() + b"\n"
    backend = FakeBackend(lambda _r: ExecResult(0, answer, b"", 1))
    settings = Settings(agent="trae")
    request = exec_request(settings, ["hook"], json.dumps(event(ws)).encode(), str(ws),
                           cwd=str(ws))  # fmt: skip
    out = run_exec(settings, backend, request, untrusted=True)
    assert (out.stdout, out.exit_code) == (answer, 0)


# -- through the command line: list, run, install -----------------------------------------


def test_list_names_the_hooks_of_trae_hooks_json(
    home: Path, cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(cwd / ".trae/hooks.json", trae_file({**table("guard.sh"), "Nope": []}))
    assert cli.main(["list", "--agent", "trae"]) == 0
    out = capsys.readouterr().out
    assert "guard.sh" in out and "Nope: unknown event name" in out


def test_run_a_trae_event_through_the_cli(
    home: Path, cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    engine: Any,  # noqa: F811 - the shared fixture
) -> None:  # fmt: skip
    write(cwd / ".trae/hooks.json", trae_file(table("guard.sh", timeout=10)))
    seen = engine(default=ExecResult(2, b"", b"rm is not allowed\n", 3))
    feed(monkeypatch, json.dumps(event(cwd)))
    assert cli.main(["run", "PreToolUse", "--agent", "trae"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["permissionDecision"], doc["reason"]) == ("deny", "rm is not allowed")
    (request,) = seen.requests
    assert request.timeout == 10.0
    assert request.env["TRAE_PROJECT_DIR"] == str(cwd)


def test_install_wraps_trae_hooks_json_and_uninstall_gives_the_bytes_back(
    home: Path, ws: Path, capsys: Any
) -> None:
    """install -> the command is the wrapper (`--untrusted`: the repository's), the
    `version` key and the matcher untouched; uninstall restores the file byte for byte.
    Claude Code's files, which Trae also runs, stay `install --agent claude`'s."""
    path = write(ws / ".trae/hooks.json", trae_file(table()))
    claude = write(ws / ".claude/settings.json", {"hooks": table("c.sh")})
    before, kept = path.read_bytes(), claude.read_bytes()
    args = ["--agent", "trae", "--workspace", str(ws), "--home", str(home)]
    assert cli.main(["install", *args]) == 0
    assert "1 hook command(s) run through sandboxrun exec" in capsys.readouterr().out
    data = json.loads(path.read_text())
    assert data["version"] == 1
    entry = data["hooks"]["PreToolUse"][0]
    assert entry["matcher"] == "RunCommand|Bash"
    assert shlex.split(entry["hooks"][0]["command"]) == [
        *_command.launcher(str(home)),
        "exec",
        "--agent",
        "trae",
        "--untrusted",
        "--",
        GUARD,
    ]
    assert claude.read_bytes() == kept
    assert cli.main(["uninstall", *args]) == 0
    assert path.read_bytes() == before


def test_install_user_wraps_both_user_files_without_untrusted(home: Path, ws: Path) -> None:
    trae = write(home / ".trae/hooks.json", trae_file(table("a")))
    cn = write(home / ".trae-cn/hooks.json", trae_file(table("b")))
    before = trae.read_bytes(), cn.read_bytes()
    args = ["--agent", "trae", "--user", "--home", str(home)]
    assert cli.main(["install", *args]) == 0
    for path, name in ((trae, "a"), (cn, "b")):
        command = json.loads(path.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        assert shlex.split(command)[-3:] == ["trae", "--", name]
    assert cli.main(["uninstall", *args]) == 0
    assert (trae.read_bytes(), cn.read_bytes()) == before


def test_managed_is_refused(home: Path, capsys: Any) -> None:
    assert cli.main(["install", "--agent", "trae", "--managed", "--home", str(home)]) == 2
    assert capsys.readouterr().err == (
        "sandboxrun: --managed: trae documents no managed settings file\n"
    )
