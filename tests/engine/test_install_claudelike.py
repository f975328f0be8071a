"""`install --agent qwen` end to end: a Qwen Code project's hooks (its timeouts in
Qwen's units: QwenLM/qwen-code packages/core/src/hooks/hook-timeout.ts@985988a),
installed, then run as Qwen Code runs a command hook (`sh -c` in the project,
QWEN_PROJECT_DIR set: hookRunner.ts@0135061); the decisions must be those of the
original hooks run on the host, and `uninstall` gives the bytes back."""

from __future__ import annotations

import json
from pathlib import Path

from sandboxrun import DockerBackend

from .test_install import CLAUDE_GUARD, bash, claude_event, claude_runs, sandboxrun


def test_qwen_wrapped_commands_decide_as_the_originals(
    engine: DockerBackend, tmp_path: Path
) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    hooks = root / ".qwen" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "guard.sh").write_text(CLAUDE_GUARD)
    (hooks / "guard.sh").chmod(0o755)
    (root / ".git").mkdir()
    (root / "README.md").write_text("hello from the project\n")
    settings = root / ".qwen" / "settings.json"
    settings.write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "run_shell_command", "hooks": [
            # 30000: milliseconds, as Qwen Code still reads a value of 1000 or more
            {"type": "command", "command": '"$QWEN_PROJECT_DIR"/.qwen/hooks/guard.sh',
             "timeout": 30000},
        ]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": 'echo "context: $(head -n 1 README.md)"',
             "timeout": 30},
        ]}],
    }}, indent=2) + "\n")  # fmt: skip
    events = [
        claude_event("PreToolUse", root, **bash("rm -rf /")),
        claude_event("PreToolUse", root, **bash("ls")),
        claude_event("UserPromptSubmit", root, prompt="hi"),
    ]
    before = settings.read_bytes()
    unsandboxed = [claude_runs(settings, root, e, "QWEN_PROJECT_DIR") for e in events]
    assert unsandboxed[0] == [(2, b"", b"rm -rf is not allowed (rm -rf /)\n")]
    assert unsandboxed[2] == [(0, b"context: hello from the project\n", b"")]

    sandboxrun("install", "--agent", "qwen", "--workspace", str(root), "--home", str(home))
    text = settings.read_text()
    assert "exec --agent qwen --untrusted" in text and "--timeout 25 --" in text  # 30000 ms
    for event, expected in zip(events, unsandboxed, strict=True):
        assert claude_runs(settings, root, event, "QWEN_PROJECT_DIR") == expected, event

    sandboxrun("uninstall", "--agent", "qwen", "--workspace", str(root), "--home", str(home))
    assert settings.read_bytes() == before
