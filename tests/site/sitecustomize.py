"""Loaded by every Python process the tests start (tests/conftest.py puts this folder
first on PYTHONPATH): when `SANDBOX_TEST_DATA` names a folder, the account's own data
folder of sandboxrun (`~/.local/share/sandboxrun`: pins, hook states, install's
backups) is that folder, as in the tests' own process (`_no_account_data`). Commands
the engine tests run (`sandboxrun run`, `exec`, `review`...) then write nothing there.

`SANDBOX_TEST_ACCOUNT_SOCKET`: the account's server socket (the developer's own server),
which `_userconfig.default_socket` then never names (the session's socket instead, beside
its data folder), and on which `_client.start_server` starts nothing: a command of the
tests neither talks to that server nor starts one (it would outlive the run and answer
the developer's hooks), as `_no_account_socket` and `_no_server_started` do in the
tests' process. The tests of the start on first use name a `serve_socket` of their own.
A wrapper `install` writes starts Python with `-I`: none of this reaches it.

`SANDBOX_TEST_NO_ENGINE`: a unit test's command makes no Docker client (the test's own
process neither: tests/conftest.py's `_no_engine`), as on a machine with no engine.

Variables of the tests only, read here: sandboxrun itself reads no variable for its
data folder (a repository can set a hook's environment). sandboxrun is not imported
here: `_userconfig` and `_client` are patched when something imports them (the cold-import tests see
the modules a command loads, not ours; nor `typing` or `importlib.abc`, which cost ms).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType


def _redirect(module: ModuleType, folder: str) -> None:
    real = module.data_dir
    # The real account's folder, as the tests' process found it: a command run with a
    # fake home as the account's (tests/fake_home.py) keeps that home's own folder, as
    # `install --home` with the same home does.
    account = os.environ.get("SANDBOX_TEST_ACCOUNT_DATA") or os.path.realpath(
        real(module.account_home())
    )

    def data_dir(home: str | None = None) -> str:
        found = real(home)
        return folder if os.path.realpath(found) == account else found

    module.data_dir = data_dir
    account_socket = os.environ.get("SANDBOX_TEST_ACCOUNT_SOCKET")
    if account_socket:
        real_socket = module.default_socket
        session_socket = os.path.join(folder, "serve", "serve.sock")

        def default_socket() -> str:
            found = real_socket()
            return session_socket if found == account_socket else found

        module.default_socket = default_socket


def _no_start(module: ModuleType, folder: str) -> None:
    """No server started on a default socket (the session's, or a fake home's): only on
    a socket a test names (`serve_socket`), which that test stops."""
    real = module.start_server

    def start_server(path: str, config: str | None = None) -> int | None:
        if path in (module.default_socket(), os.environ.get("SANDBOX_TEST_ACCOUNT_SOCKET")):
            return None  # as under CI=true: this command runs cold
        return real(path, config)

    module.start_server = start_server


def _no_engine(module: ModuleType, folder: str) -> None:
    """No Docker client made (a unit test's command: `SANDBOX_TEST_NO_ENGINE`, set by
    tests/conftest.py's `_no_engine`): it fails as an engine that is not there."""
    why = os.environ["SANDBOX_TEST_NO_ENGINE"]

    def refuse(self: object, *args: object, **kwargs: object) -> None:
        from docker.errors import DockerException

        raise DockerException(why)

    module.APIClient.__init__ = refuse


PATCHES = {"sandboxrun._userconfig": _redirect, "sandboxrun._client": _no_start}
if os.environ.get("SANDBOX_TEST_NO_ENGINE"):
    PATCHES["docker.api.client"] = _no_engine


class _Finder:
    """A meta path finder (`find_spec` is all the import system asks of one)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        patch = PATCHES.get(name)
        if patch is None:
            return None
        spec = PathFinder.find_spec(name, path)  # type: ignore[arg-type]
        loader = spec.loader if spec else None
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            patch(module, self.folder)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if os.environ.get("SANDBOX_TEST_DATA"):
    sys.meta_path.insert(0, _Finder(os.environ["SANDBOX_TEST_DATA"]))
