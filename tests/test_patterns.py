"""Repository patterns at a bounded cost (issue 29, item 3): `a{4294967294}` (13 characters)
and `(?:(?:(?:a{100}){100}){100}){10}` are measured, never compiled; their hook is an
`error` (a block under fail-closed) through `run`, the API and `serve`, and neither
`list` nor `review` dies of them. A regression would allocate gigabytes: every test that
reaches a compile runs under a soft address-space limit (`capped`), so it fails with a
MemoryError instead of taking the machine's memory.
"""

from __future__ import annotations

import contextlib
import json
import resource
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun import ExecRequest, ExecResult, FakeBackend, HookFactory, Settings
from sandboxrun._backends.docker import backend as _docker
from sandboxrun._dialects import patterns
from sandboxrun._dialects.claude.dialect import CLAUDE
from sandboxrun._dialects.cursor import CURSOR
from sandboxrun._dialects.kiro.files import matcher_problem
from sandboxrun._review.show import pending, scan
from sandboxrun._server import App, close_servers, open_servers
from sandboxrun._types import HookSpec

HUGE = "a{4294967294}"  # 13 characters: gigabytes once compiled
NESTED = "(?:(?:(?:a{100}){100}){100}){10}"  # 16 s and 3 GB once compiled
BOMBS = pytest.mark.parametrize("bomb", [HUGE, NESTED])
CAP = 1 << 30  # bytes of address space a test may add: far above a bounded compile


@pytest.fixture
def capped() -> Iterator[None]:
    """The soft address-space limit lowered to what the process maps now plus `CAP`
    (raised back after: a soft limit may be, up to the hard one)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
    limit = mapped + CAP if hard == resource.RLIM_INFINITY else min(mapped + CAP, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def spec(source: str, matcher: str, event: str = "PreToolUse") -> HookSpec:
    return HookSpec(event, "h", source, ("true",), "/w", ("/w",), matcher=matcher)


# -- the measure -------------------------------------------------------------------------


@BOMBS
def test_a_bomb_is_measured_not_compiled(bomb: str) -> None:
    """Both reproductions are over the bound, read by the parser alone (no `capped`
    needed: nothing is written out)."""
    assert patterns.problem(bomb) == (
        f"expands to over {patterns.MAX_SIZE} items when compiled (nested counted repeats)"
    )


@pytest.mark.parametrize(
    "pattern",
    ["Bash", "Edit|Write", "mcp__.*__write.*", "^(?:Read|Grep)$", r"[\w-]{1,64}", "a{1000,}",
     "(?x) Bash | Edit  # verbose", r"\p{L}+", "(?:a{100}){100}"],
)  # fmt: skip
def test_sane_patterns_pass(pattern: str) -> None:
    assert patterns.problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(?x) a {100000}", "expands to over"),  # verbose mode: the spaces are not there
        ("(a)(?(1)b{100000}|c)", "expands to over"),  # a conditional's branch
        ("(?:a{101}){100}", "expands to over"),  # just past the bound
        ("(" * 40 + "a" + ")" * 40, "nested deeper than"),
        ("Bash(", "invalid regular expression"),
        ("x" * 257, "longer than 256 characters"),
    ],
)
def test_what_is_refused_and_why(pattern: str, why: str) -> None:
    assert why in (patterns.problem(pattern) or "")


@BOMBS
def test_a_workspace_bomb_is_an_error_for_every_dialect_reading_regexes(
    capped: None, bomb: str
) -> None:
    """The Claude family and Cursor raise the named error; Kiro lists the hook as not run."""
    for dialect, name in ((CLAUDE, "PreToolUse"), (CURSOR, "preToolUse")):
        with pytest.raises(patterns.PatternError, match="expands to over"):
            dialect.matches(spec("project", bomb, name), {"tool_name": "Bash"})
    assert "expands to over" in (matcher_problem(bomb) or "")


def test_a_users_own_pattern_over_the_bound_is_used_with_a_warning(capped: None) -> None:
    """The user's own `(?:a{200}){100}` (20 000 items: 20 ms) compiles, with a warning."""
    found: list[str] = []
    logger.enable("sandboxrun")
    sink = logger.add(found.append, level="WARNING", format="{message}")
    try:
        pattern = "(?:a{200}){100}"
        assert CLAUDE.matches(spec("user", pattern), {"tool_name": "a" * 20000})
        assert not CLAUDE.matches(spec("user", pattern), {"tool_name": "Bash"})
    finally:
        logger.remove(sink)
        logger.disable("sandboxrun")
    assert any("compiled anyway" in line for line in found)


def test_nothing_over_the_bound_is_kept_in_the_cache(capped: None) -> None:
    patterns._compile.cache_clear()
    for source in ("user", "project"):
        with contextlib.suppress(patterns.PatternError):
            CLAUDE.matches(spec(source, "(?:a{200}){100}"), {"tool_name": "Bash"})
    assert patterns._compile.cache_info().currsize == 0


# -- run, the API, serve, list, review -----------------------------------------------------

GUARD = "guard.sh"  # the user's own blocking guard (the fake backend blocks for it)


def workspace(home: Path, tmp_path: Path, bomb: str) -> Path:
    """The user's guard for Bash in ~/.claude; a repository hook whose matcher is `bomb`."""
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": GUARD}]}
    (home / ".claude/settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    repo = {"matcher": bomb, "hooks": [{"type": "command", "command": "repo.sh"}]}
    (ws / ".claude/settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [repo]}}))
    return ws


def guard(request: ExecRequest) -> ExecResult:
    if GUARD in request.argv[-1]:
        return ExecResult(2, b"", b"guard: no rm -rf\n", 3)
    return ExecResult(0, b"", b"", 3)


def event(ws: Path) -> dict[str, Any]:
    return {"cwd": str(ws), "tool_name": "Bash", "tool_input": {"command": "rm -rf /"},
            "hook_event_name": "PreToolUse", "session_id": "s"}  # fmt: skip


@BOMBS
def test_run_reports_the_hook_as_an_error_and_the_guard_still_blocks(
    capped: None, home: Path, tmp_path: Path, bomb: str
) -> None:
    ws = workspace(home, tmp_path, bomb)
    backend = FakeBackend(guard)
    factory = HookFactory(Settings.load(agent="claude"), backend, home=str(home))
    report = factory.run("PreToolUse", event(ws)).to_json()
    assert report["blocked"] is True and "guard: no rm -rf" in report["reason"]
    hooks = {h["source"]: h for h in report["hooks"]}
    assert hooks["user"]["status"] == "completed"
    assert hooks["project"]["status"] == "error"
    assert "expands to over" in hooks["project"]["error"]
    assert [r.argv[-1] for r in backend.requests] == [GUARD]  # the repository's never ran


@BOMBS
def test_under_fail_closed_the_hook_alone_blocks(
    capped: None, home: Path, tmp_path: Path, bomb: str
) -> None:
    ws = workspace(home, tmp_path, bomb)
    (home / ".claude/settings.json").write_text("{}")  # no guard of the user's
    settings = Settings.load(agent="claude", fail_closed=True)
    report = (
        HookFactory(settings, FakeBackend(guard), home=str(home))
        .run("PreToolUse", event(ws))
        .to_json()
    )
    assert report["blocked"] is True, report
    assert "expands to over" in report["reason"]
    # without fail-closed, a non-blocking error: named, never silent
    report = (
        HookFactory(Settings.load(agent="claude"), FakeBackend(guard), home=str(home))
        .run("PreToolUse", event(ws))
        .to_json()
    )
    assert report["blocked"] is False and report["hooks"][0]["status"] == "error"


def test_only_events_the_matcher_applies_to_see_the_error(
    capped: None, home: Path, tmp_path: Path
) -> None:
    """A matcher Claude ignores (UserPromptSubmit) is never evaluated: the hook runs."""
    ws = workspace(home, tmp_path, HUGE)
    repo = {"matcher": HUGE, "hooks": [{"type": "command", "command": "repo.sh"}]}
    (ws / ".claude/settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [repo]}}))
    backend = FakeBackend(guard)
    factory = HookFactory(Settings.load(agent="claude"), backend, home=str(home))
    report = factory.run("UserPromptSubmit", {**event(ws), "prompt": "hi"}).to_json()
    assert [h["status"] for h in report["hooks"]] == ["completed"]


@BOMBS
def test_review_lists_the_hook(capped: None, home: Path, tmp_path: Path, bomb: str) -> None:
    ws = workspace(home, tmp_path, bomb)
    settings = Settings.load(agent="claude")
    [seen] = pending(scan(settings, [str(ws)], str(home), ["claude"]))
    assert seen.status == "new"


def capped_child() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@BOMBS
def test_list_on_the_command_line(home: Path, tmp_path: Path, bomb: str) -> None:
    """The real command line, in a child limited to 2 GiB: `list` names the hook (`run`
    on the command line: tests/engine/test_hostile_repo.py)."""
    ws = workspace(home, tmp_path, bomb)
    (home / ".claude/settings.json").write_text("{}")
    config = tmp_path / "config.toml"
    config.write_text('serve = "off"\n')
    base = [sys.executable, "-m", "sandboxrun"]
    listed = subprocess.run(
        [*base, "list", "--config", str(config), "--home", str(home), "--agent", "claude"],
        capture_output=True, cwd=ws, timeout=120, preexec_fn=capped_child,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr.decode(errors="replace")
    assert b"repo.sh" in listed.stdout


class _Closable(FakeBackend):
    def close(self) -> None:
        return None

    def abort(self) -> None:
        return None


@pytest.fixture
def served(home: Path, short_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An in-process server over a FakeBackend whose user's guard blocks (as
    tests/test_serve.py's `served`)."""
    path = str(short_dir / "run" / "serve.sock")
    config = home / "config.toml"
    config.write_text(f'serve_socket = "{path}"\n')
    backend = _Closable(guard)
    monkeypatch.setattr(_docker, "DockerBackend", lambda settings, warm=False: backend)
    logger.remove()
    logger.configure(patcher=cli._escape_message)
    logger.enable("sandboxrun")
    app = App(lambda settings: backend)
    servers = open_servers(app, path)
    threading.Thread(target=servers[0].serve_forever, daemon=True).start()
    yield type("Served", (), {"app": app, "config": config})
    close_servers(app, servers, path)


@BOMBS
def test_serve_answers_with_the_error_and_then_the_next_request(
    capped: None, home: Path, tmp_path: Path, bomb: str, served: Any,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:  # fmt: skip
    """A tenant's event names a workspace with the bomb: its answer names the error, and
    the server answers the next request (no huge pattern kept)."""
    from tests.test_serve import run as through

    ws = workspace(home, tmp_path, bomb)
    argv = ["run", "PreToolUse", "--agent", "claude", "--config", str(served.config)]
    for _ in range(2):
        code, out, _err = through(argv, json.dumps(event(ws)).encode(), capsysbinary, False)
        assert code == 0
        report = json.loads(out)
        assert report["blocked"] is True, report  # the user's guard, via the fake backend
        project = [h for h in report["hooks"] if h["source"] == "project"]
        assert project[0]["status"] == "error" and "expands to over" in project[0]["error"]
    assert served.app.answered == 2
