"""Cline (the VS Code extension's rules: `cline_variant = "vscode"`) and Careti hook discovery:
folders, order, exec bit, near-misses, workdir, argv, mounts. The SDK/CLI: test_cline_sdk.py."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from sandboxrun import HookFactory, Settings
from sandboxrun._dialects.cline import CARETI, CLINE_VSCODE, HOOK_NAMES, VSCODE_NAMES

GLOBAL = Path("Documents/Cline/Hooks")
LOCAL = Path(".clinerules/hooks")


@pytest.fixture
def roots(tmp_path: Path) -> list[str]:
    """Two workspace roots that exist."""
    found = []
    for name in ("root-a", "root-b"):
        (tmp_path / name).mkdir()
        found.append(str(tmp_path / name))
    return found


def test_folders_are_global_then_each_root_in_order(home: Path, roots: list[str]) -> None:
    """The VS Code extension's: the global folder, then each root's `.clinerules/hooks`
    (getAllHooksDirs, apps/vscode/src/core/storage/disk.ts@21cb8d25)."""
    folders = CLINE_VSCODE.folders(roots, str(home))
    assert folders == [
        (str(home / GLOBAL), "global", roots[0]),
        (os.path.join(roots[0], LOCAL), "workspace", roots[0]),
        (os.path.join(roots[1], LOCAL), "workspace", roots[1]),
    ]


def test_hooks_found_global_first_then_roots_in_order(home, roots, make_hook) -> None:
    """Hooks come out in discovery order: global, then each root in the order given."""
    g = make_hook(home / GLOBAL)
    b = make_hook(Path(roots[1]) / LOCAL)
    a = make_hook(Path(roots[0]) / LOCAL)
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert [h.name for h in found.hooks] == [str(g), str(a), str(b)]
    assert [h.source for h in found.hooks] == ["global", "workspace", "workspace"]
    assert {h.hook_name for h in found.hooks} == {"PreToolUse"}
    assert found.skipped == ()


def test_root_order_is_the_callers_order(home, roots, make_hook) -> None:
    """Reversing the roots reverses the workspace hooks (no sorting by path)."""
    a = make_hook(Path(roots[0]) / LOCAL)
    b = make_hook(Path(roots[1]) / LOCAL)
    found = CLINE_VSCODE.discover("PreToolUse", roots[::-1], str(home))
    assert [h.name for h in found.hooks] == [str(b), str(a)]


def test_only_the_requested_hook_name_is_found(home, roots, make_hook) -> None:
    """Asking for PreToolUse does not return a PostToolUse hook in the same folder."""
    folder = Path(roots[0]) / LOCAL
    pre = make_hook(folder, "PreToolUse")
    make_hook(folder, "PostToolUse")
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert [h.name for h in found.hooks] == [str(pre)]
    assert found.skipped == ()


def test_careti_folders(home, roots, make_hook) -> None:
    """Careti reads `~/Documents/.agents/hooks` then `<root>/.agents/hooks`, not Cline's."""
    g = make_hook(home / "Documents/.agents/hooks")
    w = make_hook(Path(roots[0]) / ".agents/hooks")
    cline_hook = make_hook(Path(roots[0]) / LOCAL)
    careti = CARETI.discover("PreToolUse", roots, str(home))
    assert [(h.name, h.source) for h in careti.hooks] == [(str(g), "global"), (str(w), "workspace")]
    cline = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert [h.name for h in cline.hooks] == [str(cline_hook)]


def test_factory_picks_the_dialect_from_settings(home, roots, make_hook, fake) -> None:
    """HookFactory with agent careti discovers in the Careti folders, under its `home`."""
    w = make_hook(Path(roots[0]) / ".agents/hooks")
    make_hook(Path(roots[0]) / LOCAL)
    factory = HookFactory(Settings.load(agent="careti"), fake(), home=str(home))
    assert [h.name for h in factory.discover("PreToolUse", roots).hooks] == [str(w)]


def test_factory_home_argument_locates_the_global_folder(
    tmp_path, home, roots, make_hook, fake
) -> None:
    """The global folder is looked up under the `home` given to HookFactory, not $HOME."""
    other = tmp_path / "other-home"
    g = make_hook(other / GLOBAL)
    make_hook(home / GLOBAL)
    factory = HookFactory(Settings.load(), fake(), home=str(other))
    assert [h.name for h in factory.discover("PreToolUse", roots).hooks] == [str(g)]


@pytest.mark.parametrize("mode", [0o755, 0o700, 0o744, 0o645])
def test_any_exec_bit_enables_a_hook(home, roots, make_hook, mode: int) -> None:
    """A regular file named exactly after the hook with an exec bit is a hook."""
    hook = make_hook(Path(roots[0]) / LOCAL, mode=mode)
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert [h.name for h in found.hooks] == [str(hook)]


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o444])
def test_no_exec_bit_is_a_disabled_hook_reported_as_skipped(
    home, roots, make_hook, mode: int
) -> None:
    """Without the exec bit (Cline's 'disabled' toggle) the hook is skipped with a reason."""
    hook = make_hook(Path(roots[0]) / LOCAL, mode=mode)
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert found.hooks == ()
    [skip] = found.skipped
    assert (skip.path, skip.source) == (str(hook), "workspace")
    assert "not executable" in skip.reason
    assert "disabled" in skip.reason


def test_symlink_to_an_executable_is_a_hook(home, roots, make_hook, tmp_path) -> None:
    """A symlink named after the hook that points at an executable file is a hook."""
    target = make_hook(tmp_path / "elsewhere", "real-hook")
    folder = Path(roots[0]) / LOCAL
    folder.mkdir(parents=True)
    (folder / "PreToolUse").symlink_to(target)
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert [h.name for h in found.hooks] == [str(folder / "PreToolUse")]


def _near_miss(folder: Path, kind: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "sh":
        path = folder / "PreToolUse.sh"
    elif kind == "ps1":
        path = folder / "PreToolUse.ps1"
    elif kind == "case":
        path = folder / "pretooluse"
    elif kind == "case-ext":
        path = folder / "preToolUse.sh"
    elif kind == "directory":
        path = folder / "PreToolUse"
        path.mkdir()
        return path
    elif kind == "dangling":
        path = folder / "PreToolUse"
        path.symlink_to(folder / "does-not-exist")
        return path
    elif kind == "fifo":
        path = folder / "PreToolUse"
        os.mkfifo(path)
        return path
    else:  # pragma: no cover
        raise AssertionError(kind)
    path.write_text("#!/bin/sh\necho '{}'\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("ps1", "the VS Code extension runs only the file named PreToolUse, no extension"),
        ("case", "differs in case"),
        ("case-ext", "differs in case"),
        ("directory", "is a directory"),
        ("dangling", "cannot stat"),
        ("fifo", "not a regular file"),
    ],
)
def test_near_misses_are_reported_with_a_reason(home, roots, kind: str, reason: str) -> None:
    """Files that look like the hook but are not one are skipped and say why."""
    path = _near_miss(Path(roots[0]) / LOCAL, kind)
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert found.hooks == ()
    [skip] = found.skipped
    assert (skip.path, skip.source) == (str(path), "workspace")
    assert reason in skip.reason


def test_near_miss_in_the_global_folder_has_source_global(home, roots) -> None:
    """A near-miss in the global folder is reported with source global."""
    path = _near_miss(home / GLOBAL, "ps1")
    [skip] = CLINE_VSCODE.discover("PreToolUse", roots, str(home)).skipped
    assert (skip.path, skip.source) == (str(path), "global")


def test_near_miss_reasons_name_the_exact_hook_name(home, roots) -> None:
    """Case and extension near-misses tell the user the exact name to use."""
    folder = Path(roots[0]) / LOCAL
    _near_miss(folder, "case")
    (folder / "PreToolUse.rb").write_text("#!/bin/sh\n")
    skipped = CLINE_VSCODE.discover("PreToolUse", roots, str(home)).skipped
    assert len(skipped) == 2
    assert all("PreToolUse" in s.reason for s in skipped)


def test_a_hook_beside_its_near_misses_still_runs(home, roots, make_hook) -> None:
    """A valid hook is found even when near-misses sit next to it."""
    folder = Path(roots[0]) / LOCAL
    hook = make_hook(folder)
    _near_miss(folder, "case")
    _near_miss(folder, "ps1")
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert [h.name for h in found.hooks] == [str(hook)]
    assert sorted(Path(s.path).name for s in found.skipped) == ["PreToolUse.ps1", "pretooluse"]


@pytest.mark.parametrize(
    "name", ["README.md", "notes.txt", ".gitkeep", "PreToolUseOld", "PreToolUse~", "helper.sh"]
)
def test_unrelated_files_are_ignored_silently(home, roots, make_hook, name: str) -> None:
    """Files unrelated to any hook name are neither hooks nor reported."""
    make_hook(Path(roots[0]) / LOCAL, name)
    found = CLINE_VSCODE.discover(None, roots, str(home))
    assert found.hooks == ()
    assert found.skipped == ()


def test_workspace_hook_runs_in_its_root_and_global_in_the_first(home, roots, make_hook) -> None:
    """A workspace hook's workdir is its own root; a global hook's is the first root."""
    make_hook(home / GLOBAL)
    make_hook(Path(roots[1]) / LOCAL)
    glob, local = CLINE_VSCODE.discover("PreToolUse", roots, str(home)).hooks
    assert glob.workdir == roots[0]
    assert local.workdir == roots[1]


@pytest.mark.parametrize("dirname", ["plain", "with space", "it's here", "$(touch x);`y`"])
def test_argv_is_sh_c_with_the_quoted_path(home, tmp_path, make_hook, dirname: str) -> None:
    """The hook is launched as `/bin/sh -c '<path>'`, the path one shell word."""
    root = tmp_path / dirname
    root.mkdir()
    hook = make_hook(root / LOCAL)
    [spec] = CLINE_VSCODE.discover("PreToolUse", [str(root)], str(home)).hooks
    assert spec.argv[:2] == ("/bin/sh", "-c")
    assert len(spec.argv) == 3
    assert shlex.split(spec.argv[2]) == [str(hook)]


def test_argv_quotes_a_path_with_spaces(home, tmp_path, make_hook) -> None:
    """A path with a space is quoted with single quotes, as Cline does."""
    root = tmp_path / "my project"
    root.mkdir()
    hook = make_hook(root / LOCAL)
    [spec] = CLINE_VSCODE.discover("PreToolUse", [str(root)], str(home)).hooks
    assert spec.argv == ("/bin/sh", "-c", f"'{hook}'")


def test_mounts_of_a_global_hook_are_the_roots_and_its_folder(home, roots, make_hook) -> None:
    """A global hook mounts every workspace root plus the global hook folder."""
    make_hook(home / GLOBAL)
    [spec] = CLINE_VSCODE.discover("PreToolUse", roots, str(home)).hooks
    assert spec.mounts == (roots[0], roots[1], str(home / GLOBAL))


def test_mounts_are_deduplicated_when_the_folder_is_inside_a_root(home, roots, make_hook) -> None:
    """A workspace hook's folder lies inside its root, so only the roots are mounted."""
    make_hook(Path(roots[1]) / LOCAL)
    [spec] = CLINE_VSCODE.discover("PreToolUse", roots, str(home)).hooks
    assert spec.mounts == tuple(roots)


def test_mounts_drop_repeated_and_nested_roots(home, roots, make_hook) -> None:
    """A root given twice, or inside another root, is mounted once."""
    nested = os.path.join(roots[0], "sub")
    os.mkdir(nested)
    make_hook(Path(roots[0]) / LOCAL)
    hooks = CLINE_VSCODE.discover("PreToolUse", [roots[0], nested, roots[0]], str(home)).hooks
    assert hooks[0].mounts == (roots[0],)


def test_mounts_do_not_confuse_sibling_prefixes(home, tmp_path, make_hook) -> None:
    """`/x/ab` is not inside `/x/a`: both are mounted."""
    a, ab = tmp_path / "a", tmp_path / "ab"
    a.mkdir()
    ab.mkdir()
    make_hook(home / GLOBAL)
    [spec] = CLINE_VSCODE.discover("PreToolUse", [str(a), str(ab)], str(home)).hooks
    assert spec.mounts == (str(a), str(ab), str(home / GLOBAL))


def test_global_folder_inside_a_root_is_not_mounted_twice(home, make_hook) -> None:
    """When the workspace root is HOME itself, the global folder is already mounted."""
    make_hook(home / GLOBAL)
    [spec] = CLINE_VSCODE.discover("PreToolUse", [str(home)], str(home)).hooks
    assert spec.mounts == (str(home),)


def test_spec_defaults(home, roots, make_hook) -> None:
    """A discovered spec has no extra env and takes its timeout from the settings."""
    make_hook(Path(roots[0]) / LOCAL)
    [spec] = CLINE_VSCODE.discover("PreToolUse", roots, str(home)).hooks
    assert dict(spec.env) == {}
    assert spec.timeout is None


def test_discover_none_lists_every_hook_name(home, roots, make_hook) -> None:
    """`discover(None, ...)` finds a hook for every Cline hook name, and every near-miss."""
    folder = Path(roots[0]) / LOCAL
    for name in HOOK_NAMES:
        make_hook(folder, name)
    make_hook(folder, "TaskStart.rb")
    found = CLINE_VSCODE.discover(None, roots, str(home))
    assert sorted(h.hook_name for h in found.hooks) == sorted(VSCODE_NAMES)
    assert all(h.name == str(folder / h.hook_name) for h in found.hooks)
    assert sorted(Path(s.path).name for s in found.skipped) == [
        "SessionShutdown",
        "TaskError",
        "TaskStart.rb",
    ]  # the SDK's only, and a near-miss


def test_hook_names_are_clines() -> None:
    """The known hook names are Cline's nine, and the SDK's TaskError and SessionShutdown."""
    assert set(HOOK_NAMES) == {
        "TaskStart",
        "TaskResume",
        "TaskCancel",
        "TaskComplete",
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "PreCompact",
        "Notification",
        "TaskError",
        "SessionShutdown",
    }


def test_missing_folders_are_fine(home, roots) -> None:
    """No hook folders at all is no hooks and nothing skipped."""
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert (found.hooks, found.skipped) == ((), ())


def test_a_file_where_the_folder_should_be_is_ignored(home, roots) -> None:
    """A regular file at `.clinerules/hooks` is not an error."""
    (Path(roots[0]) / ".clinerules").mkdir()
    (Path(roots[0]) / LOCAL).write_text("not a folder")
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert (found.hooks, found.skipped) == ((), ())


def test_unlistable_folder_is_reported(home, roots, monkeypatch) -> None:
    """A folder that exists but cannot be listed is reported as skipped."""
    folder = Path(roots[0]) / LOCAL
    folder.mkdir(parents=True)
    real_listdir = os.listdir

    def listdir(path):  # type: ignore[no-untyped-def]
        if str(path) == str(folder):
            raise PermissionError(13, "Permission denied")
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    found = CLINE_VSCODE.discover("PreToolUse", roots, str(home))
    assert found.hooks == ()
    [skip] = found.skipped
    assert (skip.path, skip.source) == (str(folder), "workspace")
    assert "cannot list folder" in skip.reason


def test_no_workspaces_means_the_home_for_global_hooks(
    home, tmp_path, make_hook, monkeypatch
) -> None:
    """With no roots at all (install only lists hooks so), a global hook's folder is the
    home: never the process's current directory."""
    monkeypatch.chdir(tmp_path)
    make_hook(home / GLOBAL)
    [spec] = CLINE_VSCODE.discover("PreToolUse", [], str(home)).hooks
    assert spec.workdir == str(home)


def test_explicit_hooks_dirs_replace_the_usual_folders(
    home: Path, roots: list[str], make_hook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake
) -> None:
    """--hooks-dir searches only the given folders (relative to the caller's folder,
    never the process's current directory), source explicit."""
    make_hook(home / GLOBAL)
    make_hook(Path(roots[0]) / LOCAL)
    extra = make_hook(tmp_path / "sandboxed")
    monkeypatch.chdir("/")
    factory = HookFactory(
        Settings.load(), fake(), home=str(home), hooks_dirs=["sandboxed"], cwd=str(tmp_path)
    )
    found = factory.discover("PreToolUse", roots)
    assert [(h.name, h.source, h.workdir) for h in found.hooks] == [
        (str(extra), "explicit", roots[0])
    ]
    assert str(tmp_path / "sandboxed") in found.hooks[0].mounts
