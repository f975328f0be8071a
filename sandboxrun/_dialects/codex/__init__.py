"""OpenAI Codex CLI hooks: Claude-shaped, with Codex's own files, shell, timeouts and
its strict output schema. A row of the Claude table (`CODEX`) plus the three things the
row cannot say: where the hooks are (`discover`), what Codex ignores (`Schema.ignored`),
and what a repository's command may hand it (`Schema.untrusted`); with them, what `run
--answer agent` may hand it (`Schema.agent_answer`, `Schema.takes_stop`).

Confirmed in openai/codex's source (the commits are those the reading used):

- Levels, lowest precedence first, all run (`codex-rs/hooks/src/engine/discovery.rs`
  @0082977c): managed hooks of `requirements.toml` (`[hooks]`, with `managed_dir`), then
  each config layer: system `/etc/codex`, user `~/.codex` ($CODEX_HOME; sandboxrun reads
  `~/.codex`), project `<dir>/.codex` for each folder from the project root (`.git`) down
  to the session's cwd. In each layer both `hooks.json` and `[hooks]` in `config.toml`
  are read. `allow_managed_hooks_only = true` in requirements.toml keeps only managed
  hooks. `[hooks.state."<file>:<event>:<group>:<handler>"] enabled = false` in
  config.toml turns one hook off. Codex itself loads a project layer only once the user
  trusted the project, and every non-managed hook only once reviewed by hash (`/hooks`);
  sandboxrun lists them all, and runs the project's as untrusted.
- One file is all or nothing: Codex deserialises it with serde, so one handler of a wrong
  shape (an unknown `type`, a string `timeout`) makes it skip the whole file
  (`load_hooks_json`). Handlers: `command` (`commandWindows`, `timeout` in seconds,
  `async`, `statusMessage`, `additionalContextLimit`); `prompt`, `agent`, `mcp_tool`
  are not command hooks (`codex-rs/config/src/hook_config.rs`).
- Timeouts in seconds, default 600, at least 1 (`timeout_sec.unwrap_or(600).max(1)`);
  SessionEnd and Interrupt default to 1 s, at most 3 (`SESSION_END_DEFAULT_TIMEOUT_SEC`,
  `SESSION_END_MAX_TIMEOUT_SEC`, `events/session_end.rs`).
- Shell: `$SHELL -lc <command>`, `/bin/sh -lc` without $SHELL (and on remote
  environments) (`engine/command_runner.rs` @01746657). A dialect never reads the
  environment, and the user's $SHELL may not exist in the sandbox: `/bin/sh -lc` inside.
  Per-handler `env` there is the plugin's `PLUGIN_ROOT`/`PLUGIN_DATA` (discovery.rs);
  config files have no `env` key.
- Exit codes (`events/pre_tool_use.rs`): 0 reads stdout; 2 blocks with stderr as the
  reason, and only with a non-empty stderr (else the hook failed); any other exit, a
  timeout or no exit code: the hook failed and the action proceeds.
- Output: `serde(deny_unknown_fields)` on every wire struct (`codex-rs/hooks/src/schema.rs`
  @2219e3df): an unknown field, a wrong type or a value outside an enum makes Codex
  ignore the whole answer (`parse_json` returns None; the hook failed). Then
  `output_parser.rs` @0ea83813 rejects more: PreToolUse `allow` without `updatedInput`,
  `ask`, a deny without a reason; `continue:false`, `stopReason`, `suppressOutput` on
  PreToolUse and PermissionRequest; PermissionRequest `updatedInput`,
  `updatedPermissions`, `interrupt:true`. `OUTPUT_SCHEMA` below is the schema as data.
"""

from __future__ import annotations

from ..claude.dialect import ClaudeDialect
from .discovery import DEFAULT_TIMEOUT, HOOK_NAMES, SHORT_EVENTS, discover
from .schema import Schema

CODEX = ClaudeDialect(
    "codex", ".codex", ".codex", None, default_timeout=float(DEFAULT_TIMEOUT),
    hook_names=HOOK_NAMES, reader=discover, shell=("/bin/sh", "-lc"), strict=Schema(),
    transcripts="sessions", short_events=SHORT_EVENTS, transcript_format="codex",
)  # fmt: skip
