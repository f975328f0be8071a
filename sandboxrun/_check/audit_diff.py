"""`check --diff AUDIT_LOG`: where today's hooks decide differently from what the audit
trail recorded for the same tool call.

Lines join on (tool-use id, event): the audit line's `toolUseId` and `event`
(`_audit`), the replayed event's `tool_use_id` and hook name. What was recorded for a
call is the strongest of its hooks' decisions (block > ask > allow); a hook that failed
or did not run, with no hook deciding, was `failed`. Today's is the gate's verdict on
the line (`replay.judge`). Lines without a tool-use id, or with none recorded, are only
counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._text import printable
from .replay import LineResult

_NOW = {"denied": "block", "blocked": "block", "stopped": "block", "ask": "ask",
        "allowed": "allow", "no hooks": "allow", "failure ignored": "allow"}  # fmt: skip
_RANK = {"block": 3, "ask": 2, "allow": 1, "failed": 0}


@dataclass(frozen=True, slots=True)
class Difference:
    line: int
    event: str
    tool_use_id: str
    recorded: str
    now: str
    why: str  # the recorded hooks and reason behind the recorded decision


def recorded(lines: Iterable[bytes]) -> dict[tuple[str, str], tuple[str, str]]:
    """(tool-use id, event) -> (the recorded decision, which hooks said it, why)."""
    found: dict[tuple[str, str], list[dict[str, object]]] = {}
    for raw in lines:
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        use, event = record.get("toolUseId"), record.get("event")
        if isinstance(use, str) and isinstance(event, str):
            found.setdefault((use, event), []).append(record)
    out = {}
    for key, records in found.items():
        decisions = [_decision(r) for r in records]
        best = max(decisions, key=lambda d: _RANK[d])
        said = [r for r, d in zip(records, decisions, strict=True) if d == best]
        names = ", ".join(
            str(h.get("name")) for r in said if isinstance(h := r.get("hook"), dict)
        )  # fmt: skip
        reason = next((str(r["reason"]) for r in said if r.get("reason")), "")
        out[key] = (best, printable(f"{names}: {reason}" if reason else names))
    return out


def _decision(record: dict[str, object]) -> str:
    """One hook's recorded decision: a hook with no opinion that completed allowed."""
    decision = record.get("decision")
    if decision in ("block", "ask", "allow"):
        return str(decision)
    return "allow" if record.get("status") == "completed" else "failed"


def differences(
    results: Sequence[LineResult], audit: dict[tuple[str, str], tuple[str, str]]
) -> tuple[list[Difference], int]:
    """(the calls decided otherwise today, how many lines had no recorded counterpart)."""
    diffs, unmatched = [], 0
    for result in results:
        use = result.line.event.get("tool_use_id")
        key = (str(use), str(result.line.hook_name))
        if use is None or key not in audit:
            unmatched += 1
            continue
        then, why = audit[key]
        now = _NOW.get(result.decision, "failed")
        if now != then:
            diffs.append(Difference(result.line.number, key[1], key[0], then, now, why))
    return diffs, unmatched


def report(diffs: Sequence[Difference], unmatched: int, total: int) -> str:
    lines = [
        f"DIFF line {d.line} {d.event} {printable(d.tool_use_id)}: recorded {d.recorded}"
        f"{f' ({d.why})' if d.why else ''}, now {d.now}\n"
        for d in diffs
    ]
    matched = total - unmatched
    lines.append(
        f"audit diff: {len(diffs)} of {matched} recorded call(s) decided differently today"
        f" ({unmatched} line(s) not in the audit trail)\n"
    )
    return "".join(lines)
