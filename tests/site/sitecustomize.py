"""Loaded by every Python process the tests start (tests/conftest.py puts this folder
first on PYTHONPATH): when `SANDBOX_TEST_DATA` names a folder, the account's own data
folder of sandboxrun (`~/.local/share/sandboxrun`: pins, hook states, install's
backups) is that folder, as in the tests' own process (`_no_account_data`). Commands
the engine tests run (`sandboxrun run`, `exec`, `review`...) then write nothing there.

A variable of the tests only, read here: sandboxrun itself reads no variable for its
data folder (a repository can set a hook's environment). sandboxrun is not imported
here: `_userconfig` is patched when something imports it (the cold-import tests see
the modules a command loads, not ours; nor `typing` or `importlib.abc`, which cost ms).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType

TARGET = "sandboxrun._userconfig"


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


class _Finder:
    """A meta path finder (`find_spec` is all the import system asks of one)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if name != TARGET:
            return None
        spec = PathFinder.find_spec(name, path)  # type: ignore[arg-type]
        loader = spec.loader if spec else None
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _redirect(module, self.folder)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if os.environ.get("SANDBOX_TEST_DATA"):
    sys.meta_path.insert(0, _Finder(os.environ["SANDBOX_TEST_DATA"]))
