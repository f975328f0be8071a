"""The dialect seam: one agent family's hook protocol, as pure functions.

A dialect knows where hooks live, what the hook reads on stdin, how stdout,
stderr and the exit code become an answer, and how several answers combine. It
never touches Docker or threads. Agent variants (careti, qoder...) are instances
of the same dialect class with other data, not other code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ._types import Discovery, ExecResult, HookOutcome, HookSpec, Status


class Dialect(Protocol):
    @property
    def agent(self) -> str:
        """The agent's name, as `--agent` spells it."""

    @property
    def default_timeout(self) -> float:
        """Seconds a hook may run when neither it nor the settings say otherwise."""

    @property
    def hook_names(self) -> tuple[str, ...]:
        """The event names this agent knows."""

    @property
    def project_dir_var(self) -> str | None:
        """The variable naming the project root for hooks (claude family), or None."""

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        """The workspace roots an event names (before --workspace and the cwd)."""

    def discover(
        self,
        hook_name: str | None,
        workspaces: Sequence[str],
        home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:
        """Every hook configured for `hook_name` (all names if None), and near-misses."""

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """Whether a discovered hook applies to this event (matchers)."""

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The bytes the hook reads on stdin: the event with base fields filled in."""

    def interpret(self, spec: HookSpec, result: ExecResult, timeout: float) -> HookOutcome:
        """What the agent makes of one hook's run."""

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """The agent's combination of several hooks' answers (without the report)."""

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        """The answer that blocks, in this agent's terms (for fail-closed errors)."""


def unique_mounts(paths: Sequence[str]) -> tuple[str, ...]:
    """Paths in order, dropping repeats and paths inside an earlier one."""
    kept: list[str] = []
    for p in paths:
        if not any(p == k or Path(p).is_relative_to(k) for k in kept):
            kept.append(p)
    return tuple(kept)


def sandbox_ending(result: ExecResult, timeout: float) -> tuple[Status, str] | None:
    """(status, why) when the sandbox, not the hook, decided how the run ended:
    the deadline, the output cap, the memory limit, a hook it could not start. None when
    the hook exited itself."""
    if result.start_error:
        return "failed", f"could not be started by the sandbox: {result.start_error}"
    if result.timed_out:
        return "timed_out", f"timed out after {timeout:g}s and was killed"
    if result.killed_reason:
        return "failed", result.killed_reason
    if result.oom_killed:
        return "failed", "was killed: out of memory"
    if result.exit_code is None:
        return "failed", "ended without an exit code"
    return None


def outcome_fields(spec: HookSpec, result: ExecResult) -> dict[str, Any]:
    """The fields of a `HookOutcome` that every dialect reads the same way."""
    return {
        "spec": spec,
        "exit_code": result.exit_code,
        "duration_ms": result.duration_ms,
        "oom_killed": result.oom_killed,
        "output_truncated": result.output_truncated,
        "stderr": result.stderr.decode("utf-8", "replace"),
    }
