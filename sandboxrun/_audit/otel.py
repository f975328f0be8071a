"""OpenTelemetry traces of hook runs, for platforms (`otel_endpoint`; `pip install
'sandboxrun[otel]'`): one span per event, a child span per hook, with the audit
line's fields as attributes (`_audit`). Imported only when configured.

The settings come from the user's config file only. The official SDK and its OTLP
encoder build and encode the spans; every knob the SDK would otherwise read from an
`OTEL_*` variable is passed explicitly (sampler, resource, limits, batching), and
`OTEL_SDK_DISABLED` is overridden: agents start hooks, and so `sandboxrun exec`, with
an environment a repository can set (Claude Code's settings `env`), which must neither
turn tracing off nor add headers, certificates or an endpoint. For the same reason the
transport is this module's, not the SDK's OTLP/HTTP exporter (which merges
`OTEL_EXPORTER_OTLP_*` headers, certificates and credentials from the environment):
one POST of the encoded request to the configured endpoint, with the configured
headers, no proxy from the environment, a bounded timeout.

Spans leave in batches off the answer's path (`serve`); a one-shot process (the cold
CLI) flushes them at exit, for at most `otel_timeout` seconds after its answer.
"""

from __future__ import annotations

import atexit
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Status, StatusCode, set_span_in_context

from .._log import logger

if TYPE_CHECKING:
    from .._settings import Settings

# The audit line's fields on the event's span and on each hook's (`_audit`).
EVENT_FIELDS = ("entry", "served", "agent", "event", "sessionId", "toolName", "toolUseId",
                "backend", "image", "runtime")  # fmt: skip
HOOK_FIELDS = ("decision", "reason", "exitCode", "status", "sandboxStopped", "durationMs",
               "warm", "imageId", "outputTruncated", "oomKilled")  # fmt: skip
_LOCK = threading.Lock()
_PROVIDERS: dict[tuple[Any, ...], TracerProvider] = {}


class OtlpHttp(SpanExporter):
    """OTLP/HTTP (protobuf) to one endpoint, with nothing taken from the environment."""

    def __init__(self, endpoint: str, headers: Sequence[tuple[str, str]], timeout: float) -> None:
        self.endpoint, self.headers, self.timeout = endpoint, dict(headers), timeout
        # No ProxyHandler from the environment: a repository's HTTPS_PROXY gets nothing.
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        body = encode_spans(spans).SerializeToString()
        headers = {**self.headers, "Content-Type": "application/x-protobuf"}
        request = urllib.request.Request(self.endpoint, body, headers, method="POST")
        try:
            with self.opener.open(request, timeout=self.timeout) as response:
                response.read(1 << 16)
        except (OSError, ValueError, urllib.error.URLError) as exc:
            logger.warning("otel: {} spans not sent to {}: {}", len(spans), self.endpoint, exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def provider(settings: Settings) -> TracerProvider:
    """This process's provider for the configured endpoint (one, made once)."""
    key = (settings.otel_endpoint, settings.otel_headers, settings.otel_service_name,
           settings.otel_timeout)  # fmt: skip
    with _LOCK:
        found = _PROVIDERS.get(key)
        if found is not None:
            return found
        resource = Resource({"service.name": settings.otel_service_name})  # not .create(): env
        limits = SpanLimits(
            max_attributes=64, max_events=16, max_links=16, max_span_attributes=64,
            max_event_attributes=16, max_link_attributes=16, max_attribute_length=1024,
            max_span_attribute_length=1024,
        )  # fmt: skip
        made = TracerProvider(sampler=ALWAYS_ON, resource=resource, span_limits=limits,
                              shutdown_on_exit=False)  # fmt: skip
        made._disabled = False  # OTEL_SDK_DISABLED is the environment's: not a setting
        assert settings.otel_endpoint is not None
        exporter = OtlpHttp(settings.otel_endpoint, settings.otel_headers, settings.otel_timeout)
        timeout_ms = settings.otel_timeout * 1000
        made.add_span_processor(BatchSpanProcessor(
            exporter, max_queue_size=2048, schedule_delay_millis=1000,
            max_export_batch_size=512, export_timeout_millis=timeout_ms,
        ))  # fmt: skip
        atexit.register(_flush, made, int(timeout_ms))
        _PROVIDERS[key] = made
        return made


def _flush(made: TracerProvider, timeout_ms: int) -> None:
    made.force_flush(timeout_ms)
    made.shutdown()


def emit(settings: Settings, records: Sequence[Mapping[str, Any]]) -> None:
    """One span for the event the records belong to, a child span per hook record."""
    if not records:
        return
    tracer = provider(settings).get_tracer("sandboxrun")
    now = time.time_ns()
    first = records[0]
    longest = max(int(r.get("durationMs") or 0) for r in records)
    start = now - longest * 1_000_000
    name = f"{first.get('agent')} {first.get('event') or 'event'}"
    event_attrs = _attributes(first, EVENT_FIELDS)
    parent = tracer.start_span(name, start_time=start, attributes=event_attrs)
    context = set_span_in_context(parent)
    for record in records:
        hook = record.get("hook") if isinstance(record.get("hook"), dict) else {}
        attrs = _attributes(record, HOOK_FIELDS)
        attrs.update(_attributes(hook or {}, ("name", "source", "sha256", "of"), "hook."))
        ms = int(record.get("durationMs") or 0)
        span = tracer.start_span(f"hook {(hook or {}).get('name', '-')}", context=context,
                                 start_time=now - ms * 1_000_000, attributes=attrs)  # fmt: skip
        if record.get("status") != "completed":
            span.set_status(Status(StatusCode.ERROR, str(record.get("status"))))
        span.end(end_time=now)
    parent.end(end_time=now)


def _attributes(
    record: Mapping[str, Any], keys: Sequence[str], prefix: str = ""
) -> dict[str, str | int | bool]:
    out: dict[str, str | int | bool] = {}
    for key in keys:
        value = record.get(key)
        if isinstance(value, bool | int | str) and value != "":
            out[f"sandboxrun.{prefix}{_snake(key)}"] = value
    return out


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
