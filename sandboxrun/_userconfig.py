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
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path}: invalid TOML: {exc}") from None
    simple = simple_toml(text)
    if simple is not None:
        return simple
    import tomllib  # not at the top: it costs the light client 10 ms and more

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: invalid TOML: {exc}") from None


_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_TOML_SPACE = " \t"


def simple_toml(text: str) -> dict[str, Any] | None:
    """The table of a config file made only of the simplest lines, read without tomllib
    (whose import costs the light client 10 ms and more: typing, datetime, re): blank
    lines, comments, and `key = value` with a bare key, each once, and a value that is
    a string without escapes, `true`, `false` or a decimal integer, then an optional
    comment. None for any other file, which tomllib reads (and judges): the same table
    either way (`tests/test_userconfig.py` compares them)."""
    table: dict[str, Any] = {}
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if i < len(lines) - 1 and line.endswith("\r"):  # CRLF; a lone CR is refused
            line = line[:-1]
        if any((c < " " and c != "\t") or c == "\x7f" for c in line):
            return None  # control characters: tomllib refuses them
        body = line.strip(_TOML_SPACE)
        if not body or body[0] == "#":
            continue
        key, eq, rest = body.partition("=")
        key, rest = key.rstrip(_TOML_SPACE), rest.lstrip(_TOML_SPACE)
        if not eq or not key or not _BARE_KEY.issuperset(key) or key in table:
            return None
        value: Any
        if rest[:1] == '"':
            end = rest.find('"', 1)
            value, tail = rest[1:end], rest[end + 1 :]
            if end < 0 or "\\" in value:
                return None
        else:
            token = rest.split("#", 1)[0].rstrip(_TOML_SPACE)
            tail = rest[len(token) :]
            value = _scalar(token)
            if value is None:
                return None
        tail = tail.lstrip(_TOML_SPACE)
        if tail and tail[0] != "#":
            return None
        table[key] = value
    return table


def _scalar(token: str) -> bool | int | None:
    if token in ("true", "false"):
        return token == "true"
    digits = token[1:] if token[:1] in ("+", "-") else token
    if digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0"):
        return int(token)
    return None  # a float, date, array, table, literal string...: tomllib's


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
