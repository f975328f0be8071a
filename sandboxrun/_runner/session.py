"""One event, from the agent's JSON to the answer: the rules every entry point shares.

`sandboxrun run`, the Python API (`HookFactory.run`) and any later server all answer
an event through `answer_event`, and `sandboxrun exec` through `answer_exec`; what a
failure of ours means is decided here once (`blocks`, `closed`), and every entry asks it
(`run`, `exec`, `check`):

- A requested runtime that is missing blocks, always: never a weaker run, never a pass.
- Under fail-closed, whatever keeps the hooks from running blocks: an engine that does
  not answer, a missing image, a refused workspace, malformed input, a bug of ours.
  Without it, our failure raises (the CLI prints one line and exits 2).
- The whole event has a deadline. Discovery and matching get `PREPARE_BUDGET`; the runs
  get the runner's budget (every hook's deadline, wave by wave, plus the sandbox's
  grace). Past it the answer is given at once (a block under fail-closed), the stuck
  work is abandoned and its containers removed: an agent that waits on a stalled hook
  runner gives up and lets the action through, so we must answer first.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .. import _audit
from .._backends.base import Backend
from .._dialects.base import Dialect
from .._errors import RuntimeMissing, SandboxrunError
from .._log import logger
from .._types import CombinedResult, HookOutcome

if TYPE_CHECKING:
    from .._settings import Settings
    from .._types import HookSpec


class CombinedHookRunner(Protocol):
    """What an event's prepared runs offer (`_runner.CombinedHookRunner`); a protocol, so
    the session does not import the runner that calls it."""

    @property
    def runners(self) -> Sequence[object]: ...
    @property
    def specs(self) -> Sequence[HookSpec]: ...
    def budget(self) -> float: ...
    def run(self, stdin: bytes) -> CombinedResult: ...


class HookFactory(Protocol):
    """What answering an event needs of `_runner.HookFactory`."""

    @property
    def settings(self) -> Settings: ...
    @property
    def backend(self) -> Backend: ...
    @property
    def dialect(self) -> Dialect: ...
    def prepare(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> tuple[CombinedHookRunner, bytes]: ...


PREPARE_BUDGET = 15.0  # seconds for discovery, matching and the engine's preflight
EXTRA_GRACE = 5.0


@dataclass
class _Progress:
    prepared: threading.Event
    done: threading.Event
    runner: CombinedHookRunner | None = None
    result: CombinedResult | None = None
    error: BaseException | None = None


def answer_event(
    factory: HookFactory,
    hook_name: str,
    event: Mapping[str, Any],
    workspaces: Sequence[str] = (),
) -> CombinedResult:
    """Discover, run and combine one event's hooks under the rules above; each hook's
    run goes to the audit trail when the user keeps one (`_audit`), whatever the answer."""
    try:
        result = _answer_event(factory, hook_name, event, workspaces)
    except Exception as exc:  # raised (not fail-closed): the agent goes on, recorded
        why = {"blocked": False, "reason": f"sandboxrun: hooks could not run: {exc}"}
        _record(factory, hook_name, event, CombinedResult(why, ()), failed=True)
        raise
    _record(factory, hook_name, event, result)
    return result


def _record(
    factory: HookFactory, hook_name: str, event: Mapping[str, Any], result: CombinedResult,
    failed: bool = False,
) -> None:  # fmt: skip
    settings = factory.settings
    if _audit.enabled(settings):
        records = _audit.event_records(
            settings, factory.backend, entry=getattr(factory, "entry", "api"),
            served=getattr(factory, "served", False), hook_name=hook_name, event=event,
            result=result, failed=failed,
        )  # fmt: skip
        _audit.write(settings, records)


def _answer_event(
    factory: HookFactory,
    hook_name: str,
    event: Mapping[str, Any],
    workspaces: Sequence[str] = (),
) -> CombinedResult:
    progress = _Progress(threading.Event(), threading.Event())

    def work() -> None:
        try:
            runner, stdin = factory.prepare(hook_name, event, workspaces)
            progress.runner = runner
            if runner.runners:  # no hooks, no engine: agents call us for every event
                factory.backend.check()
            progress.prepared.set()
            progress.result = runner.run(stdin)
        except BaseException as exc:  # handed to the caller's thread, judged there
            progress.error = exc
        finally:
            progress.prepared.set()
            progress.done.set()

    threading.Thread(target=work, name="sandboxrun-event", daemon=True).start()
    fail_closed = factory.settings.fail_closed
    if not progress.prepared.wait(PREPARE_BUDGET):
        why = f"finding and matching the hooks took longer than {PREPARE_BUDGET:g}s"
        return _stalled(factory, why, progress.runner)
    budget = (progress.runner.budget() if progress.runner else 0.0) + EXTRA_GRACE
    if not progress.done.wait(budget):
        return _stalled(factory, f"the hooks did not end within {budget:g}s", progress.runner)
    if progress.error is not None:
        return failure_answer(factory.dialect, fail_closed, progress.error)
    assert progress.result is not None
    return progress.result


def blocks(fail_closed: bool, *, runtime_missing: bool = False) -> bool:
    """Whether a failure of ours (the hook never ran, or the sandbox, not the hook, ended
    it) blocks, in whatever terms the entry answers (`run`'s combined answer, `exec`'s
    `Dialect.wrapper_failure`, `check`'s verdict): the rules above, written once. A
    requested runtime that is missing blocks, always; under fail-closed any failure of
    ours blocks; else it is the agent's non-blocking error (or, for `run`, raised)."""
    return runtime_missing or fail_closed


def closed(fail_closed: bool, outcomes: Sequence[HookOutcome] = ()) -> bool:
    """Whether our failures among `outcomes` block the event's answer
    (`Dialect.combine`'s `fail_closed`): `blocks`, where a hook that found the runtime
    missing makes the whole event's failures block (the runtime is the engine's: every
    hook of the event lacks it)."""
    return blocks(fail_closed, runtime_missing=any(o.runtime_missing for o in outcomes))


def failure_answer(dialect: Dialect, fail_closed: bool, exc: BaseException) -> CombinedResult:
    """The answer when the hooks could not run at all; raises when that is not ours
    to answer (no fail-closed: the caller reports our failure)."""
    if isinstance(exc, KeyboardInterrupt | SystemExit):
        raise exc
    if not isinstance(exc, SandboxrunError):
        logger.opt(exception=exc).error("internal error: {}", exc)
    if blocks(fail_closed, runtime_missing=isinstance(exc, RuntimeMissing)):
        kind = "" if isinstance(exc, SandboxrunError) else f"internal error {type(exc).__name__}: "
        reason = f"sandboxrun: hooks could not run (fail-closed): {kind}{exc}"
        logger.error("{}", reason)
        return CombinedResult(dialect.blocked_answer(reason), ())
    raise exc


def _stalled(factory: HookFactory, why: str, runner: CombinedHookRunner | None) -> CombinedResult:
    """The answer at the event's deadline: every hook that was to run counts as timed
    out (so fail-closed blocks); the stuck containers are removed."""
    logger.error("overall deadline: {}", why)
    _abort(factory.backend)
    outcomes = tuple(
        HookOutcome(spec=spec, status="timed_out", error=f"sandboxrun's overall deadline: {why}")
        for spec in (runner.specs if runner else [])
    )
    fail_closed = factory.settings.fail_closed
    if not outcomes and blocks(fail_closed):
        reason = f"sandboxrun: hooks could not run (fail-closed): {why}"
        return CombinedResult(factory.dialect.blocked_answer(reason), (), abandoned=True)
    answer = factory.dialect.combine(outcomes, fail_closed)
    return CombinedResult(answer, outcomes, abandoned=True)


def _abort(backend: Backend) -> None:
    abort = getattr(backend, "abort", None)
    if callable(abort):
        try:
            abort()
        except Exception as exc:  # cleanup never raises; `reap` sweeps what is left
            logger.warning("could not remove the stuck containers: {}", exc)
