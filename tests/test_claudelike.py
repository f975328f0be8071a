"""The Claude-shaped agents (`_dialects/claude/agents.py`): each one's config levels and
file shapes, its timeout unit, its project variables, its event names and `decision`
words, its input fields, `exec --agent X` (wrapper failures, untrusted stdout) and `list`
(issue 18, items 1, 2, 3, 5, 8; `install`: tests/test_install_claudelike.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecRequest, ExecResult, FakeBackend
from sandboxrun._dialects import AGENTS
from sandboxrun._dialects.claude.agents import (
    AUGMENT,
    CODEBUDDY,
    DEVIN,
    FACTORY,
    IFLOW,
    QWEN,
)
from sandboxrun._dialects.claude.dialect import CLAUDE, QODER, ClaudeDialect
from sandboxrun._dialects.registry import DIALECTS
from sandboxrun._errors import ImageMissing
from sandboxrun._runner.exec import exec_request, run_exec
from sandboxrun._settings import Settings
from sandboxrun._types import HookSpec
from tests.test_cli_unit import (  # noqa: F401 - a shared fixture
    _restore_library_logging,
    engine,
    feed,
)

NEW = (FACTORY, QWEN, CODEBUDDY, IFLOW, DEVIN, AUGMENT)


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def table(command: str, event: str = "PreToolUse", **extra: Any) -> dict[str, Any]:
    """An event table with one command handler."""
    return {event: [{"matcher": "*", "hooks": [{"type": "command", "command": command,
                                                 **extra}]}]}  # fmt: skip


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


def names(dialect: ClaudeDialect, home: Path, ws: Path, hook: str | None = "PreToolUse"):
    found = dialect.discover(hook, [str(ws)], str(home))
    return [(h.name, h.source) for h in found.hooks], found.skipped


def test_every_new_agent_is_registered_and_offered() -> None:
    for dialect in NEW:
        assert DIALECTS[dialect.agent] is dialect
        assert dialect.agent in AGENTS
    assert set(AGENTS) == set(DIALECTS)


# -- item 1: discovery ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "files"),
    [
        (CODEBUDDY, ["~/.codebuddy/settings.json", ".codebuddy/settings.json",
                     ".codebuddy/settings.local.json"]),
        (IFLOW, ["~/.iflow/settings.json", ".iflow/settings.json"]),
        (QWEN, ["~/.qwen/settings.json", ".qwen/settings.json"]),
        (AUGMENT, ["~/.augment/settings.json", ".augment/settings.json",
                   ".augment/settings.local.json"]),
        (DEVIN, ["~/.config/devin/config.json", "~/.claude/settings.json",
                 ".devin/config.json", ".devin/config.local.json", ".claude/settings.json",
                 ".claude/settings.local.json"]),
        (FACTORY, [".factory/settings.local.json"]),
    ],
    ids=lambda v: v.agent if isinstance(v, ClaudeDialect) else "",
)  # fmt: skip
def test_each_settings_level_is_read_in_order(
    home: Path, ws: Path, dialect: ClaudeDialect, files: list[str]
) -> None:
    """Every `hooks` settings file of the agent is read, the user's first; project and
    local files (from the repository) keep their untrusted sources."""
    for i, name in enumerate(files):
        path = home / name[2:] if name.startswith("~/") else ws / name
        write(path, {"hooks": table(f"h{i}.sh")})
    found, skipped = names(dialect, home, ws)
    assert [n for n, _ in found] == [f"h{i}.sh" for i in range(len(files))], skipped
    expected = ["user" if f.startswith("~/") else "local" if ".local." in f else "project"
                for f in files]  # fmt: skip
    assert [s for _, s in found] == expected


def test_a_file_the_agent_does_not_read_is_not_read(home: Path, ws: Path) -> None:
    """iFlow documents no local settings file; Qoder's folder is not Qwen's."""
    write(ws / ".iflow/settings.local.json", {"hooks": table("local.sh")})
    write(ws / ".qoder/settings.json", {"hooks": table("qoder.sh")})
    assert names(IFLOW, home, ws)[0] == []
    assert names(QWEN, home, ws)[0] == []


def test_devin_hooks_file_has_no_hooks_wrapper(home: Path, ws: Path) -> None:
    """`.devin/hooks.v1.json` is the event table itself (Assert-Labs/hook-probe's shape);
    an unknown event there is named, without a `hooks` wrapper."""
    doc = {**table("guard.sh"), "PostCompaction": table("c.sh")["PreToolUse"],
           "Bogus": []}  # fmt: skip
    write(ws / ".devin/hooks.v1.json", doc)
    found, skipped = names(DEVIN, home, ws, None)
    assert found == [("guard.sh", "project"), ("c.sh", "project")]
    assert [s.reason for s in skipped] == ["hooks.Bogus: unknown event name"]


def test_factory_settings_hooks_are_a_fallback_behind_hooks_json(home: Path, ws: Path) -> None:
    """Droid reads a scope's settings.json `hooks` only when its hooks.json is absent;
    hooks.json is read wrapped (public files) or as the bare table (the docs)."""
    write(ws / ".factory/settings.json", {"hooks": table("fallback.sh")})
    write(home / ".factory/settings.json", {"hooks": table("user-fallback.sh")})
    assert names(FACTORY, home, ws)[0] == [("user-fallback.sh", "user"),
                                           ("fallback.sh", "project")]  # fmt: skip
    write(ws / ".factory/hooks/hooks.json", table("legacy.sh"))
    assert names(FACTORY, home, ws)[0] == [("user-fallback.sh", "user"),
                                           ("legacy.sh", "project")]  # fmt: skip
    write(ws / ".factory/hooks.json", {"hooks": table("main.sh")})
    write(home / ".factory/hooks.json", table("user.sh"))
    assert names(FACTORY, home, ws)[0] == [("user.sh", "user"), ("main.sh", "project")]


@pytest.mark.parametrize("dialect", [QWEN, AUGMENT], ids=lambda d: d.agent)
def test_millisecond_timeouts_become_seconds(home: Path, ws: Path, dialect: ClaudeDialect) -> None:
    """Qwen Code and Augment count milliseconds: 5000 is five seconds, and a value that
    would be an hour and more in seconds is named in milliseconds."""
    doc = table("fast.sh", timeout=5000)
    doc["PreToolUse"][0]["hooks"].append({"type": "command", "command": "bad.sh",
                                          "timeout": 4_000_000})  # fmt: skip
    write(ws / f"{dialect.project_dir}/settings.json", {"hooks": doc})
    found = dialect.discover("PreToolUse", [str(ws)], str(home))
    assert [(h.name, h.timeout) for h in found.hooks] == [("fast.sh", 5.0)]
    assert "at most 3600000 milliseconds, not 4000000" in found.skipped[0].reason


def test_claude_and_qoder_timeouts_stay_seconds(home: Path, ws: Path) -> None:
    for dialect in (CLAUDE, QODER, FACTORY, DEVIN):
        write(ws / f"{dialect.project_dir}/settings.json", {"hooks": table("s.sh", timeout=30)})
        found = dialect.discover("PreToolUse", [str(ws)], str(home))
        assert [h.timeout for h in found.hooks] == [30.0], dialect.agent


def test_qwen_settings_keys_in_the_hooks_table_are_not_events(home: Path, ws: Path) -> None:
    doc = {"enabled": True, "disabled": ["x"], "notifications": {}, **table("q.sh")}
    write(ws / ".qwen/settings.json", {"hooks": doc})
    found, skipped = names(QWEN, home, ws)
    assert (found, skipped) == ([("q.sh", "project")], ())


@pytest.mark.parametrize(
    ("dialect", "variables"),
    [
        (FACTORY, {"FACTORY_PROJECT_DIR"}),
        (QWEN, {"QWEN_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"}),
        (CODEBUDDY, {"CODEBUDDY_PROJECT_DIR", "CLAUDE_PROJECT_DIR"}),
        (DEVIN, {"DEVIN_PROJECT_DIR"}),
        (IFLOW, set()),
        (AUGMENT, set()),
        (CLAUDE, {"CLAUDE_PROJECT_DIR"}),
    ],
    ids=lambda v: v.agent if isinstance(v, ClaudeDialect) else "",
)
def test_project_variables_name_the_project_root(
    home: Path, ws: Path, tmp_path: Path, dialect: ClaudeDialect, variables: set[str]
) -> None:
    """`run` and `exec` both give the hook every variable its agent sets, naming the
    mounted project root; an agent whose variables are unconfirmed gets none."""
    sub = ws / "src"
    sub.mkdir()
    write(ws / f"{dialect.project_dir}/settings.json", {"hooks": table("v.sh")})
    if dialect is DEVIN:
        write(ws / ".devin/hooks.v1.json", table("v.sh"))
    spec = dialect.discover("PreToolUse", [str(sub)], str(home)).hooks[0]
    assert spec.env == dict.fromkeys(variables, str(ws))
    request = exec_request(Settings(agent=dialect.agent), ["hook"], b"{}", None, cwd=str(sub))
    assert {k: v for k, v in request.env.items() if k.endswith("PROJECT_DIR")} == dict.fromkeys(
        variables, str(ws)
    )


# -- items 2 and 8: the input, the answer -------------------------------------------------


def test_augment_input_carries_conversation_id_and_workspace_roots(tmp_path: Path) -> None:
    event = {"conversation_id": "c1", "workspace_roots": ["/a", "/b"], "tool_name": "view"}
    assert AUGMENT.event_workspaces(event) == ["/a", "/b"]
    sent = json.loads(AUGMENT.prepare_input("PreToolUse", event, ["/a", "/b"]))
    assert sent == {"conversation_id": "c1", "workspace_roots": ["/a", "/b"],
                    "hook_event_name": "PreToolUse", "tool_name": "view"}  # fmt: skip
    assert "session_id" not in sent and "cwd" not in sent


def test_claude_input_is_unchanged() -> None:
    event = {"session_id": "s", "cwd": "/w", "tool_name": "Bash"}
    assert json.loads(CLAUDE.prepare_input("PreToolUse", event, ["/w"])) == {
        "session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "Bash"
    }  # fmt: skip


def _outcome(dialect: ClaudeDialect, stdout: dict[str, Any], source: str = "user"):
    spec = HookSpec(
        hook_name="PreToolUse", name="h", source=source, argv=("h",), workdir="/w", mounts=("/w",)
    )
    return dialect.interpret(spec, ExecResult(0, json.dumps(stdout).encode(), b"", 1), 5.0)


def test_qwen_decision_words() -> None:
    """Qwen Code's `decision` takes deny/allow/ask too (types.ts HookDecision); Claude
    Code's stays approve/block (a "deny" there is a rejected answer)."""
    assert _outcome(QWEN, {"decision": "deny", "reason": "no"}).answer["permissionDecision"] \
        == "deny"  # fmt: skip
    assert _outcome(QWEN, {"decision": "ask"}).answer["permissionDecision"] == "ask"
    assert _outcome(QWEN, {"decision": "allow"}).answer["permissionDecision"] == "allow"
    rejected = _outcome(CLAUDE, {"decision": "deny"})
    assert rejected.status == "failed"
    assert rejected.error == (
        'PreToolUse hook answer rejected: decision must be "approve" or "block", not \'deny\''
    )


def test_qwen_reads_hook_specific_output_without_its_event_name() -> None:
    """Qwen Code reads hookSpecificOutput as a plain record (types.ts@01ed106): its own
    /review guard denies without a hookEventName, and Qwen blocks on it, from a
    repository's file too. Claude Code rejects it; the closed-source Claude-shaped agents
    are read as Qwen is (unconfirmed: the strict reading would lose a deny they may honour)."""
    answer = {"decision": "deny", "reason": "r",
              "hookSpecificOutput": {"permissionDecision": "deny"}}  # fmt: skip
    for source in ("user", "project"):
        denied = _outcome(QWEN, answer, source=source)
        assert (denied.status, denied.answer["blocked"]) == ("completed", True)
    rejected = _outcome(CLAUDE, {"hookSpecificOutput": {"permissionDecision": "deny"}})
    assert rejected.status == "failed"
    assert "hookEventName is missing" in (rejected.error or "")
    for dialect in (CODEBUDDY, IFLOW, AUGMENT, FACTORY, DEVIN):
        denied = _outcome(dialect, {"hookSpecificOutput": {"permissionDecision": "deny"}})
        assert (denied.status, denied.answer["blocked"]) == ("completed", True), dialect.agent


def test_qwen_project_hook_may_not_allow_by_its_own_words() -> None:
    """A repository's Qwen hook that answers `decision: "allow"` decides nothing (it
    would pass Claude's rule, which knows only "approve"); its deny still blocks."""
    allowed = _outcome(QWEN, {"decision": "allow", "reason": "trust me"}, source="project")
    assert allowed.answer["permissionDecision"] is None
    assert "its allow ignored (untrusted" in (allowed.error or "")
    denied = _outcome(QWEN, {"decision": "deny", "reason": "no"}, source="project")
    assert denied.answer["blocked"] is True
    out, note = QWEN.untrusted_stdout(b'{"decision": "allow", "reason": "x"}')
    assert (json.loads(out), note is not None) == ({}, True)
    out, note = CLAUDE.untrusted_stdout(b'{"decision": "allow"}')
    assert (out, note) == (b'{"decision": "allow"}', None)  # Claude rejects it itself


# -- item 3: exec ------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", NEW, ids=lambda d: d.agent)
@pytest.mark.parametrize("fail_closed", [False, True])
def test_exec_wrapper_failures_are_the_agents_non_blocking_error_or_its_block(
    home: Path, ws: Path, dialect: ClaudeDialect, fail_closed: bool
) -> None:
    """A missing image, a timeout and an OOM (the sandbox, not the hook, ending the run):
    exit 1 with one line on stderr, which these agents read as a non-blocking error;
    exit 2 (their block) under fail-closed. Nothing is written to stdout."""
    settings = Settings(agent=dialect.agent, fail_closed=fail_closed)

    def missing(_request: ExecRequest) -> ExecResult:
        raise ImageMissing("image sandboxrun/hooks:latest is not present")

    for answer in (missing, lambda _r: ExecResult(None, b"", b"", 1, timed_out=True),
                   lambda _r: ExecResult(137, b"", b"", 1, oom_killed=True)):  # fmt: skip
        backend = FakeBackend(answer)
        request = exec_request(settings, ["hook"], b"{}", str(ws), cwd=str(ws))
        out = run_exec(settings, backend, request)
        assert out.stdout == b""
        assert out.exit_code == (2 if fail_closed else 1)
        assert out.stderr.decode().count("\n") == 1


def test_exec_untrusted_qwen_drops_an_allow_and_passes_a_user_command_whole(
    home: Path, ws: Path
) -> None:
    answer = b'{"decision": "allow", "reason": "fine"}\n'
    backend = FakeBackend(lambda _r: ExecResult(0, answer, b"", 1))
    settings = Settings(agent="qwen")
    request = exec_request(settings, ["hook"], b"{}", str(ws), cwd=str(ws))
    untrusted = run_exec(settings, backend, request, untrusted=True)
    assert (untrusted.stdout, untrusted.exit_code) == (b"{}\n", 0)
    assert b"its allow ignored (untrusted" in untrusted.stderr
    trusted = run_exec(settings, backend, request)
    assert trusted.stdout == answer


# -- items 1 and 5 through the CLI: list, run --------------------------------------


@pytest.fixture
def cwd(ws: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ws)
    return ws


def test_list_shows_every_hook_found_and_skipped(
    home: Path, cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(cwd / ".devin/hooks.v1.json", {**table("guard.sh"), "Nope": []})
    write(cwd / ".devin/config.json", "{ // a comment\n}")
    assert cli.main(["list", "--agent", "devin"]) == 0
    out = capsys.readouterr().out
    assert "guard.sh" in out
    assert "Nope: unknown event name" in out
    assert "config.json" in out and "not valid JSON" in out


def test_run_a_qwen_event_through_the_cli(
    home: Path, cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    engine: Any,  # noqa: F811 - the shared fixture
) -> None:  # fmt: skip
    write(cwd / ".qwen/settings.json", {"hooks": table("guard.sh", timeout=7000)})
    seen = engine(default=ExecResult(2, b"", b"rm is not allowed\n", 3))
    event = {"session_id": "s", "cwd": str(cwd), "hook_event_name": "PreToolUse",
             "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /"}}  # fmt: skip
    feed(monkeypatch, json.dumps(event))
    assert cli.main(["run", "PreToolUse", "--agent", "qwen"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["permissionDecision"], doc["reason"]) == ("deny", "rm is not allowed")
    (request,) = seen.requests
    assert request.timeout == 7.0
    assert request.env["QWEN_PROJECT_DIR"] == str(cwd)


QWEN_SESSION = {
    "session_id": "535b8549-d555-4628-8822-c933aceb9535",
    "prompt_id": "535b8549-d555-4628-8822-c933aceb9535########0",
}
QWEN_MODEL = {
    "QWEN_CODE_MODEL": "qwen/qwen3-coder",
    "QWEN_CODE_MODEL_IDENTITY": "gpt-fake@228547ac",
}


def test_exec_gives_a_qwen_hook_the_session_variables_qwen_sets(home: Path, ws: Path) -> None:
    """Qwen Code 0.24.4 sets QWEN_CODE_SESSION_ID, _PROMPT_ID and _AGENT_ID (from the hook
    input; "" outside a subagent) and QWEN_CODE_MODEL(_IDENTITY) for a hook
    (tests/agents/test_qwen.py probes it): the same inside, and nothing else of the
    agent's environment (not the API key, nor QWEN_CODE_PROJECT_DIR and QWEN_CODE_CLI,
    folders of the host)."""
    environ = {**QWEN_MODEL, "OPENAI_API_KEY": "sk-secret", "QWEN_CODE_CLI": "/opt/q/cli.js",
               "QWEN_CODE_PROJECT_DIR": f"{home}/.qwen/projects/x",
               "QWEN_CODE_SESSION_ID": "from-the-environment"}  # fmt: skip
    event = json.dumps({**QWEN_SESSION, "cwd": str(ws), "hook_event_name": "PreToolUse"})
    request = exec_request(Settings(agent="qwen"), ["hook"], event.encode(), None, environ,
                           cwd=str(ws))  # fmt: skip
    assert {k: v for k, v in request.env.items() if k.startswith("QWEN_CODE_")} == {
        "QWEN_CODE_SESSION_ID": QWEN_SESSION["session_id"],
        "QWEN_CODE_PROMPT_ID": QWEN_SESSION["prompt_id"], "QWEN_CODE_AGENT_ID": "", **QWEN_MODEL,
    }  # fmt: skip
    assert "sk-secret" not in json.dumps(request.env)
    claude = exec_request(Settings(agent="claude"), ["hook"], event.encode(), None, environ,
                          cwd=str(ws))  # fmt: skip
    assert not [k for k in claude.env if k.startswith("QWEN_CODE_")]


@pytest.mark.parametrize(
    "value", ["a\nINJECTED=1", "x" * 257, "two words", "", 42, None, ["s"], "caf\u00e9"]
)
def test_a_qwen_session_variable_holds_an_identifier_or_nothing(
    home: Path, ws: Path, value: Any
) -> None:
    """The event and the environment a repository's hook runs with are the repository's
    to shape: a value that is not an identifier is empty inside, never passed as is."""
    event = json.dumps({"session_id": value, "prompt_id": value, "agent_id": value})
    environ = {"QWEN_CODE_MODEL": value} if isinstance(value, str) else {}
    request = exec_request(Settings(agent="qwen"), ["hook"], event.encode(), None, environ,
                           cwd=str(ws))  # fmt: skip
    assert {request.env[k] for k in request.env if k.startswith("QWEN_CODE_")} == {""}


def test_run_gives_a_qwen_hook_the_session_variables_of_its_event(
    home: Path, cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    engine: Any,  # noqa: F811 - the shared fixture
) -> None:  # fmt: skip
    """`run` (the forwarders of `install --managed`) has the event, not Qwen's environment:
    the session's variables, not the model's."""
    write(cwd / ".qwen/settings.json", {"hooks": table("guard.sh")})
    seen = engine(default=ExecResult(0, b"", b"", 3))
    event = {**QWEN_SESSION, "cwd": str(cwd), "hook_event_name": "PreToolUse",
             "tool_name": "run_shell_command", "tool_input": {"command": "ls"}}  # fmt: skip
    feed(monkeypatch, json.dumps(event))
    monkeypatch.setenv("QWEN_CODE_MODEL", "gpt-fake")
    assert cli.main(["run", "PreToolUse", "--agent", "qwen"]) == 0
    (request,) = seen.requests
    assert request.env["QWEN_CODE_SESSION_ID"] == QWEN_SESSION["session_id"]
    assert request.env["QWEN_CODE_PROMPT_ID"] == QWEN_SESSION["prompt_id"]
    assert "QWEN_CODE_MODEL" not in request.env


def test_exec_ends_a_qwen_hook_without_timeout_before_qwen_does(home: Path, ws: Path) -> None:
    """Qwen Code 0.24.4 ends a hook without `timeout` at 60 s itself and reads that as a
    non-blocking error: under fail-closed sandboxrun's block must come first."""
    settings = Settings(agent="qwen", fail_closed=True)
    backend = FakeBackend(lambda _r: ExecResult(None, b"", b"", 58, timed_out=True))
    request = exec_request(settings, ["hook"], b"{}", str(ws), cwd=str(ws))
    assert request.timeout < 60
    assert run_exec(settings, backend, request).exit_code == 2


def test_qwen_reads_small_timeouts_as_seconds_and_ignores_bad_ones(home: Path, ws: Path) -> None:
    """Qwen Code today (hook-timeout.ts): below 1000 a command hook's timeout is seconds,
    from 1000 milliseconds (its old unit); a value that is not a positive number is
    ignored and its default applies, so the hook still runs (Claude Code's rule skips it)."""
    hooks = [{"type": "command", "command": f"h{i}.sh", "timeout": t}
             for i, t in enumerate((30, 1000, "30s", 0, -5))]  # fmt: skip
    doc = {"PreToolUse": [{"hooks": hooks}]}
    write(ws / ".qwen/settings.json", {"hooks": doc})
    found = QWEN.discover("PreToolUse", [str(ws)], str(home))
    assert [(h.name, h.timeout) for h in found.hooks] == [
        ("h0.sh", 30.0), ("h1.sh", 1.0), ("h2.sh", None), ("h3.sh", None), ("h4.sh", None)
    ]  # fmt: skip
    assert found.skipped == ()
    assert QWEN.default_timeout == 58.0  # below 0.24.4's DEFAULT_COMMAND_HOOK_TIMEOUT_SECONDS
    write(ws / ".claude/settings.json", {"hooks": doc})
    claude = CLAUDE.discover("PreToolUse", [str(ws)], str(home))
    assert [h.name for h in claude.hooks] == ["h0.sh", "h1.sh"]


def test_run_an_augment_event_through_the_cli(
    home: Path, cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    engine: Any,  # noqa: F811 - the shared fixture
) -> None:  # fmt: skip
    """Auggie's event names its roots in `workspace_roots` and its session in
    `conversation_id`: the hook reads them back (no `cwd`, no `session_id` added), its
    millisecond timeout is seconds in the request, and its deny is the answer."""
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "no"}}  # fmt: skip
    write(cwd / ".augment/settings.json", {"hooks": table("guard.sh", timeout=5000)})
    seen = engine(default=ExecResult(0, json.dumps(deny).encode(), b"", 3))
    event = {"hook_event_name": "PreToolUse", "conversation_id": "c1",
             "workspace_roots": [str(cwd)], "tool_name": "launch-process",
             "tool_input": {"command": "rm -rf /"}}  # fmt: skip
    feed(monkeypatch, json.dumps(event))
    assert cli.main(["run", "PreToolUse", "--agent", "augment"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["permissionDecision"], doc["reason"]) == ("deny", "no")
    (request,) = seen.requests
    sent = json.loads(request.stdin)
    assert sent["workspace_roots"] == [str(cwd)] and sent["conversation_id"] == "c1"
    assert "cwd" not in sent and "session_id" not in sent
    assert request.timeout == 5.0
