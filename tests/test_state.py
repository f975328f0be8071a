"""Hook state (`_sandbox.state`): the key, the size cap and the removal that follows no link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandboxrun import ExecResult, FakeBackend, HookFactory, SandboxrunError, Settings
from sandboxrun._errors import ConfigError
from sandboxrun._sandbox import state as _state
from tests.conftest import user_config


def _settings(tmp_path: Path, **extra: object) -> Settings:
    return Settings.load(state_dir=str(tmp_path / "state"), **extra)


def test_key_depends_on_source_name_and_workspace(tmp_path: Path) -> None:
    """Two hooks, or one hook in two workspaces, never share a key; the same one always does."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    key = _state.state_key("global", "/h/PreToolUse", str(a))
    assert key == _state.state_key("global", "/h/PreToolUse", str(a))
    assert key != _state.state_key("global", "/h/PreToolUse", str(b))
    assert key != _state.state_key("workspace", "/h/PreToolUse", str(a))
    assert key != _state.state_key("global", "/h/PostToolUse", str(a))
    assert len(key) == _state.KEY_LENGTH and int(key, 16) >= 0


def test_state_is_off_by_default(home: Path, tmp_path: Path) -> None:
    """Without `state` in the user's settings no hook gets a state folder."""
    settings = _settings(tmp_path)
    assert _state.prepare(settings, "global", "/h/PreToolUse", str(tmp_path)) == (None, None)
    assert not (tmp_path / "state").exists()


def test_state_comes_from_the_user_config(home: Path, tmp_path: Path) -> None:
    """The user's config file turns state on for the hooks its globs name, and only those."""
    user_config(home, f'state = ["*/warn-once*"]\nstate_dir = "{tmp_path / "st"}"\n')
    settings = Settings.load()
    path, note = _state.prepare(settings, "global", "/h/warn-once.sh", str(tmp_path))
    assert note is None and path is not None
    st = os.lstat(path)
    assert (st.st_mode & 0o777, st.st_uid) == (0o700, _state.hook_ids(None)[0])
    assert _state.prepare(settings, "global", "/h/other.sh", str(tmp_path)) == (None, None)


def test_over_the_cap_is_not_mounted_and_says_why(home: Path, tmp_path: Path) -> None:
    """A state over state_size is not mounted; the note names the folder and the cap."""
    settings = _settings(tmp_path, state=("*",), state_size="4k")
    path, _ = _state.prepare(settings, "global", "/h/x", str(tmp_path))
    assert path is not None
    Path(path, "big").write_bytes(b"x" * 8192)
    again, note = _state.prepare(settings, "global", "/h/x", str(tmp_path))
    assert again is None and note is not None
    assert "state_size 4k" in note and path in note


def test_a_chmod_of_the_home_is_undone(home: Path, tmp_path: Path) -> None:
    """A hook that opened its home to everyone finds it 0700 again at the next run."""
    settings = _settings(tmp_path, state=("*",))
    path, _ = _state.prepare(settings, "global", "/h/x", str(tmp_path))
    assert path is not None
    os.chmod(path, 0o777)
    _state.prepare(settings, "global", "/h/x", str(tmp_path))
    assert os.lstat(path).st_mode & 0o777 == 0o700


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A large file and a folder outside the state, which links inside point at."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious").write_bytes(b"p" * 100_000)
    return folder


def _hostile_state(root: Path, outside: Path) -> Path:
    state = root / "s"
    (state / "sub").mkdir(parents=True)
    (state / "link-file").symlink_to(outside / "precious")
    (state / "link-dir").symlink_to(outside)
    (state / "sub" / "locked").mkdir()
    (state / "sub" / "locked" / "f").write_text("x")
    os.chmod(state / "sub" / "locked", 0)
    os.mkfifo(state / "fifo")
    return state


def test_size_does_not_follow_links(tmp_path: Path, outside: Path) -> None:
    """A symlink inside the state counts as itself, not as the file outside it points at."""
    state = _hostile_state(tmp_path, outside)
    try:
        assert _state.size_of(state) < 100_000
    finally:
        os.chmod(state / "sub" / "locked", 0o700)


def test_remove_follows_no_link_and_handles_locked_folders(tmp_path: Path, outside: Path) -> None:
    """Removal deletes the links, never what they name, and gets through a chmod 000 folder."""
    state = _hostile_state(tmp_path, outside)
    _state.remove(state)
    assert not state.exists()
    assert (outside / "precious").read_bytes() == b"p" * 100_000


def test_clean_and_list(home: Path, tmp_path: Path) -> None:
    """`states` lists each state with its hook and workspace; `clean` removes by key, by
    a gone workspace, or all; a key that is not one is refused."""
    gone, kept = tmp_path / "gone", tmp_path / "kept"
    gone.mkdir()
    kept.mkdir()
    settings = _settings(tmp_path, state=("*",))
    _state.prepare(settings, "global", "/h/x", str(gone))
    _state.prepare(settings, "global", "/h/x", str(kept))
    listed = {s.workspace: s for s in _state.states(settings)}
    assert set(listed) == {str(gone), str(kept)} and listed[str(kept)].hook == "/h/x"
    gone.rmdir()
    assert [s.workspace for s in _state.clean(settings)] == [str(gone)]
    with pytest.raises(ConfigError, match="not a state key"):
        _state.clean(settings, "../etc")
    assert [s.workspace for s in _state.clean(settings, listed[str(kept)].key)] == [str(kept)]
    assert _state.states(settings) == []


def test_runner_mounts_state_only_for_named_hooks(
    home: Path, tmp_path: Path, make_hook: object
) -> None:
    """The runner hands the backend the state folder for a named hook, none for others,
    and a hook over the cap runs with an empty home and a report that says why."""
    ws = tmp_path / "ws"
    hooks = ws / ".clinerules" / "hooks"
    make_hook(hooks, "PreToolUse")  # type: ignore[operator]
    make_hook(hooks, "PostToolUse")  # type: ignore[operator]
    ok = ExecResult(exit_code=0, stdout=b'{"cancel": false}', stderr=b"", duration_ms=1)
    backend = FakeBackend(lambda r: ok)
    settings = _settings(tmp_path, state=("*/PreToolUse",), state_size="1k")
    factory = HookFactory(settings, backend, home=str(home))
    factory.run("PreToolUse", {}, [str(ws)])
    factory.run("PostToolUse", {}, [str(ws)])
    pre, post = backend.requests
    assert pre.state and Path(pre.state).parent == tmp_path / "state"
    assert post.state is None
    Path(pre.state, "big").write_bytes(b"x" * 4096)
    report = factory.run("PreToolUse", {}, [str(ws)]).to_json()["hooks"][0]
    assert backend.requests[-1].state is None
    assert report["status"] == "completed" and "state_size 1k" in report["error"]


def test_state_dir_must_be_absolute(home: Path) -> None:
    """A relative state_dir is a configuration error, not a folder below the cwd."""
    with pytest.raises(SandboxrunError, match="state_dir"):
        Settings.load(state_dir="rel/state")


def test_default_state_dir_is_in_the_accounts_data_folder(home: Path) -> None:
    """Without state_dir, states live under the account's ~/.local/share/sandboxrun/state."""
    assert _state.state_root(Settings.load()) == home / ".local/share/sandboxrun/state"
