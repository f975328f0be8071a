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
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ._dialect import outcome_fields, sandbox_ending, unique_mounts
from ._types import Discovery, ExecResult, HookOutcome, HookSpec, Skipped

HOOK_NAMES = (
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
# Levels the user controls; project and local files come with the workspace.
_TRUSTED = frozenset({"user", "explicit"})
# The event field a matcher is tested against; events absent here ignore matchers.
MATCH_FIELDS = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "PermissionRequest": "tool_name",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "PreCompact": "trigger",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}
# Events whose answer is a permission decision (exit 2 and `block` mean deny).
PERMISSION_EVENTS = frozenset({"PreToolUse", "PermissionRequest"})
# Events that exit 2 or `decision: "block"` can block; elsewhere stderr only informs the user.
BLOCKING_EVENTS = PERMISSION_EVENTS | {
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
}
# Events whose plain-text stdout (exit 0) reaches the model as context.
PLAIN_TEXT_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})
_STRICTNESS = {"allow": 1, "ask": 2, "deny": 3}
_SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")
_MISPLACED = ("additionalContext", "permissionDecision", "permissionDecisionReason", "updatedInput")


@dataclass(frozen=True, slots=True)
class ClaudeDialect:
    """Claude Code's settings-file hooks; the folders and the variable vary per clone."""

    agent: str
    user_dir: str  # relative to $HOME
    project_dir: str  # relative to the project root (the first workspace root)
    project_dir_var: str  # the environment variable naming the project root
    default_timeout: float = 60.0
    hook_names: tuple[str, ...] = HOOK_NAMES

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        cwd = event.get("cwd")
        return [cwd] if isinstance(cwd, str) and cwd else []

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        return {
            "blocked": True,
            "permissionDecision": "deny",
            "reason": reason,
            "additionalContext": "",
            "systemMessage": "",
            "continue": True,
            "stopReason": "",
            "updatedInput": None,
        }

    # -- discovery ---------------------------------------------------------------

    def settings_files(
        self, workspaces: Sequence[str], home: str, explicit: Sequence[str] = ()
    ) -> list[tuple[str, str, str | None]]:
        """(settings file, source, hooks folder to mount) in order: user, project, local.

        Only the user level mounts a folder of its own (`<user dir>/hooks`), never the
        user dir itself: it holds credentials. Explicit files (or folders holding a
        `settings.json`) replace all three levels.
        """
        if explicit:
            found: list[tuple[str, str, str | None]] = []
            for given in explicit:
                path = os.path.abspath(given)
                if os.path.isdir(path):
                    path = os.path.join(path, "settings.json")
                found.append((path, "explicit", os.path.join(os.path.dirname(path), "hooks")))
            return found
        user = os.path.join(home, self.user_dir)
        project = os.path.join(workspaces[0] if workspaces else os.getcwd(), self.project_dir)
        return [
            (os.path.join(user, "settings.json"), "user", os.path.join(user, "hooks")),
            (os.path.join(project, "settings.json"), "project", None),
            (os.path.join(project, "settings.local.json"), "local", None),
        ]

    def discover(
        self,
        hook_name: str | None,
        workspaces: Sequence[str],
        home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:
        """The hooks for `hook_name` (every event if None), and the skipped entries.

        Levels are concatenated in order; a command already found for the same event
        runs once (the first is kept, its matcher widened to cover both entries);
        `disableAllHooks: true` turns hooks off -- but a project or local file (which
        may come with a cloned repository) turns off only the workspace's own hooks,
        never the user's: the workspace cannot disarm the user's guards.
        """
        roots = list(workspaces) or [os.getcwd()]
        found: list[tuple[HookSpec, str, str]] = []  # (spec, its file, its JSON path)
        skipped: list[Skipped] = []
        disabled: set[str] = set()  # the sources whose files say disableAllHooks
        read: set[str] = set()
        for path, source, hooks_dir in self.settings_files(roots, home, explicit):
            real = os.path.realpath(path)
            if real in read:  # e.g. the project is $HOME: its settings are the user's
                continue
            read.add(real)
            data, problem = _load(path, must_exist=source == "explicit")
            if problem is not None:
                skipped.append(Skipped(path, source, problem))
            if data is None:
                continue
            flag = data.get("disableAllHooks")
            if flag is True:
                disabled.add(source)
                off = "every hook" if source in _TRUSTED else "this workspace's hooks"
                skipped.append(Skipped(path, source, f"disableAllHooks is true: {off} off"))
            elif flag is not None and not isinstance(flag, bool):
                why = "disableAllHooks must be true or false; ignored"
                skipped.append(Skipped(path, source, why))
            extra = [hooks_dir] if hooks_dir and os.path.isdir(hooks_dir) else []
            template = HookSpec(
                hook_name="",
                name="",
                source=source,
                argv=(),
                workdir=roots[0],
                mounts=unique_mounts([*roots, *extra]),
                env={self.project_dir_var: roots[0]},
            )
            for item in self._entries(data, hook_name, template):
                if isinstance(item, str):
                    skipped.append(Skipped(path, source, item))
                else:
                    found.append((item[0], path, item[1]))
        if disabled & _TRUSTED:
            return Discovery((), tuple(skipped))
        if disabled:
            found = [f for f in found if f[0].source in _TRUSTED]
        hooks: list[HookSpec] = []
        index: dict[tuple[str, str], int] = {}
        for spec, path, where in found:
            key = (spec.hook_name, spec.name)
            if key not in index:
                index[key] = len(hooks)
                hooks.append(spec)
                continue
            first = hooks[index[key]]
            hooks[index[key]] = _merge(first, spec)
            why = f"{where}: the same command is already configured ({first.source}); runs once"
            skipped.append(Skipped(path, spec.source, why))
        return Discovery(tuple(hooks), tuple(skipped))

    def _entries(
        self, data: Mapping[str, Any], wanted: str | None, template: HookSpec
    ) -> list[tuple[HookSpec, str] | str]:
        """Each valid hook as (spec, JSON path), each invalid entry as 'path: why'."""
        table = data.get("hooks")
        if table is None:
            return []
        if not isinstance(table, dict):
            return ["hooks: must be an object mapping event names to lists"]
        out: list[tuple[HookSpec, str] | str] = []
        for event, entries in table.items():
            where = _key_path("hooks", event)
            if event not in self.hook_names:
                near = next((n for n in self.hook_names if n.lower() == event.lower()), None)
                hint = f" (did you mean {near}?)" if near else ""
                out.append(f"{where}: unknown event name{hint}")
                continue
            if wanted is not None and event != wanted:
                continue
            if not isinstance(entries, list):
                out.append(f"{where}: must be a list of matcher entries")
                continue
            for i, entry in enumerate(entries):
                out += _entry(entry, f"{where}[{i}]", event, template)
        return out

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """The matcher table: match-all forms, exact names (`|` lists), else a regex."""
        field = MATCH_FIELDS.get(spec.hook_name)
        matcher = spec.matcher
        if field is None or matcher is None or matcher in ("", "*"):
            return True  # UserPromptSubmit and Stop ignore matchers
        value = event.get(field)
        text = value if isinstance(value, str) else ""
        if _SIMPLE_MATCHER.fullmatch(matcher):
            return text in matcher.split("|")
        try:
            return re.search(matcher, text) is not None
        except re.error:
            return False  # reported (and skipped) at discovery

    # -- input -------------------------------------------------------------------

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event as the hook reads it: the base fields first, compact, no newline.

        `hook_event_name` is the hook being run and `cwd` the project root the hook
        really runs in; `session_id` is kept ("" if missing), `transcript_path` as given.
        """
        base: dict[str, Any] = {"session_id": event.get("session_id", "")}
        if "transcript_path" in event:
            base["transcript_path"] = event["transcript_path"]
        base["cwd"] = workspaces[0] if workspaces else os.getcwd()
        base["hook_event_name"] = hook_name
        merged = {**base, **{k: v for k, v in event.items() if k not in base}}
        return json.dumps(merged, separators=(",", ":"), ensure_ascii=False).encode()

    # -- output ------------------------------------------------------------------

    def interpret(self, spec: HookSpec, result: ExecResult, timeout: float) -> HookOutcome:
        """Exit 0: the JSON answer or plain text; 2: a blocking error; else non-blocking."""
        common = outcome_fields(spec, result)
        stderr, event = common["stderr"], spec.hook_name
        ended = sandbox_ending(result, timeout)
        if ended:  # killed: no decision
            return HookOutcome(status=ended[0], error=f"{event} hook {ended[1]}", **common)
        if result.exit_code == 2:
            # A blocking error: stderr is the reason, stdout is ignored (even JSON).
            answer = blocking_error(event, stderr, spec.name)
            return HookOutcome(status="completed", answer=answer, **common)
        if result.exit_code != 0:
            first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
            error = first or f"{event} hook exited with code {result.exit_code}"
            return HookOutcome(status="failed", error=error, **common)
        stdout = result.stdout.decode("utf-8", "replace")
        parsed, message = parse_answer(event, stdout, spec.name)
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
            if fail_closed and o.status != "completed"
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


CLAUDE = ClaudeDialect("claude", ".claude", ".claude", "CLAUDE_PROJECT_DIR")
QODER = ClaudeDialect("qoder", ".qoder", ".qoder", "QODER_PROJECT_DIR")
QODER_CN = ClaudeDialect("qoder-cn", ".qoder-cn", ".qoder", "QODERCN_PROJECT_DIR")


# -- discovery helpers -------------------------------------------------------------


def _load(path: str, must_exist: bool) -> tuple[dict[str, Any] | None, str | None]:
    """(settings, None), (None, why it is skipped), or (None, None) for a missing file."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return None, "not found" if must_exist else None
    except IsADirectoryError:
        return None, "is a directory, not a settings file"
    except OSError as exc:
        return None, f"cannot read: {exc.strerror}"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    if not text.strip():
        return {}, None  # an empty settings file configures nothing
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg}: line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return None, "not valid JSON: nested too deeply"
    if not isinstance(data, dict):
        return None, f"not a JSON object (a {type(data).__name__})"
    return data, None


def _entry(
    entry: Any, where: str, event: str, template: HookSpec
) -> list[tuple[HookSpec, str] | str]:
    """One matcher entry `{"matcher": ..., "hooks": [...]}` -> its hooks and problems."""
    if not isinstance(entry, dict):
        return [f"{where}: must be an object with a hooks list"]
    matcher = entry.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        return [f"{where}.matcher: must be a string"]
    if matcher is not None and event in MATCH_FIELDS:
        problem = _check_matcher(matcher)
        if problem:
            return [f"{where}.matcher: {problem}"]
    hooks = entry.get("hooks")
    if not isinstance(hooks, list):
        return [f"{where}: has no hooks list"]
    out: list[tuple[HookSpec, str] | str] = []
    for j, hook in enumerate(hooks):
        at = f"{where}.hooks[{j}]"
        command, timeout, why = _hook_fields(hook)
        if why is not None:
            out.append(f"{at}: {why}")
            continue
        assert command is not None
        spec = replace(
            template,
            hook_name=event,
            name=command,
            argv=("/bin/sh", "-c", command),
            timeout=timeout,
            matcher=matcher,
        )
        out.append((spec, at))
    return out


def _hook_fields(hook: Any) -> tuple[str | None, float | None, str | None]:
    """(command, timeout in seconds, None) for a valid hook, else (None, None, why)."""
    if not isinstance(hook, dict):
        return None, None, "must be an object"
    kind = hook.get("type")
    if kind != "command":
        if kind is None:
            return None, None, 'has no type (only "command" is supported)'
        return None, None, f'type {kind!r} is not supported (only "command")'
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, None, "has no command string"
    timeout = hook.get("timeout")
    if timeout is None:
        return command, None, None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        return None, None, f"timeout must be a positive number of seconds, not {timeout!r}"
    if timeout == float("inf"):
        return None, None, "timeout must be finite"
    return command, float(timeout), None


def _check_matcher(matcher: str) -> str | None:
    """Why a matcher is unusable (an invalid regular expression), or None."""
    if matcher in ("", "*") or _SIMPLE_MATCHER.fullmatch(matcher):
        return None
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"invalid regular expression {matcher!r}: {exc}"
    return None


def _merge(first: HookSpec, again: HookSpec) -> HookSpec:
    """The first spec of a command, applying wherever either entry's matcher applies."""
    matcher = first.matcher
    if first.hook_name in MATCH_FIELDS:
        matcher = _union(first.matcher, again.matcher)
    return replace(first, matcher=matcher, mounts=unique_mounts([*first.mounts, *again.mounts]))


def _union(a: str | None, b: str | None) -> str | None:
    """A matcher that matches what `a` or `b` matches."""
    if a is None or a in ("", "*") or a == b:
        return a
    if b is None or b in ("", "*"):
        return b
    if _SIMPLE_MATCHER.fullmatch(a) and _SIMPLE_MATCHER.fullmatch(b):
        return "|".join(dict.fromkeys([*a.split("|"), *b.split("|")]))
    return f"{_as_regex(a)}|{_as_regex(b)}"


def _as_regex(matcher: str) -> str:
    if _SIMPLE_MATCHER.fullmatch(matcher):
        return rf"\A(?:{matcher})\Z"
    return f"(?:{matcher})"


def _key_path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if key.isidentifier() else f"{prefix}[{json.dumps(key)}]"


# -- output helpers ----------------------------------------------------------------


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


def parse_answer(event: str, stdout: str, name: str) -> tuple[dict[str, Any] | None, str | None]:
    """Exit-0 stdout -> (answer, warning or None), or (None, why it was rejected)."""
    text = stdout.lstrip()
    warning = None
    if text.startswith("{"):
        try:
            data: Any = json.loads(text)
        except (ValueError, RecursionError):
            data = None
            warning = "stdout starts with '{' but is not valid JSON: read as plain text"
        if isinstance(data, dict):
            try:
                return _structured(event, data, name)
            except _Rejected as exc:
                return None, f"{event} hook answer rejected: {exc}"
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
    event: str, data: Mapping[str, Any], name: str
) -> tuple[dict[str, Any], str | None]:
    """A JSON answer, validated the way the agent validates it (else `_Rejected`)."""
    answer = _answer(
        **{"continue": _get(data, "continue", bool, True)},
        stopReason=_get(data, "stopReason", str, ""),
        systemMessage=_get(data, "systemMessage", str, ""),
        suppressOutput=_get(data, "suppressOutput", bool, False),
    )
    decision = _get(data, "decision", str, None)
    if decision not in (None, "approve", "block"):
        raise _Rejected(f'decision must be "approve" or "block", not {decision!r}')
    reason = _get(data, "reason", str, "")
    default_reason = f"blocked by hook {name}"
    warnings = [f"{k} belongs in hookSpecificOutput; ignored" for k in _MISPLACED if k in data]
    specific = data.get("hookSpecificOutput")
    if specific is not None:
        if not isinstance(specific, dict):
            raise _Rejected("hookSpecificOutput must be an object")
        got = specific.get("hookEventName")
        if got is None:
            raise _Rejected(f"hookSpecificOutput.hookEventName is missing (must be {event!r})")
        if got != event:
            raise _Rejected(f"hookSpecificOutput.hookEventName is {got!r}, not {event!r}")
        answer["additionalContext"] = _get(
            specific, "additionalContext", str, "", "hookSpecificOutput."
        )
    else:
        specific = {}
    if event in PERMISSION_EVENTS:
        legacy = {"approve": "allow", "block": "deny"}.get(decision or "")
        _permission(event, answer, specific, legacy, reason, default_reason)
    elif decision == "block" and event in BLOCKING_EVENTS:
        if not reason:
            warnings.append('decision "block" without a reason')
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
