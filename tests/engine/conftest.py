"""Fixtures for the tests that need a real Docker Engine.

Without an engine these tests skip, except in CI (`CI=true`), where a missing
engine or image is a failure: the sandbox is only proven against the real thing.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import (
    DockerBackend,
    ExecRequest,
    ExecResult,
    HookFactory,
    SandboxrunError,
    Settings,
)
from sandboxrun._backends.labels import MANAGED as LABEL


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    gvisor = under_gvisor()
    for item in items:
        if "/tests/engine/" in str(item.path):
            item.add_marker(pytest.mark.docker)
        marker = item.get_closest_marker("runc_only")
        if gvisor and marker:
            item.add_marker(pytest.mark.skip(reason=f"differs under gVisor: {marker.args[0]}"))


def engine_runtime() -> str | None:
    """The runtime this test run asks for: `SANDBOX_TEST_RUNTIME=runsc` (scripts/test's
    gVisor pass). A variable of the tests only: sandboxrun reads no setting from its
    environment, so the tests hand it on as `Settings(runtime=...)` or `--config`."""
    return os.environ.get("SANDBOX_TEST_RUNTIME") or None


def under_gvisor() -> bool:
    """Whether this run sandboxes hooks with gVisor."""
    return engine_runtime() == "runsc"


def engine_image() -> str | None:
    """The hook image this test run asks for (`SANDBOX_TEST_IMAGE`), else the default."""
    return os.environ.get("SANDBOX_TEST_IMAGE") or None


def warm_path() -> bool:
    """Whether hooks run on the warm path (`SANDBOX_TEST_PATH=warm`): in pooled
    containers started ahead of time, through `DockerBackend(warm=True)`."""
    return os.environ.get("SANDBOX_TEST_PATH") == "warm"


def engine_settings(**overrides: Any) -> Settings:
    """Settings for an engine test: the defaults, this run's runtime and image, the
    overrides."""
    return Settings.load(**{"runtime": engine_runtime(), "image": engine_image(), **overrides})


class WarmOnly(DockerBackend):
    """The warm test path: every run that can be pooled must run in a pooled container,
    or the suite would quietly test the cold path again. Only a burst of more runs of
    one kind at once than the pool holds may go cold (as it does in use)."""

    claim_wait = 120.0  # a loaded machine starts containers slowly: wait, never go cold

    def __init__(self, settings: Settings, client: Any = None) -> None:
        super().__init__(settings, client=client, warm=True)
        self._flying: dict[str, int] = {}  # runs in flight by pool key
        self._bursts = 0  # how often more ran at once than a pool holds
        self._flying_lock = threading.Lock()

    def run(self, request: ExecRequest) -> ExecResult:
        self.check()
        helper = self._seccomp_helper()
        assert helper and helper.gate, f"{self.settings.image}: no gate, no warm path"
        pooled = self._pooled(request)
        key = pooled[0] if pooled else ""
        with self._flying_lock:
            bursts = self._bursts
            self._flying[key] = self._flying.get(key, 0) + 1
            if self._flying[key] > self.settings.pool_size:
                self._bursts += 1  # every run in flight now may lose its container
        try:
            result = super().run(request)
        finally:
            with self._flying_lock:
                self._flying[key] -= 1
                burst = self._bursts != bursts
        assert result.warm or pooled is None or burst, f"ran cold: {request.argv}"
        return result


def pooled(backend: DockerBackend) -> set[str]:
    """The containers waiting in `backend`'s pools (the warm path keeps them between
    runs, until `close()`)."""
    pool = backend._pool
    if pool is None:
        return set()
    assert pool.settle(120), "the pool's launches and removals did not end"
    return set(pool.idle_ids())


def engine_backend(settings: Settings, client: Any = None) -> DockerBackend:
    """The backend of this test run: cold, or `WarmOnly` under SANDBOX_TEST_PATH=warm."""
    return WarmOnly(settings, client) if warm_path() else DockerBackend(settings, client=client)


def cli(*args: str, config: Path | None = None, home: Path | None = None) -> list[str]:
    """The argv of the real command line, with this run's settings as a `--config` file
    (and `--home` for the commands that find the user's hooks). A test's own config
    file without a `serve` line runs `run` and `exec` cold (`--no-serve`): never through,
    nor starting, a server of the account's (warm by default, issue 19); one given to
    `install` must say `serve` itself (its wrappers take no `--no-serve`)."""
    command, *rest = args
    if config is None:
        config = _CONFIG_DIR / "config.toml"
        config.write_text(_test_config())
    elif command in ("run", "exec") and "serve" not in tomllib.loads(config.read_text()):
        rest = ["--no-serve", *rest]
    elif command == "install":
        # The wrappers it writes run `exec` with this config, started `python -I` (no
        # tests/site): only the config keeps them off the account's server.
        assert tomllib.loads(config.read_text()).get("serve") in ("off", "use"), (
            f"{config}: a config a test installs with must say serve = 'off' (or 'use'"
            " with a serve_socket of the test's), or its wrappers start the account's server"
        )
    extra = ["--config", str(config)]
    if home is not None and command in ("run", "list"):
        extra += ["--home", str(home)]
    return [sys.executable, "-m", "sandboxrun", command, *extra, *rest]


_CONFIG_DIR = Path(tempfile.mkdtemp(prefix="sandboxrun-test-config-"))


def served() -> bool:
    """`SANDBOX_TEST_SERVE=1`: the commands `cli()` builds go through one `sandboxrun
    serve` for the whole run (the warm path's pass of the suites). A variable of the
    tests only, handed on as `serve_socket` in the test config."""
    return os.environ.get("SANDBOX_TEST_SERVE") == "1"


def _test_config() -> str:
    """The config of `cli()`: this run's runtime and image, and its server if any."""
    lines = [f'{k} = "{v}"' for k, v in (("runtime", engine_runtime()),
                                          ("image", engine_image())) if v]  # fmt: skip
    if served():
        lines.append(f'serve_socket = "{_CONFIG_DIR / "serve.sock"}"')
    # The run's own server only (`serve = "use"` never starts one), else none at all.
    lines.append('serve = "use"' if served() else 'serve = "off"')
    return "".join(f"{line}\n" for line in lines)


@pytest.fixture(scope="session", autouse=True)
def _server_for_cli() -> Iterator[None]:
    """With `SANDBOX_TEST_SERVE=1`, the server the commands of `cli()` use; afterwards
    it must have answered some of them, and stop cleanly."""
    if not served():
        yield
        return
    from sandboxrun._client import connect, exchange

    config = _CONFIG_DIR / "config.toml"
    config.write_text(_test_config())
    log = open(_CONFIG_DIR / "serve.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "sandboxrun", "serve", "--config", str(config)], stderr=log
    )
    path = str(_CONFIG_DIR / "serve.sock")
    deadline = time.monotonic() + 60
    while (probe := connect(path)) is None:
        assert server.poll() is None and time.monotonic() < deadline, "serve did not start"
        time.sleep(0.1)
    probe.close()
    yield
    answered = 0
    if (sock := connect(path)) is not None:
        answered = exchange(sock, "GET", "/healthz")[1]["answered"]
        sock.close()
    print(f"\nsandboxrun serve answered {answered} command(s) of this run", file=sys.stderr)
    server.terminate()
    assert server.wait(timeout=300) == 0
    log.close()
    assert answered > 0, "no command went through the server"


# Why a test's expectation holds only under runc (listed in the issue note too).
GVISOR_THREADS = (
    "gVisor's own threads count against the pids and memory limits, so the whole sandbox"
    " dies (exit 2 or 137) instead of the hook seeing EAGAIN: contained, reported as failed"
)
GVISOR_USERNS = (
    "gVisor implements user namespaces in its own kernel: unshare -r succeeds there"
    " without reaching the host"
)


@pytest.fixture(scope="session")
def engine() -> Iterator[DockerBackend]:
    """A DockerBackend on the real engine, with the default image present."""
    try:
        backend = engine_backend(engine_settings())
        backend.check()
    except SandboxrunError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI needs a Docker Engine and the hook image: {exc}")
        pytest.skip(f"no Docker Engine: {exc}")
    yield backend
    backend.close()  # containers are removed in the background: wait for that
    mine = {"label": [f"{LABEL}=1", f"sandboxrun.pid={os.getpid()}"]}
    leftover = backend.api.containers(all=True, filters=mine)
    assert not leftover, f"containers left behind: {[c['Id'][:12] for c in leftover]}"


@pytest.fixture(autouse=True)
def readable_tmp_path(tmp_path: Path) -> None:
    """pytest makes each test's folder 0700. Run as root, sandboxrun runs hooks as nobody,
    and refuses (a clear error) a workspace they could not read: give tests a folder as
    readable as a cloned repository's, 0755, for the tests that use it as a workspace."""
    tmp_path.chmod(0o755)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".clinerules" / "hooks").mkdir(parents=True)
    (ws / "README.md").write_text("hello from the workspace\n")
    return ws


HookWriter = Callable[..., Path]


@pytest.fixture
def hook(workspace: Path) -> HookWriter:
    """Write an executable hook script into the workspace's Cline hook folder."""

    def write(body: str, name: str = "PreToolUse", shebang: str = "#!/bin/bash") -> Path:
        path = workspace / ".clinerules" / "hooks" / name
        path.write_text(f"{shebang}\n{textwrap.dedent(body).strip()}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return path

    return write


Runner = Callable[..., dict[str, Any]]


@pytest.fixture
def run_hooks(engine: DockerBackend, workspace: Path, tmp_path: Path) -> Runner:
    """Run the workspace's hooks for one event through the public API; return the JSON."""

    def run(
        hook_name: str = "PreToolUse", event: dict[str, Any] | None = None, **overrides: Any
    ) -> dict[str, Any]:
        settings = engine_settings(**overrides) if overrides else engine.settings
        backend = engine if not overrides else engine_backend(settings, client=engine.client)
        factory = HookFactory(settings, backend, home=str(tmp_path / "home"))
        try:
            result = factory.run(hook_name, event or {}, [str(workspace)])
        finally:
            # The removals the run left in the background (and, warm, its pool): tests
            # count containers.
            backend.close()
        return result.to_json()

    return run


def labelled_containers(engine: DockerBackend) -> list[dict[str, Any]]:
    return list(engine.api.containers(all=True, filters={"label": f"{LABEL}=1"}))
