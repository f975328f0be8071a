#!/bin/bash
# Add project context when a task starts: the project's name, stack and git branch, and
# PROJECT_CONTEXT.md from the workspace root if there is one (its first 8 KB).
# Cline: TaskStart (contextModification); Claude Code: SessionStart (additionalContext).
# bash + jq; git only if the image has it.
set -euo pipefail
event=$(cat)
q() { jq -r "$1 // empty" <<<"$event"; }
if [ -n "$(q .hook_event_name)" ]; then
  root=${CLAUDE_PROJECT_DIR:-$(q .cwd)}
else
  root=$(q '.workspaceRoots[0]')
fi
root=${root:-$PWD}

stack=()
[ -f "$root/tsconfig.json" ] && stack+=(TypeScript)
[ -f "$root/package.json" ] && stack+=(Node.js)
{ [ -f "$root/pyproject.toml" ] || [ -f "$root/setup.py" ]; } && stack+=(Python)
[ -f "$root/go.mod" ] && stack+=(Go)
[ -f "$root/Cargo.toml" ] && stack+=(Rust)
branch=$(git -c safe.directory="$root" -C "$root" symbolic-ref --short HEAD 2>/dev/null || true)

context="Project: $(basename "$root")"
[ ${#stack[@]} -gt 0 ] && context+=$'\n'"Stack: ${stack[*]}"
[ -n "$branch" ] && context+=$'\n'"Git branch: $branch"
if [ -f "$root/PROJECT_CONTEXT.md" ]; then
  context+=$'\n\n'"$(head -c 8192 "$root/PROJECT_CONTEXT.md")"
fi

if [ -n "$(q .hook_event_name)" ]; then
  jq -nc --arg c "$context" --arg e "$(q .hook_event_name)" \
    '{hookSpecificOutput: {hookEventName: $e, additionalContext: $c}}'
else
  jq -nc --arg c "$context" '{cancel: false, contextModification: $c}'
fi
