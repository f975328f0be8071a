"""Which config files `install` rewrites for a Claude-shaped agent, and how each holds
its handlers: derived from the files the agent reads (`settings.config_levels`: the
dialect's `config_files`, or Claude's user, project and local settings), never listed
twice.

A scope is the `ConfigFile.source`s `install` was asked for: `--workspace` the project's
and local files of the project the folder belongs to, `--user` the user's files,
`--managed` the system's. A fallback file (`ConfigFile.unless`: Factory's settings.json
behind its hooks.json) is rewritten exactly when the agent reads it. A project file
that a repository's symlink points elsewhere (the user's own settings, say) is refused;
the user's own file is followed through a dotfiles symlink.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .._dialects.claude.dialect import ClaudeDialect
from .._dialects.claude.settings import config_levels, project_root
from .._errors import ConfigError
from .shape import Shape

SCOPES = {"workspace": ("project", "local"), "user": ("user",), "managed": ("managed",)}
# Files of the agent's own table that belong to another agent's `install` (Devin reads
# Claude Code's settings: `install --agent claude` rewrites them, with its own record).
CLAUDES = (".claude/", "~/.claude/")


@dataclass(frozen=True, slots=True)
class Target:
    """One file `install` rewrites: its real path, its source and its `Shape`."""

    path: str
    source: str
    shape: Shape


def shape_of(dialect: ClaudeDialect, table: str) -> Shape:
    """The `Shape` of one of the dialect's files: its table ("hooks", "events",
    "either") and the dialect's timeout rule (Qwen's legacy milliseconds, Augment's ms)."""
    return Shape(table=table, timeouts=dialect.timeouts)


def targets(dialect: ClaudeDialect, scope: str, workspace: str | None, home: str) -> list[Target]:
    """The files of `scope` (`SCOPES`) the agent reads, for the project `workspace`
    belongs to (None for the user's and the managed scopes)."""
    project = project_root(workspace, home, dialect.project_dir) if workspace else home
    theirs = others(dialect, project, home)
    out: list[Target] = []
    for path, source, _, table in config_levels(dialect, project, home):
        if source not in SCOPES[scope] or path in theirs:
            continue
        local = source in ("project", "local")
        real = inside_project(path, project) if local else os.path.realpath(path)
        if real not in (t.path for t in out):
            out.append(Target(real, source, shape_of(dialect, table)))
    return out


def others(dialect: ClaudeDialect, project: str, home: str) -> frozenset[str]:
    """The files the agent reads that another agent's `install` rewrites (`CLAUDES`),
    as `config_levels` names them."""
    return frozenset(
        os.path.join(home, f.path[2:]) if f.path.startswith("~/") else os.path.join(project, f.path)
        for f in dialect.config_files if f.path.startswith(CLAUDES)
    )  # fmt: skip


def inside_project(path: str, root: str) -> str:
    """The file a project's config path is, if it lies in the project: a repository's
    symlink must not make `install` rewrite a file elsewhere (the user's own settings)."""
    real = os.path.realpath(path)
    if not Path(real).is_relative_to(os.path.realpath(root)):
        raise ConfigError(f"{path} is a link to {real}, outside the project; not changed")
    return real


def managed_targets(dialect: ClaudeDialect, given: str | None, home: str) -> list[Target]:
    """The managed files `install --managed` wraps in place: `--managed-file`, else the
    dialect's own managed levels; one line when the agent has none."""
    found = targets(dialect, "managed", None, home)
    if not found:
        raise ConfigError(f"--managed: {dialect.agent} documents no managed settings file")
    if given is None:
        return found
    return [Target(os.path.abspath(given), "managed", found[-1].shape)]
