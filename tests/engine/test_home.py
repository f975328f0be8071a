"""A home that looks like home (issue #9 item 4), on the real engine: $HOME is the user's
own path, an empty tmpfs where the agents' and tools' folders are writable, and nothing
of the real home shows; a workspace below the home keeps its FIFOs shut (Landlock grants
no folder with a workspace below it).

The homes here live under /var/tmp, not /tmp: Landlock's write allowlist is
hierarchical, and the hook's /tmp is writable whole (see test_hostile_host_objects.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, HookFactory, Settings, _settings
from sandboxrun._sandbox.mounts import HOME_FOLDERS, HOOK_HOME
from sandboxrun._types import ExecRequest

from ..conftest import patch_account_home
from .conftest import cli, engine_settings
from .test_hostile_host_objects import drained, fifo_writes

OWNER = 1000  # the hook runs as the owner of the FIFOs: modes do not stop it


@pytest.fixture
def base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder outside /tmp holding the account home (patched in), with something of
    the user's in it, and a workspace below it."""
    root = Path(tempfile.mkdtemp(prefix="sandboxrun-home-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    home = root / "home"
    (home / "proj").mkdir(parents=True)
    (home / "proj" / "README.md").write_text("hello from the workspace\n")
    (home / "secret.txt").write_text("s3cret\n")
    (home / ".claude").mkdir()
    (home / ".claude" / "log").write_text("host\n")
    (home / ".cache").mkdir()
    if os.getuid() == 0:  # as root, hand everything to the hook's uid
        for path in (root, *root.rglob("*")):
            os.lchown(path, OWNER, OWNER)
    patch_account_home(monkeypatch, home)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def settings(base: Path, **overrides: Any) -> Settings:
    return engine_settings(user=f"{OWNER}:{OWNER}", allowed_roots=(str(base),), **overrides)


def cline_hook(ws: Path, text: str) -> None:
    """Write the workspace's PreToolUse hook."""
    hooks = ws / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text(text)
    (hooks / "PreToolUse").chmod(0o755)


def run_sh(engine: DockerBackend, base: Path, script: str, ws: Path) -> str:
    backend = DockerBackend(settings(base), client=engine.client)
    request = ExecRequest(argv=("/bin/sh", "-c", script), stdin=b"", workdir=str(ws),
                          mounts=(str(ws),), timeout=60)  # fmt: skip
    result = backend.run(request)
    assert result.exit_code == 0, result
    return result.stdout.decode()


def test_home_is_the_users_path_with_only_its_own_folders(
    engine: DockerBackend, base: Path
) -> None:
    """$HOME is the user's path; `>> ~/.claude/log` and ~/.cache work on the hook's own
    copies; nothing of the real home (a secret, the host's log) shows or changes."""
    home, ws = base / "home", base / "home" / "proj"
    out = run_sh(engine, base, """
        echo "home=$HOME"
        echo "top=$(cd ~ && echo .[!.]* *)"  # not ls: gVisor's statx breaks it
        echo x >> ~/.claude/log && echo "log=$(cat ~/.claude/log)"
        touch ~/.cache/c ~/.config/c ~/.local/c ~/.npm/c ~/.cline/c ~/Documents/Cline/c \
            && echo caches=ok
        cat ~/secret.txt 2>/dev/null || echo secret=absent
        cat README.md
    """, ws)  # fmt: skip
    lines = out.splitlines()
    tops = {f.split("/")[0] for f in HOME_FOLDERS} | {"proj"}
    assert lines[0] == f"home={home}", out
    assert sorted(lines[1].removeprefix("top=").split()) == sorted(tops), out
    assert lines[2:] == ["log=x", "caches=ok", "secret=absent", "hello from the workspace"]
    assert (home / ".claude" / "log").read_text() == "host\n"
    assert not (home / ".cache" / "c").exists()


@pytest.mark.parametrize("where", ["proj", ".config/nvim"])
def test_a_fifo_in_a_workspace_below_the_home_cannot_be_written(
    engine: DockerBackend, base: Path, where: str
) -> None:
    """A workspace at ~/proj (the home not writable) or ~/.config/nvim (~/.config not
    writable either; a dot-folder of the home is a root only where allowed_roots lists
    it): a host FIFO in it gets no bytes; ~/.claude stays writable."""
    ws = base / "home" / where
    ws.mkdir(parents=True, exist_ok=True)
    fifo = ws / "pipe"
    os.mkfifo(fifo, 0o666)
    os.chmod(fifo, 0o666)
    cline_hook(ws, "#!/usr/bin/python3\nimport json, os\nout = {}\n" + fifo_writes(fifo) + """
with open(os.path.expanduser("~/.claude/log"), "a") as f:
    out["log"] = f.write("x")
print(json.dumps({"contextModification": json.dumps(out)}))
""")  # fmt: skip
    if os.getuid() == 0:
        for path in (base, *base.rglob("*")):
            os.lchown(path, OWNER, OWNER)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader: writers get no ENXIO
    try:
        s = engine_settings(user=f"{OWNER}:{OWNER}", allowed_roots=(str(base), str(ws)))
        factory = HookFactory(s, DockerBackend(s, client=engine.client))
        result = factory.run("PreToolUse", {}, [str(ws)]).to_json()
        got = drained(reader)
    finally:
        os.close(reader)
    (report,) = result["hooks"]
    assert report["status"] == "completed", report
    out = json.loads(result["contextModification"])
    assert "wrote" not in out.values() and out["log"] == 1, out
    assert got == b""


@pytest.mark.runc_only("gVisor has no Landlock: its home tmpfs is simply writable (harmless)")
def test_a_write_straight_in_the_home_is_refused_and_named(
    engine: DockerBackend, base: Path
) -> None:
    """With a workspace below the home, a write in $HOME itself is refused, and the
    hook's report says so in one sentence."""
    ws = base / "home" / "proj"
    cline_hook(ws, '#!/bin/sh\ntouch "$HOME/marker"\n')
    s = settings(base)
    result = HookFactory(s, DockerBackend(s, client=engine.client)).run("PreToolUse", {}, [str(ws)])
    [outcome] = result.outcomes
    assert outcome.status == "failed", outcome
    assert "stopped a write straight in $HOME" in (outcome.error or ""), outcome


def test_state_with_a_workspace_below_the_home_lives_at_home_hook(
    engine: DockerBackend, base: Path
) -> None:
    """A hook with state keeps it at /home/hook ($HOME there) while a workspace lies below
    the user's home: nothing is mounted inside a state, no workspace becomes writable."""
    ws = base / "home" / "proj"
    cline_hook(ws,
        '#!/bin/bash\nn=$(( $(cat "$HOME/n" 2>/dev/null || echo 0) + 1 )); echo $n > "$HOME/n"\n'
        'echo "{\\"contextModification\\": \\"$HOME $n\\"}"\n'
    )  # fmt: skip
    s = settings(base, state=("*",), state_dir=str(base / "state"))
    factory = HookFactory(s, DockerBackend(s, client=engine.client))
    seen = [factory.run("PreToolUse", {}, [str(ws)]).to_json() for _ in range(2)]
    assert [r["contextModification"] for r in seen] == [f"{HOOK_HOME} 1", f"{HOOK_HOME} 2"], seen


def test_exec_gives_the_account_home_and_none_of_its_files(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Through the CLI, as the account runs it: $HOME is the account's home path, a file
    planted there is not visible, and `>> ~/.claude/log` leaves the host's alone."""
    home = Path(os.path.realpath(_settings.account_home()))
    planted = home / f"sandboxrun-test-{uuid.uuid4().hex[:8]}"
    planted.write_text("s3cret\n")
    log = home / ".claude" / "log"
    before = log.read_bytes() if log.exists() else None
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        done = subprocess.run(
            cli("exec", "--", f'echo "$HOME"; echo ~/* ~/.[!.]*; echo x >> ~/.claude/log; cat ~/.claude/log;'
                f' cat {planted} || true'),
            capture_output=True, text=True, cwd=ws, timeout=120,
        )  # fmt: skip
    finally:
        planted.unlink()
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0] == str(home), done
    assert planted.name not in done.stdout and "s3cret" not in done.stdout
    assert lines[-1] == "x"
    assert (log.read_bytes() if log.exists() else None) == before


def test_exec_mounts_a_hook_named_from_the_home(engine: DockerBackend, tmp_path: Path) -> None:
    """`~/.claude/hooks/x.sh`, as Claude Code settings often name a user's hook, means the
    same inside: the file is mounted and `~` there is the user's home path."""
    folder = Path(_settings.account_home()) / ".claude" / "hooks"
    made = [p for p in (folder.parent, folder) if not p.exists()]  # removed afterwards
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / f"sandboxrun-test-{uuid.uuid4().hex[:8]}.sh"
    script.write_text('#!/bin/sh\necho "ran in $HOME"; exit 2\n')
    script.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        done = subprocess.run(cli("exec", "--", f"~/.claude/hooks/{script.name} --flag"),
                              capture_output=True, text=True, cwd=ws, timeout=120)  # fmt: skip
    finally:
        script.unlink()
        if made:
            shutil.rmtree(made[0])
    home = os.path.realpath(_settings.account_home())
    assert (done.returncode, done.stdout) == (2, f"ran in {home}\n"), done.stderr
