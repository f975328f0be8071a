"""`install` / `uninstall --agent claude|qoder|qoder-cn`, and what `list` and `doctor`
say of them: the agents' module (`registry.Installer`), over the Claude family's
machinery (`claude.py`: settings files rewritten in place). `--managed` writes Claude
Code's managed settings instead (`managed.py`). `in_place` is the same machinery for
the agents whose files are Claude-shaped under another `Shape` (Cursor, Windsurf, Kiro).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._dialects.base import Dialect
from .._dialects.claude.dialect import ClaudeDialect
from .._dialects.claude.settings import config_levels, project_root
from .._errors import ConfigError
from .._wrapped import UNTRUSTED
from . import claude as _claude
from . import managed as _managed_file
from .shape import Shape
from .targets import others, shape_of
from .unwrapped import file_notes, read_bytes_quiet

if TYPE_CHECKING:
    from .registry import Request


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall --agent claude|qoder|qoder-cn`: every command hook of the
    chosen settings files through `sandboxrun exec` (with a workspace's, the session-start
    check: `session.py`); `--managed` writes Claude Code's managed settings."""
    assert isinstance(dialect, ClaudeDialect)
    args, home, store, record, undo = (
        request.args, request.home, request.store, request.record, request.undo
    )  # fmt: skip
    if args.global_:
        raise ConfigError("--global is for the Cline family; the Claude family has --managed")
    if args.managed or args.managed_file:
        return _managed(request, dialect)
    workspace = None if args.user else os.path.abspath(args.workspace or os.getcwd())
    paths = _claude.settings_paths(dialect, workspace, home)
    if undo:
        changes = _claude.plan_uninstall(paths, store, record)
    else:
        # A project's commands come with the repository: their env lines, approvals
        # and input rewrites must never reach the agent.
        options = [UNTRUSTED] if workspace else []
        options += request.run_options(args, home=False)
        changes = _claude.plan_install(paths, request.launcher(), dialect.agent, options, record)
    then = None
    if workspace is not None:
        then = functools.partial(request.session, args, dialect.agent, home, workspace, undo,
                                 bool(changes))  # fmt: skip
    return request.show(changes, args.dry_run, store, record, undo, then=then)


def _managed(request: Request, dialect: ClaudeDialect) -> int:
    """`--managed`: the forwarding hooks in Claude Code's managed settings (`managed.py`)."""
    args, store, record = request.args, request.store, request.record
    if dialect.agent != "claude":
        raise ConfigError(f"--managed: {dialect.agent} documents no managed settings file")
    path = os.path.abspath(args.managed_file) if args.managed_file else _managed_file.managed_file()
    if request.undo:
        change = _managed_file.plan_unmanage(path, store)
        changes = [change] if change else []
        return request.show(changes, args.dry_run, store, record, True, managed=True)
    options = request.run_options(args)
    change = _managed_file.plan_managed(path, request.shared_launcher(), dialect.hook_names,
                                        options)  # fmt: skip
    return request.show([change], args.dry_run, store, record, False, managed=True)


def in_place(
    request: Request, agent: str, files: Sequence[tuple[str, Shape]], untrusted: bool
) -> int:
    """Install or uninstall `files` ((path, its shape), in this order), each rewritten in
    place with this module's machinery (Cursor's, Windsurf's, Kiro's files); `untrusted`:
    their commands come with a repository."""
    args, store, record = request.args, request.store, request.record
    options = ([UNTRUSTED] if untrusted else []) + request.run_options(args, home=False)
    changes = []
    launch = [] if request.undo else request.launcher()
    for path, shape in files:
        if request.undo:
            changes += _claude.plan_uninstall([path], store, record, shape)
        else:
            changes += _claude.plan_install([path], launch, agent, options, record, shape)
    return request.show(changes, args.dry_run, store, record, request.undo)


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """The notes of every file the agent reads (`config_levels`: its own table, each
    file's `Shape`), by install's record (`unwrapped.file_notes`)."""
    assert isinstance(dialect, ClaudeDialect)
    if dialect.agent == "claude" and _managed_forwarding():
        return []  # the agent runs none of these itself: the forwarding hooks run them
    project = project_root(roots[0] if roots else os.getcwd(), home, dialect.project_dir)
    claudes = others(dialect, project, home)  # Devin's reading of Claude Code's files
    scoped = [
        (path, source if source in ("user", "managed") else "project",
         shape_of(dialect, table), "claude" if path in claudes else dialect.agent)
        for path, source, _, table in config_levels(dialect, project, home)
    ]  # fmt: skip
    return file_notes(dialect.agent, scoped, project, home)


def _managed_forwarding() -> bool:
    """Whether Claude Code's managed settings hold our forwarding hooks, alone allowed."""
    try:
        raw = read_bytes_quiet(_managed_file.managed_file())
        data = _claude.parse("managed", raw)[1] if raw else {}
    except ConfigError:
        return False
    hooks = data.get("hooks")
    return data.get("allowManagedHooksOnly") is True and isinstance(hooks, dict) and any(
        isinstance(e, dict) and isinstance(e.get("hooks"), list)
        and any(_managed_file.is_forwarder(h) for h in e["hooks"])
        for entries in hooks.values() if isinstance(entries, list) for e in entries
    )  # fmt: skip
