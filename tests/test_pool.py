"""The pool's bookkeeping (`_backends.pool.Pool`) on a fake engine: single use, bounds, expiry,
close. tests/engine/test_pool.py proves the real containers."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from sandboxrun._backends.pool import Pool, pool_key


class FakeEngine:
    def __init__(self, fail: bool = False) -> None:
        self.live: set[str] = set()
        self.made = 0
        self.fail = fail
        self.lock = threading.Lock()

    def launch(self, config: dict[str, Any]) -> str:
        if self.fail:
            raise RuntimeError("no engine")
        with self.lock:
            self.made += 1
            cid = f"{config['name']}-{self.made}"
            self.live.add(cid)
        return cid

    def remove(self, cid: str) -> None:
        with self.lock:
            self.live.discard(cid)


def make(name: str) -> Any:
    return lambda: {"name": name, "labels": {"n": str(time.time())}, "image": name}


@pytest.fixture
def engine() -> FakeEngine:
    return FakeEngine()


def test_the_key_ignores_only_name_and_labels() -> None:
    base = {"name": "a", "labels": {"x": "1"}, "image": "i", "host_config": {"Binds": ["/w"]}}
    assert pool_key(base) == pool_key({**base, "name": "b", "labels": {}})
    assert pool_key(base) != pool_key({**base, "host_config": {"Binds": ["/v"]}})
    assert pool_key(base) != pool_key({**base, "environment": {"A": "1"}})


def test_a_container_is_handed_out_once(engine: FakeEngine) -> None:
    pool = Pool(engine.launch, engine.remove, size=2)
    pool.want("k", make("k"))
    assert pool.settle(5)
    taken = [pool.take("k"), pool.take("k"), pool.take("k")]
    assert taken[0] and taken[1] and taken[0] != taken[1] and taken[2] is None
    pool.retire(str(taken[0]))
    assert pool.settle(5) and taken[0] not in engine.live
    pool.close()
    assert engine.live == {taken[1]}  # the caller still holds it: it retires it itself


def test_take_waits_for_a_starting_container(engine: FakeEngine) -> None:
    gate = threading.Event()

    def slow(config: dict[str, Any]) -> str:
        gate.wait(5)
        return engine.launch(config)

    pool = Pool(slow, engine.remove, size=1)
    pool.want("k", make("k"))
    assert pool.sizes() == (0, 1)  # (idle, starting): what `serve`'s metrics show
    assert pool.take("k") is None  # no wait: nothing idle yet
    assert pool.waited == 0
    threading.Timer(0.2, gate.set).start()
    assert pool.take("k", wait=5) is not None
    assert pool.waited == 1  # counted once, however often it woke
    assert pool.settle(5) and pool.sizes() == (0, 0)  # taken, not replaced (no `want`)
    pool.want("k", make("k"))
    assert pool.settle(5) and pool.sizes() == (1, 0)
    pool.close()


def test_bounds_per_key_and_in_total(engine: FakeEngine) -> None:
    pool = Pool(engine.launch, engine.remove, size=2, total=3)
    for key in ("a", "b", "c"):
        pool.want(key, make(key))
        assert pool.settle(5)
        pool.want(key, make(key))  # asked again: nothing more for a full key
        assert pool.settle(5)
        assert len(engine.live) <= 3
    # "c" was wanted last: "a", the least recently wanted, made room for it.
    held = pool.take("c")
    assert held and pool.take("a") is None
    pool.close()
    assert engine.live == {held}


def test_idle_containers_expire(engine: FakeEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = Pool(engine.launch, engine.remove, size=1, idle=5)
    pool.want("k", make("k"))
    assert pool.settle(5) and len(engine.live) == 1
    later = time.monotonic() + 6
    monkeypatch.setattr(time, "monotonic", lambda: later)
    assert pool.take("k") is None  # too old: removed, never handed out
    assert pool.settle(5) and engine.live == set()
    pool.close()


def test_close_removes_everything_and_starts_nothing_more(engine: FakeEngine) -> None:
    pool = Pool(engine.launch, engine.remove, size=2)
    pool.want("k", make("k"))
    pool.close()
    assert engine.live == set()
    pool.want("k", make("k"))
    assert pool.take("k") is None and engine.live == set()


def test_a_failed_launch_is_not_waited_for() -> None:
    pool = Pool(FakeEngine(fail=True).launch, lambda cid: None, size=1)
    pool.want("k", make("k"))
    assert pool.ready("k", timeout=5) is False
    assert pool.take("k", wait=5) is None
    pool.close()


def test_a_burst_grows_the_pool_within_total(engine: FakeEngine) -> None:
    """Claims coming faster than launches end (issue 19: 8 at a time from an idle pool):
    the pool keeps the claims expected during one launch idle or starting, more than
    `size` but never more than `total`; at rest it goes back to `size`."""
    for total, expected in ((16, 6), (4, 4)):
        pool = Pool(engine.launch, engine.remove, size=2, total=total)
        pool.want("k", make("k"))
        assert pool.settle(5)
        for _ in range(12):
            pool.want("k", make("k"))
            cid = pool.take("k", wait=5)
            assert cid is not None
            pool.retire(cid)
        assert pool.settle(5)
        pool.launch_s = 0.5  # as on a real engine: 12 claims in a second, 6 in one launch
        pool.want("k", make("k"))
        assert pool.settle(5)
        assert sum(pool.sizes()) == expected, (total, pool.sizes())
        pool.close()
        assert engine.live == set()
    rest = Pool(engine.launch, engine.remove, size=2, total=16)
    rest.want("k", make("k"))
    assert rest.settle(5) and rest.take("k") and rest.take("k")
    rest.want("k", make("k"))  # two claims a second: under one during a launch
    assert rest.settle(5) and sum(rest.sizes()) == 2
    rest.close()


def test_launches_go_before_removals(engine: FakeEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """One worker, busy: the replacements queued after removals still start first; past
    `total` waiting removals, a removal goes first too (used containers stay bounded)."""
    monkeypatch.setattr("sandboxrun._backends.pool.WORKERS", 1)
    order: list[str] = []
    gate = threading.Event()

    def launch(config: dict[str, Any]) -> str:
        gate.wait(5)
        order.append(f"launch {config['name']}")
        return engine.launch(config)

    def remove(cid: str) -> None:
        order.append(f"remove {cid}")

    pool = Pool(launch, remove, size=1, total=2)
    pool.want("a", make("a"))  # the worker waits at the gate with it
    for cid in "xyz":  # z: two removals wait already (total=2), it goes first
        pool.retire(cid)
    pool.want("b", make("b"))
    gate.set()
    assert pool.settle(5)
    assert order == ["launch a", "remove z", "launch b", "remove x", "remove y"], order
    pool.close()
