"""CodeBuddy hooks from a public repository (issue 18, item 7; provenance and licence in
tests/real_hooks/codebuddy/PROVENANCE.md): three versions of Tencent/tgfx's "commit what
you edited" guard, each run as CodeBuddy runs it on the host (`sh -c` in the project,
the event on stdin, `CODEBUDDY_PROJECT_DIR` set) and through `sandboxrun exec --agent
codebuddy`. Two decide the same sandboxed (one while its cleanup fails, named: the
workspace is read-only); one needs what the sandbox withholds by default: a list its
PostToolUse hook leaves in the host's /tmp for its Stop hook, which a sandboxed hook shares
only under `tmp = "session"` (then it blocks as on the host)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxrun import DockerBackend, ExecResult
from sandboxrun._dialects.claude.agents import CODEBUDDY
from sandboxrun._types import HookSpec

from .claudelike_hooks import bare, boxed, checkout, event_for
from .conftest import cli

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
    Stop hook and the turn ends. Under the default `tmp = "run"` the sandbox loosens this
    guard: named here and in PROVENANCE.md, not hidden (`tmp = "session"`: below)."""
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


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp for the workspace: nothing may be mounted below a shared
    /tmp (pytest's own folders are in /tmp), so a workspace there never gets one."""
    folder = Path(tempfile.mkdtemp(prefix="sr-codebuddy-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder)


def session_config(tmp_path: Path) -> Path:
    """This run's config (runtime, image, no server) with `tmp = "session"`."""
    config = tmp_path / "session.toml"
    base = Path(cli("exec")[cli("exec").index("--config") + 1]).read_text()
    config.write_text(f'{base}tmp = "session"\nstate_dir = "{tmp_path / "state"}"\n')
    return config


def boxed_with(
    config: Path, ws: Path, command: str, event: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli("exec", "--agent", "codebuddy", "--", command, config=config),
                          input=event, capture_output=True, text=True, cwd=ws,
                          timeout=180)  # fmt: skip


def test_tgfx_tracked_edits_reach_the_stop_guard_with_a_session_tmp(
    engine: DockerBackend, tmp_path: Path, outside_tmp: Path
) -> None:
    """With `tmp = "session"` in the user's config the edc266d pair blocks sandboxed as
    on the host: both hooks of the session share a /tmp (a folder under state_dir, never
    the host's /tmp), the list reaches the Stop hook, which blocks and empties it.
    Another session of the same workspace sees nothing of it."""
    before = TRACK_FILE.read_bytes() if TRACK_FILE.exists() else None
    config = session_config(tmp_path)
    box = repository(outside_tmp, "box", "tgfx-edc266d")
    stop = event_for(box, "Stop", stop_hook_active=False)
    tracked = boxed_with(config, box, TRACK, edit_of(box, "src.cpp"))
    assert tracked.returncode == 0, tracked.stderr
    other = boxed_with(config, box, CHECK, stop.replace('"s1"', '"s2"'))
    assert (other.returncode, other.stdout) == (0, ""), other.stderr
    sandboxed = boxed_with(config, box, CHECK, stop)
    assert sandboxed.returncode == 2 and "AUTO-COMMIT REQUIRED" in sandboxed.stdout
    assert str(box / "src.cpp") in sandboxed.stdout, sandboxed.stderr
    assert decision("Stop", sandboxed) == ("completed", True)
    again = boxed_with(config, box, CHECK, stop)  # the guard emptied its list, as on the host
    assert (again.returncode, again.stdout) == (0, ""), again.stderr
    assert (TRACK_FILE.read_bytes() if TRACK_FILE.exists() else None) == before


def test_a_link_planted_in_the_session_tmp_reaches_nothing_of_the_host(
    engine: DockerBackend, tmp_path: Path, outside_tmp: Path
) -> None:
    """A hook plants links in the shared /tmp to a host file and to the user's state
    folder: the next hook of the session reads nothing through them (they resolve
    inside its container), and `state clean` removes the links, never what they name."""
    config = session_config(tmp_path)
    ws = outside_tmp / "ws"
    (ws / ".git").mkdir(parents=True)
    secret = tmp_path / "secret"
    secret.write_text("host secret\n")
    event = event_for(ws, "PostToolUse", tool_name="Edit")
    plant = boxed_with(config, ws, f"ln -s {secret} /tmp/l && ln -s {tmp_path} /tmp/d", event)
    assert plant.returncode == 0, plant.stderr
    read = boxed_with(config, ws, "cat /tmp/l; ls /tmp/d; ls -a /tmp", event)
    # The links dangle inside (nothing of the host's there): cat fails, ls names the link.
    assert "host secret" not in read.stdout and "cat: /tmp/l: No such file" in read.stderr
    assert read.stdout.split("\n")[0] == "/tmp/d" and {"d", "l"} <= set(read.stdout.split())
    cleaned = subprocess.run(cli("state", "clean", "--all", config=config),
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert cleaned.returncode == 0 and "removed 1 hook state" in cleaned.stdout, cleaned.stderr
    assert secret.read_text() == "host secret\n" and (tmp_path / "state").is_dir()
    assert os.listdir(tmp_path / "state") == []


def test_tgfx_pair_found_by_run_blocks_with_a_session_tmp(
    engine: DockerBackend, tmp_path: Path, outside_tmp: Path
) -> None:
    """The same pair as `run --agent codebuddy` finds it in the project's
    `.codebuddy/settings.json`: PostToolUse then Stop of one session, the Stop blocks;
    a Stop of another session of the workspace does not."""
    config = session_config(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    box = repository(outside_tmp, "box", "tgfx-edc266d")

    def run(hook_event: str, event: str) -> dict[str, object]:
        done = subprocess.run(cli("run", hook_event, "--agent", "codebuddy", config=config,
                                  home=home), input=event, capture_output=True, text=True,
                              timeout=180)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(box / "src.cpp")}}
    assert run("PostToolUse", event_for(box, "PostToolUse", **edit))["blocked"] is False
    stop = event_for(box, "Stop", stop_hook_active=False)
    assert run("Stop", stop.replace('"s1"', '"s2"'))["blocked"] is False  # another session's
    assert run("Stop", stop)["blocked"] is True  # exit 2: CodeBuddy blocks (as on the host)


def test_a_session_tmp_over_the_cap_is_not_mounted_again(
    engine: DockerBackend, tmp_path: Path, outside_tmp: Path
) -> None:
    """A hook fills the shared /tmp past `tmpfs_size`: the next run of the session gets an
    empty /tmp of its own, and says why on stderr (the agent shows it)."""
    config = session_config(tmp_path)
    config.write_text(config.read_text() + 'tmpfs_size = "1m"\n')
    ws = outside_tmp / "ws"
    (ws / ".git").mkdir(parents=True)
    event = event_for(ws, "PostToolUse", tool_name="Edit")
    fill = boxed_with(config, ws, "head -c 2000000 /dev/zero > /tmp/big", event)
    assert fill.returncode == 0, fill.stderr
    after = boxed_with(config, ws, "ls -A /tmp", event)
    assert (after.returncode, after.stdout) == (0, ""), after.stderr
    assert "session /tmp not mounted" in after.stderr and "tmpfs_size 1m" in after.stderr
