"""The warm path against the real engine (issue #10, items 2 and 4): containers started
ahead of time wait at a gate, serve one event each, and behave like cold ones.

These need an image whose helper has the gate (label sandboxrun.helper-gate=1): the
default image once rebuilt, or SANDBOX_TEST_IMAGE."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from sandboxrun import DockerBackend, ExecRequest, ExecResult, HookFactory, SandboxrunError
from sandboxrun._backends.docker.stream import Run
from sandboxrun._backends.labels import MANAGED as LABEL
from sandboxrun._sandbox.state import hook_ids

from .conftest import HookWriter, engine_settings, pooled, under_gvisor

WAIT = 120.0  # seconds a pre-start may take on a loaded machine (no speed is asserted)


@pytest.fixture
def warm(engine: DockerBackend) -> Iterator[DockerBackend]:
    backend = DockerBackend(engine_settings(), client=engine.client, warm=True)
    backend.claim_wait = WAIT
    helper = backend._seccomp_helper()
    if helper is None or not helper.gate:
        backend.close()
        message = f"{backend.settings.image}: its helper has no gate (set SANDBOX_TEST_IMAGE)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    with backend:
        yield backend
    mine = {"label": [f"{LABEL}=1", f"sandboxrun.pid={os.getpid()}"]}
    left = engine.api.containers(all=True, filters=mine)
    assert [c for c in left if c["Id"] not in pooled(engine)] == [], "close() left containers"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace the hook's user can read (tmp_path itself is private to us)."""
    path = tmp_path / "ws"
    path.mkdir(mode=0o755)
    return path


@pytest.fixture
def cold(engine: DockerBackend) -> DockerBackend:
    return DockerBackend(engine_settings(), client=engine.client)


def request(ws: Path, script: str, stdin: bytes = b"{}", **kw: Any) -> ExecRequest:
    return ExecRequest(
        argv=("/bin/bash", "-c", script), stdin=stdin, workdir=str(ws), mounts=(str(ws),),
        timeout=kw.pop("timeout", 20.0), label="test", **kw,
    )  # fmt: skip


def warm_run(backend: DockerBackend, req: ExecRequest) -> ExecResult:
    assert backend.prewarm(req, wait=WAIT), "no pooled container started"
    result = backend.run(req)
    assert result.warm, result
    return result


def test_the_hook_starts_only_when_its_event_is_delivered(warm: DockerBackend, ws: Path) -> None:
    """A hook that looks at the workspace and the clock before reading stdin sees the
    workspace as it is at delivery and a time after it, however long its container
    waited; its deadline counts from delivery too."""
    (ws / "state").write_text("at pool start")
    req = request(ws, "date +%s.%N; cat state; echo; cat")
    assert warm.prewarm(req, wait=WAIT)
    time.sleep(2)  # the container waits at its gate meanwhile
    (ws / "state").write_text("at delivery")
    delivered = time.time()
    result = warm.run(replace(req, stdin=b"the event"))
    assert result.warm and result.exit_code == 0, result
    stamp, state, event = result.stdout.decode().splitlines()
    assert float(stamp) >= delivered - 0.05, (stamp, delivered)  # clocks: same kernel
    assert (state, event) == ("at delivery", "the event")


def test_a_hook_that_ignores_stdin_runs_only_after_delivery(warm: DockerBackend, ws: Path) -> None:
    req = request(ws, "date +%s.%N")
    assert warm.prewarm(req, wait=WAIT)
    time.sleep(2)
    delivered = time.time()
    result = warm.run(req)
    assert result.warm and float(result.stdout) >= delivered - 0.05, (result, delivered)


def test_each_container_serves_one_event(warm: DockerBackend, ws: Path) -> None:
    """Marks left in /tmp and $HOME are never found by a later run, and no two runs share
    a container (hostname = container id)."""
    script = """
        found=$(ls /tmp/mark "$HOME/mark" 2>/dev/null | wc -l)
        touch /tmp/mark "$HOME/mark"; echo "$found $(hostname)"
    """
    req = request(ws, script)
    seen = [warm_run(warm, req).stdout.decode().split() for _ in range(6)]
    assert all(found == "0" for found, _ in seen), seen
    assert len({host for _, host in seen}) == 6, seen


def test_pools_are_keyed_by_mounts(warm: DockerBackend, ws: Path) -> None:
    """Two workspaces alternating: each run sees its own workspace and not the other."""
    spaces = {}
    for name in ("a", "b"):
        spaces[name] = ws / name
        spaces[name].mkdir()
        (spaces[name] / "id").write_text(name)
    for name in "abab":
        other = spaces["b" if name == "a" else "a"]
        req = request(spaces[name], f'cat id; test -e "{other}" && echo " sees {other}"')
        assert warm_run(warm, req).stdout.decode() == name


PROBE = r"""
grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status
id -u; id -G
ls /sys/class/net | sort | tr '\n' ' '; echo
touch /usr/x 2>&1 | sed 's/.*: //'; touch "$PWD/x" 2>&1 | sed 's/.*: //'
echo "$HOME $TMPDIR $PATH"; env | sort | cut -d= -f1 | tr '\n' ' '; echo
cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max 2>&1; true
"""


def test_confinement_is_the_same_warm_and_cold(
    warm: DockerBackend, cold: DockerBackend, ws: Path
) -> None:
    """Capabilities, no_new_privs, seccomp, identity, network, read-only filesystems,
    environment and limits, seen from inside, are the same in both (test_sandbox.py runs
    every hardening check on the warm path under SANDBOX_TEST_PATH=warm)."""
    req = request(ws, PROBE)
    seen_cold, seen_warm = cold.run(req), warm_run(warm, req)
    assert seen_cold.exit_code == 0, seen_cold
    assert seen_warm.stdout == seen_cold.stdout and seen_warm.stderr == seen_cold.stderr
    text = seen_warm.stdout.decode()
    assert "CapEff:\t0000000000000000" in text and "NoNewPrivs:\t1" in text, text
    assert "Read-only file system" in text and (under_gvisor() or "lo \n" in text), text


def comparable(result: ExecResult) -> dict[str, Any]:
    fields = asdict(result)
    del fields["duration_ms"], fields["warm"]
    return fields


@pytest.mark.parametrize(
    ("script", "argv", "timeout"),
    [
        ("echo out; echo err >&2; exit 3", None, 20.0),  # a failure
        ("trap '' TERM; echo started; sleep 60", None, 2.0),  # a timeout
        ("", ("/no/such/hook",), 20.0),  # a start error
        ("head -c 3000000 /dev/zero | tr '\\0' x", None, 20.0),  # output over the tail
    ],
    ids=["exit-3", "timeout", "start-error", "long-output"],
)
def test_failures_are_reported_the_same(
    warm: DockerBackend,
    cold: DockerBackend,
    ws: Path,
    script: str,
    argv: tuple[str, ...] | None,
    timeout: float,
) -> None:
    req = request(ws, script, timeout=timeout)
    if argv:
        req = replace(req, argv=argv)
    results = cold.run(req), warm_run(warm, req)
    assert comparable(results[0]) == comparable(results[1]), results


def test_the_api_answers_the_same_warm_and_cold(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path
) -> None:
    """The same event through `HookFactory` on a cold and a warm backend: the same
    answer and report, except `warm` and the durations."""
    hook("""
        input=$(cat)
        tool=$(echo "$input" | jq -r .preToolUse.toolName)
        echo "{\\"cancel\\": $([ "$tool" = execute_command ] && echo true || echo false),
               \\"contextModification\\": \\"saw $tool in $(pwd)\\"}"
    """)
    event = {"preToolUse": {"toolName": "execute_command", "parameters": {"command": "ls"}}}
    settings = engine_settings()
    answers = []
    for is_warm in (False, True, True, True):
        with DockerBackend(settings, client=engine.client, warm=is_warm) as backend:
            backend.claim_wait = WAIT
            factory = HookFactory(settings, backend, home=str(tmp_path / "home"))
            answers.append(factory.run("PreToolUse", event, [str(workspace)]).to_json())
    assert [a["hooks"][0]["warm"] for a in answers] == [False, True, True, True], answers
    for a in answers:
        for h in a["hooks"]:
            del h["durationMs"], h["warm"]
    assert answers[0]["cancel"] is True and all(a == answers[0] for a in answers), answers


OWNER = """
import sys, time
from sandboxrun import DockerBackend, ExecRequest, Settings
backend = DockerBackend(Settings.load(image=sys.argv[1], runtime=sys.argv[2] or None),
                        warm=True)
request = ExecRequest(argv=("cat",), stdin=b"", workdir=sys.argv[3], mounts=(sys.argv[3],))
assert backend.prewarm(request, wait=120)
print("ready", flush=True)
time.sleep(600)
"""


def test_a_killed_owner_leaves_a_pool_that_reap_removes(
    engine: DockerBackend, warm: DockerBackend, ws: Path
) -> None:
    settings = warm.settings
    proc = subprocess.Popen(
        [sys.executable, "-c", OWNER, settings.image, settings.runtime or "", str(ws)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        owned = {"label": [f"{LABEL}=1", f"sandboxrun.pid={proc.pid}"]}
        assert engine.api.containers(filters=owned), "the pool should be running"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert engine.api.containers(all=True, filters=owned), "the orphans should still be there"
    done = subprocess.run(
        [sys.executable, "-m", "sandboxrun", "reap"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert engine.api.containers(all=True, filters=owned) == []


def test_requests_with_state_go_cold(warm: DockerBackend, ws: Path) -> None:
    """A hook state (a read-write folder of its own) is never pooled, nor anything
    else mounted read-write from the host."""
    state = ws / "state"
    state.mkdir()
    os.chown(state, *hook_ids(None))
    req = request(ws, "echo hi", state=str(state))
    assert warm.prewarm(req) is False
    # Nor a file or folder of its own read-write: a CLAUDE_ENV_FILE, plugin data.
    plain = request(ws, "echo hi")
    assert warm.prewarm(replace(plain, env_file=str(ws / "env"))) is False
    assert warm.prewarm(replace(plain, private_dirs=(("/data", str(state)),))) is False
    result = warm.run(req)
    assert not result.warm and result.stdout == b"hi\n", result


def test_the_pool_is_bounded_and_closed(engine: DockerBackend, ws: Path) -> None:
    """At most pool_total containers whatever the number of kinds of hook; close()
    removes them all."""
    settings = engine_settings(pool_size=2, pool_total=3)
    owned = {"label": [f"{LABEL}=1", f"sandboxrun.pid={os.getpid()}"]}
    pooled(engine)  # the session backend's pool (warm test path) at rest
    before = {c["Id"] for c in engine.api.containers(all=True, filters=owned)}
    with DockerBackend(settings, client=engine.client, warm=True) as backend:
        for n in range(3):
            backend.prewarm(request(ws, f"echo {n}"), wait=WAIT)
        mine = {c["Id"] for c in engine.api.containers(all=True, filters=owned)} - before
        assert 1 <= len(mine) <= 3, mine
    after = {c["Id"] for c in engine.api.containers(all=True, filters=owned)}
    assert after - before == set(), after - before


def test_a_container_that_ended_while_idle_is_never_used(
    engine: DockerBackend, warm: DockerBackend, ws: Path
) -> None:
    """A pooled container killed or removed behind the pool's back (its gate state
    unknown) is discarded: the run goes cold and answers correctly."""
    req = request(ws, "cat")
    assert warm.prewarm(req, wait=WAIT) and warm._pool is not None and warm._pool.settle(WAIT)
    idle = warm._pool.idle_ids()
    assert len(idle) == 2, idle
    engine.api.kill(idle[0])
    engine.api.remove_container(idle[1], force=True)
    for _ in idle:
        result = warm.run(replace(req, stdin=b"event"))
        assert not result.warm and (result.exit_code, result.stdout) == (0, b"event"), result


def test_a_warm_run_asks_the_engine_nothing_before_its_answer(
    warm: DockerBackend, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pooled container is attached at its launch, before its start: the run that
    takes it only writes its event and reads its answer (the final frame). No attach,
    no inspect, no wait on the answer's path: the engine calls made while the run is in
    flight are the pool's own (its replacement's create, attach and start)."""
    req = request(ws, "cat")
    assert warm.prewarm(req, wait=WAIT) and warm._pool is not None and warm._pool.settle(WAIT)
    calls: list[str] = []
    api = warm.api
    for name in ("attach_socket", "inspect_container", "wait", "create_container"):
        real = getattr(api, name)

        def spy(*a: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            calls.append(_name)
            return _real(*a, **kw)

        monkeypatch.setattr(api, name, spy)
    helper = warm.helper()
    result = warm.run(replace(req, stdin=b"event"))
    assert result.warm and (result.exit_code, result.stdout) == (0, b"event"), result
    own = [c for c in calls if c in ("inspect_container", "wait")]
    assert own == [] or helper is None or not helper.frame, calls
    # Every attach is a replacement's, each after its create (none for the run itself).
    assert calls.count("attach_socket") <= calls.count("create_container"), calls


def test_a_warm_run_whose_container_is_removed_under_it_is_not_run_again(
    warm: DockerBackend, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pooled container removed while its hook runs (`abort`, a SIGTERM of ours) ends
    its stream without a word, as one that ended while idle does; but the hook had its
    event, so it is never run again cold: the run ends in an error. (The engine is made
    to say the container is gone at once, as it may once the removal is through.)

    Counted, not timed: the removal comes 1.5 s after the warm run began to deliver its
    event (not after the test began: a loaded machine may take longer than that to hand
    the run its container), and a cold run is a call of `_run_cold`."""
    req = request(ws, "sleep 4; echo done", timeout=30)
    assert warm.prewarm(req, wait=WAIT) and warm._pool is not None and warm._pool.settle(WAIT)

    def gone(cid: str) -> Any:
        raise docker.errors.NotFound(f"No such container: {cid}")

    monkeypatch.setattr(warm.api, "inspect_container", gone)
    timers: list[threading.Timer] = []
    execute = Run.execute

    def delivered_then_aborted(run: Run) -> ExecResult:
        timers.append(threading.Timer(1.5, warm.abort))
        timers[-1].start()
        return execute(run)

    monkeypatch.setattr(Run, "execute", delivered_then_aborted)
    cold: list[ExecRequest] = []

    def run_cold(r: ExecRequest) -> ExecResult:
        cold.append(r)
        raise AssertionError("the hook ran a second time, cold")

    monkeypatch.setattr(warm, "_run_cold", run_cold)
    try:
        result: ExecResult | None = warm.run(req)
    except SandboxrunError:
        result = None
    finally:
        for timer in timers:
            timer.join()
    assert len(timers) == 1, "the warm run did not take a pooled container"
    assert result is None or (result.warm and b"done" not in result.stdout), result
    assert cold == [], "the hook ran a second time"
