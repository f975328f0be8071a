"""`install` / `uninstall --agent goose`: each plugin's `hooks/hooks.json` rewritten in place.

Goose's hooks.json is Claude-shaped (`hooks.<Event>[i].hooks[j]`), so the Claude
family's rewrite, record, backups and byte-exact `uninstall` (`claude.py`) do the work
through `SHAPE`. What differs (block/goose `crates/goose/src/hooks/mod.rs@0825b570`,
`_dialects/goose`):

- Files: `--workspace DIR`: every `DIR/.agents/plugins/<p>/hooks/hooks.json` (their
  commands come with the repository: `exec --untrusted`; a symlink out of the project
  is refused); `--user`: every `~/.agents/plugins/<p>/hooks/hooks.json`. Goose's project
  is the folder the session runs in, not a parent. No `--managed`: Goose has no admin
  level over a repository's hooks.
- Handlers: `type` may be left out (it defaults to "command"); another type is left
  alone. `timeout` whole seconds, 30 when absent (`DEFAULT_HOOK_TIMEOUT_SECS`): the
  wrapper's own deadline is below it. `on_failure` stays as the user wrote it: exec's
  own failures are "no decision" (exit 1, nothing on stdout), which Goose itself turns
  into a deny where the entry says `on_failure: "block"`; a missing sandboxrun (sh's
  127) reads the same way.
- The wrapper's text: Goose replaces `${PLUGIN_ROOT}` textually in the whole command
  before `sh -c` (`expand_plugin_root`). Inside the wrapper's single-quoted original a
  plugin root holding a quote (a repository names its plugin folders) would end the
  quoting and run the rest on the host. So every `$` is written `$''` (the same word to
  sh, nothing Goose replaces: `gemini.keep_dollars`); `exec --agent goose` replaces
  `${PLUGIN_ROOT}` inside, from the `PLUGIN_ROOT` Goose sets, when it names a plugin
  folder (`GooseDialect.plugin_root`).

No route survives a `git pull` or a plugin update: Goose runs every enabled plugin's
hooks, with no trust prompt and no switch over a repository's (`disabledPlugins` only
names plugins one by one, and a repository's own settings can enable them again), and
`goose plugin update` replaces a user plugin's folder. A hook added so runs on the host
until `install` runs again; `list` and `doctor` name it (`status.py`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._dialects.base import Dialect
from .._dialects.goose import GOOSE
from .._errors import ConfigError
from .._wrapped import UNTRUSTED
from . import claude as _claude
from . import jsonspan
from .files import BackupStore
from .gemini import keep_dollars
from .record import Record
from .shape import Shape
from .targets import inside_project
from .unwrapped import file_notes

if TYPE_CHECKING:
    from .registry import Request


@dataclass(frozen=True, slots=True)
class GooseShape(Shape):
    """Goose's hooks.json (see the module)."""

    def _view(self, where: jsonspan.Path, hook: Any) -> Iterator[tuple[jsonspan.Path, Any]]:
        for at, view in Shape._view(self, where, hook):
            view.pop("args", None)  # Goose reads neither: `sh -c` runs `command`
            view.pop("shell", None)
            if hook.get("timeout") is None:
                view["timeout"] = GOOSE.default_timeout
            yield at, view

    def written(self, command: str, launcher: Sequence[str], options: Sequence[str]) -> str:
        return keep_dollars(command)


SHAPE = GooseShape(typed=False, skip=lambda hook: (hook.get("type") or "command") != "command")


def hooks_files(args: argparse.Namespace, home: str) -> tuple[list[str], bool]:
    """(the hooks.json files to rewrite, whether their commands come with a repository)."""
    if args.global_ or args.managed or args.managed_file:
        raise ConfigError("goose has --workspace and --user only (no managed level)")
    if args.user:  # the user's own files: a dotfiles symlink is followed
        return [os.path.realpath(p) for p in plugin_files(home)], False
    root = os.path.abspath(args.workspace or os.getcwd())
    if os.path.realpath(root) == os.path.realpath(home):
        raise ConfigError(f"{root} is the home folder: its plugins are the user's; use --user")
    return [inside_project(p, root) for p in plugin_files(root)], True


def plugin_files(base: str) -> list[str]:
    """Every `<base>/.agents/plugins/<p>/hooks/hooks.json` there is."""
    folder = os.path.join(base, GOOSE.plugins_dir)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    paths = [os.path.join(folder, n, "hooks", "hooks.json") for n in names]
    return [p for p in paths if os.path.isfile(p)]


def plan(
    args: argparse.Namespace, home: str, store: BackupStore, record: Record,
    launcher: Callable[[], list[str]], options: Sequence[str],
) -> list[_claude.Change]:  # fmt: skip
    """The changes `install` / `uninstall` make (`command._show_files` applies them)."""
    paths, untrusted = hooks_files(args, home)
    if not paths:
        where = "~/.agents/plugins" if args.user else ".agents/plugins of the project"
        raise ConfigError(f"no plugin with hooks/hooks.json in {where}: nothing to do")
    if args.command == "uninstall":
        return _claude.plan_uninstall(paths, store, record, SHAPE)
    options = [UNTRUSTED, *options] if untrusted else list(options)
    return _claude.plan_install(paths, launcher(), GOOSE.agent, options, record, SHAPE)


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall --agent goose`: each plugin's hooks.json (`plan`)."""
    args, store, record = request.args, request.store, request.record
    changes = plan(args, request.home, store, record, request.launcher,
                   request.run_options(args, False))  # fmt: skip
    return request.show(changes, args.dry_run, store, record, request.undo)


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """Each plugin's hooks.json, as `install --agent goose` rewrites them (a plugin a
    pull or an update brings: its hooks are named once its scope was installed)."""
    project = os.path.abspath(roots[0] if roots else os.getcwd())
    scoped = [(p, "user", SHAPE, "goose") for p in plugin_files(home)]
    if os.path.realpath(project) != os.path.realpath(home):
        scoped += [(p, "project", SHAPE, "goose") for p in plugin_files(project)]
    return file_notes("goose", scoped, project, home)
