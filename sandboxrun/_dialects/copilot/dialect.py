"""The GitHub Copilot CLI hook protocol (and the cloud agent's subset).

Source: github/docs `content/copilot/reference/hooks-reference.md` (commit 05da5bc3);
the CLI is closed source. Discovery is in `config`, event names and matchers in `events`.

Output (stdout): lines that are each one JSON object with `"type": "progress"` are
display only and removed; what is left is trimmed and parsed as ONE JSON document (two
objects, or anything else that does not parse, is no output at all). Fields:
preToolUse `permissionDecision` (allow | deny | ask), `permissionDecisionReason`,
`modifiedArgs`; permissionRequest `behavior` (allow | deny), `message`, `interrupt`;
agentStop/subagentStop `decision: "block"` + `reason` (another turn), subagentStop
`modifiedResponse`; postToolUse `modifiedResult`, `additionalContext`; sessionStart,
subagentStart, notification `additionalContext`; userPromptTransformed
`modifiedTransformedPrompt`. userPromptSubmitted's output is dropped for command hooks.
A PascalCase event's hook may also answer in Claude's `hookSpecificOutput`, read beside
the top-level fields (seen with the CLI 1.0.102: `lift_specific`).
A field of the wrong type is ignored (the docs: "ignored rather than corrupting").

Exit codes: 0 reads stdout. preToolUse is fail-closed: exit 2 or any other non-zero
exit denies, whatever stdout says ("Denied by preToolUse hook (hook errored)");
permissionRequest: exit 2 denies (stdout JSON merged in). Elsewhere exit 2 is a warning
(postToolUseFailure: its stdout becomes context) and other exits are logged failures.
A timeout is fail-open everywhere, policy hooks included (sandboxrun's own
`fail_closed` still makes it block).

Combining: every hook runs; for preToolUse any deny wins (then ask, then allow); for
permissionRequest later outputs override earlier ones; contexts join with a blank line
(capped at 10 KB); of several rewrites the last in configuration order wins.

Untrusted (the repository's files: `project`, `local`; commands `exec --untrusted`
runs): unless `trust_workspace_decisions`, such a hook may deny, ask, block and add
context, but its allow (`permissionDecision`/`behavior: "allow"`, with its reason) is
no decision, and every field not on the harmless list (`modifiedArgs`,
`modifiedResult`, `modifiedResponse`, `modifiedTransformedPrompt`, any unknown one) is
dropped and named.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..._errors import ConfigError
from ..._sandbox.mounts import transcript_file
from ..._types import Discovery, ExecResult, HookOutcome, HookSpec
from ..base import (
    EVENT_FIELD,
    JS_SPACE,
    AgentReply,
    ExecPlace,
    clean_answer,
    decides,
    dropped_note,
    event_bytes,
    json_line,
    lines,
    no_deadline,
    no_event_env,
    no_loop_limit,
    no_plugin,
    no_tool_fields,
    outcome_fields,
    own_failure,
    same_input,
    same_reader,
    sandbox_ending,
    shell_command,
    stderr_is_shown,
    stderr_unchanged,
)
from . import config, events
from .events import PASCAL, camel

PERMISSION_EVENTS = frozenset({"preToolUse", "permissionRequest"})
CONTEXT_EVENTS = frozenset(
    {"sessionStart", "subagentStart", "notification", "postToolUse", "postToolUseFailure"}
)
CONTEXT_LIMIT = 10 * 1024  # "joined with a double newline and capped at 10 KB"
_STRICTNESS = {"allow": 1, "ask": 2, "deny": 3}
ERRORED = "Denied by preToolUse hook (hook errored)"
# What a repository's hook may say (module docstring); any other field is dropped.
_HARMLESS = frozenset(
    {"permissionDecision", "permissionDecisionReason", "behavior", "message", "interrupt",
     "decision", "reason", "additionalContext", "type", "hookEventName"}
)  # fmt: skip
# The Claude-shaped answer a PascalCase ("VS Code compatible") event's hook may give; the
# CLI reads its decision, reason and context beside the top-level fields (1.0.102: a deny
# there denies `PreToolUse`; for `preToolUse` it is ignored).
SPECIFIC = "hookSpecificOutput"


@dataclass(frozen=True, slots=True)
class CopilotDialect:
    agent: str = "copilot"
    default_timeout: float = config.DEFAULT_TIMEOUT
    hook_names: tuple[str, ...] = events.HOOK_NAMES
    # Not in the docs; the CLI (1.0.102) sets it, CLAUDE_PROJECT_DIR and COPILOT_HOOK_DIR
    # for every hook (reference/agent-hooks-2026.md §18): inside, the root mounted.
    project_dir_var: str | None = config.PROJECT_DIR_VAR
    project_vars: tuple[str, ...] = config.PROJECT_VARS  # each set to the root
    user_dir: str = ".copilot"
    project_dir: str = ".github"  # what marks the repository root, with `.git`
    policy_dir: str = config.POLICY_DIR
    shell: tuple[str, ...] = ("bash", "-c")  # how `exec` runs a command string (`bash`)

    may_add_to_stderr = staticmethod(stderr_is_shown)  # (`Dialect.may_add_to_stderr`)
    roots_in_event = False
    exec_command = shell_command
    event_env = staticmethod(no_event_env)
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
    default_loop_limit = staticmethod(no_loop_limit)
    message_field = None
    transcript_format = None

    def exec_place(self, event: Mapping[str, Any], cwd: str, home: str, given: bool) -> ExecPlace:
        """A session in a subfolder: the whole repository (`.github` or `.git` marks it)."""
        from ..claude.settings import project_root  # (only when asked: cold runs)

        return ExecPlace(project_root(cwd, home, self.project_dir), cwd)

    def pinned_project(self, folder: str, home: str) -> str | None:
        from ..claude.settings import project_root  # (only when asked: cold runs)

        return project_root(folder, home, self.project_dir) if self.project_dir_var else None

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """`hook_event_name` (PascalCase payloads), else what a camelCase payload's
        fields show (`events.derived`)."""
        return events.derived(event)

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        cwd = event.get("cwd")
        return [cwd] if isinstance(cwd, str) and cwd else []

    def discover(
        self, hook_name: str | None, workspaces: Sequence[str], home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:  # fmt: skip
        return config.discover(hook_name, workspaces, home, explicit, self.policy_dir)

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        return events.matches(spec, event)

    def sequential(self, hook_name: str) -> bool:
        """preToolUse: the CLI runs the hooks one after another and stops at the first
        deny (seen in 1.0.102, reference/agent-hooks-2026.md §18)."""
        return camel(hook_name) == "preToolUse"

    def hook_dir_env(
        self, given: str | None, root: str, home: str, untrusted: bool
    ) -> dict[str, str]:
        """COPILOT_HOOK_DIR for `exec`: `given` (install's `--hook-dir`, the folder of the
        file the entry is in) when it is one of Copilot's hook config folders
        (`config.hook_dirs`), only the repository's for an `--untrusted` command."""
        if given is None:
            return {}
        allowed = config.hook_dirs(root, home, self.policy_dir, project_only=untrusted)
        path = os.path.normpath(given) if os.path.isabs(given) else None
        if path not in allowed:
            whose = "the repository's" if untrusted else "Copilot's"
            raise ConfigError(
                f"--hook-dir {given!r} is not one of {whose} hook folders for {root}"
                f" ({', '.join(allowed)})"
            )
        return {config.HOOK_DIR_VAR: path}

    def hook_places(self, home: str) -> list[str]:
        """The user's own hook folder: files a command names there may be mounted."""
        return [os.path.join(home, self.user_dir, "hooks")]

    def transcript(self, event: Mapping[str, Any], home: str) -> str | None:
        """The transcript an event names, when it lies in the agent's own session folder
        (`~/.copilot/session-state`; unconfirmed: the docs name no folder)."""
        key = "transcriptPath" if "transcriptPath" in event else "transcript_path"
        return transcript_file({"transcript_path": event.get(key)}, home, self.user_dir,
                               "session-state")  # fmt: skip

    # -- input -------------------------------------------------------------------

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event as the hook reads it: camelCase (`sessionId`, `timestamp` in ms)
        for a camelCase event, snake_case (`hook_event_name`, `session_id`, an ISO
        `timestamp`) for the PascalCase spelling; `cwd` is the root the hook runs in."""
        base: dict[str, Any]
        if hook_name in PASCAL:
            now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            base = {"hook_event_name": hook_name, "session_id": event.get("session_id", ""),
                    "timestamp": event.get("timestamp") or now}  # fmt: skip
        else:
            base = {"sessionId": event.get("sessionId", ""),
                    "timestamp": event.get("timestamp") or int(time.time() * 1000)}  # fmt: skip
        base["cwd"] = workspaces[0]
        return event_bytes({**base, **{k: v for k, v in event.items() if k not in base}})

    # -- output ------------------------------------------------------------------

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        common = outcome_fields(spec, result)
        ended = sandbox_ending(result, timeout)
        if ended:
            why = ended[1] + (" (the agent lets the action through)" if result.timed_out else "")
            return HookOutcome(status=ended[0], error=f"{spec.hook_name} hook {why}", **common)
        code, event = result.exit_code, camel(spec.hook_name)
        stderr = common["stderr"].strip()
        first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
        notes: list[str] = []
        data: Mapping[str, Any] = {}
        if code in (0, 2):
            parsed, warning = parse_stdout(result.stdout)
            notes += [warning] if warning else []
            data = parsed or {}
            if data and not decides(spec.source, trust_workspace):
                data, dropped = workspace_json(data)
                notes += [dropped_note(dropped)] if dropped else []
            if spec.hook_name in PASCAL:
                data = lift_specific(data)
        if code == 0:
            answer = read_answer(event, data, notes)
        elif event in PERMISSION_EVENTS and (code == 2 or event == "preToolUse"):
            answer = read_answer(event, data, notes)
            why = answer["reason"] if code == 2 and answer["permissionDecision"] == "deny" else ""
            if not why:
                why = f"{ERRORED}: {first}" if first else ERRORED
                why = why if event == "preToolUse" else f"denied by hook {spec.name}"
            answer.update(permissionDecision="deny", blocked=True, reason=why,
                          modifiedArgs=None)  # fmt: skip
            notes.append(f"exited with code {code}: the agent denies")
        elif code == 2:
            answer = _answer()
            if event == "postToolUseFailure":
                answer["additionalContext"] = result.stdout.decode("utf-8", "replace").strip()
            notes.append(f"exited with code 2: a warning{': ' + first if first else ''}")
        else:
            error = first or f"{spec.hook_name} hook exited with code {code}"
            return HookOutcome(status="failed", error=error, **common)
        return HookOutcome(status="completed", error="; ".join(notes) or None, answer=answer,
                           **common)  # fmt: skip

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """Every hook's answer, combined as the CLI combines them (module docstring).
        With `fail_closed`, a hook that did not complete blocks (denies), naming itself."""
        event = camel(outcomes[0].spec.hook_name) if outcomes else ""
        answers = [o.answer for o in outcomes if o.status == "completed" and o.answer]
        failures = [f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}"
                    for o in outcomes if fail_closed and o.status != "completed"]  # fmt: skip
        decision: str | None = None
        for a in answers:
            d = a.get("permissionDecision")
            if d is None:
                continue
            if event == "permissionRequest" or _STRICTNESS[d] > _STRICTNESS.get(decision or "", 0):
                decision = d  # permissionRequest: a later output overrides an earlier one
        if failures and event in PERMISSION_EVENTS:
            decision = "deny"
        if event in PERMISSION_EVENTS:
            deciders = [a for a in answers if decision and a.get("permissionDecision") == decision]
        else:
            deciders = [a for a in answers if a.get("blocked")]
        blocked = decision == "deny" or any(a.get("blocked") for a in deciders) or bool(failures)
        context = "\n\n".join(a["additionalContext"] for a in answers if a.get("additionalContext"))
        combined = {
            "blocked": blocked,
            "permissionDecision": decision,
            "reason": "\n".join(r for r in [*(a.get("reason") for a in deciders), *failures] if r),
            "additionalContext": context[:CONTEXT_LIMIT],
            "interrupt": decision == "deny" and any(a.get("interrupt") for a in deciders),
        }
        for key in ("modifiedArgs", "modifiedResult", "modifiedResponse",
                    "modifiedTransformedPrompt"):  # fmt: skip
            combined[key] = next((a[key] for a in reversed(answers) if a.get(key) is not None),
                                 None)  # fmt: skip
        if blocked:  # a denied tool takes no arguments; a blocked subagent's rewrite is discarded
            combined.update(modifiedArgs=None, modifiedResponse=None)
        return combined

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        answer = _answer(blocked=True, permissionDecision="deny", reason=reason)
        return {**answer, "interrupt": False}

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply:
        """The combined answer as one hook's JSON (`agent_document`), exit 0: a deny is
        JSON (a non-zero exit would deny too, our own failures with it)."""
        document = agent_document(event, answer)
        return json_line(document) if document else b"", lines(notes), 0

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """The CLI denies a preToolUse hook's ANY non-zero exit (not only 2): our own
        failure without fail-closed is exit 0 with nothing on stdout (no decision: the
        agent's own permission flow decides) and the reason on stderr. Under fail-closed
        it is exit 2: a deny for preToolUse and permissionRequest, a warning with the
        reason shown elsewhere (no other Copilot event can be blocked by an exit code)."""
        if fail_closed:
            return b"", f"sandboxrun (fail-closed): {reason}\n".encode(), 2
        return b"", f"sandboxrun: {reason}\n".encode(), 0

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        """A repository command's stdout without what it may not decide. Output that
        the CLI reads as no output (empty, not starting with `{`) passes unchanged;
        output starting with `{` that does not read here is dropped whole; progress
        lines are kept."""
        progress, rest = split_progress(stdout)
        if not rest.startswith("{"):
            return stdout, None
        data, _ = parse_stdout(stdout)
        if data is None:
            note = "stdout starts with '{' but is not one JSON object sandboxrun can read"
            return b"", f"{note}: dropped (untrusted command)"
        kept, dropped = workspace_json(data)
        if not dropped:
            return stdout, None
        lines = "".join(line + "\n" for line in progress)
        return lines.encode() + json.dumps(kept, ensure_ascii=True).encode() + b"\n", \
            dropped_note(dropped)  # fmt: skip


COPILOT = CopilotDialect()


def _answer(**fields: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "blocked": False, "permissionDecision": None, "reason": "", "additionalContext": "",
        "modifiedArgs": None, "modifiedResult": None, "modifiedResponse": None,
        "modifiedTransformedPrompt": None, "interrupt": False,
    }  # fmt: skip
    answer.update(fields)
    return answer


def split_progress(stdout: bytes) -> tuple[list[str], str]:
    """(progress lines, the rest trimmed) as the CLI splits a hook's stdout."""
    progress: list[str] = []
    rest: list[str] = []
    for line in stdout.decode("utf-8", "replace").split("\n"):
        (progress if _is_progress(line) else rest).append(line)
    return progress, "\n".join(rest).strip(JS_SPACE)


def _is_progress(line: str) -> bool:
    text = line.strip(JS_SPACE)
    if not text.startswith("{"):
        return False
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("type") == "progress"


def parse_stdout(stdout: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(the hook's output object, or {} for none; None when it is ignored, with why)."""
    _, rest = split_progress(stdout)
    if not rest:
        return {}, None
    try:
        data = json.loads(rest)
    except (ValueError, RecursionError):
        return None, "stdout is not one JSON document (two objects?): ignored, as the agent does"
    if not isinstance(data, dict):
        return None, "stdout JSON is not an object: ignored"
    return clean_answer(data), None


def workspace_json(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """An untrusted hook's output without what it may not decide, and what was dropped."""
    allow = data.get("permissionDecision") == "allow" or data.get("behavior") == "allow"
    kept: dict[str, Any] = {}
    dropped = ["its allow"] if allow else []
    for key, value in data.items():
        if key in ("permissionDecision", "behavior") and value == "allow":
            continue
        if key == SPECIFIC and isinstance(value, dict):  # the same rule inside
            inner, lost = workspace_json(value)
            kept.update({key: inner} if set(inner) - {"hookEventName"} else {})
            dropped += [x if x == "its allow" else f"{key}.{x}" for x in lost]
            continue
        if allow and key in ("permissionDecisionReason", "message"):
            continue  # the allow's reason goes with it
        if key in _HARMLESS:
            kept[key] = value
        elif value is not None and value is not False:
            dropped.append(key)
    return kept, dropped


def lift_specific(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A PascalCase event's output as the CLI reads it: `hookSpecificOutput`'s decision,
    reason and context beside the top-level ones; of two decisions the stricter, with its
    reason (the CLI's choice between them is unconfirmed). Types are `read_answer`'s."""
    nested = data.get(SPECIFIC)
    if not isinstance(nested, dict):
        return data
    lifted = dict(data)
    for key in ("permissionDecisionReason", "additionalContext"):
        if lifted.get(key) is None and nested.get(key) is not None:
            lifted[key] = nested[key]
    inner, outer = (d if isinstance(d, str) else "" for d in
                    (nested.get("permissionDecision"), data.get("permissionDecision")))  # fmt: skip
    if _STRICTNESS.get(inner, 0) > _STRICTNESS.get(outer, 0):
        lifted["permissionDecision"] = inner
        lifted["permissionDecisionReason"] = nested.get("permissionDecisionReason")
    return lifted


def read_answer(event: str, data: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """One hook's output read for `event` (camelCase); a field of the wrong type is
    ignored and named in `notes`."""

    def get(key: str, kind: type, valid: tuple[Any, ...] = ()) -> Any:
        value = data.get(key)
        if value is None:
            return None
        if (
            not isinstance(value, kind)
            or isinstance(value, bool) != (kind is bool)
            or (valid and value not in valid)
        ):
            wanted = "one of " + ", ".join(valid) if valid else kind.__name__
            notes.append(f"{key} ignored: {wanted} expected")
            return None
        return value

    answer = _answer()
    if event == "preToolUse":
        decision = get("permissionDecision", str, ("allow", "deny", "ask"))
        reason = get("permissionDecisionReason", str) or ""
        if decision == "deny":
            reason = reason or "Denied by preToolUse hook"
        answer.update(permissionDecision=decision, reason=reason, blocked=decision == "deny",
                      modifiedArgs=get("modifiedArgs", dict))  # fmt: skip
    elif event == "permissionRequest":
        decision = get("behavior", str, ("allow", "deny"))
        interrupt = get("interrupt", bool) or False
        answer.update(permissionDecision=decision, reason=get("message", str) or "",
                      blocked=decision == "deny", interrupt=interrupt)  # fmt: skip
    elif event in ("agentStop", "subagentStop"):
        block = get("decision", str, ("block", "allow")) == "block"
        answer.update(blocked=block, reason=(get("reason", str) or "") if block else "")
        if event == "subagentStop":
            answer["modifiedResponse"] = get("modifiedResponse", str)
    elif event == "userPromptTransformed":
        answer["modifiedTransformedPrompt"] = get("modifiedTransformedPrompt", str) or None
    if event == "postToolUse":
        answer["modifiedResult"] = get("modifiedResult", dict)
    if event in CONTEXT_EVENTS | {"preToolUse"}:
        answer["additionalContext"] = get("additionalContext", str) or ""
    return answer


def agent_document(event: str, answer: Mapping[str, Any]) -> dict[str, Any]:
    """The combined answer as one Copilot hook's stdout JSON (`run --answer agent`)."""
    event = camel(event)
    decision, reason = answer.get("permissionDecision"), answer.get("reason") or ""
    document: dict[str, Any] = {}
    if event == "preToolUse" and decision:
        document = {"permissionDecision": decision, "permissionDecisionReason": reason}
    elif event == "permissionRequest" and decision:
        document = {"behavior": decision, "message": reason}
        if answer.get("interrupt"):
            document["interrupt"] = True
    elif event in ("agentStop", "subagentStop") and answer.get("blocked"):
        document = {"decision": "block", "reason": reason}
    fields = {"preToolUse": "modifiedArgs", "postToolUse": "modifiedResult",
              "subagentStop": "modifiedResponse",
              "userPromptTransformed": "modifiedTransformedPrompt"}  # fmt: skip
    if event in fields and answer.get(fields[event]) is not None and not answer.get("blocked"):
        document[fields[event]] = answer[fields[event]]
    if event in CONTEXT_EVENTS and answer.get("additionalContext"):
        document["additionalContext"] = answer["additionalContext"]
    return document
