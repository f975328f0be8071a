"""The runner layer: discovery -> one sandboxed run per hook, in parallel -> outcomes
-> the combined answer. Names follow Cline's design (`HookFactory`, `HookRunner`,
`CombinedHookRunner`, `NoOpHookRunner`), so Cline users recognise them.

The runner never raises for anything a hook does, and an engine failure during one
hook becomes that hook's `error` outcome, so a sibling's `cancel` survives. It never
imports docker: the backend is a seam.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loguru import logger

from ._backend import Backend
from ._claude import CLAUDE, QODER, QODER_CN
from ._cline import CARETI, CLINE
from ._dialect import WORKSPACE_SOURCES, Dialect
from ._errors import ConfigError, SandboxrunError
from ._settings import Settings
from ._types import Discovery, ExecRequest, HookOutcome, HookSpec

DIALECTS: dict[str, Dialect] = {
    "cline": CLINE,
    "careti": CARETI,
    "claude": CLAUDE,
    "qoder": QODER,
    "qoder-cn": QODER_CN,
}


@dataclass(frozen=True, slots=True)
class CombinedResult:
    """The combined answer of every hook that ran for one event."""

    answer: Mapping[str, Any]  # the dialect's fields, e.g. cancel/contextModification
    outcomes: tuple[HookOutcome, ...]

    def to_json(self) -> dict[str, Any]:
        """What `sandboxrun run` prints: the answer plus the per-hook report."""
        return {**self.answer, "hooks": [o.report() for o in self.outcomes]}


def hook_timeout(spec: HookSpec, limit: float) -> float:
    """A hook's own timeout applies, but one that comes with the workspace may only
    shorten the user's limit, never lengthen it."""
    if spec.timeout is None:
        return limit
    return min(spec.timeout, limit) if spec.source in WORKSPACE_SOURCES else spec.timeout


class HookRunner:
    """Runs one hook once in the backend and reads its answer."""

    def __init__(
        self, spec: HookSpec, backend: Backend, dialect: Dialect, settings: Settings
    ) -> None:
        self.spec, self.backend, self.dialect, self.settings = spec, backend, dialect, settings

    def run(self, stdin: bytes) -> HookOutcome:
        spec = self.spec
        timeout = hook_timeout(spec, self.settings.timeout or self.dialect.default_timeout)
        request = ExecRequest(
            argv=spec.argv,
            stdin=stdin,
            workdir=spec.workdir,
            mounts=spec.mounts,
            env=spec.env,
            timeout=timeout,
            label=f"{spec.hook_name} {spec.name}",
        )
        started = time.monotonic()
        try:
            result = self.backend.run(request)
        except SandboxrunError as exc:
            logger.error("hook {} could not run: {}", spec.name, exc)
            return HookOutcome(
                spec=spec,
                status="error",
                duration_ms=int((time.monotonic() - started) * 1000),
                error=str(exc),
            )
        trust = self.settings.trust_workspace_decisions
        outcome = self.dialect.interpret(spec, result, timeout, trust)
        keep = self.settings.stderr_report
        logger.info(
            "hook {} {} in {} ms (exit {})",
            spec.name,
            outcome.status,
            outcome.duration_ms,
            outcome.exit_code,
        )
        return replace(outcome, stderr=outcome.stderr[-keep:] if keep else "")


class CombinedHookRunner:
    """Runs several hooks concurrently, all to completion, and combines them."""

    def __init__(self, runners: Sequence[HookRunner], dialect: Dialect, fail_closed: bool):
        self.runners, self.dialect, self.fail_closed = list(runners), dialect, fail_closed

    def run(self, stdin: bytes) -> CombinedResult:
        with ThreadPoolExecutor(max_workers=max(1, len(self.runners))) as pool:
            outcomes = tuple(pool.map(lambda r: r.run(stdin), self.runners))
        if outcomes:
            slowest = max(outcomes, key=lambda o: o.duration_ms)
            logger.info("slowest hook: {} ({} ms)", slowest.spec.name, slowest.duration_ms)
        return CombinedResult(self.dialect.combine(outcomes, self.fail_closed), outcomes)


class NoOpHookRunner(CombinedHookRunner):
    """Nothing to run: the answer of no hooks."""

    def __init__(self, dialect: Dialect, fail_closed: bool = False) -> None:
        super().__init__([], dialect, fail_closed)


def resolve_workspaces(
    event: Mapping[str, Any], given: Sequence[str] = (), dialect: Dialect = CLINE
) -> list[str]:
    """Workspace roots: the given ones, else the event's (`workspaceRoots` for Cline,
    `cwd` for Claude), else the current directory."""
    roots = list(given) or dialect.event_workspaces(event) or [os.getcwd()]
    resolved = []
    for root in roots:
        if not isinstance(root, str) or not root:
            raise ConfigError(f"workspace root {root!r} is not a path")
        path = os.path.abspath(root)
        if not os.path.isdir(path):
            raise ConfigError(f"workspace {path} does not exist or is not a directory")
        if path not in resolved:  # a root given twice still has one hook folder
            resolved.append(path)
    return resolved


class HookFactory:
    """Finds the hooks for an event and returns the runner that runs them.

    >>> factory = HookFactory(Settings.load(), DockerBackend(settings))
    >>> result = factory.run("PreToolUse", event)       # doctest: +SKIP
    """

    def __init__(
        self,
        settings: Settings,
        backend: Backend,
        home: str | None = None,
        hooks_dirs: Sequence[str] = (),
    ) -> None:
        self.settings = settings
        self.hooks_dirs = tuple(hooks_dirs)  # given: only these folders are searched
        self.backend = backend
        self.dialect = DIALECTS[settings.agent]
        self.home = home if home is not None else str(Path.home())

    def discover(self, hook_name: str | None, workspaces: Sequence[str]) -> Discovery:
        return self.dialect.discover(hook_name, workspaces, self.home, self.hooks_dirs)

    def create(
        self, hook_name: str, workspaces: Sequence[str], event: Mapping[str, Any] | None = None
    ) -> CombinedHookRunner:
        found = self.discover(hook_name, workspaces).hooks
        hooks = [h for h in found if self.dialect.matches(h, event or {})]
        if not hooks:
            return NoOpHookRunner(self.dialect, self.settings.fail_closed)
        runners = [HookRunner(h, self.backend, self.dialect, self.settings) for h in hooks]
        return CombinedHookRunner(runners, self.dialect, self.settings.fail_closed)

    def prepare(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str] = ()
    ) -> tuple[CombinedHookRunner, bytes]:
        """The runner for one event's hooks, and the stdin they will read."""
        roots = resolve_workspaces(event, workspaces, self.dialect)
        stdin = self.dialect.prepare_input(hook_name, event, roots)
        return self.create(hook_name, roots, event), stdin

    def run(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str] = ()
    ) -> CombinedResult:
        """Discover, run and combine the hooks of one event."""
        runner, stdin = self.prepare(hook_name, event, workspaces)
        return runner.run(stdin)
