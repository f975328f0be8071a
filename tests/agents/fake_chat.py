"""A fake OpenAI Chat Completions API for the real agent CLIs that speak it (Qwen Code's
`OPENAI_BASE_URL`, Copilot CLI's own-model mode, Cline's `openai-compatible` provider),
streamed as the real API streams it: `chat.completion.chunk` server-sent events, a last
chunk with the `finish_reason`, the usage chunk when `stream_options.include_usage` asks
for it, then `data: [DONE]`.

The script is `fakebase`'s: a request that offers one of the shell tools below and whose
messages hold no tool result yet is answered with one call of that tool running
`rm -r victim`; every other request with plain text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .fakebase import COMMAND, FINAL_TEXT, FakeServer, Handler, serve_in

# The shell tools an agent may offer, and the arguments that run the command: Qwen Code's
# (Gemini's) `run_shell_command`, Copilot CLI's `bash`, the Cline CLI's `run_commands`
# (a list) and the Cline extension's `execute_command`.
SHELL_TOOLS: dict[str, dict[str, Any]] = {
    "run_shell_command": {"command": COMMAND},
    "bash": {"command": COMMAND, "description": "remove victim"},
    "run_commands": {"commands": [COMMAND]},
    "execute_command": {"command": COMMAND, "requires_approval": False},
}


class FakeChat(FakeServer):
    """The Chat Completions server's state."""

    @property
    def base_url(self) -> str:
        """What a client's base URL names (it appends `/chat/completions`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def completions(self) -> list[dict[str, Any]]:
        """The bodies of the Chat Completions calls, in order."""
        return self.bodies(lambda path: path.endswith("/chat/completions"))

    def tool_results(self) -> list[str]:
        """The text of every `tool` message the model was sent (each once)."""
        seen: list[str] = []
        for body in self.completions():
            for text in _tool_results(body):
                if text not in seen:
                    seen.append(text)
        return seen


def _tool_results(body: dict[str, Any]) -> Iterator[str]:
    for message in body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))


def shell_tool(body: dict[str, Any]) -> str | None:
    """The shell tool this request offers, when its messages hold no tool result yet."""
    if any(True for _ in _tool_results(body)):
        return None
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if name in SHELL_TOOLS:
            return str(name)
    return None


def _chunk(number: int, model: str, delta: dict[str, Any], finish: str | None) -> bytes:
    chunk = {"id": f"chatcmpl-fake{number:04d}", "object": "chat.completion.chunk",
             "created": 1, "model": model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _answer(body: dict[str, Any], number: int) -> tuple[dict[str, Any], list[bytes]]:
    """The answer to one request, whole and as the stream's chunks."""
    model = str(body.get("model") or "gpt-fake")
    usage = {"prompt_tokens": 10, "completion_tokens": 12, "total_tokens": 22}
    tool = shell_tool(body)
    message: dict[str, Any]
    if tool is not None:
        call = {"id": f"call_fake{number:04d}", "type": "function",
                "function": {"name": tool, "arguments": json.dumps(SHELL_TOOLS[tool])}}  # fmt: skip
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        deltas = [{"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]}]
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": FINAL_TEXT}
        deltas = [{"role": "assistant", "content": ""}, {"content": FINAL_TEXT}]
        finish = "stop"
    whole = {"id": f"chatcmpl-fake{number:04d}", "object": "chat.completion", "created": 1,
             "model": model, "usage": usage,
             "choices": [{"index": 0, "message": message, "finish_reason": finish}]}  # fmt: skip
    events = [_chunk(number, model, delta, None) for delta in deltas]
    events.append(_chunk(number, model, {}, finish))
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        tail = {"id": f"chatcmpl-fake{number:04d}", "object": "chat.completion.chunk",
                "created": 1, "model": model, "choices": [], "usage": usage}  # fmt: skip
        events.append(f"data: {json.dumps(tail)}\n\n".encode())
    events.append(b"data: [DONE]\n\n")
    return whole, events


def _handler(model: FakeChat) -> type[Handler]:
    class Chat(Handler):
        def _not_found(self) -> None:
            self.send_json(404, {"error": {"type": "invalid_request_error", "code": "not_found",
                                           "message": "fake model"}})  # fmt: skip

        def do_GET(self) -> None:
            model.record("GET", self.path, None)
            if self.path.split("?")[0].endswith("/models"):
                self.send_json(200, {"object": "list", "data": [
                    {"id": "gpt-fake", "object": "model", "created": 1, "owned_by": "fake"}]})  # fmt: skip
                return
            self._not_found()

        def do_POST(self) -> None:
            body = self.read_body()
            number = model.record("POST", self.path, body)
            if not self.path.split("?")[0].endswith("/chat/completions") or not isinstance(
                body, dict
            ):
                self._not_found()
                return
            whole, events = _answer(body, number)
            if body.get("stream"):
                self.send_stream(events)
            else:
                self.send_json(200, whole)

    return Chat


def start(netns: str | None = None) -> FakeChat:
    """Start the server on 127.0.0.1, in the named network namespace when given."""
    return serve_in(netns, _handler, FakeChat())
