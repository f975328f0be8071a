"""Removed: an approved repository hook that is no longer there as approved.

A pull request that deletes a guard (its config entry, or the hook file of a Cline-like
agent whose file is the hook), changes its command (the approved one is then gone, the
new one is `new`), or narrows its matcher or `if` so that it no longer applies, weakens
the user's policy more than any change of its bytes. Nothing of it is left to run, so
nothing would ever report it: here the pins are read the other way round, for approved
hooks that no hook found now answers to.

`missing` is what `review`, `list`, `doctor` and `check` show (every event); `dropped`
is what one event's run lacks: a deleted hook whose approved matcher applies to the
event, or a hook whose matcher or `if` was narrowed so it no longer does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .._dialects.base import from_repository
from .._types import HookSpec
from .fields import restore
from .pins import Pin, PinStore, key_of

if TYPE_CHECKING:
    from .._dialects.base import Dialect
    from . import Seen

REMOVED = "removed"


def pin_roots(dialect: Dialect, workspaces: Sequence[str], home: str) -> list[str]:
    """Where the approved pins of these workspaces can be: each root, and for Claude's
    family the project a session in a subfolder belongs to (its hooks are pinned there,
    `hook_root`), found from the filesystem as discovery finds it, since with every hook
    of the project deleted no hook names it any more."""
    roots = [os.path.realpath(w) for w in workspaces]
    project = dialect.pinned_project(workspaces[0], home) if workspaces else None
    if project is not None:
        roots.append(os.path.realpath(project))
    return list(dict.fromkeys(roots))


def _stores(
    home: str, roots: Iterable[str], seen: Sequence[Seen], pins_file: str | None
) -> dict[str, tuple[PinStore, set[str]]]:
    """Each pins file of `roots` and of the hooks `seen`, with the keys of the hooks that
    answer to one of its pins (a renamed hook answers to the pin it was renamed from)."""
    stores: dict[str, tuple[PinStore, set[str]]] = {}
    for root in [*roots, *(s.workspace for s in seen)]:
        store = PinStore(home, root, pins_file)
        stores.setdefault(str(store.path), (store, set()))
    for s in seen:
        keys = stores[str(PinStore(home, s.workspace, pins_file).path)][1]
        keys.add(s.pin.key)
        if s.old is not None:
            keys.add(s.old.key)
    return stores


def _gone(
    agent: str, stores: dict[str, tuple[PinStore, set[str]]], event: str | None
) -> list[tuple[PinStore, Pin]]:
    """The approved `run` pins of `agent` (of `event`, else every event) no key answers to.
    An `exec --untrusted` command's own pin is never "removed": nothing runs it by name."""
    out: list[tuple[PinStore, Pin]] = []
    for store, keys in stores.values():
        for pin in store.load().values():
            if (pin.agent == agent and pin.entry.get("kind") == "run" and pin.key not in keys
                    and (event is None or pin.event == event)):  # fmt: skip
                out.append((store, pin))
    return out


def missing(
    home: str, agent: str, seen: Sequence[Seen], roots: Iterable[str], pins_file: str | None
) -> list[Seen]:
    """The approved hooks of `agent` that no hook of `seen` (every repository hook found
    now, for every event) is, as `Seen` with status `removed` (the pin is the approved
    version, as deleted)."""
    from . import Seen

    stores = _stores(home, roots, seen, pins_file)
    return [Seen(pin, REMOVED, pin, store.workspace) for store, pin in _gone(agent, stores, None)]


def as_spec(pin: Pin, workspace: str) -> HookSpec:
    """What the approved hook was, enough to ask the dialect whether it applies to an
    event (its event, matcher, `if`, source and `fields`: Cursor's loop limit) and to
    name it in the report (an `async` one, whose answer decided nothing, is no block)."""
    entry = pin.entry
    command = entry.get("command")
    spec = HookSpec(
        hook_name=pin.event, name=pin.name, source=str(entry.get("source") or "project"),
        argv=tuple(str(a) for a in command) if isinstance(command, list) else (),
        workdir=workspace, mounts=(), matcher=entry.get("matcher"),
        condition=entry.get("condition"), review=REMOVED,
    )  # fmt: skip
    return restore(spec, pin.agent, pin.runs, pin.knows_timeout)


def dropped(
    home: str, agent: str, hook_name: str, candidates: Sequence[HookSpec],
    matched: Sequence[HookSpec], seen: Sequence[Seen], roots: Iterable[str],
    root_of: Callable[[HookSpec], str], applies: Callable[[HookSpec], bool],
    pins_file: str | None,
) -> list[Seen]:  # fmt: skip
    """The approved hooks that would have run for this event and do not: `candidates`
    are the event's hooks as found (before matchers), `matched` those that apply, `seen`
    their review. Deleted: a pin of the event no candidate answers to, whose approved
    matcher applies. Narrowed: a candidate that does not apply, though with its approved
    matcher, `if` and `fields` (Cursor's loop limit) it would."""
    from . import Seen

    repo = [c for c in candidates if from_repository(c.source)]
    stores = _stores(home, roots, seen, pins_file)
    for c in repo:  # found, matched or not: not deleted (a narrowed one is below)
        path = str(PinStore(home, root_of(c), pins_file).path)
        stores.setdefault(path, (PinStore(home, root_of(c), pins_file), set()))
        stores[path][1].add(key_of(agent, c, root_of(c)))
    out = [Seen(pin, REMOVED, pin, store.workspace)
           for store, pin in _gone(agent, stores, hook_name)
           if applies(as_spec(pin, store.workspace))]  # fmt: skip
    loaded: dict[str, dict[str, Pin]] = {}
    for c in repo:
        if any(c is m for m in matched):
            continue
        store = PinStore(home, root_of(c), pins_file)
        if str(store.path) not in loaded:
            loaded[str(store.path)] = store.load()
        pin = loaded[str(store.path)].get(key_of(agent, c, root_of(c)))
        if pin is None:
            continue
        before = restore(
            replace(c, matcher=pin.entry.get("matcher"), condition=pin.entry.get("condition")),
            agent, pin.runs, pin.knows_timeout,
        )  # fmt: skip
        if before != c and applies(before):
            out.append(Seen(pin, REMOVED, pin, store.workspace))
    return out
