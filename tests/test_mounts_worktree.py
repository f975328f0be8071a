"""Issue 29 item 6: `_sandbox.mounts.git_folders`, what a linked worktree's hooks are given so
that git inside answers about it (its common git folder), and every `.git` file a
repository could craft to reach something else, which mounts nothing and is named.
Both pipelines use it: `run` (the factory's requests) and `exec` (`exec_request`).
No engine (tests/engine/test_worktree.py runs git inside)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandboxrun import ConfigError, ExecRequest, ExecResult, FakeBackend, HookFactory, Settings
from sandboxrun._runner.exec import exec_request
from sandboxrun._sandbox import mounts as _mounts
from sandboxrun._sandbox.mounts import git_folders


def git(where: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(where), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    subprocess.run(["git", *args], cwd=where, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(home: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(main checkout, its linked worktree `wt` on branch feature), outside the home."""
    main = tmp_path / "main"
    main.mkdir()
    (main / "a.txt").write_text("a\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"],
                 ["worktree", "add", "-q", "../wt", "-b", "feature"]):  # fmt: skip
        git(main, *args)
    return main, tmp_path / "wt"


def refused(root: Path, settings: Settings | None = None) -> str:
    found, notes = git_folders([str(root)], settings or Settings.load())
    assert found == [] and len(notes) == 1, (found, notes)
    assert notes[0].startswith(f"git folder of {root} not mounted: ")
    return notes[0]


def test_a_worktree_gets_its_common_git_folder(repo: tuple[Path, Path]) -> None:
    main, wt = repo
    assert git_folders([str(wt), str(main)], Settings.load()) == ([str(main / ".git")], [])


def test_relative_paths_are_read_from_their_folders(repo: tuple[Path, Path]) -> None:
    """git 2.48's `worktree.useRelativePaths`: both links relative, the same answer."""
    main, wt = repo
    (wt / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    (main / ".git/worktrees/wt/gitdir").write_text("../../../../wt/.git\n")
    assert git_folders([str(wt)], Settings.load()) == ([str(main / ".git")], [])


def test_no_git_file_no_mount(repo: tuple[Path, Path], tmp_path: Path) -> None:
    """A folder `.git`, none, a link to the worktree's `.git` file, a FIFO: nothing, and
    nothing to say (git inside reads a folder `.git` in the workspace itself)."""
    main, wt = repo
    plain = tmp_path / "plain"
    plain.mkdir()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").symlink_to(wt / ".git")  # would pass the backlink if followed
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / ".git")
    roots = [str(p) for p in (main, plain, linked, fifo)]
    assert git_folders(roots, Settings.load()) == ([], [])


def fake_worktree(common: Path, ws: Path) -> None:
    """A crafted common folder with a worktree folder `evil`, and the workspace `ws`
    whose `.git` names it, with the backlinks git writes: what only the place refuses."""
    folder = common / "worktrees" / "evil"
    folder.mkdir(parents=True)
    (common / "HEAD").write_text("ref: refs/heads/main\n")
    (common / "objects").mkdir()
    (common / "refs").mkdir()
    ws.mkdir(parents=True, exist_ok=True)
    (ws / ".git").write_text(f"gitdir: {folder}\n")
    (folder / "gitdir").write_text(f"{ws}/.git\n")
    (folder / "commondir").write_text("../..\n")


def test_a_home_dot_folder_is_refused(home: Path, tmp_path: Path) -> None:
    fake_worktree(home / ".ssh", tmp_path / "ws")
    assert "dot-folder of your home" in refused(tmp_path / "ws")


def test_sandboxruns_own_folders_are_refused(home: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    fake_worktree(state, tmp_path / "ws")
    assert "sandboxrun's own" in refused(tmp_path / "ws", Settings.load(state_dir=str(state)))


def test_outside_allowed_roots_is_refused(
    repo: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's allowed_roots, and a server's (what confines its TCP tenants)."""
    _main, wt = repo
    only_wt = Settings.load(allowed_roots=(str(wt),))
    assert "not below allowed_roots" in refused(wt, only_wt)
    monkeypatch.setattr(_mounts, "_server", _mounts._Server((), (str(wt),)))
    assert "not below the server's allowed_roots" in refused(wt)


def test_another_worktrees_folder_is_refused(repo: tuple[Path, Path], tmp_path: Path) -> None:
    main, _wt = repo
    other = tmp_path / "other"
    other.mkdir()
    (other / ".git").write_text(f"gitdir: {main}/.git/worktrees/wt\n")
    assert "belongs to another worktree" in refused(other)


@pytest.mark.parametrize(
    "gitdir",
    ["{main}/.git", "{main}/.git/modules/sub", "{main}", "/etc", "{main}/.git/worktrees"],
)
def test_what_is_no_worktree_folder_is_refused(
    repo: tuple[Path, Path], tmp_path: Path, gitdir: str
) -> None:
    """Another checkout's `.git`, a submodule's folder, a working tree, the system."""
    main, _ = repo
    (main / ".git/modules/sub").mkdir(parents=True)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {gitdir.format(main=main)}\n")
    assert "is not a worktree's folder" in refused(ws)


def test_a_changed_commondir_or_common_folder_is_refused(repo: tuple[Path, Path]) -> None:
    main, wt = repo
    folder = main / ".git/worktrees/wt"
    (folder / "commondir").write_text("/etc\n")
    assert "its commondir is not" in refused(wt)
    (folder / "commondir").write_text("../..\n")
    (main / ".git/HEAD").unlink()
    assert "is not a git folder" in refused(wt)


def test_a_worktree_folder_in_the_workspace_is_refused(tmp_path: Path) -> None:
    """The folder, or its common folder, in the workspace (the repository's own bytes):
    its `commondir` could name what holds the workspace."""
    ws = tmp_path / "ws"
    fake_worktree(ws / "x", ws)
    assert "inside the workspace" in refused(ws)
    above = tmp_path / "above"
    fake_worktree(above, above / "worktrees" / "evil" / "ws")
    assert "inside the workspace" in refused(above / "worktrees" / "evil" / "ws")


@pytest.mark.parametrize("text", ["gitdir:/x", "nothing", "gitdir: " + "a" * 5000, ""])
def test_a_git_file_that_names_no_path_is_refused(tmp_path: Path, text: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text(text)
    assert "not mounted" in refused(ws)


def test_run_and_exec_mount_it_and_name_a_refusal(
    home: Path, repo: tuple[Path, Path], tmp_path: Path
) -> None:
    """Both pipelines: the common folder in every request's mounts; a refused one named
    in each hook's report (`run`)."""
    main, wt = repo
    (home / ".claude").mkdir()
    (home / ".claude/settings.json").write_text(
        '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}}'
    )
    seen: list[ExecRequest] = []

    def hook(request: ExecRequest) -> ExecResult:
        seen.append(request)
        return ExecResult(exit_code=0, stdout=b"", stderr=b"", duration_ms=1)

    settings = Settings.load(agent="claude")
    factory = HookFactory(settings, FakeBackend(hook), home=str(home), cwd=str(wt))
    result = factory.run("PreToolUse", {"cwd": str(wt), "tool_name": "Bash"})
    assert str(main / ".git") in seen[-1].mounts
    assert result.outcomes[0].error is None
    request = exec_request(settings, ["true"], b"{}", None, {}, cwd=str(wt))
    assert request.mounts == (str(wt), str(main / ".git"))
    (wt / ".git").write_text(f"gitdir: {main}/.git\n")
    result = factory.run("PreToolUse", {"cwd": str(wt), "tool_name": "Bash"})
    assert str(main / ".git") not in seen[-1].mounts
    assert "git folder of" in str(result.outcomes[0].error)
    assert exec_request(settings, ["true"], b"{}", None, {}, cwd=str(wt)).mounts == (str(wt),)


def test_kubernetes_needs_a_volume_that_holds_the_git_folder(tmp_path: Path) -> None:
    """The Kubernetes backend gives a worktree's git folder when one of its workspace
    volumes holds it (mounted whole: the volume's path), else refuses the hook with a
    named error: a guard never runs there without the git folder it was given."""
    from sandboxrun._backends.kubernetes.pod import WorkspaceVolume, pod_manifest

    request = ExecRequest(argv=("true",), stdin=b"", workdir="/srv/ws/wt",
                          mounts=("/srv/ws/wt", "/srv/ws/main/.git"))  # fmt: skip
    (tmp_path / "config.toml").write_text("")
    s = Settings.load(config=str(tmp_path / "config.toml"))

    def build(at: str) -> object:
        volume = WorkspaceVolume("pvc", "workspaces", at)
        return pod_manifest(request, s, name="p", volumes=(volume,), run="r", now=0.0)

    assert build("/srv/ws")
    with pytest.raises(ConfigError, match=r"'/srv/ws/main/.git': no workspace volume"):
        build("/srv/ws/wt")
