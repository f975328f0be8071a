"""Where Windsurf's hooks are configured: the `hooks.json` of each level, read and
checked, every malformed entry a `Skipped` naming the file and the JSON path (the
levels, the working directory and the mounts: `dialect.py`'s docstring)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from ..._types import Discovery, HookSpec, Skipped
from ..base import source_of, unique_mounts
from ..claude.handler import Installed, brief, unicode_ok
from ..claude.settings import recorded
from ..cursor.config import _entries  # the same walk of `hooks: {event: [entry...]}`
from ..files import read_each, unreadable  # the checked read of each config file


class WindsurfLike(Protocol):
    """What reading the files needs of the dialect (`dialect.WindsurfDialect`)."""

    @property
    def user_dir(self) -> str: ...
    @property
    def jetbrains_dir(self) -> str: ...
    @property
    def project_dir(self) -> str: ...
    @property
    def system_dir(self) -> str: ...
    @property
    def hook_names(self) -> tuple[str, ...]: ...


def config_files(
    dialect: WindsurfLike, workspaces: Sequence[str], home: str, explicit: Sequence[str] = ()
) -> list[tuple[str, str, str | None]]:
    """(hooks.json, source, hooks folder to mount) in the order Windsurf runs them:
    system, user (the editor's, then the JetBrains plugin's), workspace. Explicit files
    replace every level."""
    if explicit:
        out: list[tuple[str, str, str | None]] = []
        for given in map(os.path.normpath, explicit):
            path = os.path.join(given, "hooks.json") if os.path.isdir(given) else given
            out.append((path, source_of(path, workspaces, "explicit"), os.path.dirname(path)))
        return out
    user = os.path.join(home, dialect.user_dir)
    jetbrains = os.path.join(home, dialect.jetbrains_dir)
    return [
        (os.path.join(dialect.system_dir, "hooks.json"), "system",
         os.path.join(dialect.system_dir, "hooks")),
        (os.path.join(user, "hooks.json"), "user", os.path.join(user, "hooks")),
        (os.path.join(jetbrains, "hooks.json"), "user", os.path.join(jetbrains, "hooks")),
        (os.path.join(workspaces[0], dialect.project_dir, "hooks.json"), "workspace", None),
    ]  # fmt: skip


def discover(
    dialect: WindsurfLike,
    hook_name: str | None,
    workspaces: Sequence[str],
    home: str,
    explicit: Sequence[str] = (),
) -> Discovery:
    roots = list(workspaces) or [home]
    hooks: list[HookSpec] = []
    skipped: list[Skipped] = []
    listed = config_files(dialect, roots, home, explicit)  # the home may be the workspace
    for (path, source, folder), shown, data in read_each(listed, skipped):
        extra = [folder] if folder and os.path.isdir(folder) else []
        template = HookSpec(
            hook_name="", name="", source=source, argv=(), workdir=roots[0],
            mounts=unique_mounts([*roots, *extra]),
        )  # fmt: skip
        installed = recorded(home, path, "project" if source == "workspace" else "user")
        found = _entries(dialect.hook_names, data, hook_name, template, installed, _entry,
                         "Windsurf")  # fmt: skip
        for item in found:
            if isinstance(item, str):
                skipped.append(unreadable(shown, source, item))
            else:
                hooks.append(item)
    return Discovery(tuple(hooks), tuple(skipped))


def _entry(
    entry: Any, event: str, template: HookSpec, installed: Installed | None = None
) -> HookSpec | str:
    """One `{command, show_output?, working_directory?}` entry. A wrapper `install`
    recorded (`installed`) runs what it wraps: there is no sandboxrun in the sandbox;
    anything else, however shaped like a wrapper, runs as written."""
    if not isinstance(entry, dict):
        return "must be an object with a command"
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        return "has no command string"
    if not unicode_ok(command) or "\0" in command:
        return "command is not valid Unicode text (a lone surrogate or a NUL)"
    original = installed(entry) if installed is not None else None
    if original is not None and original[1] is None:
        command = original[0]
    spec = replace(template, hook_name=event, name=command, argv=("/bin/sh", "-c", command))
    show = entry.get("show_output")
    if show is not None and not isinstance(show, bool):
        return f"show_output must be true or false, not {brief(show)}"
    folder = entry.get("working_directory")
    if folder is None:
        return spec
    if not isinstance(folder, str) or not folder.strip() or "\0" in folder:
        return "working_directory must be a non-empty path"
    if not unicode_ok(folder):
        return "working_directory must be a non-empty path"
    # Relative to the workspace root; `~` is not expanded (Windsurf's docs): `~/x` is a
    # folder named `~` in the workspace. It must be a folder the sandbox mounts.
    path = os.path.normpath(os.path.join(template.workdir, folder))
    if not any(path == m or path.startswith(m.rstrip("/") + "/") for m in template.mounts):
        return f"working_directory {brief(folder)} is outside what the sandbox mounts: not run"
    return replace(spec, workdir=path)
