"""Terminal and information hygiene against the real engine (issue #8, item 8): escaped
logs, masked host identifiers, and a bridge network without container-to-container traffic."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker.errors
import pytest

from sandboxrun import DockerBackend
from sandboxrun._backends.docker.network import LABEL, PREFIX, ensure_network, remove_duplicates

from .conftest import HookWriter, Runner, under_gvisor

PY = "#!/usr/bin/env python3"
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil\u2066"


def test_control_characters_in_hook_paths_never_reach_stderr_raw(
    engine: DockerBackend, hook: HookWriter, tmp_path: Path
) -> None:
    """With -v, a workspace path holding a terminal title sequence, a screen clear, a C1 CSI
    and bidi controls is logged escaped: stderr is plain ASCII and the hook still runs."""
    hook("""echo '{"contextModification": "ran"}'""")
    hostile = tmp_path / f"ws{HOSTILE}"
    (tmp_path / "ws").rename(hostile)
    args = [
        "-v",
        "run",
        "PreToolUse",
        "--no-serve",
        "--workspace",
        str(hostile),
        "--image",
        engine.settings.image,
    ]
    if engine.settings.runtime:
        args += ["--runtime", engine.settings.runtime]
    done = subprocess.run(
        [sys.executable, "-m", "sandboxrun", *args], input=b"{}", capture_output=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}, timeout=120,
    )  # fmt: skip
    err = done.stderr.decode("utf-8", "replace")
    assert json.loads(done.stdout)["contextModification"] == "ran", err
    assert "PreToolUse" in err and "\\x1b]0;pwned\\x07" in err and "\\u202e" in err, err
    assert err.isascii() and all(c.isprintable() or c == "\n" for c in err), repr(err)


HOST_FILES = ["/proc/cmdline", "/proc/sys/kernel/random/boot_id"]


def test_host_identifying_proc_files_are_masked(hook: HookWriter, run_hooks: Runner) -> None:
    """/proc/cmdline and the boot id read empty inside (gVisor shows its own, never the host's)."""
    hook(
        f"""
        import json
        seen = {{}}
        for path in {HOST_FILES!r}:
            try:
                seen[path] = open(path).read()
            except OSError as exc:
                seen[path] = exc.strerror
        print(json.dumps({{"contextModification": json.dumps(seen)}}))
        """,
        shebang=PY,
    )
    seen = json.loads(run_hooks()["contextModification"])
    for path in HOST_FILES:
        host = Path(path).read_text()
        assert host.strip() and seen[path] != host, (path, seen[path])
        if not under_gvisor():
            assert seen[path] == "", (path, seen[path])


# -- the bridge network ------------------------------------------------------------------

LISTEN = "import socket; s = socket.create_server(('0.0.0.0', 8080)); [s.accept()[0].close() for _ in iter(int, 1)]"


@pytest.fixture
def listeners(engine: DockerBackend) -> Iterator[dict[str, str]]:
    """TCP listeners on port 8080 in plain containers, one on sandboxrun's network and one on
    Docker's default bridge: {network: address}, each proven reachable from the host."""
    api, made, found = engine.api, [], {}
    try:
        for net in (ensure_network(api), "bridge"):
            cid = api.create_container(
                engine.settings.image, ["python3", "-c", LISTEN], entrypoint=[""],
                labels={"sandboxrun.test": "listener"}, user="65534:65534",
                host_config=api.create_host_config(network_mode=net),
            )["Id"]  # fmt: skip
            made.append(cid)
            api.start(cid)
            nets = api.inspect_container(cid)["NetworkSettings"]["Networks"]
            found[net] = next(iter(nets.values()))["IPAddress"]
            wait_for_listener(found[net])
        yield found
    finally:
        for cid in made:
            api.remove_container(cid, force=True, v=True)


def wait_for_listener(address: str) -> None:
    give_up = time.monotonic() + 60
    while True:
        try:
            socket.create_connection((address, 8080), timeout=2).close()
            return
        except OSError:
            if time.monotonic() > give_up:
                raise
            time.sleep(0.2)


def test_bridge_hook_reaches_no_other_container(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner, listeners: dict[str, str]
) -> None:
    """A hook given `network = "bridge"` sits on sandboxrun's own bridge, yet cannot connect
    to a container on that same network nor to one on Docker's default bridge."""
    hook(
        """
        import json, socket, sys
        out = {}
        for net, address in json.load(sys.stdin)["listeners"].items():
            try:
                socket.create_connection((address, 8080), timeout=3).close()
                out[net] = "reached"
            except OSError as exc:
                out[net] = type(exc).__name__
        out["ifaces"] = sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:])
        print(json.dumps({"contextModification": json.dumps(out)}))
        """,
        shebang=PY,
    )
    result = run_hooks(event={"listeners": listeners}, network="bridge")
    seen = json.loads(result["contextModification"])
    ifaces = seen.pop("ifaces")
    # It has a network: ours. (Debian's runsc is registered with --network=none: none there.)
    assert ifaces == ["eth0", "lo"] or (under_gvisor() and ifaces == ["lo"]), ifaces
    assert [net for net, got in seen.items() if got == "reached"] == [], seen
    ours = engine.api.inspect_network(ensure_network(engine.api))
    assert ours["Options"]["com.docker.network.bridge.enable_icc"] == "false"


def ours(engine: DockerBackend) -> list[str]:
    return [n["Id"] for n in engine.api.networks(filters={"label": f"{LABEL}=1"})]


def test_runs_creating_the_network_at_once_all_get_a_sound_one(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner
) -> None:
    """Eight threads creating the missing network at the same moment never fail, each gets a
    bridge of ours without inter-container traffic, every later run settles on one, and a
    hook starts on it (a name held by two networks would make that start fail)."""
    for net_id in ours(engine):
        # One in use (an allowlist proxy's egress, another run's hook) stays: then the
        # racing runs must all settle on it instead.
        with contextlib.suppress(docker.errors.APIError):
            engine.api.remove_network(net_id)
    kept = set(ours(engine))
    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = set(pool.map(lambda _: ensure_network(engine.api), range(8)))
    for net_id in ids:
        net = engine.api.inspect_network(net_id)
        assert net["Name"].startswith(PREFIX) and net["Labels"] == {LABEL: "1"}, net
        assert net["Options"]["com.docker.network.bridge.enable_icc"] == "false", net
    settled = {ensure_network(engine.api) for _ in range(3)}
    assert len(settled) == 1 and settled <= ids | kept, (settled, ids, kept)
    hook("""echo '{"contextModification": "ran"}'""")
    assert run_hooks(network="bridge")["contextModification"] == "ran"
    print(
        f"\n{len(ids)} network(s) made by 8 racing runs; duplicates removed:",
        len(remove_duplicates(engine.api, older_than=0)),
    )
    assert ours(engine)[:1] == list(settled)  # networks still in use stay behind it
