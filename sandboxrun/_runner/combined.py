"""The combined run of an event's hooks: each hook's `HookRunner`, at most `parallel` at
once (in turn where the agent runs them in turn), all to completion, then the dialect's
combined answer (`CombinedHookRunner`; `NoOpHookRunner` when there is nothing to run).
`factory.HookFactory` builds them."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from .._dialects.base import Dialect
from .._log import logger
from .._sandbox import envfile as _envfile
from .._types import Cancel, CombinedResult, HookOutcome, HookSpec, Skipped
from .hook import HookRunner
from .session import blocks, closed

# Seconds a run may take beyond its hook's deadline: the kill, the stream's end and the
# container's removal (the backend's own grace is 10 s for a stream that hangs).
RUN_GRACE = 25.0


class CombinedHookRunner:
    """Runs several hooks concurrently (at most `parallel` at once), all to completion,
    and combines them with the outcomes of hooks that were `not_run`. `cancel`: set when
    whoever asked has gone (`serve`: its client hung up): nothing reaches the env file."""

    def __init__(
        self,
        runners: Sequence[HookRunner],
        dialect: Dialect,
        fail_closed: bool,
        parallel: int = 4,
        not_run: Sequence[HookOutcome] = (),
        never_run: Sequence[Skipped] = (),
        cancel: Cancel | None = None,
        unread: Sequence[Skipped] = (),
        hook_name: str = "",
    ):
        self.runners, self.dialect, self.fail_closed = list(runners), dialect, fail_closed
        self.parallel, self.not_run = max(1, parallel), tuple(not_run)
        self.never_run = tuple(never_run)  # handlers sandboxrun never runs (http...), reported
        self.cancel = cancel
        # Config files or entries that would hold `hook_name`'s hooks and could not be read
        self.unread, self.hook_name = tuple(unread), hook_name

    @property
    def specs(self) -> list[HookSpec]:
        return [r.spec for r in self.runners]

    def budget(self) -> float:
        """Seconds by which every hook has ended or been killed: the waves of parallel
        runs, each as long as the longest hook deadline, plus the sandbox's grace."""
        if not self.runners:
            return 0.0
        if self._sequential() or self._in_order():
            return sum(r.timeout + RUN_GRACE for r in self.runners)
        longest = max(r.timeout for r in self.runners)
        waves = -(-len(self.runners) // self.parallel)
        return waves * (longest + RUN_GRACE)

    def _sequential(self) -> bool:
        """Gemini: one entry of the event that says `sequential` makes all run in turn
        (each reads what the earlier ones made of the event: `Dialect.next_input`)."""
        return any(r.spec.sequential for r in self.runners)

    def _in_order(self) -> bool:
        """The agent runs this event's hooks one after another and starts none after a
        block (`Dialect.sequential`: Copilot's preToolUse)."""
        return len(self.runners) > 1 and self.dialect.sequential(self.hook_name)

    def run(self, stdin: bytes) -> CombinedResult:
        outcomes: tuple[HookOutcome, ...] = ()
        stopped: tuple[Skipped, ...] = ()  # not started: an earlier hook blocked
        if self._in_order():
            ran: list[HookOutcome] = []
            for i, runner in enumerate(self.runners):
                ran.append(runner.run(stdin))
                # As the agent reads them so far (with fail-closed: a failure blocks too)
                if self.dialect.combine(ran, closed(self.fail_closed, ran)).get("blocked"):
                    stopped = tuple(self._stopped(r, ran[-1]) for r in self.runners[i + 1 :])
                    break
            outcomes = tuple(ran)
        elif self._sequential():
            done: list[HookOutcome] = []
            for runner in self.runners:  # each reads what the earlier ones made of it
                done.append(runner.run(stdin))
                stdin = self.dialect.next_input(stdin, done[-1])
            outcomes = tuple(done)
        elif len(self.runners) == 1:  # the usual event: no pool thread to start and join
            outcomes = (self.runners[0].run(stdin),)
        elif self.runners:
            workers = min(self.parallel, len(self.runners))
            with ThreadPoolExecutor(max_workers=workers) as pool:
                outcomes = tuple(pool.map(lambda r: r.run(stdin), self.runners))
        self._copy_env(outcomes)
        outcomes += self.not_run
        if outcomes:
            slowest = max(outcomes, key=lambda o: o.duration_ms)
            logger.info("slowest hook: {} ({} ms)", slowest.spec.name, slowest.duration_ms)
        # Under fail-closed a handler that applies here but cannot be run (http, prompt...)
        # is a hook that could not start: it blocks, naming itself; it stays in `notRun`.
        unrun = tuple(
            HookOutcome(spec=k.spec, status="error", error=f"not run: {k.reason}")
            for k in self.never_run
            if blocks(self.fail_closed) and k.spec is not None
        )
        # ... and so is a config file (or entry) that could not be read: the hooks it
        # would hold are unknown, so it blocks in the agent's terms, naming the file.
        lost = tuple(unread_outcome(k, self.hook_name) for k in self.unread
                     if blocks(self.fail_closed))  # fmt: skip
        answer = self.dialect.combine(outcomes + unrun + lost, closed(self.fail_closed, outcomes))
        return CombinedResult(answer, outcomes, not_run=self.never_run + stopped,
                              skipped=self.unread)  # fmt: skip

    def _stopped(self, runner: HookRunner, blocker: HookOutcome) -> Skipped:
        """A hook not started because `blocker` blocked before it (`_in_order`)."""
        why = f"{blocker.spec.name} blocked first" if blocker.status == "completed" else (
            f"{blocker.spec.name} {blocker.status} (fail-closed: a block)")  # fmt: skip
        reason = (f"not run: {why}; the agent starts none of this event's hooks after a"
                  " block")  # fmt: skip
        logger.info("hook {} {}", runner.spec.name, reason)
        return Skipped(runner.spec.name, runner.spec.source, reason, runner.spec)

    def _copy_env(self, outcomes: Sequence[HookOutcome]) -> None:
        """Append what the hooks handed on through CLAUDE_ENV_FILE to the agent's file,
        in configuration order (`HookRunner._env_lines` kept only what may go there)."""
        target = next((r.env_target for r in self.runners if r.env_target), None)
        lines = [line for o in outcomes for line in o.env_lines]
        # A run whose hooks ended before their client hung up: the hooks completed, but
        # their answer goes nowhere, so neither do their lines (as `exec`'s, `run_exec`).
        if self.cancel is not None and self.cancel.is_set():
            if lines:
                logger.info("CLAUDE_ENV_FILE not copied: the caller went away")
            return
        if target and lines:
            try:
                _envfile.append(target, lines)
            except OSError as exc:
                logger.error("could not append to {}: {}", target, exc)


class NoOpHookRunner(CombinedHookRunner):
    """Nothing to run: the answer of no hooks (and the report of handlers never run)."""

    def __init__(
        self, dialect: Dialect, fail_closed: bool = False, never_run: Sequence[Skipped] = (),
        unread: Sequence[Skipped] = (), hook_name: str = "",
    ) -> None:  # fmt: skip
        super().__init__([], dialect, fail_closed, never_run=never_run, unread=unread,
                         hook_name=hook_name)  # fmt: skip


def unread_outcome(skipped: Skipped, hook_name: str) -> HookOutcome:
    """A config file (or entry) that could not be read, as a hook of `hook_name` that
    could not start in its place (what fail-closed blocks on: `Dialect.combine`)."""
    spec = HookSpec(hook_name=hook_name, name=skipped.path, source=skipped.source, argv=(),
                    workdir="", mounts=())  # fmt: skip
    return HookOutcome(spec=spec, status="error", error=f"could not be read: {skipped.reason}")
