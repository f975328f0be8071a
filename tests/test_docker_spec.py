"""The hook container's hardening (`_backends/docker/spec.py`), item by item as
docs/sandbox.md promises it, for a typical request: a Claude hook in a workspace.

The host config is made by docker-py's own `create_host_config` (`OfflineAPI`: no
client, as unit tests make none), so what is checked is in the engine API's own shape,
as `create_container` would send it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import docker
import pytest

from sandboxrun import ExecRequest, Settings
from sandboxrun._backends.docker.spec import MASKED_PATHS, container_config
from sandboxrun._backends.environment import PATH
from sandboxrun._backends.helper import Helper
from sandboxrun._backends.labels import DEADLINE, MANAGED, container_labels
from sandboxrun._sandbox.mounts import home_layout
from sandboxrun._settings import parse_size

LABELS = container_labels(2_000_000_000, run="r1", hook="PreToolUse")


class OfflineAPI:
    """The engine API as far as the spec asks it: docker-py's `create_host_config` for
    API 1.43, without making a client (tests/conftest.py: `_no_engine`)."""

    _version = "1.43"
    create_host_config = docker.APIClient.create_host_config


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    hooks = tmp_path / "ws" / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "guard.sh").write_text("#!/bin/sh\nexit 0\n")
    return tmp_path / "ws"


def typical(ws: Path, **settings: Any) -> ExecRequest:
    return ExecRequest(
        argv=("bash", str(ws / ".claude" / "hooks" / "guard.sh")), stdin=b"{}",
        workdir=str(ws), mounts=(str(ws),), env={"CLAUDE_PROJECT_DIR": str(ws)},
        timeout=60, label="PreToolUse",
    )  # fmt: skip


def build(
    ws: Path, helper: Helper | None = None, hosts: str | None = "/cache/hosts", **settings: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(create_container's arguments, the host config in the API's shape)."""
    config = container_config(
        OfflineAPI(), Settings(**settings), typical(ws), name="sandboxrun-test-1", labels=LABELS,
        helper=helper, network_mode="none", hosts=hosts,
    )  # fmt: skip
    return config, config["host_config"]


def mounts(host: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["Target"]: m for m in host["Mounts"]}


def tmpfs_options(host: dict[str, Any], target: str) -> set[str]:
    return set(host["Tmpfs"][target].split(","))


def test_network_none_only_lo(ws: Path) -> None:
    """network: none, and no network sandbox at all; our /etc/hosts names localhost."""
    config, host = build(ws)
    assert host["NetworkMode"] == "none"
    assert config["network_disabled"] is True
    assert mounts(host)["/etc/hosts"] == {"Target": "/etc/hosts", "Source": "/cache/hosts",
        "Type": "bind", "ReadOnly": True}  # fmt: skip
    assert host.get("Dns") is None  # a resolver only for allowlist hooks (loopback)
    assert config["use_config_proxy"] is False  # no proxy of the host's


def test_without_our_hosts_file_the_network_is_still_none(ws: Path) -> None:
    config, host = build(ws, hosts=None)
    assert host["NetworkMode"] == "none" and config["network_disabled"] is False
    assert "/etc/hosts" not in mounts(host)


def test_root_filesystem_read_only(ws: Path) -> None:
    _, host = build(ws)
    assert host["ReadonlyRootfs"] is True


def test_workspace_read_only_at_its_own_path(ws: Path) -> None:
    """The workspace root (and the hook's folder in it) read-only at the same path."""
    config, host = build(ws)
    mount = mounts(host)[str(ws)]
    assert mount["Source"] == str(ws) and mount["Type"] == "bind" and mount["ReadOnly"] is True
    assert config["working_dir"] == str(ws)
    writable = [m for m in host["Mounts"] if not m.get("ReadOnly")]
    assert writable == []  # nothing of the host's is writable in a typical run


def test_fresh_tmpfs_tmp_of_tmpfs_size(ws: Path) -> None:
    _, host = build(ws, tmpfs_size="32m")
    assert tmpfs_options(host, "/tmp") >= {"rw", "nosuid", "nodev", f"size={32 << 20}",
                                           "mode=1777"}  # fmt: skip


def test_home_is_an_empty_private_tmpfs_at_the_users_home(ws: Path) -> None:
    config, host = build(ws)
    layout = home_layout((str(ws),))
    assert config["environment"]["HOME"] == layout.home
    for target in layout.tmpfs:
        options = tmpfs_options(host, target)
        assert {"nosuid", "nodev", "mode=0700"} <= options, target
    assert layout.home in host["Tmpfs"] or any(
        t.startswith(layout.home.rstrip("/") + "/") for t in host["Tmpfs"]
    )


def test_user_never_root(ws: Path) -> None:
    config, _ = build(ws)
    uid, gid = (int(x) for x in config["user"].split(":"))
    assert uid != 0 and gid != 0
    config, _ = build(ws, user="1234:5678")
    assert config["user"] == "1234:5678"


def test_all_capabilities_dropped(ws: Path) -> None:
    _, host = build(ws)
    assert host["CapDrop"] == ["ALL"]
    assert not host.get("CapAdd") and not host.get("Privileged")


def test_no_new_privileges_and_the_engines_seccomp_profile(ws: Path) -> None:
    """Exactly that: nothing else in SecurityOpt, so the engine's default seccomp (and
    AppArmor) profile stays; never `seccomp=unconfined`."""
    _, host = build(ws)
    assert host["SecurityOpt"] == ["no-new-privileges:true"]


def test_no_host_namespace_device_or_privilege(ws: Path) -> None:
    _, host = build(ws)
    for key in ("PidMode", "IpcMode", "UsernsMode", "UTSMode", "CgroupnsMode"):
        assert host.get(key) in (None, ""), key
    assert not host.get("Privileged") and not host.get("Devices") and not host.get("Binds")


def test_groups_only_those_configured(ws: Path) -> None:
    _, host = build(ws)
    assert not host.get("GroupAdd")
    _, host = build(ws, groups=(44,))
    assert host["GroupAdd"] == ["44"]


def test_environment_holds_nothing_from_the_host(ws: Path) -> None:
    """HOME, PATH, LANG, TMPDIR, and the agent's documented variables only."""
    config, _ = build(ws)
    env = config["environment"]
    assert set(env) == {"HOME", "PATH", "LANG", "TMPDIR", "CLAUDE_PROJECT_DIR"}
    assert env["PATH"] == PATH and env["LANG"] == "C.UTF-8" and env["TMPDIR"] == "/tmp"


def test_memory_limit_without_swap(ws: Path) -> None:
    _, host = build(ws)
    assert host["Memory"] == parse_size("512m") == host["MemorySwap"]


def test_pids_limit(ws: Path) -> None:
    _, host = build(ws)
    assert host["PidsLimit"] == 256


def test_one_cpu(ws: Path) -> None:
    _, host = build(ws)
    assert host["NanoCpus"] == 1_000_000_000


def test_open_files_and_no_core_dumps(ws: Path) -> None:
    _, host = build(ws)
    limits = {u["Name"]: (u["Soft"], u["Hard"]) for u in host["Ulimits"]}
    assert limits == {
        "nofile": (1024, 1024),
        "core": (0, 0),
    }  # no fsize: no env file, no shared /tmp


def test_logging_driver_none(ws: Path) -> None:
    _, host = build(ws)
    assert host["LogConfig"]["Type"] == "none"


def test_an_init_process(ws: Path) -> None:
    """docker-init, unless the image's helper (protocol 2) is the init itself."""
    _, host = build(ws)
    assert host["Init"] is True
    helper = Helper("/usr/local/bin/sandboxrun-seccomp", protocol=2, gate=True)
    config, host = build(ws, helper=helper)
    assert host["Init"] is False
    assert config["command"][0] == helper.path


def test_host_identifying_paths_masked(ws: Path) -> None:
    _, host = build(ws)
    assert host["MaskedPaths"] == MASKED_PATHS
    assert {"/proc/kcore", "/proc/cmdline", "/proc/sys/kernel/random/boot_id",
            "/sys/firmware", "/sys/devices/virtual/dmi"} <= set(MASKED_PATHS)  # fmt: skip


def test_the_engines_default_runtime_unless_configured(ws: Path) -> None:
    _, host = build(ws)
    assert host.get("Runtime") is None
    _, host = build(ws, runtime="runsc")
    assert host["Runtime"] == "runsc"


def test_the_images_entrypoint_never_stands_between(ws: Path) -> None:
    config, _ = build(ws)
    assert config["entrypoint"] == [""]
    assert config["command"] == ["bash", str(ws / ".claude" / "hooks" / "guard.sh")]
    assert config["tty"] is False and config["stdin_open"] is True


def test_the_lifecycles_labels_as_given(ws: Path) -> None:
    """The labels (owner, deadline: the reaper's cue) are the lifecycle's, passed as is."""
    config, _ = build(ws)
    assert config["labels"] is LABELS
    assert config["labels"][MANAGED] == "1" and config["labels"][DEADLINE] == "2000000000"
