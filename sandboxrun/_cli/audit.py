"""`sandboxrun audit`: what the hooks decided, from the audit trail (`audit_log`)."""

from __future__ import annotations

import argparse
import datetime
import json
import sys

from .._errors import ConfigError
from .common import load


def command(args: argparse.Namespace) -> int:
    from .._audit.log import AuditLog, read_lines
    from .._audit.summary import since_cutoff, summarise, table

    settings = load(args)
    path = args.log or settings.audit_log
    if not path:
        raise ConfigError(
            'no audit trail: set audit_log = "/absolute/path.jsonl" in your config file'
            " (or name one with --log FILE)"
        )
    files = AuditLog(path, settings.audit_max_bytes, settings.audit_keep).files()
    if not files:
        raise ConfigError(f"{path}: no audit file there yet (nothing recorded, or wrong path)")
    now = datetime.datetime.now(datetime.UTC)
    since = since_cutoff(args.since, now) if args.since else None
    rows, bad = summarise(read_lines(files), since, args.hook)
    if args.json:
        sys.stdout.write(json.dumps({"hooks": rows, "unreadableLines": bad}) + "\n")
    else:
        sys.stdout.write(table(rows))
    if bad:
        print(f"sandboxrun: {bad} line(s) of {path} are not audit records: skipped",
              file=sys.stderr)  # fmt: skip
    return 0
