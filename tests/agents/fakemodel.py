"""A fake model server for the real agent CLIs: stdlib `http.server` in a thread, bound
to loopback only (inside the test's network namespace when given one), speaking the
Anthropic Messages API, streamed as the real API streams it (server-sent events).

The script is the issue's: a request that offers the Bash tool and carries no tool
result yet is answered with one `tool_use` of Bash (`rm -r victim`); every other request
(the follow-up that carries the tool result, side requests without tools) with plain
text. Every request is recorded (path, headers' names, body) so a test can read what the
model was told, e.g. the guard's reason in the `tool_result`.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMMAND = "rm -r victim"
FINAL_TEXT = "All done."
CLONE_NEWNET = 0x40000000
MAX_BODY = 16 * 1024 * 1024


@dataclass
class Recorded:
    """One request the agent made."""

    method: str
    path: str
    body: Any


@dataclass
class FakeModel:
    """The server's state: the requests seen, its port once listening."""

    requests: list[Recorded] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the Messages API calls, in order."""
        with self._lock:
            return [r.body for r in self.requests if r.path.startswith("/v1/messages")
                    and isinstance(r.body, dict) and "count_tokens" not in r.path]  # fmt: skip

    def tool_results(self) -> list[str]:
        """The text of every `tool_result` block the model was sent (each once)."""
        seen: list[str] = []
        for body in self.messages():
            for text in _tool_results(body):
                if text not in seen:
                    seen.append(text)
        return seen

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _tool_results(body: dict[str, Any]) -> Iterator[str]:
    for message in body.get("messages") or []:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    yield inner
                elif isinstance(inner, list):
                    yield "".join(str(b.get("text", "")) for b in inner if isinstance(b, dict))


def wants_tool_call(body: dict[str, Any]) -> bool:
    """A request offering Bash whose conversation has no tool result yet."""
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    return "Bash" in tools and not any(True for _ in _tool_results(body))


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _message(body: dict[str, Any], number: int) -> tuple[dict[str, Any], list[bytes]]:
    """The answer to one Messages request, whole and as the stream's events."""
    model = str(body.get("model") or "claude-fake")
    usage = {"input_tokens": 10, "output_tokens": 0}
    if wants_tool_call(body):
        block_id = f"toolu_fake{number:04d}"
        block = {"type": "tool_use", "id": block_id, "name": "Bash", "input": {}}
        whole_block = {**block, "input": {"command": COMMAND, "description": "remove victim"}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(whole_block["input"])}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        whole_block = {"type": "text", "text": FINAL_TEXT}
        delta = {"type": "text_delta", "text": FINAL_TEXT}
        stop = "end_turn"
    message = {"id": f"msg_fake{number:04d}", "type": "message", "role": "assistant",
               "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": usage}  # fmt: skip
    events = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        _sse("ping", {"type": "ping"}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 12},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    whole = {**message, "content": [whole_block], "stop_reason": stop,
             "usage": {**usage, "output_tokens": 12}}  # fmt: skip
    return whole, events


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _body(self) -> Any:
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return raw.decode("utf-8", "replace")

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            with model._lock:
                model.requests.append(Recorded("GET", self.path, None))
            self._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                        "message": "fake model"}})  # fmt: skip

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            body = self._body()
            with model._lock:
                model.requests.append(Recorded("POST", self.path, body))
                number = len(model.requests)
            path = self.path.split("?")[0]
            if path == "/v1/messages/count_tokens":
                self._send(200, {"input_tokens": 10})
                return
            if path != "/v1/messages" or not isinstance(body, dict):
                self._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "fake model"}})  # fmt: skip
                return
            whole, events = _message(body, number)
            if not body.get("stream"):
                self._send(200, whole)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()
            self.close_connection = True

    return Handler


def start(netns: str | None = None) -> FakeModel:
    """Start the server on 127.0.0.1 (an ephemeral port), in the named network namespace
    (`ip netns add`) when given: the listening thread enters it (`setns` moves only the
    calling thread), and the socket stays in it."""
    model = FakeModel()
    ready = threading.Event()
    failure: list[BaseException] = []

    def serve() -> None:
        try:
            if netns is not None:
                fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
                try:
                    libc = ctypes.CDLL(None, use_errno=True)
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), f"setns into {netns}")
                finally:
                    os.close(fd)
            server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
            server.daemon_threads = True
            model._server, model.port = server, server.server_address[1]
        except BaseException as error:  # handed to the caller
            failure.append(error)
            ready.set()
            return
        ready.set()
        server.serve_forever(poll_interval=0.2)

    threading.Thread(target=serve, name="fake-model", daemon=True).start()
    ready.wait(30)
    if failure:
        raise failure[0]
    assert model.port, "the fake model did not start"
    return model
