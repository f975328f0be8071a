#!/bin/bash
# Block writing JavaScript (.js, .jsx, .mjs, .cjs) into a TypeScript project: one whose
# tsconfig.json sits in the file's folder or any folder above it up to the workspace root.
# Tool configs (*.config.js, e.g. eslint.config.js) stay allowed.
# Cline: PreToolUse on write_to_file / replace_in_file (the VS Code extension), editor /
# apply_patch (the CLI); Claude Code: PreToolUse with matcher Write|Edit|MultiEdit. bash + jq.
set -euo pipefail
event=$(cat)
q() { jq -r "$1 // empty" <<<"$event"; }

if [ -n "$(q .hook_event_name)" ]; then  # Claude Code / Qoder
  claude=1
  path=$(q '.tool_input.file_path // .tool_input.notebook_path')
  root=${CLAUDE_PROJECT_DIR:-$(q .cwd)}
else                                     # Cline / Careti
  claude=0
  case "$(q '.tool_call.name // .preToolUse.toolName')" in
    write_to_file|replace_in_file) path=$(q .preToolUse.parameters.path) ;;
    editor) path=$(q .tool_call.input.path) ;;
    # a patch names its files itself: every file it adds or changes
    apply_patch) path=$(q .tool_call.input.input | sed -n 's/^\*\*\* \(Add\|Update\) File: //p') ;;
    *) path="" ;;
  esac
  root=$(q '.workspaceRoots[0]')
fi
root=${root:-$PWD}

answer() {  # answer BLOCK-REASON (empty: allow)
  if [ "$claude" = 1 ]; then
    [ -z "$1" ] && exit 0
    jq -nc --arg r "$1" '{hookSpecificOutput: {hookEventName: "PreToolUse",
      permissionDecision: "deny", permissionDecisionReason: $r}}'
  elif [ -z "$1" ]; then
    echo '{"cancel": false}'
  else
    jq -nc --arg r "$1" '{cancel: true, errorMessage: $r}'
  fi
  exit 0
}

while IFS= read -r path; do  # one path a line (a patch may name several)
  case "$path" in
    *.config.js|*.config.mjs|*.config.cjs) continue ;;
    *.js|*.jsx|*.mjs|*.cjs) ;;
    *) continue ;;
  esac
  case "$path" in /*) file=$path ;; *) file=$root/$path ;; esac
  dir=$(dirname "$file")
  while :; do
    if [ -f "$dir/tsconfig.json" ]; then
      answer "Blocked by policy: $path is JavaScript, and this is a TypeScript project ($dir/tsconfig.json). Write TypeScript (.ts/.tsx) instead."
    fi
    case "$dir" in "$root"|/|.) break ;; esac
    dir=$(dirname "$dir")
  done
done <<<"$path"
answer ""
