"""The user's own config file, read without pydantic: the account's home, the file's
place and its table.

`_settings` builds the full, validated `Settings` from it; the light client of `serve`
(`_client`) reads only the few keys it needs (is `serve` off, where is the socket)
from the same table, so `run` and `exec` through a server never import pydantic (nor
pathlib: the client's start-up is measured in milliseconds).
"""

from __future__ import annotations

import os
import pwd
import stat

from ._errors import ConfigError

TYPE_CHECKING = False  # not `typing`'s: its import alone costs the client milliseconds
if TYPE_CHECKING:
    from typing import Any


CONFIG_MAX_BYTES = 1 << 20
# Whether this process's environment may have been chosen by a repository: a command an
# agent started (`_cli` says so for every command but `serve`) inherits the agent's
# environment, which a project's settings can extend. A service's (serve's, a platform
# program's) environment is its deployment's. Read by what would trust a variable.
_environment_untrusted = False


def distrust_environment() -> None:
    global _environment_untrusted
    _environment_untrusted = True


def environment_untrusted() -> bool:
    return _environment_untrusted


def account_home() -> str:
    """The invoking account's home, from the password database (never `$HOME`, which
    a repository's settings can set for the hook processes an agent starts)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir or "/"
    except KeyError:  # a uid without an entry (some containers): no home of its own
        return "/nonexistent"


def data_dir(home: str | None = None) -> str:
    """sandboxrun's data folder in `home` (default the account's): review pins, hook
    states (unless `state_dir`), install's backups. The one place its path is made:
    the tests move the account's own (tests/conftest.py)."""
    return os.path.join(home or account_home(), ".local", "share", "sandboxrun")


def config_path(home: str | None = None) -> str:
    """Where the user's own config file lives by default (it need not exist)."""
    return os.path.join(home or account_home(), ".config", "sandboxrun", "config.toml")


def read_config(path: str | os.PathLike[str], required: bool) -> dict[str, Any]:
    """The config file's table: only a regular file, at most CONFIG_MAX_BYTES."""
    import tomllib  # not at the top: most users have no config file, and it costs ms

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if required:
            raise ConfigError(f"config file {path} does not exist") from None
        return {}
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"config file {path} is not a regular file")
        raw = f.read(CONFIG_MAX_BYTES + 1)
    if len(raw) > CONFIG_MAX_BYTES:
        raise ConfigError(f"config file {path} is larger than {CONFIG_MAX_BYTES} bytes")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {path}: invalid TOML: {exc}") from None
    return data


def default_socket() -> str:
    """The user's runtime folder when the system made one that only the user can open
    (/run/user/<uid>, mode 0700), else the account's own cache folder."""
    uid = os.getuid()
    runtime = f"/run/user/{uid}"
    try:
        st = os.lstat(runtime)
    except OSError:
        st = None
    if st and stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077:
        return os.path.join(runtime, "sandboxrun", "serve.sock")
    return os.path.join(account_home(), ".cache", "sandboxrun", "serve.sock")
