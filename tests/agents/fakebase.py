"""What every fake model server of tests/agents shares: stdlib `http.server` in a thread,
bound to loopback only (inside the test's network namespace when given one), a record of
every request, and the plumbing of a handler (read a JSON body, send JSON, stream
server-sent events). Each API's module (`fakemodel` for Anthropic Messages,
`fake_responses`, `fake_chat`, `fake_gemini`) adds only what its API says.

The script is the same for every API: a request that offers the agent's shell tool and
carries no tool result yet is answered with one call of that tool running `rm -r victim`;
every other request with plain text.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

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
class FakeServer:
    """A server's state: the requests seen, its port once listening."""

    requests: list[Recorded] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def record(self, method: str, path: str, body: Any) -> int:
        """Keep one request; its number (1 for the first)."""
        with self._lock:
            self.requests.append(Recorded(method, path, body))
            return len(self.requests)

    def bodies(self, wanted: Callable[[str], bool]) -> list[dict[str, Any]]:
        """The JSON bodies of the requests whose path (without its query) is wanted."""
        with self._lock:
            return [r.body for r in self.requests
                    if wanted(r.path.split("?")[0]) and isinstance(r.body, dict)]  # fmt: skip

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


S = TypeVar("S", bound=FakeServer)


class Handler(BaseHTTPRequestHandler):
    """A quiet handler with the helpers every fake API uses."""

    protocol_version = "HTTP/1.1"
    content_type = "application/json"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def read_body(self) -> Any:
        length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_stream(self, events: Iterable[bytes]) -> None:
        """Server-sent events, each flushed as it goes, then the connection closed."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(event)
            self.wfile.flush()
        self.close_connection = True


def serve_in(
    netns: str | None, handler: Callable[[S], type[BaseHTTPRequestHandler]], state: S
) -> S:
    """Start `handler(state)` on 127.0.0.1 (an ephemeral port, set on `state.port`), in
    the named network namespace (`ip netns add`) when given: the listening thread enters
    it (`setns` moves only the calling thread), and the socket stays in it."""
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

    threading.Thread(target=serve, name=f"fake-{type(state).__name__}", daemon=True).start()
    ready.wait(30)
    if failure:
        raise failure[0]
    assert state.port, "the fake model did not start"
    return state
