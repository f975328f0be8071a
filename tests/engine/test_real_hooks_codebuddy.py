"""CodeBuddy hooks from a public repository (issue 18, item 7; provenance and licence in
tests/real_hooks/codebuddy/PROVENANCE.md): three versions of Tencent/tgfx's "commit what
you edited" guard, each run as CodeBuddy runs it on the host (`sh -c` in the project,
the event on stdin, `CODEBUDDY_PROJECT_DIR` set) and through `sandboxrun exec --agent
codebuddy`. Two decide the same sandboxed (one while its cleanup fails, named: the
workspace is read-only); one needs what the sandbox withholds: a list its PostToolUse
hook leaves in the host's /tmp for its Stop hook, which a sandboxed hook never shares."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sandboxrun import DockerBackend, ExecResult
from sandboxrun._dialects.claude.agents import CODEBUDDY
from sandboxrun._types import HookSpec

from .claudelike_hooks import bare, boxed, checkout, event_for

VAR = "CODEBUDDY_PROJECT_DIR"
CHECK = '"$CODEBUDDY_PROJECT_DIR"/.codebuddy/hooks/check-uncommitted.sh'  # settings.json's
TRACK = '"$CODEBUDDY_PROJECT_DIR"/.codebuddy/hooks/track-modified.sh'
TRACK_FILE = Path("/tmp/codebuddy-modified-files.txt")  # the edc266d pair's hand-over


def repository(tmp_path: Path, side: str, folder: str) -> Path:
    """A clone with one committed file, then edited (as the agent's Edit left it)."""
    ws = checkout("codebuddy", folder, tmp_path / side)
    (ws / ".git").rmdir()
    (ws / "src.cpp").write_text("int main() {}\n")
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "src.cpp"], ["commit", "-qm", "init"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    (ws / "src.cpp").write_text("int main() { return 1; }\n")
    return ws


def decision(hook_event: str, done: object) -> tuple[str, bool]:
    """What CodeBuddy (Claude-compatible) makes of a run: the dialect's reading."""
    code, out, err = done.returncode, done.stdout, done.stderr  # type: ignore[attr-defined]
    spec = HookSpec(hook_name=hook_event, name="h", source="project", argv=("h",),
                    workdir="/", mounts=("/",))  # fmt: skip
    outcome = CODEBUDDY.interpret(spec, ExecResult(code, out.encode(), err.encode(), 1), 60.0)
    return outcome.status, bool(outcome.answer.get("blocked", False))


def edit_of(ws: Path, name: str) -> str:
    args = {"tool_name": "Edit", "tool_input": {"file_path": str(ws / name)}}
    return event_for(ws, "PostToolUse", **args)


@pytest.mark.parametrize(("name", "blocked"), [("src.cpp", True), ("new.cpp", False)])
def test_tgfx_post_edit_guard_decides_the_same_sandboxed(
    engine: DockerBackend, tmp_path: Path, name: str, blocked: bool
) -> None:
    """tgfx@196c4ba `.codebuddy/hooks/check-uncommitted.sh` (PostToolUse, jq and git):
    an edited file that differs from HEAD is refused (exit 2, a block JSON on stdout);
    a file git does not track passes. git reads the read-only clone inside just as on
    the host."""
    host = repository(tmp_path, "host", "tgfx-196c4ba")
    box = repository(tmp_path, "box", "tgfx-196c4ba")
    done = bare(host, CHECK, edit_of(host, name), VAR)
    sandboxed = boxed(box, "codebuddy", CHECK, edit_of(box, name))
    assert done.returncode == (2 if blocked else 0), done.stderr
    assert (sandboxed.returncode, sandboxed.stdout) == (
        done.returncode, done.stdout.replace(str(host), str(box))), sandboxed.stderr  # fmt: skip
    assert decision("PostToolUse", sandboxed) == decision("PostToolUse", done)
    assert decision("PostToolUse", done) == ("completed", blocked)


def test_tgfx_stop_guard_blocks_while_its_cleanup_fails(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """tgfx@6bc0f8d `check-uncommitted.sh` (Stop) reads markers under
    `.codebuddy/.modified/`, blocks the end of the turn for an uncommitted edit and then
    removes the markers. Sandboxed it blocks the same; its `rm -rf` of the markers fails
    on the read-only workspace, and stderr names it."""
    runs = []
    for side in ("host", "box"):
        ws = repository(tmp_path, side, "tgfx-6bc0f8d")
        (ws / ".codebuddy" / ".modified").mkdir()
        (ws / ".codebuddy" / ".modified" / "1").write_text(str(ws / "src.cpp"))
        runs.append(ws)
    host, box = runs
    done = bare(host, CHECK, event_for(host, "Stop", stop_hook_active=False), VAR)
    sandboxed = boxed(box, "codebuddy", CHECK, event_for(box, "Stop", stop_hook_active=False))
    assert done.returncode == sandboxed.returncode == 2, sandboxed.stderr
    assert sandboxed.stdout == done.stdout.replace(str(host), str(box))
    assert decision("Stop", sandboxed) == decision("Stop", done) == ("completed", True)
    assert not (host / ".codebuddy" / ".modified").exists()
    assert (box / ".codebuddy" / ".modified" / "1").exists()
    assert "Read-only file system" in sandboxed.stderr


def test_tgfx_tracked_edits_do_not_reach_the_stop_guard_sandboxed(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Needs what the sandbox withholds: tgfx@edc266d's PostToolUse `track-modified.sh`
    appends the edited path to /tmp/codebuddy-modified-files.txt and its Stop
    `check-uncommitted.sh` reads it there. On the host the pair blocks the end of the
    turn; sandboxed each hook has its own throwaway /tmp, the list never reaches the
    Stop hook and the turn ends. The sandbox loosens this guard: named here and in
    PROVENANCE.md, not hidden."""
    before = TRACK_FILE.read_bytes() if TRACK_FILE.exists() else None
    host = repository(tmp_path, "host", "tgfx-edc266d")
    box = repository(tmp_path, "box", "tgfx-edc266d")
    try:
        TRACK_FILE.unlink(missing_ok=True)
        tracked = bare(host, TRACK, edit_of(host, "src.cpp"), VAR)
        done = bare(host, CHECK, event_for(host, "Stop", stop_hook_active=False), VAR)
    finally:
        if before is None:
            TRACK_FILE.unlink(missing_ok=True)
        else:
            TRACK_FILE.write_bytes(before)
    assert tracked.returncode == 0, tracked.stderr
    assert done.returncode == 2 and "AUTO-COMMIT REQUIRED" in done.stdout, done.stderr
    assert decision("Stop", done) == ("completed", True)
    tracked = boxed(box, "codebuddy", TRACK, edit_of(box, "src.cpp"))
    sandboxed = boxed(box, "codebuddy", CHECK, event_for(box, "Stop", stop_hook_active=False))
    assert (tracked.returncode, sandboxed.returncode, sandboxed.stdout) == (0, 0, "")
    assert decision("Stop", sandboxed) == ("completed", False)
