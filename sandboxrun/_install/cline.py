"""`install` / `uninstall` for the Cline family: shims in the folders the agent scans.

Cline runs the files named after a hook in its hook folders (the VS Code extension: the
executable named exactly so; its SDK/CLI: any case, with an extension too: `_dialects.cline`),
so the hooks stay where the agent looks, as small shims (one per hook name, named exactly
after it: both variants run it; every file of the folder moves, whatever its name), and
the originals move (one rename: bytes, modes and times kept) to
`<base>/.sandboxrun/moved/<folder>`, which no agent scans.
A shim hands its stdin to `sandboxrun run HOOK --agent A --answer agent --hooks-dir
<moved folder>` (started by install's launcher file, which execs `PYTHON -I SANDBOXRUN`:
`command.launcher`), which runs
the originals in the sandbox and prints exactly Cline's answer (`cancel`,
`contextModification`, `errorMessage`, and the SDK's `overrideInput` when one is kept).
Each shim's bytes go in install's record (`record.Record`) before the shim is written:
only a recorded shim is ours; a file a repository shaped like one is a hook, moved aside
like any other.

A shim an earlier sandboxrun wrote (before the record: `legacy.old_shim`) is replaced
by a new recorded one when a hook of its name was moved aside (its original), and in
the user's own folders (no repository writes there); in a workspace, one with no
original is a hook like any other. Whatever its text ran, it runs no more: the new
shim runs the moved originals in the sandbox.

`--global` puts a forwarding shim for every hook name in the global folder every
variant reads (`forwarder_folder`: the CLI reads two, so a forwarder in each would run
each hook twice); besides the user's own hooks of that folder (moved aside like a
workspace's), it runs the hooks `install` moved out of the primary workspace root
(`--hooks-dir` relative to the folder Cline runs global hooks in). The other global
folders get shims for their own hooks only, as `--user` does. With it in place,
`install --workspace` only moves a workspace's hooks (a workspace shim would run them a
second time).
Cline has no switch that turns workspace hooks off: a hook file a repository adds to
a scanned folder still runs unsandboxed. `list` and `doctor` say so.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._dialects.base import Dialect
from .._dialects.cline import HOOK_NAMES, ClineDialect, every_variant
from .._dialects.installed import MOVED, SHIM_MARK, missing_guard, moved_folder, read_shim
from .._errors import ConfigError
from .._text import printable
from . import legacy
from .answer import answer_form
from .files import atomic_write, diff, read_bytes, sha256, sync_folder
from .launcher import started
from .record import Record
from .unwrapped import EARLIER, in_workspace, missing, read_bytes_quiet, runnable

if TYPE_CHECKING:
    from .registry import Request


def shim_text(
    launcher: Sequence[str], agent: str, hook_name: str, run_options: Sequence[str]
) -> bytes:
    """A shim (`_dialects.installed` reads it back): `run` answering in Cline's terms."""
    answer_form(agent)
    command = shlex.join([*launcher, "run", hook_name, "--agent", agent, "--answer", "agent",
                          *run_options])  # fmt: skip
    guard = f"{missing_guard(launcher)}\n" if "--fail-closed" in run_options else ""
    return (
        f"#!/bin/sh\n{SHIM_MARK}: `sandboxrun uninstall --agent {agent}` puts the original hooks"
        f" back.\n# It runs the hooks of its --hooks-dir folders in sandboxrun's sandbox.\n"
        f"{guard}exec {command}\n"
    ).encode()


# In a hook folder `install` made, the topmost folder it made (so uninstall removes
# exactly those); no agent reads a file of that name as a hook.
MADE = ".sandboxrun-made"


@dataclass(slots=True)
class FolderPlan:
    """What install or uninstall does to one scanned folder, in order."""

    folder: str
    moved: str
    renames: list[tuple[str, str]] = field(default_factory=list)
    make_folder: int | None = None  # mode of a folder to create at `folder`
    shims: dict[str, bytes] = field(default_factory=dict)  # path -> content
    unlink: list[str] = field(default_factory=list)
    remove_folder: bool = False
    made_top: str | None = None  # install: the topmost folder it makes; uninstall: removes
    prune: bool = False  # remove the empty folders above `moved` afterwards
    forget: bool = False  # uninstall: drop install's record of the folder's shims
    notes: list[str] = field(default_factory=list)
    previews: list[str] = field(default_factory=list)  # diffs for --dry-run


def _entries(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"{folder}: cannot list: {exc.strerror}; not changed") from None


def _check_folder(folder: str) -> None:
    if os.path.islink(folder):
        raise ConfigError(f"{folder} is a symlink: move the folder it points to instead")
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise ConfigError(f"{folder} is not a folder; not changed")


def hook_names(dialect: ClineDialect, home: str, folders: Sequence[str],
               skip: Sequence[str] = ()) -> list[str]:  # fmt: skip
    """The hook names with a hook in `folders` that either variant of the agent runs
    (`every_variant`: whichever Cline the user has, none of its hooks stops running
    unseen), shims and `skip` left out (discovery skips the shims install recorded)."""
    names: set[str] = set()
    for variant in every_variant(dialect):
        found = variant.discover(None, [], home, [f for f in folders if os.path.isdir(f)])
        names |= {h.hook_name for h in found.hooks if h.name not in skip}
    return [n for n in dialect.hook_names if n in names]


def earlier_shims(folder: str, moved: str, entries: Sequence[str], user: bool) -> list[str]:
    """The entries of `folder` that are shims of an earlier sandboxrun to replace (see
    the module): any in the user's own folders (`user`); in a workspace, one only if a
    hook of its name lies in `moved`."""
    originals = _entries(moved) if os.path.isdir(moved) else []
    out = []
    for e in entries:
        shim = legacy.old_shim(os.path.join(folder, e))
        if shim is None or shim.hook_name != e:
            continue
        if user or any(o == e or o.startswith(f"{e}.") for o in originals):
            out.append(e)
    return out


def plan_install(
    dialect: ClineDialect, folder: str, moved: str, home: str, launcher: Sequence[str],
    run_options: Sequence[str], record: Record, all_names: bool = False, shims: bool = True,
    user: bool = False,
) -> FolderPlan:  # fmt: skip
    """Move `folder`'s hooks to `moved` and put shims in their place (every hook name
    when `all_names`: a global forwarder; none when not `shims`). `user`: one of the
    user's own folders, not a workspace's."""
    _check_folder(folder)
    _check_folder(moved)
    plan = FolderPlan(folder, moved)
    if not (os.path.isdir(folder) or os.path.isdir(moved) or all_names):
        return plan  # nothing installed here, nothing to install
    entries = [e for e in _entries(folder) if e != MADE]
    ours = [e for e in entries if read_shim(os.path.join(folder, e), record)]
    earlier = earlier_shims(folder, moved, [e for e in entries if e not in ours], user)
    theirs = [e for e in entries if e not in ours and e not in earlier]
    for e in theirs:
        if legacy.old_shim(os.path.join(folder, e)):
            plan.notes.append(
                f"{os.path.join(folder, e)} is shaped like an earlier sandboxrun's shim, but"
                f" no hook of its name is in {moved}: moved aside like any hook"
            )
    # An earlier `--global`'s forwarders in a folder that now gets none: take them out.
    forwarders_only = ours and all(forwards(os.path.join(folder, e), record) for e in ours)
    if forwarders_only and not (all_names or theirs or os.path.isdir(moved)):
        return plan_uninstall(folder, moved, record, user)
    if os.path.isdir(folder) and not os.path.lexists(moved) and not (ours or earlier):
        plan.renames.append((folder, moved))
        plan.make_folder = stat.S_IMODE(os.stat(folder).st_mode)
        plan.notes.append(f"moved {folder} -> {moved}")
        new_names = hook_names(dialect, home, [folder])
        original = {e: os.path.join(folder, e) for e in theirs}
    else:
        if ours and not all_names and not os.path.lexists(moved):
            raise ConfigError(f"{folder} holds sandboxrun shims but {moved} is gone; not changed")
        clash = [e for e in theirs if os.path.lexists(os.path.join(moved, e))]
        if clash:
            both = ", ".join(
                f"{os.path.join(folder, e)} and {os.path.join(moved, e)}" for e in clash
            )
            raise ConfigError(f"both exist: {both}; keep one, then install again")
        for e in theirs:  # a pull brought new hooks into a folder of shims
            plan.renames.append((os.path.join(folder, e), os.path.join(moved, e)))
            plan.notes.append(f"moved {os.path.join(folder, e)} -> {moved}")
        if not os.path.isdir(folder) and os.path.isdir(moved):  # an interrupted install
            plan.make_folder = stat.S_IMODE(os.stat(moved).st_mode)
        elif not os.path.isdir(folder):  # a global folder the user never had
            plan.make_folder, plan.made_top = 0o755, _top_missing(folder)
        new_names = hook_names(dialect, home, [moved, folder],
                               skip=[os.path.join(folder, e) for e in ours + earlier])  # fmt: skip
        original = {e: os.path.join(folder, e) for e in theirs}
    # A forwarder: a shim per name a hook file can have (the SDK's event names, which
    # `run` takes, name no file: its CLI runs no `tool_call` file).
    names = [n for n in dialect.hook_names if n in HOOK_NAMES] if all_names else new_names
    if not shims:
        names = []
    # Our shims with no hook left to run here go (all of them when no shims are wanted):
    # an earlier `--global`'s forwarder where none belongs now would run hooks a second
    # time. An earlier sandboxrun's shim in a workspace may be the repository's own
    # file: kept, and named.
    stale = [e for e in ours + earlier if e not in names and (user or e in ours or not shims)]
    plan.unlink += [os.path.join(folder, e) for e in stale]
    for e in earlier:
        path = os.path.join(folder, e)
        if e in names:
            plan.notes.append(f"migrated {path}: an earlier sandboxrun's shim, now a new one")
        elif e not in stale:
            plan.notes.append(
                f"kept {path}: an earlier sandboxrun's shim with no hook left to run"
                " (not trusted: `list` names it); delete it"
            )
    for name in names:
        path = os.path.join(folder, name)
        content = shim_text(launcher, dialect.agent, name, run_options)
        before = read_bytes(original[name]) if name in original else read_bytes(path)
        if before != content:
            plan.shims[path] = content
            plan.previews.append(diff(path, before, content))
    if plan.shims:
        made = ", ".join(sorted(map(os.path.basename, plan.shims)))
        plan.notes.append(f"{len(plan.shims)} shim(s) in {folder}: {made}")
    return plan


def plan_uninstall(folder: str, moved: str, record: Record, user: bool = False) -> FolderPlan:
    """Take the shims out of `folder` (those install recorded, and an earlier
    sandboxrun's that `install` would replace; no other file) and put the moved hooks
    back."""
    _check_folder(folder)
    plan = FolderPlan(folder, moved, prune=True, forget=True)
    entries = [e for e in _entries(folder) if e != MADE]
    recorded = [e for e in entries if read_shim(os.path.join(folder, e), record)]
    earlier = earlier_shims(folder, moved, [e for e in entries if e not in recorded], user)
    ours = [os.path.join(folder, e) for e in recorded + earlier]
    theirs = [e for e in entries if os.path.join(folder, e) not in ours]
    plan.unlink = ours
    for path in ours:
        plan.previews.append(diff(path, read_bytes(path), None))
    made = os.path.join(folder, MADE)
    if not os.path.isdir(moved):
        if ours and not theirs and os.path.isfile(made):  # install made it: remove it all
            plan.unlink.append(made)
            plan.remove_folder = True
            top = (read_bytes(made) or b"").decode("utf-8", "replace").strip()
            plan.made_top = top if Path(folder).is_relative_to(top or "/nonexistent") else None
        return plan
    if not theirs:
        plan.remove_folder = os.path.isdir(folder)
        plan.renames.append((moved, folder))
        plan.notes.append(f"moved {moved} -> {folder}")
        return plan
    back = _entries(moved)
    clash = [e for e in back if e in theirs]
    if clash:
        both = ", ".join(f"{os.path.join(folder, e)} and {os.path.join(moved, e)}" for e in clash)
        raise ConfigError(f"both exist: {both}; keep one, then uninstall again")
    plan.renames += [(os.path.join(moved, e), os.path.join(folder, e)) for e in back]
    plan.notes.append(f"moved the hooks of {moved} back into {folder} (it has new files)")
    return plan


def apply(plan: FolderPlan, record: Record) -> None:
    """Carry out a plan. Each step is one rename or one atomic write, in an order where
    an interruption leaves every hook either in place or in the moved folder (and every
    shim recorded before it is written)."""
    for path in plan.unlink:
        os.unlink(path)
    if plan.remove_folder:
        os.rmdir(plan.folder)
        parent = os.path.dirname(plan.folder)
        while plan.made_top and Path(parent).is_relative_to(plan.made_top):
            try:  # the folders install made above it, if nothing else went there since
                os.rmdir(parent)
            except OSError:
                break
            parent = os.path.dirname(parent)
    for src, dst in plan.renames:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.rename(src, dst)
        sync_folder(os.path.dirname(dst))
    if plan.make_folder is not None and not os.path.isdir(plan.folder):
        os.makedirs(os.path.dirname(plan.folder), exist_ok=True)
        os.mkdir(plan.folder)
        os.chmod(plan.folder, plan.make_folder)
        if plan.made_top:  # so that uninstall removes what install made, and no more
            atomic_write(os.path.join(plan.folder, MADE), plan.made_top.encode() + b"\n", 0o644)
    if plan.shims:
        record.add(plan.folder, {os.path.basename(p): sha256(c) for p, c in plan.shims.items()})
    for path, content in plan.shims.items():
        atomic_write(path, content, 0o755)
    if plan.forget:
        record.drop(plan.folder)
    if plan.prune:
        _prune(plan.moved)


def _top_missing(folder: str) -> str:
    """The topmost of `folder` and its ancestors that does not exist yet."""
    top = folder
    while not os.path.lexists(os.path.dirname(top)):
        top = os.path.dirname(top)
    return top


def _prune(moved: str) -> None:
    """Remove the folders `install` made above a moved folder, if empty, up to and
    including `<base>/.sandboxrun`."""
    top = os.path.dirname(moved[: moved.index(MOVED) + len(MOVED)])  # <base>/.sandboxrun
    folder = moved
    while folder.startswith(top):
        try:
            os.rmdir(folder)
        except FileNotFoundError:
            pass
        except OSError:
            return
        folder = os.path.dirname(folder)


def forwarders_installed(dialect: ClineDialect, home: str, record: Record) -> bool:
    """Whether `install --global` put forwarding shims in the user's global folders."""
    return any(
        forwards(os.path.join(home, rel, entry), record)
        for rel in dialect.global_dirs
        for entry in listdir(os.path.join(home, rel))
    )


def forwards(path: str, record: Record) -> bool:
    """Whether `path` is a forwarder `install --global` wrote: a recorded shim running
    folders relative to the workspace."""
    shim = read_shim(path, record)
    return shim is not None and any(not os.path.isabs(d) for d in shim.hooks_dirs)


def forwarder_folder(dialect: ClineDialect) -> str:
    """The global folder (relative to home) that gets `--global`'s forwarders: the first
    one every variant reads. Cline's CLI reads `~/Documents/Cline/Hooks` and
    `~/.cline/hooks`, the VS Code extension only the first: forwarders in both would run
    each of the workspace's hooks twice under the CLI."""
    variants = every_variant(dialect)
    return next(d for d in dialect.global_dirs if all(d in v.global_dirs for v in variants))


def listdir(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


# -- the agent's module (`registry.Installer`) ------------------------------------------


def install(request: Request, dialect: Dialect) -> int:
    """`install`/`uninstall --agent cline|careti`: shims in the folders the agent scans,
    the originals moved aside; `--global` adds the forwarding hooks (see the module)."""
    assert isinstance(dialect, ClineDialect)
    args, home, record, undo = request.args, request.home, request.record, request.undo
    if args.managed or args.managed_file:
        raise ConfigError("--managed is for Claude Code; the Cline family has --global")
    forwarding = forwarders_installed(dialect, home, record)
    user = args.user or args.global_
    if args.user and forwarding:  # keep the global forwarders whole
        args.global_ = True
    base = home if user else os.path.abspath(args.workspace or os.getcwd())
    rels = dialect.global_dirs if user else dialect.workspace_dirs
    plans = []
    launch = [] if undo else request.launcher()
    # `--global`: one folder forwards; the others get shims for their own hooks only.
    forwarder = forwarder_folder(dialect) if args.global_ else None
    for rel in rels:
        folder, moved = os.path.join(base, rel), moved_folder(base, rel)
        if undo:
            plans.append(plan_uninstall(folder, moved, record, user=user))
            continue
        dirs = [moved]
        if rel == forwarder:  # relative: Cline runs global hooks in the primary workspace root
            dirs += [os.path.join(MOVED, d) for d in dialect.workspace_dirs]
        options = [w for d in dirs for w in ("--hooks-dir", d)] + request.run_options(args)
        shims = user or not forwarding
        plans.append(plan_install(
            dialect, folder, moved, home, launch, options, record,
            all_names=rel == forwarder, shims=shims, user=user,
        ))  # fmt: skip
    for plan in plans:
        if args.dry_run:
            for preview in plan.previews:
                sys.stdout.write(preview)
        else:
            apply(plan, record)
        for path in plan.unlink:
            print(printable(f"removed shim {path}"))
        for note in plan.notes:
            print(printable(note))
    if not any(p.notes or p.unlink for p in plans):
        installed = any(
            read_shim(os.path.join(p.folder, e), record) for p in plans for e in listdir(p.folder)
        )
        if undo:
            print("nothing to do: nothing installed")
        else:
            print("no change: already installed" if installed else "nothing to do: no hooks found")
    if not undo and not args.global_ and not user and forwarding:
        print("global forwarding hooks are installed: they run these hooks (no shims here)")
    if args.dry_run:
        print("(dry run: nothing changed)")
    return 0


def notes(dialect: Dialect, roots: Sequence[str], home: str) -> list[str]:
    """Per folder the agent scans: a shim that starts a workspace's sandboxrun or none,
    a hook that runs unsandboxed although the folder was installed, a moved hook
    without a shim."""
    assert isinstance(dialect, ClineDialect)
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
            inside = [f for f in chosen if source == "workspace" and in_workspace(f, base)]
            if inside:
                out.append(
                    f"not trusted: {path} runs {inside[0]!r} from the workspace or PATH:"
                    " a repository's own sandboxrun or config can loosen the sandbox"
                )
            elif shim and not runnable(chosen):
                out.append(missing(path, shim.executable, dialect.agent, again))
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
