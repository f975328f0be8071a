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
sandboxrun (it keeps no session): the answer carries it for the agent, which sets it on
the later hooks' processes (reference 1.4), i.e. on the wrappers; `exec` hands none of
the agent's environment into the sandbox. Telling those variables from the rest of
Cursor's environment would need a per-session record keyed by an id the docs do not
tie across events (sessionStart's `session_id`, the others' `conversation_id`:
unconfirmed), so a sandboxed hook does not see them. A repository's `env` is dropped
(untrusted). Every root of a multi-root `workspace_roots` is mounted read-only
(`exec` leaves out one `_sandbox.mounts` refuses, naming it).

Payload: `beforeReadFile` and `beforeTabFileRead` carry the whole file in `content`.
An event over `max_input` bytes is an error (a block under fail-closed), never cut:
a scanner must never pass a file it was shown only the start of.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._sandbox.mounts import transcript_file
from ..._types import Discovery, ExecResult, HookOutcome, HookSpec
from ..base import (
    EVENT_FIELD,
    SH,
    AgentReply,
    ExecPlace,
    decides,
    event_bytes,
    failure_on_stderr,
    json_line,
    lines,
    named_event,
    never_sequential,
    no_deadline,
    no_hook_dir,
    no_plugin,
    no_tool_fields,
    outcome_fields,
    own_failure,
    own_project_var,
    same_input,
    same_reader,
    sandbox_ending,
    shell_command,
    stderr_is_shown,
    stderr_unchanged,
)
from ..patterns import search
from .answer import (
    DEFAULT_LOOP_LIMIT,
    FOLLOWUP_EVENTS,
    HOOK_NAMES,
    MATCH_FIELDS,
    PERMISSION_EVENTS,
    STRICTNESS,
    agent_document,
    answer_of,
    join,
    parse_answer,
    untrusted_stdout,
)
from .config import discover


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

    may_add_to_stderr = staticmethod(stderr_is_shown)  # (`Dialect.may_add_to_stderr`)
    roots_in_event = False
    shell = SH
    project_vars = property(own_project_var)
    exec_command = shell_command
    exec_plugin = staticmethod(no_plugin)
    agent_deadline = staticmethod(no_deadline)
    tool_fields = staticmethod(no_tool_fields)
    failure_dialect = own_failure
    untrusted_stderr = staticmethod(stderr_unchanged)
    for_event = same_reader
    transcript_for_repository = True
    session_field = None
    name_field = EVENT_FIELD
    env_file_dir = None
    next_input = staticmethod(same_input)
    message_field = None
    transcript_format = None

    def exec_place(self, event: Mapping[str, Any], cwd: str, home: str, given: bool) -> ExecPlace:
        """Cursor starts user hooks in ~/.cursor: the event names the project, the root
        the hook starts in if it is one of them (a multi-root workspace), and the other
        roots beside it. A user hook starts in ~/.cursor (`./hooks/x.sh`), an enterprise
        one in /etc/cursor: there, with only its hooks folder mounted (the rest of
        ~/.cursor holds the agent's credentials)."""
        roots = self.event_workspaces(event)
        found = next((r for r in roots if Path(cwd).is_relative_to(r)), roots[0]) if roots else cwd
        hooks = None
        for agent_dir in (os.path.join(home, self.user_dir), self.enterprise_dir):
            if os.path.realpath(cwd) == os.path.realpath(agent_dir):
                hooks = os.path.join(agent_dir, "hooks")
        return ExecPlace(found, cwd, tuple(roots), hooks)

    def hook_places(self, home: str) -> list[str]:
        return [os.path.join(home, self.user_dir, "hooks"), self.enterprise_dir]

    def transcript(self, event: Mapping[str, Any], home: str) -> str | None:
        return transcript_file(event, home, self.user_dir)

    def pinned_project(self, folder: str, home: str) -> str | None:
        from ..claude.settings import project_root  # (only when asked: cold runs)

        return project_root(folder, home, self.project_dir)

    def default_loop_limit(self, event: str) -> int | None:
        return DEFAULT_LOOP_LIMIT if event in FOLLOWUP_EVENTS else None

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The event's name: `hook_event_name`."""
        return named_event(event)

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        roots = event.get("workspace_roots")
        return [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []

    def event_env(
        self, event: Mapping[str, Any], root: str, transcript: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, str]:  # fmt: skip
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
            **answer_of(),
            "blocked": True,
            "permission": "deny",
            "continue": False,
            "user_message": reason,
            "agent_message": reason,
        }

    sequential = staticmethod(never_sequential)  # an event's hooks all start at once
    hook_dir_env = staticmethod(no_hook_dir)

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply:
        """The combined answer as one hook's JSON (`answer.agent_document`: a block is
        `permission: "deny"`), exit 0; the notes on stderr."""
        document = agent_document(event, answer)
        return json_line(document) if document else b"", lines(notes), 0

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """Cursor reads exit 2 as a block and any other non-zero exit as a failed hook,
        which it lets through unless the entry has `failClosed: true`. So our own
        failure is exit 1, a hook failure in Cursor's own terms: the action proceeds,
        except where the user set `failClosed` on that entry, which asked for exactly
        that. Under `--fail-closed`, exit 2 with the reason on stderr: a block."""
        return failure_on_stderr(reason, fail_closed)

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        return untrusted_stdout(stdout)  # the event (stdin) changes nothing of Cursor's rule

    # -- discovery ---------------------------------------------------------------

    def discover(
        self,
        hook_name: str | None,
        workspaces: Sequence[str],
        home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:
        """Every level's hooks (`config`): enterprise, user, project."""
        return discover(self, hook_name, workspaces, home, explicit)

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """The matcher, searched (an unanchored regex) in the event's field; a stop or
        subagentStop hook past its `loop_limit` does not run (Cursor no longer follows
        it up; whether it still starts the hook is unconfirmed: it decides nothing). A
        workspace pattern that cannot be evaluated raises `PatternError`."""
        if spec.hook_name in FOLLOWUP_EVENTS and spec.loop_limit is not None:
            count = event.get("loop_count")
            if isinstance(count, int) and not isinstance(count, bool) and count >= spec.loop_limit:
                return False
        field = MATCH_FIELDS.get(spec.hook_name)
        if field is None or spec.matcher in (None, "", "*"):
            return True
        value = event.get(field)
        text = value if isinstance(value, str) else ""
        found = search(spec.matcher, text, spec)
        return True if found is None else found  # a user's broken guard runs too often

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
                return HookOutcome(status="completed", error=note, answer=answer_of(), **common)
            text = stderr.strip() or f"blocked by hook {spec.name} (exit 2)"
            answer = answer_of(blocked=True, agent_message=text, user_message=text)
            if event == "beforeSubmitPrompt":
                answer["continue"] = False
            else:
                answer["permission"] = "deny"
            return HookOutcome(status="completed", answer=answer, **common)
        if result.exit_code != 0:
            first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
            error = first or f"{event} hook exited with code {result.exit_code}"
            return HookOutcome(status="failed", error=error, **common)
        trusted = decides(spec.source, trust_workspace)
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
            if d in STRICTNESS and (decision is None or STRICTNESS[d] > STRICTNESS[decision]):
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
        answer = answer_of(
            blocked=decision == "deny" or not proceed or bool(failures and blockable),
            permission=decision,
            user_message=join([*(a.get("user_message", "") for a in deciders), *failures]),
            agent_message=join([*(a.get("agent_message", "") for a in deciders), *failures]),
            followup_message=join([a.get("followup_message", "") for a in answers]),
            additional_context=join([a.get("additional_context", "") for a in answers]),
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
