"""`sandboxrun review`: the repository hooks of a workspace that are new or changed
since approved, each with its diff; `--approve [HOOK]` pins the current version (all,
or the hooks of that name), `--pins FILE` uses (and writes) an export for a CI gate
(`check --require-reviewed --pins FILE`) instead of the user's data folder."""

from __future__ import annotations

import argparse
import os

from .._text import printable
from .common import emit, load


def command(args: argparse.Namespace) -> int:
    from .._dialects.registry import dialect_of
    from .._errors import ConfigError
    from .._review import approve, audit, migrate, record
    from .._review.show import diff, pending, scan, summary
    from .._runner.factory import resolve_workspaces
    from .._runner.reply import absolute_paths
    from .._settings import account_home

    absolute_paths(args, os.getcwd())
    pins = os.path.abspath(args.pins) if args.pins else None
    settings = load(args, review_pins=pins)
    roots = resolve_workspaces({}, args.workspace, dialect_of(settings), settings,
                               cwd=os.getcwd())  # fmt: skip
    seen = scan(settings, roots, account_home(), [args.agent] if args.agent else [])
    if args.approve is not None:
        chosen = [s for s in pending(seen)
                  if args.approve in ("", s.pin.name, f"{s.pin.event}:{s.pin.name}")]  # fmt: skip
        if args.approve and not chosen:
            raise ConfigError(f"no hook awaiting review is named {args.approve!r}")
        if pins and not chosen:  # an export of what is approved now, for a CI
            chosen = seen
        # Where the runs read (`review_pins` of the config, unless `--pins`): what was
        # compared above is what is approved.
        approve(chosen, settings.review_pins)
        migrate(seen, settings.review_pins)  # older pins still approved: as they are now
        audit(settings, [record(settings, s, "approved", "review") for s in chosen])
        for s in chosen:
            what = "approved removal" if s.status == "removed" else "approved"
            print(printable(f"{what}: {s.pin.agent} {s.pin.event} {s.pin.name}"))
        return 0
    todo = pending(seen)
    if args.json:
        emit({"hooks": [{"agent": s.pin.agent, "event": s.pin.event, "name": s.pin.name,
                         "source": s.pin.entry.get("source"), "status": s.status,
                         "workspace": s.workspace, "diff": diff(s)} for s in todo]})  # fmt: skip
        return 0
    print(summary(seen) or f"no repository hook awaits review ({len(seen)} approved)")
    for s in todo:
        print()
        print(printable(f"{s.status}: {s.pin.agent} {s.pin.event} {s.pin.name}"))
        for line in diff(s).splitlines():
            print(printable(f"  {line}"))
    return 0
