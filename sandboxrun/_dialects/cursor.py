"""Cursor's hook protocol (IDE and `cursor-agent` CLI): `hooks.json`, camelCase events,
`permission` answers. Pure functions over paths, bytes and dicts.

Cursor is closed source. Everything here comes from its docs as captured in the
reference (shared/reference/agent-hooks-2026.md section 1: cursor.com/docs/hooks, 2026-03-08)
and from public repositories' `.cursor/hooks.json` and hook scripts; a rule marked
(unconfirmed) is one neither states outright, and the reading chosen is the safe one.

Config (`discover`): `version: 1` and `hooks: {event: [entry...]}`, each entry
`{command, type?, matcher?, timeout? (seconds), failClosed?, loop_limit?}`. Levels, as
Cursor ranks them: enterprise (`/etc/cursor/hooks.json`), team (cloud: not on disk, not
read), project (`<root>/.cursor/hooks.json`), user (`~/.cursor/hooks.json`). Cursor runs
the hooks of every level (no dedup documented, none done: a command configured at two
levels runs twice, as in Cursor). They are listed enterprise, user, project: the user's
own first, so a repository's many hooks can only push its own past `max_hooks`; the
order decides nothing else, since the strictest answer wins whatever its level.
Working directory: project hooks run in the project root (`.cursor/hooks/x.sh`), user
hooks in `~/.cursor/` (`./hooks/x.sh`), enterprise hooks in `/etc/cursor/`. Only the
`hooks` folder of `~/.cursor` is mounted (the rest holds the agent's credentials and
MCP keys); the hook starts in `~/.cursor` inside, where `./hooks/...` is that folder.

Answer (`interpret`): exit 0 and stdout JSON; exit 2 blocks ("for Claude Code
compatibility": a deny, stderr its reason; on `stop` a no-op, per a public hook's
notes); any other exit, a crash, a timeout or stdout that is not a JSON object is a
failure, which lets the action through unless the entry says `failClosed: true` (or the
user's sandboxrun is fail-closed): then it blocks. Fields, per event as the reference's
table lists them: `permission` ("allow" | "deny" | "ask"), `user_message`,
`agent_message` (older camelCase `userMessage`/`agentMessage` accepted too, as public
scripts still write them), `continue` (beforeSubmitPrompt), `followup_message`
(stop, subagentStop), `additional_context` (sessionStart, postToolUse), `env`
(sessionStart: passed to the session's later hooks), `updated_input` (preToolUse),
`updated_mcp_tool_output` (postToolUse).

Combined (`combine`): the strictest permission wins (deny > ask > allow), whatever the
level (Cursor's docs rank levels but do not say that a lower level's deny can be
overridden: (unconfirmed), and the strictest reading never loosens a guard); messages
of the deciding hooks are joined, as are follow-ups and contexts; `continue: false`
from any hook stops; `env` maps merge in configuration order.

Untrusted (project hooks, `exec --untrusted`), unless `trust_workspace_decisions`: a
repository's hook may deny, ask, stop, follow up and add context, but its
`permission: "allow"` is no decision, and `updated_input`, `updated_mcp_tool_output`,
`env` and any field not on the harmless list are dropped, each named.

Environment: `CURSOR_PROJECT_DIR` and its alias `CLAUDE_PROJECT_DIR` (the project root
mounted), and from the event `CURSOR_VERSION`, `CURSOR_USER_EMAIL` and
`CURSOR_TRANSCRIPT_PATH` (only when that transcript is mounted: the agent's own, under
`~/.cursor/projects`) (`event_env`). A sessionStart's returned `env` is not handed on by
sandboxrun (it keeps no session): the answer carries it for the agent.

Payload: `beforeReadFile` and `beforeTabFileRead` carry the whole file in `content`.
An event over `max_input` bytes is an error (a block under fail-closed), never cut:
a scanner must never pass a file it was shown only the start of.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._errors import ConfigError
from .._types import Discovery, ExecResult, HookOutcome, HookSpec, Skipped
from .base import (
    WORKSPACE_SOURCES,
    clean_answer,
    escape_name,
    event_bytes,
    failure_on_stderr,
    outcome_fields,
    sandbox_ending,
    unique_mounts,
)
from .claude.handler import brief, timeout_seconds, unicode_ok
from .claude.matchers import (  # the same bounded regex search
    MATCH_TIMEOUT,
    MAX_WORKSPACE_PATTERN,
    _compile,
    _too_slow,
)
from .claude.settings import _load

HOOK_NAMES = (
    "sessionStart",
    "sessionEnd",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "preCompact",
    "stop",
    "afterAgentResponse",
    "afterAgentThought",
    "beforeTabFileRead",
    "afterTabFileEdit",
)
# Events whose `permission` Cursor honours (and which exit 2 or a failClosed failure deny).
PERMISSION_EVENTS = frozenset(
    {
        "preToolUse",
        "subagentStart",
        "beforeShellExecution",
        "beforeMCPExecution",
        "beforeReadFile",
        "beforeTabFileRead",
    }
)
ASK_EVENTS = frozenset({"beforeShellExecution", "beforeMCPExecution"})  # others: allow|deny
FOLLOWUP_EVENTS = frozenset({"stop", "subagentStop"})
CONTEXT_EVENTS = frozenset({"sessionStart", "postToolUse"})
# The field a matcher is searched in. Tool events match the tool type (Shell, Read,
# MCP:x...), shell events the full command, subagent events the subagent type. For the
# other events the docs name a fixed value: the matcher is not applied (unconfirmed).
MATCH_FIELDS = {
    "preToolUse": "tool_name",
    "postToolUse": "tool_name",
    "postToolUseFailure": "tool_name",
    "beforeShellExecution": "command",
    "afterShellExecution": "command",
    "beforeMCPExecution": "tool_name",
    "afterMCPExecution": "tool_name",
    "subagentStart": "subagent_type",
    "subagentStop": "subagent_type",
}
_STRICTNESS = {"allow": 1, "ask": 2, "deny": 3}
DEFAULT_LOOP_LIMIT = 5
# What an untrusted hook's JSON may carry; anything else is dropped and named.
_HARMLESS = frozenset(
    {
        "permission",
        "user_message",
        "agent_message",
        "userMessage",
        "agentMessage",
        "continue",
        "followup_message",
        "additional_context",
    }
)


@dataclass(frozen=True, slots=True)
class CursorDialect:
    agent: str = "cursor"
    user_dir: str = ".cursor"  # relative to $HOME; its `hooks.json`, its `hooks/`
    project_dir: str = ".cursor"  # relative to the project root
    enterprise_dir: str = "/etc/cursor"  # Linux/WSL; macOS and Windows paths differ
    project_dir_var: str = "CURSOR_PROJECT_DIR"
    # Cursor says "platform default" (unconfirmed value); `exec` caps it at 60 s anyway.
    default_timeout: float = 30.0
    hook_names: tuple[str, ...] = HOOK_NAMES
    # Bytes of event on stdin (beforeReadFile's whole file): more is an error, never cut.
    max_input: int = 8 << 20

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        roots = event.get("workspace_roots")
        return [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []

    def event_env(
        self, event: Mapping[str, Any], root: str, transcript: str | None
    ) -> dict[str, str]:
        """The variables Cursor sets for a hook, from the event and the mounted root:
        only short, printable strings (the event's values are the agent's)."""
        env = {self.project_dir_var: root, "CLAUDE_PROJECT_DIR": root}
        for key, var in (("cursor_version", "CURSOR_VERSION"), ("user_email", "CURSOR_USER_EMAIL")):
            value = event.get(key)
            if isinstance(value, str) and 0 < len(value) <= 256 and value.isprintable():
                env[var] = value
        if transcript:
            env["CURSOR_TRANSCRIPT_PATH"] = transcript
        return env

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        return {
            **_answer(),
            "blocked": True,
            "permission": "deny",
            "continue": False,
            "user_message": reason,
            "agent_message": reason,
        }

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """Cursor reads exit 2 as a block and any other non-zero exit as a failed hook,
        which it lets through unless the entry has `failClosed: true`. So our own
        failure is exit 1, a hook failure in Cursor's own terms: the action proceeds,
        except where the user set `failClosed` on that entry, which asked for exactly
        that. Under `--fail-closed`, exit 2 with the reason on stderr: a block."""
        return failure_on_stderr(reason, fail_closed)

    def untrusted_stdout(self, stdout: bytes) -> tuple[bytes, str | None]:
        return untrusted_stdout(stdout)

    # -- discovery ---------------------------------------------------------------

    def config_files(
        self, workspaces: Sequence[str], home: str, explicit: Sequence[str] = ()
    ) -> list[tuple[str, str, str, str | None]]:
        """(hooks.json, source, working directory, folder to mount) in listing order."""
        if explicit:
            out: list[tuple[str, str, str, str | None]] = []
            for given in map(os.path.normpath, explicit):
                path = os.path.join(given, "hooks.json") if os.path.isdir(given) else given
                folder = os.path.dirname(path)
                inside = workspaces and any(_under(path, r) for r in workspaces)
                out.append((path, "project" if inside else "explicit", folder, folder))
            return out
        user = os.path.join(home, self.user_dir)
        project = workspaces[0]
        return [
            (os.path.join(self.enterprise_dir, "hooks.json"), "enterprise", self.enterprise_dir,
             os.path.join(self.enterprise_dir, "hooks")),
            (os.path.join(user, "hooks.json"), "user", user, os.path.join(user, "hooks")),
            (os.path.join(project, self.project_dir, "hooks.json"), "project", project, None),
        ]  # fmt: skip

    def discover(
        self,
        hook_name: str | None,
        workspaces: Sequence[str],
        home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:
        roots = list(workspaces) or [home]
        hooks: list[HookSpec] = []
        skipped: list[Skipped] = []
        read: set[str] = set()
        for path, source, workdir, folder in self.config_files(roots, home, explicit):
            real = os.path.realpath(path)
            if real in read:
                continue
            read.add(real)
            shown = escape_name(path)
            data, problem = _load(path, must_exist=source == "explicit")
            if problem is not None:
                skipped.append(Skipped(shown, source, problem))
            if data is None:
                continue
            version = data.get("version")
            if version != 1:
                # Cursor documents only version 1 (unconfirmed what it does with others):
                # the hooks are still read, and the file is named.
                why = f"version is {brief(version)}, not 1: read as version 1"
                skipped.append(Skipped(shown, source, why))
            extra = [folder] if folder and os.path.isdir(folder) else []
            template = HookSpec(
                hook_name="", name="", source=source, argv=(), workdir=workdir,
                mounts=unique_mounts([*roots, *extra]),
                env={self.project_dir_var: roots[0], "CLAUDE_PROJECT_DIR": roots[0]},
            )  # fmt: skip
            for item in self._entries(data, hook_name, template):
                if isinstance(item, str):
                    skipped.append(Skipped(shown, source, item))
                elif item.kind != "command":
                    reason = "not run: a prompt hook (asks a model); sandboxrun runs only commands"
                    skipped.append(Skipped(shown, source, reason, item))
                else:
                    hooks.append(item)
        return Discovery(tuple(hooks), tuple(skipped))

    def _entries(
        self, data: Mapping[str, Any], wanted: str | None, template: HookSpec
    ) -> list[HookSpec | str]:
        table = data.get("hooks")
        if table is None:
            return []
        if not isinstance(table, dict):
            return ["hooks: must be an object mapping event names to lists"]
        out: list[HookSpec | str] = []
        for event, entries in table.items():
            where = f"hooks.{event}" if str(event).isidentifier() else f"hooks[{event!r}]"
            if event not in self.hook_names:
                near = next((n for n in self.hook_names if n.lower() == event.lower()), None)
                hint = f" (did you mean {near}?)" if near else ""
                out.append(f"{where}: unknown event name{hint}: Cursor ignores it")
                continue
            if wanted is not None and event != wanted:
                continue
            if not isinstance(entries, list):
                out.append(f"{where}: must be a list of hook entries")
                continue
            for i, entry in enumerate(entries):
                spec = _entry(entry, event, template)
                out.append(f"{where}[{i}]: {spec}" if isinstance(spec, str) else spec)
        return out

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """The matcher, searched (an unanchored regex) in the event's field; a stop or
        subagentStop hook past its `loop_limit` does not run (Cursor no longer follows
        it up; whether it still starts the hook is unconfirmed: it decides nothing)."""
        if spec.hook_name in FOLLOWUP_EVENTS and spec.loop_limit is not None:
            count = event.get("loop_count")
            if isinstance(count, int) and not isinstance(count, bool) and count >= spec.loop_limit:
                return False
        field = MATCH_FIELDS.get(spec.hook_name)
        if field is None or spec.matcher in (None, "", "*"):
            return True
        value = event.get(field)
        text = value if isinstance(value, str) else ""
        trusted = spec.source not in WORKSPACE_SOURCES
        pattern = _compile(spec.matcher)[0]
        if pattern is None:
            return trusted  # a user's broken guard runs too often rather than never
        try:
            return pattern.search(text, timeout=MATCH_TIMEOUT) is not None
        except TimeoutError:
            return _too_slow("matcher", spec.name, MATCH_TIMEOUT, trusted)

    # -- input -------------------------------------------------------------------

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event with `hook_event_name` and the roots really mounted; over
        `max_input` bytes a `ConfigError` (never a silent cut)."""
        merged = {**event, "hook_event_name": hook_name, "workspace_roots": list(workspaces)}
        data = event_bytes(merged)
        check_input(len(data), self.max_input)
        return data

    # -- output ------------------------------------------------------------------

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        common = outcome_fields(spec, result)
        event = spec.hook_name
        ended = sandbox_ending(result, timeout)
        if ended:
            return HookOutcome(status=ended[0], error=f"{event} hook {ended[1]}", **common)
        stderr = common["stderr"]
        if result.exit_code == 2:
            if event not in PERMISSION_EVENTS and event != "beforeSubmitPrompt":
                note = f"{event} hook exited 2: Cursor blocks nothing on {event}"
                return HookOutcome(status="completed", error=note, answer=_answer(), **common)
            text = stderr.strip() or f"blocked by hook {spec.name} (exit 2)"
            answer = _answer(blocked=True, agent_message=text, user_message=text)
            if event == "beforeSubmitPrompt":
                answer["continue"] = False
            else:
                answer["permission"] = "deny"
            return HookOutcome(status="completed", answer=answer, **common)
        if result.exit_code != 0:
            first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
            error = first or f"{event} hook exited with code {result.exit_code}"
            return HookOutcome(status="failed", error=error, **common)
        trusted = trust_workspace or spec.source not in WORKSPACE_SOURCES
        parsed, message = parse_answer(event, result.stdout, trusted)
        if parsed is None:
            return HookOutcome(status="failed", error=message, **common)
        return HookOutcome(status="completed", error=message, answer=parsed, **common)

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        event = outcomes[0].spec.hook_name if outcomes else ""
        answers = [o.answer for o in outcomes if o.status == "completed" and o.answer]
        # A failure blocks where the user's sandboxrun is fail-closed or the entry says
        # `failClosed: true`, on the events that can be blocked.
        failures = [
            f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}"
            for o in outcomes
            if o.status != "completed" and (fail_closed or o.spec.fail_closed)
        ]
        blockable = event in PERMISSION_EVENTS or event == "beforeSubmitPrompt"
        if not blockable:
            failures = [f for f in failures if fail_closed]
        decision: str | None = None
        for a in answers:
            d = a.get("permission")
            if d in _STRICTNESS and (decision is None or _STRICTNESS[d] > _STRICTNESS[decision]):
                decision = d
        if failures and event in PERMISSION_EVENTS:
            decision = "deny"
        deciders = [a for a in answers if decision and a.get("permission") == decision]
        deciders += [a for a in answers if a.get("continue") is False and a not in deciders]
        proceed = all(a.get("continue") is not False for a in answers)
        if failures and event == "beforeSubmitPrompt":
            proceed = False
        env: dict[str, str] = {}
        updated = None
        for a in answers:
            env.update(a.get("env") or {})
            if a.get("updated_input") is not None:
                updated = a["updated_input"]
        answer = _answer(
            blocked=decision == "deny" or not proceed or bool(failures and blockable),
            permission=decision,
            user_message=_join([*(a.get("user_message", "") for a in deciders), *failures]),
            agent_message=_join([*(a.get("agent_message", "") for a in deciders), *failures]),
            followup_message=_join([a.get("followup_message", "") for a in answers]),
            additional_context=_join([a.get("additional_context", "") for a in answers]),
            env=env,
            updated_input=updated,
        )
        answer["continue"] = proceed
        return answer


CURSOR = CursorDialect()


def check_input(size: int, cap: int) -> None:
    """An event over the input cap is an error: a hook shown part of a file could pass
    what the rest holds."""
    if size > cap:
        raise ConfigError(
            f"event is {size} bytes, over the input cap of {cap} bytes (a file's content?):"
            " not cut, not run"
        )


def _under(path: str, root: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


def _entry(entry: Any, event: str, template: HookSpec) -> HookSpec | str:
    """One `{command, matcher?, timeout?, failClosed?, loop_limit?, type?}` entry."""
    if not isinstance(entry, dict):
        return "must be an object with a command"
    kind = entry.get("type", "command")
    if kind == "prompt":
        prompt = entry.get("prompt")
        label = prompt[:200] if isinstance(prompt, str) and unicode_ok(prompt) else "prompt"
        return replace(template, hook_name=event, name=f"prompt: {label}", kind="prompt")
    if kind != "command":
        return f'type must be "command" or "prompt", not {brief(kind)}'
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        return "has no command string"
    if not unicode_ok(command) or "\0" in command:
        return "command is not valid Unicode text (a lone surrogate or a NUL)"
    spec = replace(template, hook_name=event, name=command, argv=("/bin/sh", "-c", command))
    matcher = entry.get("matcher")
    if matcher is not None:
        if not isinstance(matcher, str) or not unicode_ok(matcher):
            return "matcher must be a string (a regular expression)"
        if event in MATCH_FIELDS and matcher not in ("", "*"):
            workspace = template.source in WORKSPACE_SOURCES
            if workspace and len(matcher) > MAX_WORKSPACE_PATTERN:
                return f"matcher longer than {MAX_WORKSPACE_PATTERN} characters (a workspace one)"
            error = _compile(matcher)[1]
            if error is not None and workspace:
                return f"matcher {matcher!r} is not a regular expression: {error}"
        spec = replace(spec, matcher=matcher)
    if entry.get("timeout") is not None:  # seconds, as Cursor counts them
        seconds = timeout_seconds(entry["timeout"])
        if isinstance(seconds, str):
            return seconds
        spec = replace(spec, timeout=seconds)
    closed = entry.get("failClosed")
    if closed is not None and not isinstance(closed, bool):
        return f"failClosed must be true or false, not {brief(closed)}"
    spec = replace(spec, fail_closed=closed is True)
    if event in FOLLOWUP_EVENTS:
        limit = entry.get("loop_limit", DEFAULT_LOOP_LIMIT)  # null: no limit
        whole = isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0
        if limit is not None and not whole:
            return f"loop_limit must be a whole number or null, not {brief(limit)}"
        spec = replace(spec, loop_limit=limit)
    return spec


def _answer(**fields: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "blocked": False,
        "permission": None,
        "user_message": "",
        "agent_message": "",
        "continue": True,
        "followup_message": "",
        "additional_context": "",
        "env": {},
        "updated_input": None,
    }
    answer.update(fields)
    return answer


class _Rejected(ValueError):
    """The hook's JSON breaks the schema: a failed hook, no decision."""


def workspace_json(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """An untrusted hook's JSON without what it may not decide, and what was dropped."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in data.items():
        if key == "permission" and value == "allow":
            dropped.insert(0, "its allow")
        elif key in _HARMLESS:
            kept[key] = value
        elif value is not None:
            dropped.append(key)
    return kept, dropped


def dropped_note(dropped: Sequence[str]) -> str:
    names = [n[:40] for n in dropped[:8]]
    if len(dropped) > 8:
        names.append(f"{len(dropped) - 8} more")
    return (
        f"workspace hook: {', '.join(names)} ignored (untrusted; "
        "trust_workspace_decisions = true in the user's config honours it)"
    )


def parse_answer(
    event: str, stdout: bytes, trusted: bool = True
) -> tuple[dict[str, Any] | None, str | None]:
    """Exit-0 stdout -> (answer, note or None), or (None, why it failed). Empty stdout
    is no decision; anything that is not one JSON object is a failed hook
    (failClosed blocks on it)."""
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return _answer(), None
    try:
        data: Any = clean_answer(json.loads(text))
    except (ValueError, RecursionError):
        return None, f"{event} hook printed no JSON object: {text[:80]!r}"
    if not isinstance(data, dict):
        return None, f"{event} hook printed JSON that is not an object"
    dropped: list[str] = []
    if not trusted:
        data, dropped = workspace_json(data)
    note = dropped_note(dropped) if dropped else None
    try:
        return _structured(event, data), note
    except _Rejected as exc:
        return None, f"{event} hook answer rejected: {exc}"


def _str(data: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = data.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise _Rejected(f"{key} must be a string")
            return value
    return ""


def _structured(event: str, data: Mapping[str, Any]) -> dict[str, Any]:
    answer = _answer(
        user_message=_str(data, "user_message", "userMessage"),
        agent_message=_str(data, "agent_message", "agentMessage"),
    )
    permission = data.get("permission")
    if permission is not None:
        allowed = ("allow", "deny", "ask") if event in ASK_EVENTS else ("allow", "deny")
        if permission not in _STRICTNESS:
            listed = ", ".join(allowed)
            raise _Rejected(f"permission must be one of {listed}, not {brief(permission)}")
        if event in PERMISSION_EVENTS:
            # "ask" where the docs list only allow|deny: read as ask (stricter than allow,
            # unconfirmed what Cursor does).
            answer["permission"] = permission
            answer["blocked"] = permission == "deny"
    proceed = data.get("continue")
    if proceed is not None:
        if not isinstance(proceed, bool):
            raise _Rejected("continue must be true or false")
        if event == "beforeSubmitPrompt":
            answer["continue"] = proceed
            answer["blocked"] = answer["blocked"] or not proceed
    if event in FOLLOWUP_EVENTS:
        answer["followup_message"] = _str(data, "followup_message")
    if event in CONTEXT_EVENTS:
        answer["additional_context"] = _str(data, "additional_context")
    if event == "sessionStart" and data.get("env") is not None:
        env = data["env"]
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise _Rejected("env must be an object of strings")
        answer["env"] = dict(env)
    if event == "preToolUse" and data.get("updated_input") is not None:
        if not isinstance(data["updated_input"], dict):
            raise _Rejected("updated_input must be an object")
        answer["updated_input"] = data["updated_input"]
    return answer


def untrusted_stdout(stdout: bytes) -> tuple[bytes, str | None]:
    """A repository command's stdout as Cursor may see it (`exec --untrusted`): its
    JSON without an allow, input rewrites or env (`workspace_json`), the rest as it
    was. Not JSON: unchanged (Cursor reads no decision from it). Starts with `{` but
    unreadable here: dropped whole (what Cursor's parser would find there is unknown)."""
    text = stdout.decode("utf-8", "replace").strip()
    if not text.startswith("{"):
        return stdout, None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return b"", "stdout starts with '{' but is not a JSON object sandboxrun can read: dropped"
    kept, dropped = workspace_json(data)
    if not dropped:
        return stdout, None
    return json.dumps(kept, ensure_ascii=True).encode() + b"\n", dropped_note(dropped)


def _join(parts: Sequence[str]) -> str:
    return "\n".join(p for p in parts if p)
