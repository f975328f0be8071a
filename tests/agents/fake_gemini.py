"""A fake Gemini API for the real Gemini CLI: stdlib `http.server` in a thread, bound to
loopback only (inside the test's network namespace when given one), speaking the Gemini
API's `models/<model>:streamGenerateContent?alt=sse` as the real API streams it
(server-sent events, one `GenerateContentResponse` per `data:` line, the
`finishReason` on the last chunk), and `generateContent` / `countTokens` whole.

The script is the issue's: a request that offers the shell tool (`run_shell_command`)
and carries no `functionResponse` yet is answered with one `functionCall` of it (`rm -r
victim`); every other request (the follow-up that carries the tool's result, the CLI's
side requests) with plain text. Every request is recorded so a test can read what the
model was told, e.g. the guard's reason in the `functionResponse`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .fakebase import COMMAND, FINAL_TEXT, FakeServer, Handler, serve_in

SHELL_TOOL = "run_shell_command"


class FakeGemini(FakeServer):
    """The Gemini API server's state."""

    def generations(self) -> list[dict[str, Any]]:
        """The bodies of the `generateContent` calls (streamed or not), in order."""
        return self.bodies(lambda path: ":" in path and "Content" in path)

    def tool_results(self) -> list[str]:
        """What the model was sent of each `functionResponse` (its `response` as JSON,
        each once)."""
        seen: list[str] = []
        for body in self.generations():
            for text in _function_responses(body):
                if text not in seen:
                    seen.append(text)
        return seen


def _parts(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for content in body.get("contents") or []:
        if isinstance(content, dict):
            for part in content.get("parts") or []:
                if isinstance(part, dict):
                    yield part


def _function_responses(body: dict[str, Any]) -> Iterator[str]:
    for part in _parts(body):
        answer = part.get("functionResponse")
        if isinstance(answer, dict):
            yield json.dumps(answer.get("response"), ensure_ascii=False)


def wants_tool_call(body: dict[str, Any]) -> bool:
    """A request offering the shell tool whose conversation has no tool result yet."""
    names = [d.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)
             for d in tool.get("functionDeclarations") or [] if isinstance(d, dict)]  # fmt: skip
    return SHELL_TOOL in names and not any(True for _ in _function_responses(body))


def _usage() -> dict[str, int]:
    return {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def _chunks(body: dict[str, Any], model: str) -> list[dict[str, Any]]:
    """The answer as the stream's chunks: a function call whole in one chunk (as the
    real API sends it), text in two, `finishReason` and usage on the last."""
    if wants_tool_call(body):
        parts: list[list[dict[str, Any]]] = [
            [{"functionCall": {"name": SHELL_TOOL, "args": {"command": COMMAND}}}]
        ]
    else:
        half = len(FINAL_TEXT) // 2
        parts = [[{"text": FINAL_TEXT[:half]}], [{"text": FINAL_TEXT[half:]}]]
    chunks = []
    for number, part in enumerate(parts, 1):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": part}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model,
                                 "responseId": f"fake-{number}"}  # fmt: skip
        if number == len(parts):
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = _usage()
        chunks.append(chunk)
    return chunks


def _whole(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    if all("text" in p for p in parts):
        parts = [{"text": "".join(p["text"] for p in parts)}]
    last = chunks[-1]
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    return {"candidates": [candidate], "usageMetadata": _usage(),
            "modelVersion": last["modelVersion"]}  # fmt: skip


def _handler(model: FakeGemini) -> type[Handler]:
    class Gemini(Handler):
        content_type = "application/json; charset=UTF-8"

        def _not_found(self) -> None:
            self.send_json(404, {"error": {"code": 404, "message": "fake Gemini API",
                                           "status": "NOT_FOUND"}})  # fmt: skip

        def do_GET(self) -> None:
            model.record("GET", self.path, None)
            self._not_found()

        def do_POST(self) -> None:
            body = self.read_body()
            model.record("POST", self.path, body)
            path = self.path.split("?")[0]
            name, _, method = path.rpartition("/")[2].partition(":")
            if not isinstance(body, dict) or not path.startswith(("/v1beta/models/",
                                                                  "/v1/models/")):  # fmt: skip
                self._not_found()
                return
            if method == "countTokens":
                self.send_json(200, {"totalTokens": 10})
                return
            chunks = _chunks(body, name or "gemini-fake")
            if method == "generateContent":
                self.send_json(200, _whole(chunks))
            elif method == "streamGenerateContent":
                self.send_stream(f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks)
            else:
                self._not_found()

    return Gemini


def start(netns: str | None = None) -> FakeGemini:
    """Start the server on 127.0.0.1, in the named network namespace when given."""
    return serve_in(netns, _handler, FakeGemini())
