"""Goose's hook protocol (Block's Goose, Open Plugins hooks). Pure functions.

Confirmed in block/goose's source (read through the code index, 2026-11-25):
- `crates/goose/src/hooks/mod.rs@0825b570`: hooks only in plugins, `<root>/hooks/hooks.json`;
  shape `{hooks: {Event: [{matcher?, hooks: [{type?, command, timeout?, on_failure?}]}]}}`;
  `type` defaults to "command", other types are ignored; an action without `command`
  is ignored; `timeout` whole seconds (default `DEFAULT_HOOK_TIMEOUT_SECS` = 30);
  `on_failure` "allow" (default) | "block", anything else rejects the whole file (as
  does any type serde refuses: a non-string `matcher`, a fractional `timeout`); 12
  events, unknown names ignored; `matcher` an unanchored Rust regex (`is_match`) tested
  against the event's `matcher_context`, empty or absent = every event, invalid (a bare
  `*`) = the rule skipped with a warning; the command runs as `sh -c` with
  `${PLUGIN_ROOT}` replaced textually (`expand_plugin_root`) and `PLUGIN_ROOT` in the
  environment, in Goose's own current directory (no `current_dir`); stdin the
  `HookContext` (`event`, `session_id`, `matcher_context`, `tool_call_id`, `tool_name`,
  `tool_input`, `tool_output`, `message`, `last_assistant_message`, `working_dir`...).
  The answer (`classify_output`): exit 2 denies, reason = stderr trimmed (default
  "denied by plugin hook"); stdout is strict UTF-8 (invalid: no decision); trimmed
  stdout starting with `{` parsed as `{decision?: str, reason?: str}`; `decision:
  "block"` denies whatever the exit code; exit 0 with empty stdout or `decision:
  "allow"` allows; anything else (a stray line, allow with exit 1, a signal, a timeout,
  a spawn error) is no decision: allow, or deny when the action says `on_failure:
  "block"` and the event is PreToolUse (`apply_verdict`: never on Stop). The blocking
  chain (`emit_blocking_with_outcome`, PreToolUse; Stop through the same chain) stops
  at the first deny. Other events (`emit`) decide nothing whatever the hook says.
- `crates/goose/src/plugins/discovery.rs@21aecaf8`: plugin folders are the children of
  the project's `.agents/plugins/` and the user's plugins folder (`~/.agents/plugins`
  per the docs, `documentation/docs/guides/context-engineering/hooks.md@0825b570`);
  `enabledPlugins`/`disabledPlugins` (lists of names) in `~/.config/goose/settings.json`,
  `<root>/.config/goose/settings.json` and `<root>/.config/goose/settings.local.json`,
  the first scope (local, project, user) naming a plugin decides; a project plugin
  shadows a user plugin of the same name; `config.yaml`'s `plugins` map can turn one
  off by path (not read here: the user's own switch, YAML).

Where sandboxrun departs, on purpose (issue 20): a repository's settings never
disable a user's plugin, and a project plugin never replaces the user's plugin of the
same name: both run, and `list` names each case. Project plugins (folders, hooks.json)
that lead out of the project through a symlink are not run. A repository's hook is
untrusted: its allow counts for no more than no decision (in Goose's chain the two
differ only in `policy_evaluated`); Goose has no input rewrite, env or approval a
repository's hook could hand on, so `exec --untrusted` passes its stdout unchanged.
sandboxrun's own fail-closed turns a failure into a deny on PreToolUse only, as
`on_failure` does (a broken hook never blocks a finished turn).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._types import Discovery, ExecResult, HookOutcome, HookSpec
from ..base import (
    EVENT_FIELD,
    SH,
    AgentReply,
    ExecCommand,
    block_on_stderr,
    caller_folder,
    clean_text,
    event_bytes,
    failure_on_stderr,
    from_repository,
    json_line,
    lines,
    named_event,
    never_sequential,
    no_deadline,
    no_event_env,
    no_hook_dir,
    no_loop_limit,
    no_pinned_project,
    no_plugin,
    no_tool_fields,
    no_transcript,
    outcome_fields,
    own_failure,
    own_project_var,
    same_input,
    same_reader,
    sandbox_ending,
    stderr_is_shown,
    stderr_unchanged,
)
from ..codex.schema import MAX_DEPTH, RUST_SPACE, _depth, _no_constant
from ..patterns import search
from .config import _inside, discover, expand

HOOK_NAMES = (
    "SessionStart", "SessionEnd", "Stop", "UserPromptSubmit", "PreToolUse",
    "PreToolUseResult", "PostToolUse", "PostToolUseFailure", "BeforeReadFile",
    "AfterFileEdit", "BeforeShellExecution", "AfterShellExecution",
)  # fmt: skip
BLOCKING = frozenset({"PreToolUse", "Stop"})
DEFAULT_DENY = "denied by plugin hook"


@dataclass(frozen=True, slots=True)
class GooseDialect:
    agent: str = "goose"
    plugins_dir: str = ".agents/plugins"  # below $HOME and below the project root
    settings_dir: str = ".config/goose"  # settings.json (and the project's .local)
    project_dir_var: str | None = None
    default_timeout: float = 30.0
    hook_names: tuple[str, ...] = HOOK_NAMES

    may_add_to_stderr = staticmethod(stderr_is_shown)  # (`Dialect.may_add_to_stderr`)
    roots_in_event = False
    shell = SH
    project_vars = property(own_project_var)
    exec_place = staticmethod(caller_folder)
    event_env = staticmethod(no_event_env)
    exec_plugin = staticmethod(no_plugin)
    agent_deadline = staticmethod(no_deadline)
    tool_fields = staticmethod(no_tool_fields)
    max_input = None
    failure_dialect = own_failure
    untrusted_stderr = staticmethod(stderr_unchanged)
    for_event = same_reader
    transcript = staticmethod(no_transcript)
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
        """The user's plugins (their own `PLUGIN_ROOT`s)."""
        return [os.path.join(home, self.plugins_dir)]

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The event's name: Goose's `event`."""
        return named_event(event, "event")

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        folder = event.get("working_dir")
        return [folder] if isinstance(folder, str) and folder else []

    def discover(
        self, hook_name: str | None, workspaces: Sequence[str], home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:  # fmt: skip
        return discover(self, hook_name, workspaces, home, explicit)

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """The matcher searched (unanchored) in `matcher_context` (Goose sets it to the
        tool name on tool events; `tool_name` is read when it is absent). A workspace
        pattern that cannot be evaluated raises `PatternError` (`patterns.search`)."""
        if not spec.matcher:
            return True
        value = event.get("matcher_context", event.get("tool_name"))
        text = value if isinstance(value, str) else ""
        return bool(search(spec.matcher, text, spec))  # None: discovery skipped it, as Goose does

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event with `event` (Goose's name for it; no `hook_event_name`) and the
        `working_dir` mounted when the event names none."""
        merged = {**event, "event": hook_name}
        if "working_dir" not in merged and workspaces:
            merged["working_dir"] = workspaces[0]
        return event_bytes(merged)

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        common = outcome_fields(spec, result)
        event = spec.hook_name
        ended = sandbox_ending(result, timeout)
        if ended:
            return HookOutcome(status=ended[0], error=f"{event} hook {ended[1]}", **common)
        verdict, reason = classify(result.exit_code, result.stdout, result.stderr)
        if verdict == "none":
            return HookOutcome(status="failed", error=f"{event} hook: {reason}", **common)
        if event not in BLOCKING:
            note = f"{event} hook said {verdict}: Goose decides nothing on {event}"
            return HookOutcome(status="completed", error=note if verdict == "block" else None,
                               answer=answer_of(), **common)  # fmt: skip
        if verdict == "block":
            return HookOutcome(status="completed", answer=answer_of("block", reason), **common)
        if not trust_workspace and from_repository(spec.source):
            note = "workspace hook: its allow counts as no decision (untrusted)"
            return HookOutcome(status="completed", error=note, answer=answer_of(), **common)
        return HookOutcome(status="completed", answer=answer_of("allow"), **common)

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """Goose's chain: the first deny in order; a failure denies on PreToolUse when
        its action says `on_failure: "block"` or sandboxrun is fail-closed."""
        for o in outcomes:
            if o.status == "completed" and o.answer and o.answer.get("decision") == "block":
                return dict(o.answer)
            failed = o.status != "completed"
            if failed and o.spec.hook_name == "PreToolUse" and (fail_closed or o.spec.fail_closed):
                why = "on_failure: block" if o.spec.fail_closed else "fail-closed"
                reason = f"sandboxrun: hook {o.spec.name} {o.status} ({why}): {o.error}"
                return answer_of("block", reason)
        return answer_of("allow")

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        return answer_of("block", reason)

    sequential = staticmethod(never_sequential)  # an event's hooks all start at once
    hook_dir_env = staticmethod(no_hook_dir)

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply:
        """A deny both ways Goose reads one: `{"decision": "block", "reason"}` on stdout
        (a deny whatever the exit code) and exit 2 with the reason on stderr. Anything
        else is exit 0 with nothing on stdout: an allow (what `combine` gives when no
        hook blocked); the notes on stderr."""
        if answer.get("decision") == "block" or answer.get("blocked"):
            reason = answer.get("reason") or DEFAULT_DENY
            document = {"decision": "block", "reason": reason}
            _, stderr, code = block_on_stderr(reason, notes)
            return json_line(document), stderr, code
        return b"", lines(notes), 0

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """Exit 1 with the reason on stderr and nothing on stdout: no decision in Goose's
        terms, which Goose itself turns into a deny where the entry says `on_failure:
        "block"` (PreToolUse). Under `--fail-closed`, exit 2: a deny (PreToolUse, Stop)."""
        return failure_on_stderr(reason, fail_closed)

    def plugin_root(self, value: str | None, home: str, root: str) -> str | None:
        """The `PLUGIN_ROOT` Goose gave `exec`'s wrapper, when it is exactly a plugin
        folder: a child of the user's plugins folder, or of the project's (its real path
        inside the project). Anything else (a stray variable, `..`, the plugins folder
        itself, a project plugin a symlink leads out of) is None: nothing is mounted."""
        if not value or not os.path.isabs(value) or ".." in value.split("/"):
            return None
        path = os.path.normpath(value)
        for base in (home, root):
            folder = os.path.join(base, self.plugins_dir)
            if os.path.dirname(path) != folder or not os.path.isdir(path):
                continue
            if base == root and not _inside(path, root):
                return None
            return path
        return None

    def exec_command(
        self, command: Sequence[str], root: str, home: str, environ: Mapping[str, str]
    ) -> ExecCommand:
        """A command string: `sh -c` with `${PLUGIN_ROOT}` replaced, as Goose replaces it
        (install's wrappers leave it to `exec`: install's `goose` module), when the agent's
        PLUGIN_ROOT names a plugin folder (`plugin_root`): then set and mounted at its
        path too (`${PLUGIN_ROOT}/x` inside)."""
        if len(command) != 1:
            return ExecCommand(tuple(command))
        plugin = self.plugin_root(environ.get("PLUGIN_ROOT"), home, root)
        if not plugin:
            return ExecCommand((*SH, command[0]))
        return ExecCommand((*SH, expand(command[0], plugin)), {"PLUGIN_ROOT": plugin}, (plugin,))

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        """Unchanged: a Goose hook's stdout can allow or block, nothing else (no input
        rewrite, env or approval to drop), and its allow decides no more than silence."""
        return stdout, None


GOOSE = GooseDialect()


def answer_of(decision: str | None = None, reason: str = "") -> dict[str, Any]:
    """Goose's answer: `decision` "block" (with `reason`) denies, "allow" allows (what
    `run` prints must carry one of the two: other stdout is no decision)."""
    answer: dict[str, Any] = {"decision": decision or "allow", "blocked": decision == "block"}
    if decision == "block":
        answer["reason"] = reason or DEFAULT_DENY
    return answer


def classify(code: int | None, stdout: bytes, stderr: bytes) -> tuple[str, str]:
    """("allow" | "block" | "none", reason): Goose's `classify_output`."""
    if code == 2:
        said = stderr.decode("utf-8", "replace").strip(RUST_SPACE)
        return "block", clean_text(said) or DEFAULT_DENY
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        return "none", "the hook wrote invalid UTF-8 to stdout"
    trimmed = text.strip(RUST_SPACE)
    decision, reason = _decision(trimmed) if trimmed.startswith("{") else (None, None)
    if decision == "block":
        return "block", clean_text(reason or "") or DEFAULT_DENY
    if code == 0 and (not trimmed or decision == "allow"):
        return "allow", ""
    if code == 0:
        return "none", "the hook exited 0 without an allow or block decision on stdout"
    return "none", f"the hook exited with status {code} and no usable decision"


def _decision(text: str) -> tuple[str | None, str | None]:
    """`decision` and `reason` as serde reads `{decision?: String, reason?: String}`:
    (None, None) for anything it refuses (a wrong type, a repeated field, NaN, trailing
    text, nesting past its limit)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items if k in ("decision", "reason")]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate field")
        return dict(items)

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(data, dict) or _depth(data) > MAX_DEPTH:
        return None, None
    decision, reason = data.get("decision"), data.get("reason")
    if not all(v is None or isinstance(v, str) for v in (decision, reason)):
        return None, None
    return decision, reason
