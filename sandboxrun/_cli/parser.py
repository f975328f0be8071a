"""Every command's flags, in one parser. Light on purpose: every command line builds it
(and `--help` shows it), so it imports no dialect, settings or engine module."""

from __future__ import annotations

import argparse
from typing import Any

from .._check import command as _check
from .._dialects import AGENTS


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sandboxrun",
        description="Run AI coding agents' hooks in disposable, hardened Docker containers.",
    )
    p.add_argument("-v", "--verbose", action="count", default=0, help="more logs on stderr")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config",
        metavar="FILE",
        help="config file (default ~/.config/sandboxrun/config.toml of your account)",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add = sub.add_parser

    def add_parser(name: str, **kw: Any) -> argparse.ArgumentParser:
        return add(name, parents=[common], **kw)

    sub.add_parser = add_parser  # type: ignore[method-assign]

    def agent_opts(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("--agent", choices=AGENTS, help="hook dialect (default cline)")
        cmd.add_argument(
            "--workspace",
            action="append",
            default=[],
            metavar="DIR",
            help="workspace root (repeatable; default: the event's roots, else the cwd)",
        )
        cmd.add_argument(
            "--hooks-dir",
            action="append",
            default=[],
            metavar="DIR",
            help="search only this hook folder (repeatable), not the agent's usual ones",
        )
        cmd.add_argument(
            "--home",
            metavar="DIR",
            help="where the user's own hooks are found (default: your account's home;"
            " $HOME is not read)",
        )

    run = sub.add_parser("run", help="run the hooks for one event (event JSON on stdin)")
    run.add_argument("hook", metavar="HOOK", help="hook name, e.g. PreToolUse")
    agent_opts(run)
    run.add_argument(
        "--env-file",
        metavar="PATH",
        help="claude: the agent's CLAUDE_ENV_FILE; checked lines your own SessionStart"
        " (Setup, CwdChanged, FileChanged) hooks write are appended to it",
    )
    run.add_argument("--timeout", type=float, metavar="S", help="seconds per hook (default 30)")
    run.add_argument("--image", help="hook runtime image")
    run.add_argument("--runtime", help="OCI runtime, e.g. runsc (gVisor); refused if missing")
    backend_opt(run)
    network_opts(run)
    run.add_argument(
        "--fail-closed",
        action="store_true",
        default=None,
        help="a failed or timed-out hook counts as a cancel",
    )
    no_serve(run)
    run.add_argument(
        "--answer",
        choices=["report", "agent"],
        default="report",
        help="report: the combined answer and each hook's report (default); agent: answer"
        " as one of the agent's own hooks would (Claude family: exit 0 with its JSON, or"
        " exit 2 with the reason on stderr; Cline family: its JSON alone; every other"
        " agent in its own protocol: a deny stays a deny)",
    )

    ex = sub.add_parser(
        "exec", help="run ONE hook command sandboxed, passing stdin/stdout/stderr/exit through"
    )
    ex.add_argument(
        "--agent",
        choices=AGENTS,
        default="claude",
        help="whose terms a fail-closed block uses (default claude)",
    )
    ex.add_argument(
        "--workspace", metavar="DIR", help="default: the agent's project-dir variable, else the cwd"
    )
    ex.add_argument("--timeout", type=float, metavar="S", help="seconds (default: the agent's)")
    ex.add_argument("--image", help="hook runtime image")
    ex.add_argument("--runtime", help="OCI runtime, e.g. runsc (gVisor); refused if missing")
    backend_opt(ex)
    network_opts(ex)
    ex.add_argument(
        "--fail-closed",
        action="store_true",
        default=None,
        help="a timeout or sandbox failure blocks, in the agent's terms",
    )
    ex.add_argument(
        "--untrusted",
        action="store_true",
        help="the command comes from a repository's config: its env lines, approvals and"
        " input rewrites never reach the agent (`install` writes this for project files)",
    )
    ex.add_argument(
        "--event",
        metavar="NAME",
        help="the event the agent runs the command for, where its input does not say"
        " (Copilot's; `install` writes it)",
    )
    ex.add_argument(
        "--hook-dir",
        metavar="DIR",
        help="copilot: the folder of the hooks file the command is in, named to the hook"
        " as COPILOT_HOOK_DIR (`install` writes it; one of Copilot's hook folders)",
    )
    no_serve(ex)
    ex.add_argument("cmdline", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]")

    lst = sub.add_parser("list", help="show the hooks found and the files skipped, with why")
    lst.add_argument("hook", nargs="?", metavar="HOOK", help="only this hook name")
    agent_opts(lst)
    lst.add_argument("--json", action="store_true", help="machine-readable output")

    rev = sub.add_parser(
        "review", help="repository hooks new or changed since approved, with diffs"
    )
    rev.add_argument("--agent", choices=AGENTS, help="only this agent's hooks (default: all)")
    rev.add_argument("--workspace", action="append", default=[], metavar="DIR",
                     help="workspace root (default: the cwd)")  # fmt: skip
    rev.add_argument("--approve", nargs="?", const="", metavar="HOOK",
                     help="pin the current version: of each hook, or of HOOK (a name)")  # fmt: skip
    rev.add_argument("--pins", metavar="FILE", help="approved pins from (and to) FILE, for a CI")
    rev.add_argument("--json", action="store_true", help="machine-readable output")

    from .._install.args import add_commands as install_commands

    install_commands(sub)

    images = sub.add_parser("images", help="manage the hook runtime images")
    isub = images.add_subparsers(dest="images_command", required=True, metavar="ACTION")
    build = isub.add_parser("build", help="build the default hook image from images/")
    build.add_argument(
        "--offline",
        action="store_true",
        help="no registry: build the Debian base with debootstrap (needs root)",
    )
    build.add_argument(
        "--tag", metavar="IMAGE", help="tag to build (default: sandboxrun/hooks:latest)"
    )
    build.add_argument(
        "--ca-cert",
        action="append",
        default=[],
        metavar="FILE",
        help="a PEM CA certificate the image's tools must trust (TLS interception); repeatable",
    )

    state = sub.add_parser(
        "state", help="hook states (persistent homes of hooks in `state`), sessions' /tmp"
    )
    ssub = state.add_subparsers(dest="state_command", required=True, metavar="ACTION")
    slist = ssub.add_parser("list", help="each hook state or /tmp: key, hook, workspace, size")
    slist.add_argument("--json", action="store_true", help="machine-readable output")
    sclean = ssub.add_parser(
        "clean",
        help="remove one state (KEY), --all, or by default those of deleted workspaces and"
        " sessions' /tmp unused for tmp_max_age",
    )
    which = sclean.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="remove every hook state")
    which.add_argument("key", nargs="?", metavar="KEY", help="the state to remove (see list)")

    chk = sub.add_parser("check", help=_check.HELP)
    agent_opts(chk)
    _check.add_arguments(chk)
    backend_opt(chk)

    reap_p = sub.add_parser("reap", help="remove containers left behind by killed runs")
    reap_p.add_argument("--all", action="store_true", help="remove every sandboxrun container")

    doc = sub.add_parser(
        "doctor", help="check the engine, image, runtime and the confinement itself"
    )
    doc.add_argument(
        "--agent",
        choices=AGENTS,
        help="only this agent's hooks (default: every agent with hooks here);"
        " with --session-start: whose hook",
    )
    doc.add_argument(
        "--session-start",
        action="store_true",
        help="only name the hooks here that run unsandboxed, as the agent's session-start"
        " hook (its message to the user; `install` adds this hook)",
    )
    doc.add_argument("--home", metavar="DIR", help="with --session-start: where install's"
                     " record is (default: your account's home)")  # fmt: skip

    aud = sub.add_parser("audit", help="what the hooks decided, per hook, from the audit trail")
    aud.add_argument("--since", metavar="SPAN", help="only the last SPAN: 30m, 12h, 1d, 2w")
    aud.add_argument("--hook", metavar="TEXT", help="only hooks whose name holds TEXT")
    aud.add_argument("--json", action="store_true", help="machine-readable output")
    aud.add_argument("--log", metavar="FILE", help="this audit file instead of audit_log")

    srv = sub.add_parser(
        "serve", help="answer `run` and `exec` from a long-lived server (unix socket; TCP + token)"
    )
    srv.add_argument(
        "--socket", metavar="PATH", help="unix socket (default: serve_socket, else your runtime"
        " folder's sandboxrun/serve.sock, else ~/.cache/sandboxrun/serve.sock)",
    )  # fmt: skip
    srv.add_argument(
        "--listen", metavar="HOST:PORT", help="also answer on TCP (platforms): needs a token"
    )
    srv.add_argument(
        "--token-file", metavar="FILE", help="the token TCP clients send (default:"
        " serve_token_file)",
    )  # fmt: skip
    srv.add_argument(
        "--idle-exit", type=float, metavar="S", help="stop after S seconds without a request"
    )
    # A server `run` or `exec` started (`_client.start_server`): the lock it hands on.
    srv.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)
    srv.add_argument(
        "--log-format", choices=("text", "json"), help="its log on stderr: text lines, or one"
        " JSON object a line for a log collector (default: log_format, else text)",
    )  # fmt: skip
    return p


def no_serve(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--no-serve",
        action="store_true",
        help="run here, not through a running `sandboxrun serve` (same answer, slower)",
    )


def network_opts(cmd: argparse.ArgumentParser) -> None:
    """--network and --allow-domain: the user's command line only, never the workspace."""
    cmd.add_argument(
        "--network",
        choices=["none", "bridge", "allowlist"],
        help="bridge gives the hook network: only for hooks you trust; allowlist: only the"
        " --allow-domain hosts, through a proxy",
    )
    cmd.add_argument(
        "--allow-domain",
        action="append",
        metavar="D",
        help="a host an allowlist hook may reach (HTTP, HTTPS); *.D for subdomains; repeatable",
    )


def backend_opt(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--backend",
        choices=["docker", "kubernetes"],
        help="where hooks run (default: the config file's backend, else docker); kubernetes"
        " takes kube_namespace, kubeconfig and kube_volumes from the config file",
    )
