"""The Gemini CLI hook protocol: what a hook reads, how its output is read, how several
combine. Discovery is in `settings`.

Checked against google-gemini/gemini-cli at 5411f113 (2026-08-21),
`packages/core/src/hooks/`: `hookRunner.ts` (`executeCommandHook`,
`convertPlainTextToHookOutput`), `hookAggregator.ts` (`mergeWithOrDecision`...),
`hookPlanner.ts` (matchers), `types.ts` (`DefaultHookOutput`), and
`packages/core/src/scheduler/hook-utils.ts` (what BeforeTool's answer does).

One hook's output, as the agent reads it:

- The text read is `stdout.trim() || stderr.trim()`: with nothing on stdout the agent
  reads stderr. If it parses as JSON (a JSON string holding JSON is parsed again) and is
  an object, that object is the output, whatever the exit code. Otherwise the text is
  plain: exit 0 gives `{decision: "allow", systemMessage: text}`, exit 1 an allow with
  `systemMessage: "Warning: text"`, any other exit code `{decision: "deny", reason: text}`
  (so exit 2 blocks with stderr as the reason, and so would 125, 126, 127). No text at
  all: no output, whatever the exit code. A timeout: no output.
- Fields: `decision` ("block"/"deny" block; "ask" forces the user's confirmation;
  "allow"/"approve" decide nothing: Gemini has no hook approval), `reason`, `continue`
  (false stops the agent), `stopReason`, `systemMessage`, `suppressOutput`,
  `hookSpecificOutput` (per event: `tool_input` (BeforeTool: the tool's new arguments),
  `additionalContext`, `tailToolCallRequest` (AfterTool: another tool call), `llm_request`
  / `llm_response` (model hooks), `toolConfig` (BeforeToolSelection), `clearContext`).
  The agent checks no types: a field of the wrong type is ignored here.

A reading (`HookOutcome.answer`) keeps these fields by their Gemini names (`decision`
None when the hook gave none) plus `blocked`. Untrusted hooks (the project's
`.gemini/settings.json`, and `exec --untrusted`): unless `trust_workspace_decisions`,
only `_HARMLESS` fields are kept (by list): an allow is no decision, a rewrite of the
tool's arguments, the model's request or response, the tool selection, a tail tool call,
`clearContext` and `suppressOutput` are dropped and named.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._types import Discovery, ExecResult, HookOutcome, HookSpec, Status
from ..base import (
    EVENT_FIELD,
    JS_SPACE,
    AgentReply,
    ExecCommand,
    caller_folder,
    clean_answer,
    decides,
    dropped_note,
    event_bytes,
    json_line,
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
    same_reader,
    sandbox_ending,
)
from ..patterns import search
from . import settings as _settings

HOOK_NAMES = (
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "SessionStart",
    "SessionEnd",
    "Notification",
    "PreCompress",
)
# Events whose answers combine by "any block wins" (`mergeWithOrDecision`); the model
# events take the later hook's fields, BeforeToolSelection a union of tools, the rest
# (Notification, SessionEnd, PreCompress) the later hook's fields.
OR_EVENTS = frozenset({"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "SessionStart"})
BLOCKING = frozenset({"block", "deny"})
# What an untrusted hook's JSON may carry; anything else is dropped and named.
_HARMLESS = frozenset({"continue", "stopReason", "systemMessage", "decision", "reason"})
_HARMLESS_SPECIFIC = frozenset({"hookEventName", "additionalContext"})
# GEMINI_SESSION_ID inside: the event's `session_id` (Gemini's are UUIDs) when it is
# this short and plain, else unset; the event's value, never the host's variable.
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


@dataclass(frozen=True, slots=True)
class GeminiDialect:
    """Gemini CLI's settings-file and extension hooks."""

    agent: str = "gemini"
    user_dir: str = _settings.USER_DIR
    project_dir_var: str = "GEMINI_PROJECT_DIR"
    default_timeout: float = 60.0  # DEFAULT_HOOK_TIMEOUT = 60000 ms
    hook_names: tuple[str, ...] = HOOK_NAMES
    system_dir: str = _settings.SYSTEM_DIR  # system settings and system defaults
    shell: tuple[str, ...] = ("bash", "-c")  # `getShellConfiguration` on POSIX
    project_vars: tuple[str, ...] = _settings.PROJECT_VARS  # each set to the cwd

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The event's name: `hook_event_name`."""
        return named_event(event)

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        cwd = event.get("cwd")
        return [cwd] if isinstance(cwd, str) and cwd else []

    def discover(
        self, hook_name: str | None, workspaces: Sequence[str], home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:  # fmt: skip
        return _settings.discover(
            self.hook_names, hook_name, workspaces, home, explicit, self.system_dir
        )

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """`HookPlanner.matchesContext`: no matcher, "" and "*" match all; tool events
        search `tool_name` with the matcher as a regular expression (unanchored), or
        compare it exactly when it is not one; SessionStart, SessionEnd and PreCompress
        compare their trigger exactly; other events ignore matchers. A workspace
        pattern that cannot be evaluated raises `PatternError` (`patterns.search`)."""
        matcher = (spec.matcher or "").strip()
        if matcher in ("", "*"):
            return True
        if spec.hook_name in _settings.TOOL_EVENTS:
            name = event.get("tool_name")
            if not isinstance(name, str) or not name:
                return True  # the agent matches everything when it has no tool name
            found = search(matcher, name, spec)
            return matcher == name if found is None else found  # not a regex: exactly
        field = _settings.TRIGGER_FIELDS.get(spec.hook_name)
        trigger = event.get(field) if field else None
        if not isinstance(trigger, str) or not trigger:
            return True
        return matcher == trigger

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event as the hook reads it: Gemini's base fields (`createBaseInput`) first
        (`session_id`, `transcript_path` "" when missing, `cwd` the folder the hook runs
        in, `hook_event_name`, `timestamp` as given), then the event's own fields."""
        base: dict[str, Any] = {
            "session_id": event.get("session_id", ""),
            "transcript_path": event.get("transcript_path", ""),
            "cwd": workspaces[0],
            "hook_event_name": hook_name,
            "timestamp": event.get("timestamp", ""),
        }
        return event_bytes({**base, **{k: v for k, v in event.items() if k not in base}})

    def transcript(self, event: Mapping[str, Any], home: str) -> str | None:
        """The chat file an event names, when it is Gemini's own, a regular file: in
        `~/.gemini/tmp/<project>/chats/`, or a subagent's in `chats/<parent session>/`
        (`ChatRecordingService`). Mounted read-only; never any other file of the event's."""
        path = event.get("transcript_path")
        if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
            return None
        real = os.path.realpath(path)
        tmp = os.path.realpath(os.path.join(home, self.user_dir, "tmp"))
        parts = os.path.relpath(real, tmp).split(os.sep)
        if len(parts) not in (3, 4) or parts[0] == ".." or parts[1] != "chats":
            return None
        return path if os.path.isfile(real) else None

    # -- output ------------------------------------------------------------------

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        """The agent's reading of one run (module docstring); exit 0 "completed", exit 1
        "failed" (its warning still reaches the agent), exit 2 and above "completed" when
        they wrote something (the agent reads it as an answer), else "failed"."""
        common = outcome_fields(spec, result)
        ended = sandbox_ending(result, timeout)
        event = spec.hook_name
        if ended:
            return HookOutcome(status=ended[0], error=f"{event} hook {ended[1]}", **common)
        code = result.exit_code or 0
        output, note, structured = read_output(result.stdout, result.stderr, code)
        if output is None:  # the agent gets no output: nothing to combine
            error = None if code == 0 else f"{event} hook exited with code {code} and wrote nothing"
            return HookOutcome(status="completed" if code == 0 else "failed", error=error, **common)
        dropped: list[str] = []
        if structured and not decides(spec.source, trust_workspace):
            output, dropped = workspace_json(output)
        notes = [n for n in (note, dropped_note(dropped) if dropped else None) if n]
        if code == 1:
            first = next((ln.strip() for ln in common["stderr"].splitlines() if ln.strip()), "")
            notes.insert(0, first or f"{event} hook exited with code 1")
        status: Status = "failed" if code == 1 else "completed"
        return HookOutcome(status=status, error="; ".join(notes) or None,
                           answer=_reading(output), **common)  # fmt: skip

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """The agent's aggregation (`HookAggregator`), over the hooks' readings in
        configuration order: on BeforeTool, AfterTool, BeforeAgent, AfterAgent and
        SessionStart a block ("block"/"deny") from any hook wins, else an "ask", else
        "allow" (none when a hook said `continue: false`); every hook's reason, system
        message and additional context are joined by newlines, stop reasons of the hooks
        that stop; `suppressOutput` and `clearContext` if any says so; other
        hookSpecificOutput fields the later hook's. BeforeModel, AfterModel and the other
        events: each field the later hook's. BeforeToolSelection: the union of the
        allowed functions, mode NONE if any says NONE, else ANY if any, else AUTO. With
        `fail_closed`, a hook that did not complete blocks, naming itself."""
        event = outcomes[0].spec.hook_name if outcomes else ""
        outputs = [o.answer["output"] for o in outcomes if o.answer]
        failures = [
            f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}"
            for o in outcomes
            if fail_closed and o.status != "completed"
        ]
        if event in OR_EVENTS or not outputs:
            merged = _merge_or(outputs) if outputs else {}
        elif event == "BeforeToolSelection":
            merged = _merge_tools(outputs)
        else:
            merged = {}
            for out in outputs:  # the later hook's fields
                merged = {**merged, **out}
                if event in ("BeforeModel", "AfterModel"):
                    specific = {
                        **merged.get("hookSpecificOutput", {}),
                        **out.get("hookSpecificOutput", {}),
                    }
                    merged["hookSpecificOutput"] = specific
        if failures:
            merged["decision"] = "deny"
            merged["reason"] = "\n".join([*([merged["reason"]] if merged.get("reason") else []),
                                          *failures])  # fmt: skip
        blocked = merged.get("decision") in BLOCKING or merged.get("continue") is False
        return {"blocked": blocked, **merged}

    def next_input(self, stdin: bytes, outcome: HookOutcome) -> bytes:
        """The input of the next hook when they run in turn (`sequential`), as
        `HookRunner.applyHookOutputToInput` makes it from a hook that exited 0 with an
        output: BeforeTool's `tool_input` merged over the tool's, BeforeAgent's
        `additionalContext` appended to the prompt, BeforeModel's `llm_request` merged
        over the request. An untrusted hook's output was already read without them."""
        output = outcome.answer.get("output") if outcome.answer else None
        specific = output.get("hookSpecificOutput") if output else None
        if outcome.exit_code != 0 or not isinstance(specific, dict) or not specific:
            return stdin
        try:
            event = json.loads(stdin)
        except (ValueError, RecursionError):
            return stdin
        name = outcome.spec.hook_name
        key = {"BeforeTool": "tool_input", "BeforeModel": "llm_request"}.get(name)
        if key and isinstance(specific.get(key), dict) and isinstance(event.get(key), dict):
            event[key] = {**event[key], **specific[key]}
        elif name == "BeforeAgent" and isinstance(specific.get("additionalContext"), str):
            if isinstance(event.get("prompt"), str):
                event["prompt"] += "\n\n" + specific["additionalContext"]
        else:
            return stdin
        return event_bytes(event)

    def event_env(
        self, event: Mapping[str, Any], root: str, transcript: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, str]:  # fmt: skip
        """The variable Gemini sets from the event: `GEMINI_SESSION_ID`, its
        `session_id` (by `_SESSION_ID`). `GEMINI_PLANS_DIR` names a folder of the
        user's home, which the sandbox does not mount: not set."""
        session = event.get("session_id")
        if isinstance(session, str) and _SESSION_ID.fullmatch(session):
            return {"GEMINI_SESSION_ID": session}
        return {}

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        return {"blocked": True, "decision": "deny", "reason": reason}

    # (an entry's own `sequential` runs them in turn: `HookSpec.sequential`, the runner)
    sequential = staticmethod(never_sequential)
    hook_dir_env = staticmethod(no_hook_dir)
    roots_in_event = False
    exec_place = staticmethod(caller_folder)
    exec_plugin = staticmethod(no_plugin)
    agent_deadline = staticmethod(no_deadline)
    tool_fields = staticmethod(no_tool_fields)
    max_input = None
    failure_dialect = own_failure
    for_event = same_reader
    transcript_for_repository = True
    session_field = None
    name_field = EVENT_FIELD
    env_file_dir = None
    pinned_project = staticmethod(no_pinned_project)
    default_loop_limit = staticmethod(no_loop_limit)
    message_field = None
    transcript_format = None

    def exec_command(
        self, command: Sequence[str], root: str, home: str, environ: Mapping[str, str]
    ) -> ExecCommand:
        """A command string with Gemini's textual `$GEMINI_PROJECT_DIR`... replaced (which
        install's wrappers leave to `exec`), in bash."""
        if len(command) != 1:
            return ExecCommand(tuple(command))
        return ExecCommand((*self.shell, _settings.expand(command[0], root)))

    def hook_places(self, home: str) -> list[str]:
        """The user's hooks, and installed extensions."""
        return [os.path.join(home, self.user_dir, d) for d in ("hooks", "extensions")]

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply:
        """The combined output in Gemini's own fields, JSON on stdout, exit 0 (a block is
        `decision: "deny"` there, a stop `continue: false`); the notes on stderr, which
        Gemini reads as the answer when stdout is empty: then stdout is `{}`."""
        document = {k: v for k, v in answer.items() if k != "blocked"}
        if not document and not notes:
            return b"", b"", 0
        return json_line(document), lines(notes), 0

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """Gemini reads any exit code but 0 and 1 that comes with text as a block, and with
        an empty stdout it reads stderr. So: exit 1 (a warning; the action goes on), or
        exit 2 with the reason on stderr under `fail_closed` (the agent denies with it).
        Nothing on stdout, and the stderr line starts with `sandboxrun:` so it never
        parses as JSON (a decision)."""
        if fail_closed:
            return b"", f"sandboxrun (fail-closed): {reason}\n".encode(), 2
        return b"", f"sandboxrun: {reason}\n".encode(), 1

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        """A repository command's stdout without what it may not decide. Anything but a
        JSON object (or a JSON string holding one) passes unchanged: the agent reads it
        as text (a message; its implied allow approves nothing) or as no output. An
        object with nothing to drop passes byte for byte. JSON that starts like an
        object but does not read here is dropped whole: the agent's parser might read it
        (deeper nesting, longer numbers), and what it would find there is unknown."""
        data, unreadable = _untrusted_object(stdout.decode("utf-8", "replace").strip(JS_SPACE))
        if unreadable:
            note = "stdout looks like JSON but sandboxrun cannot read it: dropped"
            return b"", f"{note} (untrusted command)"
        if data is None:
            return stdout, None
        kept, dropped = workspace_json(data)
        if not dropped:
            return stdout, None
        return json.dumps(kept, ensure_ascii=True).encode() + b"\n", dropped_note(dropped)

    def untrusted_stderr(self, stdout: bytes, stderr: bytes) -> tuple[bytes, str | None]:
        """With a blank stdout the agent reads stderr as the answer: the same rule."""
        if stdout.decode("utf-8", "replace").strip(JS_SPACE):
            return stderr, None
        return self.untrusted_stdout(stderr)

    def may_add_to_stderr(self, stdout: bytes, stderr: bytes, exit_code: int) -> bool:
        """Whether `exec` may append its own lines to the hook's stderr without them
        reaching the model: yes when stdout holds the answer (the agent never reads
        stderr then), or when stderr is already plain text read after exit 0 or 1 (a
        `systemMessage`, shown to the user only: a line more changes that message,
        never the decision). Never after exit 2 or more with a blank stdout: stderr is
        the deny's reason the model reads (`Tool execution blocked: ...`), and on an
        empty stderr any text would make one. Nor when stderr is empty or JSON (a line
        more would make a message, or turn its decision into text)."""
        if stdout.decode("utf-8", "replace").strip(JS_SPACE):
            return True
        text = stderr.decode("utf-8", "replace").strip(JS_SPACE)
        if not text or exit_code not in (0, 1):
            return False
        try:
            _js_parse(text)
        except (ValueError, RecursionError):
            return True
        return False
        try:
            _js_parse(text)
        except (ValueError, RecursionError):
            return True
        return False


GEMINI = GeminiDialect()


def _js_parse(text: str) -> Any:
    """JavaScript's `JSON.parse`: Python's, without NaN and Infinity (JavaScript refuses
    them, so the agent reads such text as plain text)."""
    return json.loads(text, parse_constant=_refuse)


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _untrusted_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """(the object the agent would read in `text`, or None; whether `text` may hold one
    that cannot be read here). `JSON.parse` as the agent applies it: an object, or a
    JSON string holding one."""
    for _ in range(2):
        try:
            parsed: Any = _js_parse(text)
        except RecursionError:
            return None, True
        except ValueError:
            return None, text.lstrip(JS_SPACE).startswith(("{", '"'))
        if not isinstance(parsed, str):
            return (parsed if isinstance(parsed, dict) else None), False
        text = parsed
    return None, False


def read_output(
    stdout: bytes, stderr: bytes, code: int
) -> tuple[dict[str, Any] | None, str | None, bool]:
    """(the agent's output object or None, a note, whether the hook wrote it as JSON)
    from one run's bytes (module docstring)."""
    text = stdout.decode("utf-8", "replace").strip(JS_SPACE)
    note = None
    if not text:  # the agent reads stderr then: a JSON answer there is an answer too
        text = stderr.decode("utf-8", "replace").strip(JS_SPACE)
        note = "stdout was empty: the agent read the JSON on stderr as the answer"
    if not text:
        return None, None, False
    try:
        parsed: Any = _js_parse(text)
        if isinstance(parsed, str):
            parsed = _js_parse(parsed)
    except (ValueError, RecursionError):
        if code == 0:
            return {"decision": "allow", "systemMessage": text}, None, False
        if code == 1:
            return {"decision": "allow", "systemMessage": f"Warning: {text}"}, None, False
        return {"decision": "deny", "reason": text}, None, False
    if isinstance(parsed, list):
        return {}, note, True  # an object to the agent, with none of its fields
    if not isinstance(parsed, dict):
        return None, note, True  # a number, true, null: no output
    return clean_answer(parsed), note, True


def workspace_json(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """An untrusted hook's output without what it may not decide, and what was dropped."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    allow = data.get("decision") in ("allow", "approve")
    for key, value in data.items():
        if key == "decision" and allow:
            continue
        if key == "hookSpecificOutput" and isinstance(value, dict):
            specific = {k: v for k, v in value.items() if k in _HARMLESS_SPECIFIC}
            dropped += [
                k for k, v in value.items() if k not in _HARMLESS_SPECIFIC and v is not None
            ]
            if specific:
                kept[key] = specific
        elif key in _HARMLESS:
            kept[key] = value
        elif value is not None and value is not False:
            dropped.append(key)
    if allow:
        kept.pop("reason", None)
        dropped.insert(0, "its allow")
    return kept, dropped


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _reading(output: Mapping[str, Any]) -> dict[str, Any]:
    """One hook's reading: `blocked`, its `decision` and the `reason` it gave (the
    audit's), and its output as the agent uses it (`output`)."""
    decision = output.get("decision")
    blocked = decision in BLOCKING or output.get("continue") is False
    return {"blocked": blocked, "decision": decision if isinstance(decision, str) else None,
            "reason": _text(output.get("reason")), "output": dict(output)}  # fmt: skip


def _merge_or(outputs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`HookAggregator.mergeWithOrDecision`."""
    merged: dict[str, Any] = {"continue": True, "suppressOutput": False}
    stops, reasons, messages, contexts = [], [], [], []
    blocking = asking = stopping = False
    specific: dict[str, Any] = {}
    for out in outputs:
        if out.get("continue") is False:
            stopping = True
            merged["continue"] = False
            if _text(out.get("stopReason")):
                stops.append(out["stopReason"])
        decision = out.get("decision")
        if decision in BLOCKING:
            blocking = True
            merged["decision"] = decision
        elif decision == "ask":
            asking = True
            if not blocking:
                merged["decision"] = decision
        if _text(out.get("reason")):
            reasons.append(out["reason"])
        if _text(out.get("systemMessage")):
            messages.append(out["systemMessage"])
        if out.get("suppressOutput"):
            merged["suppressOutput"] = True
        given = out.get("hookSpecificOutput")
        if isinstance(given, dict):
            if given.get("clearContext") is True:
                specific["clearContext"] = True
            specific.update({k: v for k, v in given.items() if k != "clearContext"})
            if isinstance(given.get("additionalContext"), str):
                contexts.append(given["additionalContext"])
    if not (blocking or asking or stopping):
        merged["decision"] = "allow"
    if stops:
        merged["stopReason"] = "\n".join(stops)
    if reasons:
        merged["reason"] = "\n".join(reasons)
    if messages:
        merged["systemMessage"] = "\n".join(messages)
    if contexts:
        specific["additionalContext"] = "\n".join(contexts)
    if specific:
        merged["hookSpecificOutput"] = specific
    return merged


def _merge_tools(outputs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`HookAggregator.mergeToolSelectionOutputs`."""
    names: set[str] = set()
    modes = set()
    for out in outputs:
        specific = out.get("hookSpecificOutput")
        config = specific.get("toolConfig") if isinstance(specific, dict) else None
        if not isinstance(config, dict):
            continue
        modes.add(config.get("mode"))
        allowed = config.get("allowedFunctionNames")
        if isinstance(allowed, list):
            names.update(n for n in allowed if isinstance(n, str))
    mode = "NONE" if "NONE" in modes else "ANY" if "ANY" in modes else "AUTO"
    config = {"mode": mode, "allowedFunctionNames": [] if mode == "NONE" else sorted(names)}
    return {"hookSpecificOutput": {"hookEventName": "BeforeToolSelection", "toolConfig": config}}
