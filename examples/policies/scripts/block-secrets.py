#!/usr/bin/env python3
"""Block writing secrets: private key blocks, AWS access key ids, GitHub tokens, in what a
write tool writes or a shell command carries (`echo ... > file`).

Cline: PreToolUse on write_to_file / replace_in_file / execute_command (the CLI: editor /
apply_patch / run_commands); Claude Code:
PreToolUse with matcher Write|Edit|MultiEdit|NotebookEdit|Bash. The reason names the
kind of secret, never the secret itself.
"""

from __future__ import annotations

import os
import re
import sys

sys.dont_write_bytecode = True  # hooks run in a read-only workspace; leave nothing behind
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from hookio import allow, block, read_event, tool_call  # noqa: E402

SECRETS = {
    "a private key": re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    "an AWS access key id": re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    "a GitHub token": re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"
    ),
}


def main() -> None:
    event = read_event()
    call = tool_call(event)
    text = "\n".join((call.command, call.content))
    for kind, pattern in SECRETS.items():
        if pattern.search(text):
            where = f"into {call.path}" if call.path else "in a shell command"
            block(event, f"Blocked by policy: this writes {kind} {where}. Keep secrets out of "
                         "the repository (use the environment or a secret store).")  # fmt: skip
    allow(event)


if __name__ == "__main__":
    main()
