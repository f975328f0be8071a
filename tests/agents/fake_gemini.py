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

import ctypes
import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .fakemodel import CLONE_NEWNET, COMMAND, FINAL_TEXT, MAX_BODY, Recorded

SHELL_TOOL = "run_shell_command"


@dataclass
class FakeGemini:
    """The server's state: the requests seen, its port once listening."""

    requests: list[Recorded] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def generations(self) -> list[dict[str, Any]]:
        """The bodies of the `generateContent` calls (streamed or not), in order."""
        with self._lock:
            return [r.body for r in self.requests if ":" in r.path.split("?")[0]
                    and "Content" in r.path and isinstance(r.body, dict)]  # fmt: skip

    def tool_results(self) -> list[str]:
        """What the model was sent of each `functionResponse` (its `response` as JSON,
        each once)."""
        seen: list[str] = []
        for body in self.generations():
            for text in _function_responses(body):
                if text not in seen:
                    seen.append(text)
        return seen

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


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


def _handler(model: FakeGemini) -> type[BaseHTTPRequestHandler]:
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
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _not_found(self) -> None:
            self._send(404, {"error": {"code": 404, "message": "fake Gemini API",
                                       "status": "NOT_FOUND"}})  # fmt: skip

        def do_GET(self) -> None:
            with model._lock:
                model.requests.append(Recorded("GET", self.path, None))
            self._not_found()

        def do_POST(self) -> None:
            body = self._body()
            with model._lock:
                model.requests.append(Recorded("POST", self.path, body))
            path = self.path.split("?")[0]
            name, _, method = path.rpartition("/")[2].partition(":")
            if not isinstance(body, dict) or not path.startswith(("/v1beta/models/",
                                                                  "/v1/models/")):  # fmt: skip
                self._not_found()
                return
            if method == "countTokens":
                self._send(200, {"totalTokens": 10})
                return
            chunks = _chunks(body, name or "gemini-fake")
            if method == "generateContent":
                self._send(200, _whole(chunks))
                return
            if method != "streamGenerateContent":
                self._not_found()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler


def serve_in(
    netns: str | None, handler: Callable[[FakeGemini], type[BaseHTTPRequestHandler]], state: Any
) -> None:
    """Start `handler(state)` on 127.0.0.1 (an ephemeral port, set on `state.port`), in
    the named network namespace when given: the listening thread enters it (`setns`
    moves only the calling thread), and the socket stays in it."""
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
            server = ThreadingHTTPServer(("127.0.0.1", 0), handler(state))
            server.daemon_threads = True
            state._server, state.port = server, server.server_address[1]
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
    assert state.port, "the fake model did not start"


def start(netns: str | None = None) -> FakeGemini:
    model = FakeGemini()
    serve_in(netns, _handler, model)
    return model
