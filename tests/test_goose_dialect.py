"""Goose's hooks (`--agent goose`): plugins of the user and the project, disabledPlugins,
hooks.json read as Goose's serde reads it, Rust-regex matchers, the decision table of
`classify_output`, `on_failure`, repository hooks untrusted, exec's own failures and
`${PLUGIN_ROOT}`. Protocol logic only (the fake backend). Facts: block/goose
`crates/goose/src/hooks/mod.rs@0825b570`, `crates/goose/src/plugins/discovery.rs@21aecaf8`
(see `sandboxrun/_dialects/goose/dialect.py`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import HookFactory, Settings
from sandboxrun._dialects.goose import GOOSE
from sandboxrun._dialects.goose.dialect import classify
from sandboxrun._errors import EngineError
from sandboxrun._runner.exec import exec_request, run_exec
from sandboxrun._types import ExecRequest, ExecResult, HookOutcome, HookSpec

from .conftest import FakeBackend


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def plugin(base: Path, name: str, hooks: Any) -> Path:
    folder = base / ".agents" / "plugins" / name
    (folder / "hooks").mkdir(parents=True, exist_ok=True)
    text = hooks if isinstance(hooks, str) else json.dumps({"hooks": hooks})
    (folder / "hooks" / "hooks.json").write_text(text)
    return folder


def settings_file(base: Path, data: Any, local: bool = False) -> None:
    folder = base / ".config" / "goose"
    folder.mkdir(parents=True, exist_ok=True)
    name = "settings.local.json" if local else "settings.json"
    (folder / name).write_text(json.dumps(data))


def rule(command: str = "g", matcher: str | None = None, **action: Any) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **action}]}
    if matcher is not None:
        group["matcher"] = matcher
    return group


def outcome(event: str, stdout: bytes = b"", code: int = 0, source: str = "user",
            stderr: bytes = b"why", **spec: Any) -> HookOutcome:  # fmt: skip
    hook = HookSpec(event, "h", source, ("x",), "/", (), **spec)
    return GOOSE.interpret(hook, ExecResult(code, stdout, stderr, 1), 30.0)


# -- discovery ---------------------------------------------------------------------------


def test_plugins_of_user_and_project_with_plugin_root(ws: Path, home: Path) -> None:
    user = plugin(home, "guard", {"PreToolUse": [rule("${PLUGIN_ROOT}/g.sh", "developer__shell")]})
    proj = plugin(ws, "lint", {"PostToolUse": [rule("x", timeout=5)]})
    found = GOOSE.discover(None, [str(ws)], str(home))
    assert [(h.source, h.plugin, h.hook_name) for h in found.hooks] == [
        ("user", "guard", "PreToolUse"), ("project", "lint", "PostToolUse"),
    ]  # fmt: skip
    guard, lint = found.hooks
    assert guard.argv == ("/bin/sh", "-c", f"{user}/g.sh") and guard.env == {
        "PLUGIN_ROOT": str(user)
    }
    assert str(user) in guard.mounts and guard.workdir == str(ws) and guard.timeout == 30.0
    assert lint.timeout == 5.0 and lint.env == {"PLUGIN_ROOT": str(proj)}


def test_disabled_plugins_and_a_repository_never_disables_the_users(ws: Path, home: Path) -> None:
    plugin(home, "mine", {"Stop": [rule()]})
    plugin(home, "off", {"Stop": [rule()]})
    plugin(ws, "theirs", {"Stop": [rule()]})
    settings_file(home, {"disabledPlugins": ["off"]})
    settings_file(ws, {"disabledPlugins": ["mine", "theirs"]})
    found = GOOSE.discover(None, [str(ws)], str(home))
    assert [h.plugin for h in found.hooks] == ["mine"]
    reasons = " | ".join(s.reason for s in found.skipped)
    assert "a repository never turns off the user's hooks" in reasons
    assert (
        "disabled in the user settings" in reasons and "disabled in the project settings" in reasons
    )


def test_a_project_plugin_never_shadows_the_users_of_the_same_name(ws: Path, home: Path) -> None:
    plugin(home, "guard", {"PreToolUse": [rule("mine")]})
    plugin(ws, "guard", {"PreToolUse": [rule("theirs")]})
    found = GOOSE.discover("PreToolUse", [str(ws)], str(home))
    assert [h.name for h in found.hooks] == ["mine", "theirs"]
    assert any("runs both" in s.reason for s in found.skipped)


def test_local_settings_reenable_the_projects_plugin_as_in_goose(ws: Path, home: Path) -> None:
    plugin(ws, "p", {"Stop": [rule()]})
    settings_file(ws, {"disabledPlugins": ["p"]})
    settings_file(ws, {"enabledPlugins": ["p"]}, local=True)
    assert [h.plugin for h in GOOSE.discover(None, [str(ws)], str(home)).hooks] == ["p"]


def test_what_serde_refuses_drops_the_whole_file(ws: Path, home: Path) -> None:
    good = rule("ok")
    for bad in (rule(timeout=1.5), rule(on_failure="Block"), {"matcher": 3, "hooks": []},
                rule(timeout=-1), {"hooks": [{"command": ["x"]}]}):  # fmt: skip
        plugin(ws, "p", {"PreToolUse": [good, bad]})
        found = GOOSE.discover(None, [str(ws)], str(home))
        assert found.hooks == () and "Goose skips the file" in found.skipped[-1].reason, bad
    plugin(ws, "p", "{not json")
    assert GOOSE.discover(None, [str(ws)], str(home)).hooks == ()


def test_skipped_rules_and_entries_keep_the_rest(ws: Path, home: Path) -> None:
    plugin(ws, "p", {
        "PreToolUse": [rule("star", "*"), rule("look", "(?!x)y"), rule("ok", "shell|write"),
                       {"hooks": [{"type": "prompt", "command": "p"}, {"type": "command"}]}],
        "NoSuchEvent": [rule(on_failure="nonsense")],  # an unknown event: not even parsed
    })  # fmt: skip
    found = GOOSE.discover(None, [str(ws)], str(home))
    # `*` does not parse: a repository's pattern is its hook's error when used (`patterns`)
    assert [h.name for h in found.hooks] == ["star", "ok"]
    reasons = " | ".join(s.reason for s in found.skipped)
    assert "lookaround" in reasons and "'prompt'" in reasons
    assert "has no command" in reasons and "unknown event 'NoSuchEvent'" in reasons


def test_type_defaults_to_command_and_timeout_zero_fails_at_once(ws: Path, home: Path) -> None:
    plugin(ws, "p", {"PreToolUse": [{"hooks": [{"command": "c", "timeout": 0}]}]})
    [hook] = GOOSE.discover(None, [str(ws)], str(home)).hooks
    assert hook.timeout == 0.001


def test_a_project_plugin_leading_out_is_not_run(ws: Path, home: Path, tmp_path: Path) -> None:
    outside = plugin(tmp_path / "elsewhere", "x", {"PreToolUse": [rule()]})
    (ws / ".agents" / "plugins").mkdir(parents=True)
    os.symlink(outside, ws / ".agents" / "plugins" / "x")
    inner = plugin(ws, "y", {})
    (inner / "hooks" / "hooks.json").unlink()
    os.symlink(outside / "hooks" / "hooks.json", inner / "hooks" / "hooks.json")
    found = GOOSE.discover(None, [str(ws)], str(home))
    assert found.hooks == ()
    assert sum("leads out of the project" in s.reason for s in found.skipped) == 2


def test_matchers_are_unanchored_regexes_on_matcher_context() -> None:
    spec = HookSpec("PreToolUse", "h", "user", ("x",), "/", (), matcher="shell")
    assert GOOSE.matches(spec, {"matcher_context": "developer__shell"})
    assert not GOOSE.matches(spec, {"matcher_context": "developer__write"})
    assert GOOSE.matches(spec, {"tool_name": "developer__shell"})  # no matcher_context
    assert GOOSE.matches(HookSpec("Stop", "h", "user", ("x",), "/", ()), {})


# -- the answer ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "stdout", "verdict"),
    [
        (2, b"", "block"),
        (2, b'{"decision":"allow"}', "block"),
        (1, b'{"decision":"block","reason":"r"}', "block"),
        (0, b'  {"decision":"block"}\n', "block"),
        (0, b"", "allow"),
        (0, b" \n", "allow"),
        (0, b'{"decision":"allow","extra":1}', "allow"),
        (1, b'{"decision":"allow"}', "none"),
        (0, b"log line", "none"),
        (0, b'{"decision":"allow"} trailing', "none"),
        (0, b'{"decision":"allow","decision":"block"}', "none"),  # serde: duplicate field
        (0, b'{"decision":"block","reason":3}', "none"),  # serde: reason must be a string
        (0, b'{"decision":"allow","x":NaN}', "none"),
        (0, b'{"decision":"maybe"}', "none"),
        (0, b'\xff{"decision":"allow"}', "none"),  # strict UTF-8
        (0, b'{"decision":"allow","x":' + b"[" * 200 + b"]" * 200 + b"}", "none"),
        (3, b"", "none"),
    ],
)
def test_the_decision_table(code: int, stdout: bytes, verdict: str) -> None:
    assert classify(code, stdout, b"reason")[0] == verdict


def test_reasons_of_a_deny() -> None:
    assert classify(2, b"", b"  no!\n") == ("block", "no!")
    assert classify(2, b"", b"") == ("block", "denied by plugin hook")
    assert classify(0, b'{"decision":"block","reason":"because"}', b"") == ("block", "because")


def test_on_failure_blocks_pretooluse_only_and_the_chain_stops_at_the_first_deny() -> None:
    broken = outcome("PreToolUse", b"oops", fail_closed=True)
    assert broken.status == "failed"
    assert GOOSE.combine([broken], False)["decision"] == "block"
    stop = outcome("Stop", b"oops", fail_closed=True)
    assert GOOSE.combine([stop], False)["decision"] == "allow"
    assert GOOSE.combine([outcome("PreToolUse", b"oops")], False)["decision"] == "allow"
    assert GOOSE.combine([outcome("PreToolUse", b"oops")], True)["decision"] == "block"
    first = outcome("PreToolUse", code=2, stderr=b"first")
    second = outcome("PreToolUse", code=2, stderr=b"second")
    assert GOOSE.combine([outcome("PreToolUse"), first, second], False)["reason"] == "first"


def test_only_pretooluse_and_stop_block() -> None:
    for event in ("PostToolUse", "UserPromptSubmit", "BeforeShellExecution", "SessionStart"):
        assert GOOSE.combine([outcome(event, code=2)], True)["decision"] == "allow"
    assert GOOSE.combine([outcome("Stop", code=2)], False)["decision"] == "block"


def test_a_repository_hooks_allow_is_no_decision() -> None:
    theirs = outcome("PreToolUse", b'{"decision":"allow"}', source="project")
    assert theirs.answer == {"decision": "allow", "blocked": False}
    assert "counts as no decision" in (theirs.error or "")
    denied = outcome("PreToolUse", b'{"decision":"block","reason":"r"}', source="project")
    assert denied.answer and denied.answer["decision"] == "block"


def test_run_gives_goose_its_event_field_and_plugin_root(ws: Path, home: Path) -> None:
    folder = plugin(home, "g", {"PreToolUse": [rule("${PLUGIN_ROOT}/x.sh", "shell")]})
    fake = FakeBackend(lambda r: ExecResult(2, b"", b"nope", 1))
    event = {"session_id": "s", "matcher_context": "developer__shell",
             "tool_name": "developer__shell", "tool_input": {"command": "rm -rf /"},
             "working_dir": str(ws)}  # fmt: skip
    result = HookFactory(Settings.load(agent="goose"), fake, home=str(home)).run(
        "PreToolUse", event
    )
    assert result.answer["decision"] == "block" and result.answer["reason"] == "nope"
    [request] = fake.requests
    sent = json.loads(request.stdin)
    assert sent["event"] == "PreToolUse" and "hook_event_name" not in sent
    assert request.env["PLUGIN_ROOT"] == str(folder) and str(folder) in request.mounts
    assert request.argv[-1] == f"{folder}/x.sh"


# -- exec -------------------------------------------------------------------------------


def _exec(ws: Path, command: str, handler: Any, environ: dict[str, str] | None = None,
          fail_closed: bool = False) -> tuple[ExecRequest, Any]:  # fmt: skip
    settings = Settings.load(agent="goose", fail_closed=fail_closed)
    stdin = json.dumps({"event": "PreToolUse", "working_dir": str(ws)}).encode()
    request = exec_request(settings, [command], stdin, None, environ or {}, cwd=str(ws))
    return request, run_exec(settings, FakeBackend(handler), request, environ or {})


def _raise(request: ExecRequest) -> ExecResult:
    raise EngineError("image sandboxrun-hook not found")


@pytest.mark.parametrize("fail_closed", [False, True])
def test_our_failures_are_no_decision_or_with_fail_closed_a_deny(
    ws: Path, home: Path, fail_closed: bool
) -> None:
    """Exit 1, reason on stderr, nothing on stdout: Goose's "no decision", which it
    turns into a deny itself where the entry says on_failure: block."""
    for handler in (_raise, lambda r: ExecResult(None, b"", b"", 1, timed_out=True)):
        _, out = _exec(ws, "hook", handler, fail_closed=fail_closed)
        assert (out.stdout, out.exit_code) == (b"", 2 if fail_closed else 1)
        assert classify(out.exit_code, out.stdout, out.stderr)[0] == (
            "block" if fail_closed else "none"
        )


def test_exec_replaces_plugin_root_only_for_a_real_plugin_folder(
    ws: Path, home: Path, tmp_path: Path
) -> None:
    folder = plugin(home, "my plugin's", {})
    ok = lambda r: ExecResult(0, b"", b"", 1)  # noqa: E731
    request, _ = _exec(ws, "${PLUGIN_ROOT}/x.sh", ok, {"PLUGIN_ROOT": str(folder)})
    assert request.argv == ("/bin/sh", "-c", f"{folder}/x.sh")
    assert request.env["PLUGIN_ROOT"] == str(folder) and str(folder) in request.mounts
    project = plugin(ws, "p", {})
    request, _ = _exec(ws, "${PLUGIN_ROOT}/x.sh", ok, {"PLUGIN_ROOT": str(project)})
    assert request.env["PLUGIN_ROOT"] == str(project)
    for stray in (str(home / ".ssh"), str(home / ".agents" / "plugins"),
                  f"{folder}/../../../.ssh", "relative", str(tmp_path)):  # fmt: skip
        request, _ = _exec(ws, "${PLUGIN_ROOT}/x.sh", ok, {"PLUGIN_ROOT": stray})
        assert "PLUGIN_ROOT" not in request.env and request.argv[-1] == "${PLUGIN_ROOT}/x.sh"
        assert stray not in request.mounts


def test_exec_passes_a_hooks_answer_byte_for_byte(ws: Path, home: Path) -> None:
    body = b'{"decision":"block","reason":"r"}\n'
    _, out = _exec(ws, "hook", lambda r: ExecResult(1, body, b"e", 1))
    assert (out.stdout, out.exit_code) == (body, 1)
