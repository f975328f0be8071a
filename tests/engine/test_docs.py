"""Every shell block of the docs marked `<!-- runnable -->` runs, against the real engine,
as a reader would type it (docs/writing-docs.md): with bash, in a fresh folder that is
both its current directory and its `$HOME` and links this checkout's `examples/` and
`.venv/` (a block may use them as from a clone), `.venv/bin` first on PATH, and
`CI=true` so no server is started on the account's socket. Exit 0 or the test fails
with the block's output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docblocks import ROOT, Block, runnable

# What a block's output must show, beyond exit 0, where the block itself cannot fail
# (the CI gate's example ends in `echo "exit $?"`: the gate must have run and said no).
EXPECT = {"ci.md": ("FAILED: 1 of 6 events did not pass", "exit 1\n")}
TIMEOUT = 300  # seconds a block may take (doctor starts containers; check runs six events)


@pytest.mark.parametrize("block", runnable(), ids=lambda b: b.where)
def test_runnable_block_exits_0(block: Block, tmp_path: Path) -> None:
    folder = tmp_path / "doc"
    folder.mkdir()
    folder.chmod(0o755)  # as root, hooks run as nobody: a clone's folder is readable
    (folder / "examples").symlink_to(ROOT / "examples")
    venv = Path(sys.executable).parent.parent
    (folder / ".venv").symlink_to(venv)
    keep = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOXRUN_")}
    env = keep | {"HOME": str(folder), "CI": "true",
                  "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", block.body], cwd=folder, env=env, capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, (
        f"{block.where} exited {done.returncode}\n{block.body}\n"
        f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    )
    for text in EXPECT.get(block.page, ()):
        assert text in done.stdout, f"{block.where}: {text!r} not in\n{done.stdout}"
