"""Windsurf Cascade's hooks (`--agent windsurf`): the hooks.json levels in Windsurf's
order, `working_directory`, exit codes as the only answer, `post_setup_worktree`'s
variable, transcripts for the user's own hooks only, exec's own failures. Protocol
logic only (the fake backend); the real engine runs public Windsurf hooks in
tests/engine/test_real_hooks_windsurf.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import HookFactory, Settings
from sandboxrun._dialects.registry import DIALECTS
from sandboxrun._dialects.windsurf import WINDSURF, WindsurfDialect
from sandboxrun._errors import EngineError
from sandboxrun._runner.exec import exec_request, run_exec
from sandboxrun._sandbox.mounts import HOME_FOLDERS, HOOK_PLACES
from sandboxrun._types import ExecRequest, ExecResult, HookOutcome, HookSpec

from .conftest import FakeBackend


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def write(path: Path, hooks: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "hooks": hooks}))


def dialect(tmp_path: Path) -> WindsurfDialect:
    """Windsurf with its system folder in tmp_path (the real one is /etc/windsurf)."""
    return WindsurfDialect(system_dir=str(tmp_path / "etc-windsurf"))


def answer(code: int = 0, stderr: bytes = b"", stdout: bytes = b"") -> Any:
    return lambda request: ExecResult(code, stdout, stderr, 1)


def outcome(event: str, code: int, source: str = "user", stderr: bytes = b"why") -> HookOutcome:
    hook = HookSpec(event, "h", source, ("x",), "/", ())
    return WINDSURF.interpret(hook, ExecResult(code, b'{"decision":"allow"}', stderr, 1), 30.0)


# -- discovery ---------------------------------------------------------------------------


def test_every_level_runs_in_windsurfs_order_in_the_workspace_root(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    """System, user (editor, then JetBrains), workspace: all run, each in the workspace
    root; only the user's hooks folder of ~/.codeium/windsurf is mounted."""
    d = dialect(tmp_path)
    entry = [{"command": "python3 guard.py", "show_output": True}]
    write(tmp_path / "etc-windsurf" / "hooks.json", {"pre_run_command": entry})
    write(home / ".codeium" / "windsurf" / "hooks.json", {"pre_run_command": entry})
    write(home / ".codeium" / "hooks.json", {"pre_run_command": entry})
    write(ws / ".windsurf" / "hooks.json", {"pre_run_command": entry, "post_write_code": entry})
    (home / ".codeium" / "windsurf" / "hooks").mkdir()
    found = d.discover("pre_run_command", [str(ws)], str(home))
    assert [h.source for h in found.hooks] == ["system", "user", "user", "workspace"]
    assert {h.workdir for h in found.hooks} == {str(ws)}
    user = found.hooks[1]
    assert str(home / ".codeium" / "windsurf" / "hooks") in user.mounts
    assert str(home / ".codeium" / "windsurf") not in user.mounts  # its state stays out
    assert user.argv == ("/bin/sh", "-c", "python3 guard.py")
    assert len(d.discover(None, [str(ws)], str(home)).hooks) == 5


def test_working_directory_is_relative_to_the_root_and_tilde_is_not_expanded(
    ws: Path, home: Path
) -> None:
    (ws / "tools").mkdir()
    write(ws / ".windsurf" / "hooks.json", {"pre_read_code": [
        {"command": "a", "working_directory": "tools"},
        {"command": "b", "working_directory": "~/x"},
        {"command": "c", "working_directory": str(ws / "tools")},
        {"command": "d", "working_directory": "../.."},
        {"command": "e", "working_directory": "/etc"},
        {"command": "f", "working_directory": 3},
    ]})  # fmt: skip
    found = WINDSURF.discover(None, [str(ws)], str(home))
    assert [h.workdir for h in found.hooks] == [str(ws / "tools"), str(ws / "~/x"),
                                               str(ws / "tools")]  # fmt: skip
    reasons = " ".join(s.reason for s in found.skipped)
    assert "'../..' is outside what the sandbox mounts" in reasons
    assert "'/etc' is outside" in reasons and "working_directory must be" in reasons


def test_bad_entries_and_near_miss_events_are_named(ws: Path, home: Path) -> None:
    write(ws / ".windsurf" / "hooks.json", {
        "PreRunCommand": [{"command": "x"}], "pre_run_command": [{"cmd": "x"}, "x",
        {"command": "ok", "show_output": "yes"}, {"command": "ok2", "matcher": "ignored"}],
        "post_read_code": {"command": "x"},
    })  # fmt: skip
    found = WINDSURF.discover(None, [str(ws)], str(home))
    assert [h.name for h in found.hooks] == ["ok2"]  # no matcher: every hook runs
    reasons = [s.reason for s in found.skipped]
    assert "hooks.PreRunCommand: unknown event name (did you mean pre_run_command?)" in reasons[0]
    assert any("has no command string" in r for r in reasons)
    assert any("show_output must be true or false" in r for r in reasons)
    assert any("post_read_code: must be a list" in r for r in reasons)


def test_every_agent_folder_windsurf_uses_is_a_home_folder() -> None:
    assert {".codeium", ".windsurf"} <= set(HOME_FOLDERS)
    for place in (".codeium/windsurf/hooks", ".codeium/hooks", ".windsurf/transcripts"):
        assert place in HOOK_PLACES
    assert DIALECTS["windsurf"] is WINDSURF and WINDSURF.matches(
        HookSpec("x", "", "", (), "", ()), {}
    )


# -- the answer ----------------------------------------------------------------------------


@pytest.mark.parametrize("event", sorted(n for n in WINDSURF.hook_names if n.startswith("pre_")))
def test_exit_2_blocks_a_pre_hook_with_stderr_as_the_reason(event: str) -> None:
    got = outcome(event, 2)
    assert got.status == "completed" and got.answer == {"blocked": True, "reason": "why"}
    assert WINDSURF.combine([got], False) == {"blocked": True, "reason": "why"}


def test_a_repositorys_exit_2_is_still_a_block() -> None:
    """Exit 2 is Windsurf's own block: a repository may always block, never approve."""
    got = outcome("pre_run_command", 2, source="workspace")
    assert WINDSURF.combine([got], False)["blocked"] is True


def test_exit_2_on_a_post_hook_blocks_nothing_and_stdout_is_never_read() -> None:
    post = outcome("post_write_code", 2)
    assert post.answer == {"blocked": False, "reason": ""} and "blocks nothing" in (
        post.error or ""
    )
    ok = outcome("pre_run_command", 0)  # stdout says allow: read as nothing
    assert ok.answer == {"blocked": False, "reason": ""}


def test_other_exits_proceed_unless_sandboxrun_is_fail_closed() -> None:
    failed = outcome("pre_run_command", 1)
    assert failed.status == "failed" and failed.error == "why"
    assert WINDSURF.combine([failed], False)["blocked"] is False
    closed = WINDSURF.combine([failed], True)
    assert closed["blocked"] is True and "hook h failed: why" in closed["reason"]
    assert WINDSURF.combine([outcome("post_run_command", 1)], True)["blocked"] is False


def test_run_hands_the_envelope_and_blocks(ws: Path, home: Path) -> None:
    write(ws / ".windsurf" / "hooks.json", {"pre_run_command": [{"command": "g"}]})
    fake = FakeBackend(answer(2, b"no rm"))
    event = {"trajectory_id": "t1", "execution_id": "e1",
             "tool_info": {"command_line": "rm -rf /", "cwd": str(ws)}}  # fmt: skip
    factory = HookFactory(Settings.load(agent="windsurf"), fake, home=str(home))
    result = factory.run("pre_run_command", event, [str(ws)])
    assert result.answer == {"blocked": True, "reason": "no rm"}
    [request] = fake.requests
    sent = json.loads(request.stdin)
    assert sent["agent_action_name"] == "pre_run_command" and sent["trajectory_id"] == "t1"
    assert sent["tool_info"]["command_line"] == "rm -rf /" and sent["timestamp"]
    assert request.workdir == str(ws)


def test_post_setup_worktree_names_the_root_and_mounts_only_the_worktree(
    tmp_path: Path, home: Path
) -> None:
    root, tree = tmp_path / "root", tmp_path / "tree"
    root.mkdir(), tree.mkdir()
    write(tree / ".windsurf" / "hooks.json", {"post_setup_worktree": [{"command": "cp"}]})
    fake = FakeBackend(answer())
    event = {"tool_info": {"worktree_path": str(tree), "root_workspace_path": str(root)}}
    HookFactory(Settings.load(agent="windsurf"), fake, home=str(home)).run(
        "post_setup_worktree", event, [str(tree)]
    )
    [request] = fake.requests
    assert request.workdir == str(tree) and request.env["ROOT_WORKSPACE_PATH"] == str(root)
    assert not any(Path(m) == root or root in Path(m).parents for m in request.mounts)


def test_the_transcript_is_mounted_for_the_users_hooks_only(ws: Path, home: Path) -> None:
    transcript = home / ".windsurf" / "transcripts" / "t1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("{}\n")
    transcript.chmod(0o600)
    entry = [{"command": "read"}]
    write(home / ".codeium" / "windsurf" / "hooks.json",
          {"post_cascade_response_with_transcript": entry})  # fmt: skip
    write(ws / ".windsurf" / "hooks.json", {"post_cascade_response_with_transcript": entry})
    fake = FakeBackend(answer())
    event = {"tool_info": {"transcript_path": str(transcript)}}
    HookFactory(Settings.load(agent="windsurf"), fake, home=str(home)).run(
        "post_cascade_response_with_transcript", event, [str(ws)]
    )
    user, repo = fake.requests
    assert str(transcript) in user.mounts and str(transcript) not in repo.mounts
    elsewhere = {"tool_info": {"transcript_path": str(home / ".ssh" / "id_rsa")}}
    assert WINDSURF.transcript(elsewhere, str(home)) is None


# -- exec -------------------------------------------------------------------------------


def _exec(ws: Path, stdin: bytes, handler: Any, fail_closed: bool = False,
          environ: dict[str, str] | None = None) -> Any:  # fmt: skip
    settings = Settings.load(agent="windsurf", fail_closed=fail_closed)
    request = exec_request(settings, ["hook"], stdin, None, environ or {}, cwd=str(ws))
    return request, run_exec(settings, FakeBackend(handler), request, {})


def _raise(request: ExecRequest) -> ExecResult:
    raise EngineError("image sandboxrun-hook not found")


@pytest.mark.parametrize(
    ("handler", "why"),
    [
        (_raise, "could not run the hook"),
        (lambda r: ExecResult(None, b"", b"", 1, timed_out=True), "timed out"),
        (lambda r: ExecResult(137, b"", b"", 1, oom_killed=True), "out of memory"),
    ],
    ids=["missing-image", "timeout", "oom"],
)
@pytest.mark.parametrize("fail_closed", [False, True])
def test_our_failures_proceed_or_with_fail_closed_block(
    ws: Path, home: Path, handler: Any, why: str, fail_closed: bool
) -> None:
    """Exit 1: Windsurf lets the action through. Exit 2: its block. Never a word on stdout."""
    event = json.dumps({"agent_action_name": "pre_run_command", "tool_info": {}}).encode()
    _, out = _exec(ws, event, handler, fail_closed)
    assert (out.stdout, out.exit_code) == (b"", 2 if fail_closed else 1)
    assert why in out.stderr.decode()


def test_exec_passes_the_hooks_bytes_through(ws: Path, home: Path) -> None:
    event = json.dumps({"agent_action_name": "pre_run_command", "tool_info": {}}).encode()
    _, out = _exec(ws, event, answer(2, b"blocked: rm", b"shown only"))
    assert (out.stdout, out.stderr, out.exit_code) == (b"shown only", b"blocked: rm", 2)
    assert WINDSURF.untrusted_stdout(b'{"decision":"allow"}') == (b'{"decision":"allow"}', None)


def test_exec_of_post_setup_worktree_gets_the_root_as_a_name(tmp_path: Path, home: Path) -> None:
    root, tree = tmp_path / "root", tmp_path / "tree"
    root.mkdir(), tree.mkdir()
    event = json.dumps({"agent_action_name": "post_setup_worktree", "tool_info": {}}).encode()
    request, _ = _exec(tree, event, answer(), environ={"ROOT_WORKSPACE_PATH": str(root)})
    assert request.env["ROOT_WORKSPACE_PATH"] == str(root) and request.workdir == str(tree)
    assert str(root) not in request.mounts
    odd = {"ROOT_WORKSPACE_PATH": "relative\n"}
    request, _ = _exec(tree, event, answer(), environ=odd)
    assert "ROOT_WORKSPACE_PATH" not in request.env


def test_run_answer_agent_speaks_in_exit_codes() -> None:
    from sandboxrun._runner.reply import agent_answer, error_answer
    from sandboxrun._types import CombinedResult

    blocked = agent_answer(WINDSURF, "pre_run_command", CombinedResult(_answer_of(True), ()))
    assert (blocked.stdout, blocked.stderr, blocked.exit_code) == (b"", b"no\n", 2)
    passed = agent_answer(WINDSURF, "pre_run_command", CombinedResult(_answer_of(False), ()))
    assert (passed.stdout, passed.exit_code) == (b"", 0)
    assert error_answer(WINDSURF, False, "no engine").exit_code == 1
    closed = error_answer(WINDSURF, True, "no engine")
    assert (closed.stdout, closed.exit_code) == (b"", 2)


def _answer_of(blocked: bool) -> dict[str, Any]:
    return {"blocked": blocked, "reason": "no" if blocked else ""}


def test_check_reads_the_event_name_from_agent_action_name() -> None:
    from sandboxrun._check.events import parse_line

    line = parse_line(1, b'{"agent_action_name": "pre_read_code", "tool_info": {}}', WINDSURF)
    assert (line.hook_name, line.problem) == ("pre_read_code", None)


@pytest.mark.parametrize("untrusted", [False, True])
def test_exec_mounts_the_transcript_for_the_users_wrapper_only(
    ws: Path, home: Path, untrusted: bool
) -> None:
    """`exec --untrusted` (a repository's wrapper) runs without the conversation."""
    from sandboxrun._cli.parser import parser
    from sandboxrun._runner.reply import Caller, answer_exec

    transcript = home / ".windsurf" / "transcripts" / "t1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("{}\n")
    event = {"agent_action_name": "post_cascade_response_with_transcript",
             "tool_info": {"transcript_path": str(transcript)}}  # fmt: skip
    (ws / "c.toml").write_text('serve = "off"\n')
    argv = ["exec", "--config", str(ws / "c.toml"), "--agent", "windsurf",
            *(["--untrusted"] if untrusted else []), "--", "cat"]  # fmt: skip
    fake = FakeBackend(answer())
    caller = Caller(lambda: json.dumps(event).encode(), {}, str(ws))
    reply = answer_exec(parser().parse_args(argv), caller, lambda settings: fake)
    assert reply.exit_code == 0, reply.stderr
    [request] = fake.requests
    assert (str(transcript) in request.mounts) is not untrusted
