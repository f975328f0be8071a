"""Hostile hooks against the real sandbox: each test is a hook that attacks one threat of
reference/sandboxing.md and asserts what the user needs — the host and the workspace are
unchanged, no secret or network is reached, the run ends within a generous bound of its
deadline with a precise status, and the next hook runs normally.

Threats already proven elsewhere (not repeated here): busy loop, `sleep` forever and a
SIGTERM trap (test_sandbox.py::test_timeout_kills_a_hook_that_ignores_sigterm,
::test_fail_closed_timeout_cancels); a bash fork bomb (::test_pids_limit_contains_a_fork_bomb);
a 512 MB bytearray (::test_memory_limit_reports_oom); a newline flood (::test_stdout_flood_is_bounded_and_killed);
a 10 MB unread stdin and stdin EOF (::test_hook_that_never_reads_a_large_stdin,
::test_stdin_arrives_whole_with_eof); writing the workspace, /etc, /usr/bin
(::test_workspace_is_read_only, ::test_root_filesystem_is_read_only); a second run's /tmp and
$HOME (::test_second_run_sees_nothing_of_the_first); a background child holding stdout
(::test_background_child_does_not_hold_the_run); capabilities and NoNewPrivs
(::test_non_root_no_capabilities_no_new_privileges); host variables and /proc/1/environ
(::test_no_host_environment); interfaces, 1.1.1.1, 169.254.169.254, the gateway and DNS
(::test_no_network); exit codes 1, 2, 124, 137, 143 (::test_exit_codes_are_reported);
sandboxrun SIGKILLed mid-run (test_cli.py::test_killed_run_leaves_a_container_that_reap_removes).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, HookFactory
from sandboxrun._backends.labels import MANAGED as LABEL
from sandboxrun._settings import account_home

from .conftest import (
    GVISOR_THREADS,
    GVISOR_USERNS,
    HookWriter,
    Runner,
    cli,
    pooled,
    under_gvisor,
)

PY = "#!/usr/bin/env python3"
# Time bounds leave many times what a run takes here (a loaded 2-core machine: a kill at a
# deadline is over within 1 s; an output-cap kill, an OOM kill or a parse within 2 s).
SLACK = 30.0  # seconds past a deadline that still count as "ended on time"
QUICK = 25.0  # seconds: "long before the default 30 s deadline" (status says which ended it)
MiB = 1 << 20


# -- helpers ---------------------------------------------------------------------------


def only(result: dict[str, Any]) -> dict[str, Any]:
    assert len(result["hooks"]) == 1, result
    return dict(result["hooks"][0])


def seen(result: dict[str, Any]) -> Any:
    """What a probe hook reported: the JSON in its contextModification."""
    return json.loads(result["contextModification"])


def timed(run_hooks: Runner, **kwargs: Any) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    result = run_hooks(**kwargs)
    return result, time.monotonic() - started


def assert_next_hook_runs(hook: HookWriter, run_hooks: Runner) -> None:
    hook("""echo '{"contextModification": "next hook ran"}'""")
    result = run_hooks()
    assert only(result)["status"] == "completed", result
    assert result["contextModification"] == "next hook ran"


def tree(root: Path) -> dict[str, Any]:
    """Everything a write under `root` could change; symlinks are not followed."""
    found: dict[str, Any] = {".": (root.lstat().st_mode, root.lstat().st_mtime_ns)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                content: Any = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                content = path.read_bytes()
            else:
                content = None
            found[str(path.relative_to(root))] = (
                st.st_mode, st.st_uid, st.st_size, st.st_mtime_ns, content,
            )  # fmt: skip
    return found


def host_processes_with(token: str) -> list[int]:
    """Host pids whose command line contains `token`."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path("/proc", entry, "cmdline").read_bytes()
            except OSError:
                continue
            if token.encode() in cmdline:
                pids.append(int(entry))
    return pids


def own_process(cmdline: str) -> bool:
    """Whether a command line seen inside is one of the sandbox's own: init (docker-init or
    the image's helper), sh, the hook, sleep."""
    inits = ("/sbin/docker-init ", "/usr/local/bin/sandboxrun-seccomp ")
    return cmdline.startswith((*inits, "/bin/sh -c ", "python3 ", "sleep "))


def mine(engine: DockerBackend) -> list[dict[str, Any]]:
    """Containers labelled with this test process's pid (but the session backend's idle
    pool, on the warm test path)."""
    labels = {"label": [f"{LABEL}=1", f"sandboxrun.pid={os.getpid()}"]}
    idle = pooled(engine)
    return [c for c in engine.api.containers(all=True, filters=labels) if c["Id"] not in idle]


def wait_for_my_container(engine: DockerBackend) -> str:
    """The id of the (single) running container of this process, once it exists."""
    give_up = time.monotonic() + 60
    while time.monotonic() < give_up:
        running = [c for c in mine(engine) if c["State"] == "running"]
        if running:
            return str(running[0]["Id"])
        time.sleep(0.05)
    raise AssertionError("the hook's container never started")


def host_cpu_seconds(engine: DockerBackend, cid: str) -> float:
    """CPU time the container's cgroup has used, read on the host (cgroup v1 or v2)."""
    pid = engine.api.inspect_container(cid)["State"]["Pid"]
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            for folder in (controllers, "cpuacct", "cpu,cpuacct"):
                usage = Path(f"/sys/fs/cgroup/{folder}{path}/cpuacct.usage")
                if usage.exists():
                    return int(usage.read_text()) / 1e9
        if controllers == "" and path != "/":
            stat_file = Path(f"/sys/fs/cgroup{path}/cpu.stat")
            if stat_file.exists():
                usec = dict(row.split() for row in stat_file.read_text().splitlines())["usage_usec"]
                return int(usec) / 1e6
    pytest.skip(f"cannot find the cgroup CPU accounting of container {cid[:12]} on this host")


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The caller's environment with an empty HOME (which sandboxrun does not read)."""
    return {**os.environ, "HOME": str(tmp_path / "home"), **extra}


# -- resource exhaustion ---------------------------------------------------------------


@pytest.mark.runc_only(GVISOR_THREADS)
def test_thread_bomb_stops_at_the_pids_limit(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner
) -> None:
    """Python threads stop being created below the pids limit; the hook still answers."""
    hook(
        """
        import json, os, threading
        gate, n, error = threading.Event(), 0, None
        try:
            while True:
                threading.Thread(target=gate.wait, daemon=True).start()
                n += 1
        except RuntimeError as exc:
            error = str(exc)
        print(json.dumps({"contextModification": json.dumps({"threads": n, "error": error})}), flush=True)
        os._exit(0)
        """,
        shebang=PY,
    )
    result, elapsed = timed(run_hooks, timeout=20)
    assert only(result)["status"] == "completed", result
    got = seen(result)
    assert 16 < got["threads"] < engine.settings.pids, got
    assert "can't start new thread" in got["error"]
    assert elapsed < 20 + SLACK
    assert_next_hook_runs(hook, run_hooks)


@pytest.mark.runc_only(GVISOR_THREADS)
def test_fork_bomb_is_contained_and_killed_at_the_deadline(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner
) -> None:
    """A Python fork bomb stays below the pids limit and is timed_out at its 3 s deadline."""
    hook(
        """
        import os, signal
        n = 0
        try:
            while True:
                if os.fork() == 0:
                    signal.pause()
                    os._exit(0)
                n += 1
        except OSError as exc:
            os.write(2, f"children={n} {exc.strerror}\\n".encode())
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        shebang=PY,
    )
    result, elapsed = timed(run_hooks, timeout=3)
    report = only(result)
    assert (report["status"], report["exitCode"]) == ("timed_out", 137), report
    children = int(report["stderr"].split("children=")[1].split()[0])
    assert 0 < children < engine.settings.pids, report["stderr"]
    assert elapsed < 3 + SLACK, elapsed
    assert_next_hook_runs(hook, run_hooks)


def test_memory_bomb_is_oom_killed_at_the_default_limit(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """Touching 16 MiB after 16 MiB is OOM-killed at the default limit and reported as such."""
    hook(
        """
        import os
        hoard = []
        while True:
            hoard.append(b"\\x01" * (16 << 20))
            os.write(2, f"{16 * len(hoard)} MiB\\n".encode())
        """,
        shebang=PY,
    )
    result, elapsed = timed(run_hooks)
    report = only(result)
    assert (report["status"], report["exitCode"], report["oomKilled"]) == ("failed", 137, True), (
        report
    )
    assert report["error"] == "PreToolUse hook was killed: out of memory"
    assert result["cancel"] is False
    assert elapsed < QUICK, elapsed  # killed by the limit, long before the 30 s deadline
    assert_next_hook_runs(hook, run_hooks)


def test_work_spread_over_children_gets_one_cpu_and_ends_at_the_deadline(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner
) -> None:
    """Eight busy children together get at most the CPU quota, measured from the host's
    cgroup while they spin, and all die at the 12 s deadline."""
    hook("""
        for i in 1 2 3 4 5 6 7 8; do (while :; do :; done) & done
        sleep 600
    """)
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = time.monotonic()
        running = pool.submit(run_hooks, timeout=12)  # measuring takes 3 s of it
        cid = wait_for_my_container(engine)
        time.sleep(1)  # the children are spinning
        c0, t0 = host_cpu_seconds(engine, cid), time.monotonic()
        time.sleep(2)
        c1, t1 = host_cpu_seconds(engine, cid), time.monotonic()
        result = running.result()
        elapsed = time.monotonic() - started
    report = only(result)
    assert (report["status"], report["exitCode"]) == ("timed_out", 137), report
    ratio = (c1 - c0) / (t1 - t0)
    print(f"\nCPU used by 8 busy children under cpus={engine.settings.cpus}: {ratio:.2f} cores")
    assert ratio <= engine.settings.cpus * 1.25, ratio
    assert elapsed < 12 + SLACK, elapsed
    assert_next_hook_runs(hook, run_hooks)


def test_stdout_flood_without_newlines_is_killed_at_the_output_cap(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """One endless line (NUL bytes, no newline) is killed past output_limit, not at the deadline."""
    hook("cat /dev/zero")
    result, elapsed = timed(run_hooks)
    report = only(result)
    assert (report["status"], report["exitCode"], report["outputTruncated"]) == (
        "failed",
        137,
        True,
    ), report
    assert "output_limit" in report["error"]
    assert result["cancel"] is False
    assert elapsed < QUICK, elapsed
    assert_next_hook_runs(hook, run_hooks)


def test_stderr_flood_is_killed_and_reported_bounded(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner
) -> None:
    """Endless binary on stderr is killed past output_limit; the report keeps a bounded tail."""
    hook("cat /dev/urandom >&2")
    result, elapsed = timed(run_hooks)
    report = only(result)
    assert (report["status"], report["outputTruncated"]) == ("failed", True), report
    assert "output_limit" in report["error"]
    assert 0 < len(report["stderr"]) <= engine.settings.stderr_report
    assert elapsed < QUICK, elapsed
    assert_next_hook_runs(hook, run_hooks)


FILL = """
    import json, os
    filled = {}
    for folder in ("/tmp", os.environ["HOME"], "/dev/shm"):
        n = 0
        try:
            with open(os.path.join(folder, "fill"), "wb", buffering=0) as f:
                while True:
                    n += f.write(b"\\xaa" * (1 << 20))
        except OSError as exc:
            filled[folder] = [n, exc.strerror]
    disk = {"ext2", "ext3", "ext4", "xfs", "btrfs", "overlay", "zfs", "9p", "nfs", "fuse"}
    writable_on_disk = [
        line.split()[1:3] for line in open("/proc/mounts")
        if "rw" in line.split()[3].split(",") and line.split()[2] in disk
    ]
    print(json.dumps({"contextModification": json.dumps({"filled": filled, "disk": writable_on_disk})}))
"""


def test_tmp_home_and_shm_fill_up_in_memory_not_on_disk(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """/tmp, $HOME and /dev/shm stop at their tmpfs sizes, no writable mount is on disk,
    the host disk is unchanged, and the next run finds all three empty."""
    hook(FILL, shebang=PY)
    docker_root = "/var/lib/docker" if os.path.isdir("/var/lib/docker") else "/"
    free_before = shutil.disk_usage(docker_root).free
    result = run_hooks()
    free_after = shutil.disk_usage(docker_root).free
    assert only(result)["status"] == "completed", result
    got = seen(result)
    home = os.path.realpath(account_home())  # the user's path (issue #9 item 4)
    assert got["filled"] == {
        "/tmp": [64 * MiB, "No space left on device"],
        home: [64 * MiB, "No space left on device"],
        "/dev/shm": [16 * MiB, "No space left on device"],
    }, got
    assert got["disk"] == [], got  # every writable mount is memory (tmpfs)
    assert free_before - free_after < 100 * MiB  # 144 MiB were written, none of it to disk
    hook(
        """
        import json, os
        found = [os.path.join(d, f) for d in ("/tmp", os.environ["HOME"], "/dev/shm") for f in os.listdir(d)]
        print(json.dumps({"contextModification": json.dumps(found)}))
        """,
        shebang=PY,
    )
    leftovers = seen(run_hooks())
    assert not any(path.endswith("/fill") for path in leftovers), leftovers


def test_tmpfs_writes_count_against_the_memory_limit(hook: HookWriter, run_hooks: Runner) -> None:
    """Filling /tmp and $HOME (128 MiB) under a 96 MiB memory limit is an OOM kill."""
    hook(FILL, shebang=PY)
    report = only(run_hooks(memory="96m"))
    assert (report["status"], report["exitCode"], report["oomKilled"]) == ("failed", 137, True), (
        report
    )
    assert_next_hook_runs(hook, run_hooks)


def test_millions_of_tiny_files_end_at_the_memory_limit(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """Creating 3,000,000 empty files in /tmp is bounded: the inodes count as memory and
    the hook is OOM-killed within seconds (under gVisor: killed, at the limit or the
    deadline); its container is removed and the next hook runs. The limit is 128m here,
    so the kill comes after ~100,000 files, well within the deadline even on a loaded
    machine (at the default 512m a busy 2-core machine ran out of time first)."""
    hook(
        """
        import os
        for n in range(3_000_000):
            os.close(os.open(f"/tmp/{n}", os.O_CREAT | os.O_WRONLY, 0o600))
            if n % 100_000 == 0:
                os.write(2, f"files={n}\\n".encode())
        print('{"contextModification": "all created"}')
        """,
        shebang=PY,
    )
    result, elapsed = timed(run_hooks, timeout=60, memory="128m")
    report = only(result)
    assert "all created" not in result["contextModification"]
    if under_gvisor():
        # gVisor keeps /tmp in its own memory and charges it its own way: the sandbox ends
        # the hook at the memory limit (OOM, or the sandbox dying with it) or at the deadline.
        assert report["status"] in {"failed", "timed_out"} and report["exitCode"] != 0, report
    else:
        assert report["status"] == "failed" and report["oomKilled"] is True, report
    assert elapsed < 60 + SLACK, elapsed
    assert_next_hook_runs(hook, run_hooks)


def test_fd_exhaustion_stops_at_nofile(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner
) -> None:
    """Opening files stops at the nofile limit, which the hook cannot raise."""
    hook(
        """
        import json, resource
        files, error = [], None
        try:
            while True:
                files.append(open("/dev/null"))
        except OSError as exc:
            error = exc.strerror
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard * 4, hard * 4))
            raised = "raised"
        except (ValueError, OSError) as exc:
            raised = str(exc)
        print(json.dumps({"contextModification": json.dumps(
            {"opened": len(files), "error": error, "limit": [soft, hard], "raise": raised})}))
        """,
        shebang=PY,
    )
    result = run_hooks()
    assert only(result)["status"] == "completed", result
    got = seen(result)
    nofile = engine.settings.nofile
    assert got["limit"] == [nofile, nofile], got
    assert nofile - 16 < got["opened"] < nofile and got["error"] == "Too many open files", got
    assert got["raise"] != "raised", got
    assert_next_hook_runs(hook, run_hooks)


def cli_run_measured(
    workspace: Path, env: dict[str, str], config: Path
) -> tuple[dict[str, Any], float, float]:
    """Run `sandboxrun run` on `{}`; return its JSON, its peak RSS in MB (wait4) and seconds."""
    started = time.monotonic()
    proc = subprocess.Popen(
        cli("run", "PreToolUse", "--workspace", str(workspace), config=config),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(b"{}")
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)  # its output is one short line: no pipe deadlock
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - started
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == 0, err
    return json.loads(out), usage.ru_maxrss / 1024, elapsed


def test_sandboxrun_memory_stays_bounded_under_a_200mb_flood(
    engine: DockerBackend, workspace: Path, hook: HookWriter, tmp_path: Path
) -> None:
    """`sandboxrun run` streams 200 MB of hook stdout (cap raised to 256 MiB) with a peak RSS
    under 200 MB (measured with wait4, next to a trivial run's) and still finds the answer."""
    env = cli_env(tmp_path)
    config = tmp_path / "config.toml"
    runtime = f'runtime = "{engine.settings.runtime}"\n' if engine.settings.runtime else ""
    config.write_text(f"output_limit = {256 * MiB}\n{runtime}")
    hook("""echo '{"cancel": true}'""")
    _, baseline_mb, _ = cli_run_measured(workspace, env, config)
    hook("""
        head -c 200000000 /dev/zero
        printf '\\n{"cancel": true}\\n'
    """)
    result, peak_mb, elapsed = cli_run_measured(workspace, env, config)
    report = only(result)
    assert (report["status"], report["outputTruncated"], result["cancel"]) == (
        "completed",
        True,
        True,
    ), result
    print(f"\nsandboxrun peak RSS: {peak_mb:.1f} MB under a 200 MB flood ({elapsed:.2f} s),"
          f" {baseline_mb:.1f} MB for a trivial hook")  # fmt: skip
    assert peak_mb < 200, peak_mb


# -- persistence and escape ------------------------------------------------------------


def test_workspace_refuses_every_kind_of_write(
    hook: HookWriter, run_hooks: Runner, workspace: Path
) -> None:
    """Even in a world-writable folder the read-only mount refuses create, append, truncate,
    unlink, rename, chmod, utime, mkdir, symlink and link (EROFS), and nothing changes."""
    shared = workspace / "shared"
    shared.mkdir()
    (shared / "open.txt").write_text("original\n")
    os.chmod(shared / "open.txt", 0o666)
    os.chmod(shared, 0o777)
    hook(
        """
        import errno, json, os, sys
        d = os.path.join(json.load(sys.stdin)["workspaceRoots"][0], "shared")
        f = os.path.join(d, "open.txt")
        ops = {
            "create": lambda: open(os.path.join(d, "new"), "w"),
            "append": lambda: open(f, "a"),
            "truncate": lambda: os.truncate(f, 0),
            "unlink": lambda: os.unlink(f),
            "rename": lambda: os.rename(f, f + ".moved"),
            "chmod": lambda: os.chmod(f, 0o777),
            "utime": lambda: os.utime(f, (0, 0)),
            "mkdir": lambda: os.mkdir(os.path.join(d, "dir")),
            "symlink": lambda: os.symlink("/", os.path.join(d, "link")),
            "link": lambda: os.link(f, os.path.join(d, "hard")),
        }
        out = {}
        for name, op in ops.items():
            try:
                op()
                out[name] = "allowed"
            except OSError as exc:
                out[name] = errno.errorcode[exc.errno]
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    before = tree(workspace)
    result = run_hooks()
    assert tree(workspace) == before
    got = seen(result)
    # chmod and utime with explicit times need ownership too (the file is root's), so a
    # kernel that checks ownership first (gVisor) says EPERM: still refused.
    assert {got.pop("chmod"), got.pop("utime")} <= {"EROFS", "EPERM"}
    assert set(got.values()) == {"EROFS"}, got


def test_kernel_cgroup_and_device_interfaces_cannot_be_written(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """The hook cannot loosen its limits or poke the kernel: /proc/sys, sysrq, cgroup files,
    /dev and /etc all refuse writes."""
    hook(
        """
        import json, os
        targets = ["/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger",
                   "/proc/sys/kernel/core_pattern", "/dev/evil", "/etc/passwd", "/etc/ld.so.preload"]
        for root, _, files in os.walk("/sys/fs/cgroup"):
            targets += [os.path.join(root, f) for f in files
                        if f in ("memory.limit_in_bytes", "memory.max", "pids.max", "cpu.cfs_quota_us",
                                 "cpu.max", "cgroup.procs", "release_agent", "notify_on_release")]
        out = {}
        for t in targets:
            try:
                with open(t, "a") as f:
                    f.write("1\\n")
                out[t] = "written"
            except OSError as exc:
                out[t] = exc.strerror
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    got = seen(run_hooks())
    assert "/proc/sysrq-trigger" in got
    assert [t for t, r in got.items() if r == "written"] == [], got


def test_double_forked_daemons_do_not_outlive_the_hook(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner
) -> None:
    """A setsid+nohup daemon and a double-forked child holding stdout, both ignoring
    HUP/TERM, neither hold the run nor survive it: no host process and no container remains."""
    token = uuid.uuid4().hex
    hook(r"""
        tok=$(jq -r .token)
        ( setsid nohup bash -c "trap '' HUP TERM INT; exec -a daemon-$tok sleep 300" </dev/null >/dev/null 2>&1 & )
        ( ( trap '' HUP TERM INT; exec -a holder-$tok sleep 300 ) & )
        sleep 0.5
        alive=$(grep -laE -- "^(daemon|holder)-$tok" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)
        echo "{\"contextModification\": \"$alive alive\"}"
    """)
    result, elapsed = timed(run_hooks, event={"token": token}, timeout=30)
    assert only(result)["status"] == "completed", result
    assert result["contextModification"] == "2 alive"  # both were running when the hook exited
    assert elapsed < QUICK, elapsed  # the holder of stdout did not keep the run open
    assert host_processes_with(token) == []
    assert mine(engine) == []


def test_symlinks_in_the_workspace_do_not_reach_host_files(
    hook: HookWriter, run_hooks: Runner, workspace: Path, tmp_path: Path
) -> None:
    """Symlinks to a host secret (absolute, relative, via its folder) and to `/` resolve inside
    the container: the secret is never read, `/` is the container's own root."""
    secret = tmp_path / "secret" / "token.txt"
    secret.parent.mkdir()
    token = f"HOST-SECRET-{uuid.uuid4().hex}"
    secret.write_text(token)
    secret.chmod(0o644)  # readable by anyone: only the sandbox keeps it out
    (workspace / "link-file").symlink_to(secret)
    (workspace / "link-rel").symlink_to("../secret/token.txt")
    (workspace / "link-dir").symlink_to(secret.parent)
    (workspace / "link-root").symlink_to("/")
    hook(
        """
        import json, os, sys
        secret = json.load(sys.stdin)["secret"]
        out = {}
        for path in ["link-file", "link-rel", "link-dir/token.txt", "link-root" + secret]:
            try:
                out[path] = ["read", open(path).read()]
            except OSError as exc:
                out[path] = ["error", exc.strerror]
        out["root-is-own"] = sorted(os.listdir("link-root")) == sorted(os.listdir("/"))
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    before = tree(workspace)
    result = run_hooks(event={"secret": str(secret)})
    assert tree(workspace) == before
    got = seen(result)
    assert token not in json.dumps(result)
    assert got.pop("root-is-own") is True, got
    assert all(kind == "error" for kind, _ in got.values()), got
    direct = [got[p] for p in ("link-file", "link-rel", "link-dir/token.txt")]
    assert direct == [["error", "No such file or directory"]] * 3, got


def test_hardlink_to_a_host_file_is_readable_but_stays_read_only(
    hook: HookWriter, run_hooks: Runner, workspace: Path, tmp_path: Path
) -> None:
    """A hardlink IS the host file's inode, so its content is readable inside: that is the
    user's own workspace content, which sandboxrun cannot hide without copying the
    workspace (documented, not a leak it can prevent) — but it cannot be written."""
    outside = tmp_path / "outside.txt"
    outside.write_text("host file content\n")
    outside.chmod(0o666)  # world-writable: only the read-only mount protects it
    os.link(outside, workspace / "hardlink.txt")
    hook(
        """
        import json
        out = {"read": open("hardlink.txt").read()}
        for mode in ("a", "r+", "w"):
            try:
                open("hardlink.txt", mode).write("changed by the hook\\n")
                out[mode] = "written"
            except OSError as exc:
                out[mode] = exc.strerror
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    got = seen(run_hooks())
    assert got == {
        "read": "host file content\n",
        "a": "Read-only file system",
        "r+": "Read-only file system",
        "w": "Read-only file system",
    }
    assert outside.read_text() == "host file content\n"


@pytest.fixture
def nested_mount(workspace: Path) -> Iterator[Path]:
    """A tmpfs mounted (on the host, as root) inside the workspace, with a world-writable file."""
    if os.geteuid() != 0:
        pytest.skip("mounting a nested tmpfs needs root")
    nested = workspace / "nested"
    nested.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=1777", "sandboxrun-hostile", str(nested)],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        (nested / "file.txt").write_text("original\n")
        (nested / "file.txt").chmod(0o666)
        yield nested
    finally:
        if subprocess.run(["umount", str(nested)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(nested)], capture_output=True)


def test_nested_mount_in_the_workspace_is_read_only(
    hook: HookWriter, run_hooks: Runner, nested_mount: Path
) -> None:
    """A filesystem mounted inside the workspace is read-only inside the sandbox too."""
    hook(
        """
        import json
        out = {}
        for name, mode in (("new.txt", "w"), ("file.txt", "a")):
            try:
                open(f"nested/{name}", mode).write("written by the hook\\n")
                out[name] = "written"
            except OSError as exc:
                out[name] = exc.strerror
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    before = tree(nested_mount)
    result = run_hooks()
    assert tree(nested_mount) == before, "the hook changed a host filesystem"
    assert set(seen(result).values()) == {"Read-only file system"}


def test_workspace_given_as_a_symlink_is_mounted_read_only_at_that_path(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """A workspace path that is a symlink to the real folder is mounted at the given path,
    readable, the working directory, and read-only."""
    link = tmp_path / "ws-link"
    link.symlink_to(workspace)
    workspace.chmod(0o777)  # only the read-only mount can refuse a new file
    hook(r"""
        touch made-by-hook 2>&1 >/dev/null | grep -q 'Read-only file system' && ro=yes || ro=no
        echo "{\"contextModification\": \"$(pwd) $(head -c 10 README.md) ro=$ro\"}"
    """)
    before = tree(workspace)
    factory = HookFactory(engine.settings, engine, home=str(tmp_path / "home"))
    result = factory.run("PreToolUse", {}, [str(link)]).to_json()
    assert only(result)["status"] == "completed", result
    assert result["contextModification"] == f"{link} hello from ro=yes"
    assert tree(workspace) == before


@pytest.mark.parametrize("target", ["absolute", "relative"])
def test_hook_file_symlinked_outside_its_folder_never_runs_the_target(
    hook: HookWriter, run_hooks: Runner, workspace: Path, tmp_path: Path, target: str
) -> None:
    """A hook file that is a symlink to a host script outside the mounts: Cline's SDK rules
    skip it; under the VS Code extension's it is found on the host (discovery stats
    through it) but the target does not exist inside: the preflight says so and the hook
    is not run (an error, a cancel under fail-closed). The host script is never run."""
    outside = tmp_path / "outside" / "evil.sh"
    outside.parent.mkdir()
    outside.write_text(
        '#!/bin/sh\necho \'{"cancel": true, "errorMessage": "outside target ran"}\'\n'
    )
    outside.chmod(0o755)
    link = workspace / ".clinerules" / "hooks" / "PreToolUse"
    link.symlink_to(outside if target == "absolute" else os.path.relpath(outside, link.parent))
    # Cline's SDK/CLI (the default rules) skips a symlinked hook file: no hook at all.
    result = run_hooks()
    assert result["hooks"] == [] and "outside target ran" not in json.dumps(result), result
    # The VS Code extension follows it: found, but its target is not inside.
    result = run_hooks(cline_variant="vscode")
    report = only(result)
    assert (report["status"], report["exitCode"]) == ("error", None), report
    assert report["error"] == f"not run: {link} is not mounted (it links to {os.readlink(link)})"
    assert result["cancel"] is False and "outside target ran" not in json.dumps(result)


@pytest.mark.runc_only(GVISOR_USERNS)
def test_setuid_binaries_su_and_sudo_gain_nothing(hook: HookWriter, run_hooks: Runner) -> None:
    """sudo is absent; setuid-root su runs with the hook's uid (no-new-privileges) and fails;
    the mount and unshare tools fail: nothing ever runs as uid 0."""
    hook(
        """
        import json, os, shutil, subprocess, time
        def run(*argv):
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
            return [p.returncode, p.stdout.strip()]
        out = {"me": os.getuid(), "sudo": shutil.which("sudo")}
        out["su"] = run("su", "-c", "id -u", "root")
        waiting = subprocess.Popen(["su", "root"], stdin=subprocess.PIPE,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        try:
            status = open(f"/proc/{waiting.pid}/status").read().splitlines()
            out["su_uids"] = next(l.split()[1:] for l in status if l.startswith("Uid:"))
        except OSError as exc:
            out["su_uids"] = exc.strerror
        waiting.kill()
        out["mount"] = run("mount", "-t", "tmpfs", "none", "/tmp")
        out["unshare"] = run("unshare", "-r", "id", "-u")
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    got = seen(run_hooks())
    me = str(got["me"])
    assert got["me"] != 0 and got["sudo"] is None, got
    assert got["su"][0] != 0 and got["su"][1] != "0", got
    assert got["su_uids"] == [me] * 4, got  # setuid bit ignored: real, effective, saved, fs
    assert got["mount"][0] != 0, got
    assert got["unshare"][0] != 0 and got["unshare"][1] != "0", got


# Raw syscalls: (x86_64 number, aarch64 number), args as ints or bytes (passed as pointers).
_IO_URING_PARAMS = b"\0" * 120
_BPF_ARRAY_MAP = b"".join(n.to_bytes(4, "little") for n in (2, 4, 4, 1)) + b"\0" * 112
_PERF_SW_CLOCK = (1).to_bytes(4, "little") + (128).to_bytes(4, "little") + b"\0" * 120
_FILE_HANDLE = (8).to_bytes(4, "little") + (1).to_bytes(4, "little") + b"\0" * 8
AT_FDCWD = -100
SYSCALLS = [
    pytest.param((165, 40), [b"none", b"/tmp", b"tmpfs", 0, 0], id="mount"),
    pytest.param(
        (272, 97), [0x10000000], id="unshare-user", marks=pytest.mark.runc_only(GVISOR_USERNS)
    ),
    pytest.param(
        (272, 97), [0x00020000], id="unshare-mount", marks=pytest.mark.runc_only(GVISOR_USERNS)
    ),
    pytest.param((250, 219), [0, -3, 1], id="keyctl"),
    pytest.param((248, 217), [b"user", b"hostile", b"value", 5, -2], id="add_key"),
    pytest.param((321, 280), [0, _BPF_ARRAY_MAP, len(_BPF_ARRAY_MAP)], id="bpf"),
    pytest.param((298, 241), [_PERF_SW_CLOCK, 0, -1, -1, 0], id="perf_event_open"),
    pytest.param((323, 282), [0], id="userfaultfd"),
    pytest.param((304, 265), [AT_FDCWD, _FILE_HANDLE, 0], id="open_by_handle_at"),
    pytest.param((175, 105), [b"\0" * 64, 64, b""], id="init_module"),
    pytest.param((161, 51), [b"/tmp"], id="chroot"),
    pytest.param((105, 146), [0], id="setuid-0"),
    pytest.param(
        (259, 33),
        [AT_FDCWD, b"/tmp/mem", 0o020600, (1 << 8) | 1],
        id="mknod-chardev",
        marks=pytest.mark.runc_only(
            "gVisor's tmpfs accepts mknod; the node opens onto gVisor's own emulated devices, never a host one"
        ),
    ),
    pytest.param((425, 425), [4, _IO_URING_PARAMS], id="io_uring_setup"),
]
IO_URING_KNOWN = (
    "KNOWN WEAKNESS: the engine's seccomp profile allows io_uring_setup (Docker < 25) and the"
    " image has no sandboxrun.seccomp-helper to deny it; `doctor` warns about it"
)


@pytest.mark.parametrize(("numbers", "args"), SYSCALLS)
def test_privileged_syscall_is_denied(
    hook: HookWriter, run_hooks: Runner, numbers: tuple[int, int], args: list[Any]
) -> None:
    """A raw syscall through ctypes that could widen the sandbox is refused or unsupported."""
    hook(
        """
        import ctypes, errno, json, platform, sys
        call = json.load(sys.stdin)["call"]
        nr = call["nr"][0 if platform.machine() == "x86_64" else 1]
        args = [ctypes.create_string_buffer(bytes.fromhex(a[1:])) if isinstance(a, str)
                else ctypes.c_long(a) for a in call["args"]]
        libc = ctypes.CDLL(None, use_errno=True)
        ret = libc.syscall(ctypes.c_long(nr), *args)
        got = f"returned {ret}" if ret >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
        print(json.dumps({"contextModification": got}))
        """,
        shebang=PY,
    )
    encoded = [f"x{a.hex()}" if isinstance(a, bytes) else a for a in args]
    result = run_hooks(event={"call": {"nr": list(numbers), "args": encoded}})
    assert only(result)["status"] == "completed", result
    denied = {"EPERM", "EACCES", "ENOSYS", "ENODEV", "EOPNOTSUPP", "ENOTSUP"}
    if numbers == (425, 425) and result["contextModification"].startswith("returned"):
        if under_gvisor():
            return  # gVisor implements io_uring itself: the host kernel's is never reached
        pytest.xfail(IO_URING_KNOWN)
    assert result["contextModification"] in denied, result["contextModification"]


def test_ptrace_cannot_reach_any_process_outside_the_sandbox(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """Only the sandbox's own processes are visible and host pids (pytest, dockerd) cannot be
    signalled or traced (ESRCH); tracing its own PID 1 is allowed (same user, same sandbox),
    which the next test shows cannot outlive the deadline."""
    host_pids = [
        os.getpid(),
        *host_processes_with("dockerd")[:1],
        *host_processes_with("containerd")[:1],
    ]
    hook(
        """
        import ctypes, errno, json, os, sys
        libc = ctypes.CDLL(None, use_errno=True)
        out = {"procs": {}, "host": {}}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                out["procs"][pid] = open(f"/proc/{pid}/cmdline").read().replace("\\0", " ")
            except OSError:
                pass
        for pid in json.load(sys.stdin)["pids"]:
            try:
                os.kill(pid, 0)
                kill = "signalled"
            except OSError as exc:
                kill = errno.errorcode[exc.errno]
            ret = libc.ptrace(ctypes.c_long(0x4206), ctypes.c_long(pid), None, None)  # PTRACE_SEIZE
            trace = "traced" if ret == 0 else errno.errorcode[ctypes.get_errno()]
            out["host"][str(pid)] = [kill, trace]
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    got = seen(run_hooks(event={"pids": host_pids}))
    assert got["host"] and all(v == ["ESRCH", "ESRCH"] for v in got["host"].values()), got
    assert all(own_process(cmdline) for cmdline in got["procs"].values()), got["procs"]


@pytest.mark.runc_only(
    "a ptrace-stopped init does not keep a gVisor sandbox alive: the run completes early"
)
def test_ptrace_stopping_pid_1_still_ends_at_the_deadline(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """A hook that ptrace-stops the container's init (so nothing reaps it) is still killed at
    its 3 s deadline and reported timed_out; the image's helper, as init, refuses the trace."""
    hook(
        """
        import ctypes, time
        if ctypes.CDLL(None).ptrace(ctypes.c_long(16), ctypes.c_long(1), None, None) == 0:
            time.sleep(1)  # PTRACE_ATTACH worked: init is stopped, the hook ends
            print('{"contextModification": "init stopped"}')
        else:
            print('{"contextModification": "refused"}')
        """,
        shebang=PY,
    )
    result, elapsed = timed(run_hooks, timeout=3)
    report = only(result)
    if result["contextModification"] != "refused":
        assert (report["status"], report["exitCode"]) == ("timed_out", 137), report
    assert elapsed < 3 + SLACK, elapsed
    assert_next_hook_runs(hook, run_hooks)


def test_no_docker_socket_anywhere_inside(hook: HookWriter, run_hooks: Runner) -> None:
    """No Docker or containerd socket exists or answers inside, and DOCKER_HOST is unset."""
    hook(
        """
        import json, os, socket, stat
        out = {"DOCKER_HOST": os.environ.get("DOCKER_HOST"), "sockets": [], "connect": {}}
        for root, dirs, files in os.walk("/"):
            if root == "/":
                dirs[:] = [d for d in dirs if d not in ("proc", "sys")]
            for name in files + dirs:
                try:
                    if stat.S_ISSOCK(os.lstat(os.path.join(root, name)).st_mode):
                        out["sockets"].append(os.path.join(root, name))
                except OSError:
                    pass
        for path in ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
                     "/var/run/docker/containerd/containerd.sock"):
            try:  # the image's helper denies AF_UNIX sockets: socket() fails
                socket.socket(socket.AF_UNIX).connect(path)
                out["connect"][path] = "connected"
            except OSError as exc:
                out["connect"][path] = exc.strerror
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    got = seen(run_hooks())
    assert got["DOCKER_HOST"] is None and got["sockets"] == [], got
    assert set(got["connect"].values()) <= {"No such file or directory", "Operation not permitted"}


# -- information -----------------------------------------------------------------------


def test_host_secrets_reach_no_process_through_the_cli(
    engine: DockerBackend, workspace: Path, hook: HookWriter, tmp_path: Path
) -> None:
    """Secrets in the environment of `sandboxrun run` appear in no process's environ or
    command line inside, and the hook's variables are the fixed allowlist."""
    secret = f"hostile-secret-{uuid.uuid4().hex}"
    hook(
        """
        import json, os
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            for part in ("environ", "cmdline"):
                try:
                    if b"hostile-secret-" in open(f"/proc/{pid}/{part}", "rb").read():
                        found.append(f"{pid}/{part}")
                except OSError:
                    pass
        print(json.dumps({"contextModification": json.dumps({"found": found, "env": sorted(os.environ)})}))
        """,
        shebang=PY,
    )
    env = cli_env(
        tmp_path, AWS_SECRET_ACCESS_KEY=secret, GITHUB_TOKEN=secret, DOCKER_HOST_SECRET=secret
    )
    done = subprocess.run(
        cli("run", "PreToolUse", "--workspace", str(workspace)),
        input=b"{}", capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert secret not in done.stdout.decode()
    got = seen(result)
    assert got["found"] == [], got
    assert set(got["env"]) <= {"HOME", "PATH", "LANG", "TMPDIR", "HOSTNAME", "PWD", "SHLVL", "_"}, (
        got
    )


def test_kernel_memory_and_firmware_are_unreadable(hook: HookWriter, run_hooks: Runner) -> None:
    """/proc/kcore, /dev/mem, kernel logs and /sys/firmware give nothing: absent, refused or empty."""
    hook(
        """
        import json, os
        out = {}
        for path in ("/proc/kcore", "/dev/mem", "/dev/kmem", "/proc/kmsg", "/dev/kmsg"):
            try:
                with open(path, "rb") as f:
                    out[path] = len(f.read(4096))
            except OSError as exc:
                out[path] = exc.strerror
        for path in ("/sys/firmware", "/sys/kernel/debug", "/sys/kernel/security"):
            try:
                out[path] = len(os.listdir(path))
            except OSError as exc:
                out[path] = exc.strerror
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    got = seen(run_hooks())
    leaked = {path: v for path, v in got.items() if isinstance(v, int) and v > 0}
    assert leaked == {}, got


def test_concurrent_sandboxes_cannot_see_each_other(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """A global and a workspace hook running at the same time each see only their own
    processes and /tmp, and the workspace hook cannot see the global hook's folder."""
    global_folder = tmp_path / "home" / "Documents" / "Cline" / "Hooks"
    global_folder.mkdir(parents=True)
    probe = hook(
        """
        import json, os, subprocess, sys, time
        start = time.time()
        event = json.load(sys.stdin)
        me = "global" if sys.argv[0].startswith(event["global_folder"]) else "workspace"
        open(f"/tmp/marker-{me}", "w").close()
        child = subprocess.Popen(["sleep", "3131" if me == "global" else "3232"])
        time.sleep(6)  # both are running by then, however slowly each one started
        procs = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                procs.append(open(f"/proc/{pid}/cmdline").read().replace("\\0", " "))
            except OSError:
                pass
        seen = {"me": me, "procs": procs, "tmp": sorted(os.listdir("/tmp")),
                "global_folder": os.path.exists(event["global_folder"]), "span": [start, time.time()]}
        child.kill()
        print(json.dumps({"contextModification": json.dumps(seen)}))
        """,
        shebang=PY,
    )
    shutil.copy(probe, global_folder / "PreToolUse")
    factory = HookFactory(engine.settings, engine, home=str(tmp_path / "home"))
    event = {"global_folder": str(global_folder)}
    result = factory.run("PreToolUse", event, [str(workspace)]).to_json()
    assert [h["status"] for h in result["hooks"]] == ["completed", "completed"], result
    views = {v["me"]: v for v in map(json.loads, result["contextModification"].split("\n\n"))}
    g, w = views["global"], views["workspace"]
    assert max(g["span"][0], w["span"][0]) < min(g["span"][1], w["span"][1]), "did not overlap"
    assert any("sleep 3131" in p for p in g["procs"]) and not any(
        "sleep 3232" in p for p in g["procs"]
    )
    assert any("sleep 3232" in p for p in w["procs"]) and not any(
        "sleep 3131" in p for p in w["procs"]
    )
    for view in (g, w):
        assert all(own_process(p) for p in view["procs"]), view
        assert [t for t in view["tmp"] if t.startswith("marker-")] == [f"marker-{view['me']}"], view
    assert (g["global_folder"], w["global_folder"]) == (True, False)


def test_no_network_by_name_ip_metadata_gateway_ipv6_raw_or_host_sockets(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner
) -> None:
    """Every way out fails inside: a domain, raw IPv4/IPv6, 169.254.169.254, the Docker
    gateway, UDP DNS, raw/packet sockets and the host's abstract unix sockets."""
    bridge = engine.api.inspect_network("bridge")
    gateway = (bridge.get("IPAM", {}).get("Config") or [{}])[0].get("Gateway", "172.17.0.1")
    abstract = sorted(
        {line.split()[-1][1:] for line in Path("/proc/net/unix").read_text().splitlines()[1:]
         if line.split()[-1].startswith("@")}
    )[:20]  # fmt: skip
    hook(
        """
        import json, socket, sys
        event = json.load(sys.stdin)
        out = {}
        def attempt(name, fn):
            try:
                fn()
                out[name] = "reached"
            except OSError as exc:
                out[name] = type(exc).__name__ + ":" + str(exc.errno)
        def tcp(host, port, family=socket.AF_INET):
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(3)
            try:
                s.connect((host, port))
            finally:
                s.close()
        def udp_dns():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(3)
            s.sendto(b"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07example\\x03com\\x00\\x00\\x01\\x00\\x01", ("8.8.8.8", 53))
            s.recvfrom(512)
        attempt("domain", lambda: socket.create_connection(("example.com", 443), timeout=3))
        attempt("dns", lambda: socket.getaddrinfo("example.com", 443))
        attempt("metadata-name", lambda: socket.getaddrinfo("metadata.google.internal", 80))
        attempt("ipv4", lambda: tcp("1.1.1.1", 443))
        attempt("metadata", lambda: tcp("169.254.169.254", 80))
        for port in (22, 80, 2375, 2376):
            attempt(f"gateway:{port}", lambda port=port: tcp(event["gateway"], port))
        attempt("ipv6", lambda: tcp("2606:4700:4700::1111", 443, socket.AF_INET6))
        attempt("udp-dns", udp_dns)
        attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
        attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
        for name in event["abstract"]:
            attempt("@" + name, lambda name=name: socket.socket(socket.AF_UNIX).connect("\\0" + name))
        ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]]
        print(json.dumps({"contextModification": json.dumps({"tries": out, "ifaces": ifaces})}))
        """,
        shebang=PY,
    )
    result, elapsed = timed(run_hooks, event={"gateway": gateway, "abstract": abstract})
    got = seen(result)
    reached = [name for name, r in got["tries"].items() if r == "reached"]
    assert reached == [], got
    assert got["ifaces"] == ["lo"], got
    assert elapsed < 30 + SLACK, elapsed


# -- output handling -------------------------------------------------------------------


BIG_JSON = """
    import sys
    out = sys.stdout.buffer
    out.write(b'{"contextModification": "')
    for _ in range(100):
        out.write(b"a" * (1 << 20))
    out.write(b'", "cancel": true}\\n')
"""


def test_100mb_of_valid_json_is_killed_at_the_default_output_cap(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """100 MB of valid JSON passes the 16 MiB default cap: killed, failed, no answer, quickly."""
    hook(BIG_JSON, shebang=PY)
    result, elapsed = timed(run_hooks)
    report = only(result)
    assert (report["status"], report["outputTruncated"]) == ("failed", True), report
    assert "output_limit" in report["error"]
    assert result["cancel"] is False and result["contextModification"] == ""
    assert elapsed < QUICK, elapsed


def test_100mb_of_valid_json_under_a_raised_cap_is_tail_parsed_without_crash(
    hook: HookWriter, run_hooks: Runner
) -> None:
    """With the cap raised to 128 MiB the hook completes; only the 1 MiB tail is kept, which is
    not a whole object, so the answer is 'no JSON object' (cancel false), not a crash."""
    hook(BIG_JSON, shebang=PY)
    result, elapsed = timed(run_hooks, output_limit=128 * MiB)
    report = only(result)
    assert (report["status"], report["exitCode"], report["outputTruncated"]) == (
        "completed",
        0,
        True,
    ), report
    assert "no JSON object" in report["error"]
    assert result["cancel"] is False and result["contextModification"] == ""
    assert elapsed < 30 + SLACK, elapsed


def test_json_nested_100000_deep_is_no_answer(hook: HookWriter, run_hooks: Runner) -> None:
    """An object nested 100,000 deep (RecursionError in json) is treated as no answer."""
    hook(
        """
        import sys
        sys.stdout.write('{"cancel": true, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\\n")
        """,
        shebang=PY,
    )
    result, elapsed = timed(run_hooks)
    report = only(result)
    assert (report["status"], report["exitCode"]) == ("completed", 0), report
    assert "no JSON object" in report["error"]
    assert result["cancel"] is False
    assert elapsed < QUICK, elapsed


def test_million_digit_integer_is_no_answer(hook: HookWriter, run_hooks: Runner) -> None:
    """An integer with a million digits is refused by Python's int-size guard (no quadratic
    parse, no crash) and treated as no answer."""
    hook(
        """
        import sys
        sys.stdout.write('{"cancel": true, "n": ' + "7" * 1_000_000 + "}\\n")
        """,
        shebang=PY,
    )
    result, elapsed = timed(run_hooks)
    report = only(result)
    assert (report["status"], report["exitCode"]) == ("completed", 0), report
    assert "no JSON object" in report["error"]
    assert result["cancel"] is False
    assert elapsed < QUICK, elapsed


def test_binary_and_invalid_utf8_output_is_data(hook: HookWriter, run_hooks: Runner) -> None:
    """Binary junk and invalid UTF-8 on stdout and stderr are decoded with replacement; the
    final JSON line is still the answer."""
    hook(r"""
        printf '\xff\xfe\x00\x01\xc3\x28 junk\n'
        head -c 4096 /dev/urandom
        printf '\n{"cancel": true, "errorMessage": "ok"}\n'
        printf 'bad \xff\xc3\x28 bytes \x00\n' >&2
    """)
    result = run_hooks()
    report = only(result)
    assert report["status"] == "completed", report
    assert (result["cancel"], result["errorMessage"]) == (True, "ok")
    assert report["stderr"] == "bad \ufffd\ufffd( bytes \x00\n"


def test_terminal_escapes_in_stderr_stay_data_in_the_cli_json(
    engine: DockerBackend, workspace: Path, hook: HookWriter, tmp_path: Path
) -> None:
    """Escape sequences and invalid UTF-8 in a hook's stderr come back escaped inside the one
    JSON line of `sandboxrun run`; sandboxrun's own stderr carries none of them."""
    hook(r"""
        printf '\033]0;PWNED\007\033[2J\033[31mred\033[0m \xff\xfe\n' >&2
        echo '{"cancel": false}'
    """)
    done = subprocess.run(
        cli("run", "PreToolUse", "--workspace", str(workspace)),
        input=b"{}", capture_output=True, env=cli_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split(b"\n")
    assert lines[1:] == [b""] and b"\x1b" not in done.stdout and b"\x07" not in done.stdout
    report = only(json.loads(lines[0]))
    assert report["stderr"] == "\x1b]0;PWNED\x07\x1b[2J\x1b[31mred\x1b[0m \ufffd\ufffd\n"
    assert b"\x1b" not in done.stderr


def test_list_does_not_print_terminal_escapes_from_file_names(
    workspace: Path, tmp_path: Path
) -> None:
    """A hook-like file name carrying escape sequences is shown escaped by `sandboxrun list`."""
    evil = "PreToolUse.\x1b]0;PWNED\x07\x1b[2J"
    (workspace / ".clinerules" / "hooks" / evil).write_text("#!/bin/sh\n")
    done = subprocess.run(
        cli("list", "--workspace", str(workspace)),
        capture_output=True, env=cli_env(tmp_path), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"PreToolUse." in done.stdout  # the near-miss is listed...
    assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout  # ...but defanged


@pytest.mark.parametrize(("sig", "code"), [("KILL", 137), ("SEGV", 139), ("ABRT", 134)])
def test_death_by_signal_is_reported_with_its_exit_code(
    hook: HookWriter, run_hooks: Runner, sig: str, code: int
) -> None:
    """A hook killing itself with a signal is failed with exit 128+signal, not OOM or timeout.
    What it printed first still cancels for Cline's SDK (its `tool_call`: it reads stdout
    whatever the exit), never for the VS Code extension (its `PreToolUse`: it reads no
    failed hook's stdout)."""
    hook(f"""
        echo '{{"cancel": true}}'
        kill -{sig} $$
        echo '{{"contextModification": "survived"}}'
    """)
    for event, cancel, read in (("tool_call", True, "; Cline's SDK/CLI reads its answer all the same"),
                                ("PreToolUse", False, "")):  # fmt: skip
        result = run_hooks(event)
        report = only(result)
        assert (report["status"], report["exitCode"]) == ("failed", code), report
        assert (report["oomKilled"], report["outputTruncated"]) == (False, False)
        assert report["error"] == f"PreToolUse hook exited with code {code}{read}"
        assert result["cancel"] is cancel


# -- lifecycle -------------------------------------------------------------------------


@pytest.mark.runc_only(
    "once in five CI runs, 50 concurrent sandboxes under Debian's 2022 runsc with dockerd"
    " 20.10 lost their shims and stayed 'Up', unremovable until dockerd restarted"
)
def test_fifty_concurrent_runs_get_exactly_their_own_answers(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """50 API calls at once on one backend: no name collision, each hook echoes back exactly
    the token it got on stdin, and no container of this process remains."""
    hook(r"""
        tok=$(jq -r .token)
        echo "{\"contextModification\": \"$tok\"}"
    """)
    factory = HookFactory(engine.settings, engine, home=str(tmp_path / "home"))
    tokens = [uuid.uuid4().hex for _ in range(50)]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(
            pool.map(
                lambda t: factory.run("PreToolUse", {"token": t}, [str(workspace)]).to_json(),
                tokens,
            )
        )
    elapsed = time.monotonic() - started
    print(f"\n50 concurrent runs took {elapsed:.2f} s")
    statuses = [only(r)["status"] for r in results]
    assert statuses == ["completed"] * 50, [
        only(r) for r in results if only(r)["status"] != "completed"
    ][:3]
    assert [r["contextModification"] for r in results] == tokens
    engine.close()  # the containers are removed after the answers: wait for that
    assert mine(engine) == []
