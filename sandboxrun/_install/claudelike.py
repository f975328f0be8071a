"""`install` / `uninstall` for the Claude-shaped agents beyond Claude's clones (Factory
Droid, Qwen Code, CodeBuddy, iFlow, Devin, Augment, Trae): the Claude family's rewrite in
place, record, backups and byte-exact undo (`claude.py`), on the files each agent reads
(`targets`), each with its own `Shape` (Devin's hooks.v1.json is the event table
itself; Qwen's and Augment's timeouts count milliseconds).

`--managed` (Qwen Code's `/etc/qwen-code/`, Augment's `/etc/augment/settings.json`)
wraps the managed file's own hooks in place, as the user's: none of these agents has a
switch that makes it ignore the other levels' hooks, so forwarding hooks there (Claude
Code's `managed.py`) would run a repository's hooks twice, once unsandboxed. Qwen Code
(QwenLM/qwen-code packages/core/src/hooks/hookRegistry.ts@43f1fbb) always loads the
user's hooks and loads the project's in a trusted folder; `disableAllHooks` turns off
every hook, the managed ones included. Augment's docs give the system file the highest
precedence and no such switch. The agents without a managed file refuse in one line.

Devin and Trae also read Claude Code's settings (`.claude/settings*.json`,
`~/.claude/settings.json`); those belong to `install --agent claude` (`targets.CLAUDES`),
whose wrapper Devin runs as Claude Code does: its exit 1 does not block, exit 2 blocks
(docs.devin.ai/cli/extensibility/hooks: "other non-zero codes are logged"; for Trae,
Claude-shaped, the same is unconfirmed).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._dialects.base import Dialect
from .._dialects.claude.dialect import ClaudeDialect
from .._errors import ConfigError
from .._wrapped import UNTRUSTED
from .claude import Change, plan_install, plan_uninstall
from .claudecode import notes as _claude_notes
from .files import BackupStore
from .record import Record
from .targets import managed_targets, targets

if TYPE_CHECKING:
    from .registry import Request


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall` for one of these agents: `plan` of the scope asked for."""
    assert isinstance(dialect, ClaudeDialect)
    args = request.args
    if args.global_:
        raise ConfigError("--global is for the Cline family; the Claude family has --managed")
    managed = bool(args.managed or args.managed_file)
    scope = "managed" if managed else "user" if args.user else "workspace"
    workspace = os.path.abspath(args.workspace or os.getcwd()) if scope == "workspace" else None
    launch = [] if request.undo else request.launcher()
    changes = plan(dialect, scope, workspace, args.managed_file, request.home, launch,
                   request.run_options(args, home=False), request.undo)  # fmt: skip
    return request.show(changes, args.dry_run, request.store, request.record, request.undo)


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """As Claude Code's (`claude.notes`): each file the agent reads, its own `Shape`."""
    return _claude_notes(dialect, roots, home)


def plan(
    dialect: ClaudeDialect, scope: str, workspace: str | None, managed_file: str | None,
    home: str, launcher: Sequence[str], options: Sequence[str], undo: bool,
) -> list[Change]:  # fmt: skip
    """Every file's change for `scope` ("workspace", "user", "managed"), all parsed
    before anything is written. A project's or local file's wrappers carry
    `--untrusted`: its commands come with the repository."""
    if scope == "managed":
        found = managed_targets(dialect, managed_file, home)
    else:
        found = targets(dialect, scope, workspace, home)
    store, record = BackupStore(home), Record(home)
    changes: list[Change] = []
    for target in found:
        if undo:
            changes += plan_uninstall([target.path], store, record, target.shape)
            continue
        untrusted = [UNTRUSTED] if target.source in ("project", "local") else []
        changes += plan_install([target.path], launcher, dialect.agent, [*untrusted, *options],
                                record, target.shape)  # fmt: skip
    return changes
