"""The runner layer over a FakeBackend: concurrency, combining, failure modes, requests."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from sandboxrun import (
    CombinedHookRunner,
    ConfigError,
    EngineError,
    ExecRequest,
    ExecResult,
    FakeBackend,
    HookFactory,
    HookRunner,
    HookSpec,
    NoOpHookRunner,
    Settings,
)
from sandboxrun._dialects.cline import CLINE
from sandboxrun._runner.factory import resolve_workspaces
from sandboxrun._runner.reply import current_folder

GLOBAL = Path("Documents/Cline/Hooks")
LOCAL = Path(".clinerules/hooks")
REPORT_KEYS = [
    "name",
    "source",
    "status",
    "exitCode",
    "durationMs",
    "oomKilled",
    "outputTruncated",
    "error",
    "stderr",
    "warm",
]


def answer(
    doc: object = None, *, exit_code: int | None = 0, stderr: bytes = b"", **kw: object
) -> ExecResult:
    """An ExecResult whose stdout is `doc` as JSON (or raw bytes/str)."""
    if isinstance(doc, bytes):
        stdout = doc
    elif isinstance(doc, str):
        stdout = doc.encode()
    else:
        stdout = json.dumps(doc if doc is not None else {}).encode()
    return ExecResult(exit_code=exit_code, stdout=stdout, stderr=stderr, duration_ms=5, **kw)  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """One workspace root."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def event(ws: Path) -> dict[str, object]:
    """A PreToolUse event whose workspace is `ws` and whose timestamp is fixed."""
    return {
        "clineVersion": "3.36.0",
        "hookName": "PreToolUse",
        "timestamp": "1700000000000",
        "taskId": "t1",
        "workspaceRoots": [str(ws)],
        "preToolUse": {"toolName": "read_file", "parameters": {"path": "x"}},
    }


def run(settings: Settings, backend, home: Path, event, workspaces=()):  # type: ignore[no-untyped-def]
    """Discover, run and combine PreToolUse with a fake HOME."""
    return HookFactory(settings, backend, home=str(home)).run("PreToolUse", event, workspaces)


# -- combining -----------------------------------------------------------------------


def test_cancel_is_any_hooks_cancel(home, settings, ws, event, make_hook, fake) -> None:
    """One hook's cancel true cancels, whatever the others say."""
    a = make_hook(home / GLOBAL)
    b = make_hook(ws / LOCAL)
    backend = fake({a: answer({"cancel": False}), b: answer({"cancel": True})})
    result = run(settings, backend, home, event)
    assert result.answer["cancel"] is True
    assert [o.status for o in result.outcomes] == ["completed", "completed"]


def test_no_cancel_when_none_cancels(home, settings, ws, event, make_hook, fake) -> None:
    """Nobody cancelling, or printing nothing, means cancel false."""
    a = make_hook(home / GLOBAL)
    b = make_hook(ws / LOCAL)
    result = run(settings, fake({a: answer({}), b: answer(b"")}), home, event)
    assert result.answer == {"cancel": False, "contextModification": "", "errorMessage": ""}


def test_contexts_trimmed_empty_dropped_joined_in_discovery_order(
    home, settings, tmp_path, make_hook, fake
) -> None:
    """Contexts are trimmed, empties dropped, joined by a blank line, global first."""
    r1, r2, r3 = (tmp_path / n for n in ("r1", "r2", "r3"))
    for r in (r1, r2, r3):
        r.mkdir()
    g = make_hook(home / GLOBAL)
    h1, h2, h3 = (make_hook(r / LOCAL) for r in (r1, r2, r3))
    workspace_done = threading.Event()

    def slow_global(request: ExecRequest) -> ExecResult:
        # The global hook finishes last, yet its context must still come first.
        assert workspace_done.wait(5)
        return answer({"contextModification": "  from global \n"})

    def first_workspace(request: ExecRequest) -> ExecResult:
        workspace_done.set()
        return answer({"contextModification": "\n  line one\n  line two  "})

    backend = fake(
        {
            g: slow_global,
            h1: first_workspace,
            h2: answer({"contextModification": "   \n\t"}),
            h3: answer({"contextModification": "last"}),
        }
    )
    result = run(settings, backend, home, {}, [str(r1), str(r2), str(r3)])
    assert result.answer["contextModification"] == ("from global\n\nline one\n  line two\n\nlast")
    assert [o.spec.name for o in result.outcomes] == [str(g), str(h1), str(h2), str(h3)]


def test_error_messages_trimmed_and_joined_with_newline(
    home, settings, ws, event, make_hook, fake
) -> None:
    """errorMessages are trimmed, empties dropped, joined with a single newline."""
    g = make_hook(home / GLOBAL)
    w = make_hook(ws / LOCAL)
    backend = fake(
        {
            g: answer({"cancel": True, "errorMessage": "  blocked by policy \n"}),
            w: answer({"errorMessage": "second"}),
        }
    )
    assert run(settings, backend, home, event).answer["errorMessage"] == (
        "blocked by policy\nsecond"
    )


def test_combine_directly_ignores_failed_hooks_answers() -> None:
    """combine() reads only completed answers; failed outcomes contribute nothing."""
    from sandboxrun import HookOutcome

    spec = HookSpec("PreToolUse", "/h", "workspace", ("/bin/sh", "-c", "/h"), "/", ())
    outcomes = [
        HookOutcome(spec, "completed", 0, answer={"cancel": False, "contextModification": "a"}),
        HookOutcome(spec, "failed", 1, error="PreToolUse hook exited with code 1"),
    ]
    assert CLINE.combine(outcomes, fail_closed=False) == {
        "cancel": False,
        "contextModification": "a",
        "errorMessage": "",
    }


# -- concurrency and completion ----------------------------------------------------------


def test_hooks_run_concurrently(home, settings, ws, event, make_hook, fake) -> None:
    """Two hooks are in the backend at the same time (a 2-party barrier is passed)."""
    a = make_hook(home / GLOBAL)
    b = make_hook(ws / LOCAL)
    barrier = threading.Barrier(2, timeout=5)

    def meet(request: ExecRequest) -> ExecResult:
        barrier.wait()
        return answer({"cancel": False})

    result = run(settings, fake({a: meet, b: meet}), home, event)
    assert [o.status for o in result.outcomes] == ["completed", "completed"]


def test_all_hooks_run_to_completion_even_when_one_cancels(
    home, settings, tmp_path, make_hook, fake
) -> None:
    """A cancel from the first hook does not stop the others; all results are reported."""
    roots = [tmp_path / "r1", tmp_path / "r2"]
    for r in roots:
        r.mkdir()
    g = make_hook(home / GLOBAL)
    w1, w2 = (make_hook(r / LOCAL) for r in roots)
    cancelled = threading.Event()

    def cancel_first(request: ExecRequest) -> ExecResult:
        cancelled.set()
        return answer({"cancel": True, "errorMessage": "no"})

    def after_cancel(request: ExecRequest) -> ExecResult:
        assert cancelled.wait(5)
        return answer({"contextModification": f"ran {request.workdir}"})

    backend = fake({g: cancel_first, w1: after_cancel, w2: after_cancel})
    result = run(settings, backend, home, {}, [str(r) for r in roots])
    assert len(backend.requests) == 3
    assert [o.status for o in result.outcomes] == ["completed"] * 3
    assert result.answer == {
        "cancel": True,
        "contextModification": f"ran {roots[0]}\n\nran {roots[1]}",
        "errorMessage": "no",
    }


def test_engine_error_for_one_hook_is_its_error_and_a_sibling_cancel_survives(
    home, settings, ws, event, make_hook, fake
) -> None:
    """A backend failure for one hook marks it `error`; the other's cancel still counts."""
    g = make_hook(home / GLOBAL)
    w = make_hook(ws / LOCAL)

    def engine_fails(request: ExecRequest) -> ExecResult:
        raise EngineError("engine refused to create the container")

    backend = fake({g: engine_fails, w: answer({"cancel": True, "errorMessage": "blocked"})})
    result = run(settings, backend, home, event)
    broken, ok = result.outcomes
    assert broken.status == "error"
    assert broken.error == "engine refused to create the container"
    assert broken.exit_code is None
    assert broken.answer == {}
    assert ok.status == "completed"
    assert result.answer["cancel"] is True
    assert result.answer["errorMessage"] == "blocked"


# -- failure semantics ----------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        answer({"cancel": True}, exit_code=1),
        answer({"cancel": True}, exit_code=None, timed_out=True),
        answer({"cancel": True}, exit_code=137, oom_killed=True),
        answer({"cancel": True}, exit_code=137, killed_reason="too much output"),
    ],
    ids=["nonzero", "timeout", "oom", "killed"],
)
def test_fail_open_by_default(home, settings, ws, event, make_hook, fake, bad) -> None:
    """A failed or timed-out hook does not cancel by default (Cline fails open)."""
    hook = make_hook(ws / LOCAL)
    result = run(settings, fake({hook: bad}), home, event)
    [outcome] = result.outcomes
    assert outcome.status in {"failed", "timed_out"}
    assert result.answer == {"cancel": False, "contextModification": "", "errorMessage": ""}


def test_fail_open_engine_error_does_not_cancel(home, settings, ws, event, make_hook, fake) -> None:
    """A hook the engine could not run does not cancel by default."""
    hook = make_hook(ws / LOCAL)

    def boom(request: ExecRequest) -> ExecResult:
        raise EngineError("gone")

    result = run(settings, fake({hook: boom}), home, event)
    assert result.answer["cancel"] is False


@pytest.mark.parametrize(
    ("bad", "status", "why"),
    [
        (answer(exit_code=3), "failed", "PreToolUse hook exited with code 3"),
        (answer(exit_code=None, timed_out=True), "timed_out", "timed out"),
    ],
    ids=["nonzero", "timeout"],
)
def test_fail_closed_cancels_and_names_the_hook(
    home, ws, event, make_hook, fake, bad, status, why
) -> None:
    """With fail_closed, a failed hook cancels and errorMessage names the hook and why."""
    g = make_hook(home / GLOBAL)
    w = make_hook(ws / LOCAL)
    settings = Settings.load(fail_closed=True)
    backend = fake({g: answer({"errorMessage": "fine"}), w: bad})
    result = run(settings, backend, home, event)
    assert result.answer["cancel"] is True
    first, second = result.answer["errorMessage"].split("\n")
    assert first == "fine"
    assert str(w) in second and status in second and why in second
    assert str(g) not in second


def test_fail_closed_engine_error_cancels(home, ws, event, make_hook, fake) -> None:
    """With fail_closed, a hook the engine could not run cancels, naming the error."""
    w = make_hook(ws / LOCAL)

    def boom(request: ExecRequest) -> ExecResult:
        raise EngineError("no such image")

    result = run(Settings.load(fail_closed=True), fake({w: boom}), home, event)
    assert result.answer["cancel"] is True
    assert str(w) in result.answer["errorMessage"]
    assert "no such image" in result.answer["errorMessage"]


def test_fail_closed_with_healthy_hooks_does_not_cancel(home, ws, event, make_hook, fake) -> None:
    """fail_closed changes nothing when every hook completed."""
    w = make_hook(ws / LOCAL)
    result = run(Settings.load(fail_closed=True), fake({w: answer({})}), home, event)
    assert result.answer == {"cancel": False, "contextModification": "", "errorMessage": ""}


def test_no_hooks_is_a_noop(home, settings, ws, event, fake) -> None:
    """Without hooks the NoOp runner answers cancel false and reports no hooks."""
    backend = fake()
    factory = HookFactory(settings, backend, home=str(home))
    assert isinstance(factory.create("PreToolUse", [str(ws)]), NoOpHookRunner)
    result = factory.run("PreToolUse", event)
    assert result.to_json() == {
        "cancel": False,
        "contextModification": "",
        "errorMessage": "",
        "hooks": [],
    }
    assert backend.requests == []


def test_noop_runner_directly() -> None:
    """NoOpHookRunner runs nothing and answers the empty combination."""
    result = NoOpHookRunner(CLINE).run(b"{}")
    assert result.outcomes == ()
    assert result.answer == {"cancel": False, "contextModification": "", "errorMessage": ""}


def test_noop_runner_fail_closed_does_not_cancel() -> None:
    """No hooks is not a failure, even fail-closed."""
    assert NoOpHookRunner(CLINE, fail_closed=True).run(b"{}").answer["cancel"] is False


# -- the report --------------------------------------------------------------------


def test_report_element_keys_exactly(home, settings, ws, event, make_hook, fake) -> None:
    """Each `hooks` element has exactly the documented keys, in order, with values."""
    w = make_hook(ws / LOCAL)
    backend = fake({w: ExecResult(0, b'{"cancel": true}', b"note\n", 42)})
    doc = run(settings, backend, home, event).to_json()
    assert list(doc) == ["cancel", "contextModification", "errorMessage", "hooks"]
    [report] = doc["hooks"]
    assert list(report) == REPORT_KEYS
    assert report == {
        "name": str(w),
        "source": "workspace",
        "status": "completed",
        "exitCode": 0,
        "durationMs": 42,
        "oomKilled": False,
        "outputTruncated": False,
        "error": None,
        "stderr": "note\n",
        "warm": False,
    }
    json.dumps(doc)  # serialisable as is


def test_error_report_keys_exactly(home, settings, ws, event, make_hook, fake) -> None:
    """An `error` outcome reports the same keys, with a null exit code."""
    w = make_hook(ws / LOCAL)

    def boom(request: ExecRequest) -> ExecResult:
        raise EngineError("down")

    [report] = run(settings, fake({w: boom}), home, event).to_json()["hooks"]
    assert list(report) == REPORT_KEYS
    assert (report["status"], report["exitCode"], report["error"]) == ("error", None, "down")
    assert isinstance(report["durationMs"], int)


@pytest.mark.parametrize(("keep", "expected"), [(5, "56789"), (100, "0123456789"), (0, "")])
def test_stderr_report_bounds_the_reported_tail(
    home, ws, event, make_hook, fake, keep, expected
) -> None:
    """Only the last `stderr_report` characters of stderr are reported (0 = none)."""
    w = make_hook(ws / LOCAL)
    settings = Settings.load(stderr_report=keep)
    backend = fake({w: answer({}, stderr=b"0123456789")})
    [outcome] = run(settings, backend, home, event).outcomes
    assert outcome.stderr == expected


def test_stderr_report_counts_characters(home, ws, event, make_hook, fake) -> None:
    """The stderr bound is in characters of the decoded text."""
    w = make_hook(ws / LOCAL)
    backend = fake({w: answer({}, stderr="aéßü".encode())})
    [outcome] = run(Settings.load(stderr_report=3), backend, home, event).outcomes
    assert outcome.stderr == "éßü"


# -- the request handed to the backend -------------------------------------------------


def test_exec_request_fields(home, ws, event, make_hook, fake) -> None:
    """argv, stdin (the prepared input), workdir, mounts and timeout reach the backend."""
    g = make_hook(home / GLOBAL)
    w = make_hook(ws / LOCAL)
    settings = Settings.load(timeout=7.5)
    backend = fake(default=answer({}))
    run(settings, backend, home, event)
    expected_stdin = CLINE.prepare_input("PreToolUse", event, [str(ws)])
    by_path = {r.argv[-1]: r for r in backend.requests}
    specs = CLINE.discover("PreToolUse", [str(ws)], str(home)).hooks
    assert len(by_path) == len(specs) == 2
    for spec in specs:
        req = by_path[spec.argv[-1]]
        assert req.argv == spec.argv
        assert req.stdin == expected_stdin
        assert req.workdir == spec.workdir == str(ws)
        assert req.mounts == spec.mounts
        assert req.timeout == 7.5
        assert dict(req.env) == {}
        assert "PreToolUse" in req.label and spec.name in req.label
    assert [s.name for s in specs] == [str(g), str(w)]
    assert by_path[specs[0].argv[-1]].mounts == (str(ws), str(home / GLOBAL))
    assert by_path[specs[1].argv[-1]].mounts == (str(ws),)


def test_default_timeout_is_the_variants(home, settings, ws, event, make_hook, fake) -> None:
    """Without a setting, each hook gets its Cline's own timeout: the VS Code extension's
    30 s, the SDK's 120 s (DEFAULT_TOOL_HOOK_TIMEOUT_MS, subprocess.ts@21cb8d25)."""
    make_hook(ws / LOCAL)
    for variant, limit in (("vscode", 30.0), ("sdk", 120.0)):
        backend = fake(default=answer({}))
        run(settings.model_copy(update={"cline_variant": variant}), backend, home, event)
        assert [r.timeout for r in backend.requests] == [limit], variant


def test_spec_timeout_overrides_settings(settings, fake) -> None:
    """A spec with its own timeout uses it instead of the settings' one."""
    spec = HookSpec(
        "PreToolUse", "/h", "workspace", ("/bin/sh", "-c", "/h"), "/", (), {}, timeout=3.0
    )
    backend = fake(default=answer({}))
    outcome = HookRunner(spec, backend, CLINE, settings).run(b"{}")
    assert outcome.status == "completed"
    assert backend.requests[0].timeout == 3.0
    assert backend.requests[0].stdin == b"{}"


def test_combined_runner_hands_every_hook_the_same_stdin(settings, fake) -> None:
    """CombinedHookRunner gives each runner the same input bytes."""
    specs = [
        HookSpec("PreToolUse", f"/h{i}", "workspace", ("/bin/sh", "-c", f"/h{i}"), "/", ())
        for i in range(3)
    ]
    backend = fake(default=answer({}))
    runners = [HookRunner(s, backend, CLINE, settings) for s in specs]
    result = CombinedHookRunner(runners, CLINE, fail_closed=False).run(b'{"x":1}')
    assert [o.spec.name for o in result.outcomes] == ["/h0", "/h1", "/h2"]
    assert [r.stdin for r in backend.requests] == [b'{"x":1}'] * 3


def test_event_workspace_roots_drive_discovery(home, settings, ws, event, make_hook, fake) -> None:
    """Without explicit workspaces, the event's workspaceRoots are searched for hooks."""
    w = make_hook(ws / LOCAL)
    backend = fake({w: answer({"cancel": True})})
    assert run(settings, backend, home, event).answer["cancel"] is True


def test_given_workspaces_override_the_event(
    home, settings, tmp_path, event, make_hook, fake
) -> None:
    """Explicit workspaces win over the event's roots, and the hook sees them as filled."""
    other = tmp_path / "other"
    other.mkdir()
    w = make_hook(other / LOCAL)
    backend = fake({w: answer({})})
    run(settings, backend, home, {"preToolUse": {}}, [str(other)])
    [req] = backend.requests
    assert json.loads(req.stdin)["workspaceRoots"] == [str(other)]
    assert req.workdir == str(other)


def test_a_root_given_twice_runs_its_hook_once(home, settings, ws, make_hook, fake) -> None:
    """Duplicate workspace roots (also spelled with a trailing slash) run each hook once."""
    w = make_hook(ws / LOCAL)
    backend = fake({w: answer({"contextModification": "once"})})
    result = run(settings, backend, home, {}, [str(ws), str(ws) + "/"])
    assert len(backend.requests) == 1
    assert result.answer["contextModification"] == "once"


# -- resolve_workspaces --------------------------------------------------------------


def test_resolve_given_beats_event(tmp_path: Path) -> None:
    """Given roots are used even when the event has roots."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert resolve_workspaces({"workspaceRoots": [str(a)]}, [str(b)], cwd="/") == [str(b)]


def test_resolve_event_beats_cwd(tmp_path: Path) -> None:
    """Without given roots, the event's workspaceRoots are used, in order."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    roots = resolve_workspaces({"workspaceRoots": [str(b), str(a)]}, cwd=str(tmp_path))
    assert roots == [str(b), str(a)]


@pytest.mark.parametrize("event", [{}, {"workspaceRoots": []}, {"workspaceRoots": None}])
def test_resolve_falls_back_to_cwd(tmp_path: Path, monkeypatch, event) -> None:
    """With no roots anywhere, the caller's folder is the workspace, never the
    process's current directory."""
    monkeypatch.chdir("/")
    assert resolve_workspaces(event, cwd=str(tmp_path)) == [str(tmp_path)]


def test_resolve_in_a_removed_folder_says_so(tmp_path: Path, monkeypatch) -> None:
    """A caller whose folder was removed under it (`current_folder()` is "") and that
    names no root gets a configuration error saying so (fail-closed blocks on it)."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert current_folder() == ""
    with pytest.raises(ConfigError, match="no current folder"):
        resolve_workspaces({}, cwd=current_folder())


@pytest.mark.parametrize("where", ["given", "event"])
def test_resolve_makes_relative_roots_absolute(tmp_path: Path, monkeypatch, where: str) -> None:
    """Relative roots, given or in the event, are read from the caller's folder."""
    (tmp_path / "rel").mkdir()
    monkeypatch.chdir("/")
    given, event = (["rel"], {}) if where == "given" else ([], {"workspaceRoots": ["rel"]})
    assert resolve_workspaces(event, given, cwd=str(tmp_path)) == [str(tmp_path / "rel")]


@pytest.mark.parametrize("where", ["given", "event"])
def test_resolve_missing_directory_is_a_config_error(tmp_path: Path, where: str) -> None:
    """A root that does not exist raises ConfigError naming it."""
    missing = str(tmp_path / "nope")
    with pytest.raises(ConfigError, match="nope"):
        if where == "given":
            resolve_workspaces({}, [missing], cwd=str(tmp_path))
        else:
            resolve_workspaces({"workspaceRoots": [missing]}, cwd=str(tmp_path))


def test_resolve_file_is_not_a_workspace(tmp_path: Path) -> None:
    """A root that is a file raises ConfigError."""
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(ConfigError):
        resolve_workspaces({}, [str(f)], cwd=str(tmp_path))


@pytest.mark.parametrize("bad", [5, "", None, ["x"]])
def test_resolve_non_path_roots_in_the_event(bad: object, tmp_path: Path) -> None:
    """A workspaceRoots entry that is not a non-empty string raises ConfigError."""
    with pytest.raises(ConfigError):
        resolve_workspaces({"workspaceRoots": [bad]}, cwd=str(tmp_path))


def test_factory_run_with_a_missing_workspace_raises(home, settings, tmp_path, fake) -> None:
    """HookFactory.run surfaces a missing workspace as ConfigError before running anything."""
    backend = fake()
    with pytest.raises(ConfigError):
        run(settings, backend, home, {"workspaceRoots": [str(tmp_path / "gone")]})
    assert backend.requests == []


@pytest.mark.parametrize(
    ("source", "own", "expected"),
    [("project", 5.0, 5.0), ("project", 600.0, 60.0), ("local", 600.0, 60.0),
     ("user", 600.0, 600.0), ("project", None, 60.0)],
)  # fmt: skip
def test_workspace_hook_timeout_never_exceeds_the_users_limit(
    source: str, own: float | None, expected: float
) -> None:
    """A timeout from a workspace file may shorten the limit but not lengthen it."""
    from sandboxrun import HookSpec
    from sandboxrun._runner.factory import hook_timeout

    spec = HookSpec("PreToolUse", "x", source, ("x",), "/", (), timeout=own)
    assert hook_timeout(spec, 60.0) == expected


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        (b"touch: cannot touch 'x': Read-only file system\n", "read-only"),
        (b"curl: (6) Could not resolve host: example.com\n", "network"),
        (b"sh: 1: uvx: not found\n", "not in the sandbox"),
    ],
)
def test_a_failed_hooks_report_says_what_the_sandbox_stopped(
    ws: Path, make_hook, stderr: bytes, said: str
) -> None:
    """A hook failing on a sandbox wall gets one sentence in its report saying which."""
    make_hook(ws / LOCAL)
    backend = FakeBackend(lambda r: answer(exit_code=1, stderr=stderr))
    result = HookFactory(Settings.load(), backend, home=str(ws)).run("PreToolUse", {}, [str(ws)])
    [outcome] = result.outcomes
    assert outcome.status == "failed" and said in (outcome.error or "")
