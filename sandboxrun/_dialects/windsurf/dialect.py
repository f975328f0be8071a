"""Windsurf Cascade's hook protocol (the Windsurf editor and its JetBrains plugin):
`hooks.json` at each level, 12 snake_case events with a `tool_info` envelope, and an
answer that is the exit code alone. Pure functions over paths, bytes and dicts.

Windsurf is closed source. Sources, and what each confirmed (checked 2026-11-25):
- docs.windsurf.com/windsurf/cascade/hooks (its English, Chinese and Japanese pages):
  the levels `/etc/windsurf/hooks.json` (macOS `/Library/Application
  Support/Windsurf/hooks.json`, Windows `C:\\ProgramData\\Windsurf\\hooks.json`),
  `~/.codeium/windsurf/hooks.json`, the workspace's `.windsurf/hooks.json`; "hooks
  from all three are merged ... all run in order: system -> user -> workspace"; the
  cloud dashboard (Enterprise) configures system-level hooks without a local file;
  the entry `{command, show_output}`; exit 2 blocks a pre-hook. The hooks "execute
  shell commands automatically with your user account's full permissions" (reference).
- docs.windsurf.com/windsurf/cascade/worktrees: `post_setup_worktree` "is executed
  inside the new worktree directory", `$ROOT_WORKSPACE_PATH` "points to the original
  workspace path"; worktrees live in `~/.windsurf/worktrees/<repo_name>/`.
- The official sample Windsurf-Samples/ai-attribution `.windsurf/hooks.json`
  (commit ced67a08): a top-level `"version": 1` beside `hooks`, a hook started in the
  repository (`REPO_DIR=$(pwd)`), `trajectory_id` and `tool_info.file_path` read
  from stdin.
- Only in the reference (shared/reference/agent-hooks-2026.md section 5, which read the
  hooks page in full; not seen again here, so unconfirmed by us): the JetBrains user
  file `~/.codeium/hooks.json`; `working_directory` (relative to the workspace root,
  `~` not expanded); the payload fields per event; stderr of an exit 2 shown to the
  agent; stdout never parsed (shown when `show_output`); transcripts in
  `~/.windsurf/transcripts/{trajectory_id}.jsonl` (0600).

Config (`config.discover`): `{"hooks": {"<event>": [{command, show_output?,
working_directory?}, ...]}}`; a `version` key is ignored (the sample's 1). Levels, in
Windsurf's order, every entry of every level run (nothing merged away): system, user
(`~/.codeium/windsurf`, then the JetBrains plugin's `~/.codeium/hooks.json`: which
of the two a given IDE reads is not documented, so both are read), workspace. The cloud
dashboard's hooks live on Windsurf's servers: sandboxrun cannot read them (`list` does
not show them; whatever they run, they run on the host). No matcher: every hook of an
event runs. No timeout is documented: sandboxrun's default (`DEFAULT_TIMEOUT`, capped
by `exec`'s) applies.

Working directory: the workspace root, or `working_directory` resolved against it
(an absolute one as given); it must lie in what is mounted, else the entry is listed,
not run. `post_setup_worktree` starts in the new worktree, which is the workspace
mounted; `ROOT_WORKSPACE_PATH` names the original one as a variable only (mounted when
it is the same folder, never otherwise: the hook copies from it on the host, which the
sandbox does not grant).

Answer (`interpret`): exit 0 proceeds. Exit 2 blocks a pre-hook (`pre_read_code`,
`pre_write_code`, `pre_run_command`, `pre_mcp_tool_use`, `pre_user_prompt`) and its
stderr is the reason the agent sees; on a post-hook it blocks nothing. Any other exit
proceeds (a failed hook: a block only under sandboxrun's own fail-closed, as for every
agent). Stdout is never read as an answer. A repository's hook (workspace level,
`exec --untrusted`) decides exactly as the user's: its only power is exit 2, a block,
which a repository may always have; it has nothing to approve or rewrite.

Transcripts: `post_cascade_response_with_transcript` names
`tool_info.transcript_path`; a regular file in `~/.windsurf/transcripts` is mounted
read-only, for the user's own hooks only (the transcript holds the whole conversation:
a repository's hook gets no such mount, `transcript_for_repository`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..._sandbox.mounts import transcript_file
from ..._types import Discovery, ExecResult, HookOutcome, HookSpec
from ..base import (
    SH,
    AgentReply,
    block_on_stderr,
    caller_folder,
    event_bytes,
    failure_on_stderr,
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
from . import config

HOOK_NAMES = (
    "pre_read_code", "post_read_code", "pre_write_code", "post_write_code",
    "pre_run_command", "post_run_command", "pre_mcp_tool_use", "post_mcp_tool_use",
    "pre_user_prompt", "post_cascade_response", "post_cascade_response_with_transcript",
    "post_setup_worktree",
)  # fmt: skip
PRE_EVENTS = frozenset(n for n in HOOK_NAMES if n.startswith("pre_"))
ROOT_VAR = "ROOT_WORKSPACE_PATH"


@dataclass(frozen=True, slots=True)
class WindsurfDialect:
    agent: str = "windsurf"
    user_dir: str = ".codeium/windsurf"  # relative to $HOME: its `hooks.json`
    jetbrains_dir: str = ".codeium"  # the JetBrains plugin's `hooks.json`
    project_dir: str = ".windsurf"  # relative to the workspace root
    system_dir: str = "/etc/windsurf"  # Linux/WSL; macOS and Windows paths differ
    transcripts_dir: str = ".windsurf/transcripts"  # relative to $HOME
    project_dir_var: str | None = None  # none documented (ROOT_WORKSPACE_PATH is not it)
    default_timeout: float = 30.0  # none documented: sandboxrun's own
    hook_names: tuple[str, ...] = HOOK_NAMES
    transcript_for_repository: bool = False  # a repository's hook gets no transcript
    name_field: str = "agent_action_name"  # the event's own name (`check --events`)

    may_add_to_stderr = staticmethod(stderr_unless_blocking(2))  # (`Dialect.may_add_to_stderr`)

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The event's name: `agent_action_name`."""
        return named_event(event, self.name_field)

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        """The new worktree of `post_setup_worktree` (the hook runs in it); no other
        event names the workspace (run_command's `cwd` is the command's, not the root)."""
        info = _info(event)
        path = info.get("worktree_path")
        if event.get("agent_action_name") == "post_setup_worktree" and _path(path):
            return [str(path)]
        return []

    def event_env(
        self, event: Mapping[str, Any], root: str, transcript: str | None,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, str]:  # fmt: skip
        """`ROOT_WORKSPACE_PATH` for `post_setup_worktree`: the event's
        `root_workspace_path`, else the agent's variable (`exec`), when it is an
        absolute printable path. A name only: nothing is mounted for it."""
        name = event.get("agent_action_name", "post_setup_worktree")  # `run`: the event alone
        if name != "post_setup_worktree":
            return {}
        value = _info(event).get("root_workspace_path")
        if not _path(value) and environ is not None:
            value = environ.get(ROOT_VAR)
        return {ROOT_VAR: str(value)} if _path(value) else {}

    def transcript(self, event: Mapping[str, Any], home: str) -> str | None:
        """`tool_info.transcript_path`, when it is a file in `~/.windsurf/transcripts`."""
        path = _info(event).get("transcript_path")
        parent, name = self.transcripts_dir.rsplit("/", 1)
        return transcript_file({"transcript_path": path}, home, parent, name)

    def discover(
        self, hook_name: str | None, workspaces: Sequence[str], home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:  # fmt: skip
        return config.discover(self, hook_name, workspaces, home, explicit)

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        return True  # Windsurf has no matcher: every hook of the event runs

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event with the common fields filled in: `agent_action_name` (the event),
        `trajectory_id`, `execution_id`, an ISO `timestamp`, and `tool_info` ({} when
        the event has none)."""
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        base = {"agent_action_name": hook_name, "trajectory_id": event.get("trajectory_id", ""),
                "execution_id": event.get("execution_id", ""),
                "timestamp": event.get("timestamp") or now,
                "tool_info": event.get("tool_info") if isinstance(event.get("tool_info"), dict)
                else {}}  # fmt: skip
        return event_bytes({**base, **{k: v for k, v in event.items() if k not in base}})

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        """Exit codes only (module docstring); the same for every level."""
        common = outcome_fields(spec, result)
        event = spec.hook_name
        ended = sandbox_ending(result, timeout)
        if ended:
            return HookOutcome(status=ended[0], error=f"{event} hook {ended[1]}", **common)
        stderr = common["stderr"].strip()
        if result.exit_code == 2 and event in PRE_EVENTS:
            reason = stderr or f"blocked by hook {spec.name} (exit 2)"
            return HookOutcome(status="completed", answer=_answer(True, reason), **common)
        if result.exit_code == 2:
            note = f"{event} hook exited 2: Windsurf blocks nothing on {event}"
            return HookOutcome(status="completed", error=note, answer=_answer(), **common)
        if result.exit_code != 0:
            first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
            error = first or f"{event} hook exited with code {result.exit_code}"
            return HookOutcome(status="failed", error=error, **common)
        return HookOutcome(status="completed", answer=_answer(), **common)

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """Any block blocks, its reasons joined in configuration order; under
        `fail_closed` a hook that did not complete blocks a pre-hook event too."""
        event = outcomes[0].spec.hook_name if outcomes else ""
        reasons = [o.answer["reason"] for o in outcomes
                   if o.status == "completed" and o.answer and o.answer.get("blocked")]  # fmt: skip
        if fail_closed and event in PRE_EVENTS:
            reasons += [f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}"
                        for o in outcomes if o.status != "completed"]  # fmt: skip
        return _answer(bool(reasons), "\n".join(reasons))

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        return _answer(True, reason)

    sequential = staticmethod(never_sequential)  # an event's hooks all start at once
    hook_dir_env = staticmethod(no_hook_dir)
    roots_in_event = False
    shell = SH
    project_vars = property(own_project_var)
    exec_place = staticmethod(caller_folder)
    exec_command = shell_command
    exec_plugin = staticmethod(no_plugin)
    agent_deadline = staticmethod(no_deadline)
    max_input = None
    failure_dialect = own_failure
    untrusted_stderr = staticmethod(stderr_unchanged)
    tool_fields = staticmethod(no_tool_fields)
    for_event = same_reader
    session_field = None
    env_file_dir = None
    next_input = staticmethod(same_input)
    pinned_project = staticmethod(no_pinned_project)
    default_loop_limit = staticmethod(no_loop_limit)
    message_field = None
    transcript_format = None

    def hook_places(self, home: str) -> list[str]:
        places = [os.path.join(home, d, "hooks") for d in (self.user_dir, self.jetbrains_dir)]
        return [*places, os.path.join(self.system_dir, "hooks")]

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply:
        """Exit codes only: a block is exit 2 with the reason on stderr, else exit 0 and
        nothing on stdout (Windsurf never reads it)."""
        if answer.get("blocked"):
            return block_on_stderr(answer.get("reason") or "blocked by a hook", notes)
        return b"", lines(notes), 0

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """Windsurf reads exit 2 as a block (pre-hooks) and any other exit as the action
        proceeding: our own failure is exit 1 with the reason on stderr (it proceeds,
        and the reason shows where Windsurf shows a hook's stderr); under fail-closed
        exit 2, a block with the reason the agent sees. Nothing on stdout (Windsurf
        never parses it; `show_output` would show it)."""
        return failure_on_stderr(reason, fail_closed)

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        return stdout, None  # stdout decides nothing in Windsurf: nothing to take away


WINDSURF = WindsurfDialect()


def _answer(blocked: bool = False, reason: str = "") -> dict[str, Any]:
    return {"blocked": blocked, "reason": reason}


def _info(event: Mapping[str, Any]) -> Mapping[str, Any]:
    info = event.get("tool_info")
    return info if isinstance(info, dict) else {}


def _path(value: Any) -> bool:
    """An absolute, printable path of sane length (the event's values are the agent's)."""
    return (
        isinstance(value, str) and value.startswith("/") and 1 < len(value) <= 4096
        and value.isprintable()
    )  # fmt: skip
