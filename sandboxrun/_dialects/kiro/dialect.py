"""Kiro's agent-config hooks (Kiro CLI, formerly Amazon Q Developer CLI): the `hooks`
field of an agent file, camelCase events, answers by exit code. Pure functions.

Confirmed in aws/amazon-q-developer-cli@15cc8f3cd18c4272925ce1c7053268eedff1ea0a (the
CLI's open source before it became Kiro CLI; its `docs/hooks.md` and
`docs/agent-format.md` match kiro.dev/docs/cli/hooks word for word):

- Entry (`crates/chat-cli/src/cli/agent/hook.rs` `Hook`): `command` (required),
  `timeout_ms` (default 30000), `max_output_size` (default 10240 bytes),
  `cache_ttl_seconds` (default 0), `matcher` (optional). Events (`HookTrigger`, serde
  camelCase): agentSpawn, userPromptSubmit, preToolUse, postToolUse, stop. The agent's
  `hooks` is `HashMap<HookTrigger, Vec<Hook>>` (`cli/agent/mod.rs`), so an unknown event
  or an ill-typed field fails the whole agent file: sandboxrun then runs none of its
  hooks and names the file (`config.py`).
- Run (`cli/chat/cli/hooks.rs` `run_hook`): `bash -c COMMAND` with no working directory
  set (Kiro's own: the project it was started in) and Kiro's environment, plus
  `USER_PROMPT` (the prompt, control characters but \\n \\r \\t removed, cut at 4096
  bytes) whenever the event has a prompt: userPromptSubmit and agentSpawn (the first
  prompt; `chat/conversation.rs`). The event on stdin: `{hook_event_name, cwd}`, plus
  `prompt`, and for tool events `tool_name`, `tool_input`, `tool_response` (post).
  An MCP tool is named `@server/tool` (`namespaced_tool_name`).
- Answer: the output kept is stdout on exit 0, else stderr, cut at `max_output_size`
  with " ... truncated". preToolUse: exit 2 blocks, and that output goes to the model
  as the tool's error, "PreToolHook blocked the tool execution: ..." (`chat/mod.rs`);
  any other code is a warning and the tool runs. agentSpawn and userPromptSubmit: exit
  0 output becomes context (`conversation.rs` `format_hook_context`). postToolUse, stop:
  nothing is read back. A timeout or a hook that cannot start is an error shown to the
  user and no result: nothing is blocked. Hooks of an event run concurrently; order is
  undefined.
- Matchers: `matcher.py` (`hook_matches_tool`, `util/pattern_matching.rs`).
- `cache_ttl_seconds`: Kiro reuses a success that long (agentSpawn: for the session).
  sandboxrun keeps no session: it runs the hook every time, and `list` says so.

Files: `.kiro/agents/*.json` in the project and `~/.kiro/agents/*.json` (kiro.dev docs;
the open-source CLI read `.amazonq/cli-agents` and `~/.aws/amazonq/cli-agents`,
`util/paths.rs`: those older folders are not read). Kiro runs the hooks of the ONE agent
in use (`--agent`, or the default), a project agent winning over a user agent of the same
name. sandboxrun cannot know which agent is in use (the event does not say): `run`
runs the hooks of every agent file, and never lets a repository's agent shadow the
user's own. `exec` (what `install` writes into each entry) runs exactly the hooks Kiro
runs. Kiro documents no trust gate for a project's agent files.

Untrusted (a project's agent files, `exec --untrusted`): Kiro's answer is an exit code
and plain text, nothing a hook could approve or widen; a repository's context is still
context (the agent's own protocol), so its stdout passes as it is.

Kiro CLI v3 hook files, `.kiro/hooks/<name>.json` (`files.py`). Confirmed in
kiro.dev/docs/cli/v3/hooks (the stored copy): `{"version": "v1", "hooks": [{name,
trigger, matcher, action: {type: "command", command} | {type: "agent", prompt}, timeout,
enabled}]}`; eleven triggers (SessionStart, Stop, PreToolUse, PostToolUse, PreTaskExec,
PostTaskExec, UserPromptSubmit, PostFileCreate, PostFileSave, PostFileDelete, Manual);
the matcher is a regular expression over the tool name (Pre/PostToolUse) or the file
path (PostFile*), and no other trigger has one; PreToolUse, PreTaskExec and
UserPromptSubmit can block. Measured by a third party on Kiro IDE 1.x, which reads the
same files (awslabs/aidlc-workflows `docs/reference/kiro-ide-hook-payload.md`; not in
Kiro's docs): the event on stdin, `{session_id, hook_event_name (the trigger), cwd,
tool_name, tool_input, tool_response}` or `{..., prompt}`; exit 2 with stderr blocks
(stderr to the model), exit 1 does not; stdout at exit 0 reaches the model only for
SessionStart and UserPromptSubmit; hooks of an event run in file-name order, each even
after an earlier one blocked. Unconfirmed: the `timeout` default (60 s, the
`timeout` unit is seconds in every public file), the user-level `~/.kiro/hooks` (two
public installers write there: sandboxrun reads it, as the user's), and which field
names a file event's path (`files.event_path`).

Kiro IDE hook files, `.kiro/hooks/*.kiro.hook` (IDE 0.x; IDE 1.x leaves them inert, as
measured in the same aidlc reference). Confirmed in kiro.dev/docs/hooks (types,
actions): `when.type` (fileEdited, fileCreated, fileDeleted, userTriggered,
promptSubmit, agentStop, preToolUse, postToolUse, preTaskExecution, postTaskExecution),
`then.type` runCommand or askAgent (a prompt: never run, listed); for promptSubmit the
prompt is in `USER_PROMPT`; exit 0: stdout is added to the agent's context; any other
exit: stderr is sent to the agent as the hook's error. Nothing blocks. No stdin (Kiro
issue kirodotdev/Kiro#7408: the IDE passes no tool data; measured on 0.12 as a stdin
never written). Unconfirmed: the unit of `then.timeout` (seconds in public hooks), how
`patterns` and `toolTypes` match: the IDE starts the hook only for what they select,
so `exec` (what `install` writes) runs exactly what the IDE starts, and `run` runs a
`.kiro.hook` of the event whatever they say.

`USER_PROMPT` in the sandbox: from the event's `prompt`, else (an installed wrapper the
IDE starts) the value the IDE set, as the one variable of Kiro's passed in by name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._types import Discovery, ExecResult, HookOutcome, HookSpec
from ..base import (
    EVENT_FIELD,
    AgentReply,
    below_deadline,
    block_on_stderr,
    caller_folder,
    event_bytes,
    failure_on_stderr,
    lines,
    named_event,
    never_sequential,
    no_deadline,
    no_hook_dir,
    no_loop_limit,
    no_pinned_project,
    no_plugin,
    no_tool_fields,
    outcome_fields,
    own_failure,
    own_project_var,
    same_input,
    same_reader,
    sandbox_ending,
    shell_command,
    stderr_unchanged,
    stderr_unless_blocking,
)
from .config import DEFAULT_MAX_OUTPUT, HOOK_NAMES, discover
from .files import IDE_EVENTS, V3_EVENTS, V3_FILE_EVENTS, V3_TOOL_EVENTS, event_path, regex_matches
from .matcher import tool_matches

TOOL_EVENTS = frozenset({"preToolUse", "postToolUse"})
CONTEXT_EVENTS = frozenset({"agentSpawn", "userPromptSubmit"})
V3_CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
V3_BLOCKING = frozenset({"PreToolUse", "UserPromptSubmit", "PreTaskExec"})
# Every event a hook of sandboxrun's can block on (`combine` under fail-closed).
BLOCKING = V3_BLOCKING | {"preToolUse"}
IDE_ONLY = frozenset(IDE_EVENTS) - set(HOOK_NAMES)  # events only a `.kiro.hook` has
ALL_EVENTS = (*HOOK_NAMES, *V3_EVENTS, *(e for e in IDE_EVENTS if e in IDE_ONLY))
BLOCK_PREFIX = "PreToolHook blocked the tool execution: "
PROMPT_ENV_MAX = 4096  # `sanitize_user_prompt`


def answer_of(**fields: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "blocked": False,
        "reason": "",  # what goes to the model when a preToolUse hook blocks
        "additional_context": "",
        "warnings": [],  # what Kiro shows the user for a failed hook
    }
    answer.update(fields)
    return answer


def truncate(text: str, cap: int) -> str:
    """Kiro's `truncate_safe` and its " ... truncated" marker: at most `cap` bytes,
    never half a character."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= cap:
        return text
    return raw[:cap].decode("utf-8", "ignore") + " ... truncated"


def user_prompt(prompt: str) -> str:
    """`USER_PROMPT` as Kiro sets it: cut at 4096 bytes, control characters other than
    newline, carriage return and tab removed (and NUL, which no environment can hold)."""
    cut = truncate(prompt, PROMPT_ENV_MAX).removesuffix(" ... truncated")
    return "".join(c for c in cut if not (_control(c) and c not in "\n\r\t"))


def _control(c: str) -> bool:
    return ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0


@dataclass(frozen=True, slots=True)
class KiroDialect:
    agent: str = "kiro"
    user_dir: str = ".kiro/agents"  # relative to $HOME
    project_dir: str = ".kiro/agents"  # relative to the project root
    project_dir_var: str | None = None  # Kiro sets none
    # `exec`'s deadline for an entry without `timeout_ms` (Kiro's 30 000 ms): below it, as
    # install's `--timeout` is below a given one (`below_deadline`), so that sandboxrun's
    # answer, a block under fail-closed, is in before Kiro's timeout, which blocks nothing.
    # (`run` reads every entry's own `timeout_ms`, default 30 s: `config.py`.)
    default_timeout: float = below_deadline(30.0)
    hook_names: tuple[str, ...] = ALL_EVENTS

    def transcript(self, event: Mapping[str, Any], home: str) -> str | None:
        return None  # Kiro hands its hooks no transcript: nothing an event names is mounted

    shell: tuple[str, ...] = ("bash", "-c")  # how `exec` runs a command string (`run_hook`)

    def hooks_folder(self, home: str) -> str:
        """`~/.kiro/hooks`: where a user's hook scripts are mounted from (never the rest
        of `~/.kiro`: its agent files may hold MCP servers' keys, `settings/` more)."""
        return os.path.join(home, os.path.dirname(self.user_dir), "hooks")

    may_add_to_stderr = staticmethod(stderr_unless_blocking(2))  # (`Dialect.may_add_to_stderr`)

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The event's name: `hook_event_name`."""
        return named_event(event)

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        """Kiro's `cwd`: the folder it runs in, whose `.kiro/agents` it reads (the
        workspace check of `run` applies to it as to any other)."""
        cwd = event.get("cwd")
        return [cwd] if isinstance(cwd, str) and cwd else []

    def event_env(
        self, event: Mapping[str, Any], root: str, transcript: str | None,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, str]:  # fmt: skip
        """`USER_PROMPT`, from the event's prompt as Kiro derives it; without one (the
        IDE starts a wrapper with no stdin) the IDE's own value from `environ`."""
        prompt = event.get("prompt")
        if isinstance(prompt, str):
            return {"USER_PROMPT": user_prompt(prompt)}
        given = (environ or {}).get("USER_PROMPT")
        return {"USER_PROMPT": given.replace("\0", "")} if given else {}

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        return answer_of(blocked=True, reason=reason)

    sequential = staticmethod(never_sequential)  # an event's hooks all start at once
    hook_dir_env = staticmethod(no_hook_dir)
    roots_in_event = False
    project_vars = property(own_project_var)
    exec_place = staticmethod(caller_folder)
    exec_command = shell_command
    exec_plugin = staticmethod(no_plugin)
    agent_deadline = staticmethod(no_deadline)
    tool_fields = staticmethod(no_tool_fields)
    max_input = None
    failure_dialect = own_failure
    untrusted_stderr = staticmethod(stderr_unchanged)
    for_event = same_reader
    transcript_for_repository = True
    session_field = None
    name_field = EVENT_FIELD
    env_file_dir = None
    next_input = staticmethod(same_input)
    pinned_project = staticmethod(no_pinned_project)
    default_loop_limit = staticmethod(no_loop_limit)
    message_field = None
    transcript_format = None

    def hook_places(self, home: str) -> list[str]:
        return [self.hooks_folder(home)]

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply:
        """A block is exit 2 with the reason on stderr (Kiro puts its own "PreToolHook
        blocked..." before it: taken off here); else exit 0 with the context on stdout
        (the events whose stdout Kiro adds to the context) and the notes on stderr."""
        if answer.get("blocked"):
            reason = answer.get("reason") or "blocked by a hook"
            reason = "\n".join(line.removeprefix(BLOCK_PREFIX) for line in reason.split("\n"))
            return block_on_stderr(reason, notes)
        context = answer.get("additional_context") or ""
        return context.encode("utf-8", "backslashreplace"), lines(notes), 0

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """Kiro reads exit 2 on preToolUse as a block and any other non-zero exit as a
        warning (the tool runs; no context is added). So our own failure is exit 1, the
        reason on stderr, nothing on stdout; under `--fail-closed` exit 2, a block on
        preToolUse (on the other events Kiro can block nothing: a warning there too)."""
        return failure_on_stderr(reason, fail_closed)

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        return stdout, None  # plain text: context, which a repository may add

    # -- discovery ---------------------------------------------------------------

    def discover(
        self,
        hook_name: str | None,
        workspaces: Sequence[str],
        home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:
        """Every agent file's hooks (`config`): the user's, then the project's."""
        return discover(self.user_dir, self.project_dir, hook_name, workspaces, home, explicit)

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """An agent file's tool events filter by glob (`matcher.py`); a v3 file's tool
        and file events by regex (`files.py`); an IDE hook is not filtered (above)."""
        flavor = flavor_of(spec)
        tool = event.get("tool_name")
        tool = tool if isinstance(tool, str) else ""
        if flavor == "v3":
            if spec.hook_name in V3_TOOL_EVENTS:
                return regex_matches(spec.matcher, tool)
            if spec.hook_name in V3_FILE_EVENTS:
                path = event_path(event)  # none named: the hook runs (it blocks nothing)
                return path is None or regex_matches(spec.matcher, path)
            return True
        if flavor == "ide" or spec.hook_name not in TOOL_EVENTS:
            return True
        return tool_matches(spec.matcher, tool)

    # -- input -------------------------------------------------------------------

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event with `hook_event_name` and `cwd`: the folder the hook starts in
        (the project mounted), as Kiro's own cwd is the folder it starts hooks in."""
        if hook_name in IDE_ONLY:  # the IDE writes a `.kiro.hook` nothing (Kiro#7408)
            return b""
        merged = {**event, "hook_event_name": hook_name}
        if workspaces:
            merged["cwd"] = workspaces[0]
        return event_bytes(merged)

    # -- output ------------------------------------------------------------------

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        common = outcome_fields(spec, result)
        event = spec.hook_name
        ended = sandbox_ending(result, timeout)
        if ended:
            return HookOutcome(status=ended[0], error=f"{event} hook {ended[1]}", **common)
        flavor = flavor_of(spec)
        if flavor != "agent":
            return _file_hook(spec, result, common, flavor)
        cap = getattr(spec, "max_output", DEFAULT_MAX_OUTPUT)
        if result.exit_code == 0:
            text = truncate(result.stdout.decode("utf-8", "replace"), cap)
            context = text if event in CONTEXT_EVENTS else ""
            return HookOutcome(
                status="completed", answer=answer_of(additional_context=context), **common
            )
        text = truncate(common["stderr"], cap)
        if result.exit_code == 2 and event == "preToolUse":
            answer = answer_of(blocked=True, reason=BLOCK_PREFIX + text)
            return HookOutcome(status="completed", answer=answer, **common)
        # A warning to the user; Kiro goes on as if the hook had not run.
        error = f"{event} hook failed with exit code {result.exit_code}: {text.strip()[:200]}"
        return HookOutcome(status="failed", error=error, **common)

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        event = outcomes[0].spec.hook_name if outcomes else ""
        answers = [o.answer for o in outcomes if o.status == "completed" and o.answer]
        failed = [o for o in outcomes if o.status != "completed"]
        warnings = [f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}" for o in failed]
        reasons = [a["reason"] for a in answers if a.get("blocked")]
        if fail_closed and event in BLOCKING:  # sandboxrun's own rule: a failure blocks
            reasons += warnings
        # Context of every hook that gave some: an IDE hook's failure too (its stderr,
        # which the IDE sends the agent); no other failure carries an answer.
        given = [o.answer for o in outcomes if o.answer]
        context = [a["additional_context"] for a in given if a.get("additional_context")]
        return answer_of(
            blocked=bool(reasons),
            reason="\n".join(reasons),
            additional_context="\n\n".join(context),
            warnings=warnings,
        )


def flavor_of(spec: HookSpec) -> str:
    """Whose hook: a `KiroHook` says; a plain spec (`exec`'s audit record) by its event
    name, the agent file's where the names are shared (preToolUse, postToolUse)."""
    flavor = getattr(spec, "flavor", None)
    if isinstance(flavor, str):
        return flavor
    return "v3" if spec.hook_name in V3_EVENTS else "ide" if spec.hook_name in IDE_ONLY else "agent"


def _file_hook(
    spec: HookSpec, result: ExecResult, common: dict[str, Any], flavor: str
) -> HookOutcome:
    """A v3 or IDE hook's answer (the module's docstring)."""
    event, code = spec.hook_name, result.exit_code
    out = truncate(result.stdout.decode("utf-8", "replace"), DEFAULT_MAX_OUTPUT)
    err = truncate(common["stderr"], DEFAULT_MAX_OUTPUT)
    if code == 0:
        context = out if flavor == "ide" or event in V3_CONTEXT_EVENTS else ""
        return HookOutcome(status="completed", answer=answer_of(additional_context=context),
                           **common)  # fmt: skip
    if flavor == "v3" and code == 2 and event in V3_BLOCKING:
        return HookOutcome(status="completed", answer=answer_of(blocked=True, reason=err),
                           **common)  # fmt: skip
    if flavor == "ide":  # the IDE sends stderr to the agent as the hook's error
        error = f"{event} hook returned an error (exit code {code}): {err.strip()[:200]}"
        return HookOutcome(status="failed", error=error,
                           answer=answer_of(additional_context=err), **common)  # fmt: skip
    error = f"{event} hook failed with exit code {code}: {err.strip()[:200]}"
    return HookOutcome(status="failed", error=error, **common)


KIRO = KiroDialect()
