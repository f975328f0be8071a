"""Plugin hooks for `run --agent claude`: found from the user's own enabledPlugins and
installed_plugins.json, never from a workspace; each with its root and data variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxrun._dialects.claude.dialect import CLAUDE

GUARD = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'}]}]}}  # fmt: skip


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def install(home: Path, plugin: str = "guard@market", version: int = 2, hooks: Any = GUARD,
            path: Path | None = None) -> Path:  # fmt: skip
    name, _, market = plugin.partition("@")
    root = path or home / ".claude" / "plugins" / "cache" / market / name / "1.0.0"
    write(root / "hooks" / "hooks.json", hooks)
    entry: Any = {"installPath": str(root), "version": "1.0.0"}
    table = {
        plugin: [{"scope": "project", "installPath": "/elsewhere"}, {"scope": "user", **entry}]
    }
    doc = (
        {"version": 2, "plugins": table}
        if version == 2
        else {"version": 1, "plugins": {plugin: entry}}
    )
    write(home / ".claude" / "plugins" / "installed_plugins.json", doc)
    return root


def test_an_enabled_installed_plugins_hook_is_found(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    root = install(home)
    write(home / ".claude" / "settings.json", {"enabledPlugins": {"guard@market": True}})
    found = CLAUDE.discover("PreToolUse", [str(ws)], str(home))
    (spec,) = found.hooks
    assert spec.source == "plugin" and spec.plugin == "guard@market"
    assert spec.argv == ("/bin/sh", "-c", f'python3 "{root}/hooks/guard.py"')
    assert spec.name == 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'
    assert spec.env["CLAUDE_PLUGIN_ROOT"] == str(root)
    data = home / ".claude" / "plugins" / "data" / "guard-market"
    assert spec.env["CLAUDE_PLUGIN_DATA"] == str(data)
    assert str(root) in spec.mounts and spec.matcher == "Bash"


def test_the_version_1_registry_is_read_too(tmp_path: Path) -> None:
    home = tmp_path / "home"
    install(home, version=1)
    write(home / ".claude" / "settings.json", {"enabledPlugins": {"guard@market": True}})
    assert len(CLAUDE.discover("PreToolUse", [str(tmp_path)], str(home)).hooks) == 1


def test_a_plugin_not_enabled_by_the_user_does_not_run(tmp_path: Path) -> None:
    """Only the user's settings enable: a project's enabledPlugins is not read (and said so)."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    install(home)
    write(home / ".claude" / "settings.json", {"enabledPlugins": {"guard@market": False}})
    write(ws / ".claude" / "settings.json", {"enabledPlugins": {"guard@market": True}})
    found = CLAUDE.discover("PreToolUse", [str(ws)], str(home))
    assert not found.hooks
    assert any("enabledPlugins: not read here" in s.reason for s in found.skipped)


def test_an_install_path_outside_the_plugin_folder_is_not_used(tmp_path: Path) -> None:
    """installed_plugins.json naming a workspace folder (or the data folder) is refused."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    for path in (ws / "evil", home / ".claude" / "plugins" / "data" / "guard-market"):
        install(home, path=path)
        write(home / ".claude" / "settings.json", {"enabledPlugins": {"guard@market": True}})
        found = CLAUDE.discover("PreToolUse", [str(ws)], str(home))
        assert not found.hooks
        assert any("is not in" in s.reason for s in found.skipped), found.skipped


def test_an_enabled_plugin_that_is_not_installed_is_reported(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".claude" / "settings.json", {"enabledPlugins": {"gone@market": True}})
    found = CLAUDE.discover("PreToolUse", [str(tmp_path)], str(home))
    assert not found.hooks and found.skipped[0].path == "gone@market"


def test_explicit_settings_find_no_plugins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    install(home)
    user = write(home / ".claude" / "settings.json", {"enabledPlugins": {"guard@market": True}})
    found = CLAUDE.discover("PreToolUse", [str(tmp_path)], str(home), [str(user)])
    assert not found.hooks


def test_two_plugins_with_the_same_command_are_two_hooks(tmp_path: Path) -> None:
    home = tmp_path / "home"
    hooks = {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": 'python3 "$CLAUDE_PLUGIN_ROOT/g.py"'}]}]}}  # fmt: skip
    a = install(home, "a@m", hooks=hooks)
    registry = home / ".claude" / "plugins" / "installed_plugins.json"
    first = json.loads(registry.read_text())
    b = install(home, "b@m", hooks=hooks)
    second = json.loads(registry.read_text())
    second["plugins"].update(first["plugins"])
    registry.write_text(json.dumps(second))
    write(home / ".claude" / "settings.json", {"enabledPlugins": {"a@m": True, "b@m": True}})
    found = CLAUDE.discover("PreToolUse", [str(tmp_path)], str(home))
    assert [h.env["CLAUDE_PLUGIN_ROOT"] for h in found.hooks] == [str(a), str(b)]


# -- exec: CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA (issue 17 item 4) -----------------


def _exec(home: Path, env: dict[str, str], command: str = "true") -> Any:
    from sandboxrun import Settings
    from sandboxrun._runner.exec import exec_request

    proj = home / "src" / "app"
    proj.mkdir(parents=True, exist_ok=True)
    return exec_request(Settings.load(agent="claude"), [command], b"", None, env, cwd=str(proj))


def _plugins_tree(home: Path) -> tuple[Path, Path]:
    """An installed plugin, and the rest of the tree a hook must never see: another
    plugin's data, a marketplace's clone with its git credentials."""
    root = install(home)
    plugins = home / ".claude" / "plugins"
    write(plugins / "data" / "other-market" / "token.json", {"token": "s3cret"})
    (plugins / "marketplaces" / "x" / ".git").mkdir(parents=True)
    (plugins / "marketplaces" / "x" / ".git" / "config").write_text("url = https://u:p@h/x\n")
    return root, plugins


def test_exec_mounts_an_installed_plugins_root_and_its_own_data(home: Path) -> None:
    root, plugins = _plugins_tree(home)
    data = plugins / "data" / "guard-market"
    request = _exec(home, {"CLAUDE_PLUGIN_ROOT": f"{root}/", "CLAUDE_PLUGIN_DATA": str(data)})
    assert request.env["CLAUDE_PLUGIN_ROOT"] == str(root) and str(root) in request.mounts
    assert request.env["CLAUDE_PLUGIN_DATA"] == str(data)
    assert [p for p, _ in request.private_dirs] == [str(data)]


def test_exec_keeps_a_plugins_data_where_run_keeps_it(home: Path, tmp_path: Path) -> None:
    """`state` naming a plugin by its id keeps its CLAUDE_PLUGIN_DATA under `exec` as
    under `run`, in the same folder: one request builder (`_runner.request`). `exec` named the
    plugin by its data folder's name (`guard-market`), so the user's `state = ["guard@market"]`
    gave its exec'd hooks an empty tmpfs, and a glob on the folder's name another folder."""
    from sandboxrun import Settings
    from sandboxrun._runner.exec import exec_request
    from sandboxrun._sandbox.state import plugin_data

    root, plugins = _plugins_tree(home)
    data = plugins / "data" / "guard-market"
    proj = home / "src" / "app"
    proj.mkdir(parents=True)
    settings = Settings.load(agent="claude", state=("guard@market",),
                             state_dir=str(tmp_path / "state"))  # fmt: skip
    env = {"CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data)}
    request = exec_request(settings, ["true"], b"", None, env, cwd=str(proj))
    ((inside, folder),) = request.private_dirs
    ran, _note = plugin_data(settings, str(data), "guard@market", "g.py", str(proj))  # run's
    assert inside == str(data) and folder is not None and request.private_dirs == ran


@pytest.mark.parametrize(
    "value",
    ["{plugins}", "{plugins}/data", "{plugins}/data/other-market", "{plugins}/marketplaces/x",
     "{plugins}/cache", "{plugins}/cache/market/guard", "{root}/hooks", "{root}/../1.0.0",
     "../../.claude/plugins/data", "../../.claude/plugins/cache/market/guard/1.0.0",
     "~/.claude/plugins", "/elsewhere"],
)  # fmt: skip
def test_exec_mounts_no_other_plugin_root(home: Path, value: str) -> None:
    """Only exactly an install path: never the plugins folder, its data, a marketplace,
    a folder above or below a plugin, a `..` or a relative value (read from the caller's
    folder, which a repository chooses)."""
    root, plugins = _plugins_tree(home)
    env = {"CLAUDE_PLUGIN_ROOT": value.format(plugins=plugins, root=root),
           "CLAUDE_PLUGIN_DATA": str(plugins / "data" / "guard-market")}  # fmt: skip
    request = _exec(home, env)
    assert "CLAUDE_PLUGIN_ROOT" not in request.env and "CLAUDE_PLUGIN_DATA" not in request.env
    assert not [m for m in request.mounts if m.startswith(str(plugins))], request.mounts
    assert request.private_dirs == ()


def test_exec_gives_a_plugin_only_its_own_data_folder(home: Path) -> None:
    root, plugins = _plugins_tree(home)
    for data in (plugins / "data" / "other-market", plugins / "data",
                 plugins / "data" / "guard-market" / "sub"):  # fmt: skip
        request = _exec(home, {"CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data)})
        assert "CLAUDE_PLUGIN_DATA" not in request.env and request.private_dirs == ()


def test_an_install_path_a_symlink_leads_out_of_the_plugins_folder_is_not_mounted(
    home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "hooks").mkdir(parents=True)
    link = home / ".claude" / "plugins" / "cache" / "m" / "evil"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    install(home, "evil@m", path=link)
    request = _exec(home, {"CLAUDE_PLUGIN_ROOT": str(link)})
    assert "CLAUDE_PLUGIN_ROOT" not in request.env and str(link) not in request.mounts


@pytest.mark.parametrize(
    "named",
    ["~/.claude/plugins/installed_plugins.json", "{plugins}/installed_plugins.json",
     "{plugins}/data/other-market/token.json", "{plugins}/marketplaces/x/.git/config"],
)  # fmt: skip
def test_exec_mounts_no_file_of_the_plugins_tree_but_an_installed_plugins(
    home: Path, named: str
) -> None:
    """A command naming a file of the plugins tree gets nothing mounted; a file of an
    installed plugin is still mounted (its folder, read-only)."""
    root, plugins = _plugins_tree(home)
    (root / "hooks" / "guard.py").write_text("print('ok')\n")
    request = _exec(home, {}, f"cat {named.format(plugins=plugins)}")
    assert not [m for m in request.mounts if m.startswith(str(plugins))], request.mounts
    request = _exec(home, {}, f"python3 {root}/hooks/guard.py")
    assert str(root / "hooks") in request.mounts
