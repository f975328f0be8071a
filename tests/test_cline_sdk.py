"""Cline's SDK/CLI as it reads hook files (`cline_variant = "sdk"`, the default), against
the VS Code extension's rules (`"vscode"`).

Facts from cline/cline@21cb8d2525bcedf1f4b6890b27a74a14fe7451e4:
sdk/packages/core/src/hooks/hook-file-config.ts (names, case, extensions, regular files
only, every file runs, sorted by path), sdk/packages/core/src/hooks/hook-file-hooks.ts
(`inferHookCommand`: shebang, then extension: `.ts` with `bun run`, `.ps1` with `pwsh
-File`, none with `bash`), sdk/packages/shared/src/storage/paths.ts (the four folders);
the extension: apps/vscode/src/core/hooks/hook-factory.ts (`findUnixHook`: the exact
name, X_OK) and apps/vscode/src/core/storage/disk.ts (`getAllHooksDirs`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecResult, FakeBackend, HookFactory, Settings
from sandboxrun._backends.image_tools import parse_probe
from sandboxrun._dialects.cline import CARETI, CLINE, CLINE_VSCODE, SDK_EXTENSIONS
from sandboxrun._dialects.installed import read_shim
from sandboxrun._dialects.registry import dialect_of
from sandboxrun._install.record import Record
from tests.test_install import snapshot

SDK = Path(".cline/hooks")
LEGACY = Path(".clinerules/hooks")
IMAGE = "test/hooks:1"
# The default image's interpreters: bash, python3, node; no bun, pwsh or zsh.
TOOLS = parse_probe(
    "\n".join(["p /usr/bin", "p /bin", "x /usr/bin/bash", "x /bin/bash", "x /bin/sh",
               "x /usr/bin/python3", "x /usr/bin/node", "x /usr/bin/env", "d /", "d /usr",
               "d /usr/bin", "d /tmp", "d /home", "ok dirs"]),
    IMAGE,
)  # fmt: skip


@pytest.fixture
def root(tmp_path: Path) -> str:
    (tmp_path / "ws").mkdir()
    return str(tmp_path / "ws")


def _one(home: Path, root: str, name: str = "PreToolUse") -> tuple[str, ...]:
    [spec] = CLINE.discover(name, [root], str(home)).hooks
    return spec.argv


# -- which files, and how each is started ------------------------------------------------


@pytest.mark.parametrize(
    ("ext", "argv"),
    [("", ("bash",)), (".sh", ("bash",)), (".bash", ("bash",)), (".zsh", ("bash",)),
     (".js", ("node",)), (".mjs", ("node",)), (".cjs", ("node",)),
     (".ts", ("bun", "run")), (".mts", ("bun", "run")), (".cts", ("bun", "run")),
     (".py", ("python3",)), (".ps1", ("pwsh", "-File"))],
)  # fmt: skip
def test_every_sdk_extension_runs_by_its_interpreter(home, root, make_hook, ext, argv) -> None:
    """No shebang, no exec bit: the extension picks the interpreter; none: bash."""
    hook = make_hook(Path(root) / SDK, f"PreToolUse{ext}", mode=0o644, body="x\n")
    assert _one(home, root) == (*argv, str(hook))
    assert {*SDK_EXTENSIONS, ""} >= {ext}


@pytest.mark.parametrize(
    "name", ["pretooluse.sh", "PRETOOLUSE", "preToolUse.py", " PreToolUse .js"]
)
def test_names_match_in_any_case_and_trimmed(home, root, make_hook, name: str) -> None:
    """`pretooluse.sh` is a near-miss no more: the SDK lowers and trims the name."""
    hook = make_hook(Path(root) / SDK, name, mode=0o644)
    [spec] = CLINE.discover("PreToolUse", [root], str(home)).hooks
    assert (spec.hook_name, spec.name) == ("PreToolUse", str(hook))


def test_a_look_alike_letter_that_lowers_to_the_name_is_a_hook(home, root, make_hook) -> None:
    """The Kelvin sign lowers to `k` in JavaScript and Python alike: Cline runs
    `TasKStart` (U+212A), so sandboxrun does too (it must not pass unsandboxed)."""
    hook = make_hook(Path(root) / SDK, "Tas\u212aStart.sh")
    [spec] = CLINE.discover("TaskStart", [root], str(home)).hooks
    assert spec.name == str(hook)


def test_every_file_of_a_name_runs_in_path_order(home, root, make_hook) -> None:
    """`PreToolUse.sh` and `pretooluse.py` both run (the SDK collects every file)."""
    b = make_hook(Path(root) / SDK, "pretooluse.py")
    a = make_hook(Path(root) / SDK, "PreToolUse.sh")
    c = make_hook(Path(root) / LEGACY, "PreToolUse")
    found = CLINE.discover("PreToolUse", [root], str(home))
    # localeCompare: case folded (pretooluse.py < PreToolUse.sh), .cline < .clinerules
    assert [h.name for h in found.hooks] == [str(b), str(a), str(c)]


def test_the_four_folders(home, root, make_hook) -> None:
    hooks = [make_hook(home / "Documents/Cline/Hooks"), make_hook(home / ".cline/hooks"),
             make_hook(Path(root) / LEGACY), make_hook(Path(root) / SDK)]  # fmt: skip
    found = CLINE.discover("PreToolUse", [root], str(home))
    assert sorted(h.name for h in found.hooks) == sorted(map(str, hooks))


@pytest.mark.parametrize(
    ("body", "argv"),
    [("#!/usr/bin/env node\n", ("node",)), ("#!/bin/bash -e\n", ("bash", "-e")),
     ("#!/usr/bin/python3\n", ("python3",)), ("#!/usr/local/bin/bun\n", ("/usr/local/bin/bun",)),
     ("#!/usr/bin/env\n", ("/usr/bin/env",)), ("#!/usr/bin/env -S uv run\n", ("-S", "uv", "run"))],
)  # fmt: skip
def test_a_shebang_wins_over_the_extension(home, root, make_hook, body, argv) -> None:
    hook = make_hook(Path(root) / SDK, "PreToolUse.sh", body=body)
    assert _one(home, root) == (*argv, str(hook))


@pytest.mark.parametrize(
    ("name", "reason"),
    [("PreToolUse.rb", "extension .rb is not one"), ("PreToolUse.SH", "in capitals"),
     ("PreCompact.sh", "never runs it"), ("Notification", "VS Code extension only")],
)  # fmt: skip
def test_near_misses_say_why(home, root, make_hook, name: str, reason: str) -> None:
    make_hook(Path(root) / SDK, name)
    found = CLINE.discover(None, [root], str(home))
    assert found.hooks == ()
    [skip] = found.skipped
    assert reason in skip.reason


def test_a_symlink_is_not_run_by_the_sdk_but_by_the_extension(home, root, make_hook, tmp_path):
    target = make_hook(tmp_path / "elsewhere", "real")
    (Path(root) / LEGACY).mkdir(parents=True)
    (Path(root) / LEGACY / "PreToolUse").symlink_to(target)
    found = CLINE.discover("PreToolUse", [root], str(home))
    assert found.hooks == () and "a symlink" in found.skipped[0].reason
    assert len(CLINE_VSCODE.discover("PreToolUse", [root], str(home)).hooks) == 1


def test_the_setting_picks_the_variant(home, root, make_hook) -> None:
    """`cline_variant = "vscode"`: the exact executable name only, `/bin/sh -c`."""
    make_hook(Path(root) / LEGACY, "pretooluse.sh")
    make_hook(Path(root) / LEGACY, "PreToolUse", mode=0o644)
    vscode = dialect_of(Settings.load(cline_variant="vscode"))
    assert vscode is CLINE_VSCODE and dialect_of(Settings.load()) is CLINE
    found = vscode.discover("PreToolUse", [root], str(home))
    assert found.hooks == () and len(found.skipped) == 2
    assert len(CLINE.discover("PreToolUse", [root], str(home)).hooks) == 2
    assert CARETI.variant == "vscode"


# -- an interpreter the image lacks: a named error, a block under fail-closed ------------


@pytest.mark.parametrize(("ext", "program"), [(".ts", "bun"), (".ps1", "pwsh"), (".mts", "bun")])
def test_a_missing_interpreter_is_an_error_and_blocks_fail_closed(
    home, root, make_hook, ext: str, program: str
) -> None:
    make_hook(Path(root) / SDK, f"PreToolUse{ext}", mode=0o644, body="x\n")
    for fail_closed in (False, True):
        backend = FakeBackend(lambda r: ExecResult(0, b"{}", b"", 1), tools=TOOLS)
        settings = Settings.load(fail_closed=fail_closed)
        result = HookFactory(settings, backend).run("PreToolUse", {}, [root])
        assert backend.requests == []  # never started
        [outcome] = result.outcomes
        assert outcome.status == "error"
        assert outcome.error == f"not run: `{program}` is not in image {IMAGE}"
        assert result.answer["cancel"] is fail_closed


def test_runnable_extensions_reach_the_backend(home, root, make_hook) -> None:
    for name in ("PreToolUse.bash", "PreToolUse.zsh", "PreToolUse.mjs", "PreToolUse.cjs"):
        make_hook(Path(root) / SDK, name, mode=0o644, body="x\n")
    backend = FakeBackend(lambda r: ExecResult(0, b"{}", b"", 1), tools=TOOLS)
    result = HookFactory(Settings.load(), backend).run("PreToolUse", {}, [root])
    assert [o.status for o in result.outcomes] == ["completed"] * 4
    assert sorted(r.argv[0] for r in backend.requests) == ["bash", "bash", "node", "node"]


# -- install shims every file Cline would run; uninstall gives back every byte ----------


def test_install_shims_every_name_and_uninstall_is_byte_exact(home, root, make_hook) -> None:
    names = ["pretooluse.bash", "PostToolUse.MJS", "posttooluse.cjs", "TaskStart.zsh",
             "taskcomplete.mts", "UserPromptSubmit.ps1", "TASKERROR", "README.md"]  # fmt: skip
    for name in names:
        make_hook(Path(root) / SDK, name, mode=0o640)
    make_hook(Path(root) / LEGACY, "Notification")  # the extension's only
    before = snapshot(Path(root))
    args = ["--agent", "cline", "--workspace", root, "--home", str(home)]
    assert cli.main(["install", *args]) == 0
    shims = sorted(os.listdir(Path(root) / SDK))
    # PostToolUse.MJS: no hook to either variant (a capital extension) but moved all the same.
    want = ["PostToolUse", "PreToolUse", "TaskComplete", "TaskError", "TaskStart",
            "UserPromptSubmit"]  # fmt: skip
    assert shims == want  # PostToolUse.MJS (capitals: no hook) moved all the same
    assert os.listdir(Path(root) / LEGACY) == ["Notification"]
    record = Record(str(home))
    for shim in shims:
        assert read_shim(str(Path(root) / SDK / shim), record) is not None
    found = CLINE.discover(None, [root], str(home))  # run reads the moved files in place
    moved = Path(root) / ".sandboxrun/moved/.cline/hooks"
    assert sorted(h.name for h in found.hooks) == sorted(
        str(moved / n) for n in names if n not in ("README.md", "PostToolUse.MJS")
    )
    assert cli.main(["uninstall", *args]) == 0
    assert snapshot(Path(root)) == before
