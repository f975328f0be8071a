"""The Kubernetes backend's own cost, side by side with the Docker backend, in one run.

No cluster can run on these machines, so the Kubernetes rows run against the loopback
fake cluster of the tests (`tests/kubefake/`): a real HTTP API server (create, watch,
patch, delete) and a real `v5.channel.k8s.io` attach websocket, whose pods are containers
of the local Docker Engine. So a Kubernetes row is the Docker Engine's container work
plus everything sandboxrun's Kubernetes path adds (API calls, the watch to Running, the
websocket, the pod's status, the delete); it is NOT a cluster figure: a real kubelet,
scheduler and network add their own (public measurements: 0.8-0.9 s for a plain pod to
start cold, 3.2-3.7 s under gVisor). Variants, interleaved, the demo's bash + jq hook:

    docker run       `docker run --rm -i` with equivalent hardening (the reference)
    docker cold      `HookFactory.run` on `DockerBackend(settings)`
    docker warm      on `DockerBackend(settings, warm=True)` (its pool)
    kube cold        on `KubernetesBackend(settings)`: a pod created per run
    kube warm        on `KubernetesBackend(settings, warm=True)`: a pod claimed per run

    .venv/bin/python bench/kubernetes_backend.py [--runs 20] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fake cluster lives with the tests

from bench.run import EVENT, STDIN, pct  # noqa: E402
from sandboxrun import HookFactory, Settings, make_backend  # noqa: E402
from tests.kubefake.fixtures import KubeCluster, docker_client  # noqa: E402

APP = ROOT / "examples" / "demo" / "app"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="sequential runs per variant")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sandboxrun-bench-kube-"))
    tmp.chmod(0o755)
    try:
        report = bench(args.runs, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


def bench(runs: int, tmp: Path) -> dict[str, Any]:
    cluster = KubeCluster(docker_client(), tmp)
    cluster.claims["workspaces"] = str(APP)
    cluster.start()
    try:
        return measure(runs, tmp, cluster)
    finally:
        cluster.stop()


def measure(runs: int, tmp: Path, cluster: KubeCluster) -> dict[str, Any]:
    config = tmp / "config.toml"
    config.write_text(
        f'pool_size = 2\nkubeconfig = "{cluster.kubeconfig}"\n'
        f'kube_namespace = "{cluster.namespace}"\n'
        f'[[kube_volumes]]\nkind = "pvc"\nsource = "workspaces"\npath = "{APP}"\n'
    )
    docker_s = Settings.load(config=config)
    kube_s = Settings.load(config=config, backend="kubernetes")
    hook = str(APP / ".clinerules" / "hooks" / "PreToolUse")
    docker_run = [
        "docker", "run", "--rm", "-i", "--network", "none", "--read-only", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges", "--user", "65534:65534", "--pids-limit", "256",
        "--memory", "512m", "--tmpfs", "/tmp", "--entrypoint", "",
        "-v", f"{APP}:{APP}:ro", "-w", str(APP), docker_s.image, "/bin/sh", "-c", hook,
    ]  # fmt: skip
    backends = {
        "docker cold": make_backend(docker_s),
        "docker warm": make_backend(docker_s, warm=True),
        "kube cold": make_backend(kube_s),
        "kube warm": make_backend(kube_s, warm=True),
    }

    def docker_run_once() -> None:
        subprocess.run(docker_run, input=STDIN, capture_output=True, check=True)

    todo: dict[str, Any] = {"docker run": docker_run_once}
    answers: dict[str, set[str]] = {name: set() for name in backends}
    warm_runs = dict.fromkeys(backends, 0)
    for name, backend in backends.items():
        factory = HookFactory(kube_s if name.startswith("kube") else docker_s, backend)

        def call(factory: HookFactory = factory, name: str = name) -> None:
            result = factory.run("PreToolUse", EVENT, [str(APP)])
            answers[name].add(json.dumps(result.answer, sort_keys=True))
            warm_runs[name] += any(o.warm for o in result.outcomes)

        todo[name] = call
    try:
        times: dict[str, list[float]] = {name: [] for name in todo}
        for fn in todo.values():  # warm-up: page cache, the pools' first start
            fn()
            fn()
        for _ in range(runs):
            for name, fn in todo.items():
                start = time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - start) * 1000)
                time.sleep(0.05)  # an agent's calls are spaced: pools refill between them
    finally:
        for backend in backends.values():
            backend.close()
    if len(set().union(*answers.values())) != 1:
        raise SystemExit(f"the backends answered differently: {answers}")
    reference = statistics.median(times["docker run"])
    rows = {
        name: {"p50_ms": statistics.median(s), "p90_ms": pct(s, 0.9), "p99_ms": pct(s, 0.99)}
        for name, s in times.items()
    }
    print(f"bash + jq hook, {runs} interleaved sequential runs each (fake cluster: see --help)")
    print("{:<12} {:>8} {:>8} {:>8} {:>10}".format("variant", "p50 ms", "p90 ms", "p99 ms",
                                                   "x docker run"))  # fmt: skip
    for name, r in rows.items():
        print(f"{name:<12} {r['p50_ms']:8.1f} {r['p90_ms']:8.1f} {r['p99_ms']:8.1f}"
              f" {r['p50_ms'] / reference:9.2f}x")  # fmt: skip
    for docker, kube in (("docker cold", "kube cold"), ("docker warm", "kube warm")):
        extra = rows[kube]["p50_ms"] - rows[docker]["p50_ms"]
        print(f"{kube} - {docker}: {extra:+.0f} ms at p50 (the Kubernetes path's own cost)")
    print("runs that took a pooled sandbox: " + ", ".join(
        f"{name} {n}/{runs + 2}" for name, n in warm_runs.items()))  # fmt: skip
    return {"runs": runs, "latency": rows, "warm_runs": warm_runs, "fake_cluster": True}


if __name__ == "__main__":
    main()
