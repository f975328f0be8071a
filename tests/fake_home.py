"""Run the `sandboxrun` command with another account home, for engine tests that must
not touch the real home's files: `python tests/fake_home.py HOME ARG...`.

sandboxrun takes the account's home from the password database only (never `$HOME`,
which a repository can set), so a subprocess cannot be given one through its
environment. This script answers `pwd.getpwuid` with HOME as the home, as a user whose
passwd entry names HOME would see it, then runs `python -m sandboxrun ARG...`.
"""

from __future__ import annotations

import pwd
import runpy
import sys
from pathlib import Path

SCRIPT = str(Path(__file__).resolve())


def command(home: str | Path, argv: list[str]) -> list[str]:
    """`argv` (`[python, "-m", "sandboxrun", ...]`, as `cli()` builds it) with `home` as
    the account's home; `run` and `exec` go cold (`--no-serve`): a server of the real
    home must not answer them."""
    assert argv[1:3] == ["-m", "sandboxrun"], argv
    rest = argv[3:]
    if rest and rest[0] in ("run", "exec"):
        rest = [rest[0], "--no-serve", *rest[1:]]
    return [argv[0], SCRIPT, str(home), *rest]


def _main() -> None:
    home = sys.argv.pop(1)
    real = pwd.getpwuid

    def getpwuid(uid: int) -> pwd.struct_passwd:
        entry = real(uid)
        return pwd.struct_passwd((entry.pw_name, entry.pw_passwd, entry.pw_uid, entry.pw_gid,
                                  entry.pw_gecos, home, entry.pw_shell))  # fmt: skip

    pwd.getpwuid = getpwuid
    sys.path.pop(0)  # this folder: the tests' modules are not sandboxrun's
    sys.argv[0] = "sandboxrun"
    runpy.run_module("sandboxrun", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _main()
