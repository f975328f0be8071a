"""What `list` and `doctor` say about an installed workspace: a hook that runs
unsandboxed although sandboxrun was installed for it (a pull brought it), a moved hook
without a shim, a wrapper or shim that cannot work or that the workspace chose."""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from .._dialects.base import WORKSPACE_SOURCES
from .._dialects.claude.dialect import ClaudeDialect
from .._dialects.claude.settings import project_root, settings_files
from .._dialects.claude.wrapped import chosen_files
from .._dialects.cline import ClineDialect
from .._dialects.installed import MOVED, moved_folder, read_shim
from .._dialects.registry import DIALECTS
from .._errors import ConfigError
from . import claude as _claude
from . import copilot as _copilot
from . import legacy
from . import managed as _managed
from .cline import forwarders_installed, listdir
from .command import NOT_YET, _python_of, executable
from .copilot import RecordedFile
from .files import BackupStore, read_bytes
from .record import Record, names_sandboxrun
from .shape import CLAUDE


def notes(agent: str, roots: Sequence[str], home: str) -> list[str]:
    """One sentence per hook that runs unsandboxed although sandboxrun was installed
    for it (e.g. a pull brought it), and per installed hook that cannot work. For an
    agent install does not support yet, one per hook the agent runs unwrapped."""
    dialect = DIALECTS[agent]
    if agent == "copilot":
        project, files = _copilot.note_files(roots, home)
        return recorded_notes(project, files, home, denies=True) + _copilot.unwrappable(files, home)
    if agent in NOT_YET:
        return _unwrapped_notes(agent, roots, home)
    if isinstance(dialect, ClaudeDialect):
        return _claude_notes(dialect, roots, home)
    assert isinstance(dialect, ClineDialect)
    return _cline_notes(dialect, roots, home)


def hand_wrapper(agent: str, command: str, untrusted: bool) -> str:
    """The one form a hand-wrapped hook command counts as sandboxed in, for an agent
    `install` does not support yet: this sandboxrun started isolated, by absolute paths
    (`command.launcher`'s `PYTHON -I SCRIPT`: a PATH or PYTHONPATH an agent's
    environment sets chooses nothing), `--untrusted` for a repository's hook, and the
    original as ONE single-quoted argument, so the agent's shell runs nothing of it."""
    head = [_python_of(executable()), "-I", executable(), "exec", "--agent", agent]
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
    for untrusted in (True, False) if not workspace else (True,):
        form = shlex.split(hand_wrapper(agent, "x", untrusted))[:-1]
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
    if dialect.agent == "claude" and _managed_forwarding():
        return []  # the agent runs none of these itself: the forwarding hooks run them
    project = project_root(roots[0] if roots else os.getcwd(), home, dialect.project_dir)
    files = []
    for path, source, _ in settings_files(dialect, project, home):
        where = "--user" if source == "user" else f"--workspace {project}"
        files.append((path, source == "user", CLAUDE, f"--agent {dialect.agent} {where}"))
    return recorded_notes(project, files, home)


def recorded_notes(
    project: str, files: Sequence[RecordedFile], home: str, denies: bool = False
) -> list[str]:
    """The notes on files `install` rewrites in place (the Claude family, Copilot):
    every command handler of an installed group of files that is not a wrapper install
    recorded there (trusted only as install wrote it: a repository's carries
    --untrusted), and every recorded one that cannot work. `denies`: the agent reads a
    failed hook as a deny (Copilot's preToolUse), not as nothing."""
    store, record = BackupStore(home), Record(home)
    parsed = []  # (path, install's arguments, command handlers, the recorded originals)
    for path, trusted, shape, again in files:
        raw = read_bytes_quiet(path)
        try:
            data = _claude.parse(path, raw)[1] if raw is not None else {}
            entries = record.entries(path)
        except ConfigError:
            continue  # `list` names the unparsable file already
        ours = functools.partial(record.original, path, untrusted=not trusted, entries=entries)
        handlers = list(_claude.command_handlers(data, shape))
        parsed.append((path, again, handlers, ours, bool(entries)))
    # A group was installed if one of its files was: a pull may bring a new file.
    installed = {
        again for path, again, _, _, recorded in parsed
        if store.get(path) is not None or recorded
    }  # fmt: skip
    out = []
    for path, again, handlers, ours, _ in parsed:
        for where, hook in handlers:
            at = "".join(f"[{w}]" if isinstance(w, int) else f".{w}" for w in where)[1:]
            alike = names_sandboxrun(hook)
            if again not in installed and not alike:
                continue  # never installed: only a look-alike wrapper is worth a word
            if ours(hook):
                chosen = chosen_files(hook["command"], hook.get("args"))
                inside = [f for f in chosen if _inside(f, project)]
                if inside:
                    out.append(
                        f"not trusted: {path} {at} runs {inside[0]!r} from the workspace or"
                        " PATH: a repository's own sandboxrun or config can loosen the sandbox"
                    )
                elif not _runnable(chosen):
                    script = (chosen[:2] or ["?"])[-1]
                    out.append(_missing(f"{path} {at}", script, again, denies))
            elif hook.get("shell") != "powershell":
                why = (
                    EARLIER if legacy.old_wrapper(hook) else
                    "install did not write it: a command shaped like a wrapper runs on the"
                    " host as written" if alike else "new since install?"
                )  # fmt: skip
                out.append(
                    f"not wrapped: {path} {at}: {hook['command'][:120]!r} runs unsandboxed"
                    f" ({why}): run `sandboxrun install {again}` again"
                )
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
            chosen = [shim.python, shim.executable, *filter(None, [shim.config])] if shim else []
            inside = [f for f in chosen if source == "workspace" and _inside(f, base)]
            if inside:
                out.append(
                    f"not trusted: {path} runs {inside[0]!r} from the workspace or PATH:"
                    " a repository's own sandboxrun or config can loosen the sandbox"
                )
            elif shim and not _runnable(chosen):
                out.append(_missing(path, shim.executable, f"--agent {dialect.agent} {again}"))
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


def _missing(where: str, executable: str, again: str, denies: bool = False) -> str:
    """A wrapper or shim whose sandboxrun is gone (moved, uninstalled): the agent gets
    exit 127, a failed hook that does not block, so a guard stops guarding (Copilot:
    `denies`, a preToolUse hook's failure denies every tool call it covers)."""
    effect = "a preToolUse one denies every tool call" if denies else "blocks nothing"
    return (
        f"broken: {where} runs {executable!r}, which is missing: the hook fails and"
        f" {effect}; run `sandboxrun install {again}` again"
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
