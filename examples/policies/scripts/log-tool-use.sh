#!/bin/bash
# Log every tool use to $HOME/tool-use.jsonl, one JSON line each: time, agent, event,
# tool, and the command or file. Under sandboxrun, $HOME is thrown away after every run
# unless your own config gives this hook a state (`state = [...]`, see README.md beside
# the scripts): then it is a private folder that persists, per workspace.
# The log is rotated at 1 MiB (tool-use.jsonl.1). It never blocks; a log it cannot
# write is said on stderr. Cline: PostToolUse; Claude Code: PostToolUse. bash + jq.
set -uo pipefail
event=$(cat)
log=${HOME:-/tmp}/tool-use.jsonl
line=$(jq -c '{
    time: (now | todate),
    agent: (if .hook_event_name then "claude" else "cline" end),
    event: (.hook_event_name // .hookName),
    tool: (.tool_name // (.tool_result // .tool_call).name
           // .postToolUse.toolName // .preToolUse.toolName),
    what: (.tool_input.command // .tool_input.file_path
           // (.tool_result // .tool_call).input.commands
           // (.tool_result // .tool_call).input.path
           // (.postToolUse // .preToolUse).parameters.command
           // (.postToolUse // .preToolUse).parameters.path),
    workspace: (.cwd // .workspaceRoots[0])
  }' <<<"$event") || line=""
if [ -n "$line" ]; then
  if [ -f "$log" ] && [ "$(stat -c %s "$log")" -gt 1048576 ]; then
    mv -f "$log" "$log.1" || true
  fi
  printf '%s\n' "$line" >>"$log" || echo "log-tool-use: cannot write $log" >&2
fi
if [ -z "$(jq -r '.hook_event_name // empty' <<<"$event")" ]; then
  echo '{"cancel": false}'
fi
exit 0
