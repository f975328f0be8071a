"""`install --agent trae` end to end: a Trae IDE project's `.trae/hooks.json` (the
`{"version": 1, "hooks": {...}}` of public files, lancedb/lance@4ed1063; a RunCommand
guard as gotocx/superpowers-trae@205a1ed writes one), installed, then run as a
Claude-shaped agent runs a command hook (`sh -c` in the project, TRAE_PROJECT_DIR set;
unconfirmed against Trae's own reference, `_dialects/claude/agents.py`); the decisions
must be those of the original hooks run on the host, and `uninstall` gives the bytes
back, the `version` key and the file's layout with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sandboxrun import DockerBackend

from .test_install import CLAUDE_GUARD, claude_event, claude_runs, sandboxrun

# A PreToolUse answer in Claude's JSON (hookSpecificOutput with its event name), as the
# public Trae guard above writes it.
DENY_JSON = (
    "#!/bin/sh\n"
    "grep -q 'git push --force' && printf '%s' '{\"hookSpecificOutput\": {\"hookEventName\":"
    ' "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason":'
    ' "no force push"}}\'\n'
    "exit 0\n"
)


def run_command(command: str) -> dict[str, Any]:
    """Trae's shell tool (the matcher public files give it: `RunCommand`)."""
    return {"tool_name": "RunCommand", "tool_input": {"command": command}}


def test_trae_wrapped_commands_decide_as_the_originals(
    engine: DockerBackend, tmp_path: Path
) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    hooks = root / ".trae" / "hooks"
    hooks.mkdir(parents=True)
    for name, text in (("guard.sh", CLAUDE_GUARD), ("push.sh", DENY_JSON)):
        (hooks / name).write_text(text)
        (hooks / name).chmod(0o755)
    (root / ".git").mkdir()
    (root / "README.md").write_text("hello from the project\n")
    config = root / ".trae" / "hooks.json"
    config.write_text(json.dumps({"version": 1, "hooks": {
        "PreToolUse": [{"matcher": "RunCommand|Bash", "hooks": [
            {"type": "command", "command": '"$TRAE_PROJECT_DIR"/.trae/hooks/guard.sh',
             "timeout": 10},
            {"type": "command", "command": ".trae/hooks/push.sh"},
        ]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": 'echo "context: $(head -n 1 README.md)"',
             "timeout": 5},
        ]}],
    }}, indent=2) + "\n")  # fmt: skip
    events = [
        claude_event("PreToolUse", root, **run_command("rm -rf /")),
        claude_event("PreToolUse", root, **run_command("git push --force")),
        claude_event("PreToolUse", root, **run_command("ls")),
        claude_event("UserPromptSubmit", root, prompt="hi"),
    ]
    before = config.read_bytes()
    unsandboxed = [claude_runs(config, root, e, "TRAE_PROJECT_DIR") for e in events]
    assert unsandboxed[0][0] == (2, b"", b"rm -rf is not allowed (rm -rf /)\n")
    assert b'"deny"' in unsandboxed[1][1][1]
    assert unsandboxed[3] == [(0, b"context: hello from the project\n", b"")]

    sandboxrun("install", "--agent", "trae", "--workspace", str(root), "--home", str(home))
    text = config.read_text()
    assert "exec --agent trae --untrusted" in text and '"version": 1' in text
    for event, expected in zip(events, unsandboxed, strict=True):
        assert claude_runs(config, root, event, "TRAE_PROJECT_DIR") == expected, event

    sandboxrun("uninstall", "--agent", "trae", "--workspace", str(root), "--home", str(home))
    assert config.read_bytes() == before
