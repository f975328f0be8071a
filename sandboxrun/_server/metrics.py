"""`GET /metrics`: what the server did, in the Prometheus text format (prometheus_client).

    sandboxrun_runs_total{agent, status, path}     hooks run: status ok | blocked | error
                                                   | timeout; path warm | cold | none
    sandboxrun_request_duration_seconds{command}   answered requests (run | exec)
    sandboxrun_requests_declined_total             left to the cold path (503 fallback)
    sandboxrun_requests_in_flight                  requests being answered now
    sandboxrun_pool_containers{state}              warm pools: idle | starting containers
    sandboxrun_pool_claims_waited_total            runs that waited for a starting one

A hook's status is the dialect's reading of it, as `check` judges one: `blocked` when its
own answer stops the agent (a cancel, a deny, exit 2), `error` when it did not answer (the
sandbox ended it, or it could not be run), `timeout` at its deadline, else `ok`. `path`
is where it ran: a pooled container (`warm`), one made for it (`cold`), or none at all.
Every label takes a bounded set of values (the agent names of the dialect registry, the
words above): never a hook's name, a path or a message, which a repository chooses.

The registry is the server's own, not prometheus_client's global one: what else the
process registers stays out of the scrape, and two servers in one process (tests) count
apart. prometheus_client is imported here only, when a server starts: the command's
client and `--help` never load it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._types import ExecResult, HookOutcome

# Seconds: a warm hook answers in tens of milliseconds, a cold one in a second or so, a
# slow one at its deadline (60 s by default, the longest a few minutes).
BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
POOL_STATES = ("idle", "starting")


class Metrics:
    """The server's counters. `inflight` and `pools` are read at each scrape: the number
    of requests in flight, and each kept backend's `stats()` (backends without one keep
    no pool)."""

    def __init__(
        self, inflight: Callable[[], int], pools: Callable[[], Sequence[Mapping[str, int]]]
    ) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        r = self.registry
        self.runs = Counter(
            "sandboxrun_runs",
            "Hooks run, by agent, status and path",
            ["agent", "status", "path"],
            registry=r,
        )
        self.latency = Histogram(
            "sandboxrun_request_duration_seconds",
            "Seconds to answer a request",
            ["command"],
            buckets=BUCKETS,
            registry=r,
        )
        self.declined = Counter(
            "sandboxrun_requests_declined",
            "Requests left to the cold path (503 fallback)",
            registry=r,
        )
        gauge = Gauge("sandboxrun_requests_in_flight", "Requests being answered", registry=r)
        gauge.set_function(lambda: float(inflight()))
        r.register(_Pools(pools))

    def observe(
        self,
        agent: str | None,
        outcomes: Sequence[HookOutcome],
        results: Sequence[ExecResult | None],
    ) -> None:
        """Count one request's hooks: `run`'s as the dialect read them (`outcomes`),
        else (`exec`) what the sandbox ran (`results`; None: the backend failed)."""
        if agent is None:  # no settings were read: nothing ran
            return
        if outcomes:
            for outcome in outcomes:
                self.runs.labels(agent, outcome_status(agent, outcome), _path(outcome)).inc()
            return
        for result in results:
            status = exec_status(result)
            path = "none" if result is None else "warm" if result.warm else "cold"
            self.runs.labels(agent, status, path).inc()

    def render(self) -> tuple[bytes, str]:
        """The text exposition and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def outcome_status(agent: str, outcome: HookOutcome) -> str:
    """ok | blocked | error | timeout: one hook of `run`, read as `check` reads it (a hook
    blocks when its answer alone, combined by the dialect, blocks)."""
    from .._check.replay import blocks
    from .._dialects.registry import DIALECTS

    if outcome.status == "timed_out":
        return "timeout"
    if outcome.status != "completed":
        return "error"
    return "blocked" if blocks(DIALECTS[agent].combine([outcome], False)) else "ok"


def exec_status(result: ExecResult | None) -> str:
    """ok | blocked | error | timeout: one command of `exec`, whose exit code the agent
    reads itself (2 blocks in the claude family; another non-zero is the hook's error)."""
    from .._dialects.base import sandbox_ending

    if result is None:
        return "error"
    if result.timed_out:
        return "timeout"
    if sandbox_ending(result, 0) is not None or result.exit_code not in (0, 2):
        return "error"
    return "blocked" if result.exit_code == 2 else "ok"


def _path(outcome: HookOutcome) -> str:
    if outcome.warm:
        return "warm"
    # "error": not run (a missing interpreter, over max_hooks) or the backend failed.
    return "none" if outcome.status == "error" else "cold"


class _Pools:
    """A collector: the warm pools' sizes and waited claims, summed over the kept
    backends at each scrape (the pools count; the server copies nothing)."""

    def __init__(self, pools: Callable[[], Sequence[Mapping[str, int]]]) -> None:
        self._pools = pools

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        stats = list(self._pools())
        sizes = GaugeMetricFamily(
            "sandboxrun_pool_containers", "Pooled containers of the warm path", labels=["state"]
        )
        for state in POOL_STATES:
            sizes.add_metric([state], sum(s.get(state, 0) for s in stats))
        yield sizes
        yield CounterMetricFamily(
            "sandboxrun_pool_claims_waited",
            "Warm runs that waited for a pooled container still starting",
            value=sum(s.get("claims_waited", 0) for s in stats),
        )
