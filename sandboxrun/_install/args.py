"""The flags of `install` and `uninstall`: built for every command line, so light (no
dialect, no settings, no engine is imported here)."""

from __future__ import annotations

from typing import Any

from .._dialects import AGENTS


def add_commands(sub: Any) -> None:
    """The `install` and `uninstall` subcommands (`sub`: the CLI's subparsers)."""
    for name, text in (
        ("install", "make an agent run its existing hooks in the sandbox"),
        ("uninstall", "undo install: the files as they were, byte for byte"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--agent", required=True, choices=AGENTS)
        where = cmd.add_mutually_exclusive_group()
        where.add_argument("--workspace", metavar="DIR", help="the project (default: the cwd)")
        where.add_argument("--user", action="store_true", help="the user's own hooks")
        where.add_argument(
            "--managed", action="store_true",
            help="claude: managed settings (allowManagedHooksOnly + forwarding hooks);"
            " codex: requirements.toml (allow_managed_hooks_only + forwarding hooks);"
            " gemini, qwen, augment, cursor, copilot, windsurf: the system's files, rewritten",
        )  # fmt: skip
        where.add_argument(
            "--global", dest="global_", action="store_true",
            help="Cline family: forwarding hooks in the user's global hook folders",
        )  # fmt: skip
        cmd.add_argument(
            "--managed-file", metavar="FILE",
            help="with --managed: this file instead of the system's managed settings",
        )  # fmt: skip
        cmd.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
        cmd.add_argument(
            "--fail-closed", action="store_true",
            help="the installed hooks block when a hook fails or cannot run",
        )  # fmt: skip
        cmd.add_argument(
            "--home", metavar="DIR",
            help="the user's home (default: your account's; also passed to the installed"
            " `sandboxrun run` commands when given)",
        )  # fmt: skip
