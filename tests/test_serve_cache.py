"""`serve`'s cache of settings, discovery and preflight (`_cache`, issue 19): a second
call sees every change to what the first one read, found absent, or went through
(an edit of the same size with its mtime put back, a file created later, a symlink
swapped), and a result whose computation the record cannot follow is never kept."""

from __future__ import annotations

import base64
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import ExecRequest, ExecResult, FakeBackend
from sandboxrun import _cache as cache
from sandboxrun._backends.image_tools import ImageTools
from sandboxrun._log import logger
from sandboxrun._server import App

EVENT = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch) -> Iterator[cache.Cache]:
    """The cache on, keeping results whatever their files' age: the tests' files were
    all written moments ago, which the racy-clean rule would otherwise never keep."""
    monkeypatch.setattr(cache, "RECENT_NS", -(10**18))
    yield cache.enable()
    cache.disable()


def _same_size_edit(path: Path, text: str) -> None:
    """Rewrite `path` with `text` (the same size), then put its mtime back."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_size == st.st_size


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else "absent"


def test_an_edit_of_the_same_size_and_mtime_is_seen(kept: cache.Cache, tmp_path: Path) -> None:
    hook = tmp_path / "hook.sh"
    hook.write_text("echo one\n")
    assert cache.cached("t", str(hook), lambda: _read(hook)) == "echo one\n"
    assert cache.cached("t", str(hook), lambda: _read(hook)) == "echo one\n"
    assert kept.hits == 1  # kept: the next answer comes from the cache while nothing moved
    _same_size_edit(hook, "echo two\n")
    assert cache.cached("t", str(hook), lambda: _read(hook)) == "echo two\n"


def test_a_file_created_later_is_seen(kept: cache.Cache, tmp_path: Path) -> None:
    """A file found absent is a dependency: its creation is a change."""
    local = tmp_path / "deep" / "settings.local.json"
    assert cache.cached("t", "k", lambda: _read(local)) == "absent"
    assert cache.cached("t", "k", lambda: _read(local)) == "absent"
    assert kept.hits == 1
    local.parent.mkdir()
    local.write_text("{}")
    assert cache.cached("t", "k", lambda: _read(local)) == "{}"


def test_a_swapped_symlink_is_seen(kept: cache.Cache, tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("aaa")
    (tmp_path / "b.json").write_text("bbb")
    link = tmp_path / "settings.json"
    link.symlink_to("a.json")
    assert cache.cached("t", "k", lambda: _read(link)) == "aaa"
    swap = tmp_path / "new"
    swap.symlink_to("b.json")
    os.replace(swap, link)
    assert cache.cached("t", "k", lambda: _read(link)) == "bbb"


def test_a_folder_listed_is_a_dependency(kept: cache.Cache, tmp_path: Path) -> None:
    def names() -> list[str]:
        return sorted(os.listdir(tmp_path))

    assert cache.cached("t", "k", names) == []
    (tmp_path / "PreToolUse").write_text("")
    assert cache.cached("t", "k", names) == ["PreToolUse"]


@pytest.mark.parametrize(
    "doubtful",
    [
        lambda p: open("relative-name", "a").close(),
        lambda p: os.stat(os.open(p, os.O_RDONLY)),  # a descriptor: not a path
        lambda p: logger.warning("a line a hit would not log again"),
        lambda p: (p.parent / "written").write_text("x"),
        lambda p: threading.Thread(target=p.read_text).start(),  # reads on another thread
    ],
)
def test_what_the_record_cannot_follow_is_never_kept(
    kept: cache.Cache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doubtful: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    file = tmp_path / "f"
    file.write_text("x")
    for _ in range(2):
        cache.cached("t", "k", lambda: doubtful(file))
    assert (kept.hits, kept.unkept, len(kept)) == (0, 2, 0)


def test_a_file_changed_moments_ago_is_not_kept(tmp_path: Path) -> None:
    """Racy clean: a change in the same clock tick as the read leaves the fingerprint
    as it was, so a result that read a file changed within RECENT_NS is not kept."""
    file = tmp_path / "f"
    file.write_text("x")
    kept = cache.enable()
    try:
        cache.cached("t", "k", lambda: _read(file))
        assert (kept.unkept, len(kept)) == (1, 0)
    finally:
        cache.disable()


def test_the_cache_is_bounded(kept: cache.Cache, tmp_path: Path) -> None:
    small = cache.enable(max_entries=3)
    for i in range(10):
        cache.cached("t", i, lambda: 0)
    assert len(small) == 3
    cache.cached("t", 9, lambda: 0)
    assert small.hits == 1  # the newest stayed


def test_off_it_computes_every_time(tmp_path: Path) -> None:
    cache.disable()
    calls = []
    for _ in range(2):
        cache.cached("t", "k", lambda: calls.append(1))
    assert len(calls) == 2


# Through the server: what `run` discovers, as the second of two requests sees it.


def _settings_json(command: str) -> str:
    entry = {"matcher": "*", "hooks": [{"type": "command", "command": command}]}
    return json.dumps({"hooks": {"PreToolUse": [entry]}})


class Workspace:
    def __init__(self, root: Path, home: Path) -> None:
        self.root, self.home = root, home
        self.config = home / "config.toml"
        self.config.write_text('review = "off"\n')
        self.backend = FakeBackend(lambda r: ExecResult(0, b"", b"", 1), tools=_TOOLS)
        self.app = App(lambda settings: self.backend)

    def run(self) -> list[tuple[str, ...]]:
        """The argv of every hook one `run PreToolUse` ran through the server."""
        return [r.argv for r in self.requests()]

    def requests(self) -> list[ExecRequest]:
        """What one `run PreToolUse` through the server asked the backend to run."""
        before = len(self.backend.requests)
        request = {
            "args": ["PreToolUse", "--agent", "claude", "--config", str(self.config),
                     "--home", str(self.home / "agent"), "--workspace", str(self.root)],
            "cwd": str(self.root), "env": {}, "verbose": 0,
            "stdin": base64.b64encode(json.dumps(EVENT).encode()).decode(),
        }  # fmt: skip
        reply = self.app.answer("run", request)
        assert reply.exit_code == 0, reply.stderr
        return self.backend.requests[before:]


_TOOLS = ImageTools("img", ("/bin",), frozenset({"/bin/sh"}), frozenset({"sh"}), None, frozenset())


@pytest.fixture
def ws(home: Path, tmp_path: Path, kept: cache.Cache) -> Workspace:
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    (home / "agent").mkdir()
    return Workspace(root, home)


def test_served_a_hook_edited_between_two_calls_is_seen(ws: Workspace, kept: cache.Cache) -> None:
    settings = ws.root / ".claude" / "settings.json"
    settings.write_text(_settings_json("echo one"))
    assert ws.run()[0][-1] == "echo one"
    assert ws.run()[0][-1] == "echo one"
    assert kept.hits >= 2  # settings and discovery came from the cache
    _same_size_edit(settings, _settings_json("echo two"))
    assert ws.run()[0][-1] == "echo two"


def test_served_a_settings_file_created_between_two_calls_is_seen(ws: Workspace) -> None:
    (ws.root / ".claude" / "settings.json").write_text(_settings_json("echo one"))
    assert [argv[-1] for argv in ws.run()] == ["echo one"]
    (ws.root / ".claude" / "settings.local.json").write_text(_settings_json("echo local"))
    assert sorted(argv[-1] for argv in ws.run()) == ["echo local", "echo one"]


def test_served_a_swapped_symlink_is_seen(ws: Workspace) -> None:
    (ws.root / "a.json").write_text(_settings_json("echo aaa"))
    (ws.root / "b.json").write_text(_settings_json("echo bbb"))
    link = ws.root / ".claude" / "settings.json"
    link.symlink_to("../a.json")
    assert ws.run()[0][-1] == "echo aaa"
    swap = ws.root / ".claude" / "swap"
    swap.symlink_to("../b.json")
    os.replace(swap, link)
    assert ws.run()[0][-1] == "echo bbb"


def test_served_the_config_file_edited_between_two_calls_is_seen(ws: Workspace) -> None:
    """Parsed settings: the config file's `timeout`, edited in place between two calls."""
    (ws.root / ".claude" / "settings.json").write_text(_settings_json("echo one"))
    ws.config.write_text('review = "off"\ntimeout = 7\n')
    assert [r.timeout for r in ws.requests()] == [7]
    _same_size_edit(ws.config, 'review = "off"\ntimeout = 8\n')
    assert [r.timeout for r in ws.requests()] == [8]


def test_served_preflight_sees_a_shebang_edited_in_place(ws: Workspace) -> None:
    """A hook script whose interpreter the image lacks is not run: an edit of the
    same size and mtime that names a missing one is seen by the next call."""
    script = ws.root / "guard.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    (ws.root / ".claude" / "settings.json").write_text(_settings_json(str(script)))
    assert len(ws.run()) == 1
    assert len(ws.run()) == 1  # from the cache: the same file
    _same_size_edit(script, "#!/bin/zz\nexit 0\n")
    assert ws.run() == []  # not run: /bin/zz is not in the image


def test_the_wrapped_functions_keep_what_the_originals_support(kept: cache.Cache) -> None:
    """`shutil.rmtree` keeps its descriptor-based walk (safe against symlink races) only
    when `os.stat`, `os.open`... are listed as supporting `dir_fd`."""
    sets = (os.supports_dir_fd, os.supports_fd, os.supports_follow_symlinks,
            os.supports_effective_ids)  # fmt: skip
    for name in ("stat", "lstat", "access", "readlink"):
        wrapper = getattr(os, name)
        assert wrapper.__wrapped__ is not wrapper
        assert [wrapper in s for s in sets] == [wrapper.__wrapped__ in s for s in sets]
    assert {os.open, os.stat, os.unlink, os.rmdir} <= os.supports_dir_fd
    assert shutil.rmtree.avoids_symlink_attacks
