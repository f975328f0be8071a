"""What a person reads: progress while the events run (stderr), then the summary (stdout).

stdout holds the report of the gate (the table, the reasons, the verdict), so it can be
kept with `> report.txt` while progress and logs stay on the terminal; stderr holds the
progress, sandboxrun's logs and its own errors. On a terminal, progress is one line
redrawn in place; elsewhere (a CI log, a file) nothing is redrawn: a plain line every
`every` seconds at most, so a long run shows it is alive without flooding the log.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TextIO

from .._text import printable
from .events import EventLine
from .replay import LineResult

HOOK_WIDTH = 60  # a hook name longer than this is cut in the table (whole in the details)
MAX_HOOKS_SHOWN = 3


class Progress:
    """Progress of the replay on `stream` (stderr)."""

    def __init__(
        self,
        stream: TextIO,
        total: int,
        every: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream, self.total, self.every, self.clock = stream, total, every, clock
        self.tty = stream.isatty()
        self.failed = 0
        self._last = clock()

    def start(self, index: int, line: EventLine) -> None:
        if self.tty:
            event = printable(line.hook_name or "?")[:40]
            failed = f" ({self.failed} not passed)" if self.failed else ""
            where = f"{index + 1}/{self.total}: line {line.number} {event}"
            self._write(f"\r\x1b[Kchecking {where}{failed}")

    def done(self, index: int, result: LineResult) -> None:
        self.failed += not result.passed
        if self.tty or index + 1 == self.total:
            return
        now = self.clock()
        if now - self._last >= self.every:
            self._last = now
            done = f"{index + 1}/{self.total} events"
            self._write(f"sandboxrun check: {done}, {self.failed} not passed\n")

    def close(self) -> None:
        if self.tty:
            self._write("\r\x1b[K")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def short_name(name: str, workspaces: Sequence[str], project_var: str | None = None) -> str:
    """A hook's name for the table: a path inside a workspace relative to it; a command
    that starts from the project variable (`"$CLAUDE_PROJECT_DIR"/x.sh`) as that path."""
    for root in workspaces:
        if name.startswith(root.rstrip("/") + "/"):
            return os.path.relpath(name, root)
    if project_var:
        for prefix in (f'"${project_var}"/', f"${project_var}/", f'"${{{project_var}}}"/'):
            if name.startswith(prefix):
                return name.removeprefix(prefix)
    return name


def summary(
    results: Sequence[LineResult],
    workspaces: Sequence[str],
    fail_closed: bool,
    project_var: str | None = None,
) -> str:
    """The table, the reasons of the lines that did not pass, and the verdict line."""
    rows = [("LINE", "EVENT", "DECISION", "MS", "HOOKS")]
    for r in results:
        names = [short_name(n, workspaces, project_var) for n in r.hooks]
        shown = [_cut(n, HOOK_WIDTH) for n in names[:MAX_HOOKS_SHOWN]]
        if len(names) > MAX_HOOKS_SHOWN:
            shown.append(f"+{len(names) - MAX_HOOKS_SHOWN} more")
        ms = str(r.duration_ms) if r.line.problem is None else "-"
        event = _cut(printable(r.line.hook_name or "-"), 28)
        rows.append((str(r.line.number), event, r.decision, ms, printable(", ".join(shown))))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for number, event, decision, ms, hooks in rows:
        cells = (number.rjust(widths[0]), event.ljust(widths[1]), decision.ljust(widths[2]),
                 ms.rjust(widths[3]), hooks)  # fmt: skip
        lines.append("  ".join(cells).rstrip())
    problems = [r for r in results if not r.passed or r.reason]
    if problems:
        lines.append("")
    for r in problems:
        who = ", ".join(short_name(n, workspaces, project_var) for n in r.hooks)
        event = printable(r.line.hook_name or "")
        head = f"line {r.line.number}" + (f" {event}" if event else "")
        hooks = f" ({printable(who)})" if who else ""
        lines.append(f"{head}: {r.decision}{hooks}" + (f": {r.reason}" if r.reason else ""))
    lines.append("")
    lines.append(verdict(results, fail_closed))
    return "\n".join(lines) + "\n"


def verdict(results: Sequence[LineResult], fail_closed: bool) -> str:
    counts = Counter(r.decision for r in results)
    bad = sum(not r.passed for r in results)
    detail = ", ".join(f"{n} {d}" for d, n in sorted(counts.items()))
    mode = "fail-closed" if fail_closed else "fail-open"
    if bad:
        return f"FAILED: {bad} of {len(results)} events did not pass ({detail}; {mode})"
    return f"passed: {len(results)} events ({detail}; {mode})"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else "..." + text[-(width - 3) :]
