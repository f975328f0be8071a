"""`install` / `uninstall --agent gemini`: Gemini CLI's settings files rewritten in place.

Gemini's settings hooks are Claude-shaped (`hooks.<Event>[i].hooks[j]`, `"type":
"command"`), so the Claude family's rewrite, record, backups and byte-exact uninstall
(`claude.py`) do the work, through `GEMINI` (a `shape.Shape`). What differs, checked
against google-gemini/gemini-cli at 5411f113 (2026-08-21):

- Files: `--workspace DIR`: `DIR/.gemini/settings.json` (Gemini's project is the folder
  it runs in, not a parent; it reads no project file when that folder is the home);
  `--user`: `~/.gemini/settings.json`; `--managed`: the system settings and system
  defaults (`packages/cli/src/config/settings.ts`, `getSystemSettingsPath`,
  `getSystemDefaultsPath`: `/etc/gemini-cli/`, `/Library/Application Support/GeminiCli/`,
  `C:\\ProgramData\\gemini-cli\\`, or `GEMINI_CLI_SYSTEM_SETTINGS_PATH` /
  `GEMINI_CLI_SYSTEM_DEFAULTS_PATH`), or `--managed-file`.
- Text: JSON with `//` and `/* */` comments (`JSON.parse(stripJsonComments(content))`):
  read with the comments blanked offset for offset, rewritten with every comment kept.
- Handlers: `command` and `timeout` in milliseconds (`DEFAULT_HOOK_TIMEOUT` 60000 when
  absent); no `args`, no `shell` (always `bash -c`: `getShellConfiguration`), so a
  repository's `"shell": "powershell"` cannot make install leave a hook unwrapped. Keys
  of `hooks` that are not events (`HOOKS_CONFIG_FIELDS`: enabled, disabled,
  notifications) are left alone.
- The wrapper's text: Gemini replaces `$VAR` / `${VAR}` (any variable it has) in every
  settings string when it loads the file (`resolveEnvVarsInObject`), then
  `$GEMINI_PROJECT_DIR`, `$GEMINI_CWD`, `$GEMINI_PLANS_DIR`, `$GEMINI_SESSION_ID` and
  `$CLAUDE_PROJECT_DIR` with shell-quoted values (`HookRunner.expandCommand`), both
  textually, before bash reads the command. Inside the wrapper's single-quoted original a
  value holding a quote would end the quoting, and the rest would run on the host. So
  every `$` is written `$''` (the same word to bash, no variable to Gemini): the
  original reaches `sandboxrun exec` byte for byte; exec replaces the project variables
  as Gemini would (`_dialects.gemini.settings.expand`), and any other variable is the
  sandbox's (filtered) one, never a host value written into the command.
- Failures: Gemini reads any exit code but 0 and 1 that comes with text as a block
  (`convertPlainTextToHookOutput`), so a missing sandboxrun (bash's 127) would block
  every tool. Each wrapper starts with a guard: exit 1 (a warning) when sandboxrun is
  gone, or 2 (a block) with `--fail-closed` (`wrapped.missing_guard`).

Not rewritten: extensions' `hooks/hooks.json` (`~/.gemini/extensions/<x>/`): an
extension update replaces the folder, and Gemini hydrates `${extensionPath}` in them,
which a wrapper would have to leave to Gemini. `notes` (list, doctor) names their hooks.

No route keeps a repository's hooks sandboxed without rewriting its file: Gemini
concatenates every level's `hooks` (`MergeStrategy.CONCAT`), `hooksConfig.enabled:
false` turns off every hook (the system's too), `hooksConfig.disabled` names hooks one by
one, and an untrusted folder runs no settings hook at all, the system's included
(`HookRegistry.processHooksFromConfig`). A hook a pull adds to an installed file runs
on the host: Gemini warns once at session start about a project hook it has not seen
(`TrustedHooksManager`, keyed by name and command), and `notes` names it.
"""

from __future__ import annotations

import argparse
import functools
import os
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._dialects.base import Dialect
from .._dialects.claude.handler import Timeouts
from .._dialects.claude.wrapped import chosen_files, gone, ready_test
from .._dialects.gemini import settings as _settings
from .._errors import ConfigError
from .._wrapped import UNTRUSTED, check_in, is_check
from . import claude as _claude
from . import jsonspan
from .files import BackupStore
from .record import Record, names_sandboxrun
from .shape import Shape
from .targets import inside_project
from .unwrapped import read_bytes_quiet, unwrapped_note, wrapper_notes

if TYPE_CHECKING:
    from .registry import Request

AGENT = "gemini"
DEFAULT_TIMEOUT = 60.0  # seconds: `DEFAULT_HOOK_TIMEOUT` = 60000 ms
SETTINGS_VAR = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
DEFAULTS_VAR = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"


@dataclass(frozen=True, slots=True)
class GeminiShape(Shape):
    """Gemini's settings hooks (see the module)."""

    def event_table(self, data: dict[str, Any]) -> tuple[jsonspan.Path, Any]:
        prefix, table = Shape.event_table(self, data)
        if isinstance(table, dict):  # `hooks.disabled` & co. are settings, not events
            table = {k: v for k, v in table.items() if k not in _settings.CONFIG_FIELDS}
        return prefix, table

    def _view(self, where: jsonspan.Path, hook: Any) -> Iterator[tuple[jsonspan.Path, Any]]:
        for at, view in Shape._view(self, where, hook):
            view.pop("args", None)  # the agent reads neither: bash runs `command`
            view.pop("shell", None)
            if view["timeout"] is None:
                view["timeout"] = DEFAULT_TIMEOUT
            yield at, view

    def layout(self, text: str) -> str:
        return _settings.strip_comments(text)

    def written(self, command: str, launcher: Sequence[str], options: Sequence[str]) -> str:
        guard = "" if "--fail-closed" in options else warning_guard(launcher)
        return keep_dollars(guard + command)


GEMINI = GeminiShape(timeouts=Timeouts(unit=0.001), skip=lambda hook: False)


def warning_guard(launcher: Sequence[str]) -> str:
    """The prefix of a wrapper that fails open: sandboxrun gone (moved, uninstalled) is
    exit 1 with a `sandboxrun:` line, a warning to Gemini, never bash's 127 (a block)."""
    why = shlex.quote(f"sandboxrun: {gone(launcher)}; the hook did not run")
    return f"{ready_test(launcher)} || {{ echo {why} >&2; exit 1; }}; "


def keep_dollars(command: str) -> str:
    """`command` with each `$` written `$''`: the same words to bash, nothing Gemini's
    textual replacements match (module docstring). Every `$` of a wrapper is inside a
    single-quoted word (`shlex.quote` quotes any word holding one), where `$''` ends
    the quoting and opens it again at once."""
    kept = command.replace("$", "$''")
    if shlex.split(kept) != shlex.split(command):  # not expected: refuse, never guess
        raise ConfigError(f"cannot write a wrapper for Gemini around {command[:80]!r}")
    return kept


def system_files(environ: Mapping[str, str] | None = None) -> list[str]:
    """The system defaults and system settings files Gemini reads on this platform."""
    environ = os.environ if environ is None else environ
    folder = _settings.SYSTEM_DIR
    settings = environ.get(SETTINGS_VAR) or os.path.join(folder, "settings.json")
    defaults = environ.get(DEFAULTS_VAR) or os.path.join(
        os.path.dirname(settings), "system-defaults.json"
    )
    return [os.path.abspath(defaults), os.path.abspath(settings)]


def settings_paths(args: argparse.Namespace, home: str) -> tuple[list[str], bool]:
    """(the files `install` rewrites, whether they come with a repository)."""
    if args.global_:
        raise ConfigError("--global is for the Cline family; gemini has --user and --managed")
    if args.managed_file:
        return [os.path.abspath(args.managed_file)], False
    if args.managed:
        return system_files(), False
    if args.user:  # the user's own file: a dotfiles symlink is followed
        return [os.path.realpath(os.path.join(home, _settings.USER_DIR, "settings.json"))], False
    root = os.path.abspath(args.workspace or os.getcwd())
    if os.path.realpath(root) == os.path.realpath(home):
        raise ConfigError(
            f"{root} is the home folder: Gemini reads no project settings there; use --user"
        )
    return [inside_project(os.path.join(root, _settings.USER_DIR, "settings.json"), root)], True


def plan(
    args: argparse.Namespace, home: str, store: BackupStore, record: Record,
    launcher: Callable[[], list[str]], options: Sequence[str],
) -> list[_claude.Change]:  # fmt: skip
    """The changes `install` / `uninstall` make (`command._show_files` applies them). A
    project's commands come with the repository: their wrappers carry `--untrusted`."""
    paths, untrusted = settings_paths(args, home)
    if args.command == "uninstall":
        return _claude.plan_uninstall(paths, store, record, GEMINI)
    options = [UNTRUSTED, *options] if untrusted else list(options)
    return _claude.plan_install(paths, launcher(), AGENT, options, record, GEMINI)


def unguarded(command: str) -> str:
    """A wrapper's command without its guard (`warning_guard`, or the fail-closed
    `missing_guard`): what `chosen_files` reads."""
    if command.startswith("[ -x "):
        return command.partition("; }; ")[2] or command
    return command


# -- the agent's module (`registry.Installer`) ------------------------------------------


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall --agent gemini`: its settings files (`plan`); with a
    workspace's, the session-start check (`session.py`)."""
    args, home, store, record, undo = (
        request.args, request.home, request.store, request.record, request.undo
    )  # fmt: skip
    changes = plan(args, home, store, record, request.launcher, request.run_options(args, False))
    then = None
    if not (args.user or args.managed or args.managed_file):
        folder = os.path.abspath(args.workspace or os.getcwd())
        then = functools.partial(request.session, args, AGENT, home, folder, undo,
                                 bool(changes))  # fmt: skip
    return request.show(changes, args.dry_run, store, record, undo, then=then)


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """One line per hook Gemini runs unsandboxed in a file install rewrote (a pull or an
    edit brought it), per wrapper that cannot work, and, once anything is installed,
    per extension hook (never rewritten: see the module)."""
    store, record = BackupStore(home), Record(home)
    project = os.path.abspath(roots[0] if roots else os.getcwd())
    levels = [(p, "system") for p in system_files()]
    levels.append((os.path.join(home, _settings.USER_DIR, "settings.json"), "user"))
    if os.path.realpath(project) != os.path.realpath(home):  # Gemini reads none there
        levels.append((os.path.join(project, _settings.USER_DIR, "settings.json"),
                       "project"))  # fmt: skip
    out: list[str] = []
    installed = False
    for path, scope in levels:
        raw = read_bytes_quiet(path)
        try:
            data = _claude.parse(path, raw, GEMINI)[1] if raw is not None else {}
            here = store.get(path) is not None or bool(record.entries(path))
        except ConfigError:
            continue  # `list` names the unparsable file already
        installed = installed or here
        again = {"system": "--managed", "user": "--user"}.get(scope, f"--workspace {project}")
        original = _settings.installed(home, path, scope)
        check = check_in(home, path) if scope == "user" else None  # `session.py`
        for where, hook in GEMINI.handlers(data):
            if is_check(check, hook):
                continue
            if not (here or names_sandboxrun(hook)):
                continue  # never installed: only a look-alike wrapper is worth a word
            at = "".join(f"[{w}]" if isinstance(w, int) else f".{w}" for w in where)[1:]
            spot = f"{path} {at}"
            if original(hook["command"]) is not None:
                chosen = chosen_files(unguarded(hook["command"]), None)
                out += wrapper_notes(spot, hook, project, "gemini", again, chosen)
            else:
                out.append(unwrapped_note(spot, hook, "gemini", again))
    for spec in dialect.discover(None, [project], home).hooks if installed else ():
        if spec.source == "extension":
            out.append(
                f"not wrapped: {spec.hook_name} (extension) {spec.name[:120]!r} runs"
                " unsandboxed: install does not rewrite extensions' hooks/hooks.json (an"
                " extension update replaces it); disable the extension to stop it"
            )
    return out
