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

import json
from collections.abc import Iterator
from typing import Any

from .fakebase import COMMAND, FINAL_TEXT, FakeServer, Handler, serve_in

__all__ = ["COMMAND", "FINAL_TEXT", "FakeModel", "start"]


class FakeModel(FakeServer):
    """The Anthropic Messages server's state."""

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the Messages API calls, in order."""
        return self.bodies(lambda path: path == "/v1/messages")

    def tool_results(self) -> list[str]:
        """The text of every `tool_result` block the model was sent (each once)."""
        seen: list[str] = []
        for body in self.messages():
            for text in _tool_results(body):
                if text not in seen:
                    seen.append(text)
        return seen


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
    message: dict[str, Any] = {"id": f"msg_fake{number:04d}", "type": "message", "role": "assistant",
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


def _handler(model: FakeModel) -> type[Handler]:
    class Messages(Handler):
        def _not_found(self) -> None:
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "fake model"}})  # fmt: skip

        def do_GET(self) -> None:
            model.record("GET", self.path, None)
            self._not_found()

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            body = self.read_body()
            number = model.record("POST", self.path, body)
            path = self.path.split("?")[0]
            if path == "/v1/messages/count_tokens":
                self.send_json(200, {"input_tokens": 10})
                return
            if path != "/v1/messages" or not isinstance(body, dict):
                self._not_found()
                return
            whole, events = _message(body, number)
            if body.get("stream"):
                self.send_stream(events)
            else:
                self.send_json(200, whole)

    return Messages


def start(netns: str | None = None) -> FakeModel:
    """Start the server on 127.0.0.1, in the named network namespace when given."""
    return serve_in(netns, _handler, FakeModel())
