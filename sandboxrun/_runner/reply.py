"""What `run` and `exec` answer, as bytes and an exit code, wherever they are answered.

The CLI answers in its own process (the cold path); `sandboxrun serve` answers the same
command line for a client (`_server/`). Both call these functions, so every rule of the
cold path (`_runner.session` for events, `_runner.exec` for commands, what a broken config file or a
bug of ours means) comes out the same on both. What differs is only where the backend
comes from (`backend_for`) and whose process the caller is (`Caller`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError, SandboxrunError
from .._log import logger
from .._text import printable

if TYPE_CHECKING:
    from .._backends.base import Backend
    from .._dialects.base import Dialect
    from .._settings import Settings
    from .._types import Cancel, CombinedResult, HookOutcome

# Heavy modules (settings, dialects, the runner) are imported by each function when it
# runs: the CLI imports this module for every command.
BackendFor = Callable[["Settings"], "Backend"]


@dataclass(frozen=True)
class Caller:
    """What of the calling process an answer depends on besides its command line: its
    stdin (read when the command needs it), its environment (only the variables
    sandboxrun reads: the tightening one, and those the agent hands `exec`'s hook) and
    its current directory (`cwd`: absolute, or "" for a folder removed under it).
    `gone`: set when the caller has gone (`serve`: its client hung up mid-request).
    `tenant`: a request over serve's TCP listener, from someone other than the server's
    user: it is given nothing of that user's account, only what lies below the server's
    allowed_roots (`_sandbox.mounts.for_tenant`), beside the server's own hooks' folders.
    `served`: answered by `sandboxrun serve` (the audit trail says so).
    `if_killed`: where a cold `exec` leaves what to record should the agent kill this
    process before the answer is out (its own timeout, on a loaded machine, can fall
    before the wrapper's; `_cli.common.stop_cleanly` calls them): the audit trail keeps
    every run the agent started.

    The answer never reads the answering process's own current directory: `serve`
    answers many callers at once, each in a folder of its own, so every relative path
    is resolved against `cwd` (`absolute_paths`, and the folder handed down explicitly).
    """

    read_stdin: Callable[[], bytes]
    environ: Mapping[str, str]
    cwd: str
    gone: Cancel | None = None
    tenant: bool = False
    served: bool = False
    if_killed: list[Callable[[int], None]] | None = None

    @classmethod
    def this_process(cls) -> Caller:
        def read() -> bytes:
            return sys.stdin.buffer.read() if not sys.stdin.isatty() else b""

        return cls(read, os.environ, current_folder())

    def agent_hook(self, dialect: Dialect) -> Caller:
        """This caller as the agent's own hook (`run --answer agent`: Cline's shims, the
        managed forwarders). Where the agent's events name their workspace roots
        (`Dialect.roots_in_event`: Cline, whose CLI starts hooks from a hub daemon that
        keeps the folder and environment of whichever run started it), the caller's
        folder is the event's primary root, never the calling process's: the workspace
        and a relative `--hooks-dir` (a global forwarder's) come from the event alone,
        and an event without an absolute root leaves no folder (`resolve_workspaces`
        refuses it). The same through `serve`: its client's folder is the hub's too."""
        if not dialect.roots_in_event:
            return self
        data = self.read_stdin()
        roots = dialect.event_workspaces(read_event(data))
        root = roots[0] if roots and isinstance(roots[0], str) and os.path.isabs(roots[0]) else ""
        return replace(self, read_stdin=lambda: data, cwd=root)


def current_folder() -> str:
    """This process's current directory, or "" when it was removed: then nothing
    relative to it exists, and the answer says so where it needs one (a workspace root
    '' is refused), inside its fail-closed handling, as before it was asked for."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return ""


# The path options of `run` and `exec` (`_cli.parser`); a list holds a repeatable one's.
PATH_OPTIONS = ("config", "workspace", "hooks_dir", "home", "env_file")


def callers_paths(args: argparse.Namespace, cwd: str) -> None:
    """`absolute_paths`, as the CLI and `serve` apply it right after parsing, but for
    `run --answer agent`, whose folder may be the event's (`Caller.agent_hook`):
    `answer_agent` makes its paths absolute once it knows which folder that is."""
    if getattr(args, "answer", None) != "agent":
        absolute_paths(args, cwd)


def absolute_paths(args: argparse.Namespace, cwd: str) -> None:
    """Make the command's path options absolute against the caller's folder `cwd`,
    right after parsing (the CLI and `serve` alike): nothing below resolves a path
    against a current directory. An empty value stays empty (the checks refuse it), and
    with no folder (`cwd` "": removed) a relative path stays one that exists nowhere."""

    def absolute(value: str) -> str:
        return os.path.normpath(os.path.join(cwd, value)) if value else value

    for name in PATH_OPTIONS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            setattr(args, name, absolute(value))
        elif isinstance(value, list):
            setattr(args, name, [absolute(v) for v in value])


@dataclass(frozen=True)
class Reply:
    """What the command writes: stdout, then stderr, then it exits with `exit_code`.
    `abandoned`: stuck work was left behind at the event's deadline (`_runner.session`).
    `outcomes`: `run`'s hooks as the dialect read them (what `serve` counts)."""

    stdout: bytes
    stderr: bytes
    exit_code: int
    abandoned: bool = False
    outcomes: tuple[HookOutcome, ...] = ()


def run_result(args: argparse.Namespace, caller: Caller, backend_for: BackendFor) -> CombinedResult:
    """`sandboxrun run HOOK`: the combined answer of the event's hooks."""
    from .._dialects.registry import DIALECTS, dialect_of
    from .._settings import env_fail_closed
    from .factory import HookFactory
    from .session import failure_answer

    try:
        settings = load(args, caller, agent=args.agent, timeout=args.timeout, image=args.image,
            runtime=args.runtime, fail_closed=args.fail_closed, network=args.network,
            allow_domains=args.allow_domain or None, backend=args.backend,
        )  # fmt: skip
    except ConfigError as exc:  # a broken config file blocks too, when asked to
        if not (args.fail_closed or env_fail_closed(caller.environ)):
            raise
        return failure_answer(DIALECTS[args.agent or "cline"], True, exc)
    dialect = dialect_of(settings)
    backend = backend_for(settings)  # connects only once there is a hook to run
    factory = HookFactory(
        settings,
        backend,
        home=args.home,
        hooks_dirs=args.hooks_dir,
        env_file=args.env_file,
        cwd=caller.cwd,
        cancel=caller.gone,
        tenant=caller.tenant,
        entry="run",
        served=caller.served,
    )
    try:
        if args.hook not in dialect.hook_names:
            known = ", ".join(dialect.hook_names)
            raise ConfigError(f"unknown {settings.agent} hook {args.hook!r}: one of {known}")
        result = factory.run(args.hook, read_event(caller.read_stdin()), args.workspace)
    except Exception as exc:  # under fail-closed, every failure of ours answers the block
        result = failure_answer(dialect, settings.fail_closed, exc)
    return result


def answer_run(args: argparse.Namespace, caller: Caller, backend_for: BackendFor) -> Reply:
    """`sandboxrun run HOOK`: one JSON answer on stdout, exit 0 when the hooks ran; with
    `--answer agent`, the agent's own answer (`answer_agent`)."""
    if args.answer == "agent":
        return answer_agent(args, caller, backend_for)
    from .._dialects.files import unread_note

    result = run_result(args, caller, backend_for)
    # What could not be read is said on the caller's stderr (`serve` logs it in its own)
    notes = "".join(f"sandboxrun: {printable(unread_note(s))}\n" for s in result.skipped)
    return Reply(
        dumps(result.to_json()), notes.encode(), 0, abandoned=result.abandoned,
        outcomes=result.outcomes,
    )  # fmt: skip


def answer_agent(args: argparse.Namespace, caller: Caller, backend_for: BackendFor) -> Reply:
    """`run --answer agent`: the combined answer in the agent's own hook protocol, so that
    `run` can itself be the hook the agent calls (Cline's shims, Claude Code's and Codex's
    managed forwarders, any agent's hook configured by hand), answered warm by `serve`
    as by the command itself.

    Each agent's form is its dialect's (`Dialect.agent_answer`): a deny stays a deny, an
    allow an allow. An agent without an answer form is refused (`refusal`); `install`
    never writes `--answer agent` for one (`_install.answer.answer_form`). An error of
    ours (no engine, a bad config file, a bug) is the dialect's `wrapper_failure`:
    non-blocking, or a block under fail-closed (`error_answer`), one line, never a
    traceback on the agent."""
    from .._dialects.registry import DIALECTS
    from .._settings import env_fail_closed

    dialect = DIALECTS[args.agent or "cline"]
    try:
        caller = caller.agent_hook(dialect)
        absolute_paths(args, caller.cwd)
        result = run_result(args, caller, backend_for)
        reply = agent_answer(dialect, args.hook, result)
    except Exception as exc:
        fail_closed = bool(args.fail_closed or env_fail_closed(caller.environ))
        if isinstance(exc, SandboxrunError):
            return error_answer(dialect, fail_closed, one_line(exc))
        logger.opt(exception=exc).debug("internal error")  # a bug of ours
        why = f"internal error: {type(exc).__name__}: {one_line(exc)}"
        return error_answer(dialect, fail_closed, why)
    return replace(reply, abandoned=result.abandoned, outcomes=result.outcomes)


def agent_answer(dialect: Dialect, event: str, result: CombinedResult) -> Reply:
    """What the agent reads from `run` as if it were one of its hooks: the combined
    answer in its form, and on stderr, beside it (never where the agent would read them
    as the answer: the dialect places them), a line per hook that failed and per
    refusal of the sandbox's that a hook answered despite."""
    notes = [
        printable(f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}")
        for o in result.outcomes
        if o.status != "completed" and o.error
    ]
    # What the sandbox stopped a hook that answered anyway (its `error` says it otherwise):
    # a hint beside the answer, never a change to it.
    notes += [
        printable(f"sandboxrun: hook {o.spec.name}: sandbox stopped: {o.sandbox_stopped}")
        for o in result.outcomes
        if o.status == "completed" and o.sandbox_stopped
    ]
    reply = dialect.agent_answer(event, dict(result.answer), notes)
    if reply is None:
        return refusal(dialect)
    return Reply(*reply)


def refusal(dialect: Dialect) -> Reply:
    """`--answer agent` for an agent without an answer form: a block in its terms."""
    why = f"run --answer agent: no answer form for agent {dialect.agent}; use run or exec"
    stdout, stderr, code = dialect.wrapper_failure(why, True)
    if why.encode() not in stderr:  # the block is on stdout (Cline): the line beside it
        stderr += f"sandboxrun: {why}\n".encode()
    return Reply(stdout, stderr, code)


def error_answer(dialect: Dialect, fail_closed: bool, why: str) -> Reply:
    """An error of ours, before any hook ran, in the agent's terms (`answer_agent`)."""
    return Reply(*dialect.wrapper_failure(why, fail_closed))


def answer_exec(args: argparse.Namespace, caller: Caller, backend_for: BackendFor) -> Reply:
    """`sandboxrun exec -- COMMAND`: the hook's stdout, stderr and exit code, unchanged,
    or the sandbox's failure in the agent's terms (`_runner.exec`)."""
    from .. import _review
    from .._dialects.files import unread_note
    from .._dialects.registry import DIALECTS
    from .._settings import env_fail_closed
    from .exec import (
        audit_exec,
        ended_by_agent,
        exec_request,
        failure_dialect,
        may_add_lines,
        run_exec,
        sandbox_failure,
        unread_configs,
    )
    from .session import blocks

    command = args.cmdline[1:] if args.cmdline[:1] == ["--"] else args.cmdline
    stdin = caller.read_stdin()
    try:
        settings = load(args, caller, agent=args.agent, timeout=args.timeout, image=args.image,
            network=args.network, runtime=args.runtime, fail_closed=args.fail_closed,
            allow_domains=args.allow_domain or None, backend=args.backend,
        )  # fmt: skip
        backend = backend_for(settings)
    except Exception as exc:  # before any hook ran (a bad config file): the agent's own
        # terms, as for any failure of ours (an exit 2 would deny or block: Copilot denies
        # a preToolUse hook's any non-zero exit)
        if not isinstance(exc, SandboxrunError):
            logger.opt(exception=exc).debug("internal error")
        why = f"the hook could not be run: {one_line(exc)}"
        # fail-closed as asked by the flag or the environment, as `run` reads it there
        closed = blocks(args.fail_closed or env_fail_closed(caller.environ))
        stdout, stderr, code = failure_dialect(args.agent, stdin).wrapper_failure(why, closed)
        return Reply(stdout, stderr, code)
    started = time.monotonic()
    named = args.event if args.event in DIALECTS[settings.agent].hook_names else None
    if caller.if_killed is not None:
        caller.if_killed.append(lambda signum: audit_exec(
            settings, backend, stdin, command, args.untrusted,
            ended_by_agent(settings, signum, started, stdin), started, caller.served, named,
        ))  # fmt: skip
    # A repository's command sees the agent's transcript unless the dialect says not (Windsurf)
    shared = DIALECTS[settings.agent].transcript_for_repository
    try:
        event = args.event
        if event is not None and event not in DIALECTS[settings.agent].hook_names:
            raise ConfigError(f"--event {event!r} is not an event of {settings.agent}")
        request = exec_request(
            settings,
            command,
            stdin,
            args.workspace,
            caller.environ,
            cwd=caller.cwd,
            transcripts=not caller.tenant and (not args.untrusted or shared),
            tenant=caller.tenant,
            hook_dir=args.hook_dir,
            untrusted=args.untrusted,
            hook_name=event,
        )
        # A repository's command new or changed since approved: held, told, or its
        # approved version run in its place (`_review`).
        review = (_review.exec_gate(settings, command, request, stdin, caller.served, event)
                  if args.untrusted else _review.ExecReview(None))  # fmt: skip
        status = review.status
        # Under fail-closed, a config file that would hold hooks for this event and could
        # not be read blocks, as in `run`: the policy it holds is unknown (in the
        # dialect's own terms, on stderr: never an answer Gemini would misread).
        lost = unread_configs(settings, request, event) if blocks(settings.fail_closed) else ()
        if lost:
            why = "; ".join(unread_note(s) for s in lost)
            out = sandbox_failure(settings, printable(f"the hook was not run: {why}"), stdin=stdin)
        elif status == "held":
            out = sandbox_failure(settings, _review.HELD, stdin=stdin)
        else:
            out = run_exec(
                settings, backend, request, caller.environ, untrusted=args.untrusted,
                cancel=caller.gone, approved=review.approved, hook_name=event,
            )  # fmt: skip
            if status and not out.sandbox_ended:
                stdout, line = _review.exec_note(settings.agent, out.stdout, out.exit_code,
                                                 status)  # fmt: skip
                if line and not may_add_lines(settings.agent, stdout, out.stderr, out.exit_code):
                    line = b""  # Gemini would read it as the answer: the debug log only
                out = replace(out, stdout=stdout, stderr=out.stderr + line)
    except Exception as exc:  # ours, not the hook's: a clear line, a block if fail-closed
        if not isinstance(exc, SandboxrunError):
            logger.opt(exception=exc).debug("internal error")
        why = f"the hook could not be run: {one_line(exc)}"
        out = sandbox_failure(settings, why, stdin=stdin)
    if caller.if_killed is not None:
        caller.if_killed.clear()  # answered: from here a kill loses no record
    audit_exec(settings, backend, stdin, command, args.untrusted, out, started, caller.served,
               named)  # fmt: skip
    return Reply(out.stdout, out.stderr, out.exit_code)


def error_reply(exc: Exception) -> Reply:
    """A command that failed on our side: one line on stderr, exit 2, never a traceback."""
    if isinstance(exc, SandboxrunError):
        return Reply(b"", f"sandboxrun: {one_line(exc)}\n".encode(), 2)
    logger.opt(exception=exc).debug("internal error")  # a bug of ours
    line = f"sandboxrun: internal error: {type(exc).__name__}: {one_line(exc)}\n"
    return Reply(b"", line.encode(), 2)


def load(args: argparse.Namespace, caller: Caller | None = None, **overrides: Any) -> Settings:
    """The command's settings; under `serve`, kept while the config file stands
    (`_cache`: keyed on the file, the caller's variables and the command line)."""
    from .._cache import cached
    from .._settings import Settings

    environ = caller.environ if caller else None
    if environ is None:  # this process's own environment: not a key
        return Settings.load(config=args.config, **overrides)
    key = (args.config, environ, overrides)
    return cached("settings", key, lambda: Settings.load(args.config, environ, **overrides))


def read_event(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"event on stdin is not valid JSON: {exc}") from None
    if not isinstance(event, dict):
        raise ConfigError(f"event on stdin must be a JSON object, not {type(event).__name__}")
    return event


def dumps(document: dict[str, Any]) -> bytes:
    # Pure ASCII: every control, bidi override and lone surrogate a hook or a
    # repository put in a string arrives escaped, and encoding can never fail.
    return (json.dumps(document, ensure_ascii=True) + "\n").encode("ascii")


def one_line(exc: BaseException) -> str:
    return printable(" ".join(str(exc).split()))[:500]
