"""`sandboxrun audit`: the audit trail summarised per hook.

Per hook (agent, name, level): runs, blocks, asks, failures (failed, timed out, error,
not run), p50 and p95 duration, and what the sandbox stopped most. `--since 1d` (s, m,
h, d, w) keeps the recent lines; `--hook TEXT` the hooks whose name holds it. Lines
that are not JSON objects (a file someone else wrote to) are counted and skipped.
"""

from __future__ import annotations

import datetime
import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import ConfigError
from .._text import printable

_SPAN = re.compile(r"(\d+)([smhdw])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
FAILED = frozenset({"failed", "timed out", "error", "not run"})


def since_cutoff(text: str, now: datetime.datetime) -> datetime.datetime:
    """The time `--since 1d` means (a number and one of s m h d w)."""
    match = _SPAN.fullmatch(text.strip())
    if not match:
        raise ConfigError(f"--since {text!r}: a number and one of s m h d w, e.g. 1d or 12h")
    return now - datetime.timedelta(seconds=int(match.group(1)) * _UNIT[match.group(2)])


@dataclass
class HookStats:
    agent: str
    name: str
    source: str
    durations: list[int] = field(default_factory=list)
    blocks: int = 0
    asks: int = 0
    failures: int = 0
    stopped: Counter[str] = field(default_factory=Counter)

    def row(self) -> dict[str, Any]:
        ms = sorted(self.durations)
        top = self.stopped.most_common(1)
        return {
            "agent": self.agent, "hook": self.name, "source": self.source, "runs": len(ms),
            "blocks": self.blocks, "asks": self.asks, "failures": self.failures,
            "p50Ms": _percentile(ms, 50), "p95Ms": _percentile(ms, 95),
            "sandboxStopped": top[0][0] if top else None,
        }  # fmt: skip


def summarise(
    lines: Iterable[bytes], since: datetime.datetime | None = None, hook: str | None = None
) -> tuple[list[dict[str, Any]], int]:
    """(a row per hook, most runs first; how many lines were not records)."""
    stats: dict[tuple[str, str, str], HookStats] = {}
    bad = 0
    for raw in lines:
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            bad += 1
            continue
        if not isinstance(record, dict):
            bad += 1
            continue
        if since is not None and not _after(record.get("time"), since):
            continue
        found = record.get("hook")
        info: dict[str, Any] = found if isinstance(found, dict) else {}
        name = _text(info.get("name")) or "(no hook: sandboxrun's own failure)"
        if hook is not None and hook not in name:
            continue
        key = (_text(record.get("agent")), name, _text(info.get("source")))
        one = stats.setdefault(key, HookStats(*key))
        duration = record.get("durationMs")
        one.durations.append(duration if isinstance(duration, int) else 0)
        one.blocks += record.get("decision") == "block"
        one.asks += record.get("decision") == "ask"
        one.failures += record.get("status") in FAILED
        stopped = record.get("sandboxStopped")
        if isinstance(stopped, str) and stopped:
            one.stopped[_text(stopped)] += 1
    rows = [s.row() for s in stats.values()]
    rows.sort(key=lambda r: (-r["runs"], r["agent"], r["hook"]))
    return rows, bad


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as an aligned text table (hook names cut to 60 characters)."""
    if not rows:
        return "no hook runs recorded\n"
    head = ("RUNS", "BLOCKS", "ASKS", "FAILED", "P50 MS", "P95 MS", "AGENT", "SOURCE", "HOOK",
            "SANDBOX STOPPED")  # fmt: skip
    body = [
        (str(r["runs"]), str(r["blocks"]), str(r["asks"]), str(r["failures"]), str(r["p50Ms"]),
         str(r["p95Ms"]), r["agent"], r["source"], _short(r["hook"]), r["sandboxStopped"] or "")
        for r in rows
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in (head, *body)
    )


def _after(value: object, since: datetime.datetime) -> bool:
    if not isinstance(value, str):
        return False
    try:
        when = datetime.datetime.fromisoformat(value)
    except ValueError:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when >= since


def _percentile(sorted_ms: list[int], p: int) -> int:
    if not sorted_ms:
        return 0
    if len(sorted_ms) == 1:
        return sorted_ms[0]
    return round(statistics.quantiles(sorted_ms, n=100, method="inclusive")[p - 1])


def _text(value: object) -> str:
    return printable(value) if isinstance(value, str) else ""


def _short(name: str) -> str:
    return name if len(name) <= 60 else name[:59] + "…"
