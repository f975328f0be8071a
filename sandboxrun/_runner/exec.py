"""`sandboxrun exec`: one hook command, sandboxed, with byte-for-byte pass-through.

For agents whose hooks are shell commands (Claude Code, Qoder, Codex...): a settings
entry `"command": "./hooks/guard.sh"` becomes `"command": "sandboxrun exec --
./hooks/guard.sh"` and behaves the same, only confined. stdin goes in unchanged;
stdout, stderr and the exit code come back unchanged (2 stays 2).

When the sandbox, not the hook, ends the run (deadline, out of memory, output cap,
engine failure, a hook it could not start, an interpreter or script the sandbox lacks
(`_sandbox.preflight`); under fail-closed also exit 126/127, a command that could not be run
or found), the agent gets a non-blocking error: exit 1 and one line on stderr. With
fail-closed it gets a block in its own terms instead: exit 2 with the reason on stderr
for the claude family, `{"cancel": true, ...}` on stdout for Cline's.

`exec --untrusted` (what `install` writes for a command from a repository's settings):
its CLAUDE_ENV_FILE lines never reach the agent, and for the claude family its stdout
JSON loses what a repository's hook may not decide (`Dialect.untrusted_stdout`, the
dialect's rule), unless the user's `trust_workspace_decisions` (decisions only, never env lines).
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import _audit
from .._backends.base import Backend
from .._cache import cached
from .._dialects.base import Dialect, below_deadline, command_source, decides, unique_mounts
from .._dialects.registry import DIALECTS, dialect_of
from .._errors import ConfigError, EngineError, RuntimeMissing
from .._log import logger
from .._sandbox import envfile as _envfile
from .._sandbox import sessiontmp as _sessiontmp
from .._sandbox.hints import hint
from .._sandbox.mounts import (
    HOOK_HOME,
    agent_transcript,
    for_tenant,
    git_folders,
    hook_mount,
    mountable_file,
    sandbox_home,
    under,
    workspace_root,
)
from .._settings import Settings, account_home
from .._types import ApprovedFile, Cancel, ExecRequest, ExecResult, HookOutcome, HookSpec, Skipped
from .hook import HookRunner
from .request import request_for
from .session import blocks


@dataclass(frozen=True, slots=True)
class ExecOutput:
    """What `sandboxrun exec` hands back to the agent."""

    stdout: bytes
    stderr: bytes
    exit_code: int
    sandbox_ended: bool = False  # the sandbox, not the hook, ended the run
    notes: bytes = b""  # our own lines for after the hook's stderr (`run_exec` adds them)
    result: ExecResult | None = None  # the sandbox's run, when there was one (the audit's)
    # Why the sandbox ended it (`sandbox_failure`): the audit's reason, where the agent's
    # answer carries none (Copilot's: exit 0, the reason only on stderr).
    why: str = ""
    # The agent's reading of the hook's run (`_runner.hook.HookRunner`), when it ran: the audit's
    outcome: HookOutcome | None = None


def exec_request(
    settings: Settings,
    command: Sequence[str],
    stdin: bytes,
    workspace: str | None,
    environ: Mapping[str, str] | None = None,
    *,
    cwd: str,
    transcripts: bool = True,
    tenant: bool = False,
    hook_dir: str | None = None,
    untrusted: bool = False,
    hook_name: str | None = None,
) -> ExecRequest:
    """The sandboxed run of `command` in the workspace (given, else the project the
    caller's folder `cwd` belongs to: the agent starts its hooks there). The hook
    starts in `cwd` when it is mounted; this process's own current directory is never
    read (`serve` answers many callers at once).

    Not the agent's project-dir variable: a repository can set the environment of
    the hooks an agent starts, and the workspace decides what is mounted. Inside,
    the variable names the workspace actually mounted. `environ`: the agent's
    environment (default ours; `serve` passes its client's), read for the variables
    the agent hands a hook (plugin root and data, CLAUDE_ENV_FILE).

    `tenant`: a request over serve's TCP listener. It is given nothing of the server's
    account: no trusted place (`trusted_places`) for the files its command names, and of
    every mount, only what lies below the allowed_roots (`_sandbox.mounts.for_tenant`: the
    workspace, a Cursor root, a project plugin; never a user hook folder, a plugin root
    or a transcript of the server's user).

    `hook_name`: the event, when the caller knows it (`exec --event`), else the one the
    event names. The run itself is prepared as `run` prepares one (`_runner.request`).
    """
    environ = os.environ if environ is None else environ
    if not command:
        raise ConfigError("exec needs a command: sandboxrun exec [OPTIONS] -- COMMAND [ARG...]")
    dialect = DIALECTS[settings.agent]
    home = account_home()
    event = _event(stdin)
    # Where the agent starts the hook: its project (a session in a subfolder: the whole
    # project), the event's roots (Cline's, Cursor's), its own folder (Cursor's ~/.cursor)
    place = dialect.exec_place(event, cwd, home, bool(workspace))
    cwd = place.cwd
    root = workspace_root(workspace or place.project, settings)
    # One argument is a shell string, run in the shell the agent itself would use
    # (`Dialect.shell`); several are argv.
    run = dialect.exec_command(command, root, home, environ)
    inside = Path(cwd).is_relative_to(root)
    # The transcript is the server user's own agent's: never mounted for a tenant (TCP).
    transcript = agent_transcript(dialect, event, home) if transcripts else None
    env = {**dict.fromkeys(dialect.project_vars, root), **run.env}
    # What the agent sets from the event (and, for some, from its environment `environ`)
    env.update(dialect.event_env(event, root, transcript, environ))
    env.update(dialect.hook_dir_env(hook_dir, root, home, untrusted))
    places = [] if tenant else trusted_places(settings, home)
    extra = _files_named(command, root, places)
    if transcript:
        extra.append(transcript)
    extra += run.mounts  # at their paths: `${PLUGIN_ROOT}/x` inside
    others = _other_roots(place.others, root, settings)  # of a multi-root workspace
    extra += others
    if place.agent_hooks and os.path.isdir(place.agent_hooks):
        extra.append(place.agent_hooks)
    plugin = dialect.exec_plugin(environ, home)
    if plugin:  # `${CLAUDE_PLUGIN_ROOT}/hooks/x.py` means the same inside
        env.update(plugin.env)
        extra.append(plugin.root)
    # A linked worktree's git folder, as `run` gives it (`_sandbox.mounts.git_folders`).
    git, git_notes = git_folders([root, *others], settings)
    for git_note in git_notes:  # the agent shows stderr: say why git inside may fail
        logger.warning("{}", git_note)
    mounts = unique_mounts([root, *extra, *git])
    if tenant:  # the one decision for a tenant's mounts, whatever named them
        mounts = for_tenant(mounts, settings)
    label = " ".join(command)
    # `exec` hooks are known by their command: `state` globs in the user's config match
    # it. A plugin's hook is the plugin's, as in `run`: it keeps its own /tmp
    # (`_sandbox.sessiontmp`), and its data folder is the plugin's (`_sandbox.state.plugin_data`).
    spec = HookSpec(
        hook_name=hook_name or dialect.event_name(event) or UNKNOWN_EVENT,
        name=label, source="plugin" if plugin else "exec", argv=run.argv,
        # where the agent started the hook, if mounted (Cursor's ~/.cursor: its hooks are)
        workdir=cwd if inside or place.agent_hooks else root,
        mounts=mounts, env=env, plugin=plugin.id if plugin else None,
    )  # fmt: skip
    # The agent gave this hook its CLAUDE_ENV_FILE, for an event it reads the file after
    # (`_sandbox.envfile.EVENTS`, as `run`): the hook gets an empty one of ours; `run_exec` copies
    # what may go to the agent's (`_sandbox.envfile`).
    env_file = _envfile.given(dialect, spec.hook_name) and bool(environ.get(_envfile.VAR))
    session = _sessiontmp.session_for(settings.agent, root, event, dialect)
    prepared = request_for(
        spec, stdin, settings, timeout=exec_timeout(settings, event), label=label[:200],
        workspace=root, session=session, env_file=env_file,
    )  # fmt: skip
    for note in prepared.notes:  # the agent shows stderr: say why this run lacks them
        logger.warning("{}", note)
    return prepared.request


def _other_roots(roots: Sequence[str], root: str, settings: Settings) -> list[str]:
    """The other roots of a multi-root workspace (Cursor's `workspace_roots`), each
    mounted read-only at its own path as `run` mounts them, when `workspace_root`
    allows it (a system folder, the home or a dot-folder of it, a root outside
    `allowed_roots`: left out and named; the hook runs with the roots it may have)."""
    out = []
    for other in roots:
        try:
            path = workspace_root(other, settings)
        except ConfigError as exc:
            logger.warning("not mounted: {}", exc)
            continue
        if path != root:
            out.append(path)
    return out


EXEC_DEFAULT_TIMEOUT = 60.0


def exec_timeout(settings: Settings, event: Mapping[str, Any] | None = None) -> float:
    """The seconds an `exec` hook gets: the settings' timeout, else at most 60 s by
    default: below the agent's own deadline for the entry (current Claude Code: 600 s),
    so that sandboxrun, not the agent, ends a slow hook. An event the agent gives a
    shorter deadline of its own (`Dialect.agent_deadline`) gets what install gives an entry with
    that timeout (`below_deadline`), so the answer is in first."""
    if settings.timeout:
        return settings.timeout
    dialect = DIALECTS[settings.agent]
    limit = min(dialect.default_timeout, EXEC_DEFAULT_TIMEOUT)
    deadline = dialect.agent_deadline(event or {})  # (Codex's short events)
    return limit if deadline is None else min(limit, below_deadline(deadline))


def _files_named(command: Sequence[str], root: str, trusted: Sequence[str]) -> list[str]:
    """What to mount for the files a command names by absolute path outside the
    workspace (`~/.claude/hooks/g.sh`, `python3 /usr/local/lib/g.py`): each one's folder,
    or the file alone where its folder is a system folder or the home (`_sandbox.mounts`).

    Only files under a `trusted` place are mounted (none for a tenant's request): the
    command may come from a repository's settings, and naming `~/.ssh/id_rsa` must not
    mount it. Others stay missing inside (the hook then fails, which fail-closed turns
    into a block).
    """
    words: list[str] = []
    for part in command:
        try:
            words += shlex.split(part) if len(command) == 1 else [part]
        except ValueError:  # an unbalanced quote: the shell will say so inside
            words += part.split()
    inside = os.path.realpath(root) + os.sep
    home = sandbox_home()  # `~` inside is the user's home path: `~/.claude/hooks/g.sh` too
    found = []
    for word in words:
        if word.startswith("~/") and home != HOOK_HOME:
            word = home + word[1:]
        if not os.path.isabs(word) or not os.path.isfile(word):
            continue
        real = os.path.realpath(word)
        if real.startswith(inside) or not mountable_file(word):
            continue
        if under(real, [os.path.realpath(t) for t in trusted]):
            found.append(hook_mount(os.path.abspath(word)))
        else:
            logger.warning(
                "not mounted: {} is not under a place hooks may come from{}",
                word,
                " (hook_paths in your config adds one)" if trusted else "",
            )
    return found


def unread_configs(
    settings: Settings, request: ExecRequest, hook_name: str | None = None
) -> tuple[Skipped, ...]:
    """The agent's config files for the project of `request` (its workspace root, mounted
    first: `exec_request`) that would hold hooks for the event (`hook_name`: `exec
    --event`, else the one its stdin names, else every event) and could not be read
    (`Skipped.unreadable`): what `exec` blocks on under fail-closed, as `run` does.
    Read as `run`'s discovery reads them, and kept under `serve` while every file it
    read stands (`_cache`, the same entry as `run`'s)."""
    dialect = dialect_of(settings)
    event = _event(request.stdin)
    if hook_name is None:
        named = dialect.event_name(event)  # (the dialect's own field, or what it derives)
        hook_name = named if named in dialect.hook_names else None
    roots, home = (request.mounts[0],), account_home()
    key = (settings, hook_name, roots, home, ())  # `HookFactory.discover`'s key
    found = cached("discover", key, lambda: dialect.discover(hook_name, roots, home))
    return tuple(s for s in found.skipped if s.unreadable)


def _event(stdin: bytes) -> dict[str, Any]:
    """The event on stdin as an object ({} when it is not one: passed through as it is,
    the hook reads the same bytes)."""
    try:
        event = json.loads(stdin)
    except (ValueError, RecursionError):
        return {}
    return event if isinstance(event, dict) else {}


def env_file_target(
    home: str, environ: Mapping[str, str] | None = None, folder: str = ".claude"
) -> str | None:
    """The agent's CLAUDE_ENV_FILE from exec's environment, if it may receive lines: in
    its own session-env folder below `folder` (`Dialect.env_file_dir`), as `run` takes it."""
    try:
        return _envfile.agent_file(
            (os.environ if environ is None else environ).get(_envfile.VAR), home, folder
        )
    except ValueError as exc:
        logger.warning("{}; nothing the hook writes there is copied", exc)
        return None


def trusted_places(settings: Settings, home: str) -> list[str]:
    """Where files a hook command names may be mounted from: the agent's own hook
    folder in the user's home and the install paths of its installed plugins (never
    the rest of the plugins tree: installed_plugins.json, plugin data, marketplaces'
    clones), /usr/local (tools the user installed), and the user's `hook_paths`."""
    agent = DIALECTS[settings.agent].hook_places(home)
    return [*agent, "/usr/local", *settings.hook_paths]


def run_exec(
    settings: Settings,
    backend: Backend,
    request: ExecRequest,
    environ: Mapping[str, str] | None = None,
    *,
    untrusted: bool = False,
    cancel: Cancel | None = None,
    approved: Sequence[ApprovedFile] = (),
    hook_name: str | None = None,
) -> ExecOutput:
    """Run once, as `run` runs a hook (`_runner.hook.HookRunner`); pass the hook's bytes
    through, or say why the sandbox ended it. A missing runtime always blocks; other
    engine failures block under fail-closed. `environ`: the agent's environment, as for
    `exec_request`. `untrusted` (`exec --untrusted`: a command from a repository's
    settings): its env lines never reach the agent, and for the Claude family what a
    repository's hook may not decide is dropped from its stdout unless
    `trust_workspace_decisions` (`Dialect.untrusted_stdout`). `cancel`: set when the
    caller has gone (`serve`: its client hung up): then nothing reaches the agent's env
    file, as from a hook that did not complete (`run`'s rule). `approved`: a changed
    command's approved files, run in place of the changed ones (`_review.exec_gate`);
    held when they cannot be. `hook_name`: the event, when the caller knows it (`exec
    --event`), else the one the event names."""
    out, parsed = _run_exec(settings, backend, request, untrusted, approved, hook_name)
    dialect = DIALECTS[settings.agent]
    notes = [out.notes.decode("utf-8", "replace")] if out.notes else []
    source = command_source(untrusted)  # a repository's command, or the user's
    if not out.sandbox_ended and not decides(source, settings.trust_workspace_decisions):
        stdout, note = dialect.untrusted_stdout(out.stdout, request.stdin)
        if note:
            out = replace(out, stdout=stdout)
            notes.append(f"sandboxrun: {note}\n")
        # (Gemini reads stderr when stdout is blank: `Dialect.untrusted_stderr`)
        stderr, note = dialect.untrusted_stderr(out.stdout, out.stderr)
        if note:
            out = replace(out, stderr=stderr)
            notes.append(f"sandboxrun: {note} (on stderr)\n")
    if parsed is not None:
        notes += [f"sandboxrun: CLAUDE_ENV_FILE {why}: refused\n" for why in parsed.refused]
        if not _envfile.hands_on(source) and parsed.accepted:  # (whatever
            # trust_workspace_decisions says: it restores decisions, never env lines)
            names = ", ".join(n for n, _ in parsed.accepted)
            notes.append(
                f"sandboxrun: CLAUDE_ENV_FILE {names} not copied: the command is untrusted"
                " (--untrusted: from a repository's settings)\n"
            )
        elif parsed.accepted and not out.sandbox_ended and not (cancel and cancel.is_set()):
            # (a caller that has gone gets nothing; nor, as in `run`, a hook that did not
            # complete: only a completed hook's lines are handed on)
            status = out.outcome.status if out.outcome is not None else "failed"
            if status == "completed":
                notes += hand_on(parsed, environ, dialect.env_file_dir)
            else:
                names = ", ".join(n for n, _ in parsed.accepted)
                notes.append(f"sandboxrun: CLAUDE_ENV_FILE {names} not copied: the hook {status}\n")
    return _with_notes(dialect, out, "".join(notes).encode())


def may_add_lines(agent: str, stdout: bytes, stderr: bytes, exit_code: int) -> bool:
    """Whether exec may add sandboxrun's own log lines (held back while it answered:
    `_log.hold`) after the hook's stderr: not where the agent would read them as part of
    the hook's answer (`Dialect.may_add_to_stderr`: Gemini reads stderr when stdout is
    blank, the Claude family after exit 2, and hands it to the model). Such lines are
    dropped."""
    return DIALECTS[agent].may_add_to_stderr(stdout, stderr, exit_code)


def _with_notes(dialect: Dialect, out: ExecOutput, lines: bytes) -> ExecOutput:
    """`out` with our lines after the hook's stderr, unless the agent would read them as
    part of the hook's answer (`Dialect.may_add_to_stderr`); those are only logged (-v).
    The sandbox's own failure (`sandbox_failure`) is the dialect's answer: its lines stay."""
    if (
        lines
        and not out.sandbox_ended
        and not dialect.may_add_to_stderr(out.stdout, out.stderr, out.exit_code)
    ):
        logger.debug("not added to stderr (the agent reads it as the answer): {}", lines)
        return replace(out, notes=b"")
    return replace(out, stderr=out.stderr + lines, notes=b"")


def hand_on(
    parsed: _envfile.Parsed, environ: Mapping[str, str] | None, folder: str | None
) -> list[str]:
    """Append a trusted command's accepted env lines to the agent's CLAUDE_ENV_FILE
    (the one place `exec` writes there), when it is in the agent's own session-env
    `folder` (`Dialect.env_file_dir`); the stderr lines to add."""
    target = env_file_target(account_home(), environ, folder) if folder else None
    if target is None:
        return []
    try:
        _envfile.append(target, parsed.lines())
    except OSError as exc:
        return [f"sandboxrun: could not append to {target}: {exc.strerror}\n"]
    return []


# exec's answer, and what the hook wrote to CLAUDE_ENV_FILE (checked), if it ran
Answered = tuple[ExecOutput, "_envfile.Parsed | None"]


def _run_exec(
    settings: Settings, backend: Backend, request: ExecRequest, untrusted: bool,
    approved: Sequence[ApprovedFile], hook_name: str | None,
) -> Answered:  # fmt: skip
    """The hook's run (`_runner.hook.HookRunner.execute`, `run`'s) as exec answers it: the
    hook's bytes, or the sandbox's failure in the agent's terms; and what it wrote to
    CLAUDE_ENV_FILE, checked."""
    stdin = request.stdin
    cap = DIALECTS[settings.agent].max_input  # Cursor's: a whole file
    if cap is not None and len(stdin) > cap:  # an error, never a cut
        if request.env_file:
            _envfile.discard(request.env_file)
        big = f"the event is {len(stdin)} bytes, over the input cap of {cap}: not run"
        return sandbox_failure(settings, big), None
    try:
        backend.check()
    except EngineError as exc:
        if request.env_file:
            _envfile.discard(request.env_file)
        return _engine_failure(settings, exc, stdin), None
    ran = _runner_of(settings, backend, request, untrusted, hook_name).execute(request, approved)
    result = ran.result

    def failed(why: str) -> tuple[ExecOutput, _envfile.Parsed | None]:
        out = sandbox_failure(settings, why, result, stdin,
                              runtime_missing=ran.outcome.runtime_missing)  # fmt: skip
        return replace(out, outcome=ran.outcome), ran.parsed

    if ran.failure:  # it never ran: the preflight, the engine, an approved version
        return failed(ran.failure)
    assert result is not None
    if ran.ended:  # the deadline, memory, the output cap
        return failed(ran.ended)
    if blocks(settings.fail_closed) and result.exit_code in (126, 127):
        # The shell we wrap a command string in, or the hook's interpreter, says the
        # command could not be run or found: under fail-closed that is no answer, so block.
        return failed(f"hook command could not be started (exit {result.exit_code})")
    if ran.gone:  # the host has what the sandbox lacks: the sandbox's failure, not an answer
        return failed(f"the hook cannot start: {ran.gone}")
    notes = b""
    if ran.found.sentence:  # the agent shows the hook's stderr: what the sandbox stopped,
        # whatever the hook answered (a hint: the exit code and stdout stay the hook's)
        notes += f"sandboxrun: {ran.found.sentence}\n".encode()
    if result.output_truncated:  # rare: hook answers are small; say so rather than hide it
        kept = settings.stdout_tail
        notes += f"sandboxrun: output was cut to its last {kept} bytes (stdout_tail)\n".encode()
    out = ExecOutput(result.stdout, result.stderr, result.exit_code or 0, notes=notes,
                     result=result, outcome=ran.outcome)  # fmt: skip
    return out, ran.parsed


def _runner_of(
    settings: Settings, backend: Backend, request: ExecRequest, untrusted: bool,
    hook_name: str | None,
) -> HookRunner:  # fmt: skip
    """`run`'s runner for the command of `request`, read as the agent that sent the event
    reads it (Cline: its SDK or its extension, `Dialect.for_event`), as a repository's
    hook when `untrusted`."""
    dialect, event = dialect_of(settings), _event(request.stdin)
    name = hook_name or dialect.event_name(event) or UNKNOWN_EVENT
    spec = HookSpec(hook_name=name, name=request.label, source=command_source(untrusted),
                    argv=request.argv, workdir=request.workdir, mounts=request.mounts,
                    env=request.env)  # fmt: skip
    return HookRunner(spec, backend, dialect.for_event(name, event), settings, quiet=True)


def _engine_failure(settings: Settings, exc: EngineError, stdin: bytes) -> ExecOutput:
    """The engine's failure before the run: a block when the runtime asked for is
    missing, else as fail-closed says (`_runner.session.blocks`)."""
    return sandbox_failure(settings, f"the sandbox could not run the hook: {exc}", stdin=stdin,
                           runtime_missing=isinstance(exc, RuntimeMissing))  # fmt: skip


def sandbox_failure(
    settings: Settings, why: str, result: ExecResult | None = None, stdin: bytes = b"",
    *, runtime_missing: bool = False,
) -> ExecOutput:  # fmt: skip
    """The agent's answer when the sandbox, not the hook, ended the run: the dialect's
    `wrapper_failure` (`failure_dialect`), after what the hook itself wrote on stderr;
    a block or not as `_runner.session.blocks` says."""
    dialect = failure_dialect(settings.agent, stdin)
    closed = blocks(settings.fail_closed, runtime_missing=runtime_missing)
    stdout, stderr, code = dialect.wrapper_failure(why, closed)
    return ExecOutput(stdout, (result.stderr if result else b"") + stderr, code, True,
                      result=result, why=why)  # fmt: skip


def failure_dialect(agent: str, stdin: bytes) -> Dialect:
    """Whose terms sandboxrun's own failure is answered in (`Dialect.failure_dialect`:
    Copilot's, for its event run by a wrapper `install --agent claude` wrote)."""
    return DIALECTS[agent].failure_dialect(stdin)


def ended_by_agent(settings: Settings, signum: int, started: float, stdin: bytes) -> ExecOutput:
    """What the audit trail records of an `exec` the agent killed (SIGTERM, SIGINT,
    SIGHUP) before it answered: timed out when this process had lived past the hook's
    own deadline (the agent counts from its start, before Python's: on a loaded machine
    its deadline can come first), else ended early (a user's cancel)."""
    import signal

    name = signal.Signals(signum).name
    ms = int((time.monotonic() - started) * 1000)
    age = process_age()
    timed_out = (age if age is not None else ms / 1000) >= exec_timeout(settings, _event(stdin))
    why = (f"the agent ended the hook ({name}) at its own deadline, before it answered"
           if timed_out else f"the agent ended the hook ({name}) before it answered")  # fmt: skip
    result = ExecResult(128 + signum, b"", f"sandboxrun: {why}\n".encode(), ms, timed_out=timed_out)
    return ExecOutput(b"", result.stderr, 128 + signum, True, result=result)


def process_age() -> float | None:
    """Seconds since this process started (Linux's /proc), or None where unknown."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            # After the command name in parentheses, field 22 (starttime) is the 20th.
            ticks = int(stat.read().rpartition(")")[2].split()[19])
            return float(uptime.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


UNKNOWN_EVENT = "unknown"  # the audit's event when neither the caller nor the event names it


def audit_exec(
    settings: Settings, backend: object, stdin: bytes, command: Sequence[str], untrusted: bool,
    out: ExecOutput, started: float, served: bool, event_name: str | None = None,
) -> None:  # fmt: skip
    """Record one `exec` in the audit trail (`_audit`), when the user keeps one: what the
    agent was handed, read by the agent's dialect for the event it ran for. The hook's
    own answer is the outcome of its run (`ExecOutput.outcome`, read as `run` reads it);
    the sandbox's own answer (`sandbox_failure`, `ended_by_agent`) is read from the bytes
    exec handed the agent; a reading that fails records no decision, never an error of
    exec. The event: `event_name` when the caller knows it (a wrapper that names its
    event: Copilot's events carry none), else what the dialect reads in the event
    (`Dialect.event_name`), else `unknown`."""
    if not _audit.enabled(settings):
        return
    dialect = dialect_of(settings)
    label = " ".join(command)
    hook_name = event_name or dialect.event_name(_event(stdin)) or UNKNOWN_EVENT
    # Read as the agent that sent the event reads it (Cline: its SDK or its extension),
    # as `run` reads it (`_runner`).
    dialect = dialect.for_event(hook_name, _event(stdin))
    spec = HookSpec(hook_name=hook_name, name=label, source=command_source(untrusted),
                    argv=tuple(command), workdir="", mounts=())  # fmt: skip
    r = out.result
    if out.outcome is not None and not out.sandbox_ended:  # the hook's own answer
        outcome = replace(out.outcome, spec=spec)
    else:
        outcome = _read_answer(dialect, spec, settings, out, started, stdin)
    record = _audit.exec_record(
        settings, backend, served=served, stdin=stdin, label=label, untrusted=untrusted,
        outcome=outcome, result=r, sandbox_ended=out.sandbox_ended, why=out.why,
    )  # fmt: skip
    _audit.write(settings, [record])


def _read_answer(
    dialect: Dialect, spec: HookSpec, settings: Settings, out: ExecOutput, started: float,
    stdin: bytes,
) -> HookOutcome:  # fmt: skip
    """The sandbox's own answer (its failure in the agent's terms) as the agent reads it."""
    r = out.result
    ms = r.duration_ms if r is not None else int((time.monotonic() - started) * 1000)
    seen = ExecResult(out.exit_code, out.stdout, out.stderr, ms, warm=bool(r and r.warm),
                      output_truncated=bool(r and r.output_truncated),
                      oom_killed=bool(r and r.oom_killed))  # fmt: skip
    try:
        outcome = dialect.interpret(spec, seen, exec_timeout(settings), True)
    except Exception as exc:  # a reading of ours that failed: no decision recorded
        logger.debug("audit: could not read the answer: {}", exc)
        outcome = HookOutcome(spec=spec, status="completed", exit_code=out.exit_code,
                              duration_ms=ms)  # fmt: skip
    found = hint(out.stderr, failed=bool(out.exit_code), refused=r.refused_hosts if r else (),
                 network=settings.network, event=stdin)  # fmt: skip
    return replace(outcome, warm=seen.warm, sandbox_stopped=found.stopped,
                   refused_hosts=r.refused_hosts if r else ())  # fmt: skip
