"""What may be mounted (`_sandbox.mounts`): workspace roots an event names, hook files' folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandboxrun import ConfigError, Settings
from sandboxrun._sandbox.mounts import HOME_FOLDERS, HOOK_HOME, check_root, home_layout, hook_mount


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


# -- the hook's home (issue #9 item 4) -----------------------------------------------


def _folders(home: Path, *names: str) -> list[str]:
    return [str(home / n) for n in (names or HOME_FOLDERS)]


def test_the_home_is_an_empty_tmpfs_at_the_users_path_with_writable_folders(home: Path) -> None:
    """Nothing of the user's home mounted below it: the home and its folders are writable."""
    layout = home_layout([str(home.parent / "ws")])
    assert layout.home == str(home) and layout.state_at is None
    assert layout.tmpfs == (str(home), *_folders(home))
    assert layout.writable == (str(home), *_folders(home))


def test_a_workspace_below_the_home_leaves_the_home_unwritable(home: Path) -> None:
    """Landlock grants by tree: the home is not granted, its own folders still are."""
    layout = home_layout([str(home / "proj"), str(home / ".claude" / "hooks")])
    assert layout.home == str(home) and layout.tmpfs[0] == str(home)
    assert layout.writable == tuple(_folders(home))


def test_a_workspace_below_a_home_folder_leaves_that_folder_unwritable(home: Path) -> None:
    """~/.config/nvim as a workspace: ~/.config is not granted (its FIFOs stay shut)."""
    layout = home_layout([str(home / ".config" / "nvim")])
    assert str(home / ".config") in layout.tmpfs
    assert str(home / ".config") not in layout.writable and str(home) not in layout.writable
    assert str(home / ".cache") in layout.writable


def test_the_users_hook_places_and_files_keep_their_folders_writable(home: Path) -> None:
    """A hook folder, a plugin, a transcript or a file mounted alone is not a workspace."""
    (home / "guard.sh").parent.mkdir(exist_ok=True)
    (home / "guard.sh").write_text("true\n")
    mounts = [str(home / p) for p in (".claude/hooks", ".claude/plugins/p", ".cline/hooks",
                                      "Documents/Cline/Hooks", "guard.sh")]  # fmt: skip
    assert home_layout([str(home.parent / "ws"), *mounts]).writable[:2] == (
        str(home),
        str(home / ".claude"),
    )


def test_nothing_covers_a_folder_the_user_mounted_above_a_home_folder(home: Path) -> None:
    """A workspace at ~/Documents: no tmpfs hides its Cline folder."""
    layout = home_layout([str(home / "Documents")])
    assert not any(t.startswith(str(home / "Documents")) for t in layout.tmpfs)


def test_a_hook_state_is_bound_at_the_home_only_when_nothing_lies_below_it(home: Path) -> None:
    """With nothing below the home, the state is the home; else it is at /home/hook."""
    alone = home_layout([str(home.parent / "ws")], state=True)
    assert (alone.home, alone.tmpfs, alone.writable, alone.state_at) == (
        str(home),
        (),
        (str(home),),
        str(home),
    )
    below = home_layout([str(home / "proj")], state=True)
    assert (below.home, below.state_at) == (HOOK_HOME, HOOK_HOME)
    assert below.tmpfs[0] == str(home) and HOOK_HOME in below.writable
    assert str(home) not in below.writable


@pytest.mark.parametrize("where", ["/", "/etc/x", "/tmp"])
def test_a_home_that_cannot_be_one_falls_back_to_home_hook(
    monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A home at /, in a system folder or a shared one: the hook's home is /home/hook."""
    from sandboxrun._sandbox import mounts as _mounts

    monkeypatch.setattr(_mounts, "account_home", lambda: where)
    layout = home_layout([])
    assert (layout.home, layout.tmpfs, layout.writable) == (HOOK_HOME, (HOOK_HOME,), (HOOK_HOME,))


def test_a_mount_at_or_above_the_home_falls_back_to_home_hook(home: Path) -> None:
    """A platform's allowed_roots could mount the home's parent: nothing is put over it."""
    assert home_layout([str(home.parent)]).home == HOOK_HOME


# -- issue 17 item 3: what an event can have mounted -----------------------------------


@pytest.mark.parametrize(
    "below", [".ssh", ".config", ".config/gh", ".local/share", ".cache", ".gnupg", ".aws",
              ".kube", ".docker", ".claude", ".claude/projects", ".cline", ".anything"],
)  # fmt: skip
def test_the_homes_dot_folders_are_refused(home: Path, below: str) -> None:
    """Every folder below a dot-folder of the home is refused (an allowlist-shaped rule:
    no list of names to miss one), though the user owns it; a plain folder is fine."""
    (home / below).mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"dot-folder of your home.*allowed_roots") as caught:
        check_root(str(home / below))
    assert f"~/{below.split('/')[0]}" in str(caught.value)
    (home / "src" / ".hidden").mkdir(parents=True)  # a dot-folder in a project is the project's
    assert check_root(str(home / "src" / ".hidden")) == str(home / "src" / ".hidden")


def test_a_symlink_into_a_dot_folder_is_refused(home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / "proj").symlink_to(home / ".ssh")
    with pytest.raises(ConfigError, match=r"~/\.ssh"):
        check_root(str(home / "proj"))


def test_a_dot_folder_the_user_lists_is_allowed_and_only_it(home: Path) -> None:
    """allowed_roots admits a dot-folder listed itself (or a folder inside it); an entry
    that merely holds it (the home, /home) admits neither it nor the home itself."""
    for below in (".config/proj", ".ssh"):
        (home / below).mkdir(parents=True)
    proj = str(home / ".config" / "proj")
    assert check_root(proj, allowed=[str(home / ".config")]) == proj
    assert check_root(proj, allowed=[proj]) == proj
    for allowed in ([str(home)], [str(home.parent)]):
        with pytest.raises(ConfigError, match=r"~/\.ssh"):
            check_root(str(home / ".ssh"), allowed=allowed)
    with pytest.raises(ConfigError, match="your home folder"):
        check_root(str(home), allowed=[str(home.parent)])
    with pytest.raises(ConfigError, match="holds your home"):
        check_root(str(home.parent), allowed=[str(home.parent)])
    assert check_root(str(home), allowed=[str(home)]) == str(home)


def test_allowed_roots_confine(home: Path, tmp_path: Path) -> None:
    """Set, allowed_roots is the only place roots come from: the user's own project
    elsewhere is refused, naming the setting."""
    (tmp_path / "tenants" / "t1").mkdir(parents=True)
    (home / "proj").mkdir()
    allowed = [str(tmp_path / "tenants")]
    assert check_root(str(tmp_path / "tenants" / "t1"), allowed) == str(tmp_path / "tenants/t1")
    with pytest.raises(ConfigError, match=r"not below allowed_roots \(.*tenants\)"):
        check_root(str(home / "proj"), allowed)


def test_sandboxrun_own_files_are_never_roots(home: Path, tmp_path: Path) -> None:
    """The state folder (other workspaces' hook states), a folder holding it, the
    server's socket folder and token: refused, even under allowed_roots."""
    from sandboxrun._sandbox.mounts import workspace_root

    base = tmp_path / "srv"
    key = base / "state" / ("0" * 32)
    key.mkdir(parents=True)
    (base / "run").mkdir()
    (base / "token").write_text("t" * 20)
    (base / "ws").mkdir()
    settings = Settings.load(state_dir=str(base / "state"), allowed_roots=(str(base),),
                             serve_socket=str(base / "run" / "s.sock"),
                             serve_token_file=str(base / "token"))  # fmt: skip
    for root in (key, base / "state", base, base / "run"):
        with pytest.raises(ConfigError, match="sandboxrun's own"):
            workspace_root(str(root), settings)
    assert workspace_root(str(base / "ws"), settings) == str(base / "ws")
    with pytest.raises(ConfigError, match="sandboxrun's own"):  # the default state folder
        check_root(str(home), allowed=[str(home)], own=[str(home / ".local/share/sandboxrun")])


def test_a_servers_own_files_and_allowed_roots_bind_every_request(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `serve` registers at start-up holds whatever settings a request brings."""
    from sandboxrun._sandbox import mounts as _mounts

    monkeypatch.setattr(_mounts, "_server", _mounts._server)  # restored afterwards
    for name in ("tenants/t1", "etc-sr", "other"):
        (tmp_path / name).mkdir(parents=True)
    _mounts.serving([str(tmp_path / "etc-sr" / "config.toml")], [str(tmp_path / "tenants")])
    assert check_root(str(tmp_path / "tenants" / "t1")) == str(tmp_path / "tenants" / "t1")
    with pytest.raises(ConfigError, match="not below the server's allowed_roots"):
        check_root(str(tmp_path / "other"), allowed=[str(tmp_path)])
    _mounts.serving([str(tmp_path / "etc-sr" / "config.toml")], [])
    with pytest.raises(ConfigError, match="sandboxrun's own"):
        check_root(str(tmp_path / "etc-sr"))


def test_every_claude_shaped_agents_folder_is_a_home_folder_with_its_hook_places():
    """A user hook of any Claude-shaped agent may write in its agent's folder (a log, a
    cache) as on the host, and its hooks folder and transcripts mount there writable."""
    from sandboxrun._dialects.claude.dialect import ClaudeDialect
    from sandboxrun._dialects.registry import DIALECTS
    from sandboxrun._sandbox.mounts import HOOK_PLACES

    for dialect in DIALECTS.values():
        if not isinstance(dialect, ClaudeDialect):
            continue
        top = dialect.user_dir.split("/")[0]
        assert top in HOME_FOLDERS, dialect.agent
        for place in ("hooks", dialect.transcripts):
            assert f"{dialect.user_dir}/{place}" in HOOK_PLACES, (dialect.agent, place)
