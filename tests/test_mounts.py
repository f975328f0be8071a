"""What may be mounted (`_mounts`): workspace roots an event names, hook files' folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandboxrun import ConfigError
from sandboxrun._mounts import check_root, hook_mount


@pytest.mark.parametrize("root", ["/", "/etc", "/etc/ssl", "/var/lib/dpkg", "/usr/local/bin",
                                  "/proc", "/run", "/var", "/home", "/tmp"])  # fmt: skip
def test_system_and_shared_folders_are_refused(home: Path, root: str) -> None:
    """An event cannot get a system folder, or a folder of everyone's, mounted."""
    if not os.path.isdir(root):
        pytest.skip(f"{root} is not on this machine")
    with pytest.raises(ConfigError, match="refused"):
        check_root(root)


def test_the_home_and_its_ancestors_are_refused(home: Path) -> None:
    """The user's home holds ~/.ssh: neither it nor a folder above it is a workspace."""
    (home / "proj").mkdir()
    for root in (home, home.parent):
        with pytest.raises(ConfigError, match="home"):
            check_root(str(root))
    assert check_root(str(home / "proj")) == str(home / "proj")


def test_a_folder_of_another_owner_is_refused_unless_allowed(home: Path, tmp_path: Path) -> None:
    """Someone else's folder is refused; a platform's allowed_roots admits it."""
    other = tmp_path / "tenants" / "t1"
    other.mkdir(parents=True)
    os.chown(other, os.getuid() + 4242, os.getgid()) if os.getuid() == 0 else pytest.skip("root")
    with pytest.raises(ConfigError, match="owned by uid"):
        check_root(str(other))
    assert check_root(str(other), allowed=[str(tmp_path / "tenants")]) == str(other)


def test_never_mountable_even_when_allowed(home: Path) -> None:
    """allowed_roots cannot open /etc or /proc."""
    with pytest.raises(ConfigError, match="system folder"):
        check_root("/etc/ssl", allowed=["/etc"])


def test_hook_files_in_system_folders_or_the_home_are_mounted_alone(home: Path) -> None:
    """A hook in /usr/local/bin or straight in the home is mounted as the file alone."""
    assert hook_mount("/usr/local/bin/guard") == "/usr/local/bin/guard"
    assert hook_mount(str(home / "guard.sh")) == str(home / "guard.sh")
    assert hook_mount(str(home / ".claude/hooks/g.sh")) == str(home / ".claude/hooks")
