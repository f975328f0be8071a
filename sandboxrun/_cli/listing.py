"""`sandboxrun list`: the hooks found, whether each can start, the files skipped."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from .._text import printable
from .common import emit, load

if TYPE_CHECKING:
    from .._types import HookSpec


def command(args: argparse.Namespace) -> int:
    from .._backends.choose import make_backend
    from .._dialects.registry import dialect_of
    from .._runner.factory import resolve_workspaces
    from .._runner.reply import absolute_paths
    from .._sandbox.preflight import check_discovered
    from .._settings import account_home

    absolute_paths(args, os.getcwd())  # not served: this process's folder is the caller's
    settings = load(args, agent=args.agent)
    dialect = dialect_of(settings)
    roots = resolve_workspaces({}, args.workspace, dialect, settings, cwd=os.getcwd())
    found = dialect.discover(args.hook, roots, args.home or account_home(), args.hooks_dir)
    # Whether each hook can start in the image: needs the engine, once per image.
    problems, unchecked = check_discovered(found.hooks, make_backend(settings))
    from .._install.status import notes

    unwrapped = notes(settings.agent, roots, args.home or account_home())
    from .._review.show import awaiting, scan, summary

    review = awaiting(settings, scan(settings, roots, args.home or account_home(),
                                     [settings.agent]))  # fmt: skip
    if args.json:
        hooks = [
            {
                "hook": h.hook_name, "path": h.name, "source": h.source, "matcher": h.matcher,
                "runnable": None if unchecked else why is None, "why": why,
                **_claude_options(h),
            }
            for h, why in zip(found.hooks, problems, strict=True)
        ]  # fmt: skip
        skipped = [{"path": s.path, "source": s.source, "reason": s.reason} for s in found.skipped]
        emit({"agent": settings.agent, "hooks": hooks, "skipped": skipped, "check": unchecked,
               "notWrapped": unwrapped, "awaitingReview": [
                   {"hook": r.pin.event, "path": r.pin.name, "status": r.status}
                   for r in review]})  # fmt: skip
        return 0
    print(f"hooks ({settings.agent}):" if found.hooks else f"no hooks found ({settings.agent})")
    for h, why in zip(found.hooks, problems, strict=True):
        matcher = f"  [matcher {h.matcher}]" if h.matcher not in (None, "", "*") else ""
        matcher += f"  [if {h.condition}]" if h.condition is not None else ""
        matcher += "  [async: its answer decides nothing]" if h.run_async else ""
        matcher += "  [once: runs every time, no session state]" if h.once else ""
        print(printable(f"  {h.hook_name:<16} {h.source:<9} {h.name}{matcher}"))
        if why:
            print(printable(f"    will not run: {why}"))
    if unchecked:
        print(printable(f"  ({unchecked})"))
    if found.skipped:
        print("skipped:")
        for s in found.skipped:
            print(printable(f"  {s.path} ({s.source}): {s.reason}"))
    for note in unwrapped:  # installed, but a pull brought a hook the agent runs itself
        print(printable(note))
    if summary(review):
        print(printable(summary(review) or ""))
    return 0


def _claude_options(spec: HookSpec) -> dict[str, Any]:
    """`if`, `async` and `once` of a hook that sets any (Claude family), for `list --json`."""
    if spec.condition is None and not spec.run_async and not spec.once:
        return {}
    return {"if": spec.condition, "async": spec.run_async, "once": spec.once}
