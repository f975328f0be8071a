"""Shared fixtures. Each fixture is a small, independent function: add new ones below."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import (
    ExecRequest,
    ExecResult,
    FakeBackend,
    Settings,
    _client,
    _settings,
    _userconfig,
)
from sandboxrun._runner import exec as _exec
from sandboxrun._runner import factory as _runner
from sandboxrun._sandbox import mounts as _mounts
from sandboxrun._sandbox import state as _state

HookAnswer = ExecResult | Callable[[ExecRequest], ExecResult]


# -- isolation from the developer's environment ------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake, empty account home (where the user's hooks and config file are found);
    no SANDBOXRUN_* variable or real config file is ever read."""
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    patch_account_home(monkeypatch, fake_home)
    for name in list(os.environ):
        if name.startswith("SANDBOXRUN_"):
            monkeypatch.delenv(name)
    return fake_home


# The account's own data folder (pins, hook states, install's backups), as sandboxrun
# finds it: from the password database's home, never from the environment (XDG_DATA_HOME
# is not read, by design: a repository can set a hook's environment). So the tests move
# it: in this process by patching the one function that makes its path
# (`_userconfig.data_dir`), in the Python processes they start through
# tests/site/sitecustomize.py (first on PYTHONPATH), to the same folder of this session.
ACCOUNT_DATA = os.path.realpath(_userconfig.data_dir(_userconfig.account_home()))
TEST_DATA = tempfile.mkdtemp(prefix="sandboxrun-test-data-")
os.environ["SANDBOX_TEST_DATA"] = TEST_DATA
os.environ["SANDBOX_TEST_ACCOUNT_DATA"] = ACCOUNT_DATA  # only this one moves, never a fake home's
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(Path(__file__).parent / "site"), *filter(None, [os.environ.get("PYTHONPATH")])]
)
_account_data_dir = _userconfig.data_dir


def pytest_sessionfinish(session: pytest.Session) -> None:
    shutil.rmtree(TEST_DATA, ignore_errors=True)


@pytest.fixture(autouse=True)
def _no_account_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test writes pins, hook states or install backups into the account's own data
    folder (`~/.local/share/sandboxrun`): it is a folder of the test session's. A fake
    home (`home`) keeps its own; the config file, the cache (the image's listing) and
    the server's socket stay where they are."""

    def data_dir(home: str | None = None) -> str:
        folder = _account_data_dir(home)
        return TEST_DATA if os.path.realpath(folder) == ACCOUNT_DATA else folder

    monkeypatch.setattr(_userconfig, "data_dir", data_dir)


# The real `_client.start_server`: the tests of the start on first use call it on sockets
# of their own (`tests/test_autoserve.py`), with a short `serve_idle`.
START_SERVER = _client.start_server


@pytest.fixture(autouse=True)
def _no_server_started(monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` and `exec` start the user's server on first use (warm by default): a test
    that calls the client in this process must never start one, which would outlive
    the run (on the account's own socket, even). Commands in subprocesses get a config
    with `serve = "off"`/`"use"` or `--no-serve` (`tests/engine/conftest.py: cli`)."""

    def refuse(path: str, config: str | None = None) -> int | None:
        raise AssertionError(f"a test would start a server at {path}: give it serve = 'off'")

    monkeypatch.setattr(_client, "start_server", refuse)


# The account's own server socket(s), as sandboxrun finds them (`default_socket`: the
# runtime folder's when there is one, else the home's cache): where the developer's own
# hooks are answered. Nothing a test starts may start a server there, nor talk to one:
# in this process `_no_server_started` refuses every start, and `_no_account_socket`
# moves the default socket; in the Python processes the tests start, sitecustomize does
# the same (`SANDBOX_TEST_ACCOUNT_SOCKET`). A wrapper `install` writes starts Python with
# `-I`, which loads no sitecustomize: the config it names must say `serve` (engine
# `cli()` checks it), and `_no_account_server` catches any server started anyway.
ACCOUNT_SOCKETS = frozenset(
    {
        _userconfig.default_socket(),
        os.path.join(_userconfig.account_home(), ".cache", "sandboxrun", "serve.sock"),
    }
)
TEST_SOCKET = os.path.join(TEST_DATA, "serve", "serve.sock")
os.environ["SANDBOX_TEST_ACCOUNT_SOCKET"] = _userconfig.default_socket()
_account_default_socket = _userconfig.default_socket


@pytest.fixture(autouse=True)
def _no_account_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default socket is the session's (`TEST_SOCKET`) where it would be the
    account's: no command a test runs in this process reaches the developer's server."""

    def default_socket() -> str:
        found = _account_default_socket()
        return TEST_SOCKET if found in ACCOUNT_SOCKETS else found

    monkeypatch.setattr(_userconfig, "default_socket", default_socket)
    monkeypatch.setattr(_client, "default_socket", default_socket)


def _locked(sockets: frozenset[str]) -> bool:
    """Whether a server holds the lock of one of `sockets` (`_client.lock_path`: taken by
    the command that starts one, then held by the server). Read in /proc/locks: taking
    the lock to see would get in the way of a server starting."""
    inodes = set()
    for path in sockets:
        with contextlib.suppress(OSError):
            inodes.add(os.stat(_client.lock_path(path)).st_ino)
    if not inodes:
        return False
    with open("/proc/locks") as f:  # "1: FLOCK  ADVISORY  WRITE <pid> <maj>:<min>:<inode> ..."
        held = [word for line in f for word in line.split() if word.count(":") == 2]
    return any(int(word.rsplit(":", 1)[1]) in inodes for word in held)


def account_servers(sockets: frozenset[str] = ACCOUNT_SOCKETS) -> dict[int, str]:
    """pid -> command line of each `sandboxrun serve` on one of `sockets` started by a
    command of this session's interpreter's folder (this virtualenv: what `install`
    names in the wrappers it writes). Other checkouts' servers are not ours."""
    found: dict[int, str] = {}
    ours = os.path.dirname(sys.executable)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")[:-1]
        except OSError:
            continue
        if not argv or os.path.dirname(argv[0]) != ours or not {"sandboxrun", "serve"} <= set(argv):
            continue
        if "--socket" in argv[:-1] and argv[argv.index("--socket") + 1] in sockets:
            found[int(entry.name)] = " ".join(argv)
    return found


@pytest.fixture(autouse=True)
def _no_account_server() -> Iterator[None]:
    """Fail a test whose commands started a server on the account's socket (and stop
    it: it would answer the developer's own hooks with the test's config). Looked for
    only when the socket's lock was free before the test and is held after it."""
    if _locked(ACCOUNT_SOCKETS):
        yield  # a server runs there already: none can start
        return
    yield
    if not _locked(ACCOUNT_SOCKETS):
        return
    new = account_servers()
    for pid in new:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    assert not new, f"a command of this test started a server on the account's socket: {new}"


# -- unit tests never reach an engine ------------------------------------------------

# The folders whose tests talk to a real engine or cluster, or are not tests of the
# package: every other test (tests/test_*.py today, tests/unit/ later) runs with the
# Docker SDK's client unable to connect, as on a machine with no engine, whatever the
# machine has. A test that needs the engine belongs in tests/engine/.
ENGINE_FOLDERS = frozenset({"engine", "agents", "kube", "live", "site"})
NO_ENGINE = "unit tests never reach an engine (tests/conftest.py: _no_engine)"


def refuse_engine(self: object, *args: object, **kwargs: object) -> None:
    """`docker.APIClient.__init__`, in unit tests: every client the package makes (it
    makes one, in `_backends/docker/engine.connect`) fails as an engine that is not there."""
    import docker.errors

    raise docker.errors.DockerException(NO_ENGINE)


@pytest.fixture(autouse=True)
def _no_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit test never talks to the Docker Engine: the SDK's client refuses to be made
    (`refuse_engine`), in this process and, through tests/site/sitecustomize.py
    (`SANDBOX_TEST_NO_ENGINE`), in the Python processes the test starts. The product then
    sees what it sees with no engine (`EngineUnavailable`)."""
    folder = Path(request.node.path).relative_to(Path(__file__).parent).parts[0]
    if folder in ENGINE_FOLDERS:
        return
    import docker.api.client

    monkeypatch.setattr(docker.api.client.APIClient, "__init__", refuse_engine)
    monkeypatch.setenv("SANDBOX_TEST_NO_ENGINE", NO_ENGINE)


def patch_account_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Make every module that asks for the account's home get `home`."""
    for module in (_settings, _userconfig, _runner, _mounts, _exec, _state):
        monkeypatch.setattr(module, "account_home", lambda: str(home))


def user_config(home: Path, text: str) -> Path:
    """Write the user's own config file (found in the account home) and return it."""
    path = home / ".config" / "sandboxrun" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short path: a unix socket's path is at most 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="sr-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def settings(home: Path) -> Settings:
    """Default settings, built in the isolated environment of `home`."""
    return Settings.load()


# -- hooks on disk -------------------------------------------------------------------


@pytest.fixture
def make_hook() -> Callable[..., Path]:
    """`make_hook(folder, name="PreToolUse", mode=0o755, body=...)` writes a hook file."""

    def make(
        folder: str | os.PathLike[str],
        name: str = "PreToolUse",
        mode: int = 0o755,
        body: str = "#!/bin/sh\necho '{\"cancel\": false}'\n",
    ) -> Path:
        path = Path(folder) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        path.chmod(mode)
        return path

    return make


# -- a backend without Docker -----------------------------------------------------------


def hook_path_of(request: ExecRequest) -> str:
    """The hook path inside a Cline request's `/bin/sh -c '<path>'`."""
    return shlex.split(request.argv[-1])[0]


@pytest.fixture
def fake() -> Callable[..., FakeBackend]:
    """`fake({hook_path: ExecResult | handler}, default=None)` -> a FakeBackend.

    A request for a hook path that is neither in the mapping nor covered by
    `default` fails the test.
    """

    def make(
        answers: Mapping[str | os.PathLike[str], HookAnswer] | None = None,
        default: HookAnswer | None = None,
    ) -> FakeBackend:
        table = {str(k): v for k, v in (answers or {}).items()}

        def handler(request: ExecRequest) -> ExecResult:
            answer = table.get(hook_path_of(request), default)
            if answer is None:
                raise AssertionError(f"unexpected hook run: {request.argv}")
            return answer if isinstance(answer, ExecResult) else answer(request)

        return FakeBackend(handler)

    return make


# -- the count of engine tests, visible at the end of every run ----------------------

_ENGINE_OUTCOMES: dict[str, int] = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count the outcomes of tests marked `docker` (those under tests/engine/)."""
    if "docker" not in report.keywords:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _ENGINE_OUTCOMES["xfailed" if hasattr(report, "wasxfail") else report.outcome] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many tests ran against the real Docker Engine."""
    counts = ", ".join(f"{n} {k}" for k, n in _ENGINE_OUTCOMES.items())
    terminalreporter.write_line(f"engine tests (real Docker Engine): {counts}")
