"""Crush's (Charm) hook protocol: `hooks` in `crush.json`, one event, exit 2 and 49,
a JSON envelope. Pure functions over paths, bytes and dicts.

Confirmed in charmbracelet/crush at 37f36e93 (2026-08-21):

- `internal/config/load.go` (`lookupConfigs`, `loadFromConfigPaths`, `Load`,
  `normalizeHookEvent`, `ValidateHooks`), `config_unix.go`, `config.go` (`HookConfig`).
  Crush merges `/etc/crush/crush.json`, `~/.config/crush/crush.json` (and `crushrc`, a
  shell config), `~/.local/share/crush/crush.json`, then each project folder's
  `crush.json`, `.crush.json` (`crushrc`, `.crushrc`) from the git root down to the
  cwd, then the project's `.crush/crush.json`, with `go-jsons` (arrays append). So hook
  lists of every file add up; "project takes precedence" holds only for single
  values, and of the two names in one folder `.crush.json` wins those. sandboxrun reads
  the JSON files at the project root (never a shell config: named, not read). Files
  must be strict JSON (`json.Valid`); a bad file, an entry without `command`, a matcher
  that does not compile or a field of the wrong type stop Crush from starting: here
  such an entry is skipped with that reason. Event keys are normalised without case
  or underscores (`pre_tool_use` is `PreToolUse`); `PreToolUse` is the only event
  (`hooks.go`): other keys are never fired. Entry `{name, matcher, command, timeout}`,
  timeout in whole seconds, 0 or none meaning 30.
- `internal/hooks/runner.go`: matchers are Go regexps searched in the tool name (no
  matcher: every tool); matching hooks are deduplicated by command string, run in
  parallel, and aggregated in config order. Each runs through `shell.Run`, Crush's
  embedded `mvdan.cc/sh` interpreter, in the working directory; `internal/shell/
  dispatch.go` execs only a path-named file with a `#!` line (`scriptDispatchHandler`),
  runs other path-named files as shell source in-process. Inside the sandbox the
  command runs with `bash -c` (mvdan's dialect is bash's). Exit 2: deny, stderr the
  reason ("blocked by hook" if empty); exit 49 (`HaltExitCode`): deny and halt the
  turn; any other exit, a timeout, an abandoned hook: no opinion (non-blocking).
- `internal/hooks/input.go`: stdin `{event, session_id, cwd, tool_name, tool_input}`;
  env `CRUSH=1 AGENT=crush AI_AGENT=crush` (`shell.CrushEnvMarkers`), `CRUSH_EVENT`,
  `CRUSH_TOOL_NAME`, `CRUSH_SESSION_ID`, `CRUSH_CWD`, `CRUSH_PROJECT_DIR`, and
  `CRUSH_TOOL_INPUT_COMMAND` / `_FILE_PATH` from the tool input. Exit 0: stdout
  trimmed, a JSON object read by Go's `encoding/json` (field names matched without
  case; any field of the wrong type and the whole answer is no opinion): with
  `hookSpecificOutput` the Claude Code form (`permissionDecision`, `...Reason`,
  `updatedInput`, `additionalContext`), else `{version, decision allow|deny, halt,
  reason, context (string or list of strings), updated_input (object, or a string
  holding one)}`.
- `internal/hooks/hooks.go` (`aggregate`): deny wins over allow over none; halt is
  sticky; deny reasons (and halting hooks' reasons) and contexts are joined by
  newlines; `updated_input` patches shallow-merge in order (a patch that is not an
  object is ignored). `allow` skips Crush's permission prompt.

Untrusted (a project file, `exec --untrusted`), unless `trust_workspace_decisions`:
a repository's hook may deny, halt and add context, but its `allow` is no decision and
its `updated_input` is dropped, each named. There is no admin switch over repository
hooks in Crush: nothing here promises one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._sandbox.mounts import transcript_file
from ..._types import Discovery, ExecResult, HookOutcome, HookSpec
from ..base import (
    AgentReply,
    block_on_stderr,
    caller_folder,
    clean_answer,
    decides,
    dropped_note,
    event_bytes,
    failure_on_stderr,
    filter_json_stdout,
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
    own_project_var,
    same_input,
    same_reader,
    sandbox_ending,
    shell_command,
    stderr_unchanged,
    stderr_unless_blocking,
)
from ..patterns import search
from . import config

HOOK_NAMES = ("PreToolUse",)
HALT_EXIT = 49  # `hooks.HaltExitCode`
# The envelope's fields (Go matches JSON names without case) and their JSON types; a
# value of another type fails the whole unmarshal: no opinion.
_ENVELOPE = {"version": int, "decision": str, "halt": bool, "reason": str}
_CLAUDE = {"permissiondecision": str, "permissiondecisionreason": str, "additionalcontext": str}
_MAX_ENV_VALUE = 64 << 10  # characters of a tool-input variable; a longer one is left out


def _folded(data: Mapping[str, Any]) -> dict[str, Any]:
    """Keys lower-cased, the later of two spellings winning (Go's `encoding/json`)."""
    return {str(k).lower(): v for k, v in data.items()}


def _typed(data: Mapping[str, Any], types: Mapping[str, type]) -> bool:
    """Whether every present field has its Go type (null is the zero value: fine)."""
    for key, kind in types.items():
        value = data.get(key)
        if value is None:
            continue
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            return False
        if not isinstance(value, kind):
            return False
    return True


def _context(value: Any) -> str:
    """`parseContext`: a string, or a list of strings joined (empty ones dropped)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(v for v in value if v)
    return ""


def _patch(value: Any) -> dict[str, Any] | None:
    """`rawToString` then `shallowMerge`'s check: an object, or a string holding one."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def read_answer(stdout: bytes) -> dict[str, Any]:
    """`parseStdout`: one hook's exit-0 stdout as {decision, halt, reason, context,
    updated_input}; no opinion when it is not a JSON object of the right types."""
    none: dict[str, Any] = {"decision": None, "halt": False, "reason": "", "context": ""}
    text = stdout.decode("utf-8", "replace").strip()
    try:
        raw = json.loads(text) if text else None
    except (ValueError, RecursionError):
        raw = None
    if not isinstance(raw, dict):
        return none
    raw = clean_answer(raw)
    if "hookSpecificOutput" in raw:  # the Claude Code form (an exact key: a map lookup)
        hso = raw["hookSpecificOutput"]
        if hso is None:
            return none
        if not isinstance(hso, dict) or not _typed(fields := _folded(hso), _CLAUDE):
            return none
        return {
            "decision": _decision(fields.get("permissiondecision")),
            "halt": False,
            "reason": fields.get("permissiondecisionreason") or "",
            "context": fields.get("additionalcontext") or "",
            "updated_input": _patch(fields.get("updatedinput")),
        }
    fields = _folded(raw)
    if not _typed(fields, _ENVELOPE):
        return none
    return {
        "decision": _decision(fields.get("decision")),
        "halt": fields.get("halt") is True,
        "reason": fields.get("reason") or "",
        "context": _context(fields.get("context")),
        "updated_input": _patch(fields.get("updated_input")),
    }


def _decision(value: Any) -> str | None:
    text = value.lower() if isinstance(value, str) else ""
    return text if text in ("allow", "deny") else None


def _untrusted_rule(data: dict[str, Any]) -> tuple[dict[str, Any], list[str], str]:
    """What a repository's hook may say: anything but an `allow` and an input rewrite
    (in either form, under any spelling Go would read)."""
    kept, dropped = _drop(data, "decision", "updated_input")
    hso = kept.get("hookSpecificOutput")
    if isinstance(hso, dict):
        inner, more = _drop(hso, "permissiondecision", "updatedinput")
        kept["hookSpecificOutput"] = inner
        dropped += [f"hookSpecificOutput.{k}" for k in more]
    return kept, dropped, f"{dropped_note(dropped)} (untrusted command)" if dropped else ""


def _drop(data: Mapping[str, Any], decision: str, rewrite: str) -> tuple[dict[str, Any], list[str]]:
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in data.items():
        low = key.lower()
        allow = low == decision and isinstance(value, str) and value.lower() == "allow"
        if allow or low == rewrite:
            dropped.append(key)
        else:
            kept[key] = value
    return kept, dropped


def untrusted_stdout(stdout: bytes) -> tuple[bytes, str | None]:
    return filter_json_stdout(stdout, _untrusted_rule)


@dataclass(frozen=True, slots=True)
class CrushDialect:
    agent: str = "crush"
    user_dir: str = config.USER_DIR  # relative to $HOME; user hooks go in its `hooks/`
    project_dir_var: str = "CRUSH_PROJECT_DIR"
    default_timeout: float = float(config.DEFAULT_TIMEOUT)
    hook_names: tuple[str, ...] = HOOK_NAMES
    shell: tuple[str, ...] = ("bash", "-c")  # mvdan.cc/sh speaks bash

    may_add_to_stderr = staticmethod(
        stderr_unless_blocking(2, HALT_EXIT)
    )  # (`Dialect.may_add_to_stderr`)
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
    env_file_dir = None
    next_input = staticmethod(same_input)
    pinned_project = staticmethod(no_pinned_project)
    default_loop_limit = staticmethod(no_loop_limit)
    message_field = None
    transcript_format = None
    name_field = "event"  # (`event_name`)

    def hook_places(self, home: str) -> list[str]:
        """Never ~/.config/crush itself: its API keys."""
        return [os.path.join(home, self.user_dir, "hooks"), "/etc/crush/hooks"]

    def transcript(self, event: Mapping[str, Any], home: str) -> str | None:
        return transcript_file(event, home, self.user_dir)

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The event's name: Crush's payload names it `event` (`hooks.Payload`)."""
        return named_event(event, "event")

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        cwd = event.get("cwd")
        return [cwd] if isinstance(cwd, str) and os.path.isabs(cwd) else []

    def event_env(
        self, event: Mapping[str, Any], root: str, transcript: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, str]:  # fmt: skip
        """The variables Crush sets (`BuildEnv`), the project being the mounted root and
        the cwd the event's when it lies inside it. Only strings without NUL."""
        cwd = event.get("cwd")
        inside = isinstance(cwd, str) and (cwd == root or cwd.startswith(root.rstrip("/") + "/"))
        env = {
            "CRUSH": "1", "AGENT": "crush", "AI_AGENT": "crush",
            "CRUSH_EVENT": config.canonical(_text(event.get("event")) or "PreToolUse"),
            "CRUSH_TOOL_NAME": _text(event.get("tool_name")),
            "CRUSH_SESSION_ID": _text(event.get("session_id")),
            "CRUSH_CWD": cwd if inside and isinstance(cwd, str) else root,
            self.project_dir_var: root,
        }  # fmt: skip
        tool_input = event.get("tool_input")
        if isinstance(tool_input, dict):
            for key, var in (("command", "CRUSH_TOOL_INPUT_COMMAND"),
                             ("file_path", "CRUSH_TOOL_INPUT_FILE_PATH")):  # fmt: skip
                if key in tool_input:
                    value = tool_input[key]
                    text = value if isinstance(value, str) else json.dumps(value)
                    if "\0" not in text and len(text) <= _MAX_ENV_VALUE:
                        env[var] = text
        return {k: v for k, v in env.items() if "\0" not in v}

    def discover(
        self, hook_name: str | None, workspaces: Sequence[str], home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:  # fmt: skip
        return config.discover(self.hook_names, hook_name, workspaces, home, explicit)

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        """The matcher searched in `tool_name` (`MatchString`: unanchored); none or ""
        matches every tool. A workspace pattern that cannot be evaluated raises
        `PatternError` (`patterns.search`)."""
        if not spec.matcher:
            return True
        name = event.get("tool_name")
        found = search(spec.matcher, name if isinstance(name, str) else "", spec)
        return bool(found)  # None: a user's invalid one, which discovery skipped already

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """`BuildPayload`: exactly the five fields, `tool_input` {} when not an object."""
        tool_input = event.get("tool_input")
        cwd = event.get("cwd")
        root = workspaces[0] if workspaces else ""
        inside = isinstance(cwd, str) and (cwd == root or cwd.startswith(root.rstrip("/") + "/"))
        return event_bytes({
            "event": hook_name,
            "session_id": _text(event.get("session_id")),
            "cwd": cwd if inside else root,
            "tool_name": _text(event.get("tool_name")),
            "tool_input": tool_input if isinstance(tool_input, dict) else {},
        })  # fmt: skip

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        common = outcome_fields(spec, result)
        event = spec.hook_name
        ended = sandbox_ending(result, timeout)
        if ended:  # Crush: a timeout or an abandoned hook is no opinion
            return HookOutcome(status=ended[0], error=f"{event} hook {ended[1]}", **common)
        reason = common["stderr"].strip()
        if result.exit_code == 2:
            answer = _answer("deny", reason=reason or "blocked by hook")
            return HookOutcome(status="completed", answer=answer, **common)
        if result.exit_code == HALT_EXIT:
            answer = _answer("deny", halt=True, reason=reason or "turn halted by hook")
            return HookOutcome(status="completed", answer=answer, **common)
        if result.exit_code != 0:  # non-blocking: no opinion
            first = next((ln.strip() for ln in reason.splitlines() if ln.strip()), "")
            error = first or f"{event} hook exited with code {result.exit_code}"
            return HookOutcome(status="failed", error=error, **common)
        read = read_answer(result.stdout)
        dropped: list[str] = []
        if not decides(spec.source, trust_workspace):
            if read["decision"] == "allow":
                read["decision"] = None
                dropped.append("decision allow")
            if read.get("updated_input") is not None:
                read["updated_input"] = None
                dropped.append("updated_input")
        error = dropped_note(dropped) if dropped else None
        return HookOutcome(status="completed", error=error, answer=_answer(**read), **common)

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """`aggregate`, over the answers in configuration order; with `fail_closed`, a
        hook that did not complete denies, naming itself."""
        decision: str | None = None
        halt = False
        reasons: list[str] = []
        contexts: list[str] = []
        patch: dict[str, Any] | None = None
        for o in outcomes:
            a = o.answer if o.status == "completed" and o.answer else None
            if a is None:
                if fail_closed:
                    decision = "deny"
                    reasons.append(f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}")
                continue
            if a["decision"] == "deny":
                decision = "deny"
                reasons += [a["reason"]] if a["reason"] else []
            elif a["decision"] == "allow" and decision != "deny":
                decision = "allow"
            if a["halt"]:
                halt = True
                if a["reason"] and a["decision"] != "deny":
                    reasons.append(a["reason"])
            contexts += [a["context"]] if a["context"] else []
            if a["updated_input"] is not None:  # patches of patches: the same top keys
                patch = {**(patch or {}), **a["updated_input"]}
        answer = _answer(decision, halt, "\n".join(reasons), "\n".join(contexts), patch)
        return {"blocked": decision == "deny" or halt, **answer}

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        return {"blocked": True, **_answer("deny", reason=reason)}

    sequential = staticmethod(never_sequential)  # an event's hooks all start at once
    hook_dir_env = staticmethod(no_hook_dir)

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply:
        """A halt is exit 49, a deny exit 2, each with the reason on stderr; anything
        else exit 0 with the envelope (`allow`, which skips Crush's permission prompt,
        comes only from a user's hook: `interpret` drops a repository's), or nothing."""
        if answer.get("halt"):
            return block_on_stderr(answer.get("reason") or "turn halted by hook", notes, HALT_EXIT)
        if answer.get("blocked") or answer.get("decision") == "deny":
            return block_on_stderr(answer.get("reason") or "blocked by hook", notes)
        fields = ("decision", "context", "updated_input")
        document = {k: answer[k] for k in fields if answer.get(k)}
        return json_line({"version": 1, **document}) if document else b"", lines(notes), 0

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """Crush reads exit 2 as a deny, 49 as a halt and any other non-zero exit as a
        non-blocking error (no opinion: `runOne`'s default case). So our own failure is
        exit 1, nothing on stdout; under `--fail-closed` exit 2 with the reason on
        stderr: a deny."""
        return failure_on_stderr(reason, fail_closed)

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        return untrusted_stdout(stdout)


def _answer(
    decision: str | None = None, halt: bool = False, reason: str = "", context: str = "",
    updated_input: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Crush's envelope (version 1)."""
    return {"version": 1, "decision": decision, "halt": halt, "reason": reason,
            "context": context, "updated_input": updated_input}  # fmt: skip


def _text(value: Any) -> str:
    return value if isinstance(value, str) and "\0" not in value else ""


CRUSH = CrushDialect()
