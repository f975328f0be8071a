"""A fake OpenAI Responses API for the real agent CLIs that speak it (Codex's
`wire_api = "responses"`): stdlib `http.server` in a thread, bound to loopback only
(inside the test's network namespace), streamed as the real API streams it (server-sent
events: `response.created`, `response.output_item.added`, the deltas,
`response.output_item.done`, `response.completed`; what codex-rs `codex-api/src/sse/
responses.rs` parses).

The script is `fakemodel`'s: a request that offers a shell tool and whose input holds no
tool output yet is answered with one function call of that tool running `rm -r victim`;
every other request with plain text. Every request is recorded (path, body) so a test
can read what the model was told, e.g. the guard's reason in the `function_call_output`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .fakebase import COMMAND, FINAL_TEXT, FakeServer, Handler, serve_in

# The shell tools a Responses client may offer, and the argument each takes the command
# in: Codex's unified exec (`exec_command`, a string `cmd`) and its older `shell` (an argv
# `command`).
SHELL_TOOLS = {"exec_command": ("cmd", COMMAND), "shell": ("command", ["bash", "-lc", COMMAND])}


class FakeResponses(FakeServer):
    """The Responses server's state."""

    @property
    def base_url(self) -> str:
        """What a provider's `base_url` names (the client appends `/responses`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def responses(self) -> list[dict[str, Any]]:
        """The bodies of the Responses API calls, in order."""
        return self.bodies(lambda path: path == "/v1/responses")

    def tool_outputs(self) -> list[str]:
        """The text of every `function_call_output` the model was sent (each once)."""
        seen: list[str] = []
        for body in self.responses():
            for text in _tool_outputs(body):
                if text not in seen:
                    seen.append(text)
        return seen


def _tool_outputs(body: dict[str, Any]) -> Iterator[str]:
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            if isinstance(output, str):
                yield output
            elif isinstance(output, list):
                yield "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
            elif output is not None:
                yield json.dumps(output)


def shell_tool(body: dict[str, Any]) -> str | None:
    """The shell tool this request offers, when its input holds no tool output yet."""
    if any(True for _ in _tool_outputs(body)):
        return None
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("name") in SHELL_TOOLS:
            return str(tool["name"])
    return None


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def _events(body: dict[str, Any], number: int) -> list[bytes]:
    """The stream answering one Responses request."""
    model = str(body.get("model") or "gpt-fake")
    response_id = f"resp_fake{number:04d}"
    response = {"id": response_id, "object": "response", "created_at": 1, "model": model,
                "status": "in_progress", "output": []}  # fmt: skip
    item: dict[str, Any]
    events = [
        _sse({"type": "response.created", "sequence_number": 0, "response": response}),
        _sse({"type": "response.in_progress", "sequence_number": 1, "response": response}),
    ]
    tool = shell_tool(body)
    if tool is not None:
        key, value = SHELL_TOOLS[tool]
        arguments = json.dumps({key: value})
        item = {"type": "function_call", "id": f"fc_fake{number:04d}", "status": "in_progress",
                "call_id": f"call_fake{number:04d}", "name": tool, "arguments": ""}  # fmt: skip
        done = {**item, "status": "completed", "arguments": arguments}
        events += [
            _sse({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
                  "item": item}),
            _sse({"type": "response.function_call_arguments.delta", "sequence_number": 3,
                  "item_id": item["id"], "output_index": 0, "delta": arguments}),
            _sse({"type": "response.function_call_arguments.done", "sequence_number": 4,
                  "item_id": item["id"], "output_index": 0, "arguments": arguments}),
            _sse({"type": "response.output_item.done", "sequence_number": 5, "output_index": 0,
                  "item": done}),
        ]  # fmt: skip
    else:
        item = {"type": "message", "id": f"msg_fake{number:04d}", "status": "in_progress",
                "role": "assistant", "content": []}  # fmt: skip
        part = {"type": "output_text", "text": "", "annotations": []}
        text = {**part, "text": FINAL_TEXT}
        done = {**item, "status": "completed", "content": [text]}
        where = {"item_id": item["id"], "output_index": 0, "content_index": 0}
        events += [
            _sse({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
                  "item": item}),
            _sse({"type": "response.content_part.added", "sequence_number": 3, **where,
                  "part": part}),
            _sse({"type": "response.output_text.delta", "sequence_number": 4, **where,
                  "delta": FINAL_TEXT}),
            _sse({"type": "response.output_text.done", "sequence_number": 5, **where,
                  "text": FINAL_TEXT}),
            _sse({"type": "response.content_part.done", "sequence_number": 6, **where,
                  "part": text}),
            _sse({"type": "response.output_item.done", "sequence_number": 7, "output_index": 0,
                  "item": done}),
        ]  # fmt: skip
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 22}  # fmt: skip
    completed = {**response, "status": "completed", "output": [done], "usage": usage}
    events.append(_sse({"type": "response.completed", "sequence_number": len(events),
                        "response": completed}))  # fmt: skip
    return events


def _handler(model: FakeResponses) -> type[Handler]:
    class Responses(Handler):
        def _not_found(self) -> None:
            self.send_json(404, {"error": {"type": "invalid_request_error", "code": "not_found",
                                           "message": "fake model"}})  # fmt: skip

        def do_GET(self) -> None:
            model.record("GET", self.path, None)
            if self.path.split("?")[0] == "/v1/models":
                self.send_json(200, {"object": "list", "data": []})
                return
            self._not_found()

        def do_POST(self) -> None:
            body = self.read_body()
            number = model.record("POST", self.path, body)
            if self.path.split("?")[0] != "/v1/responses" or not isinstance(body, dict):
                self._not_found()
                return
            self.send_stream(_events(body, number))

    return Responses


def start(netns: str | None = None) -> FakeResponses:
    """Start the server on 127.0.0.1, in the named network namespace when given."""
    return serve_in(netns, _handler, FakeResponses())
