"""Today's Cline protocol: the SDK's `.cline/hooks` folders, hook files with extensions,
the interpreter each is run with, and the new hook names (reference/cline-hooks.md)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from sandboxrun._dialects.cline import CARETI, CLINE, INTERPRETERS

SDK = Path(".cline/hooks")
LEGACY = Path(".clinerules/hooks")


@pytest.fixture
def root(tmp_path: Path) -> str:
    """One workspace root that exists."""
    (tmp_path / "ws").mkdir()
    return str(tmp_path / "ws")


def test_sdk_folders_are_found_beside_the_legacy_ones(home, root, make_hook) -> None:
    """Hooks in `~/.cline/hooks` and `<root>/.cline/hooks` are found, in Cline's order:
    the global folders first (SDK's, then legacy), then the root's (SDK's, then legacy)."""
    root_legacy = make_hook(Path(root) / LEGACY)
    home_legacy = make_hook(home / "Documents/Cline/Hooks")
    root_sdk = make_hook(Path(root) / SDK)
    home_sdk = make_hook(home / SDK)
    found = CLINE.discover("PreToolUse", [root], str(home))
    order = [home_sdk, home_legacy, root_sdk, root_legacy]
    assert [h.name for h in found.hooks] == [str(p) for p in order]
    assert [h.source for h in found.hooks] == ["global", "global", "workspace", "workspace"]


def test_a_folder_linked_to_another_is_read_once(home, root, make_hook) -> None:
    """`.clinerules/hooks` as a symlink to `.cline/hooks` does not run each hook twice."""
    hook = make_hook(Path(root) / SDK)
    (Path(root) / ".clinerules").mkdir()
    (Path(root) / LEGACY).symlink_to(Path(root) / SDK)
    found = CLINE.discover("PreToolUse", [root], str(home))
    assert [h.name for h in found.hooks] == [str(hook)]


@pytest.mark.parametrize("ext", [".sh", ".py", ".js", ".ts"])
def test_a_file_with_an_sdk_extension_is_a_hook_without_the_exec_bit(
    home, root, make_hook, ext: str
) -> None:
    """`PreToolUse.py` (no exec bit needed) is run by its extension's interpreter."""
    hook = make_hook(Path(root) / SDK, f"PreToolUse{ext}", mode=0o644, body="print('{}')\n")
    [spec] = CLINE.discover("PreToolUse", [root], str(home)).hooks
    assert (spec.hook_name, spec.name) == ("PreToolUse", str(hook))
    assert spec.argv == (INTERPRETERS[ext], str(hook))


def test_interpreters_are_the_sdks() -> None:
    """bash for .sh, python3 for .py, node for .js and .ts."""
    assert INTERPRETERS == {".sh": "bash", ".py": "python3", ".js": "node", ".ts": "node"}


def test_an_executable_file_with_a_shebang_runs_by_its_shebang(home, root, make_hook) -> None:
    """An executable `PreToolUse.py` starting with `#!` runs through `/bin/sh -c` like an
    extensionless hook, so its shebang (e.g. `uv run --script`) picks the interpreter."""
    body = "#!/usr/bin/env -S uv run --script\nprint('{}')\n"
    hook = make_hook(Path(root) / SDK, "PreToolUse.py", body=body)
    [spec] = CLINE.discover("PreToolUse", [root], str(home)).hooks
    assert spec.argv == ("/bin/sh", "-c", shlex.quote(str(hook)))


def test_an_executable_file_without_a_shebang_runs_by_its_extension(home, root, make_hook) -> None:
    """An executable `PreToolUse.js` without `#!` is run by node, not by the shell."""
    hook = make_hook(Path(root) / SDK, "PreToolUse.js", body="console.log('{}')\n")
    [spec] = CLINE.discover("PreToolUse", [root], str(home)).hooks
    assert spec.argv == ("node", str(hook))


def test_extensions_are_accepted_in_the_legacy_folders_too(home, root, make_hook) -> None:
    """`.clinerules/hooks/PreToolUse.sh` is a hook now, no longer an extension near-miss."""
    hook = make_hook(Path(root) / LEGACY, "PreToolUse.sh", mode=0o644)
    found = CLINE.discover("PreToolUse", [root], str(home))
    assert [h.argv for h in found.hooks] == [("bash", str(hook))]
    assert found.skipped == ()


def test_an_extensionless_hook_still_needs_the_exec_bit(home, root, make_hook) -> None:
    """Without an extension the exec bit is still Cline's enable toggle."""
    make_hook(Path(root) / SDK, "PreToolUse", mode=0o644)
    found = CLINE.discover("PreToolUse", [root], str(home))
    assert found.hooks == ()
    assert "disabled hook" in found.skipped[0].reason


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("PreToolUse.ps1", "PowerShell"),
        ("PreToolUse.rb", "extension .rb is not one Cline runs"),
        ("PreToolUse.sh.bak", "extension .sh.bak is not one Cline runs"),
    ],
)
def test_other_extensions_are_near_misses(home, root, make_hook, name: str, reason: str) -> None:
    """Extensions the SDK does not run on Linux are reported with the reason."""
    make_hook(Path(root) / SDK, name)
    found = CLINE.discover("PreToolUse", [root], str(home))
    assert found.hooks == ()
    [skip] = found.skipped
    assert reason in skip.reason and "PreToolUse" in skip.reason


def test_a_fifo_with_an_extension_does_not_block_discovery(home, root) -> None:
    """A FIFO named `PreToolUse.py` is skipped as not a regular file; never opened."""
    (Path(root) / SDK).mkdir(parents=True)
    os.mkfifo(Path(root) / SDK / "PreToolUse.py")
    found = CLINE.discover("PreToolUse", [root], str(home))
    assert found.hooks == ()
    assert "not a regular file" in found.skipped[0].reason


@pytest.mark.parametrize("name", ["Notification", "TaskError", "SessionShutdown"])
def test_the_new_hook_names_are_found(home, root, make_hook, name: str) -> None:
    """The SDK's hook names are discovered like the others."""
    make_hook(Path(root) / SDK, f"{name}.sh")
    [spec] = CLINE.discover(name, [root], str(home)).hooks
    assert spec.hook_name == name


def test_careti_keeps_its_own_folders(home, root, make_hook) -> None:
    """Careti reads `.agents/hooks` only: a `.cline/hooks` hook is Cline's, not Careti's."""
    make_hook(Path(root) / SDK)
    careti = make_hook(Path(root) / ".agents/hooks", "PreToolUse.py", mode=0o644)
    found = CARETI.discover("PreToolUse", [root], str(home))
    assert [h.name for h in found.hooks] == [str(careti)]
