"""The runner layer: discovery -> one sandboxed run per hook, in parallel -> outcomes
-> the combined answer. Names follow Cline's design (`HookFactory`, `HookRunner`,
`CombinedHookRunner`, `NoOpHookRunner`), so Cline users recognise them.

The runner never raises for anything a hook does, and an engine failure during one
hook becomes that hook's `error` outcome, so a sibling's `cancel` survives. It never
imports docker: the backend is a seam.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .. import _review
from .._backends.base import Backend
from .._cache import cached
from .._dialects.base import Dialect, from_repository, unique_mounts
from .._dialects.files import unread_note
from .._dialects.registry import dialect_of
from .._dialects.registry import load as load_dialect
from .._errors import ConfigError, PatternError
from .._log import logger
from .._sandbox import envfile as _envfile
from .._sandbox import sessiontmp as _sessiontmp
from .._sandbox.mounts import agent_transcript, check_root, for_tenant, git_folders, workspace_root
from .._settings import Settings, account_home
from .._types import Cancel, CombinedResult, Discovery, HookOutcome, HookSpec, Skipped
from .combined import CombinedHookRunner, NoOpHookRunner
from .hook import HookRunner as HookRunner  # (the runner of one hook: `_runner.hook`)
from .hook import hook_timeout as hook_timeout
from .session import answer_event


def unread_of(discovery: Discovery) -> tuple[Skipped, ...]:
    """What `discovery` could not read (`Skipped.unreadable`), each said on stderr once per
    event: a policy is never turned off in silence (`exec` keeps stderr for the agent's
    answer where it must: `_runner.exec`)."""
    lost = tuple(s for s in discovery.skipped if s.unreadable)
    for s in lost:
        logger.warning("{}", unread_note(s))
    return lost


def resolve_workspaces(
    event: Mapping[str, Any],
    given: Sequence[str] = (),
    dialect: Dialect | None = None,
    settings: Settings | None = None,
    *,
    cwd: str,
) -> list[str]:
    """Workspace roots: the given ones, else the event's (`workspaceRoots` for Cline,
    `cwd` for Claude), else the caller's folder `cwd`; a relative root is taken from
    `cwd` too. Each is checked by `_sandbox.mounts.workspace_root` under `settings` (without
    them, `check_root`'s defaults): an event must not get a system folder, the home,
    its dot-folders, sandboxrun's own files or someone else's files mounted."""
    dialect = dialect or load_dialect("cline", "CLINE")  # imported only when asked for
    roots = list(given) or dialect.event_workspaces(event)
    # No folder: removed under the caller (`_runner.reply.current_folder`), or a hook whose
    # workspace is the event's alone (`_runner.reply.Caller.agent_hook`).
    if not roots and not cwd:
        raise ConfigError("no workspace: the event names none and there is no current folder"
                          " (removed?) to take (--workspace names one)")  # fmt: skip
    roots = roots or [cwd]
    resolved = []
    for root in roots:
        if isinstance(root, str) and root:  # anything else: check_root says what is wrong
            if not cwd and not os.path.isabs(root):  # never this process's folder
                raise ConfigError(f"workspace root {root!r} is relative and there is no"
                                  " current folder to read it from")  # fmt: skip
            root = os.path.join(cwd, root)
        path = workspace_root(root, settings) if settings else check_root(root)
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
        env_file: str | None = None,
        cwd: str | None = None,
        cancel: Cancel | None = None,
        transcripts: bool = True,
        entry: str = "api",
        served: bool = False,
        tenant: bool = False,
    ) -> None:
        self.settings = settings
        # Who asked, for the audit trail (`_audit`): run, check or the Python API, and
        # whether `serve` answered for a client.
        self.entry, self.served = entry, served
        # Whether the transcript an event names may be mounted (`_sandbox.mounts.transcript_file`):
        # not for a tenant of serve's TCP listener, whose event names the server user's.
        self.transcripts = transcripts and not tenant
        # A tenant of serve's TCP listener: its repository's hooks are given only what
        # lies below the allowed_roots (`_sandbox.mounts.for_tenant`); the server's own hooks
        # keep their folders (the platform's guards), with the tenant's roots beside them.
        self.tenant = tenant
        # Set when the caller has gone (`serve`: its client hung up): the env file is
        # left alone (`CombinedHookRunner`); the backend stops the runs themselves.
        self.cancel = cancel
        # The caller's folder, against which relative paths are read (and the workspace
        # when none is named): given by `run` (under `serve`, the client's), else ours.
        self.cwd = cwd if cwd is not None else os.getcwd()
        # The agent's CLAUDE_ENV_FILE (`run --env-file`): where lines the user's own
        # SessionStart (Setup, CwdChanged, FileChanged) hooks write are copied, checked.
        self.env_file = env_file
        # Given: only these folders are searched.
        self.hooks_dirs = tuple(os.path.join(self.cwd, d) for d in hooks_dirs)
        self.backend = backend
        self.dialect = dialect_of(settings)
        self.home = os.path.join(self.cwd, home) if home is not None else account_home()

    def discover(
        self, hook_name: str | None, workspaces: Sequence[str], own: bool = False
    ) -> Discovery:
        """The hooks of `hook_name` (None: of every event) in the folders given, or with
        `own` in the agent's own folders; under `serve`, kept while every file discovery
        read (or found absent) stands (`_cache`)."""
        dirs = () if own else self.hooks_dirs
        key = (self.settings, hook_name, tuple(workspaces), self.home, dirs)
        return cached("discover", key, lambda: self.dialect.discover(
            hook_name, workspaces, self.home, dirs))  # fmt: skip

    def _checkout(self, workspaces: Sequence[str]) -> list[HookSpec]:
        """Every hook of the workspaces, for review's first sight of a checkout: those of
        the folders given and those of the agent's own folders. An `install`ed Cline shim
        names one moved folder (`--hooks-dir`), and a checkout may have several
        (`.clinerules/hooks` and `.cline/hooks`): pinning the given one alone left the
        others' hooks `new` at their first run."""
        hooks = list(self.discover(None, workspaces).hooks)
        if self.hooks_dirs:
            hooks += self.discover(None, workspaces, own=True).hooks
        return hooks

    def create(
        self, hook_name: str, workspaces: Sequence[str], event: Mapping[str, Any] | None = None
    ) -> CombinedHookRunner:
        """The runner for `hook_name`'s hooks in `workspaces`, each root checked as `run`
        checks it (`resolve_workspaces`): a refused root is a `ConfigError`."""
        if workspaces:
            workspaces = resolve_workspaces({}, workspaces, self.dialect, self.settings,
                                            cwd=self.cwd)  # fmt: skip
        return self._create(hook_name, workspaces, event)

    def _create(
        self, hook_name: str, workspaces: Sequence[str], event: Mapping[str, Any] | None
    ) -> CombinedHookRunner:
        s = self.settings
        discovery = self.discover(hook_name, workspaces)
        hooks, unevaluable = self._matching(discovery.hooks, event or {})
        # An approved repository hook this event lacks (deleted, or its matcher narrowed):
        # looked for unless `hooks_dirs` names the only folders searched (then the
        # workspace's own hooks are not found, though not removed).
        scope = None if self.hooks_dirs or s.review == "off" else _review.Scope(
            hook_name, discovery.hooks, lambda h: self._applies(h, event or {}),
            _review.pin_roots(self.dialect, workspaces, self.home),
        )  # fmt: skip
        # A repository's hook new or changed since approved: marked, or held (`_review`).
        hooks, held, removed = _review.gate(s, self.dialect.agent, hooks, workspaces,
                                            self.dialect.project_dir_var, self.entry,
                                            lambda: self._checkout(workspaces), scope)  # fmt: skip
        # Handlers of other types (http, prompt...) that apply here: never run, reported.
        # Under review = warn, an approved hook removed is reported there too, without a
        # spec: never turned into a block (`CombinedHookRunner.run`).
        never_run = [
            k for k in discovery.skipped
            if k.spec is not None and k.spec.hook_name == hook_name
            and self._applies(k.spec, event or {})
        ] + removed  # fmt: skip
        # The answers are read as the agent that sent the event reads them (Cline: its
        # SDK or its extension, `ClineDialect.for_event`); discovery stays the settings'.
        reader = self.dialect.for_event(hook_name, event or {})
        if not hooks and not held and not unevaluable:
            return NoOpHookRunner(reader, s.fail_closed, never_run, unread_of(discovery), hook_name)
        transcript = (
            agent_transcript(self.dialect, event or {}, self.home) if self.transcripts else None
        )
        if transcript:  # what the agent hands its hooks is there, read-only (Windsurf: to
            # the user's own hooks only, `transcript_for_repository`)
            shared = self.dialect.transcript_for_repository
            own = [shared or not from_repository(h.source) for h in hooks]
            hooks = [replace(h, mounts=(*h.mounts, transcript)) if o else h
                     for h, o in zip(hooks, own, strict=True)]  # fmt: skip
        # A linked worktree's git folder, so that git inside answers about it as outside;
        # a `.git` file not followed is named in each hook's report.
        git, git_notes = git_folders(workspaces, s)
        if git:
            hooks = [replace(h, mounts=unique_mounts([*h.mounts, *git])) for h in hooks]
        if self.tenant:  # nothing of the server's account for the tenant's own hooks
            hooks = [replace(h, mounts=for_tenant(h.mounts, s))
                     if from_repository(h.source) else h for h in hooks]  # fmt: skip
        more = (  # what the agent sets from the event (Cursor: CURSOR_VERSION...)
            self.dialect.event_env(event or {}, workspaces[0], transcript) if workspaces else {}
        )
        if more:
            hooks = [replace(h, env={**h.env, **more}) for h in hooks]
        # Discovery order puts the user's own hooks first: a repository that configures
        # dozens of hooks can only push its own past the bound, never the user's.
        target = None
        env_dir = self.dialect.env_file_dir
        if env_dir is not None and hook_name in _envfile.EVENTS:
            try:
                target = _envfile.agent_file(self.env_file, self.home, env_dir)
            except ValueError as exc:
                raise ConfigError(f"--env-file refused: {exc}") from None
        session = None
        if workspaces:  # tmp = "session": whose /tmp the hooks share (`_sandbox.sessiontmp`)
            session = _sessiontmp.session_for(s.agent, workspaces[0], event or {}, self.dialect)
        runners = [
            HookRunner(h, self.backend, reader, s, target, session, git_notes)
            for h in hooks[: s.max_hooks]
        ]
        not_run = held + unevaluable
        not_run += [
            HookOutcome(
                spec=h,
                status="error",
                error=f"not run: more than {s.max_hooks} hooks for one event (max_hooks)",
            )
            for h in hooks[s.max_hooks :]
        ]
        return CombinedHookRunner(
            runners, reader, s.fail_closed, s.max_parallel, not_run, never_run, self.cancel,
            unread_of(discovery), hook_name,
        )  # fmt: skip

    def _matching(
        self, hooks: Sequence[HookSpec], event: Mapping[str, Any]
    ) -> tuple[list[HookSpec], list[HookOutcome]]:
        """(the hooks that apply to `event`, an `error` outcome for each whose repository
        pattern cannot be evaluated): never a guard dropped in silence, nor a run
        stopped for the other hooks (`_dialects.patterns`)."""
        applies, errors = [], []
        for spec in hooks:
            try:
                if self.dialect.matches(spec, event):
                    applies.append(spec)
            except PatternError as exc:
                logger.error("hook {} not run: {}", spec.name, exc)
                errors.append(HookOutcome(spec=spec, status="error", error=f"not run: {exc}"))
        return applies, errors

    def _applies(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """Whether `spec` applies to `event`; one whose pattern cannot be evaluated does."""
        try:
            return self.dialect.matches(spec, event)
        except PatternError:
            return True

    def prepare(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str] = ()
    ) -> tuple[CombinedHookRunner, bytes]:
        """The runner for one event's hooks, and the stdin they will read."""
        roots = resolve_workspaces(event, workspaces, self.dialect, self.settings, cwd=self.cwd)
        stdin = self.dialect.prepare_input(hook_name, event, roots)
        return self._create(hook_name, roots, event), stdin

    def run(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str] = ()
    ) -> CombinedResult:
        """Discover, run and combine the hooks of one event, under the rules every entry
        point shares (`_runner.session`): a missing runtime blocks; under fail-closed so does
        any failure of ours; the event has an overall deadline."""
        return answer_event(self, hook_name, event, workspaces)
