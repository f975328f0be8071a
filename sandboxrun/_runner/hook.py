"""One hook's run in the sandbox, for `run` (`_runner.CombinedHookRunner`) and `exec`
(`_runner.exec.run_exec`) alike: the approved version bound over changed files, the preflight,
the engine's failure, the sandbox's own ending, the hint, the env file read back, and
the dialect's reading of the answer. What differs between the entries is only the reply
they build from it (`Ran`): `run` combines the outcomes, `exec` passes the hook's bytes
through, or answers the sandbox's failure in the agent's terms.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._backends.base import Backend
from .._dialects.base import Dialect, from_repository, outcome_fields, sandbox_ending
from .._errors import RuntimeMissing, SandboxrunError
from .._log import logger
from .._review.approved import NotFaithful, bound, cannot_run
from .._sandbox import envfile as _envfile
from .._sandbox import sessiontmp as _sessiontmp
from .._sandbox.hints import Hint, hint
from .._sandbox.preflight import check_hook, missing_on_start
from .._sandbox.state import hook_ids
from .._settings import Settings
from .._types import ApprovedFile, ExecRequest, ExecResult, HookOutcome, HookSpec
from .request import request_for


def hook_timeout(spec: HookSpec, limit: float) -> float:
    """A hook's own timeout applies, but one that comes with the workspace may only
    shorten the user's limit, never lengthen it."""
    if spec.timeout is None:
        return limit
    return min(spec.timeout, limit) if from_repository(spec.source) else spec.timeout


@dataclass(frozen=True, slots=True)
class Ran:
    """One hook's run as the sandbox saw it, for the entry's reply."""

    outcome: HookOutcome  # what the agent makes of it (the dialect's reading)
    result: ExecResult | None = None  # the sandbox's run, when there was one
    # Why the sandbox, not the hook, decided the end, in three kinds (in this order of
    # weight for `exec`'s reply): it never ran (`failure`: the preflight, the engine, an
    # approved version that cannot run), the sandbox ended it (`ended`: the deadline,
    # memory, output cap), or it could not start inside (`gone`: a tool the image lacks).
    failure: str | None = None
    ended: str | None = None
    gone: str | None = None
    found: Hint = field(default_factory=Hint)  # what the sandbox stopped, and why
    parsed: _envfile.Parsed | None = None  # what it wrote to CLAUDE_ENV_FILE, checked


class HookRunner:
    """Runs one hook once in the backend and reads its answer."""

    def __init__(
        self,
        spec: HookSpec,
        backend: Backend,
        dialect: Dialect,
        settings: Settings,
        env_target: str | None = None,
        session: _sessiontmp.Session | None = None,
        notes: Sequence[str] = (),
        quiet: bool = False,
    ) -> None:
        self.spec, self.backend, self.dialect, self.settings = spec, backend, dialect, settings
        self.env_target = env_target  # the agent's CLAUDE_ENV_FILE, checked (`_sandbox.envfile`)
        self.session = session  # whose /tmp it shares under tmp = "session"
        self.notes = tuple(notes)  # what the run was not given, for its report (a git folder)
        # `exec` says the sandbox's failure on stderr itself (`_runner.exec.sandbox_failure`):
        # the log's line would say it twice there.
        self.say = logger.debug if quiet else logger.error

    @property
    def timeout(self) -> float:
        return hook_timeout(self.spec, self.settings.timeout or self.dialect.default_timeout)

    def run(self, stdin: bytes) -> HookOutcome:
        """`run`'s reading of one hook: its outcome, with what it was not given."""
        spec = self.spec
        env_file = _envfile.given(self.dialect, spec.hook_name)
        prepared = request_for(
            spec, stdin, self.settings, timeout=self.timeout,
            label=f"{spec.hook_name} {spec.name}", workspace=spec.workdir,
            session=self.session, env_file=env_file,
        )  # fmt: skip
        ran = self.execute(prepared.request, spec.approved)
        outcome = ran.outcome
        if ran.parsed is not None:
            outcome = self._env_lines(outcome, ran.parsed)
        state_note = "; ".join(n for n in (*prepared.notes, *self.notes) if n) or None
        if state_note and ran.result is not None:  # state (a git folder...) asked for
            # but not given: say so
            logger.warning("hook {}: {}", spec.name, state_note)
            error = f"{outcome.error}; {state_note}" if outcome.error else state_note
            outcome = replace(outcome, error=error)
        if ran.result is not None:
            logger.info("hook {} {} in {} ms (exit {})", spec.name, outcome.status,
                        outcome.duration_ms, outcome.exit_code)  # fmt: skip
            keep = self.settings.stderr_report
            outcome = replace(outcome, stderr=outcome.stderr[-keep:] if keep else "")
        return outcome

    def execute(self, request: ExecRequest, approved: Sequence[ApprovedFile] = ()) -> Ran:
        """Run `request` (this hook's, `_runner.request.request_for`) once: with `approved`, the
        approved version of a changed hook bound over its changed files (`_review`)."""
        spec, started = self.spec, time.monotonic()
        try:
            # A changed hook's approved version (`review = "required"`): its pinned
            # bytes bound over the changed files, in a folder of ours removed after.
            with bound(approved, request.mounts) as overlays:
                ran = self._execute(replace(request, overlays=overlays), started)
            if approved and ran.outcome.status == "error":  # ours: it never ran (the
                # Kubernetes backend refuses it): the report must not say it did
                plain = replace(ran.outcome.spec, approved=(), as_approved=False)
                ran = replace(ran, outcome=replace(ran.outcome, spec=plain))
        except NotFaithful as exc:
            why = cannot_run(exc)
            logger.warning("hook {} {}", spec.name, why)
            ran = Ran(HookOutcome(spec=replace(spec, approved=(), as_approved=False),
                                  status="error", error=why), failure=why)  # fmt: skip
        finally:
            parsed = (
                _envfile.collect(
                    request.env_file, self.settings.env_file_allow, _envfile.places(request)
                )
                if request.env_file
                else None
            )
        return replace(ran, parsed=parsed) if ran.result is not None else ran

    def _execute(self, request: ExecRequest, started: float) -> Ran:
        spec, timeout, stdin = self.spec, request.timeout, request.stdin
        try:
            ids = hook_ids(self.settings.user)
            # Not for an approved version run in place of changed files: the check
            # reads the files there now, not the approved ones that run.
            missing = (None if request.overlays
                       else check_hook(spec, self.backend, ids, self.settings.groups))  # fmt: skip
            if missing is not None:  # it would exit 127 inside: never a silent allow
                self.say("hook {} not run: {}", spec.name, missing)
                return Ran(HookOutcome(spec=spec, status="error", error=f"not run: {missing}"),
                           failure=f"the hook cannot start: {missing}")  # fmt: skip
            result = self.backend.run(request)
        except SandboxrunError as exc:
            self.say("hook {} could not run: {}", spec.name, exc)
            outcome = HookOutcome(spec=spec, status="error", error=str(exc),
                                  duration_ms=int((time.monotonic() - started) * 1000))  # fmt: skip
            outcome = replace(outcome, runtime_missing=isinstance(exc, RuntimeMissing))
            return Ran(outcome, failure=f"the sandbox could not run the hook: {exc}")
        ended = sandbox_ending(result, timeout)
        gone = missing_on_start(result.stderr, result.exit_code, stdin)
        if gone:  # the host has what the sandbox lacks: the sandbox's failure, no answer
            self.say("hook {} could not start: {}", spec.name, gone)
            outcome = HookOutcome(status="error", error=f"the hook cannot start: {gone}",
                                  **outcome_fields(spec, result))  # fmt: skip
        else:
            trust = self.settings.trust_workspace_decisions
            outcome = self.dialect.interpret(spec, result, timeout, trust)
        if result.warm:
            outcome = replace(outcome, warm=True)
        # What the sandbox stopped, named whatever the hook answered (a hint: the answer
        # and status stay the hook's); the sentence goes in `error` when the hook failed,
        # or the proxy refused it something (whatever it made of the 403).
        found = hint(
            result.stderr, failed=outcome.status == "failed", refused=result.refused_hosts,
            network=self.settings.network, event=stdin,
        )  # fmt: skip
        if found.stopped:
            outcome = replace(outcome, sandbox_stopped=found.stopped)
        if result.refused_hosts:
            outcome = replace(outcome, refused_hosts=result.refused_hosts)
        wall = found.sentence if outcome.status == "failed" or result.refused_hosts else None
        if wall:
            outcome = replace(outcome, error=f"{outcome.error}; {wall}" if outcome.error else wall)
        return Ran(outcome, result, ended=f"hook {ended[1]}" if ended else None,
                   gone=gone or None, found=found)  # fmt: skip

    def _env_lines(self, outcome: HookOutcome, parsed: _envfile.Parsed) -> HookOutcome:
        """What the hook wrote to CLAUDE_ENV_FILE: the lines to copy (kept on the
        outcome for `CombinedHookRunner`), in the report with what was refused."""
        if not parsed.accepted and not parsed.refused:
            return outcome
        report: dict[str, Any] = parsed.report()
        lines = tuple(parsed.lines())
        why = None
        if not _envfile.hands_on(self.spec.source):
            why = "a workspace hook's lines never reach the agent"
        elif self.env_target is None:
            why = "no --env-file given"
        elif outcome.status != "completed":
            why = f"the hook {outcome.status}"
        if why and lines:
            report = {**report, "copied": [], "notCopied": f"{report['copied']}: {why}"}
            lines = ()
        notes = [f"CLAUDE_ENV_FILE {r}: refused" for r in parsed.refused]
        if why and parsed.accepted:
            notes.append(f"CLAUDE_ENV_FILE not copied: {why}")
        error = "; ".join(e for e in (outcome.error, *notes) if e) or None
        return replace(outcome, env_file=report, env_lines=lines, error=error)
