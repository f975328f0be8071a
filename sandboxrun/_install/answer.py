"""`sandboxrun run --answer agent`: the combined answer in the agent's own hook protocol,
so that `run` can itself be the hook the agent calls (Cline shims, Claude Code's
managed forwarding hooks).

- Cline family: `{"cancel", "contextModification", "errorMessage"}` (and the SDK's
  `overrideInput` when a hook rewrote the tool's input) on stdout, exit 0
  (the report of each hook is left out; what went wrong with a hook goes to stderr,
  which Cline shows to the user).
- Claude family: a block is exit 2 with the reason on stderr (every event that can
  block reads it so: the tool is denied, the prompt erased, stopping prevented);
  `continue: false` is `{"continue": false, "stopReason": ...}`; anything else is exit
  0 with the documented JSON (`hookSpecificOutput` with `hookEventName`, and
  `systemMessage`), or nothing when there is nothing to say.
- Copilot: the combined answer as one hook's JSON (`copilot.dialect.agent_document`), exit
  0; an error of ours is the dialect's `wrapper_failure` (exit 0 without fail-closed:
  Copilot denies on any non-zero preToolUse exit).
- Windsurf: exit codes only: a block is exit 2 with the reason on stderr, else exit 0
  and nothing on stdout (Windsurf never reads it).
- Codex: the Claude family's answer, made valid for Codex's stricter parser
  (`_for_codex`): a PreToolUse `allow` without `updatedInput` and an `ask` are dropped
  (Codex would ignore the whole answer: its own approval flow decides, as it does then),
  so is a PermissionRequest verdict with `updatedInput` (an allow of a rewritten call is
  no allow of the original one); `continue: false` on PreToolUse or PermissionRequest,
  which Codex rejects, is a block (exit 2). Anything still invalid is dropped whole.
  Never a deny made an allow: a block is exit 2 before any of this.
- Gemini CLI: its own output fields, combined (`decision`, `reason`, `continue`...), as
  JSON on stdout with exit 0; a block is `decision: "deny"` there.
- An error of ours (no engine, a bad config file) without fail-closed: exit 1 and one
  line on stderr, the Claude family's non-blocking error (exit 2 would block), and for
  Cline a failed hook, which does not block either. Under fail-closed it is a block.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._dialects.base import Dialect
from .._dialects.registry import (
    DIALECTS,
    claude_shaped,
    copilot_shaped,
    gemini_shaped,
    windsurf_shaped,
)
from .._errors import SandboxrunError
from .._log import logger
from .._settings import env_fail_closed
from .._text import printable
from .._types import CombinedResult

# Events whose hookSpecificOutput may carry additionalContext (reference/claude-hooks.md).
CONTEXT_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart",
     "SubagentStart", "Setup"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class AgentAnswer:
    stdout: bytes
    stderr: bytes
    exit_code: int


def agent_answer(dialect: Dialect, event: str, result: CombinedResult) -> AgentAnswer:
    """What the agent reads from `run` as if it were one of its hooks."""
    notes = [
        printable(f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}")
        for o in result.outcomes
        if o.status != "completed" and o.error
    ]
    # What the sandbox stopped a hook that answered anyway (its `error` says it otherwise):
    # a hint beside the answer, never a change to it.
    stopped = [
        printable(f"sandboxrun: hook {o.spec.name}: sandbox stopped: {o.sandbox_stopped}")
        for o in result.outcomes
        if o.status == "completed" and o.sandbox_stopped
    ]
    notes += stopped
    answer = dict(result.answer)
    if gemini_shaped(dialect):  # the combined output, in its own fields
        document = {k: v for k, v in answer.items() if k != "blocked"}
        return AgentAnswer(_json(document) if document else b"", _lines(notes), 0)
    if copilot_shaped(dialect):  # a deny is JSON: a non-zero exit denies too
        from .._dialects.copilot.dialect import agent_document

        document = agent_document(event, answer)
        return AgentAnswer(_json(document) if document else b"", _lines(notes), 0)
    if windsurf_shaped(dialect):  # exit codes only: 2 blocks, stderr the reason
        code = 2 if answer.get("blocked") else 0
        return AgentAnswer(b"", _lines([answer["reason"], *notes] if code else notes), code)
    if not claude_shaped(dialect):
        # overrideInput: the SDK's rewrite of the tool's input (a user's hook's only)
        fields = ("cancel", "contextModification", "errorMessage", "overrideInput")
        document = {k: answer[k] for k in fields if k in answer}
        return AgentAnswer(_json(document), _lines(notes), 0)
    if answer.get("continue") is False and dialect.agent == "codex" and event in _CODEX_NO_STOP:
        why = answer.get("stopReason") or "stopped by a hook run in sandboxrun's sandbox"
        return AgentAnswer(b"", _lines([why, *notes]), 2)  # Codex rejects the stop there
    if answer.get("continue") is False:
        document = {"continue": False, "stopReason": answer.get("stopReason", "")}
        if answer.get("systemMessage"):
            document["systemMessage"] = answer["systemMessage"]
        return AgentAnswer(_json(document), _lines(notes), 0)
    if answer.get("blocked"):
        reason = answer.get("reason") or "blocked by a hook run in sandboxrun's sandbox"
        return AgentAnswer(b"", _lines([reason, *stopped]), 2)
    document, dropped = _claude_document(event, answer)
    if dropped:
        notes.append(f"sandboxrun: {event} takes no additionalContext; dropped: {dropped[:200]}")
    if dialect.agent == "codex":
        return _for_codex(event, document, notes)
    return AgentAnswer(_json(document) if document else b"", _lines(notes), 0)


# Events whose `continue: false` Codex rejects (output_parser.rs): a block there instead.
_CODEX_NO_STOP = frozenset({"PreToolUse", "PermissionRequest"})


def _for_codex(event: str, document: dict[str, Any], notes: list[str]) -> AgentAnswer:
    """The Claude family's exit-0 answer as Codex's parser takes it (module docstring):
    what it rejects is dropped, or (a stop) made a block; never an allow made of a deny."""
    from .._dialects.codex.schema import schema_problem, semantic_problem

    document = json.loads(json.dumps(document))  # a copy to change
    specific = document.get("hookSpecificOutput") or {}
    dropped = []
    decision = specific.get("permissionDecision")
    if (
        event == "PreToolUse"
        and decision in ("allow", "ask")
        and specific.get("updatedInput") is None
    ):
        specific.pop("permissionDecision")
        specific.pop("permissionDecisionReason", None)
        dropped.append(f"permissionDecision {decision} (Codex takes an allow only with"
                       " updatedInput, and no ask)")  # fmt: skip
    verdict = specific.get("decision")
    if event == "PermissionRequest" and isinstance(verdict, dict) and "updatedInput" in verdict:
        specific.pop("decision")
        dropped.append("the allow of a rewritten request (Codex takes no updatedInput there)")
    if specific and len(specific) == 1:
        document.pop("hookSpecificOutput")
    problem = schema_problem(event, document) or semantic_problem(event, document)
    if problem:  # nothing of ours should get here: what Codex would ignore, it never sees
        dropped.append(f"the whole answer ({problem})")
        document = {}
    notes += [f"sandboxrun: {event}: dropped {d}" for d in dropped]
    return AgentAnswer(_json(document) if document else b"", _lines(notes), 0)


def _claude_document(event: str, answer: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The exit-0 JSON of a combined answer that does not block, and any context the
    event cannot carry."""
    specific: dict[str, Any] = {"hookEventName": event}
    decision = answer.get("permissionDecision")
    if event == "PreToolUse" and decision in ("allow", "ask"):
        specific["permissionDecision"] = decision
        specific["permissionDecisionReason"] = answer.get("reason", "")
    if event == "PreToolUse" and answer.get("updatedInput") is not None:
        specific["updatedInput"] = answer["updatedInput"]
    if event == "PermissionRequest" and decision == "allow":
        verdict: dict[str, Any] = {"behavior": "allow"}
        if answer.get("updatedInput") is not None:
            verdict["updatedInput"] = answer["updatedInput"]
        specific["decision"] = verdict
    context = answer.get("additionalContext") or ""
    dropped = ""
    if context and event in CONTEXT_EVENTS:
        specific["additionalContext"] = context
    elif context:
        dropped = context
    document: dict[str, Any] = {}
    if answer.get("systemMessage"):
        document["systemMessage"] = answer["systemMessage"]
    if len(specific) > 1:
        document["hookSpecificOutput"] = specific
    return document, dropped


def error_answer(dialect: Dialect, fail_closed: bool, why: str) -> AgentAnswer:
    """An error of ours, before any hook ran (see the module docstring)."""
    line = f"sandboxrun: {why}"
    if copilot_shaped(dialect):  # any non-zero preToolUse exit denies
        return AgentAnswer(*dialect.wrapper_failure(why, fail_closed))
    if not fail_closed:
        return AgentAnswer(b"", _lines([line]), 1)
    reason = f"sandboxrun: hooks could not run (fail-closed): {why}"
    if claude_shaped(dialect) or windsurf_shaped(dialect):
        return AgentAnswer(b"", _lines([reason]), 2)
    return AgentAnswer(_json(dialect.blocked_answer(reason)), b"", 0)


def _json(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=True).encode() + b"\n"


def _lines(lines: list[str]) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode("utf-8", "backslashreplace")


def run_as_hook(
    args: argparse.Namespace, produce: Callable[[argparse.Namespace], CombinedResult]
) -> int:
    """`run --answer agent`: `produce` (the `run` command's work) answered in the agent's
    own protocol on stdout, stderr and the exit code."""
    dialect = DIALECTS[args.agent or "cline"]
    fail_closed = bool(args.fail_closed or env_fail_closed())
    abandoned = False
    try:
        result = produce(args)
        abandoned = result.abandoned
        out = agent_answer(dialect, args.hook, result)
    except SandboxrunError as exc:
        out = error_answer(dialect, fail_closed, _one_line(exc))
    except Exception as exc:  # a bug of ours: one line, never a traceback on the agent
        logger.opt(exception=exc).debug("internal error")
        out = error_answer(
            dialect, fail_closed, f"internal error: {type(exc).__name__}: {_one_line(exc)}"
        )
    sys.stdout.buffer.write(out.stdout)
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(out.stderr)
    sys.stderr.buffer.flush()
    if abandoned:  # stuck threads must not keep the agent waiting on us
        os._exit(out.exit_code)
    return out.exit_code


def _one_line(exc: BaseException) -> str:
    return printable(" ".join(str(exc).split()))[:500]
