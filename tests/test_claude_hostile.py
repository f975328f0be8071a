"""Claude-family dialect against hostile input: bytes that are not valid Unicode, numbers
and files that are not what a settings file should hold, matchers that would stall, a
session started in a subfolder, and a workspace hook's decisions (issue #8)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import ExecResult, HookSpec, Settings
from sandboxrun._dialects.claude.dialect import CLAUDE
from sandboxrun._dialects.claude.matchers import MATCH_TIMEOUT, MAX_WORKSPACE_PATTERN
from sandboxrun._dialects.claude.settings import MAX_SETTINGS_BYTES, project_root
from sandboxrun._dialects.patterns import PatternError

CATASTROPHIC = ".*" * 100 + r"\d"  # 202 characters: under the workspace length cap


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def entry(command: str = "g.sh", matcher: str | None = None, **hook: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **hook}]}
    if matcher is not None:
        doc["matcher"] = matcher
    return doc


def settings(*entries: dict[str, Any], event: str = "PreToolUse") -> dict[str, Any]:
    return {"hooks": {event: list(entries)}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def found(home: Path, ws: Path, hook: str = "PreToolUse"):
    return CLAUDE.discover(hook, [str(ws)], str(home))


def spec(source: str, matcher: str | None = None, event: str = "PreToolUse") -> HookSpec:
    return HookSpec(
        event, "g.sh", source, ("/bin/sh", "-c", "g.sh"), "/ws", ("/ws",), {}, None, matcher
    )


# -- bytes that are not valid Unicode ------------------------------------------------


def test_event_with_a_lone_surrogate_gives_bytes_that_read_back_the_same() -> None:
    """An event holding a lone surrogate (half an emoji) becomes UTF-8 bytes that decode
    back to exactly the event the agent gave."""
    event = {"tool_input": {"command": "echo \ud83d", "k\udc00": ["\\\ud800"]}, "n": 1e400}
    raw = CLAUDE.prepare_input("PreToolUse", event, ["/ws"])
    raw.decode("utf-8")  # strict: valid UTF-8
    back = json.loads(raw)
    assert back["tool_input"] == event["tool_input"]
    assert back["n"] is None  # JSON has no infinity: written as JavaScript writes it


def test_answer_with_a_lone_surrogate_reads_as_a_replacement_character() -> None:
    """A hook answering `"\\ud800"` in its reason still denies, with a string that encodes."""
    out = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                "permissionDecisionReason": "no \ud800 way"}}
    ).encode()  # ensure_ascii: the bytes hold the escape `\ud800`  # fmt: skip
    outcome = CLAUDE.interpret(spec("user"), ExecResult(0, out, b"", 1), 60)
    combined = CLAUDE.combine([outcome], False)
    assert combined["permissionDecision"] == "deny"
    assert combined["reason"] == "no \ufffd way"
    json.dumps(combined, ensure_ascii=False).encode("utf-8")


def test_updated_input_with_surrogates_encodes() -> None:
    """Every string of a trusted hook's updatedInput, keys too, is valid Unicode."""
    out = b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",'
    out += b' "updatedInput": {"c\\udc80": ["x\\ud800"]}}}'
    outcome = CLAUDE.interpret(spec("user"), ExecResult(0, out, b"", 1), 60)
    assert outcome.answer["updatedInput"] == {"c\ufffd": ["x\ufffd"]}


@pytest.mark.parametrize("field", ["command", "matcher"])
def test_settings_string_with_a_lone_surrogate_skips_only_that_entry(
    home: Path, ws: Path, field: str
) -> None:
    """A command or matcher holding `\\ud800` skips its entry with a reason; others load."""
    bad = entry("x\ud800") if field == "command" else entry(matcher="Ba\ud800sh")
    path = write(ws / ".claude/settings.json", json.dumps(settings(bad, entry("good.sh"))))
    write(home / ".claude/settings.json", settings(entry("user.sh")))
    result = found(home, ws)
    assert [h.name for h in result.hooks] == ["user.sh", "good.sh"]
    [skip] = result.skipped
    assert skip.path == str(path)
    assert "not valid Unicode" in skip.reason and "hooks.PreToolUse[0]" in skip.reason


# -- numbers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("1" * 400, "at most 3600 seconds, not an integer of 400 digits"),
        ("1e300", "at most 3600 seconds, not 1e+300"),
        ("NaN", "at most 3600 seconds, not nan"),
        ("Infinity", "at most 3600 seconds, not inf"),
        ("-1", "at most 3600 seconds, not -1"),
        ("3601", "at most 3600 seconds, not 3601"),
        ("true", "must be a number of seconds, not True"),
        ('"9"', "must be a number of seconds, not '9'"),
    ],
)
def test_out_of_range_timeout_skips_that_entry_naming_file_and_path(
    home: Path, ws: Path, raw: str, why: str
) -> None:
    """A timeout that is huge, not finite, negative, a bool or a string skips its entry only."""
    text = json.dumps(settings(entry("good.sh"), entry("bad.sh", timeout=0)))
    path = write(ws / ".claude/settings.json", text.replace('"timeout": 0', f'"timeout": {raw}'))
    write(home / ".claude/settings.json", settings(entry("user.sh", timeout=3600)))
    result = found(home, ws)
    assert [(h.name, h.timeout) for h in result.hooks] == [("user.sh", 3600.0), ("good.sh", None)]
    [skip] = result.skipped
    assert (skip.path, skip.source) == (str(path), "project")
    assert skip.reason.startswith("hooks.PreToolUse[1].hooks[0]: timeout must be ")
    assert skip.reason.endswith(why)


def test_integer_too_long_to_convert_skips_that_file_only(home: Path, ws: Path) -> None:
    """A 5000-digit number (past Python's int conversion limit) skips that file, not a crash."""
    text = json.dumps(settings(entry("bad.sh", timeout=0))).replace(
        '"timeout": 0', '"timeout": ' + "9" * 5000
    )
    write(ws / ".claude/settings.json", text)
    write(home / ".claude/settings.json", settings(entry("user.sh")))
    result = found(home, ws)
    assert [h.name for h in result.hooks] == ["user.sh"]
    assert result.skipped[0].reason.startswith("not valid JSON: Exceeds the limit")


# -- files ---------------------------------------------------------------------------


def refused(home: Path, ws: Path, make: Any) -> str:
    """Make the project settings file with `make(path)`; the user's hook must still load."""
    write(home / ".claude/settings.json", settings(entry("user.sh")))
    path = ws / ".claude/settings.json"
    path.parent.mkdir(parents=True)
    make(path)
    started = time.monotonic()
    result = found(home, ws)
    assert time.monotonic() - started < 5
    assert [h.name for h in result.hooks] == ["user.sh"]
    [skip] = result.skipped
    assert skip.path == str(path)
    return skip.reason


def test_settings_symlinked_to_dev_zero_is_refused(home: Path, ws: Path) -> None:
    """A settings file that is a symlink to /dev/zero is not read (it never ends)."""
    reason = refused(home, ws, lambda p: p.symlink_to("/dev/zero"))
    assert reason == "is not a regular file (a device, FIFO or socket): not read"


def test_settings_fifo_is_refused_without_blocking(home: Path, ws: Path) -> None:
    """A FIFO with no writer (open would block forever) is refused at once."""
    reason = refused(home, ws, lambda p: os.mkfifo(p))
    assert reason == "is not a regular file (a device, FIFO or socket): not read"


def test_huge_settings_file_is_refused(home: Path, ws: Path) -> None:
    """A settings file over the size cap is not read."""
    reason = refused(home, ws, lambda p: p.write_bytes(b" " * (MAX_SETTINGS_BYTES + 1)))
    assert reason == f"larger than {MAX_SETTINGS_BYTES} bytes: not read"


def test_settings_symlinked_to_a_regular_file_is_read(home: Path, ws: Path, tmp_path: Path) -> None:
    """A symlink to a regular file is legitimate (dotfile managers do it)."""
    real = write(tmp_path / "dotfiles/settings.json", settings(entry("p.sh")))
    (ws / ".claude").mkdir()
    (ws / ".claude/settings.json").symlink_to(real)
    assert [h.name for h in found(home, ws).hooks] == ["p.sh"]


# -- matchers ------------------------------------------------------------------------


def test_invalid_matcher_matches_for_trusted_sources_and_is_an_error_for_workspace(
    home: Path, ws: Path
) -> None:
    """`Bash(` in the user's file runs the hook for every tool (said in `skipped`); in the
    project's file the hook is kept, and cannot be evaluated (its `error`, by the runner)."""
    write(home / ".claude/settings.json", settings(entry("u.sh", matcher="Bash(")))
    write(ws / ".claude/settings.json", settings(entry("p.sh", matcher="Bash(")))
    result = found(home, ws)
    user, project = result.hooks
    assert (user.name, user.source, project.name) == ("u.sh", "user", "p.sh")
    assert CLAUDE.matches(user, {"tool_name": "Read"})
    with pytest.raises(PatternError, match="invalid regular expression"):
        CLAUDE.matches(project, {"tool_name": "Read"})
    assert [(s.source, s.reason) for s in result.skipped] == [
        ("user", "hooks.PreToolUse[0].matcher: 'Bash(': invalid regular expression:"
                 " missing ) at position 5; runs for every event"),
    ]  # fmt: skip


def test_long_workspace_matcher_is_an_error(home: Path, ws: Path) -> None:
    """A workspace pattern over the length cap is kept and cannot be evaluated (never
    dropped in silence); the user's may be longer."""
    long = "(" + "|".join(f"Tool{i}" for i in range(60)) + ")"
    assert len(long) > MAX_WORKSPACE_PATTERN
    write(home / ".claude/settings.json", settings(entry("u.sh", matcher=long)))
    write(ws / ".claude/settings.json", settings(entry("p.sh", matcher=long)))
    result = found(home, ws)
    user, project = result.hooks
    assert CLAUDE.matches(user, {"tool_name": "Tool7"})
    with pytest.raises(PatternError, match=f"longer than {MAX_WORKSPACE_PATTERN} characters"):
        CLAUDE.matches(project, {"tool_name": "Tool7"})
    assert result.skipped == ()


@pytest.mark.parametrize("source", ["project", "local", "user"])
def test_catastrophic_matcher_is_cut_short(source: str) -> None:
    """Catastrophic backtracking ends at the match deadline: a workspace hook's pattern
    cannot be evaluated (its `error`), a trusted one runs."""
    hook = spec(source, CATASTROPHIC)
    started = time.monotonic()
    if source == "user":
        assert CLAUDE.matches(hook, {"tool_name": "a" * 5000})
    else:
        with pytest.raises(PatternError, match="search took over"):
            CLAUDE.matches(hook, {"tool_name": "a" * 5000})
    assert time.monotonic() - started < MATCH_TIMEOUT * 50


def test_matchers_keep_their_semantics() -> None:
    """Names are exact, regexes search, events without a match field ignore matchers."""
    assert CLAUDE.matches(spec("project", "Edit|Write"), {"tool_name": "Write"})
    assert not CLAUDE.matches(spec("project", "Edit|Write"), {"tool_name": "NotebookEdit"})
    assert CLAUDE.matches(spec("project", "Notebook.*"), {"tool_name": "NotebookEdit"})
    assert CLAUDE.matches(spec("project", "^mcp__"), {"tool_name": "mcp__x"})
    assert not CLAUDE.matches(spec("project", "^mcp__"), {"tool_name": 5})
    assert CLAUDE.matches(spec("project", "zzz", "Stop"), {})


# -- project root ---------------------------------------------------------------------


def test_project_root_is_found_from_a_subfolder(home: Path, tmp_path: Path) -> None:
    """From a subfolder, the nearest ancestor with .claude (or .git) is the project."""
    (tmp_path / "p/.claude").mkdir(parents=True)
    (tmp_path / "p/src/deep").mkdir(parents=True)
    assert project_root(str(tmp_path / "p/src/deep"), str(home), ".claude") == str(tmp_path / "p")
    (tmp_path / "g/.git").mkdir(parents=True)
    (tmp_path / "g/a").mkdir()
    assert project_root(str(tmp_path / "g/a"), str(home), ".claude") == str(tmp_path / "g")


def test_project_root_walk_never_reaches_the_home(tmp_path: Path) -> None:
    """The walk stops below the home: the user's ~/.claude is never a project folder."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / "code/x").mkdir(parents=True)
    assert project_root(str(home / "code/x"), str(home), ".claude") == str(home / "code/x")
    assert project_root(str(home), str(home), ".claude") == str(home)
    assert project_root("/", str(home), ".claude") == "/"


def test_subfolder_session_finds_the_project_hooks(home: Path, tmp_path: Path) -> None:
    """A session whose cwd is a subfolder runs the project's hooks in that cwd, with the
    project mounted and named by CLAUDE_PROJECT_DIR."""
    project = tmp_path / "p"
    write(project / ".claude/settings.json", settings(entry("guard.sh")))
    (project / "src").mkdir()
    [hook] = CLAUDE.discover("PreToolUse", [str(project / "src")], str(home)).hooks
    assert (hook.name, hook.source, hook.workdir) == ("guard.sh", "project", str(project / "src"))
    assert hook.mounts == (str(project),)
    assert hook.env == {"CLAUDE_PROJECT_DIR": str(project)}


# -- untrusted decisions --------------------------------------------------------------


def answer(**specific: Any) -> bytes:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}}).encode()


def read(source: str, out: bytes, event: str = "PreToolUse", trust: bool = False):
    return CLAUDE.interpret(spec(source, event=event), ExecResult(0, out, b"", 1), 60, trust)


def test_workspace_allow_is_no_decision() -> None:
    """A project hook's allow is read as no decision, named in its report."""
    outcome = read("project", answer(permissionDecision="allow", permissionDecisionReason="ok"))
    assert outcome.answer["permissionDecision"] is None
    assert outcome.answer["reason"] == ""
    assert outcome.error is not None and "its allow ignored" in outcome.error
    assert CLAUDE.combine([outcome], False)["permissionDecision"] is None


def test_workspace_legacy_approve_is_no_decision() -> None:
    """The legacy `decision: approve` of a local-settings hook is no decision either."""
    outcome = read("local", json.dumps({"decision": "approve", "reason": "fine"}).encode())
    assert outcome.answer["permissionDecision"] is None
    assert "its allow ignored" in (outcome.error or "")


def test_workspace_permission_request_allow_and_updated_input_are_dropped() -> None:
    """PermissionRequest's `behavior: allow` and its updatedInput from a project hook are dropped."""
    decision = {"behavior": "allow", "updatedInput": {"command": "evil"}}
    out = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    ).encode()
    outcome = read("project", out, event="PermissionRequest")
    assert outcome.answer["permissionDecision"] is None
    assert outcome.answer["updatedInput"] is None
    assert "its allow, updatedInput ignored" in (outcome.error or "")


def test_workspace_updated_input_is_dropped_even_with_ask() -> None:
    """A project hook's updatedInput never reaches the combined answer; its ask stays."""
    user = read("user", answer(permissionDecision="allow"))
    project = read("project", answer(permissionDecision="ask", updatedInput={"command": "evil"}))
    combined = CLAUDE.combine([user, project], False)
    assert combined["permissionDecision"] == "ask"
    assert combined["updatedInput"] is None
    assert project.error is not None and "updatedInput ignored" in project.error


def test_workspace_suppress_output_is_dropped() -> None:
    """A project hook cannot hide its own output from the user."""
    outcome = read("project", json.dumps({"suppressOutput": True}).encode())
    assert outcome.answer["suppressOutput"] is False
    assert "suppressOutput ignored" in (outcome.error or "")


@pytest.mark.parametrize(
    ("out", "event", "key", "value"),
    [
        (
            answer(permissionDecision="deny", permissionDecisionReason="no"),
            "PreToolUse",
            "permissionDecision",
            "deny",
        ),
        (answer(permissionDecision="ask"), "PreToolUse", "permissionDecision", "ask"),
        (answer(additionalContext="ctx"), "PreToolUse", "additionalContext", "ctx"),
        (
            json.dumps({"continue": False, "stopReason": "s"}).encode(),
            "PreToolUse",
            "continue",
            False,
        ),
        (json.dumps({"systemMessage": "m"}).encode(), "PreToolUse", "systemMessage", "m"),
        (json.dumps({"decision": "block", "reason": "r"}).encode(), "PostToolUse", "blocked", True),
        (json.dumps({"decision": "block", "reason": "r"}).encode(), "Stop", "blocked", True),
        (
            json.dumps({"decision": "block", "reason": "r"}).encode(),
            "UserPromptSubmit",
            "blocked",
            True,
        ),
    ],
)
def test_workspace_restrictive_fields_are_kept(
    out: bytes, event: str, key: str, value: Any
) -> None:
    """Deny, ask, block, stop, context and messages of a project hook are the agent's, unnoted."""
    outcome = read("project", out, event=event)
    assert outcome.answer[key] == value
    assert outcome.error is None


def test_trust_workspace_decisions_restores_the_agents_semantics() -> None:
    """With trust, a project hook's allow, updatedInput and suppressOutput are kept."""
    out = json.dumps(
        {"suppressOutput": True, "hookSpecificOutput": {"hookEventName": "PreToolUse",
         "permissionDecision": "allow", "updatedInput": {"command": "ls -a"}}}
    ).encode()  # fmt: skip
    outcome = read("project", out, trust=True)
    assert outcome.answer["permissionDecision"] == "allow"
    assert outcome.answer["updatedInput"] == {"command": "ls -a"}
    assert outcome.answer["suppressOutput"] is True
    assert outcome.error is None


def test_setting_reaches_the_dialect(home: Path, ws: Path) -> None:
    """`trust_workspace_decisions` is a user setting, false by default."""
    assert Settings.load().trust_workspace_decisions is False
    assert Settings.load(trust_workspace_decisions=True).trust_workspace_decisions is True
