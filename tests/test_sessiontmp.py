"""A session's shared /tmp (`tmp = "session"`, `_sandbox.sessiontmp`): the setting, the key, the
folder and what a hostile hook leaves in it, the runner and the Docker container."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from unittest import mock

import pytest

from sandboxrun import ExecResult, FakeBackend, HookFactory, SandboxrunError, Settings
from sandboxrun._backends.docker.backend import DockerBackend
from sandboxrun._sandbox import sessiontmp as st
from sandboxrun._sandbox import state as _state
from sandboxrun._types import ExecRequest
from tests.conftest import user_config

OK = ExecResult(exit_code=0, stdout=b"", stderr=b"", duration_ms=1)


@pytest.fixture
def ws() -> Iterator[Path]:
    """A workspace outside /tmp (pytest's folders are in it): nothing may be mounted
    below a shared /tmp, so a workspace in /tmp never gets one."""
    folder = Path(tempfile.mkdtemp(prefix="sr-ws-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder)


def _settings(tmp_path: Path, **extra: object) -> Settings:
    return Settings.load(state_dir=str(tmp_path / "state"), tmp="session", **extra)


def _session(ws: Path, sid: str | None = "s1", agent: str = "claude") -> st.Session:
    return st.Session(agent, str(ws), sid)


def test_tmp_is_per_run_by_default_and_set_by_the_users_config(home: Path, tmp_path: Path) -> None:
    """Off by default; the user's config file turns it on; a variable does not; an unknown
    mode and the Kubernetes backend are refused, named."""
    assert Settings.load().tmp == "run"
    with mock.patch.dict(os.environ, {"SANDBOXRUN_TMP": "session"}):
        assert Settings.load().tmp == "run"
    user_config(home, 'tmp = "session"\n')
    assert Settings.load().tmp == "session"
    with pytest.raises(SandboxrunError, match="tmp"):
        Settings.load(tmp="shared")
    with pytest.raises(SandboxrunError, match="docker backend"):
        Settings.load(backend="kubernetes")
    assert st.prepare(Settings.load(tmp="run"), _session(tmp_path), "project", ()) == (None, None)


def test_session_of_reads_each_agents_field() -> None:
    """The dialect's own field first, then the agents' names; no string, no session."""
    assert st.session_of({"session_id": "a", "conversation_id": "b"}, "conversation_id") == "b"
    assert st.session_of({"taskId": "t"}) == "t"
    assert st.session_of({"sessionId": 7}) == "7"
    assert st.session_of({"trajectory_id": "w"}) == "w"
    for event in ({}, {"session_id": ""}, {"session_id": True}, {"session_id": {"a": 1}}):
        assert st.session_of(event) is None


def test_key_separates_agents_workspaces_and_sessions(tmp_path: Path) -> None:
    """Two sessions, workspaces or agents never share; a hostile id is only hashed."""
    key = st.tmp_key("claude", str(tmp_path), "s1")
    assert key == st.tmp_key("claude", str(tmp_path), "s1")
    assert key != st.tmp_key("claude", str(tmp_path), "s2")
    assert key != st.tmp_key("codex", str(tmp_path), "s1")
    assert key != st.tmp_key("claude", str(tmp_path / "other"), "s1")
    assert key != _state.state_key("session-tmp", "claude", str(tmp_path))
    for hostile in ("../../etc", "a\nb", "/", "\udcff"):
        assert _state.is_key(st.tmp_key("claude", str(tmp_path), hostile))


def test_folder_is_made_private_and_shared_by_one_session(home: Path, tmp_path: Path) -> None:
    """Made 0700 for the hook's uid under state_dir; the same session finds it again, with
    the record `state list` shows (never the id itself); another session gets another."""
    settings = _settings(tmp_path)
    path, note = st.prepare(settings, _session(tmp_path, "../x\n"), "project", ())
    assert note is None and path is not None and Path(path).parent == tmp_path / "state"
    info = os.lstat(path)
    assert (info.st_mode & 0o777, info.st_uid) == (0o700, _state.hook_ids(None)[0])
    assert st.prepare(settings, _session(tmp_path, "../x\n"), "user", ())[0] == path
    assert st.prepare(settings, _session(tmp_path, "other"), "exec", ())[0] != path
    listed = {s.path: s for s in _state.states(settings)}
    assert listed[Path(path)].source == "session-tmp"
    assert "../x" not in listed[Path(path)].hook and listed[Path(path)].workspace == str(tmp_path)


def test_only_repository_and_user_hooks_share(home: Path, tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    for source in ("plugin", "managed", "system"):
        assert st.prepare(settings, _session(tmp_path), source, ()) == (None, None)
    for source in ("project", "local", "workspace", "user", "global", "exec"):
        assert st.prepare(settings, _session(tmp_path), source, ())[0] is not None


def test_no_session_id_or_a_mount_in_tmp_gets_its_own_tmp(home: Path, tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    path, note = st.prepare(settings, _session(tmp_path, None), "project", ())
    assert path is None and note and "no session id" in note
    path, note = st.prepare(settings, _session(tmp_path), "project", ("/tmp/ws",))
    assert path is None and note and "/tmp/ws is mounted in /tmp" in note
    assert not (tmp_path / "state").exists()


def test_over_the_cap_symlinks_and_removal(home: Path, tmp_path: Path) -> None:
    """A link to a large host file counts as itself and is never followed (size, removal);
    a huge file puts the folder over tmpfs_size: the next run gets its own /tmp, said why;
    `state clean KEY` removes it, leaving what links named alone."""
    precious = tmp_path / "precious"
    precious.write_bytes(b"p" * 100_000)
    settings = _settings(tmp_path, tmpfs_size="16k")
    path, _ = st.prepare(settings, _session(tmp_path), "project", ())
    assert path is not None
    Path(path, "link").symlink_to(precious)
    Path(path, "home").symlink_to(home)
    assert st.prepare(settings, _session(tmp_path), "project", ())[0] == path
    with open(Path(path, "huge"), "wb") as f:  # sparse: counted at its apparent size
        f.truncate(1 << 30)
    again, note = st.prepare(settings, _session(tmp_path), "project", ())
    assert again is None and note and "tmpfs_size 16k" in note and "own /tmp" in note
    removed = _state.clean(settings, Path(path).name)
    assert [s.path for s in removed] == [Path(path)] and not os.path.lexists(path)
    assert precious.read_bytes() == b"p" * 100_000 and home.is_dir()


def test_old_session_tmps_go_by_age(home: Path, tmp_path: Path) -> None:
    """`state clean` removes a session /tmp unused for tmp_max_age (never a hook state of
    a live workspace); a new session's removes them too."""
    settings = _settings(tmp_path, state=("*",))
    old, _ = st.prepare(settings, _session(tmp_path, "old"), "project", ())
    kept, _ = st.prepare(settings, _session(tmp_path, "kept"), "project", ())
    home_state, _ = _state.prepare(settings, "user", "/h/x", str(tmp_path))
    assert old and kept and home_state
    past = time.time() - settings.tmp_max_age - 10
    for folder in (old, home_state):
        record = Path(folder).with_suffix(".json")
        os.utime(record, (past, past))
    assert [s.path for s in _state.clean(settings)] == [Path(old)]
    os.utime(Path(kept).with_suffix(".json"), (past, past))
    st.prepare(settings, _session(tmp_path, "new"), "project", ())
    assert not os.path.lexists(kept) and os.path.isdir(home_state)


def test_runner_shares_one_tmp_across_a_sessions_events(
    home: Path, tmp_path: Path, ws: Path, make_hook: object
) -> None:
    """A PostToolUse hook and a Stop hook of one session get the same folder; another
    session another; an event without a session id its own /tmp, its report says so."""
    hooks = ws / ".clinerules" / "hooks"
    make_hook(hooks, "PostToolUse")  # type: ignore[operator]
    make_hook(hooks, "TaskComplete")  # type: ignore[operator]
    backend = FakeBackend(lambda r: OK)
    factory = HookFactory(_settings(tmp_path), backend, home=str(home))
    factory.run("PostToolUse", {"taskId": "t1"}, [str(ws)])
    factory.run("TaskComplete", {"taskId": "t1"}, [str(ws)])
    factory.run("TaskComplete", {"taskId": "t2"}, [str(ws)])
    report = factory.run("TaskComplete", {}, [str(ws)]).to_json()["hooks"][0]
    post, stop, other, none = backend.requests
    assert post.tmp and post.tmp == stop.tmp and other.tmp not in (None, post.tmp)
    assert none.tmp is None and "no session id" in report["error"]


def test_docker_binds_the_shared_tmp_and_bounds_its_files(tmp_path: Path, ws: Path) -> None:
    """The folder is bound at /tmp instead of the tmpfs, with RLIMIT_FSIZE on every file;
    anything mounted below /tmp is refused (its mount point would be made in the folder)."""
    client = mock.MagicMock()
    backend = DockerBackend(Settings(), client=client, cache_dir=str(tmp_path / "cache"))
    shared = tmp_path / "shared"
    request = ExecRequest(argv=("true",), stdin=b"", workdir=str(ws), mounts=(str(ws),),
                          tmp=str(shared))  # fmt: skip
    backend._config(request, "name", None)
    host = client.api.create_host_config.call_args.kwargs
    binds = [m for m in host["mounts"] if m["Target"] == "/tmp"]
    assert binds and binds[0]["Source"] == str(shared) and binds[0]["ReadOnly"] is False
    assert "/tmp" not in host["tmpfs"]
    assert [u["Name"] for u in host["ulimits"]].count("fsize") == 1
    with pytest.raises(SandboxrunError, match="shared /tmp"):
        backend._config(ExecRequest(argv=("true",), stdin=b"", workdir=str(tmp_path),
                                    mounts=(str(tmp_path),), tmp=str(shared)), "n", None)  # fmt: skip
    backend._config(ExecRequest(argv=("true",), stdin=b"", workdir=str(ws)), "n", None)
    assert "/tmp" in client.api.create_host_config.call_args.kwargs["tmpfs"]


def test_a_pooled_container_never_takes_a_shared_tmp(tmp_path: Path) -> None:
    """The warm path goes cold for a run with a session /tmp (a host folder per run)."""
    backend = DockerBackend(Settings(), client=mock.MagicMock(), warm=True,
                            cache_dir=str(tmp_path / "cache"))  # fmt: skip
    helper = mock.MagicMock(gate=True, protocol=2, frame=True)
    request = ExecRequest(argv=("true",), stdin=b"", workdir="/var/tmp")
    with mock.patch.object(backend, "_seccomp_helper", return_value=helper):
        assert backend._pooled(request) is not None
        assert backend._pooled(replace(request, tmp=str(tmp_path))) is None
