"""The command line. stdout is the protocol: only answers go there; logs go to stderr.

Exit codes: 0 when the hooks ran (whatever they decided), 1 when `doctor` finds a
problem, 2 for a usage, configuration or engine error (one line on stderr).
With `--fail-closed`, an engine that cannot run the hooks answers a cancel on
stdout instead, in the agent's own terms, so the agent blocks rather than goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .. import _log
from .._answer import Caller, Reply, answer_exec, error_reply, run_result
from .._check import command as _check
from .._dialects import AGENTS
from .._text import printable

if TYPE_CHECKING:
    from .._backends.docker.backend import DockerBackend
    from .._backends.image_tools import ImageTools
    from .._settings import Settings
    from .._types import CombinedResult, ExecRequest, ExecResult, HookSpec

# Each command imports what its own path needs, when it runs: `run` is called for
# every event an agent sees, and docker, pydantic and loguru are most of its start-up.


def _parser() -> argparse.ArgumentParser:
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
        " exit 2 with the reason on stderr; Cline family: its JSON alone)",
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
    network_opts(ex)
    ex.add_argument(
        "--fail-closed",
        action="store_true",
        default=None,
        help="a timeout or sandbox failure blocks, in the agent's terms",
    )
    no_serve(ex)
    ex.add_argument("cmdline", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]")

    lst = sub.add_parser("list", help="show the hooks found and the files skipped, with why")
    lst.add_argument("hook", nargs="?", metavar="HOOK", help="only this hook name")
    agent_opts(lst)
    lst.add_argument("--json", action="store_true", help="machine-readable output")

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

    state = sub.add_parser("state", help="hook states: the persistent homes of hooks in `state`")
    ssub = state.add_subparsers(dest="state_command", required=True, metavar="ACTION")
    slist = ssub.add_parser("list", help="each hook state: key, hook, workspace, size")
    slist.add_argument("--json", action="store_true", help="machine-readable output")
    sclean = ssub.add_parser(
        "clean", help="remove one state (KEY), --all, or by default those of deleted workspaces"
    )
    which = sclean.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="remove every hook state")
    which.add_argument("key", nargs="?", metavar="KEY", help="the state to remove (see list)")

    chk = sub.add_parser("check", help=_check.HELP)
    agent_opts(chk)
    _check.add_arguments(chk)

    reap_p = sub.add_parser("reap", help="remove containers left behind by killed runs")
    reap_p.add_argument("--all", action="store_true", help="remove every sandboxrun container")

    sub.add_parser("doctor", help="check the engine, image, runtime and the confinement itself")

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


def log_level(verbose: int) -> str:
    return {0: "WARNING", 1: "INFO"}.get(verbose, "DEBUG")


def _setup_logging(verbose: int) -> None:
    level = log_level(verbose)

    def setup(loguru: Any) -> None:
        loguru.remove()
        loguru.add(sys.stderr, level=level, format=_log_format)
        # Every log line carries names, paths and messages a hook or repository chose:
        # escaped here, in one place, after loguru has formatted the message.
        loguru.configure(patcher=_escape_message)
        loguru.enable("sandboxrun")

    _log.configure(setup, level)  # loguru itself is imported by the first line logged


def _escape_message(record: Any) -> None:
    record["message"] = printable(record["message"])


def _log_format(record: Any) -> str:
    return f"sandboxrun: {record['level'].name.lower()}: {{message}}\n{{exception}}"


def _cmd_run(args: argparse.Namespace) -> int:
    opened: list[_LazyDocker] = []
    try:
        if args.answer == "agent":  # `run` as the agent's own hook (shims, forwarders)
            from .._install.answer import run_as_hook

            return run_as_hook(args, lambda a: _run_result(a, opened))
        result = _run_result(args, opened)
        _emit(result.to_json())  # the answer is out (flushed) before we clean up
        if result.abandoned:  # stuck threads must not keep the agent waiting on us
            os._exit(0)
        return 0
    finally:
        for backend in opened:  # wait for the containers' removal: nothing outlives us
            backend.close()


def _run_result(args: argparse.Namespace, opened: list[_LazyDocker]) -> CombinedResult:
    return run_result(args, Caller.this_process(), lambda s: _opened(_LazyDocker(s), opened))


def _cmd_exec(args: argparse.Namespace) -> int:
    opened: list[DockerBackend] = []

    def backend_for(settings: Settings) -> DockerBackend:
        from .._backends.docker.backend import DockerBackend

        return _opened(DockerBackend(settings), opened)

    code = _write(answer_exec(args, Caller.this_process(), backend_for))
    for backend in opened:
        backend.close()  # wait for the container's removal, after the output is out
    return code


_Backend = TypeVar("_Backend", "DockerBackend", "_LazyDocker")


def _opened(backend: _Backend, opened: list[_Backend]) -> _Backend:
    """Closed after the answer is out; aborted on SIGTERM (`_stop_cleanly`)."""
    opened.append(backend)
    _stop_cleanly(backend)
    return backend


def _write(reply: Reply) -> int:
    sys.stdout.buffer.write(reply.stdout)
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(reply.stderr)
    sys.stderr.buffer.flush()
    return reply.exit_code


def _load(args: argparse.Namespace, **overrides: Any) -> Settings:
    from .._settings import Settings

    return Settings.load(config=args.config, **overrides)


def _cmd_list(args: argparse.Namespace) -> int:
    from .._backends.docker.backend import DockerBackend
    from .._dialects.registry import DIALECTS
    from .._preflight import check_discovered
    from .._runner import resolve_workspaces
    from .._settings import account_home

    settings = _load(args, agent=args.agent)
    dialect = DIALECTS[settings.agent]
    roots = resolve_workspaces({}, args.workspace, dialect, settings.allowed_roots)
    found = dialect.discover(args.hook, roots, args.home or account_home(), args.hooks_dir)
    # Whether each hook can start in the image: needs the engine, once per image.
    problems, unchecked = check_discovered(found.hooks, DockerBackend(settings))
    from .._install.status import notes

    unwrapped = notes(settings.agent, roots, args.home or account_home())
    if args.json:
        hooks = [
            {
                "hook": h.hook_name, "path": h.name, "source": h.source, "matcher": h.matcher,
                "runnable": None if unchecked else why is None, "why": why,
                **_claude_options(h),
            }
            for h, why in zip(found.hooks, problems, strict=True)
        ]  # fmt: skip
        skipped = [{"path": s.path, "source": s.source, "reason": s.reason} for s in found.skipped]
        _emit({"agent": settings.agent, "hooks": hooks, "skipped": skipped, "check": unchecked,
               "notWrapped": unwrapped})  # fmt: skip
        return 0
    print(f"hooks ({settings.agent}):" if found.hooks else f"no hooks found ({settings.agent})")
    for h, why in zip(found.hooks, problems, strict=True):
        matcher = f"  [matcher {h.matcher}]" if h.matcher not in (None, "", "*") else ""
        matcher += f"  [if {h.condition}]" if h.condition is not None else ""
        matcher += "  [async: its answer decides nothing]" if h.run_async else ""
        matcher += "  [once: runs every time, no session state]" if h.once else ""
        print(printable(f"  {h.hook_name:<16} {h.source:<9} {h.name}{matcher}"))
        if why:
            print(printable(f"    will not run: {why}"))
    if unchecked:
        print(printable(f"  ({unchecked})"))
    if found.skipped:
        print("skipped:")
        for s in found.skipped:
            print(printable(f"  {s.path} ({s.source}): {s.reason}"))
    for note in unwrapped:  # installed, but a pull brought a hook the agent runs itself
        print(printable(note))
    return 0


def _claude_options(spec: HookSpec) -> dict[str, Any]:
    """`if`, `async` and `once` of a hook that sets any (Claude family), for `list --json`."""
    if spec.condition is None and not spec.run_async and not spec.once:
        return {}
    return {"if": spec.condition, "async": spec.run_async, "once": spec.once}


def _cmd_images(args: argparse.Namespace) -> int:
    from .._backends.docker.engine import connect
    from .._backends.docker.images import build_images
    from .._settings import Settings

    settings = _load(args)
    # The default image unless --tag: a team's own `image` (built FROM it) is never
    # overwritten by a build of ours.
    default = args.tag or str(Settings.model_fields["image"].default)
    image_id = build_images(
        connect(settings.docker_host),
        image=default,
        offline=args.offline,
        ca_certs=args.ca_cert,
    )
    print(f"built {default} ({image_id[:19]})")
    return 0


def _cmd_state(args: argparse.Namespace) -> int:
    from .. import _state

    settings = _load(args)
    if args.state_command == "clean":
        removed = _state.clean(settings, args.key, everything=args.all)
        for st in removed:
            print(printable(f"removed {st.key}  {st.hook}  ({st.workspace})"))
        print(f"removed {len(removed)} hook state(s)")
        return 0
    found = _state.states(settings)
    if args.json:
        _emit({"stateDir": str(_state.state_root(settings)), "states": [
            {"key": st.key, "source": st.source, "hook": st.hook, "workspace": st.workspace,
             "path": str(st.path), "bytes": st.size}
            for st in found
        ]})  # fmt: skip
        return 0
    if not found:
        print(f"no hook states in {_state.state_root(settings)}")
    for st in found:
        print(printable(f"{st.key}  {st.size:>10}  {st.source:<9} {st.hook}  ({st.workspace})"))
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    settings = _load(
        args, agent=args.agent, timeout=args.timeout, image=args.image, runtime=args.runtime,
        fail_closed=not args.fail_open,
    )  # fmt: skip
    from .._backends.docker.backend import DockerBackend

    with DockerBackend(settings) as backend:  # on leaving: wait for the removals
        _stop_cleanly(backend)
        return _check.run_check(args, settings, backend)


def _cmd_reap(args: argparse.Namespace) -> int:
    from .._backends.docker.engine import connect
    from .._backends.docker.reaper import reap

    removed = reap(connect(_load(args).docker_host), everything=args.all)
    print(f"removed {len(removed)} container(s)")
    return 0


class _LazyDocker:
    """The `DockerBackend`, imported and built when a hook is to run: most events an
    agent sends match no hook, and those never need docker (nor its ~150 ms import)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._backend: DockerBackend | None = None
        self._lock = threading.Lock()

    def _get(self) -> DockerBackend:
        with self._lock:
            if self._backend is None:
                from .._backends.docker.backend import DockerBackend

                self._backend = DockerBackend(self.settings)
            return self._backend

    def check(self) -> None:
        self._get().check()

    def run(self, request: ExecRequest) -> ExecResult:
        return self._get().run(request)

    def image_tools(self) -> ImageTools | None:
        return self._get().image_tools()

    def abort(self) -> None:
        if self._backend is not None:
            self._backend.abort()

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def __enter__(self) -> _LazyDocker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stop_cleanly(backend: DockerBackend | _LazyDocker) -> None:
    """On SIGTERM/SIGINT/SIGHUP (an agent giving up on its hook), remove our containers
    before dying, so no hook outlives the sandboxrun that started it."""

    def handler(signum: int, frame: object) -> None:
        backend.abort()
        os._exit(128 + signum)  # worker threads are blocked on streams we just closed

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, handler)


def _emit(document: dict[str, Any]) -> None:
    # Pure ASCII: every control, bidi override and lone surrogate a hook or a
    # repository put in a string arrives escaped, and encoding can never fail.
    sys.stdout.write(json.dumps(document, ensure_ascii=True) + "\n")
    sys.stdout.flush()


def _cmd_install(args: argparse.Namespace) -> int:
    from .._install.command import command

    return command(args)


def _cmd_serve(args: argparse.Namespace) -> int:
    from .._server import serve

    return serve(args)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from . import doctor as _doctor

    return _doctor.doctor(_load(args))


COMMANDS = {
    "run": _cmd_run,
    "exec": _cmd_exec,
    "list": _cmd_list,
    "images": _cmd_images,
    "state": _cmd_state,
    "check": _cmd_check,
    "reap": _cmd_reap,
    "doctor": _cmd_doctor,
    "serve": _cmd_serve,
    "install": _cmd_install,
    "uninstall": _cmd_install,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _setup_logging(args.verbose)
    try:
        code: int = COMMANDS[args.command](args)
        return code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # ours: one line, never a traceback on the agent
        return _write(error_reply(exc))
