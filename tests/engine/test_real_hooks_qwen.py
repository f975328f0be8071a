"""Qwen Code hooks from public repositories (issue 18, item 7; provenance and licence in
tests/real_hooks/qwen/PROVENANCE.md), each run as Qwen Code runs it on the host (`sh -c`
in the project, the event on stdin, `QWEN_PROJECT_DIR` set) and through `sandboxrun exec
--agent qwen`, with the same decision: Qwen's own `/review` guard, which denies with a
JSON `decision` (exit 0) while a review session is marked in the workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandboxrun import DockerBackend, ExecResult
from sandboxrun._dialects.claude.agents import QWEN
from sandboxrun._types import HookSpec

from .claudelike_hooks import bare, boxed, checkout, event_for, run_event

VAR = "QWEN_PROJECT_DIR"
GUARD = "bash guard.sh"  # the skill's entry runs it with bash from the skill's folder


def decision(done: object) -> tuple[str, bool]:
    """What Qwen Code makes of a PreToolUse run: the dialect's reading."""
    code, out, err = done.returncode, done.stdout, done.stderr  # type: ignore[attr-defined]
    spec = HookSpec(hook_name="PreToolUse", name="h", source="project", argv=("h",),
                    workdir="/", mounts=("/",))  # fmt: skip
    outcome = QWEN.interpret(spec, ExecResult(code, out.encode(), err.encode(), 1), 60.0)
    return outcome.status, bool(outcome.answer.get("blocked", False))


@pytest.mark.parametrize(
    ("reviewing", "command", "denied"),
    [(False, "git checkout main", False), (True, "git checkout main", True),
     (True, "git status", False)],
)  # fmt: skip
def test_review_guard_decides_the_same_sandboxed(
    engine: DockerBackend, tmp_path: Path, reviewing: bool, command: str, denied: bool
) -> None:
    """QwenLM/qwen-code packages/core/src/skills/bundled/review/guard.sh: outside a
    review it allows everything; during one (a fetch-pr report in `.qwen/tmp/`) it denies
    `git checkout main` with a deny JSON on stdout (jq builds it, in the image too), and
    allows `git status`. Byte for byte the same sandboxed for the user's own command; for
    a repository's (`--untrusted`) the deny passes and the explicit allow, an approval a
    repository does not get, is dropped to `{}` and named: Qwen proceeds all the same.
    Qwen reads the deny without a hookEventName (its own guard sends none), and so does
    `sandboxrun run --agent qwen`."""
    runs = []
    for side in ("host", "box"):
        ws = checkout("qwen", "QwenLM__qwen-code", tmp_path / side)
        if reviewing:
            (ws / ".qwen" / "tmp").mkdir(parents=True)
            (ws / ".qwen" / "tmp" / "qwen-review-pr-7-fetch.json").write_text("{}")
        args = {"tool_name": "run_shell_command", "tool_input": {"command": command}}
        runs.append((ws, event_for(ws, "PreToolUse", **args)))
    (host, host_event), (box, box_event) = runs
    done = bare(host, GUARD, host_event, VAR)
    assert done.returncode == 0, done.stderr
    assert ('"deny"' in done.stdout) is denied
    for options in ((), ("--untrusted",)):
        sandboxed = boxed(box, "qwen", GUARD, box_event, *options)
        assert sandboxed.returncode == 0, sandboxed.stderr
        if denied or not options:
            assert sandboxed.stdout == done.stdout
        else:
            assert (done.stdout, sandboxed.stdout) == ('{"decision":"allow"}\n', "{}\n")
            assert "its allow ignored (untrusted" in sandboxed.stderr
        assert decision(sandboxed) == decision(done) == ("completed", denied)


def test_review_guard_blocks_through_run(engine: DockerBackend, tmp_path: Path) -> None:
    """The same guard found by `run --agent qwen` in a project's `.qwen/settings.json` (the
    entry is this test's: Qwen registers the guard from its skill's frontmatter, which
    sandboxrun does not read): its deny, without a hookEventName, blocks as in Qwen."""
    ws = checkout("qwen", "QwenLM__qwen-code", tmp_path / "ws")
    (ws / ".qwen" / "tmp").mkdir(parents=True)
    (ws / ".qwen" / "tmp" / "qwen-review-pr-7-fetch.json").write_text("{}")
    entry = {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": GUARD}]}
    (ws / ".qwen" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    home = tmp_path / "home"
    home.mkdir()
    args = {"tool_name": "run_shell_command", "tool_input": {"command": "git checkout main"}}
    answer = run_event(home, "qwen", "PreToolUse", event_for(ws, "PreToolUse", **args))
    assert (answer["blocked"], answer["permissionDecision"]) == (True, "deny")
    assert answer["reason"].startswith("Blocked during /review")
