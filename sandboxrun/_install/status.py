"""What `list` and `doctor` say about an installed workspace: a hook that runs
unsandboxed although sandboxrun was installed for it (a pull brought it), a moved hook
without a shim, a wrapper or shim that cannot work or that the workspace chose."""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Sequence
from itertools import product
from pathlib import Path
from typing import Any

from .._dialects.base import WORKSPACE_SOURCES
from .._dialects.claude.dialect import ClaudeDialect
from .._dialects.claude.settings import config_levels, project_root
from .._dialects.claude.wrapped import chosen_files
from .._dialects.cline import ClineDialect
from .._dialects.cursor import CursorDialect
from .._dialects.cursor.config import config_files
from .._dialects.gemini import settings as _gemini_settings
from .._dialects.installed import MOVED, moved_folder, read_shim
from .._dialects.registry import DIALECTS
from .._dialects.windsurf import WindsurfDialect
from .._errors import ConfigError
from .._wrapped import check_in, is_check
from . import claude as _claude
from . import command as _command
from . import crush as _crush
from . import gemini as _gemini
from . import legacy
from . import managed as _managed
from . import windsurf as _windsurf
from .cline import forwarders_installed, listdir
from .command import NOT_YET
from .cursor import SHAPE as CURSOR_SHAPE
from .files import BackupStore, read_bytes
from .launcher import started
from .record import Record, names_sandboxrun
from .shape import Shape
from .targets import others, shape_of


def notes(agent: str, roots: Sequence[str], home: str) -> list[str]:
    """One sentence per hook that runs unsandboxed although sandboxrun was installed
    for it (e.g. a pull brought it), and per installed hook that cannot work. For an
    agent install does not support yet, one per hook the agent runs unwrapped."""
    dialect = DIALECTS[agent]
    if agent == "codex":  # its own files and gate
        return _codex_notes(roots, home)
    if agent == "copilot":
        return _copilot_notes(roots, home)
    if agent == "crush":  # its crush.json files and the scripts install wrote (`crush.py`)
        return _crush.notes(roots, home, unwrapped_note)
    if agent in NOT_YET:
        return _unwrapped_notes(agent, roots, home)
    if agent == "gemini":
        return _gemini_notes(roots, home)
    if agent == "goose":
        return _goose_notes(roots, home)
    if agent == "kiro":  # every agent file (`kiro.notes`)
        return _kiro_notes(roots, home)
    if isinstance(dialect, ClaudeDialect):
        return _claude_notes(dialect, roots, home)
    if isinstance(dialect, CursorDialect):
        return _cursor_notes(dialect, roots, home)
    if isinstance(dialect, WindsurfDialect):  # its hooks.json files, as for Cursor
        return _file_notes(agent, *_windsurf.note_files(dialect, roots, home), home)
    assert isinstance(dialect, ClineDialect)
    return _cline_notes(dialect, roots, home)


def _kiro_notes(roots: Sequence[str], home: str) -> list[str]:
    """Kiro's agent files, as `install --agent kiro` rewrites them (`kiro.note_files`)."""
    from . import kiro

    project, files = kiro.note_files(roots, home)
    scoped = [(path, scope, shape, "kiro") for path, scope, shape in files]
    return _file_notes("kiro", scoped, project, home)


def hand_wrapper(agent: str, command: str, untrusted: bool) -> str:
    """The one form a hand-wrapped hook command counts as sandboxed in, for an agent
    `install` does not support yet: this sandboxrun started isolated, by absolute paths
    (`command.launcher`'s `PYTHON -I SCRIPT`: a PATH or PYTHONPATH an agent's
    environment sets chooses nothing), `--untrusted` for a repository's hook, and the
    original as ONE single-quoted argument, so the agent's shell runs nothing of it."""
    return _hand_wrapper(_command.hook_script(), agent, command, untrusted)


def _hand_wrapper(script: str, agent: str, command: str, untrusted: bool) -> str:
    head = [_command._python_of(script), "-I", script, "exec", "--agent", agent]
    return shlex.join([*head, *(["--untrusted"] if untrusted else []), "--", command])


def _hand_wrapped(name: str, agent: str, workspace: bool) -> bool:
    """Whether `name` is exactly `hand_wrapper`'s form (`--fail-closed` may follow the
    agent; a user's own hook may leave `--untrusted` out); anything else, a look-alike
    with `$(...)`, a redirection or another sandboxrun included, is not."""
    try:
        words = shlex.split(name)
    except ValueError:
        return False
    if shlex.join(words) != name:  # only that quoting: the shell expands nothing of it
        return False
    scripts = {_command.hook_script(), _command.executable()}  # and what `list` printed before
    for script, untrusted in product(scripts, (True, False) if not workspace else (True,)):
        form = shlex.split(_hand_wrapper(script, agent, "x", untrusted))[:-1]
        for options in ([], ["--fail-closed"]):
            head = form[:-1] + options + form[-1:]  # options before the `--`
            if len(words) == len(head) + 1 and words[: len(head)] == head:
                return True
    return False


def _unwrapped_notes(agent: str, roots: Sequence[str], home: str) -> list[str]:
    """Each hook the agent runs itself, on the host: every one whose command is not
    exactly a hand wrapper (`hand_wrapper`), with the line to write instead."""
    found = DIALECTS[agent].discover(None, list(roots) or [os.getcwd()], home).hooks
    return [
        f"{agent} runs this hook unsandboxed (install does not support {agent} yet): "
        f"{h.hook_name} ({h.source}) {h.name}; sandboxed it is: "
        + hand_wrapper(agent, h.name, h.source in WORKSPACE_SOURCES)
        for h in found
        if not _hand_wrapped(h.name, agent, h.source in WORKSPACE_SOURCES)
    ]


# An old-shaped wrapper or shim: most likely an earlier sandboxrun's, which kept no
# record, but a repository can write the same shape, so it is not trusted.
EARLIER = (
    "written by an earlier sandboxrun? it is in no record of install's, so it is not"
    " trusted and may run on the host as written"
)


def _claude_notes(dialect: ClaudeDialect, roots: Sequence[str], home: str) -> list[str]:
    """The notes of every file the agent reads (`config_levels`: its own table, each
    file's `Shape`), by install's record."""
    if dialect.agent == "claude" and _managed_forwarding():
        return []  # the agent runs none of these itself: the forwarding hooks run them
    project = project_root(roots[0] if roots else os.getcwd(), home, dialect.project_dir)
    claudes = others(dialect, project, home)  # Devin's reading of Claude Code's files
    scoped = [
        (path, source if source in ("user", "managed") else "project",
         shape_of(dialect, table), "claude" if path in claudes else dialect.agent)
        for path, source, _, table in config_levels(dialect, project, home)
    ]  # fmt: skip
    return _file_notes(dialect.agent, scoped, project, home)


def _cursor_notes(dialect: CursorDialect, roots: Sequence[str], home: str) -> list[str]:
    """Cursor's hooks.json files, as `install --agent cursor` rewrites them."""
    project = project_root(roots[0] if roots else os.getcwd(), home, dialect.project_dir)
    scoped = [
        (path, "managed" if source == "enterprise" else source, CURSOR_SHAPE, dialect.agent)
        for path, source, _, _ in config_files(dialect, [project], home)
    ]
    return _file_notes(dialect.agent, scoped, project, home)


def _goose_notes(roots: Sequence[str], home: str) -> list[str]:
    """Each plugin's hooks.json, as `install --agent goose` rewrites them (a plugin a
    pull or an update brings: its hooks are named once its scope was installed)."""
    from . import goose as _goose

    project = os.path.abspath(roots[0] if roots else os.getcwd())
    scoped = [(p, "user", _goose.SHAPE, "goose") for p in _goose.plugin_files(home)]
    if os.path.realpath(project) != os.path.realpath(home):
        scoped += [(p, "project", _goose.SHAPE, "goose") for p in _goose.plugin_files(project)]
    return _file_notes("goose", scoped, project, home)


def _copilot_notes(roots: Sequence[str], home: str) -> list[str]:
    """Copilot's hook files and settings, and the Claude Code files it also runs (those
    installed with --agent claude), plus each `exec` entry install cannot wrap."""
    from . import copilot as _copilot

    project, files = _copilot.note_files(roots, home)
    scoped = [
        (path, "project" if not trusted else "managed" if "--managed" in again else "user",
         shape, "claude" if "--agent claude" in again else "copilot")
        for path, trusted, shape, again in files
    ]  # fmt: skip
    return _file_notes("copilot", scoped, project, home) + _copilot.unwrappable(files, home)


def _file_notes(
    agent: str, scoped: Sequence[tuple[str, str, Shape, str]], project: str, home: str
) -> list[str]:
    """The notes for config files whose handlers `install` wraps in place: `scoped`,
    (path, scope "user" | "managed" | "project", its shape, the agent whose install
    writes it: Devin reads Claude Code's files, installed with --agent claude)."""
    store, record = BackupStore(home), Record(home)
    files = []  # (path, scope, command handlers, the recorded wrappers' originals, ...)
    for path, scope, shape, owner in scoped:
        raw = read_bytes_quiet(path)
        try:
            data = _claude.parse(path, raw, shape)[1] if raw is not None else {}
            entries = record.entries(path)
        except ConfigError:
            continue  # `list` names the unparsable file already
        # Trusted only as install wrote it: a project's wrapper carries --untrusted.
        untrusted = scope == "project"
        ours = functools.partial(record.original, path, untrusted=untrusted, entries=entries)
        check = check_in(home, path) if scope == "user" else None  # `session.py`
        handlers = [w for w in _claude.command_handlers(data, shape) if not is_check(check, w[1])]
        files.append((path, scope, handlers, ours, bool(entries), owner))
    # A scope was installed if one of its files was: a pull may bring a new local file.
    installed = {
        scope for path, scope, _, _, recorded, _ in files
        if store.get(path) is not None or recorded
    }  # fmt: skip
    out = []
    for path, scope, handlers, ours, _, owner in files:
        again = {"user": "--user", "managed": "--managed"}.get(scope, f"--workspace {project}")
        for where, hook in handlers:
            at = "".join(f"[{w}]" if isinstance(w, int) else f".{w}" for w in where)[1:]
            alike = names_sandboxrun(hook)
            if scope not in installed and not alike:
                continue  # never installed: only a look-alike wrapper is worth a word
            if ours(hook):
                out += wrapper_notes(f"{path} {at}", hook, project, owner, again)
            elif hook.get("shell") != "powershell":
                whose = (
                    f"; {agent} reads Claude Code's settings: they are installed with"
                    " --agent claude" if owner != agent else ""
                )  # fmt: skip
                out.append(unwrapped_note(f"{path} {at}", hook, owner, again, whose))
    return out


def unwrapped_note(
    where: str, hook: dict[str, Any], agent: str, again: str, whose: str = ""
) -> str:
    """A handler of an installed file that is no wrapper install recorded: it runs on
    the host (a pull or an edit brought it, or it only looks like a wrapper)."""
    why = (
        EARLIER if legacy.old_wrapper(hook) else
        "install did not write it: a command shaped like a wrapper runs on the host as"
        " written" if names_sandboxrun(hook) else "new since install?"
    )  # fmt: skip
    return (
        f"not wrapped: {where}: {hook['command'][:120]!r} runs unsandboxed ({why}{whose}): run"
        f" `sandboxrun install --agent {agent} {again}` again"
    )


def _gemini_notes(roots: Sequence[str], home: str) -> list[str]:
    """One line per hook Gemini runs unsandboxed in a file install rewrote (a pull or an
    edit brought it), per wrapper that cannot work, and, once anything is installed,
    per extension hook (never rewritten: `gemini`)."""
    store, record = BackupStore(home), Record(home)
    project = os.path.abspath(roots[0] if roots else os.getcwd())
    levels = [(p, "system") for p in _gemini.system_files()]
    levels.append((os.path.join(home, _gemini_settings.USER_DIR, "settings.json"), "user"))
    if os.path.realpath(project) != os.path.realpath(home):  # Gemini reads none there
        levels.append((os.path.join(project, _gemini_settings.USER_DIR, "settings.json"),
                       "project"))  # fmt: skip
    out: list[str] = []
    installed = False
    for path, scope in levels:
        raw = read_bytes_quiet(path)
        try:
            data = _claude.parse(path, raw, _gemini.GEMINI)[1] if raw is not None else {}
            here = store.get(path) is not None or bool(record.entries(path))
        except ConfigError:
            continue  # `list` names the unparsable file already
        installed = installed or here
        again = {"system": "--managed", "user": "--user"}.get(scope, f"--workspace {project}")
        original = _gemini_settings.installed(home, path, scope)
        check = check_in(home, path) if scope == "user" else None  # `session.py`
        for where, hook in _gemini.GEMINI.handlers(data):
            if is_check(check, hook):
                continue
            if not (here or names_sandboxrun(hook)):
                continue  # never installed: only a look-alike wrapper is worth a word
            at = "".join(f"[{w}]" if isinstance(w, int) else f".{w}" for w in where)[1:]
            spot = f"{path} {at}"
            if original(hook["command"]) is not None:
                chosen = chosen_files(_gemini.unguarded(hook["command"]), None)
                out += wrapper_notes(spot, hook, project, "gemini", again, chosen)
            else:
                out.append(unwrapped_note(spot, hook, "gemini", again))
    for spec in DIALECTS["gemini"].discover(None, [project], home).hooks if installed else ():
        if spec.source == "extension":
            out.append(
                f"not wrapped: {spec.hook_name} (extension) {spec.name[:120]!r} runs"
                " unsandboxed: install does not rewrite extensions' hooks/hooks.json (an"
                " extension update replaces it); disable the extension to stop it"
            )
    return out


def wrapper_notes(
    where: str, hook: dict[str, Any], project: str, agent: str, again: str,
    chosen: list[str] | None = None,
) -> list[str]:  # fmt: skip
    """What is wrong with a recorded wrapper, if anything: it starts a sandboxrun (or
    config) the workspace brings, or one that is gone (`chosen`: the files it starts,
    when the agent's form is not `chosen_files`' own)."""
    if chosen is None:
        chosen = chosen_files(hook["command"], hook.get("args"))
    chosen = started(chosen)  # the launcher file: what it starts
    inside = [f for f in chosen if _inside(f, project)]
    if inside:
        return [
            f"not trusted: {where} runs {inside[0]!r} from the workspace or"
            " PATH: a repository's own sandboxrun or config can loosen the sandbox"
        ]
    if not _runnable(chosen):
        return [_missing(where, (chosen[:2] or ["?"])[-1], agent, again)]
    return []


def _codex_notes(roots: Sequence[str], home: str) -> list[str]:
    """What runs unsandboxed although install was run (`status.notes`): with the managed
    forwarders, nothing of the user's or a project's (Codex runs only managed hooks);
    else each handler of an installed file that is no wrapper install recorded (a pull
    brought it), said with Codex's own gate: whether the user trusted its hash."""
    from .._dialects.codex.discovery import _LABELS, _states
    from .codex import files, forwarding_installed

    if forwarding_installed():
        return []
    store, record = BackupStore(home), Record(home)
    workspace = os.path.abspath(roots[0] if roots else os.getcwd())
    project = project_root(workspace, home, ".git")
    states = _states(os.path.join(home, ".codex", "config.toml"))
    out = []
    for scope, where in (("user", None), ("project", workspace)):
        try:
            found = files(where, home)
        except ConfigError as exc:
            out.append(f"not installed: {exc}")
            continue
        again = "--user" if where is None else f"--workspace {project}"
        loaded = []
        for path, shape in found:
            raw = read_bytes_quiet(path)
            try:
                data = _claude.parse(path, raw, shape)[1] if raw is not None else {}
                entries = record.entries(path)
            except ConfigError:
                continue  # `list` names the unreadable file already
            loaded.append((path, shape, data, entries))
        installed = any(store.get(p) is not None or e for p, _, _, e in loaded)
        for path, shape, data, entries in loaded:
            check = check_in(home, path) if scope == "user" else None  # `session.py`
            for at, hook in shape.handlers(data):
                if is_check(check, hook):
                    continue
                spot = f"{path} hooks.{at[1]}[{at[2]}].hooks[{at[4]}]"
                if record.original(path, hook, scope == "project", entries):
                    out += wrapper_notes(spot, hook, project, "codex", again)
                    continue
                alike = names_sandboxrun(hook)
                if not (installed or alike):
                    continue
                why = EARLIER if legacy.old_wrapper(hook) else (
                    "install did not write it: a command shaped like a wrapper runs as written"
                    if alike else "new since install?"
                )  # fmt: skip
                key = f"{path}:{_LABELS.get(str(at[1]), '')}:{at[2]}:{at[4]}"
                state = states.get(key)
                gate = (
                    "trusted by hash in ~/.codex/config.toml [hooks.state]: Codex runs it now"
                    if isinstance(state, dict) and state.get("trusted_hash")
                    else "Codex runs it once you trust it in /hooks"
                )
                out.append(f"not wrapped: {spot}: {hook['command'][:120]!r} runs unsandboxed"
                           f" ({why}; {gate}): run `sandboxrun install --agent codex {again}`"
                           " again")  # fmt: skip
    return out


def _managed_forwarding() -> bool:
    try:
        raw = read_bytes_quiet(_managed.managed_file())
        data = _claude.parse("managed", raw)[1] if raw else {}
    except ConfigError:
        return False
    hooks = data.get("hooks")
    return data.get("allowManagedHooksOnly") is True and isinstance(hooks, dict) and any(
        isinstance(e, dict) and isinstance(e.get("hooks"), list)
        and any(_managed.is_forwarder(h) for h in e["hooks"])
        for entries in hooks.values() if isinstance(entries, list) for e in entries
    )  # fmt: skip


def _runnable(launcher: Sequence[str]) -> bool:
    """Whether a launcher (`PYTHON SCRIPT`, as `chosen_files` lists it) can start."""
    return len(launcher) > 1 and os.access(launcher[0], os.X_OK) and os.path.isfile(launcher[1])


def _cline_notes(dialect: ClineDialect, roots: Sequence[str], home: str) -> list[str]:
    record = Record(home)
    forwarding = forwarders_installed(dialect, home, record)
    out = []
    for folder, source, workdir in dialect.folders(roots, home):
        if MOVED in folder:
            continue
        base = home if source == "global" else workdir
        moved = moved_folder(base, os.path.relpath(folder, base))
        entries = [os.path.join(folder, e) for e in listdir(folder)]
        has_shims = any(read_shim(p, record) for p in entries)
        installed = has_shims or os.path.isdir(moved) or (forwarding and source == "workspace")
        found = dialect.discover(None, [], home, [folder]).hooks  # recorded shims skipped
        alike = {h.name for h in found if _mentions_sandboxrun(h.name)}
        if not (installed or alike):
            continue
        again = "--user" if source == "global" else f"--workspace {base}"
        for path in entries:
            shim = read_shim(path, record)
            chosen = started([*filter(None, [shim.python, shim.executable, shim.config])]
                             if shim else [])  # fmt: skip
            inside = [f for f in chosen if source == "workspace" and _inside(f, base)]
            if inside:
                out.append(
                    f"not trusted: {path} runs {inside[0]!r} from the workspace or PATH:"
                    " a repository's own sandboxrun or config can loosen the sandbox"
                )
            elif shim and not _runnable(chosen):
                out.append(_missing(path, shim.executable, dialect.agent, again))
        for hook in found:
            if installed or hook.name in alike:
                why = (
                    EARLIER if legacy.old_shim(hook.name) else
                    "install did not write it: a file shaped like a shim runs on the host as"
                    " written" if hook.name in alike else "new since install?"
                )  # fmt: skip
                out.append(
                    f"not wrapped: {hook.name} runs unsandboxed ({why}): run"
                    f" `sandboxrun install --agent {dialect.agent} {again}` again"
                )
        if forwarding and source == "workspace":
            continue  # the forwarding hooks run every moved hook
        shimmed = {s.hook_name for p in entries if (s := read_shim(p, record))}
        for hook in dialect.discover(None, [], home, [moved]).hooks if os.path.isdir(moved) else ():
            if hook.hook_name not in shimmed:
                out.append(
                    f"no shim: {hook.name} does not run at all (enabled since install?): run"
                    f" `sandboxrun install --agent {dialect.agent} {again}` again"
                )
    return out


def _mentions_sandboxrun(path: str) -> bool:
    """Whether a hook file names sandboxrun (a look-alike shim: discovery skipped every
    shim install recorded)."""
    return b"sandboxrun" in (read_bytes_quiet(path) or b"")[:4096]


def _missing(where: str, executable: str, agent: str, again: str) -> str:
    """A wrapper or shim whose sandboxrun is gone (moved, uninstalled): the agent gets
    exit 127, a failed hook that does not block, so a guard stops guarding."""
    return (
        f"broken: {where} runs {executable!r}, which is missing: the hook fails and blocks"
        f" nothing; run `sandboxrun install --agent {agent} {again}` again"
    )


def _inside(path: str, root: str) -> bool:
    """Whether `path` (relative: to the workspace, where the agent runs hooks; a bare
    name: from a PATH a repository's `env` block can set) may come with the workspace."""
    if os.sep not in path:
        return True
    return Path(os.path.realpath(os.path.join(root, path))).is_relative_to(os.path.realpath(root))


def read_bytes_quiet(path: str) -> bytes | None:
    try:
        return read_bytes(path)
    except ConfigError:
        return None
