"""Replaying event lines through the hooks and judging each answer.

Each line is answered by `_runner.session.answer_event`, the path `sandboxrun run` and the API
take: the same discovery, matchers, sandbox, deadlines and fail-closed rules; nothing is
decided here that the dialect does not decide. What is added is the verdict of the gate:

- `blocked` / `denied` / `stopped`: a hook's own answer blocks (Cline `cancel`; Claude
  exit 2, `deny`, `decision: "block"`, `continue: false`), named with the hooks that gave it
  (and what the sandbox stopped them, when their stderr shows it: `sandboxStopped`);
- `failed`: under fail-closed (the default), a hook failed, timed out, or could not
  start (`error`), or a handler that applies cannot be run (`http`...); named;
- `error`: sandboxrun could not run the hooks at all (engine, image, workspace);
- `unreadable config`: a config file that would hold hooks for the event (or an entry
  of one) could not be read (`CombinedResult.skipped`): the policy is not what was
  checked, so the gate fails, fail-open or not; named with the files;
- `unreadable`: the line is not an event (its `EventLine.problem`);
- passing: `allowed`, `ask` (the agent would ask a person: not a block), `no hooks`,
  and `failure ignored` (under `--fail-open`, a hook failed or a handler was not run).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._dialects.base import Dialect
from .._runner.factory import HookFactory
from .._runner.session import answer_event, closed
from .._text import printable
from .._types import CombinedResult, HookOutcome
from .events import EventLine

PASSING = frozenset({"allowed", "ask", "no hooks", "failure ignored"})


@dataclass(frozen=True, slots=True)
class LineResult:
    """What the gate made of one line of the events file."""

    line: EventLine
    decision: str
    duration_ms: int = 0
    hooks: tuple[str, ...] = ()  # the hooks behind the decision; when passed, all that ran
    reason: str = ""  # one line: why it did not pass (or what was ignored)
    outcomes: tuple[HookOutcome, ...] = ()
    document: Mapping[str, Any] = field(default_factory=dict)  # what `run` would print
    abandoned: bool = False  # the event's deadline passed with work still stuck

    @property
    def passed(self) -> bool:
        return self.decision in PASSING


def replay(
    factory: HookFactory,
    lines: Sequence[EventLine],
    workspaces: Sequence[str],
    on_start: Callable[[int, EventLine], None] = lambda i, line: None,
    on_done: Callable[[int, LineResult], None] = lambda i, result: None,
) -> list[LineResult]:
    """Every line in order, one event at a time (each event's hooks run in parallel)."""
    results = []
    for index, line in enumerate(lines):
        on_start(index, line)
        result = replay_line(factory, line, workspaces)
        on_done(index, result)
        results.append(result)
    return results


def replay_line(factory: HookFactory, line: EventLine, workspaces: Sequence[str]) -> LineResult:
    if line.problem is not None or line.hook_name is None:
        return LineResult(line, "unreadable", reason=line.problem or "no event")
    started = time.monotonic()
    try:
        result = answer_event(factory, line.hook_name, line.event, workspaces)
    except Exception as exc:  # ours, raised under --fail-open: never a pass
        ms = int((time.monotonic() - started) * 1000)
        why = " ".join(str(exc).split()) or type(exc).__name__
        return LineResult(line, "error", ms, reason=printable(f"hooks could not run: {why}"))
    ms = int((time.monotonic() - started) * 1000)
    return judge(factory.dialect, factory.settings.fail_closed, line, result, ms)


def judge(
    dialect: Dialect, fail_closed: bool, line: EventLine, result: CombinedResult, ms: int
) -> LineResult:
    """The gate's verdict on one answered event (module docstring)."""
    answer, outcomes = result.answer, result.outcomes
    common: dict[str, Any] = {
        "duration_ms": ms, "outcomes": outcomes, "document": result.to_json(),
        "abandoned": result.abandoned,
    }  # fmt: skip
    if result.skipped:
        paths = tuple(dict.fromkeys(s.path for s in result.skipped))
        reason = printable("; ".join(f"{s.path}: could not be read: {s.reason}"
                                     for s in result.skipped))  # fmt: skip
        return LineResult(line, "unreadable config", hooks=paths, reason=reason, **common)
    failed = [o for o in outcomes if o.status != "completed" and not o.spec.run_async]
    # A hook blocks when its answer alone, read by the dialect, blocks.
    deciders = [
        o for o in outcomes if o.status == "completed" and blocks(dialect.combine([o], False))
    ]
    if deciders:
        if "deny" in (answer.get("permissionDecision"), answer.get("decision")):  # (Gemini's)
            decision = "denied"
        elif answer.get("continue") is False:
            decision = "stopped"
        else:
            decision = "blocked"
        reason = "; ".join(r for r in (reason_of(answer), _stopped(deciders)) if r)
        return LineResult(line, decision, hooks=_names(deciders), reason=reason, **common)
    if failed and closed(fail_closed, failed):
        return LineResult(line, "failed", hooks=_names(failed), reason=_failures(failed), **common)
    unrun = tuple(s.spec.name if s.spec else s.path for s in result.not_run)
    if blocks(answer):  # a block that no hook's answer explains: ours, or an unrun handler
        decision = "failed" if unrun else "error"
        return LineResult(line, decision, hooks=unrun, reason=reason_of(answer), **common)
    if failed or unrun:
        why = [_failures(failed)] if failed else []
        why += [f"{s.spec.name if s.spec else s.path}: not run: {s.reason}" for s in result.not_run]
        reason = printable(f"ignored (--fail-open): {'; '.join(why)}")
        hooks = (*_names(failed), *unrun)
        return LineResult(line, "failure ignored", hooks=hooks, reason=reason, **common)
    if not outcomes:
        return LineResult(line, "no hooks", **common)
    asks = "ask" in (answer.get("permissionDecision"), answer.get("decision"))
    decision = "ask" if asks else "allowed"
    return LineResult(line, decision, hooks=_names(outcomes), **common)


def blocks(answer: Mapping[str, Any]) -> bool:
    """Whether an answer (either family's fields) stops what the agent was doing."""
    return answer.get("cancel") is True or answer.get("blocked") is True


def reason_of(answer: Mapping[str, Any]) -> str:
    """The answer's own words for a block, in any family's fields, on one line."""
    for key in ("errorMessage", "reason", "stopReason", "agent_message", "user_message"):
        text = answer.get(key)
        if isinstance(text, str) and text.strip():
            return printable(" | ".join(part.strip() for part in text.strip().splitlines()))
    return ""


def _names(outcomes: Sequence[HookOutcome]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(o.spec.name for o in outcomes))


def _stopped(outcomes: Sequence[HookOutcome]) -> str:
    """What the sandbox stopped the hooks behind a decision, if their stderr shows it (a
    hint beside the decision: a block may be the hook's answer to a sandbox wall)."""
    stopped = dict.fromkeys(o.sandbox_stopped for o in outcomes if o.sandbox_stopped)
    return printable(f"sandbox stopped: {', '.join(stopped)}") if stopped else ""


def _failures(outcomes: Sequence[HookOutcome]) -> str:
    """Why hooks failed: each one's error (named when there are several)."""
    errors = [o.error or o.status for o in outcomes]
    if len(outcomes) > 1:
        errors = [f"{o.spec.name}: {e}" for o, e in zip(outcomes, errors, strict=True)]
    return printable(" ".join("; ".join(errors).split()))
