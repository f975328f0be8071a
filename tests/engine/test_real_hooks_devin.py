"""Devin CLI hooks from public repositories (issue 18, item 7; provenance and licences in
tests/real_hooks/devin/PROVENANCE.md), each run as Devin runs it on the host and then
through `sandboxrun exec --agent devin`, with the same decision: a guard that blocks, a
PostToolUse guard reading the edited file, a context nudge, an input rewrite (dropped
for a repository's command), and a logger that needs a workspace write, whose failure
the sandbox names. `run --agent devin` finds the hooks in the repository's own
`.devin/hooks.v1.json` (no `hooks` wrapper) and answers as the bare run reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandboxrun import DockerBackend, ExecResult
from sandboxrun._dialects.claude.agents import DEVIN
from sandboxrun._types import HookSpec

from .claudelike_hooks import bare, boxed, checkout, event_for, run_event

VAR = "DEVIN_PROJECT_DIR"


def both(tmp_path: Path, folder: str) -> tuple[Path, Path]:
    """Two clones of one repository: one for the host run, one for the sandboxed run
    (a hook that writes into its clone must not leave a trace for the other)."""
    return (checkout("devin", folder, tmp_path / "host" / folder),
            checkout("devin", folder, tmp_path / "box" / folder))  # fmt: skip


def decision(hook_event: str, done: object) -> dict[str, object]:
    """What Devin (Claude-compatible) makes of a run: the dialect's reading."""
    code, out, err = done.returncode, done.stdout, done.stderr  # type: ignore[attr-defined]
    spec = HookSpec(hook_name=hook_event, name="h", source="project", argv=("h",),
                    workdir="/", mounts=("/",))  # fmt: skip
    result = ExecResult(code, out.encode(), err.encode(), 1)
    outcome = DEVIN.interpret(spec, result, 60.0)
    return {"status": outcome.status, "blocked": outcome.answer.get("blocked", False),
            "context": outcome.answer.get("additionalContext", "")}  # fmt: skip


@pytest.mark.parametrize(("command", "code"), [("rm -rf build/", 2), ("ls -la", 0)])
def test_api_forge_guard_blocks_a_destructive_command(
    engine: DockerBackend, tmp_path: Path, command: str, code: int
) -> None:
    """EdgarSocrates98/api-forge scripts/devin_pretool_guard.py: exit 2 with its block
    JSON for `rm -rf`, silence otherwise; byte for byte the same sandboxed."""
    host, box = both(tmp_path, "api-forge")
    hook = "python scripts/devin_pretool_guard.py"
    args = {"tool_name": "exec", "tool_input": {"command": command}}
    done = bare(host, hook, event_for(host, "PreToolUse", **args), VAR)
    sandboxed = boxed(box, "devin", hook, event_for(box, "PreToolUse", **args))
    assert (sandboxed.returncode, sandboxed.stdout) == (done.returncode, done.stdout)
    assert done.returncode == code, sandboxed.stderr
    assert ('"decision": "block"' in done.stdout) == (code == 2)
    assert decision("PreToolUse", sandboxed) == decision("PreToolUse", done)


def test_api_forge_config_through_run(engine: DockerBackend, tmp_path: Path) -> None:
    """`run` reads the repository's hooks.v1.json as Devin does: the guard denies
    `rm -rf` (exit 2), the inline SessionStart hook's text becomes context."""
    host, box = both(tmp_path, "api-forge")
    home = tmp_path / "home"
    home.mkdir()
    args = {"tool_name": "exec", "tool_input": {"command": "rm -rf /"}}
    answer = run_event(home, "devin", "PreToolUse", event_for(box, "PreToolUse", **args))
    assert (answer["blocked"], answer["permissionDecision"]) == (True, "deny")
    [report] = answer["hooks"]
    assert (report["source"], report["exitCode"]) == ("project", 2)
    inline = json.loads((host / ".devin/hooks.v1.json").read_text())["SessionStart"][0]
    command = inline["hooks"][0]["command"]
    done = bare(host, command, event_for(host, "SessionStart", source="startup"), VAR)
    started = run_event(home, "devin", "SessionStart",
                        event_for(box, "SessionStart", source="startup"))  # fmt: skip
    assert started["additionalContext"] == done.stdout.strip() != ""
    assert decision("SessionStart", done)["context"] == started["additionalContext"]


def test_battleship_css_guard_reads_the_edited_file(engine: DockerBackend, tmp_path: Path) -> None:
    """jakestergar/battleship-devin scripts/guard-css-braces.py: after an edit, a
    stylesheet with an unclosed block is refused (exit 2, the reason on stderr); the
    file is read at the same absolute path inside."""
    host, box = both(tmp_path, "battleship-devin")
    hook = "python3 scripts/guard-css-braces.py"
    results = []
    for ws, run in ((host, None), (box, "box")):
        (ws / "src").mkdir()
        (ws / "src" / "style.css").write_text("@media (max-width: 600px) {\n  a { color: red; }\n")
        args = {"tool_name": "edit", "tool_input": {"file_path": str(ws / "src" / "style.css")}}
        event = event_for(ws, "PostToolUse", **args)
        results.append(bare(ws, hook, event, VAR) if run is None
                       else boxed(ws, "devin", hook, event))  # fmt: skip
    done, sandboxed = results
    assert (sandboxed.returncode, sandboxed.stdout) == (done.returncode, done.stdout) == (2, "")
    assert "1 block(s) left unclosed" in done.stderr
    assert done.stderr.replace(str(host), str(box)) in sandboxed.stderr
    assert decision("PostToolUse", sandboxed)["blocked"] is True


def test_devin_bundle_nudge_adds_context(engine: DockerBackend, tmp_path: Path) -> None:
    """Leostruka/devin-bundle scripts/behavioral-nudge.py (UserPromptSubmit): its
    additionalContext JSON, byte for byte, and kept for a repository's command."""
    host, box = both(tmp_path, "devin-bundle")
    hook = "python scripts/behavioral-nudge.py"
    done = bare(host, hook, event_for(host, "UserPromptSubmit", prompt="hi"), VAR)
    for options in ((), ("--untrusted",)):
        sandboxed = boxed(box, "devin", hook, event_for(box, "UserPromptSubmit", prompt="hi"),
                          *options)  # fmt: skip
        assert (sandboxed.returncode, sandboxed.stdout) == (done.returncode, done.stdout)
    assert "Self-check before responding" in decision("UserPromptSubmit", done)["context"]


def test_zenav1_exec_timeout_rewrite_is_dropped_for_a_repository(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """imazen/zenav1-aom .devin/hooks/exec-timeout.py rewrites the command (under
    `hookSpecificOutput.PreToolUse`, a shape of its own): passed byte for byte for the
    user's own command; for a repository's (`--untrusted`) the rewrite is dropped and
    named, and what remains is still an answer Devin reads (no decision)."""
    host, box = both(tmp_path, "zenav1-aom")
    hook = json.loads((host / ".devin/hooks.v1.json").read_text())["PreToolUse"][0]
    command = hook["hooks"][0]["command"]
    args = {"tool_name": "exec", "tool_input": {"command": "make -j8"}}
    done = bare(host, command, event_for(host, "PreToolUse", **args), VAR)
    assert done.returncode == 0 and "updatedInput" in done.stdout, done.stderr
    sandboxed = boxed(box, "devin", command, event_for(box, "PreToolUse", **args))
    assert (sandboxed.returncode, sandboxed.stdout) == (0, done.stdout)
    untrusted = boxed(box, "devin", command, event_for(box, "PreToolUse", **args), "--untrusted")
    assert untrusted.returncode == 0
    assert json.loads(untrusted.stdout) == {"hookSpecificOutput": {}}
    assert "PreToolUse ignored (untrusted" in untrusted.stderr


def test_hook_probe_logger_cannot_write_the_workspace(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Assert-Labs/hook-probe .devin/log.sh appends each event to the project's
    `.hook-probe/events.jsonl`. On the host it does; sandboxed the workspace is
    read-only: the hook still exits 0 (Devin proceeds either way), nothing is written,
    and stderr names the read-only file system."""
    host, box = both(tmp_path, "hook-probe")
    shared = Path("/tmp/hook-probe-events.jsonl")  # the hook's second copy, on the host
    before = shared.read_bytes() if shared.exists() else None
    command = '"${DEVIN_PROJECT_DIR:-.}/.devin/log.sh" devin-repo SessionStart'
    try:
        done = bare(host, command, event_for(host, "SessionStart", source="startup"), VAR)
    finally:
        if before is None:
            shared.unlink(missing_ok=True)
        else:
            shared.write_bytes(before)
    sandboxed = boxed(box, "devin", command, event_for(box, "SessionStart", source="startup"))
    assert (done.returncode, done.stdout) == (sandboxed.returncode, sandboxed.stdout) == (0, "")
    assert json.loads((host / ".hook-probe/events.jsonl").read_text())["event"] == "SessionStart"
    assert not (box / ".hook-probe").exists()
    assert "Read-only file system" in sandboxed.stderr, sandboxed.stderr
    assert decision("SessionStart", sandboxed) == decision("SessionStart", done)
