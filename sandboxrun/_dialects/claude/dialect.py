"""The Claude Code hook protocol (and Qoder's, Qoder CN's): see reference/claude-hooks.md.

Pure functions over paths, bytes and dicts: no Docker, no threads. Qoder and Qoder CN
are the same dialect with other folders and another project-dir variable, so agent
variants are data (`ClaudeDialect`).

One hook's reading (`HookOutcome.answer`, empty when the hook gave no decision: it
failed, timed out or its JSON was rejected) always has these keys:

- `blocked` (bool): this hook blocks the action in the event's own terms: the tool
  is denied (PreToolUse, PermissionRequest), the reason is fed back to the model
  (PostToolUse, PostToolUseFailure), the prompt is erased (UserPromptSubmit),
  stopping is prevented (Stop, SubagentStop).
- `permissionDecision` ("allow" | "ask" | "deny" | None): PreToolUse and
  PermissionRequest only.
- `reason` (str): why; told to the model (to the user for UserPromptSubmit, and for
  an allow/ask decision).
- `additionalContext`, `systemMessage`, `stopReason` (str, "" when absent).
- `continue` (bool), `suppressOutput` (bool).
- `updatedInput` (dict | None): the tool input that replaces the original.

Every string in a reading is valid Unicode: a lone surrogate a hook wrote as `"\\ud800"`
is read as U+FFFD.

Untrusted decisions (hooks from the `project` and `local` files, which come with the
repository, and commands `exec --untrusted` runs; see `workspace_json`): unless
`Settings.trust_workspace_decisions`, such a hook may deny, ask, block, stop the agent
and add context or messages, but its approval (`permissionDecision: "allow"`, legacy
`decision: "approve"`, PermissionRequest `decision.behavior: "allow"`) is read as no
decision (`permissionDecision` None: the agent's own permission rules, usually a prompt,
decide; not "ask", which would force a prompt the user's rules may not want), its
`updatedInput` is dropped, and its `suppressOutput` too (a repository's hook must not
hide what it printed from the user), as is every field not listed as harmless (the
agent's newer ones, `updatedPermissions`, `updatedMCPToolOutput`...: allowed by list).
The rule works on the hook's JSON itself, before it is read, so `run` and `exec` (which
passes the JSON on to the agent) drop the same fields. Each dropped field is named (in
that hook's `error`; on `exec`'s stderr).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..._sandbox.mounts import transcript_file
from ..._types import Discovery, ExecResult, HookOutcome, HookSpec
from ..base import (
    EVENT_FIELD,
    Dialect,
    ExecPlace,
    ExecPlugin,
    clean_answer,
    decides,
    dropped_note,
    event_bytes,
    failure_on_stderr,
    filter_json_stdout,
    named_event,
    never_sequential,
    no_hook_dir,
    no_loop_limit,
    no_tool_fields,
    outcome_fields,
    same_input,
    same_reader,
    sandbox_ending,
    shell_command,
    stderr_unchanged,
    stderr_unless_blocking,
)
from . import matchers as _claude_match
from .answer import StrictAnswer
from .answer import agent_answer as claude_answer
from .handler import SECONDS, Timeouts
from .matchers import MATCH_FIELDS as MATCH_FIELDS  # re-exported for tests
from .plugins import exec_plugin as plugin_of
from .settings import ConfigFile, discover, installed_plugins, project_root

# The classic events (Qoder, Qoder CN), then current Claude Code's (reference: "Current
# Claude Code (v2.1.x, 2026)", completed from its public hooks reference).
CLASSIC_HOOK_NAMES = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "SubagentStop",
    "SubagentStart",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
)
HOOK_NAMES = (
    *CLASSIC_HOOK_NAMES,
    "PermissionDenied",
    "PostToolBatch",
    "Setup",
    "InstructionsLoaded",
    "UserPromptExpansion",
    "StopFailure",
    "ConfigChange",
    "CwdChanged",
    "FileChanged",
    "PostCompact",
    "TaskCreated",
    "TaskCompleted",
    "TeammateIdle",
    "Elicitation",
    "ElicitationResult",
    "WorktreeCreate",
    "WorktreeRemove",
)
# Events whose answer is a permission decision (exit 2 and `block` mean deny).
PERMISSION_EVENTS = frozenset({"PreToolUse", "PermissionRequest"})
# Events that exit 2 or `decision: "block"` can block; elsewhere stderr only informs the user.
BLOCKING_EVENTS = PERMISSION_EVENTS | {
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "Stop",
    "SubagentStop",
}
# Events whose plain-text stdout (exit 0) reaches the model as context.
PLAIN_TEXT_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})
_STRICTNESS = {"allow": 1, "ask": 2, "deny": 3}
SHORT_DEADLINE = 1.0  # Codex's `SESSION_END_DEFAULT_TIMEOUT_SEC` (`codex/discovery.py`)
# The top-level `decision` words and what each means: Claude Code's legacy pair.
LEGACY_DECISIONS: tuple[tuple[str, str], ...] = (("approve", "allow"), ("block", "deny"))
_MISPLACED = ("additionalContext", "permissionDecision", "permissionDecisionReason", "updatedInput")
# A session's identifiers (a UUID, Qwen's `<session>########<n>` prompt id, a model name
# such as `qwen/qwen3-coder@1a2b3c4d`): what a session variable may hold.
TOKEN = re.compile(r"[A-Za-z0-9._:@#/+=-]{1,256}")


class Reader(Protocol):
    """Discovery for a Claude-shaped agent whose hooks live in other files than Claude's
    settings (Codex: `hooks.json` and `config.toml`)."""

    def __call__(
        self, dialect: ClaudeDialect, hook_name: str | None, workspaces: Sequence[str],
        home: str, explicit: Sequence[str],
    ) -> Discovery: ...  # fmt: skip


class StrictOutput(StrictAnswer, Protocol):
    """An agent that reads a hook's JSON against a closed schema (Codex): what it ignores,
    what a repository's command may hand it (`untrusted_stdout`), and what `run --answer
    agent` may hand it (`StrictAnswer`)."""

    def ignored(self, event: str, stdout: str) -> str | None:
        """Why the agent ignores this exit-0 stdout (the hook then failed), or None."""

    def untrusted(self, stdout: bytes, stdin: bytes) -> tuple[bytes, str | None]:
        """`Dialect.untrusted_stdout` under this schema."""


@dataclass(frozen=True, slots=True)
class ClaudeDialect:
    """Claude Code's settings-file hooks; the folders and the variable vary per clone.

    The Claude-shaped agents beyond Claude's clones are rows of the same table with a few
    more columns: their own `reader` of config files (Codex) or their own list of files
    (`config_files`: Droid, Qwen Code, Devin...), the `shell` a command string runs in, a
    `strict` output schema, the folder under `user_dir` holding transcripts, how a
    `timeout` reads, more variables naming the project, the event names, the words of
    `decision`, and the input's session and roots fields (`agents.py`). The defaults are
    Claude Code's and Qoder's."""

    agent: str
    user_dir: str  # relative to $HOME
    project_dir: str  # relative to the project root (the first workspace root)
    project_dir_var: str | None  # the environment variable naming the project root, if any
    default_timeout: float = 60.0  # classic; current Claude Code: 600
    hook_names: tuple[str, ...] = CLASSIC_HOOK_NAMES
    reader: Reader | None = None  # None: Claude's settings files (`settings.discover`)
    shell: tuple[str, ...] = ("/bin/sh", "-c")  # what a command string runs in
    strict: StrictOutput | None = None  # None: Claude's lenient reading of extra fields
    transcripts: str = "projects"  # under user_dir: where the agent keeps transcripts
    config_files: tuple[ConfigFile, ...] = ()  # empty: user, project, local settings.json
    timeouts: Timeouts = SECONDS  # how a handler's `timeout` reads (`handler.Timeouts`)
    extra_vars: tuple[str, ...] = ()  # more variables the agent sets to the project root
    table_keys: frozenset[str] = frozenset()  # keys of the hooks table that are settings
    decisions: tuple[tuple[str, str], ...] = LEGACY_DECISIONS  # `decision` word -> meaning
    session_field: str = "session_id"  # the input's session id
    roots_field: str = "cwd"  # "cwd", or "workspace_roots" (a list: Augment)
    # Claude Code rejects a hookSpecificOutput without its event's hookEventName; Qwen
    # Code reads it as a plain record (types.ts@01ed106), and its own guard omits it.
    named_output: bool = True
    # Variables the agent sets from its hook input: (variable, input field; a dotted
    # path is a nested field, `effort.level`), each an identifier (`TOKEN`).
    input_vars: tuple[tuple[str, str], ...] = ()
    # Variables the agent sets that name no path (a model's name, an entry point's): `exec`
    # passes them on from the environment the agent gave the wrapper when the value is
    # allowed (variable, the value's pattern); `run` has none to pass.
    passed_vars: tuple[tuple[str, re.Pattern[str]], ...] = ()
    # Variables the agent sets to the same value for every hook (`CLAUDECODE=1`).
    const_vars: tuple[tuple[str, str], ...] = ()
    # What a variable holds when the agent has no value for it: "" (Qwen sets every one),
    # or None, unset (Claude Code leaves out CLAUDE_EFFORT where the input has no effort).
    absent: str | None = ""
    # Events the agent gives a short deadline of its own without `timeout` (Codex's
    # SessionEnd and Interrupt: 1 s, `SHORT_DEADLINE`).
    short_events: frozenset[str] = frozenset()
    # How the agent records a session, for `check --transcript` (None: not read).
    transcript_format: str | None = None

    @property
    def project_vars(self) -> tuple[str, ...]:
        """Every variable a hook finds naming the project root."""
        return tuple(v for v in (self.project_dir_var, *self.extra_vars) if v)

    may_add_to_stderr = staticmethod(stderr_unless_blocking(2))  # (`Dialect.may_add_to_stderr`)

    def event_env(
        self, event: Mapping[str, Any], root: str, transcript: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, str]:  # fmt: skip
        """The variables the agent sets for a hook besides the project's (`const_vars`,
        `input_vars`, `passed_vars`). A value is allowed by its characters (`TOKEN`, or
        the variable's own pattern): anything else, or an absent field, is `absent`, as
        the agent leaves a field it has no value for (Qwen's `QWEN_CODE_AGENT_ID` outside
        a subagent is empty; Claude's CLAUDE_EFFORT before a prompt is unset)."""
        env: dict[str, str | None] = dict(self.const_vars)
        env.update({var: _allowed(_field(event, field), TOKEN) for var, field in self.input_vars})
        if environ is not None:
            env.update({var: _allowed(environ.get(var), p) for var, p in self.passed_vars})
        filled = {var: self.absent if value is None else value for var, value in env.items()}
        return {var: value for var, value in filled.items() if value is not None}

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The event's name: the Claude family's and Codex's `hook_event_name`."""
        return named_event(event)

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        if self.roots_field == "workspace_roots":
            roots = event.get("workspace_roots")
            if isinstance(roots, list):
                return [r for r in roots if isinstance(r, str) and r]
        cwd = event.get("cwd")
        return [cwd] if isinstance(cwd, str) and cwd else []

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        answer = _answer(blocked=True, permissionDecision="deny", reason=reason)
        del answer["suppressOutput"]  # per hook only: not a field of the combined answer
        return answer

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        return failure_on_stderr(reason, fail_closed)  # exit 2 blocks; 1 is non-blocking

    sequential = staticmethod(never_sequential)  # an event's hooks all start at once
    hook_dir_env = staticmethod(no_hook_dir)
    roots_in_event = False
    exec_command = shell_command
    max_input = None
    untrusted_stderr = staticmethod(stderr_unchanged)
    tool_fields = staticmethod(no_tool_fields)
    for_event = same_reader
    transcript_for_repository = True
    name_field = EVENT_FIELD
    next_input = staticmethod(same_input)
    default_loop_limit = staticmethod(no_loop_limit)
    message_field = "systemMessage"  # shown to the user (`_review.exec_note`)

    def exec_place(self, event: Mapping[str, Any], cwd: str, home: str, given: bool) -> ExecPlace:
        """A session in a subfolder: the whole project it belongs to (`project_root`)."""
        return ExecPlace(project_root(cwd, home, self.project_dir), cwd)

    def exec_plugin(self, environ: Mapping[str, str], home: str) -> ExecPlugin | None:
        """Claude Code's plugins only (CLAUDE_PLUGIN_ROOT, `plugins.exec_plugin`)."""
        return plugin_of(home, self.user_dir, environ) if self.agent == "claude" else None

    def hook_places(self, home: str) -> list[str]:
        """The user's hooks folder and, of the plugins tree, only installed plugins."""
        plugins = [root for _id, root in installed_plugins(home, self.user_dir)]
        return [os.path.join(home, self.user_dir, "hooks"), *plugins]

    def agent_deadline(self, event: Mapping[str, Any]) -> float | None:
        return SHORT_DEADLINE if event.get(EVENT_FIELD) in self.short_events else None

    def failure_dialect(self, stdin: bytes) -> Dialect:
        """Copilot also runs the wrappers `install --agent claude` writes in a
        repository's `.claude/settings*.json` (github/docs hooks-reference.md, "Hooks
        locations") and denies a preToolUse hook's ANY non-zero exit, so Claude's exit 1
        would deny there: for Copilot's event (`from_copilot`) the answer is Copilot's
        (exit 0, nothing on stdout; exit 2 under fail-closed, as for Claude). Taking a
        Claude event for Copilot's costs only the warning's place: exit 0 with stderr is
        non-blocking in Claude Code too."""
        if self.agent == "claude":  # Claude Code's own wrappers (those Copilot reads)
            from ..copilot import COPILOT
            from ..copilot.events import from_copilot

            if from_copilot(stdin):
                return COPILOT
        return self

    def transcript(self, event: Mapping[str, Any], home: str) -> str | None:
        return transcript_file(event, home, self.user_dir, self.transcripts)

    @property
    def env_file_dir(self) -> str:
        return self.user_dir

    def pinned_project(self, folder: str, home: str) -> str | None:
        """Where a session in a subfolder has its hooks pinned (with a project variable)."""
        return project_root(folder, home, self.project_dir) if self.project_dir_var else None

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> tuple[bytes, bytes, int]:
        """Exit 2 with the reason for a block, else the documented JSON (`answer.py`)."""
        return claude_answer(event, answer, notes, self.strict)

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        if self.strict is not None:
            return self.strict.untrusted(stdout, stdin)
        return untrusted_stdout(stdout, dict(self.decisions))

    def discover(
        self,
        hook_name: str | None,
        workspaces: Sequence[str],
        home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:
        """The hooks of the user, project and local settings files (see `settings`), or
        of the agent's own files (`reader`)."""
        if self.reader is not None:
            return self.reader(self, hook_name, workspaces, home, explicit)
        return discover(self, hook_name, workspaces, home, explicit)

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """Match-all forms, exact names (`|` lists), else a bounded regex search; the
        exact rules, and what a broken matcher means per source, are in `_claude_match`."""
        return _claude_match.matches(spec, event)

    # -- input -------------------------------------------------------------------

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event as the hook reads it: the base fields first, compact, no newline.

        `hook_event_name` is the hook being run and `cwd` the project root the hook
        really runs in (or `workspace_roots`, every resolved root, where the agent sends
        those); `session_id` (the agent's session field) is kept ("" if missing),
        `transcript_path` as given. Any JSON-loadable event gives bytes (`event_bytes`:
        lone surrogates escaped).
        """
        session = self.session_field
        base: dict[str, Any] = {session: event.get(session, "")}
        if "transcript_path" in event:
            base["transcript_path"] = event["transcript_path"]
        if self.roots_field == "workspace_roots":
            base["workspace_roots"] = list(workspaces)
        else:
            base["cwd"] = workspaces[0]  # the resolved roots, never empty (`_runner`)
        base["hook_event_name"] = hook_name
        merged = {**base, **{k: v for k, v in event.items() if k not in base}}
        return event_bytes(merged)

    # -- output ------------------------------------------------------------------

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        """Exit 0: the JSON answer or plain text; 2: a blocking error; else non-blocking.
        A workspace hook's approvals and widenings are dropped unless `trust_workspace`."""
        if spec.run_async:
            return _async_outcome(self.interpret(replace(spec, run_async=False), result,
                                                 timeout, trust_workspace))  # fmt: skip
        common = outcome_fields(spec, result)
        stderr, event = common["stderr"], spec.hook_name
        ended = sandbox_ending(result, timeout)
        if ended:  # killed: no decision
            return HookOutcome(status=ended[0], error=f"{event} hook {ended[1]}", **common)
        if result.exit_code == 2 and self.strict is not None and not stderr.strip():
            # Codex blocks on exit 2 only with a reason on stderr; without one the hook failed.
            why = f"{event} hook exited with code 2 but wrote no reason on stderr"
            return HookOutcome(status="failed", error=why, **common)
        if result.exit_code == 2:
            # A blocking error: stderr is the reason, stdout is ignored (even JSON).
            answer = blocking_error(event, stderr, spec.name)
            return HookOutcome(status="completed", answer=answer, **common)
        if result.exit_code != 0:
            first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
            error = first or f"{event} hook exited with code {result.exit_code}"
            return HookOutcome(status="failed", error=error, **common)
        stdout = result.stdout.decode("utf-8", "replace")
        ignored = self.strict.ignored(event, stdout) if self.strict is not None else None
        if ignored is not None:  # the agent ignores the whole answer: the hook failed
            return HookOutcome(status="failed", error=f"{event} hook answer {ignored}", **common)
        trusted = decides(spec.source, trust_workspace)
        parsed, message = parse_answer(event, stdout, spec.name, trusted, dict(self.decisions),
                                       self.named_output)  # fmt: skip
        if parsed is None:
            return HookOutcome(status="failed", error=message, **common)
        return HookOutcome(status="completed", error=message, answer=parsed, **common)

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """What the agent does with every hook's answer (all are used, even after a deny).

        The strictest permission decision wins (deny > ask > allow) and `reason` joins
        the reasons of the hooks that gave it; elsewhere `reason` joins the blocking
        hooks' reasons. Contexts, system messages and stop reasons are joined with
        newlines in configuration order. `continue: false` from any hook stops the
        agent, which also counts as blocked. Of several `updatedInput`s the last in
        configuration order wins (deterministic; Claude Code takes the last to finish).
        With `fail_closed`, a hook that did not complete blocks (denies), naming itself.
        """
        event = outcomes[0].spec.hook_name if outcomes else ""
        answers = [o.answer for o in outcomes if o.status == "completed" and o.answer]
        failures = [
            f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}"
            for o in outcomes
            if fail_closed and o.status != "completed" and not o.spec.run_async
        ]
        decision: str | None = None
        for a in answers:
            d = a.get("permissionDecision")
            if d in _STRICTNESS and (decision is None or _STRICTNESS[d] > _STRICTNESS[decision]):
                decision = d
        if failures and event in PERMISSION_EVENTS:
            decision = "deny"
        if event in PERMISSION_EVENTS:
            deciders = [a for a in answers if decision and a.get("permissionDecision") == decision]
        else:
            deciders = [a for a in answers if a.get("blocked")]
        reasons = [a.get("reason", "") for a in deciders]
        proceed = all(a.get("continue") is not False for a in answers)
        updated = None
        for a in answers:
            if a.get("updatedInput") is not None:
                updated = a["updatedInput"]
        blocked = (
            any(a.get("blocked") for a in answers)
            or decision == "deny"
            or not proceed
            or bool(failures)
        )
        return {
            "blocked": blocked,
            "permissionDecision": decision,
            "reason": _join([*reasons, *failures]),
            "additionalContext": _join([a.get("additionalContext", "") for a in answers]),
            "systemMessage": _join([a.get("systemMessage", "") for a in answers]),
            "continue": proceed,
            "stopReason": _join(
                [a.get("stopReason", "") for a in answers if a.get("continue") is False]
            ),
            "updatedInput": updated,
        }


def _async_outcome(outcome: HookOutcome) -> HookOutcome:
    """An `async` hook's run: reported as it went, its answer dropped (the agent does not
    wait for it, so it decides nothing), and it is not a failure under fail-closed."""
    note = "async hook: its answer decides nothing (the agent does not wait for it)"
    error = "; ".join(e for e in (outcome.error, note) if e)
    return replace(outcome, spec=replace(outcome.spec, run_async=True), answer={}, error=error)


# What an untrusted hook's JSON may carry (module docstring); any other field is dropped.
_HARMLESS = frozenset({"continue", "stopReason", "systemMessage", "decision", "reason"})
_HARMLESS_SPECIFIC = frozenset(
    {"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"}
)
_HARMLESS_VERDICT = frozenset({"behavior", "message", "interrupt"})


def workspace_json(
    data: Mapping[str, Any], decisions: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """An untrusted hook's JSON answer without what it may not decide (module docstring),
    and the names of what was dropped ("its allow" for an approval: each `decision`
    word that means allow in `decisions`, the agent's own). Values of kept fields are
    left for the schema check (`_structured`, the agent's own) to judge."""
    words = dict(LEGACY_DECISIONS) if decisions is None else decisions
    approval = isinstance(data.get("decision"), str) and words.get(data["decision"]) == "allow"
    allow, dropped, kept = False, list[str](), dict[str, Any]()
    for key, value in data.items():
        if key == "decision" and approval:
            allow = True
        elif key == "hookSpecificOutput" and isinstance(value, dict):
            kept[key], specific_allow, specific_dropped = _workspace_specific(value)
            allow, dropped = allow or specific_allow, dropped + specific_dropped
        elif key in _HARMLESS or key == "hookSpecificOutput":
            kept[key] = value
        elif value is not None and value is not False:  # an absent or off field hides nothing
            dropped.append(key)
    if approval:  # its reason goes with it
        kept.pop("reason", None)
    if allow:
        dropped.insert(0, "its allow")
    return kept, dropped


def _workspace_specific(specific: Mapping[str, Any]) -> tuple[dict[str, Any], bool, list[str]]:
    allow, dropped, kept = False, list[str](), dict[str, Any]()
    for key, value in specific.items():
        if key == "permissionDecision" and value == "allow":
            allow = True
        elif key == "decision" and isinstance(value, dict):  # PermissionRequest's verdict
            if value.get("behavior") == "allow":
                allow = True  # all of it goes: its updatedInput, its rules
            else:
                kept[key] = {k: v for k, v in value.items() if k in _HARMLESS_VERDICT}
            dropped += [k for k, v in value.items() if k not in _HARMLESS_VERDICT and v is not None]
        elif key in _HARMLESS_SPECIFIC or key == "decision":
            kept[key] = value
        elif value is not None:
            dropped.append(key)
    if allow:
        kept.pop("permissionDecisionReason", None)
    return kept, allow, dropped


# What JavaScript's String.prototype.trim removes (the agent trims before it parses):
# more than Python's `str.strip()` knows (U+FEFF), and never less.
def untrusted_stdout(
    stdout: bytes, decisions: Mapping[str, str] | None = None
) -> tuple[bytes, str | None]:
    """An untrusted command's stdout as the agent may see it (`exec --untrusted`), and a
    note naming what was dropped (`filter_json_stdout`, with `workspace_json`'s rule)."""

    def rule(data: dict[str, Any]) -> tuple[dict[str, Any], list[str], str]:
        kept, dropped = workspace_json(data, decisions)
        return kept, dropped, dropped_note(dropped)

    return filter_json_stdout(stdout, rule)


# What Claude Code 2.1.332 sets for a hook besides CLAUDE_PROJECT_DIR and CLAUDE_ENV_FILE
# (its bundled `kut`, `QEe`, `d6o`; tests/agents/test_claude.py probes them), and what of
# it a sandboxed hook gets (docs/agents/claude.md has the table). Never its host pid
# (CLAUDE_PID), its children's notes folder (CLAUDE_CODE_CHILD_NOTES_DIR, a host path),
# nor the socket and token that let a process talk to the running agent
# (CLAUDE_CODE_MESSAGING_SOCKET, _TOKEN).
CLAUDE = ClaudeDialect(
    "claude", ".claude", ".claude", "CLAUDE_PROJECT_DIR", default_timeout=600.0,
    hook_names=HOOK_NAMES,
    input_vars=(("CLAUDE_CODE_SESSION_ID", "session_id"), ("CLAUDE_EFFORT", "effort.level")),
    passed_vars=(
        # `claude-code_<version, dots as dashes>_harness`, which it sets unless the user's
        # environment named another agent (that value stays the user's: not passed)
        ("AI_AGENT", re.compile(r"claude-code_[0-9]{1,6}(-[0-9]{1,6}){0,3}_(harness|agent)")),
        # cli, sdk-cli, sdk-ts, claude-vscode...: the shape the CLI itself gives the name
        ("CLAUDE_CODE_ENTRYPOINT", re.compile(r"[a-z][a-z0-9_-]{0,31}")),
        ("CLAUDE_CODE_SESSION_ATTENDED", re.compile(r"[01]")),
    ),
    const_vars=(("CLAUDECODE", "1"), ("CLAUDE_CODE_CHILD_SESSION", "1"),
                ("COREPACK_ENABLE_AUTO_PIN", "0"), ("NoDefaultCurrentDirectoryInExePath", "1")),
    absent=None, transcript_format="claude",
)  # fmt: skip
QODER = ClaudeDialect("qoder", ".qoder", ".qoder", "QODER_PROJECT_DIR", transcript_format="claude")
QODER_CN = ClaudeDialect(
    "qoder-cn", ".qoder-cn", ".qoder", "QODERCN_PROJECT_DIR", transcript_format="claude"
)


# -- discovery helpers -------------------------------------------------------------


def _allowed(value: Any, pattern: re.Pattern[str]) -> str | None:
    """`value` when it is a string `pattern` allows whole, else None."""
    return value if isinstance(value, str) and pattern.fullmatch(value) else None


def _field(event: Mapping[str, Any], path: str) -> Any:
    """The input's field at a dotted `path` (`effort.level`), or None."""
    value: Any = event
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _answer(**fields: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "blocked": False,
        "permissionDecision": None,
        "reason": "",
        "additionalContext": "",
        "systemMessage": "",
        "continue": True,
        "stopReason": "",
        "suppressOutput": False,
        "updatedInput": None,
    }
    answer.update(fields)
    return answer


def blocking_error(event: str, stderr: str, name: str) -> dict[str, Any]:
    """The reading of exit 2: stderr blocks where the event can block, else informs."""
    text = stderr.strip() or f"hook {name} exited with code 2 (no stderr)"
    if event in PERMISSION_EVENTS:
        return _answer(blocked=True, permissionDecision="deny", reason=text)
    if event in BLOCKING_EVENTS:
        return _answer(blocked=True, reason=text)
    return _answer(systemMessage=text)


class _Rejected(ValueError):
    """The hook's JSON answer breaks the schema: a non-blocking error, no decision."""


def parse_answer(
    event: str, stdout: str, name: str, trusted: bool = True,
    decisions: Mapping[str, str] | None = None, named: bool = True,
) -> tuple[dict[str, Any] | None, str | None]:  # fmt: skip
    """Exit-0 stdout -> (answer, warning or None), or (None, why it was rejected). Not
    `trusted`: what the hook may not decide is dropped first (`workspace_json`)."""
    text = stdout.lstrip()
    warning = None
    if text.startswith("{"):
        try:
            data: Any = clean_answer(json.loads(text))
        except (ValueError, RecursionError):
            data = None
            warning = "stdout starts with '{' but is not valid JSON: read as plain text"
        if isinstance(data, dict):
            dropped: list[str] = []
            if not trusted:
                data, dropped = workspace_json(data, decisions)
            note = dropped_note(dropped) if dropped else None
            try:
                answer, warning = _structured(event, data, name, decisions, named)
            except _Rejected as exc:
                return None, f"{event} hook answer rejected: {exc}"
            return answer, "; ".join(m for m in (warning, note) if m) or None
    plain = stdout.strip()
    if plain and event in PLAIN_TEXT_CONTEXT:
        return _answer(additionalContext=plain), warning
    return _answer(), warning


def _get(obj: Mapping[str, Any], key: str, kind: type, default: Any, where: str = "") -> Any:
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        names = {str: "a string", bool: "true or false", dict: "an object"}
        raise _Rejected(f"{where}{key} must be {names.get(kind, kind.__name__)}")
    return value


def _structured(
    event: str, data: Mapping[str, Any], name: str,
    decisions: Mapping[str, str] | None = None, named: bool = True,
) -> tuple[dict[str, Any], str | None]:  # fmt: skip
    """A JSON answer, validated the way the agent validates it (else `_Rejected`);
    `named`: hookSpecificOutput must carry its event's hookEventName."""
    answer = _answer(
        **{"continue": _get(data, "continue", bool, True)},
        stopReason=_get(data, "stopReason", str, ""),
        systemMessage=_get(data, "systemMessage", str, ""),
        suppressOutput=_get(data, "suppressOutput", bool, False),
    )
    words = dict(LEGACY_DECISIONS) if decisions is None else decisions
    decision = _get(data, "decision", str, None)
    if decision is not None and decision not in words:
        quoted = [f'"{w}"' for w in words]
        allowed = f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        raise _Rejected(f"decision must be {allowed}, not {decision!r}")
    reason = _get(data, "reason", str, "")
    default_reason = f"blocked by hook {name}"
    warnings = [f"{k} belongs in hookSpecificOutput; ignored" for k in _MISPLACED if k in data]
    specific = data.get("hookSpecificOutput")
    if specific is not None:
        if not isinstance(specific, dict):
            raise _Rejected("hookSpecificOutput must be an object")
        got = specific.get("hookEventName")
        if named and got is None:
            raise _Rejected(f"hookSpecificOutput.hookEventName is missing (must be {event!r})")
        if named and got != event:
            raise _Rejected(f"hookSpecificOutput.hookEventName is {got!r}, not {event!r}")
        answer["additionalContext"] = _get(
            specific, "additionalContext", str, "", "hookSpecificOutput."
        )
    else:
        specific = {}
    legacy = words.get(decision or "")
    if event in PERMISSION_EVENTS:
        _permission(event, answer, specific, legacy, reason, default_reason)
    elif legacy == "deny" and event in BLOCKING_EVENTS:
        if not reason:
            warnings.append(f'decision "{decision}" without a reason')
        answer.update(blocked=True, reason=reason or default_reason)
    return answer, "; ".join(warnings) or None


def _permission(
    event: str,
    answer: dict[str, Any],
    specific: Mapping[str, Any],
    legacy: str | None,
    reason: str,
    default_reason: str,
) -> None:
    """PreToolUse's permissionDecision, or PermissionRequest's decision.behavior."""
    where = "hookSpecificOutput."
    decision, why, updated = legacy, reason, None
    if event == "PreToolUse":
        given = _get(specific, "permissionDecision", str, None, where)
        if given is not None and given not in _STRICTNESS:
            raise _Rejected(f'{where}permissionDecision must be "allow", "deny" or "ask"')
        decision = given or decision
        why = _get(specific, "permissionDecisionReason", str, "", where) or reason
        updated = _get(specific, "updatedInput", dict, None, where)
    else:
        verdict = _get(specific, "decision", dict, None, where)
        if verdict is not None:
            where += "decision."
            behavior = verdict.get("behavior")
            if behavior not in ("allow", "deny"):
                raise _Rejected(f'{where}behavior must be "allow" or "deny"')
            decision = behavior
            why = _get(verdict, "message", str, "", where) or reason
            updated = _get(verdict, "updatedInput", dict, None, where)
            if _get(verdict, "interrupt", bool, False, where) and behavior == "deny":
                answer.update({"continue": False, "stopReason": why})
    if decision == "deny":
        why = why or default_reason
    answer.update(
        blocked=decision == "deny", permissionDecision=decision, reason=why, updatedInput=updated
    )


def _join(parts: Sequence[str]) -> str:
    return "\n".join(p for p in parts if p)
