#!/usr/bin/env python3
# A faithful minimal reproduction (not a copy) of mindfold-ai/Trellis
# packages/cli/src/templates/iflow/hooks/session-start.py @ 32bad17: what that hook does
# with a project's files, written for sandboxrun's tests (PROVENANCE.md says why).
import json
import subprocess
import sys
from pathlib import Path


def read_file(path: Path, fallback: str = "") -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, PermissionError):
        return fallback


def run_script(script: Path) -> str:
    try:
        done = subprocess.run([sys.executable, "-W", "ignore", str(script)], capture_output=True,
                              text=True, timeout=5, cwd=script.parent.parent.parent)
        return done.stdout if done.returncode == 0 else "No context available"
    except (subprocess.TimeoutExpired, FileNotFoundError, PermissionError):
        return "No context available"


def task_status(trellis: Path) -> str:
    current = trellis / ".current-task"
    if not current.is_file() or not current.read_text(encoding="utf-8").strip():
        return "Status: NO ACTIVE TASK\nNext: Describe what you want to work on"
    ref = current.read_text(encoding="utf-8").strip()
    task = trellis / "tasks" / ref
    if not task.is_dir():
        return f"Status: STALE POINTER\nTask: {ref}"
    return f"Status: READY\nTask: {ref}" if (task / "prd.md").is_file() else f"Status: NOT READY\nTask: {ref}"


def main() -> None:
    project = Path(".").resolve()  # iFlow sets no project variable: the hook's cwd is the project
    trellis = project / ".trellis"
    out = ["<current-state>", run_script(trellis / "scripts" / "get_context.py"), "</current-state>",
           "<workflow>", read_file(trellis / "workflow.md", "No workflow.md found"), "</workflow>",
           "<task-status>", task_status(trellis), "</task-status>"]
    result = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                     "additionalContext": "\n".join(out)}}
    print(json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
