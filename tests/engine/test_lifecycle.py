"""What a run leaves on the engine, and whose containers a sweep may judge (issue #8, item 7)."""

from __future__ import annotations

import io
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest

from sandboxrun import DockerBackend
from sandboxrun._backends.docker.reaper import reap
from sandboxrun._backends.labels import MANAGED as LABEL
from sandboxrun._backends.labels import owner_labels

from .conftest import HookWriter, Runner


@pytest.fixture
def volume_image(engine: DockerBackend) -> Iterator[str]:
    """A hook image that declares a VOLUME, built for this test and removed after it."""
    tag = f"sandboxrun-test/volume:{uuid.uuid4().hex[:12]}"
    dockerfile = f"FROM {engine.settings.image}\nVOLUME /data\n".encode()
    engine.client.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, rm=True)
    try:
        yield tag
    finally:
        engine.api.remove_image(tag, force=True)


def volumes(engine: DockerBackend) -> set[str]:
    return {v["Name"] for v in engine.api.volumes().get("Volumes") or []}


def test_an_image_volume_leaves_nothing_behind(
    engine: DockerBackend, hook: HookWriter, run_hooks: Runner, volume_image: str
) -> None:
    """Runs on an image with `VOLUME /data` (one written to, one killed at its deadline)
    leave no anonymous volume on the host."""
    before = volumes(engine)
    hook("""echo secret > /data/left; echo '{"contextModification": "wrote"}'""")
    assert run_hooks(image=volume_image)["contextModification"] == "wrote"
    hook("sleep 60")
    assert run_hooks(image=volume_image, timeout=1)["hooks"][0]["status"] == "timed_out"
    assert volumes(engine) - before == set()


def dead_pid() -> int:
    """The pid of a process that has just ended."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def test_a_sweep_spares_a_live_run_of_another_sandboxrun_with_our_hostname(
    engine: DockerBackend,
) -> None:
    """A container owned by a sandboxrun elsewhere (same hostname and a pid that is dead
    here, but another pid namespace) is not judged by our process table: a sweep spares
    it until its deadline; one owned by a dead process of ours is removed."""
    deadline = {LABEL: "1", "sandboxrun.deadline": str(int(time.time() + 600))}
    pid = str(dead_pid())
    elsewhere = {**owner_labels(), **deadline, "sandboxrun.pid": pid, "sandboxrun.pidns": "1"}
    here_dead = {**owner_labels(), **deadline, "sandboxrun.pid": pid}
    made = {
        name: engine.api.create_container(engine.settings.image, ["true"], labels=labels)["Id"]
        for name, labels in (("elsewhere", elsewhere), ("here_dead", here_dead))
    }
    try:
        removed = reap(engine.client)
        assert made["elsewhere"] not in removed and made["here_dead"] in removed, removed
        assert engine.api.containers(all=True, filters={"id": made["elsewhere"]})
    finally:
        for cid in made.values():
            if engine.api.containers(all=True, filters={"id": cid}):
                engine.api.remove_container(cid, force=True)
