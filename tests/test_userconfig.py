"""The config file's simplest form, read without tomllib (`_userconfig.simple_toml`, for
the light client's start): whatever it reads, tomllib reads the same; anything else it
leaves to tomllib, which judges it."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path

import pytest

from sandboxrun._errors import ConfigError
from sandboxrun._userconfig import read_config, simple_toml

READ = [
    "",
    "\n\n",
    'serve_socket = "/run/user/1000/sandboxrun/serve.sock"\n',
    'serve = "use"  # a comment\nserve_idle = 900\n',
    "# only a comment\r\nfail_closed = true\r\nmax_hooks = -0\n",
    'image = "ghcr.io/x/y:1"\n\ttimeout=+30 #c\nnetwork="none"',
    "x = 1\r\n",
    'path = "a#b"\nflag = false#tight\n',
    "x = 0\n",
    'unicode = "café ☕"\n',
    'tab = "a\tb"\n',
]
LEFT_TO_TOMLLIB = [
    "[table]\nx = 1\n",
    "a.b = 1\n",
    '"quoted" = 1\n',
    'x = "a\\"b"\n',
    "x = 'literal'\n",
    'x = """multi\nserve_socket = "/tmp/evil.sock"\n"""\n',
    "x = [1, 2]\n",
    "x = {a = 1}\n",
    "x = 1.5\n",
    "x = 1_000\n",
    "x = 01\n",
    "x = 0x10\n",
    "x = 1979-05-27\n",
    "x = 1\nx = 2\n",
    'x = "a" "b"\n',
    "x = \x01\n",
    'x = "\x7f"\n',
    "\ufeffx = 1\n",
    "x =\n",
    "x = tru\n",
    "= 1\n",
    'x = "unterminated\n',
    "x = 1\ry = 2\n",
    "x = 1\r",
    "x = ²\n",
]


@pytest.mark.parametrize("text", READ)
def test_simple_files_read_as_tomllib_reads_them(text: str) -> None:
    assert simple_toml(text) is not None
    assert simple_toml(text) == tomllib.loads(text)


@pytest.mark.parametrize("text", LEFT_TO_TOMLLIB)
def test_everything_else_is_left_to_tomllib(text: str) -> None:
    assert simple_toml(text) is None


def test_any_mix_of_fragments_reads_as_tomllib_or_is_left_to_it() -> None:
    """Random lines of TOML's pieces: what the fast path reads, tomllib reads the same."""
    pieces = ["a", "b", "serve", "x-y", "k_2", " ", "\t", "=", '"', "'", "#", "1", "0", "-",
              "+", "true", "false", ".", "[", "]", "\\", "é", "\r", "1.5", "_", ",", "{"]  # fmt: skip
    rng = random.Random(19)
    read = 0
    for _ in range(20000):
        lines = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
                 for _ in range(rng.randint(1, 3))]  # fmt: skip
        text = "\n".join(lines)
        simple = simple_toml(text)
        if simple is None:
            continue
        read += 1
        assert simple == tomllib.loads(text), repr(text)
    assert read > 100  # the fast path did read many of them


def test_a_broken_file_is_still_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("x = 1\nx = 2\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        read_config(config, required=True)
    config.write_bytes(b'x = "\xff"\n')
    with pytest.raises(ConfigError, match="invalid TOML"):
        read_config(config, required=True)
