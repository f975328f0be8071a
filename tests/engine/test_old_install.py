"""What an earlier sandboxrun wrote keeps working with this one (issue 31's contracts).

The tree of `f349a0e` (the commit the redesign of issue 31 started from) installs, from
git's own history; this tree then runs what it wrote, as the agent runs it, and
uninstalls it byte for byte. Pins that tree's `review --approve` wrote stay approved.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from sandboxrun import DockerBackend

from .conftest import _CONFIG_DIR, _test_config, cli
from .test_install import (
    CLINE_GUARD,
    bash,
    claude_event,
    claude_project,
    claude_runs,
    cline_event,
    cline_runs,
    snapshot,
)

OLD = "f349a0e"  # before issue 31: one pipeline, the dialects' members, install's registry
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def old_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`sandboxrun/` as it was at `OLD`, from this clone's history."""
    try:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", OLD, "sandboxrun"],
                                 capture_output=True, check=True, timeout=60).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        why = f"no git history holding {OLD} here ({exc}): a full clone has it"
        if os.environ.get("CI") and not _shallow():  # a full clone in CI must have it
            pytest.fail(why)
        pytest.skip(why)
    dest = tmp_path_factory.mktemp("old-tree")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _shallow() -> bool:
    """Whether this checkout is a shallow clone (or no git checkout at all)."""
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return done.returncode != 0 or done.stdout.strip() != "false"


def run(tree: Path | None, *args: str, review: str = "off") -> subprocess.CompletedProcess[str]:
    """The command line of `tree` (None: this one), with the run's config."""
    config = _CONFIG_DIR / f"old-install-{review}.toml"
    config.write_text(_test_config() + f'review = "{review}"\n')
    env = dict(os.environ)
    if tree is not None:  # the old package first: `python -m sandboxrun` imports it (run
        # in its folder: `-m` puts the current folder first on the path)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH")) if p)
    done = subprocess.run(cli(*args, config=config), capture_output=True, text=True, env=env,
                          cwd=tree, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def test_the_old_tree_is_the_one_that_installs(old_tree: Path) -> None:
    """The fixture's tree is imported, not this one (else the tests below prove nothing)."""
    env = {**os.environ, "PYTHONPATH": str(old_tree)}
    code = "import sandboxrun, sys; print(sandboxrun.__file__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=old_tree, check=True, timeout=60)  # fmt: skip
    assert done.stdout.strip().startswith(str(old_tree))


def test_an_old_claude_install_runs_and_uninstalls(
    engine: DockerBackend, tmp_path: Path, old_tree: Path
) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    settings = claude_project(root, "claude")
    before = settings.read_bytes()
    events = [
        claude_event("PreToolUse", root, **bash("rm -rf /")),
        claude_event("PreToolUse", root, **bash("ls")),
        claude_event("UserPromptSubmit", root, prompt="hi"),
    ]
    unsandboxed = [claude_runs(settings, root, e, "CLAUDE_PROJECT_DIR") for e in events]
    run(old_tree, "install", "--agent", "claude", "--workspace", str(root), "--home", str(home))
    written = settings.read_text()
    assert "exec" in written and "--untrusted" in written
    for event, expected in zip(events, unsandboxed, strict=True):
        assert claude_runs(settings, root, event, "CLAUDE_PROJECT_DIR") == expected, event
    run(None, "uninstall", "--agent", "claude", "--workspace", str(root), "--home", str(home))
    assert settings.read_bytes() == before


def test_an_old_cline_shim_runs_and_uninstalls(
    engine: DockerBackend, tmp_path: Path, old_tree: Path
) -> None:
    """The shims of `run --answer agent --hooks-dir` (now answered by the shared path)."""
    root, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    hooks = root / ".clinerules/hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text(CLINE_GUARD)
    (hooks / "PreToolUse").chmod(0o755)
    before = snapshot(root)
    run(old_tree, "install", "--agent", "cline", "--workspace", str(root), "--home", str(home))
    assert snapshot(root) != before
    shim = hooks / "PreToolUse"
    assert "--answer" in shim.read_text()
    for command, expected in (("rm -rf ~/x", (True, "", "Blocked by team policy: rm -rf")),
                              ("ls", (False, "", ""))):  # fmt: skip
        event = cline_event("PreToolUse", root, {"toolName": "execute_command",
                                                 "parameters": {"command": command}})  # fmt: skip
        assert cline_runs(shim, root, event)[0] is expected[0], command
    run(None, "uninstall", "--agent", "cline", "--workspace", str(root), "--home", str(home))
    assert snapshot(root) == before


def test_old_pins_stay_approved(tmp_path: Path, old_tree: Path) -> None:
    """Pins `OLD`'s `review --approve` wrote: the same keys and digests, still approved."""
    root = tmp_path / "project"
    claude_project(root, "claude")
    pins = tmp_path / "pins.json"
    args = ("--agent", "claude", "--workspace", str(root), "--pins", str(pins))
    waiting = json.loads(run(None, "review", *args, "--json", review="required").stdout)
    assert {h["status"] for h in waiting["hooks"]} == {"new"}, waiting  # (what it lists)
    run(old_tree, "review", *args, "--approve", review="required")
    old = json.loads(run(old_tree, "review", *args, "--json", review="required").stdout)
    new = json.loads(run(None, "review", *args, "--json", review="required").stdout)
    assert old == new == {"hooks": []}  # none awaits review: every pin still approves
