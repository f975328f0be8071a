"""OpenTelemetry traces (issue 21, item 2): one span per event, a child per hook, with the
audit line's fields; sent to the configured endpoint only, whatever `OTEL_*` (and proxy)
variables a repository puts in the agent's environment. The collector is a loopback
HTTP server this test starts; FakeBackend: the tracing logic only."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sandboxrun import Settings
from sandboxrun._audit import otel
from tests.test_audit import EVENT, Setup, call
from tests.test_audit import setup as setup

Received = list[tuple[dict[str, str], ExportTraceServiceRequest]]


@pytest.fixture
def collector() -> Iterator[tuple[str, Received]]:
    received: Received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            received.append(({k.lower(): v for k, v in self.headers.items()}, request))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces", received
    server.shutdown()
    server.server_close()


def test_one_span_per_event_and_per_hook_whatever_the_environment_says(
    setup: Setup, collector: tuple[str, Received], monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint, received = collector
    setup.config.write_text(
        f'otel_endpoint = "{endpoint}"\notel_service_name = "hooks-prod"\n'
        '[otel_headers]\nx-team = "t1"\n'
    )
    # What a repository's settings `env` could hand the agent, and so `exec`/`run`.
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-evil=1")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=evil")
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    argv = ["run", "PreToolUse", "--agent", "claude", "--config", str(setup.config)]
    assert call(argv, json.dumps(EVENT).encode(), cold=True) == 0
    settings = Settings.load(config=str(setup.config), agent="claude")
    assert otel.provider(settings).force_flush(5000)
    spans = [
        (resource, span)
        for headers, request in received
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert {h.get("x-team") for h, _ in received} == {"t1"}
    assert not any("x-evil" in h for h, _ in received)
    names = sorted(span.name for _, span in spans)
    assert names == ["claude PreToolUse", "hook ./guard.sh"]
    by_name = {span.name: span for _, span in spans}
    parent, child = by_name["claude PreToolUse"], by_name["hook ./guard.sh"]
    assert child.parent_span_id == parent.span_id and child.trace_id == parent.trace_id
    attrs = {a.key: a.value for a in child.attributes}
    assert attrs["sandboxrun.decision"].string_value == "block"
    assert attrs["sandboxrun.hook.source"].string_value == "project"
    assert len(attrs["sandboxrun.hook.sha256"].string_value) == 64
    event_attrs = {a.key: a.value for a in parent.attributes}
    assert event_attrs["sandboxrun.tool_use_id"].string_value == "toolu_1"
    service = {a.key: a.value.string_value for a in spans[0][0].resource.attributes}
    assert service["service.name"] == "hooks-prod"
    assert not setup.log.exists()  # traces only: no audit file was configured


def test_an_unreachable_collector_never_changes_the_answer(
    setup: Setup, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    setup.config.write_text('otel_endpoint = "http://127.0.0.1:9/v1/traces"\notel_timeout = 1\n')
    argv = ["run", "PreToolUse", "--agent", "claude", "--config", str(setup.config)]
    assert call(argv, json.dumps(EVENT).encode(), cold=True) == 0
    assert json.loads(capsysbinary.readouterr().out)["blocked"] is True
    settings = Settings.load(config=str(setup.config), agent="claude")
    assert otel.provider(settings).force_flush(5000) is True  # sent and failed, logged


def test_a_bad_endpoint_is_one_line(home: Path, tmp_path: Path) -> None:
    from sandboxrun import ConfigError

    config = tmp_path / "c.toml"
    config.write_text('otel_endpoint = "file:///etc/passwd"\n')
    with pytest.raises(ConfigError, match="otel_endpoint"):
        Settings.load(config=str(config))
