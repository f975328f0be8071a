"""`sandboxrun doctor`: is this machine ready to run hooks sandboxed, and does the
sandbox really confine? The confinement checks are observed from inside a probe
container started with the configured settings, never read from our own config:
misconfiguration that silently runs code unconfined is the failure that matters.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import uuid
from collections.abc import Callable

from .. import _settings
from .._backends.base import Backend
from .._backends.docker.backend import DockerBackend
from .._backends.docker.engine import DEFAULT_ADDRESS
from .._backends.helper import PROTOCOL_LABEL, Helper
from .._errors import SandboxrunError
from .._sandbox.preflight import check_discovered
from .._settings import Settings, parse_size
from .._types import ExecRequest

# Plain sh and /proc: no coreutils that call statx (they fail under old gVisor builds).
PROBE = r"""
out() { printf '%s=%s\n' "$1" "$2"; }
out uid "$(id -u)"
out ifaces "$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
if (: > /etc/.sandboxrun-probe) 2>/dev/null; then out rootfs writable; else out rootfs read-only; fi
if (: > "$PWD/.sandboxrun-probe") 2>/dev/null; then out workspace writable; else out workspace read-only; fi
out caps "$(grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status | tr -s '\t ' ' ' | cut -d' ' -f2 | sort -u | tr '\n' ' ')"
out nnp "$(grep NoNewPrivs /proc/self/status | tr -s '\t ' ' ' | cut -d' ' -f2)"
out nofile "$(ulimit -n)"
out pids "$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max 2>/dev/null)"
out memory "$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null)"
out canary "$(env | grep -c "$1")"
out statx "$(ls / >/dev/null 2>&1 && echo ok || echo broken)"
if (exec 3<>"$PWD/.sandboxrun-fifo") 2>/dev/null; then out fifo writable; else out fifo refused; fi
out unix "$(python3 -c '
import socket
try:
    socket.socket(socket.AF_UNIX); print("allowed")
except PermissionError:
    print("denied")' 2>/dev/null)"
out io_uring "$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(425, 4, ctypes.create_string_buffer(120)) >= 0)' 2>/dev/null)"
"""


def probe(backend: Backend, workspace: bool = True) -> dict[str, str]:
    """Run the probe in a sandbox made exactly as hooks get theirs; return what it saw.
    `workspace=False`: no host folder mounted (a cluster's pod cannot mount this
    machine's folders), so the workspace and host-object rows are not seen."""
    canary = uuid.uuid4().hex
    os.environ["SANDBOXRUN_DOCTOR_CANARY"] = canary  # must not be visible inside
    leaked_file = False
    try:
        if not workspace:
            result = backend.run(_probe_request("/tmp", (), canary))
        else:
            # Not below /tmp: Landlock cannot guard a mount below a folder the hook may write.
            where = "/var/tmp" if os.path.isdir("/var/tmp") else None
            with tempfile.TemporaryDirectory(prefix="sandboxrun-doctor-", dir=where) as ws:
                os.chmod(ws, 0o755)
                os.mkfifo(os.path.join(ws, ".sandboxrun-fifo"), 0o666)
                os.chmod(os.path.join(ws, ".sandboxrun-fifo"), 0o666)
                result = backend.run(_probe_request(ws, (ws,), canary))
                leaked_file = os.path.exists(os.path.join(ws, ".sandboxrun-probe"))
    finally:
        del os.environ["SANDBOXRUN_DOCTOR_CANARY"]
    if result.exit_code != 0 or result.timed_out:
        raise SandboxrunError(
            f"the probe container failed (exit {result.exit_code}): "
            + result.stderr.decode("utf-8", "replace").strip()[-300:]
        )
    seen = dict(
        line.split("=", 1)
        for line in result.stdout.decode("utf-8", "replace").splitlines()
        if "=" in line
    )
    if leaked_file:
        seen["workspace"] = "writable"
    return seen


def _probe_request(workdir: str, mounts: tuple[str, ...], canary: str) -> ExecRequest:
    return ExecRequest(argv=("/bin/sh", "-c", PROBE, "probe", canary), stdin=b"",
                       workdir=workdir, mounts=mounts, timeout=30, label="doctor probe")  # fmt: skip


def host_object_checks(
    settings: Settings, seen: dict[str, str], helper: Helper | None
) -> list[tuple[bool | None, str, str]]:
    """Host FIFOs and sockets in mounted folders, and the in-container deadline."""
    gvisor = settings.runtime == "runsc"
    no_helper = (
        f"the image has no sandboxrun helper of protocol 2 ({PROTOCOL_LABEL}=2; see"
        " images/Dockerfile): use the default image or --runtime runsc"
    )
    fifo, unix = seen.get("fifo", "(not seen)"), seen.get("unix", "(not seen)")
    out: list[tuple[bool | None, str, str]] = [
        (
            fifo == "refused",
            "host FIFOs in mounts cannot be opened for write",
            f"saw fifo={fifo}" + ("" if fifo == "refused" or helper else f"; {no_helper}"),
        ),
        (
            unix == "denied" or gvisor,
            "host unix sockets in mounts unreachable",
            f"saw unix={unix}"
            + (" (gVisor refuses host sockets in binds)" if gvisor and unix != "denied" else "")
            + ("" if unix == "denied" or gvisor else f"; {no_helper}"),
        ),
    ]
    has_deadline = helper is not None and helper.protocol >= 2
    out.append(
        (
            has_deadline or None,
            "deadline enforced inside the container",
            "by the image's helper"
            if has_deadline
            else f"only by sandboxrun: a killed sandboxrun leaves it to `reap`; {no_helper}",
        )
    )
    return out


def confinement_checks(
    settings: Settings, seen: dict[str, str], helper: Helper | None = None
) -> list[tuple[bool | None, str, str]]:
    """(ok, property, what was seen) for each confinement property; ok None: a warning."""
    memory = parse_size(settings.memory)

    def limit(value: str, want: int) -> bool:
        return value.strip().isdigit() and int(value) == want

    rows: list[tuple[str, Callable[[str], bool], str]] = [
        ("network absent", lambda v: v.split() == ["lo"], "ifaces"),
        ("root filesystem read-only", lambda v: v == "read-only", "rootfs"),
        ("workspace read-only", lambda v: v == "read-only", "workspace"),
        ("capabilities empty", lambda v: v.split() == ["0000000000000000"], "caps"),
        ("no-new-privileges set", lambda v: v == "1", "nnp"),
        ("user is not root", lambda v: v.isdigit() and v != "0", "uid"),
        (f"open files limited to {settings.nofile}", lambda v: limit(v, settings.nofile), "nofile"),
        (f"processes limited to {settings.pids}", lambda v: limit(v, settings.pids), "pids"),
        (f"memory limited to {settings.memory}", lambda v: limit(v, memory), "memory"),
        ("no host environment visible", lambda v: v == "0", "canary"),
    ]
    # gVisor's own /proc and /sys do not show these; its host-side cgroup enforces them.
    hidden_in_gvisor = {"nnp", "pids", "memory"} if settings.runtime == "runsc" else set()
    out: list[tuple[bool | None, str, str]] = []
    for what, ok, key in rows:
        value = seen.get(key, "(not seen)")
        if key in hidden_in_gvisor and not value.strip():
            out.append((None, what, "not visible inside gVisor, so not checked here"))
            continue
        out.append((ok(value), what, f"saw {key}={value.strip() or '(empty)'}"))
    if seen.get("io_uring") == "True" and settings.runtime != "runsc":
        # A warning, not a failure: the default image's helper denies it, and Docker >= 25
        # blocks it. Under gVisor io_uring never reaches the host kernel.
        out.append(
            (
                None,
                "io_uring blocked",
                "io_uring_setup works inside: the engine's profile allows it (Docker < 25)"
                " and the image has no sandboxrun seccomp helper (see images/Dockerfile);"
                " use the default image, --runtime runsc or Docker >= 25",
            )
        )
    out += host_object_checks(settings, seen, helper)
    if seen.get("statx") == "broken":
        out.append(
            (
                False,
                "coreutils work (statx)",
                "`ls` fails inside: an old gVisor"
                " build without statx; use a newer runsc or hooks without ls/stat",
            )
        )
    return out


def hook_checks(
    settings: Settings, backend: DockerBackend, agents: list[str] | None = None
) -> list[tuple[bool | None, str, str]]:
    """Per agent (`agents`, else every agent with hooks or notes here): the hooks that run
    unsandboxed although sandboxrun was installed, and whether each hook of the current
    directory can start in the image (`_sandbox.preflight`)."""
    from .._dialects.registry import DIALECTS

    out: list[tuple[bool | None, str, str]] = []
    counts: list[str] = []
    for agent in agents or list(DIALECTS):
        lines, found = _agent_checks(settings.model_copy(update={"agent": agent}), backend)
        if agents or lines or found:  # an agent with nothing here says nothing
            out += lines
            counts += [f"{found} {agent} hook(s)"] if found else []
    if not any(ok is False or ok is None for ok, _, _ in out):
        out.append((True, "hooks here", f"{', '.join(counts) or 'no hooks'}, each can start"))
    return out


def _agent_checks(
    settings: Settings, backend: DockerBackend
) -> tuple[list[tuple[bool | None, str, str]], int]:
    """One agent's lines (what is wrong) and how many of its hooks were found here."""
    from .._dialects.registry import dialect_of
    from .._install.status import notes  # installed here, but a pull brought a hook: unsandboxed
    from .._runner.factory import resolve_workspaces  # the runner is above the doctor

    agent = settings.agent
    dialect = dialect_of(settings)
    try:
        roots = resolve_workspaces({}, (), dialect, settings, cwd=os.getcwd())
        home = _settings.account_home()
        discovery = dialect.discover(None, roots, home)
    except SandboxrunError as exc:
        return [(None, f"{agent} hooks here", f"not checked: {exc}")], 0
    found = discovery.hooks
    problems, unchecked = check_discovered(found, backend)
    out: list[tuple[bool | None, str, str]] = [
        (False, f"installed {agent} hooks", n) for n in notes(agent, roots, home)
    ]
    # A config file (or entry) that could not be read: the agent may apply a policy here
    # that sandboxrun would not see (`Skipped.unreadable`)
    out += [
        (False, f"{agent} config {s.path} ({s.source})", f"could not be read: {s.reason}")
        for s in discovery.skipped
        if s.unreadable
    ]
    out += _review_line(settings, roots, home)
    if unchecked:
        return [*out, (None, f"{agent} hooks here", unchecked)], len(found)
    out += [
        (False, f"{agent} hook {h.hook_name} {h.name}", f"will not run: {why}")
        for h, why in zip(found, problems, strict=True)
        if why
    ]
    return out, len(found)


def _review_line(
    settings: Settings, roots: list[str], home: str
) -> list[tuple[bool | None, str, str]]:
    """One warn line when repository hooks here await review (`_review`)."""
    from .._review.show import awaiting, scan, summary

    try:
        line = summary(awaiting(settings, scan(settings, roots, home, [settings.agent])))
    except Exception as exc:  # the pins unreadable: say so, the other checks stand
        return [(None, "review", f"not checked: {exc}")]
    return [(None, "review", line)] if line else []


# What a pod's sandbox is not judged on from inside, and why (the Kubernetes backend).
_POD_UNJUDGED = {
    "ifaces": "a pod always has an interface: the deny-all NetworkPolicy of"
    " deploy/kubernetes/ cuts its traffic (not visible from inside)",
    "workspace": "the probe pod mounts no workspace (kube_volumes serve the hooks' own)",
    "pids": "a pod's process limit is the kubelet's podPidsLimit, per node",
    "nofile": "a pod's open-file limit is the container runtime's default",
}


def kubernetes_checks(settings: Settings) -> list[tuple[bool | None, str, str]]:
    """The cluster answers, the namespace takes pods, and a probe pod is confined."""
    from .._backends.choose import make_backend

    with make_backend(settings) as backend:
        backend.check()
        server = getattr(getattr(backend, "cluster", None), "server", "?")
        lines: list[tuple[bool | None, str, str]] = [
            (True, "cluster", f"API server {server}, namespace {settings.kube_namespace}"),
            (True, "runtime class", settings.runtime_class or "the cluster's default"),
        ]
        seen = probe(backend, workspace=False)
    if settings.runtime_class in ("gvisor", "runsc"):  # judged as gVisor is on Docker
        settings = settings.model_copy(update={"runtime": "runsc"})
    keys = {"ifaces": "network absent", "workspace": "workspace read-only",
            "pids": "processes limited", "nofile": "open files limited"}  # fmt: skip
    from .._backends.kubernetes.backend import HELPER  # a pod's command is always it

    for ok, what, detail in confinement_checks(settings, seen, HELPER):
        key = next((k for k, prefix in keys.items() if what.startswith(prefix)), None)
        if key is not None:
            lines.append((None, what, f"not checked: {_POD_UNJUDGED[key]}"))
        elif not what.startswith(("host FIFOs", "host unix sockets")):  # need a host mount
            lines.append((ok, what, detail))
    return lines


def doctor(settings: Settings, agents: list[str] | None = None) -> int:
    """Print one pass/FAIL line per check; 0 if all pass, 1 otherwise. The hook checks
    cover `agents`, else every agent with hooks here."""
    lines: list[tuple[bool | None, str, str]] = []
    if settings.backend == "kubernetes":
        try:
            lines += kubernetes_checks(settings)
        except SandboxrunError as exc:
            lines.append((False, "sandbox", str(exc)))
        return _report(settings, lines)
    try:
        backend = DockerBackend(settings)
        facts = backend.describe()
        where = settings.docker_host or DEFAULT_ADDRESS
        lines.append((True, "engine", f"Docker Engine {facts.version} at {where}"))
        wanted = settings.runtime or f"{facts.default_runtime} (engine default)"
        lines.append(
            (
                True,
                "runtimes",
                f"available: {', '.join(facts.runtimes)}; hooks use {wanted}"
                + ("" if "runsc" in facts.runtimes else "; gVisor (runsc) not registered"),
            )
        )
        backend.check()
        lines.append((True, "image", f"{settings.image} present"))
        lines += confinement_checks(settings, probe(backend), backend.helper())
        lines += hook_checks(settings, backend, agents)
    except SandboxrunError as exc:
        lines.append((False, "sandbox", str(exc)))
    return _report(settings, lines)


def _report(settings: Settings, lines: list[tuple[bool | None, str, str]]) -> int:
    from .._server import server_state  # the server is above the doctor

    lines.append(server_state(settings))
    for ok, what, detail in lines:
        print(f"{ {True: 'pass', False: 'FAIL', None: 'warn'}[ok] }  {what}: {detail}")
    return 1 if any(ok is False for ok, _, _ in lines) else 0


def command(args: argparse.Namespace) -> int:
    from .common import load

    return doctor(load(args), [args.agent] if args.agent else None)
