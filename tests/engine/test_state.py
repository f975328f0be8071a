"""Hook state on the real engine: a persistent private $HOME for the hooks the user names,
per hook and workspace, size-capped, listed and cleaned by `sandboxrun state`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, HookFactory

from .conftest import HookWriter, cli, engine_runtime, engine_settings

# Claude Code's and Cline's documented "warn once" pattern: a marker in $HOME.
WARN_ONCE = """
    if [ -e "$HOME/.warned" ]; then echo '{"cancel": false}'; exit 0; fi
    touch "$HOME/.warned"
    echo '{"cancel": false, "contextModification": "WARN: first edit in this workspace"}'
"""


def _run(engine: DockerBackend, tmp_path: Path, workspace: Path, **settings: Any) -> dict[str, Any]:
    s = engine_settings(state_dir=str(tmp_path / "state"), **settings)
    factory = HookFactory(s, DockerBackend(s, client=engine.client), home=str(tmp_path / "home"))
    return factory.run("PreToolUse", {}, [str(workspace)]).to_json()


def test_warn_once_with_state(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """With state on, a "warn once" hook warns on the first run and is silent on the next."""
    hook(WARN_ONCE)
    first = _run(engine, tmp_path, workspace, state=("*/PreToolUse",))
    second = _run(engine, tmp_path, workspace, state=("*/PreToolUse",))
    assert first["contextModification"].startswith("WARN"), first
    assert second["contextModification"] == "", second
    assert second["hooks"][0]["error"] is None


def test_warn_once_without_state_warns_every_time(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """State is off by default: every run starts from an empty home and warns again."""
    hook(WARN_ONCE)
    runs = [_run(engine, tmp_path, workspace) for _ in range(2)]
    assert all(r["contextModification"].startswith("WARN") for r in runs), runs
    assert not (tmp_path / "state").exists()


def test_two_workspaces_get_two_states(
    engine: DockerBackend, tmp_path: Path, workspace: Path
) -> None:
    """The same global hook keeps a separate state in each workspace (a loop counter)."""
    folder = tmp_path / "home" / ".cline" / "hooks"
    folder.mkdir(parents=True)
    counter = folder / "PreToolUse"
    counter.write_text(
        "#!/bin/bash\n"
        'n=$(( $(cat "$HOME/count" 2>/dev/null || echo 0) + 1 )); echo $n > "$HOME/count"\n'
        'echo "{\\"contextModification\\": \\"run $n\\"}"\n'
    )
    counter.chmod(0o755)
    other = tmp_path / "other"
    other.mkdir()
    state = ("*/.cline/hooks/PreToolUse",)
    seen = [
        _run(engine, tmp_path, ws, state=state)["contextModification"]
        for ws in (workspace, workspace, other, workspace)
    ]
    assert seen == ["run 1", "run 2", "run 1", "run 3"]
    assert len([p for p in (tmp_path / "state").iterdir() if p.is_dir()]) == 2


def test_state_makes_nothing_else_writable(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """A hook with state writes its home, yet the workspace and root stay read-only, and the
    links it plants in its state are never followed by the host (size or clean)."""
    (workspace / "big").write_bytes(b"b" * 500_000)
    hook(f"""
        echo kept > "$HOME/note" || exit 9
        touch {workspace}/new-file 2>/dev/null && echo WROTE-WS
        echo x >> {workspace}/README.md 2>/dev/null && echo WROTE-README
        touch /etc/new 2>/dev/null && echo WROTE-ROOT
        ln -s {workspace}/big "$HOME/link-file"
        ln -s {workspace} "$HOME/link-dir"
        echo '{{"cancel": false}}'
    """)
    result = _run(engine, tmp_path, workspace, state=("*",))
    out = result["hooks"][0]
    assert out["status"] == "completed", result
    assert "WROTE" not in json.dumps(result)
    assert not (workspace / "new-file").exists()
    assert (workspace / "README.md").read_text() == "hello from the workspace\n"
    (home,) = [p for p in (tmp_path / "state").iterdir() if p.is_dir()]
    assert (home / "note").read_text() == "kept\n"
    assert stat.S_IMODE(os.lstat(home).st_mode) == 0o700
    config = _config(tmp_path, 'state = ["*"]')
    listed = json.loads(_cli(config, "state", "list", "--json").stdout)["states"]
    assert listed[0]["bytes"] < 100_000  # the links count as links, not as what they name
    _cli(config, "state", "clean", "--all")
    assert not home.exists()
    assert (workspace / "big").stat().st_size == 500_000
    assert (workspace / "README.md").read_text() == "hello from the workspace\n"


def test_over_the_cap_runs_with_an_empty_home(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """A state grown past state_size is not mounted: the hook warns again and its report
    says why, until `state clean` empties it."""
    hook(WARN_ONCE + 'head -c 20000 /dev/zero > "$HOME/blob"\n')
    opts: dict[str, Any] = {"state": ("*",), "state_size": "8k"}
    assert _run(engine, tmp_path, workspace, **opts)["contextModification"].startswith("WARN")
    capped = _run(engine, tmp_path, workspace, **opts)
    assert capped["contextModification"].startswith("WARN"), capped
    assert "over state_size 8k" in capped["hooks"][0]["error"]


def _config(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "config.toml"
    runtime = f'runtime = "{engine_runtime()}"\n' if engine_runtime() else ""
    path.write_text(f'{runtime}state_dir = "{tmp_path / "state"}"\n{extra}\n')
    return path


def _cli(config: Path, *args: str, stdin: str = "", home: Path | None = None) -> Any:
    done = subprocess.run(
        cli(*args, config=config, home=home),
        input=stdin, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def test_state_list_and_clean_through_the_cli(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """`run` keeps the state the config turns on; `state list` names its hook, workspace
    and size; `state clean KEY` removes it; the next run warns again."""
    path = hook(WARN_ONCE)
    config = _config(tmp_path, 'state = ["*/PreToolUse"]')
    run = ("run", "PreToolUse", "--workspace", str(workspace))
    home = tmp_path / "home"
    assert "WARN" in _cli(config, *run, stdin="{}", home=home).stdout
    assert "WARN" not in _cli(config, *run, stdin="{}", home=home).stdout
    (state,) = json.loads(_cli(config, "state", "list", "--json").stdout)["states"]
    assert (state["hook"], state["workspace"]) == (str(path), str(workspace))
    assert state["source"] == "workspace" and state["bytes"] >= 0
    assert state["key"] in _cli(config, "state", "list").stdout
    assert "removed 1" in _cli(config, "state", "clean", state["key"]).stdout
    assert "no hook states" in _cli(config, "state", "list").stdout
    assert "WARN" in _cli(config, *run, stdin="{}", home=home).stdout


def test_exec_keeps_state_for_a_named_command(
    engine: DockerBackend, workspace: Path, tmp_path: Path
) -> None:
    """`sandboxrun exec` gives a command the user named in `state` the same persistent home."""
    config = _config(tmp_path, 'state = ["*warn-once*"]')
    command = textwrap.dedent("""
        : warn-once; if [ -e ~/.w ]; then echo silent; else touch ~/.w; echo warn; fi
    """).strip()
    argv = ("exec", "--workspace", str(workspace), "--", command)
    assert _cli(config, *argv).stdout == "warn\n"
    assert _cli(config, *argv).stdout == "silent\n"


@pytest.fixture(autouse=True)
def _no_state_left_writable(tmp_path: Path) -> Any:
    """Every state folder these tests leave is 0700 (checked after each test)."""
    yield
    root = tmp_path / "state"
    for p in root.iterdir() if root.exists() else ():
        if p.is_dir():
            assert stat.S_IMODE(os.lstat(p).st_mode) == 0o700
