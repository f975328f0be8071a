"""The other Claude-shaped agents: Claude Code's protocol with a table of their own.

Each is a `ClaudeDialect` (data, no code): where its hooks are, how it reads a
`timeout`, the variables naming the project, its event names, the words its top-level
`decision` takes, and the input's session and roots fields. Every level the agent reads
is listed (the trusted ones first), so `list` shows every hook that may run; a
repository's files (project, local) are untrusted as Claude Code's are. `install`
rewrites the same files (`install`'s `claudelike`).

What each table rests on (reference: shared/reference/agent-hooks-2026.md sections 7-9
and 12-14; "unconfirmed" where only a doc or a public repository says so):

- factory (Droid): docs.factory.ai/harness/hooks and /reference/hooks-reference.
  `hooks.json` per scope, the legacy `.factory/hooks/hooks.json`, and the `hooks` key of
  the same scope's `settings.json` only when its hooks.json is absent; the local
  settings file. Org-managed hooks come from Factory's servers: not read here.
  Timeouts in seconds. Unconfirmed: whether hooks.json is wrapped in `hooks` (public
  files are, e.g. comarch/git-byline@ae98612; the docs say "keyed by event name": both
  are read), and that droid 0.186 reads hooks.json at all (Factory-AI/factory#3 says
  only settings.json fires: reading both lists more, never less).
- qwen (Qwen Code): QwenLM/qwen-code packages/core/src/hooks/hook-timeout.ts@985988a
  (a command hook's timeout is in seconds, but a value of 1000 or more is still
  milliseconds, as every value was before (hookRunner.ts@0135061: ms, default 60000); a
  value that is not a positive number is ignored; the default is 60 s in the verified
  0.24.4, DEFAULT_COMMAND_HOOK_TIMEOUT_SECONDS), hookRunner.ts@0135061 (env
  GEMINI_PROJECT_DIR, CLAUDE_PROJECT_DIR, QWEN_PROJECT_DIR = the input's cwd; runs in
  the input's cwd; 0.24.4 adds getShellContextEnvVars: QWEN_CODE_SESSION_ID,
  _PROMPT_ID, _AGENT_ID, _MODEL, _MODEL_IDENTITY, and the host paths QWEN_CODE_PROJECT_DIR
  and QWEN_CODE_CLI, which are not set inside; tests/agents/test_qwen.py probes them),
  types.ts@01ed106 (the
  events; `enabled`/`disabled`/`notifications` are settings in the hooks table;
  `decision` takes ask/block/deny/approve/allow; hookSpecificOutput is a plain record,
  no hookEventName needed, as Qwen's own /review guard.sh relies on),
  hookRegistry.ts@24b30f6 (project hooks only in a trusted folder), packages/cli
  settings.ts (/etc/qwen-code/).
  Not modelled: `hooks.disabled` (names of hooks turned off), per-hook `failMode`.
- codebuddy: codebuddy.ai/docs/cli/hooks (Claude-compatible, the three settings
  files; CODEBUDDY_PROJECT_DIR and CLAUDE_PROJECT_DIR). Events beyond the 7 documented
  and CODEBUDDY_PLUGIN_ROOT (plugins are not read here) unconfirmed.
- iflow: platform.iflow.cn/en/cli/examples/hooks (user and project settings.json, 9
  events). Its system-level settings path and any project-dir variable are
  unconfirmed: none is read or set.
- devin: docs.devin.ai/cli/extensibility (`.devin/hooks.v1.json` without a `hooks`
  wrapper; `hooks` in `.devin/config.json`, `.devin/config.local.json` and the user's
  `~/.config/devin/config.json`; `.claude/` hooks are imported). Unconfirmed:
  DEVIN_PROJECT_DIR (used by the public probe Assert-Labs/hook-probe@1ab8749),
  the PostCompaction event (same probe), that the user's `~/.claude/settings.json` is
  imported too (read: it lists more). Its config files may hold comments: such a file
  is skipped with the reason, never silently.
- augment (Auggie CLI): docs.augmentcode.com/cli/hooks (managed /etc/augment, user,
  project, local settings.json; timeouts in ms, default 60000; input
  `conversation_id`, `workspace_roots`). Its environment variables are unconfirmed:
  none is set.
- trae (Trae IDE, ByteDance): docs.trae.cn/ide_automate-actions-with-hooks (the six
  events: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, Notification).
  Unconfirmed against the vendor's own reference (shared/reference/agent-hooks-2026.md
  section 15 and public repositories only): the files, `.trae/hooks.json` in the
  project and `~/.trae/hooks.json` (`~/.trae-cn/hooks.json` for Trae CN), each
  `{"version": 1, "hooks": {...}}` (lancedb/lance@4ed1063, learnwy/skills@8a044d2,
  kunchenguid/firstmate@23fb0ce: every public file has the `hooks` wrapper; read as
  Claude's, so a `hooks` that is no object is a file that could not be read, which
  fail-closed blocks, where reading it as the bare table would only warn);
  that Trae also runs Claude Code's `.claude/settings.json` hooks (a public design note,
  read with the user's and local Claude files as for Devin: more, never less);
  TRAE_PROJECT_DIR and CLAUDE_PROJECT_DIR (the hook reference as a public probe quotes
  it); timeouts in seconds (public files: 5, 10, 30); the answer, exit 2 with stderr or
  Claude's hookSpecificOutput with its hookEventName (gotocx/superpowers-trae@205a1ed's
  RunCommand guard). Not modelled: TRAE_ENV_FILE (SessionStart; sandboxrun's env file
  is CLAUDE_ENV_FILE's, `_sandbox.envfile`), a matcher group's `loop_limit` (Trae's own Stop
  follow-up cap, default 5: Trae enforces it, not sandboxrun), and whether Trae asks
  the user to enable a project's hooks (Settings > Hooks) before it runs them.
"""

from __future__ import annotations

from .dialect import TOKEN, ClaudeDialect
from .handler import Timeouts
from .settings import ConfigFile

# CodeBuddy, iFlow, Augment, Droid, Devin and Trae are closed source: whether they reject a
# hookSpecificOutput without its hookEventName, as Claude Code does, is unconfirmed. Read
# leniently (`named_output=False`): the strict reading would turn a guard's deny that such
# an agent may honour into a failed hook, so a sandboxed guard would block less than on
# the host (the one error we must not make); the lenient one at worst blocks more.
UNCONFIRMED_NAMING = False

FACTORY = ClaudeDialect(
    "factory", ".factory", ".factory", "FACTORY_PROJECT_DIR",
    hook_names=(
        "PreToolUse", "PostToolUse", "UserPromptSubmit", "Notification", "Stop",
        "SubagentStop", "PreCompact", "SessionStart", "SessionEnd",
    ),
    config_files=(
        ConfigFile("~/.factory/hooks.json", "user", "either"),
        ConfigFile("~/.factory/settings.json", "user", unless=("~/.factory/hooks.json",)),
        ConfigFile(".factory/hooks.json", "project", "either"),
        ConfigFile(".factory/hooks/hooks.json", "project", "either",
                   unless=(".factory/hooks.json",)),
        ConfigFile(".factory/settings.json", "project",
                   unless=(".factory/hooks.json", ".factory/hooks/hooks.json")),
        ConfigFile(".factory/settings.local.json", "local"),
    ),
    named_output=UNCONFIRMED_NAMING,
)  # fmt: skip

QWEN = ClaudeDialect(
    "qwen", ".qwen", ".qwen", "QWEN_PROJECT_DIR",
    hook_names=(
        "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
        "UserPromptSubmit", "UserPromptExpansion", "SessionStart", "Stop", "MessageDisplay",
        "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "SessionEnd",
        "SessionDelete", "PermissionRequest", "PermissionDenied", "StopFailure",
        "TodoCreated", "TodoCompleted", "InstructionsLoaded",
    ),
    config_files=(
        ConfigFile("/etc/qwen-code/system-defaults.json", "managed"),
        ConfigFile("/etc/qwen-code/settings.json", "managed"),
        ConfigFile("~/.qwen/settings.json", "user"),
        ConfigFile(".qwen/settings.json", "project"),
    ),
    # An entry without `timeout`: below Qwen's own 60 s (0.24.4), which Qwen enforces
    # (SIGTERM to the wrapper, SIGKILL 2 s later), as install's `--timeout` is below a
    # given one (max(t - 2, t / 2)): sandboxrun's answer, a block under fail-closed, is
    # in before Qwen ends the wrapper, which it reads as a non-blocking error.
    default_timeout=58.0,
    timeouts=Timeouts(ms_from=1000, lenient=True),
    extra_vars=("GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
    input_vars=(("QWEN_CODE_SESSION_ID", "session_id"), ("QWEN_CODE_PROMPT_ID", "prompt_id"),
                ("QWEN_CODE_AGENT_ID", "agent_id")),
    passed_vars=(("QWEN_CODE_MODEL", TOKEN), ("QWEN_CODE_MODEL_IDENTITY", TOKEN)),
    table_keys=frozenset({"enabled", "disabled", "notifications"}),
    decisions=(("approve", "allow"), ("allow", "allow"), ("ask", "ask"), ("block", "deny"),
               ("deny", "deny")),
    named_output=False,
)  # fmt: skip

CODEBUDDY = ClaudeDialect(
    "codebuddy", ".codebuddy", ".codebuddy", "CODEBUDDY_PROJECT_DIR",
    extra_vars=("CLAUDE_PROJECT_DIR",),
    named_output=UNCONFIRMED_NAMING,
)  # fmt: skip

IFLOW = ClaudeDialect(
    "iflow", ".iflow", ".iflow", "",
    hook_names=(
        "PreToolUse", "PostToolUse", "SetUpEnvironment", "Stop", "SubagentStop",
        "SessionStart", "SessionEnd", "UserPromptSubmit", "Notification",
    ),
    config_files=(
        ConfigFile("~/.iflow/settings.json", "user"),
        ConfigFile(".iflow/settings.json", "project"),
    ),
    named_output=UNCONFIRMED_NAMING,
)  # fmt: skip

DEVIN = ClaudeDialect(
    "devin", ".config/devin", ".devin", "DEVIN_PROJECT_DIR",
    hook_names=(
        "PreToolUse", "PostToolUse", "PermissionRequest", "UserPromptSubmit", "Stop",
        "SessionStart", "SessionEnd", "PostCompaction",
    ),
    config_files=(
        ConfigFile("~/.config/devin/config.json", "user"),
        ConfigFile("~/.claude/settings.json", "user"),
        ConfigFile(".devin/hooks.v1.json", "project", "events"),
        ConfigFile(".devin/config.json", "project"),
        ConfigFile(".devin/config.local.json", "local"),
        ConfigFile(".claude/settings.json", "project"),
        ConfigFile(".claude/settings.local.json", "local"),
    ),
    named_output=UNCONFIRMED_NAMING,
)  # fmt: skip

AUGMENT = ClaudeDialect(
    "augment", ".augment", ".augment", "",
    hook_names=("PreToolUse", "PostToolUse", "Stop", "SessionStart", "SessionEnd"),
    config_files=(
        ConfigFile("/etc/augment/settings.json", "managed"),
        ConfigFile("~/.augment/settings.json", "user"),
        ConfigFile(".augment/settings.json", "project"),
        ConfigFile(".augment/settings.local.json", "local"),
    ),
    timeouts=Timeouts(unit=0.001),
    session_field="conversation_id",
    roots_field="workspace_roots",
    named_output=UNCONFIRMED_NAMING,
)  # fmt: skip

TRAE = ClaudeDialect(
    "trae", ".trae", ".trae", "TRAE_PROJECT_DIR",
    hook_names=(
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
        "Notification",
    ),
    config_files=(
        ConfigFile("~/.trae/hooks.json", "user"),
        ConfigFile("~/.trae-cn/hooks.json", "user"),
        ConfigFile("~/.claude/settings.json", "user"),
        ConfigFile(".trae/hooks.json", "project"),
        ConfigFile(".claude/settings.json", "project"),
        ConfigFile(".claude/settings.local.json", "local"),
    ),
    extra_vars=("CLAUDE_PROJECT_DIR",),
    named_output=UNCONFIRMED_NAMING,
)  # fmt: skip

CLAUDE_LIKE = (FACTORY, QWEN, CODEBUDDY, IFLOW, DEVIN, AUGMENT, TRAE)
