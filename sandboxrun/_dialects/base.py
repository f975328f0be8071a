"""The dialect seam: one agent family's hook protocol, as pure functions.

A dialect knows where hooks live, what the hook reads on stdin, how stdout,
stderr and the exit code become an answer, and how several answers combine. It
never touches Docker or threads. Agent variants (careti, qoder...) are instances
of the same dialect class with other data, not other code.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .._errors import ConfigError
from .._log import logger
from .._text import printable
from .._types import Discovery, ExecResult, HookOutcome, HookSpec, Status

# Sources whose files come with the (untrusted) workspace: a repository's hooks. Asked
# through `from_repository`, the one test of "a repository's hook vs the user's".
WORKSPACE_SOURCES = frozenset({"workspace", "project", "local"})


def from_repository(source: str) -> bool:
    """Whether a hook of `source` is a repository's (its files come with the workspace,
    or `exec --untrusted` says so: `command_source`) rather than the user's: the one
    place trust is decided, for what it may decide, the mounts and timeout it gets, its
    review and its env lines."""
    return source in WORKSPACE_SOURCES


def command_source(untrusted: bool) -> str:
    """The source of an `exec` command: a repository's under `--untrusted` (what
    `install` writes for a command from a repository's settings), else the user's."""
    return "project" if untrusted else "user"


def decides(source: str, trust_workspace: bool) -> bool:
    """Whether a hook of `source` decides what the user's hooks may decide: the user's
    always, a repository's only under the user's `trust_workspace_decisions`."""
    return trust_workspace or not from_repository(source)


# Where the agents' events name their session (first found wins, after a dialect's own
# `session_field`): Claude's family, Codex, Gemini, Goose, Crush `session_id`; Copilot
# `sessionId`; Cursor `conversation_id`; Cline `taskId`; Windsurf `trajectory_id`.
SESSION_FIELDS = ("session_id", "sessionId", "conversation_id", "taskId", "trajectory_id")


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
        """The variable naming the project root for hooks (the Claude family, Gemini,
        Cursor, Crush, Copilot), or None: inside, it names the root mounted."""

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        """The workspace roots an event names (before --workspace and the cwd)."""

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The name of the event `event` is, as this agent's events carry it (in its own
        field), or as the dialect derives it from the event's fields where the agent
        sends none (Copilot's camelCase events); None when neither says. The default:
        `named_event(event)`, the Claude family's `hook_event_name`."""

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

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        """What the agent makes of one hook's run. Unless `trust_workspace`, a hook from
        a workspace source may block, ask or add context, but what it would approve or
        widen is dropped and named in its `error` (Settings.trust_workspace_decisions)."""

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """The agent's combination of several hooks' answers (without the report)."""

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        """The answer that blocks, in this agent's terms (for fail-closed errors)."""

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """(stdout, stderr, exit code) of `exec` when the sandbox, not the hook, ended
        the run: chosen on purpose from how this agent reads a hook's exit code, so that
        it is the agent's non-blocking outcome, or its block under `fail_closed`.
        `reason` is one line. `exec` itself writes to stdout only where the agent's block
        is an answer on stdout (Cline's family)."""

    def may_add_to_stderr(self, stdout: bytes, stderr: bytes, exit_code: int) -> bool:
        """Whether `exec` may append sandboxrun's own lines (hints, notes, its log) to a
        hook's stderr: never where the agent reads that stderr as the hook's answer and
        hands it to the model (the Claude family's exit 2: the block's reason), so that
        nothing of sandboxrun's reaches the model as the hook's words; such lines go to
        the log (-v) only. The default (`stderr_is_shown`): always, the agent shows
        stderr to the user at most; `stderr_unless_blocking` for the agents that block
        on an exit code with stderr as the reason."""

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        """A repository command's stdout as the agent may see it (`exec --untrusted`):
        what such a hook may not decide (approvals, input rewrites, env) removed, the
        rest as it was, still valid in the agent's output schema; and a note naming what
        was dropped (None: the bytes passed unchanged). `stdin`: the event the command
        read, for agents whose schema depends on the event (Codex)."""

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply | None:
        """`run --answer agent`: the combined `answer` (this dialect's `combine`) as the
        agent reads one of its own hooks: (stdout, stderr, exit code). A block stays a
        block in the agent's own terms, an allow stays an allow. `notes` (one line each:
        a hook's failure, what the sandbox stopped) go to stderr, and only beside the
        answer, never where the agent would read them as one. None: the agent has no
        such answer form (`no_answer_form`, the default); `run` then refuses, as the
        dialect's `wrapper_failure` under fail-closed and one line naming the agent."""

    def sequential(self, hook_name: str) -> bool:
        """Whether the agent runs `hook_name`'s hooks one after another, in configuration
        order, and starts none after one blocks (Copilot's preToolUse): the runner then
        does the same, and reports those it did not start as not run. The dialect's
        `combine` says `blocked`. False by default (`never_sequential`): all at once."""

    def hook_dir_env(
        self, given: str | None, root: str, home: str, untrusted: bool
    ) -> dict[str, str]:
        """`exec --hook-dir DIR` (written by `install`: `exec` cannot tell which file its
        command came from): the variable naming the folder of the hook's config file,
        for agents that set one (Copilot's COPILOT_HOOK_DIR), when `given` is one of the
        agent's hook config folders for the project `root` and the account's `home` (only
        the project's when `untrusted`); a name, never mounted. A folder that is not one
        is a ConfigError naming it. Agents without such a variable: `no_hook_dir`."""

    # What `exec` needs to run one command as the agent would (`_runner.exec.exec_request`):

    @property
    def shell(self) -> tuple[str, ...]:
        """What a command string runs in, as the agent runs it (`SH`: `/bin/sh -c`;
        Codex a login shell, `sh -lc`; Copilot's `bash` field, Gemini, Crush, Kiro: bash)."""

    @property
    def project_vars(self) -> tuple[str, ...]:
        """Every variable a hook finds naming the project root (`own_project_var`: the
        `project_dir_var` alone)."""

    @property
    def roots_in_event(self) -> bool:
        """Whether the agent's events name the workspace and a hook of its own takes it
        from the event alone, never from the folder it was started in (Cline: its CLI
        starts hooks from a hub daemon). False for the others."""

    def exec_place(self, event: Mapping[str, Any], cwd: str, home: str, given: bool) -> ExecPlace:
        """Where the agent starts a hook it runs in the caller's folder `cwd` for `event`:
        the project, the folder, other roots (`ExecPlace`). `given`: `--workspace` named
        the workspace. The default (`caller_folder`): `cwd` for both."""

    def exec_command(
        self, command: Sequence[str], root: str, home: str, environ: Mapping[str, str]
    ) -> ExecCommand:
        """How the agent runs `command` (one string: in its `shell`; several: argv) for
        the project `root`: its argv, and what it names besides (Goose's PLUGIN_ROOT).
        `environ`: what the agent gave `exec`. The default: `shell_command`."""

    def event_env(
        self, event: Mapping[str, Any], root: str, transcript: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, str]:  # fmt: skip
        """The variables the agent sets for a hook besides the project's, from the event,
        the mounted `root`, the mounted `transcript`, and (`exec`) the agent's `environ`.
        None (`no_event_env`) for agents that set none."""

    def exec_plugin(self, environ: Mapping[str, str], home: str) -> ExecPlugin | None:
        """The plugin whose hook `exec` runs, when the agent's `environ` names one the
        user installed (Claude Code's CLAUDE_PLUGIN_ROOT): mounted at its path, with its
        own data folder. None (`no_plugin`) for the others."""

    def tool_fields(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """The event's tool and tool call in the audit's terms (`tool_name`,
        `tool_use_id`) where the agent names them in fields of its own (Cline's
        `tool_call.id`...); {} (`no_tool_fields`): the audit reads the common fields."""

    def hook_places(self, home: str) -> list[str]:
        """The agent's own hook folders in the user's `home` (and the system's): where the
        files an `exec` command names may be mounted from (`_runner.exec.trusted_places`)."""

    def agent_deadline(self, event: Mapping[str, Any]) -> float | None:
        """The agent's own deadline for an entry without `timeout` when it depends on the
        event (Codex's short SessionEnd); None (`no_deadline`): its default for every event."""

    @property
    def max_input(self) -> int | None:
        """Bytes of event an `exec` hook may read (Cursor's whole file): more is an error,
        never a cut. None: no cap of the agent's."""

    def failure_dialect(self, stdin: bytes) -> Dialect:
        """Whose terms sandboxrun's own failure is answered in for the event on `stdin`:
        this dialect (`own_failure`), or the agent that runs this agent's wrappers too
        (Copilot running Claude's)."""

    def untrusted_stderr(self, stdout: bytes, stderr: bytes) -> tuple[bytes, str | None]:
        """A repository command's stderr as the agent may see it (`exec --untrusted`),
        for agents that read stderr as an answer (Gemini, when stdout is blank); a note
        naming what was dropped. The default (`stderr_unchanged`): as it was."""

    # What every entry needs of the event:

    def for_event(self, hook_name: str, event: Mapping[str, Any]) -> Dialect:
        """Whose reading of the answers applies to `event` (Cline: its SDK's or its
        extension's); discovery stays this dialect's. The default (`same_reader`): this."""

    def transcript(self, event: Mapping[str, Any], home: str) -> str | None:
        """The transcript an event names, when it is in the agent's own transcript folder
        (mounted read-only); None for agents that name none (`no_transcript`)."""

    @property
    def transcript_for_repository(self) -> bool:
        """Whether a repository's hook gets the transcript mounted too (not Windsurf's)."""

    @property
    def session_field(self) -> str | None:
        """The event's own session field, looked at first (`_sandbox.sessiontmp.session_of`)."""

    @property
    def name_field(self) -> str:
        """The field an event names itself in (`check --events`): `EVENT_FIELD` mostly."""

    @property
    def env_file_dir(self) -> str | None:
        """Where the agent keeps the CLAUDE_ENV_FILE it gives the hooks of its session-env
        events (`_sandbox.envfile.EVENTS`), below the home: the Claude family's `user_dir`. None:
        the agent gives none."""

    def next_input(self, stdin: bytes, outcome: HookOutcome) -> bytes:
        """The input of the next hook of a sequential entry, after `outcome` (Gemini's
        `sequential`); the default (`same_input`): the same bytes."""

    def pinned_project(self, folder: str, home: str) -> str | None:
        """The project a session in `folder` belongs to, where its approved hooks may be
        pinned (`_review.pin_roots`); None (`no_pinned_project`): the folder alone."""

    def default_loop_limit(self, event: str) -> int | None:
        """An entry's `loop_limit` when it sets none (Cursor's follow-up events); None."""

    @property
    def message_field(self) -> str | None:
        """The field of a hook's JSON answer the agent shows the user (the Claude family's
        `systemMessage`): where `exec` tells of a hook not as approved. None: stderr."""

    @property
    def transcript_format(self) -> str | None:
        """How the agent records a session (`check --transcript`'s readers), or None."""


# (stdout, stderr, exit code): what an agent reads of one hook's run.
AgentReply = tuple[bytes, bytes, int]


@dataclass(frozen=True, slots=True)
class ExecPlace:
    """Where an `exec` hook runs (`Dialect.exec_place`)."""

    project: str  # the folder whose workspace is mounted when --workspace names none
    cwd: str  # where the agent started the hook: it starts there when that is mounted
    others: tuple[str, ...] = ()  # the other roots of a multi-root workspace (Cursor's)
    # The agent's own folder's hooks when it starts a user hook there (Cursor's
    # ~/.cursor): mounted alone (the rest of that folder holds its credentials).
    agent_hooks: str | None = None


@dataclass(frozen=True, slots=True)
class ExecCommand:
    """How the agent runs an `exec` command (`Dialect.exec_command`)."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)  # what it names (PLUGIN_ROOT)
    mounts: tuple[str, ...] = ()  # at their paths: what `env` names


@dataclass(frozen=True, slots=True)
class ExecPlugin:
    """The installed plugin an `exec` hook belongs to (`Dialect.exec_plugin`)."""

    id: str
    root: str  # mounted at its path
    env: Mapping[str, str]  # the variables naming it (root, data)
    data: str | None = None  # its own data folder: private inside (`_sandbox.state.plugin_data`)


SH = ("/bin/sh", "-c")  # `Dialect.shell` of the agents that run a command string so


def own_project_var(dialect: Dialect) -> tuple[str, ...]:
    """`Dialect.project_vars`' default: its `project_dir_var`, if any."""
    return (dialect.project_dir_var,) if dialect.project_dir_var else ()


def caller_folder(event: Mapping[str, Any], cwd: str, home: str, given: bool) -> ExecPlace:
    """`Dialect.exec_place`'s default: the caller's folder is the project and the start."""
    return ExecPlace(cwd, cwd)


def shell_command(
    dialect: Dialect, command: Sequence[str], root: str, home: str, environ: Mapping[str, str]
) -> ExecCommand:
    """`Dialect.exec_command`'s default: one string in the agent's shell; several: argv."""
    return ExecCommand((*dialect.shell, command[0]) if len(command) == 1 else tuple(command))


def no_event_env(
    event: Mapping[str, Any], root: str, transcript: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:  # fmt: skip
    """`Dialect.event_env`'s default: the agent sets no variable of the event."""
    return {}


def no_plugin(environ: Mapping[str, str], home: str) -> None:
    """`Dialect.exec_plugin`'s default: the agent names no plugin to `exec`."""
    return None


def no_hook_places(home: str) -> list[str]:
    """`Dialect.hook_places`' default: no hook folder of the agent's own."""
    return []


def no_tool_fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """`Dialect.tool_fields`'s default: no fields of the agent's own."""
    return {}


def no_deadline(event: Mapping[str, Any]) -> None:
    """`Dialect.agent_deadline`'s default: the agent's default applies to every event."""
    return None


def own_failure(dialect: Dialect, stdin: bytes) -> Dialect:
    """`Dialect.failure_dialect`'s default: the agent's own terms."""
    return dialect


def stderr_unchanged(stdout: bytes, stderr: bytes) -> tuple[bytes, None]:
    """`Dialect.untrusted_stderr`'s default: the agent never reads stderr as an answer."""
    return stderr, None


def same_reader(dialect: Dialect, hook_name: str, event: Mapping[str, Any]) -> Dialect:
    """`Dialect.for_event`'s default: every event is read by the dialect itself."""
    return dialect


def no_transcript(event: Mapping[str, Any], home: str) -> None:
    """`Dialect.transcript`'s default: the agent hands its hooks no transcript."""
    return None


def same_input(stdin: bytes, outcome: HookOutcome) -> bytes:
    """`Dialect.next_input`'s default: each hook reads the event as it came."""
    return stdin


def no_pinned_project(folder: str, home: str) -> None:
    """`Dialect.pinned_project`'s default: pins are in the workspace's own folder."""
    return None


def no_loop_limit(event: str) -> None:
    """`Dialect.default_loop_limit`'s default: the agent has no loop limit."""
    return None


# The field most agents' events name themselves in (the Claude family, Codex, Cursor,
# Gemini, Kiro, Copilot's PascalCase events): `Dialect.event_name`'s default.
EVENT_FIELD = "hook_event_name"


def named_event(event: Mapping[str, Any], field: str = EVENT_FIELD) -> str | None:
    """`Dialect.event_name`'s default: the name in the event's `field`, when it is a
    non-empty string (any other value names nothing)."""
    name = event.get(field)
    return name if isinstance(name, str) and name else None


def never_sequential(hook_name: str) -> bool:
    """`Dialect.sequential`'s default: the agent starts an event's hooks all at once."""
    return False


def no_hook_dir(given: str | None, root: str, home: str, untrusted: bool) -> dict[str, str]:
    """`Dialect.hook_dir_env`'s default: the agent names no hook folder to its hooks."""
    if given is not None:
        raise ConfigError(f"--hook-dir {given}: this agent sets no hook folder variable")
    return {}


def no_answer_form(event: str, answer: Mapping[str, Any], notes: Sequence[str]) -> None:
    """`Dialect.agent_answer`'s default: this agent has no answer form (`run` refuses)."""
    return None


def stderr_is_shown(stdout: bytes, stderr: bytes, exit_code: int) -> bool:
    """`Dialect.may_add_to_stderr`'s default: the agent never reads a hook's stderr as
    its answer (Cline, Cursor, Copilot, Goose read stdout), so a line may be added."""
    return True


def stderr_unless_blocking(*codes: int) -> Callable[[bytes, bytes, int], bool]:
    """`Dialect.may_add_to_stderr` of an agent that reads stderr as the reason it hands
    the model after one of the blocking exit `codes` (the Claude family's, Windsurf's,
    Kiro's 2; Crush's 2 and 49): a line may be added after any other exit."""
    return lambda stdout, stderr, exit_code: exit_code not in codes


def lines(texts: Sequence[str]) -> bytes:
    """One line each, for stderr (undecodable characters escaped)."""
    return "".join(f"{t}\n" for t in texts).encode("utf-8", "backslashreplace")


def json_line(document: Mapping[str, Any]) -> bytes:
    """A JSON object on one line, ASCII only (every agent's parser reads it)."""
    return json.dumps(document, ensure_ascii=True).encode() + b"\n"


def block_on_stderr(reason: str, notes: Sequence[str], code: int = 2) -> AgentReply:
    """A block read from the exit code with the reason on stderr (the Claude family,
    Windsurf, Kiro, Crush): the reason first, then the notes it does not already say."""
    return b"", lines([reason, *(n for n in notes if n not in reason)]), code


def failure_on_stderr(reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
    """`wrapper_failure` for agents that read exit 2 with the reason on stderr as a block
    and any other non-zero exit as a non-blocking error (the Claude family)."""
    if fail_closed:
        return b"", f"sandboxrun (fail-closed): {reason}\n".encode(), 2
    return b"", f"sandboxrun: {reason}\n".encode(), 1


def unique_mounts(paths: Sequence[str]) -> tuple[str, ...]:
    """Paths in order, dropping repeats and paths inside an earlier one."""
    kept: list[str] = []
    for p in paths:
        if not any(p == k or Path(p).is_relative_to(k) for k in kept):
            kept.append(p)
    return tuple(kept)


# Set for every hook by the sandbox (`_backends.environment.hook_environment`'s base, and
# the runner's CLAUDE_ENV_FILE): what is true inside, which a hook entry's own `env` never
# moves. Here, not beside them: the dialects never import a backend (DESIGN.md §6);
# tests/test_copilot_dialect.py checks that the two agree.
SANDBOX_VARS = frozenset({"HOME", "PATH", "LANG", "TMPDIR", "CLAUDE_ENV_FILE"})


def entry_env(own: Mapping[str, str], entry: Mapping[str, str], hook: str) -> dict[str, str]:
    """The pairs of a hook entry's own `env` (Gemini's, Copilot's) that are added to
    `own`, the variables sandboxrun sets for the hook (the project dir...). One naming
    ours, or the sandbox's (`SANDBOX_VARS`), is left out with a warning and the hook
    runs with our value: an entry, a repository's too, may add variables, never replace
    or unset ours (a guard reading $GEMINI_PROJECT_DIR must find the project it guards:
    inside, only the sandbox's paths are true)."""
    kept = {}
    for name, value in entry.items():
        if name in own or name in SANDBOX_VARS:
            logger.warning("hook {}: its env's {} is not set: sandboxrun sets it", hook, name)
        else:
            kept[name] = value
    return kept


def source_of(path: str, workspaces: Sequence[str], trusted: str) -> str:
    """`workspace` for a path inside a workspace root (its files come with the
    repository, whoever named them), else the `trusted` source it was given as."""
    real = os.path.realpath(path)
    for root in workspaces:
        if Path(real).is_relative_to(os.path.realpath(root)):
            return "workspace"
    return trusted


# What exec takes besides the hook's own time (its Python's start, the container's start
# and removal, the audit line): 2.1 to 2.8 s on a loaded machine (2 cores, load 9), seen
# with the real Copilot CLI (issue 30), so the former 2 s margin let the agent end the
# wrapper first: no audit line, and a fail-closed block lost to the agent's fail-open timeout.
DEADLINE_MARGIN = 5.0


def below_deadline(deadline: float) -> float:
    """The seconds exec gives a hook that the agent itself ends after `deadline` s (what
    install writes as `--timeout`), so that exec's answer is in first: `DEADLINE_MARGIN`
    below it, or half of a short one."""
    return max(deadline - DEADLINE_MARGIN, deadline / 2)


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


def event_bytes(document: Mapping[str, Any]) -> bytes:
    """Compact JSON bytes for any JSON-loadable document, never raising on its content.

    A lone UTF-16 surrogate (an emoji cut in half) becomes its own `\\udXXX` escape
    inside the string it was in, so the hook reads back exactly the string it was given;
    NaN and infinities (`1e400`) become null, as the agents' JavaScript writes them.
    """
    try:
        text = json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(document), separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace")


def _finite(value: Any) -> Any:
    """A copy of `value` with NaN and infinities replaced by None (iterative: any depth)."""
    root: list[Any] = [value]
    stack: list[tuple[list[Any] | dict[Any, Any], Any]] = [(root, 0)]
    while stack:
        parent, key = stack.pop()
        item = parent[key]
        if isinstance(item, float) and not math.isfinite(item):
            parent[key] = None
        elif isinstance(item, Mapping):
            copy = dict(item)
            parent[key] = copy
            stack += [(copy, k) for k in copy]
        elif isinstance(item, list | tuple):
            items = list(item)
            parent[key] = items
            stack += [(items, i) for i in range(len(items))]
    return root[0]


def clean_text(text: str) -> str:
    """`text` with lone surrogates (from a hook's `"\\ud800"`) replaced by U+FFFD, so
    every answer field encodes to UTF-8; a valid pair is kept as its character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def clean_answer(value: Any) -> Any:
    """`clean_text` applied to every string (keys too) of a parsed JSON answer."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): clean_answer(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_answer(v) for v in value]
    return value


def escape_name(name: str) -> str:
    """A path or name for reports: undecodable bytes (surrogateescape, as `os.listdir`
    returns non-UTF-8 names) as `\\xNN`, other lone surrogates as `\\udXXX`."""
    try:
        raw = os.fsencode(name)
    except UnicodeEncodeError:
        return name.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


# What JavaScript's String.prototype.trim removes (the agents' own JSON readers trim so
# before parsing): never trim less, or an agent could read JSON sandboxrun did not.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006" \
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # fmt: skip
JsonRule = Callable[[dict[str, Any]], tuple[dict[str, Any], Sequence[str], str]]


def filter_json_stdout(stdout: bytes, rule: JsonRule) -> tuple[bytes, str | None]:
    """A repository command's stdout after an agent's `rule` for untrusted answers
    (`Dialect.untrusted_stdout`): (the object kept, the fields dropped, the note naming
    them). Output that is not a JSON object passes unchanged (the agent reads it as
    text), and so does an object with nothing to drop. Output that starts with `{` but
    does not read here is dropped whole: the agent's parser might read it (deeper
    nesting, other spaces), and what it would find there is unknown."""
    text = stdout.decode("utf-8", "replace").strip(JS_SPACE)
    if not text.startswith("{"):
        return stdout, None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        note = "stdout starts with '{' but is not a JSON object sandboxrun can read: dropped"
        return b"", f"{note} (untrusted command)"
    kept, dropped, note = rule(data)
    if not dropped:
        return stdout, None
    return json.dumps(kept, ensure_ascii=True).encode() + b"\n", note


def dropped_note(dropped: Sequence[str]) -> str:
    """What an untrusted hook's report (or `exec`'s stderr) says of `dropped`."""
    names = [printable(n[:40]) for n in dropped[:8]]
    if len(dropped) > 8:
        names.append(f"{len(dropped) - 8} more")
    return (
        f"workspace hook: {', '.join(names)} ignored (untrusted; "
        "trust_workspace_decisions = true in the user's config honours it)"
    )
