"""The fields of a hook's entry that change what its answer decides or when it runs,
pinned with it (`pins.identify`: the entry's `runs`).

- `async` (Claude's family, Codex): the agent does not wait, the answer decides nothing.
- `once` (Claude's family): the agent runs it once a session, so it guards one event.
- `failClosed` (Cursor), `on_failure = "block"` (Goose): whether its failure blocks.
- `loop_limit` (Cursor): how many stop/subagentStop follow-ups it runs for.
- `sequential` (Gemini): the event's hooks run in turn, each reading the input as the
  earlier ones changed it.
- `timeout`: a shortened one can end a guard before it answers, and a timeout lets
  the action through unless fail-closed.
- `env` (Gemini, Copilot): the entry's own variables (`HookSpec.entry_env`, the pairs
  it sets, never the ones sandboxrun sets, which it cannot replace: `_dialects.base.
  entry_env`): `GUARD_OFF=1` can turn a guard off without a change to its files.

Each is pinned only when it is not what the entry gets without it (`default`), so the
pins of hooks that set none of them are as before and stay approved. A pin written
before `timeout` was pinned (`Pin.version` 1) knew nothing of it: the timeout is then
left out of the comparison (`LEGACY_UNKNOWN`), and the other fields compare as absent
meaning default (a hook approved while `async` differs once; re-approve it). `env`
is compared the same way in pins of every version: a hook with an `env` approved before
it was pinned is `changed` once (the safe side: what its variables were is unknown).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._dialects.base import entry_env
from .._types import HookSpec

# (the pin's name, HookSpec's field)
FIELDS = (
    ("async", "run_async"), ("once", "once"), ("failClosed", "fail_closed"),
    ("loop_limit", "loop_limit"), ("sequential", "sequential"), ("timeout", "timeout"),
    ("env", "entry_env"),
)  # fmt: skip

# What pins of version 1 did not record, and so cannot compare.
LEGACY_UNKNOWN = frozenset({"timeout"})


def default(agent: str, event: str, name: str) -> Any:
    """The value field `name` has when the entry does not set it."""
    if name == "loop_limit":
        from .._dialects.registry import DIALECTS  # (the agent's, already imported)

        return DIALECTS[agent].default_loop_limit(event)  # only Cursor has one
    if name == "env":
        return {}
    return None if name == "timeout" else False


def runs_of(agent: str, spec: HookSpec) -> dict[str, Any]:
    """The fields of `spec` that are not their default, by their pin names."""
    out: dict[str, Any] = {}
    for name, attr in FIELDS:
        value = getattr(spec, attr)
        if value != default(agent, spec.hook_name, name):
            out[name] = dict(sorted(value.items())) if name == "env" else value
    return out


def restore(spec: HookSpec, agent: str, pinned: dict[str, Any], known: bool = True) -> HookSpec:
    """`spec` with the fields as approved (`pinned`: the approved pin's `runs`): its
    approved version run in place of the changed one (a guard made async runs as
    approved, its answer deciding). `known=False` (a version 1 pin): the fields it did
    not record are left as they are now."""
    values = {}
    for name, attr in FIELDS:
        if known or name not in LEGACY_UNKNOWN:
            values[attr] = pinned.get(name, default(agent, spec.hook_name, name))
    env = values.pop("entry_env", None)
    if isinstance(env, Mapping):
        values.update(_env(spec, {str(k): str(v) for k, v in env.items()}))
    return replace(spec, **values)


def _env(spec: HookSpec, approved: dict[str, str]) -> dict[str, Any]:
    """`spec`'s env with the entry's pairs as approved: the ones it sets now taken out
    (never one of sandboxrun's: the dialects leave those out of `entry_env`), the approved
    ones added as the dialects add them, never over sandboxrun's own (a pin written
    before may hold GEMINI_PROJECT_DIR: the approved run still gets ours)."""
    own = {k: v for k, v in spec.env.items() if k not in spec.entry_env}
    kept = entry_env(own, approved, spec.name)
    return {"env": {**own, **kept}, "entry_env": kept}
