"""The values that cross the seams: dialect -> runner -> backend and back.

Frozen, slotted dataclasses: cheap to build, safe to share between threads.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["completed", "failed", "timed_out", "error"]


@dataclass(frozen=True, slots=True)
class ExecRequest:
    """One command to run once, in isolation."""

    argv: tuple[str, ...]
    stdin: bytes
    workdir: str
    mounts: tuple[str, ...] = ()  # host paths, mounted read-only at the same path
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 30.0
    label: str = ""  # what the logs call it (hook name or command)
    state: str | None = None  # host folder mounted read-write as $HOME (`_sandbox.state`), if any
    tmp: str | None = None  # host folder mounted read-write at /tmp (`_sandbox.sessiontmp`), if any
    # A host file of ours bound read-write at `_sandbox.envfile.TARGET` (CLAUDE_ENV_FILE), if any.
    env_file: str | None = None
    # Private writable folders at these paths (CLAUDE_PLUGIN_DATA): (path inside, host
    # folder of ours bound there, or None for an empty tmpfs).
    private_dirs: tuple[tuple[str, str | None], ...] = ()
    # Files of ours bound read-only over a mounted file: (path inside, host file). The
    # approved version of a changed repository hook run in its place (`_review.approved`).
    overlays: tuple[tuple[str, str], ...] = ()
    # Set when whoever asked for this run has gone (`serve`: its client hung up): the
    # backend removes the run's sandbox at once (`on_cancel`). Not part of what is run.
    cancel: Cancel | None = field(default=None, compare=False, repr=False)

    def on_cancel(self, stop: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
        """While in the block, `stop()` is called when the run is cancelled (at once if
        it already was): the backend's way to remove the sandbox it made for this run."""
        return self.cancel.calling(stop) if self.cancel else contextlib.nullcontext()


class Cancel:
    """A flag that whoever asked for some runs has gone, and what to do then.

    `serve` makes one per request and sets it when the client's connection closes: the
    backend removes that request's sandboxes (`ExecRequest.on_cancel`), never another
    client's on the same backend, and nothing the runs did is handed on (an env file).
    `probe`: asked by `is_set` whether it should be set now (the connection's state),
    so a check right before a side effect sees a hang-up that no watcher reported yet.
    Thread-safe; each callback runs once, outside the lock."""

    def __init__(self, probe: Callable[[], bool] | None = None) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._calls: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._probe = probe

    def set(self) -> None:
        with self._lock:
            if self._set:
                return
            self._set = True
            calls, self._calls = list(self._calls.values()), {}
        for call in calls:
            call()

    def is_set(self) -> bool:
        if not self._set and self._probe is not None and self._probe():
            self.set()
        return self._set

    @contextlib.contextmanager
    def calling(self, call: Callable[[], None]) -> Iterator[None]:
        with self._lock:
            now = self._set
            key, self._next = self._next, self._next + 1
            if not now:
                self._calls[key] = call
        if now:
            call()
        try:
            yield
        finally:
            with self._lock:
                self._calls.pop(key, None)


@dataclass(frozen=True, slots=True)
class ExecResult:
    """What happened to one command. Never describes *our* failures (those raise)."""

    exit_code: int | None
    stdout: bytes  # the tail, at most Settings.stdout_tail bytes
    stderr: bytes  # the tail
    duration_ms: int
    timed_out: bool = False
    oom_killed: bool = False
    output_truncated: bool = False  # bytes were dropped, or the hook was killed for output
    killed_reason: str | None = None  # why we killed it before its deadline, if we did
    start_error: str | None = None  # the sandbox could not start the hook: why
    refused_hosts: tuple[str, ...] = ()  # network allowlist: hosts the proxy refused it
    warm: bool = False  # ran in a container started ahead of time (a pool), not a cold one


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One hook found by discovery, ready to run."""

    hook_name: str  # the event, e.g. PreToolUse
    name: str  # what the report calls it: a path or a command
    source: str  # global/workspace (cline); user/project/local (claude)
    argv: tuple[str, ...]
    workdir: str
    mounts: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None  # None: the settings' timeout
    matcher: str | None = None  # claude family: which tool/source/... the hook applies to
    condition: str | None = None  # claude family: the `if` permission rule, e.g. Bash(git *)
    run_async: bool = False  # claude family: `async`: the agent does not wait for its answer
    once: bool = False  # claude family: `once` (sandboxrun has no session: runs every time)
    kind: str = "command"  # claude family: the handler type; only `command` is ever run
    plugin: str | None = None  # claude family: the plugin id (name@marketplace) of a plugin hook
    fail_closed: bool = False  # cursor: the entry's `failClosed`: its failure blocks
    loop_limit: int | None = None  # cursor: stop/subagentStop follow-ups allowed (None: no limit)
    # gemini: its entry says `sequential`: the agent runs the event's hooks one after
    # another, each reading the input as the earlier ones' answers changed it
    sequential: bool = False
    # a repository hook new or changed since the user approved it (`_review`): the
    # status its report shows (new, changed, renamed, mode, awaiting review, removed)
    review: str | None = None
    # Under review = "required", a changed hook with an approved earlier version: the
    # approved bytes of its changed files, run in their place (`_review.approved`).
    approved: tuple[ApprovedFile, ...] = ()
    # ... and its entry's fields (`_review.fields`) as approved: set whenever its approved
    # version runs, also when only those fields changed (no file in `approved`).
    as_approved: bool = False
    # gemini, copilot: the entry's own `env` map (the pairs it sets, also in `env`), which
    # the pin holds (`_review.fields`): not the variables sandboxrun sets
    entry_env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ApprovedFile:
    """The approved bytes of one file a hook names, for a run in place of its changed
    version: `path` is the file's real path on the host (inside the workspace)."""

    path: str
    data: bytes = field(repr=False)
    mode: int = 0o644


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that looks like a hook but is not one, and why."""

    path: str
    source: str
    reason: str
    # A handler that applies to events but is never run (an `http` hook...): `run` reports
    # it beside the hooks of each event it matches.
    spec: HookSpec | None = None
    # A config file, or an entry of one, that holds policy sandboxrun could not read
    # (`_dialects.files`): named in every report, fails `check`, blocks under fail-closed.
    unreadable: bool = False

    def report(self) -> dict[str, str]:
        """The element of a report's `skipped` array (DESIGN.md §3.1)."""
        return {"path": self.path, "source": self.source, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Discovery:
    hooks: tuple[HookSpec, ...]
    skipped: tuple[Skipped, ...] = ()


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """One hook's run as the user sees it, plus the dialect's reading of its answer."""

    spec: HookSpec
    status: Status
    exit_code: int | None = None
    duration_ms: int = 0
    oom_killed: bool = False
    output_truncated: bool = False
    error: str | None = None
    stderr: str = ""
    answer: Mapping[str, Any] = field(default_factory=dict)
    refused_hosts: tuple[str, ...] = ()  # network allowlist: hosts the proxy refused
    sandbox_stopped: str | None = None  # what the sandbox stopped, a hint (`_sandbox.hints`)
    warm: bool = False  # ran in a container started ahead of time (the warm path)
    # The engine lacks the runtime asked for: it blocks, whatever fail_closed (`_runner.session`)
    runtime_missing: bool = False
    env_file: Mapping[str, Any] | None = None  # CLAUDE_ENV_FILE: names copied, lines refused
    env_lines: tuple[str, ...] = ()  # ... and the lines to append to the agent's file

    def report(self) -> dict[str, Any]:
        """The element of the `hooks` array in the CLI's JSON (DESIGN.md §3.1)."""
        document: dict[str, Any] = {
            "name": self.spec.name,
            "source": self.spec.source,
            "status": self.status,
            "exitCode": self.exit_code,
            "durationMs": self.duration_ms,
            "oomKilled": self.oom_killed,
            "outputTruncated": self.output_truncated,
            "error": self.error,
            "stderr": self.stderr,
            "warm": self.warm,
        }
        if self.refused_hosts:  # only on an allowlist: the key stays out of other reports
            document["refusedHosts"] = list(self.refused_hosts)
        if self.sandbox_stopped:  # only when the hook's stderr or the proxy shows it
            document["sandboxStopped"] = self.sandbox_stopped
        if self.env_file:  # only for hooks that wrote CLAUDE_ENV_FILE
            document["envFile"] = dict(self.env_file)
        if self.spec.review:  # only for a repository hook not as approved (`_review`)
            document["review"] = self.spec.review
            ran = bool(self.spec.approved) or self.spec.as_approved
            document["reviewNote"] = review_note(self.spec.review, ran)
            if ran:  # the changed hook did not run: its approved version did
                document["ranApproved"] = True
        return document


def review_note(status: str, ran_approved: bool = False) -> str:
    """The sentence a report gives beside a hook's `review` status."""
    if ran_approved:
        return (
            "changed since approved, awaiting review: its approved version ran in its"
            " place (run `sandboxrun review`)"
        )
    if status == "awaiting review":
        return "awaiting review: run `sandboxrun review`"
    if status == "removed":  # an approved hook a change deleted or narrowed (`_review.removed`)
        return "removed since approved: awaiting review (run `sandboxrun review`)"
    if status == "new":
        return "new since your approvals: pinned on first sight (review = warn)"
    what = "changed" if status == "changed" else f"{status} (content unchanged)"
    return f"{what} since approved: run `sandboxrun review`"


@dataclass(frozen=True, slots=True)
class CombinedResult:
    """The combined answer of every hook that ran for one event."""

    answer: Mapping[str, Any]  # the dialect's fields, e.g. cancel/contextModification
    outcomes: tuple[HookOutcome, ...]
    not_run: tuple[Skipped, ...] = ()  # handlers for this event that are never run, and why
    # Config files (or entries) that would hold hooks for this event and could not be read
    skipped: tuple[Skipped, ...] = ()
    # The answer was given at the event's overall deadline while work was still stuck:
    # a process should exit rather than wait for it.
    abandoned: bool = False

    def to_json(self) -> dict[str, Any]:
        """What `sandboxrun run` prints: the answer plus the per-hook report (and, when
        there are any, the files it could not read, `skipped`, and the handlers it did
        not run, `notRun`)."""
        document = {**self.answer, "hooks": [o.report() for o in self.outcomes]}
        if self.skipped:
            document["skipped"] = [s.report() for s in self.skipped]
        if self.not_run:
            document["notRun"] = [
                {"name": s.spec.name if s.spec else s.path, "source": s.source,
                 "reason": s.reason}
                for s in self.not_run
            ]  # fmt: skip
        return document
