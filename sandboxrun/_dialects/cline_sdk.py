"""How Cline's SDK/CLI (`cline_variant = "sdk"`) names its events and reads a hook file's
run: pure functions over strings, dicts and one hook's result, used by `cline.ClineDialect`.

Confirmed in cline/cline@21cb8d2525bcedf1f4b6890b27a74a14fe7451e4:

- sdk/packages/core/src/hooks/hook-file-config.ts: `HOOK_CONFIG_FILE_EVENT_MAP`, the hook
  file each event runs (`EVENT_FILES`; `PreCompact` maps to no event).
- sdk/packages/shared/src/hooks/events.ts: `HookEventNameSchema` (the ten event names)
  and `HookEventPayloadBase` (`hookName` is the event name, `timestamp` an ISO string:
  `new Date().toISOString()` in hook-file-hooks.ts `createPayloadBase`).
- sdk/packages/core/src/hooks/subprocess-runner.ts `parseStdout`: the trimmed stdout, or
  the last line starting `HOOK_CONTROL\\t` (lines trimmed), read with `JSON.parse`; the
  exit code is never looked at.
- sdk/packages/core/src/hooks/hook-file-hooks.ts: `parseHookControl` (`context`, else
  `contextModification`; `errorMessage` is the reason of a cancel, or the context of a
  hook that does not cancel; `overrideInput`, even null), `mergeHookControls` (the hooks
  of one event in path order: any `cancel`, contexts and reasons joined with a newline,
  the last `overrideInput`), `runBlockingHookCommands` (a hook that timed out, failed to
  start or printed no JSON is skipped) and `beforeToolResultFromControl` /
  `afterToolResultFromControl`: only `tool_call` (PreToolUse) and `tool_result`
  (PostToolUse) hooks are awaited and read; only `tool_call` takes `overrideInput`. The
  other events run their hooks detached (`runAsyncHookCommands`): what they print
  decides nothing.
- sdk/packages/core/src/hooks/subprocess.ts `truncateHookContext`: a context past 50,000
  characters is cut, with its own note.

`overrideInput` replaces the tool's input: a repository's hook must not (as a Claude
project hook's `updatedInput`), so it is dropped from a workspace hook's answer unless
the user's `trust_workspace_decisions`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .._types import ExecResult, HookOutcome, HookSpec
from .base import JS_SPACE, clean_answer, dropped_note, from_repository

# HOOK_CONFIG_FILE_EVENT_MAP, reversed: the event the SDK sends -> the hook files it runs.
# `pre_compact` is an event name (HookEventNameSchema) no file maps to: it runs none
# (the `PreCompact` files are near-misses in discovery).
EVENT_FILES = {
    "agent_start": "TaskStart",
    "agent_resume": "TaskResume",
    "agent_abort": "TaskCancel",
    "agent_end": "TaskComplete",
    "agent_error": "TaskError",
    "tool_call": "PreToolUse",
    "tool_result": "PostToolUse",
    "prompt_submit": "UserPromptSubmit",
    "pre_compact": "PreCompact",
    "session_shutdown": "SessionShutdown",
}
EVENT_NAMES = tuple(EVENT_FILES)
# The hooks whose answer the SDK reads (beforeTool, afterTool); the first takes a rewrite.
READ_HOOKS = ("PreToolUse", "PostToolUse")
REWRITE_HOOK = "PreToolUse"
CONTROL_PREFIX = "HOOK_CONTROL\t"
CONTEXT_LIMIT = 50_000
TRUNCATION_NOTE = f"\n[hook context truncated: exceeded {CONTEXT_LIMIT} characters]"
REWRITE = "overrideInput"
TOO_DEEP = "stdout JSON nested too deeply to read"  # JSON.parse may read it: unknown


def iso_now() -> str:
    """`new Date().toISOString()`: UTC, milliseconds, `Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JSON.parse rejects NaN and Infinity


def _candidate(text: str) -> str:
    """What `parseStdout` hands `JSON.parse`: the last `HOOK_CONTROL` line's rest (lines
    trimmed), else the whole trimmed stdout ("" for blank output)."""
    trimmed = text.strip(JS_SPACE)
    lines = [line.strip(JS_SPACE) for line in trimmed.split("\n")]
    prefixed = [line[len(CONTROL_PREFIX) :] for line in lines if line.startswith(CONTROL_PREFIX)]
    return prefixed[-1] if prefixed else trimmed


def parse_stdout(text: str) -> tuple[Any, str | None]:
    """`parseStdout`: (the JSON value, None); (None, None) for blank output; (None, why)
    when it does not parse (the SDK skips the hook)."""
    candidate = _candidate(text)
    if not candidate:
        return None, None
    try:
        return json.loads(candidate, parse_constant=_no_constant), None
    except RecursionError:
        return None, TOO_DEEP
    except ValueError as exc:
        return None, f"stdout is not JSON ({exc})"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_control(value: Any) -> dict[str, Any] | None:
    """`parseHookControl` as a one-hook answer: `cancel`; `contextModification`, the
    context it adds (none when it cancels); `errorMessage`, its cancel's reason; and
    `overrideInput` when the object has one (null too). None: not a JSON object."""
    if not isinstance(value, dict):
        return None
    value = clean_answer(value)
    injectable = _text(value.get("context"))
    if injectable is None:
        injectable = _text(value.get("contextModification"))
    error = _text(value.get("errorMessage"))
    error = error if error and error.strip(JS_SPACE) else None
    cancel = value.get("cancel") is True
    answer: dict[str, Any] = {"cancel": cancel, "contextModification": "", "errorMessage": ""}
    if cancel:
        answer["errorMessage"] = (error if error is not None else injectable) or ""
    else:
        context = injectable if injectable is not None else error
        if context and len(context) > CONTEXT_LIMIT:
            context = context[:CONTEXT_LIMIT] + TRUNCATION_NOTE
        answer["contextModification"] = context or ""
    if REWRITE in value:
        answer[REWRITE] = value[REWRITE]
    return answer


def combine(
    hook_name: str, answers: Sequence[Mapping[str, Any]], failures: Sequence[str]
) -> dict[str, Any]:
    """`mergeHookControls` over the answers in path order, read as the SDK's beforeTool /
    afterTool read it, in fields the SDK reads back the same (`sandboxrun run` is itself
    a hook): a cancel carries the reasons and drops the contexts; the last
    `overrideInput` goes on (PreToolUse only). `failures`: fail-closed's reasons (each
    cancels)."""
    cancel = bool(failures) or any(a.get("cancel") is True for a in answers)
    reasons = [a.get("errorMessage", "") for a in answers if a.get("cancel") is True]
    contexts = [a.get("contextModification", "") for a in answers]
    combined: dict[str, Any] = {
        "cancel": cancel,
        "contextModification": "" if cancel else "\n".join(c for c in contexts if c),
        "errorMessage": "\n".join(r for r in [*reasons, *failures] if r) if cancel else "",
    }
    rewrites = [a[REWRITE] for a in answers if REWRITE in a]
    if EVENT_FILES.get(hook_name, hook_name) == REWRITE_HOOK and rewrites:
        combined[REWRITE] = rewrites[-1]
    return combined


def untrusted_stdout(stdout: bytes) -> tuple[bytes, str | None]:
    """A repository command's stdout as the SDK may read it (`exec --untrusted`): the
    object it would read (the whole stdout, or the last `HOOK_CONTROL` line) without its
    `overrideInput`, as one JSON line; anything else unchanged (what `JSON.parse` cannot
    read either gives the SDK no control, and the extension reads it as before). An
    object nested deeper than Python reads is dropped whole: what the SDK would find
    there is unknown."""
    data, why = parse_stdout(stdout.decode("utf-8", "replace"))
    if why == TOO_DEEP:
        return b"", "stdout JSON nested too deeply to read: dropped (untrusted command)"
    if not isinstance(data, dict) or REWRITE not in data:
        return stdout, None
    kept = {k: v for k, v in data.items() if k != REWRITE}
    return json.dumps(kept, ensure_ascii=True).encode() + b"\n", (
        f"{dropped_note([REWRITE])} (untrusted command)"
    )


def read(spec: HookSpec, result: ExecResult, trusted: bool, common: dict[str, Any]) -> HookOutcome:
    """A hook that exited, as the SDK reads it: its stdout whatever the exit
    code; nothing for a hook of an event whose answer the SDK never reads. A non-zero
    exit is still a failed hook (fail-closed blocks), its answer read all the same."""
    # A hook named by the SDK's event (`exec`'s: `tool_call`) is read as its files are.
    event, code = EVENT_FILES.get(spec.hook_name, spec.hook_name), result.exit_code
    value, why = parse_stdout(result.stdout.decode("utf-8", "replace"))
    answer = parse_control(value) if why is None else None
    notes = [f"{why}: Cline's SDK/CLI skips this hook's answer"] if why else []
    if event not in READ_HOOKS:
        if answer is not None and answer != parse_control({}):
            notes.append(
                f"Cline's SDK/CLI runs {event} hooks detached: their answer decides nothing"
            )
        answer = None
    elif answer is not None and REWRITE in answer:
        if event != REWRITE_HOOK:
            del answer[REWRITE]
            notes.append(f"{event}: Cline's SDK/CLI takes no overrideInput; ignored")
        elif not trusted and from_repository(spec.source):
            del answer[REWRITE]
            notes.append(dropped_note([REWRITE]))
    if code != 0:
        also = "; Cline's SDK/CLI reads its answer all the same" if answer is not None else ""
        error = "; ".join([f"{event} hook exited with code {code}{also}", *notes])
        return HookOutcome(status="failed", error=error, answer=answer or {}, **common)
    empty = {"cancel": False, "contextModification": "", "errorMessage": ""}
    return HookOutcome(
        status="completed", error="; ".join(notes) or None, answer=answer or empty, **common
    )
