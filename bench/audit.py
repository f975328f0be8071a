"""The cost of the audit trail (issue 21): the same hook through the warm API with
`audit_log` off and on (and OpenTelemetry to a loopback sink, when the extra is
installed), interleaved so machine noise hits them alike; p50/p95 and the ratio to off.

    .venv/bin/python bench/audit.py [--runs 30]

Needs a running engine and the hook image (scripts/setup).
"""

from __future__ import annotations

import argparse
import http.server
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.run import EVENT, NOOP, pct, workspace
from sandboxrun import DockerBackend, HookFactory, Settings


def sink() -> str:
    """A loopback OTLP/HTTP endpoint that accepts and drops every export."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1/traces"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    root = Path(tempfile.mkdtemp(prefix="sr-bench-audit-"))
    ws = workspace(root, "ws", NOOP)
    event = {**EVENT, "workspaceRoots": [str(ws)]}
    variants = {
        "audit off": {},
        "audit on": {"audit_log": str(root / "audit.jsonl")},
        "audit + otel": {"audit_log": str(root / "audit2.jsonl"), "otel_endpoint": sink()},
    }
    base = Settings.load()
    backend = DockerBackend(base, warm=True)
    factories = {
        name: HookFactory(base.model_copy(update=extra), backend)
        for name, extra in variants.items()
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for factory in factories.values():  # warm up each path once
        factory.run("PreToolUse", event)
    for _ in range(runs):
        for name, factory in factories.items():
            started = time.perf_counter()
            factory.run("PreToolUse", event)
            samples[name].append((time.perf_counter() - started) * 1000)
    backend.close()
    off = statistics.median(samples["audit off"])
    print(f"{'variant':<14} {'p50 ms':>8} {'p95 ms':>8} {'ratio':>6}")
    for name, ms in samples.items():
        p50 = statistics.median(ms)
        print(f"{name:<14} {p50:8.1f} {pct(ms, 0.95):8.1f} {p50 / off:6.2f}")


if __name__ == "__main__":
    main()
