"""The server's front door: how connections are taken, bounded and watched, so that
hostile clients (unauthenticated ones on TCP) cannot take the server down.

socketserver's ThreadingMixIn gives every connection a thread as it is accepted, before
a byte arrives, and never times it out: a thousand idle connections held a thousand
threads and every file descriptor, and /healthz went dark. Here instead:

- One thread (`serve_forever`) accepts and reads each connection's request head, with
  no thread per connection: an idle connection costs a socket and a few bytes. Each
  has `read_timeout` seconds to send its whole request (head and body: a client that
  dribbles it, slowloris, is dropped at the same deadline). At most `MAX_WAITING` wait
  for their head at once; past it the oldest waiting one is dropped, so a flood of idle
  connections only ever pushes out older idle ones (a probe sends its head at once).
- A complete head is dispatched by its method: GET (the probes /healthz and /readyz,
  /metrics) and anything else but POST go to a few probe threads (`PROBE_THREADS`),
  answered without a body to wait for; POST (`run`, `exec`) gets a thread of its own,
  at most `slots.most` at once over both listeners; past them it is answered 503 at
  once (`{"fallback": ...}`: our client runs the command cold) and closed. A probe
  never waits for a slot.
- While a request is answered, `watching` polls its socket: when the client hangs up
  (EOF or a reset: it was killed, or gave up), the request's `Cancel` is set, which
  removes that request's sandboxes and nothing else (`App.answer`). A client must keep
  its connection open until the answer (no half-close: that reads as a hang-up).

Both listeners, the unix socket and TCP, work the same way. The standard library's
socketserver and http.server still bind, accept, verify peers and parse HTTP: only the
loop that hands connections to threads is ours (a library such as waitress reads heads
asynchronously too, but stops accepting at its connection limit, which starves probes
the same way, and would mean a new dependency and a WSGI rewrite of the handler).
"""

from __future__ import annotations

import contextlib
import errno
import io
import re
import resource
import select
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .._log import logger
from .._types import Cancel

READ_TIMEOUT = 10.0  # seconds to send a whole request (setting `serve_read_timeout`)
MAX_REQUESTS = 64  # requests answered at once (setting `serve_max_requests`)
MAX_WAITING = 256  # connections still sending their head; more drop the oldest (and
# at most a quarter of the descriptors the process may open)
PROBE_THREADS = 4  # threads answering GETs and refusals: each answer takes microseconds
WRITE_TIMEOUT = 10.0  # seconds to hand an answer to a client that does not read it
MAX_HEAD = 64 << 10  # bytes of a request's line and headers
WATCH_EVERY = 0.1  # seconds between two looks at an answered request's socket
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_BUSY_BODY = b'{"fallback": "the server is busy: too many requests at once"}'
BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nServer: sandboxrun-serve\r\n"
    b"Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
    % (len(_BUSY_BODY), _BUSY_BODY)
)


class Slots:
    """The requests answered at once, shared by a server's listeners."""

    def __init__(self, most: int = MAX_REQUESTS) -> None:
        self.most, self.taken = most, 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.taken >= self.most:
                return False
            self.taken += 1
            return True

    def give(self) -> None:
        with self._lock:
            self.taken -= 1


@dataclass
class _Waiting:
    """A connection that has not sent its whole head yet."""

    address: Any
    deadline: float
    head: bytearray = field(default_factory=bytearray)


class Front:
    """The front door, mixed in before socketserver's UnixStreamServer or TCPServer
    (in place of ThreadingMixIn)."""

    request_queue_size = 128  # the listen backlog: a burst waits to be accepted
    read_timeout = READ_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._waiting: dict[socket.socket, _Waiting] = {}  # oldest first
        self._early: dict[socket.socket, tuple[bytes, float]] = {}  # head read, deadline
        self.slots = Slots()  # `open_servers` gives the listeners one to share
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._probes = ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="serve-probe")
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = False
        self._stopped = threading.Event()
        self._stopped.set()  # not serving yet
        self._selector: selectors.BaseSelector | None = None
        # A quarter of the descriptors this process may open, for waiting connections:
        # the rest stay for requests in flight, the engine, the probes.
        files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self._most_waiting = MAX_WAITING
        if files != resource.RLIM_INFINITY:
            self._most_waiting = max(8, min(MAX_WAITING, files // 4))
        try:
            super().__init__(*args, **kwargs)
        except BaseException:
            self._close_own()
            raise

    # -- the loop: accept, read heads, dispatch ---------------------------------------

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._stopped.clear()
        sel = self._selector = selectors.DefaultSelector()
        socket_: socket.socket = self.socket  # type: ignore[attr-defined]
        sel.register(socket_, selectors.EVENT_READ, "accept")
        sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        try:
            while not self._stopping:
                for key, _ in sel.select(self._next_deadline(poll_interval)):
                    if key.data == "accept":
                        self._handle_request_noblock()  # type: ignore[attr-defined]
                    elif key.data == "wake":
                        self._wake_r.recv(64)
                    else:
                        self._read_head(key.fileobj)  # type: ignore[arg-type]
                self._expire()
        finally:
            for sock in list(self._waiting):
                self._drop(sock)
            sel.close()
            self._selector = None
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop the loop (as socketserver's: from another thread) and wait for it."""
        self._stopping = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._stopped.wait()

    def get_request(self) -> tuple[Any, Any]:
        """Accept; out of file descriptors, the oldest idle connection makes room."""
        try:
            return super().get_request()  # type: ignore[misc, no-any-return]
        except OSError as exc:
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            if not self._waiting:  # nothing of ours to give back: let the others end
                time.sleep(0.05)
                raise
            self._drop(next(iter(self._waiting)))
            return super().get_request()  # type: ignore[misc, no-any-return]

    def process_request(self, request: Any, client_address: Any) -> None:
        """An accepted (and verified) connection: wait for its head, without a thread."""
        assert self._selector is not None
        if len(self._waiting) >= self._most_waiting:
            self._drop(next(iter(self._waiting)))  # the oldest idle one makes room
        request.setblocking(False)
        self._waiting[request] = _Waiting(client_address, time.monotonic() + self.read_timeout)
        self._selector.register(request, selectors.EVENT_READ, "head")

    def _read_head(self, sock: socket.socket) -> None:
        waiting = self._waiting[sock]
        try:
            data = sock.recv(8192)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # gone before its request
            self._drop(sock)
            return
        start = max(0, len(waiting.head) - 3)  # only what is new (and the 3 bytes before)
        waiting.head += data
        if _HEAD_END.search(waiting.head, start) is None:
            if len(waiting.head) > MAX_HEAD:
                logger.info("serve: dropped a client whose request head is too long")
                self._drop(sock)
            return
        assert self._selector is not None
        self._selector.unregister(sock)
        del self._waiting[sock]
        sock.setblocking(True)
        self._dispatch(sock, waiting)

    def _dispatch(self, sock: socket.socket, waiting: _Waiting) -> None:
        self._early[sock] = (bytes(waiting.head), waiting.deadline)
        if not waiting.head.startswith(b"POST "):  # probes, metrics, 404s: no slot
            self._probes.submit(self._answer, sock, waiting.address, False)
            return
        if not self.slots.take():
            self._early.pop(sock, None)
            self._probes.submit(self._refuse, sock)
            return
        thread = threading.Thread(
            target=self._answer, args=(sock, waiting.address, True), name="serve", daemon=True
        )
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _answer(self, sock: socket.socket, address: Any, counted: bool) -> None:
        """socketserver's ThreadingMixIn.process_request_thread, and the slot."""
        try:
            self.finish_request(sock, address)  # type: ignore[attr-defined]
        except Exception:
            self.handle_error(sock, address)  # type: ignore[attr-defined]
        finally:
            self._early.pop(sock, None)
            if counted:  # before the client sees its answer end: it may send the next
                self.slots.give()
            self.shutdown_request(sock)  # type: ignore[attr-defined]

    def _refuse(self, sock: socket.socket) -> None:
        logger.warning("serve: {} requests in flight: answered 503", self.slots.most)
        try:
            sock.settimeout(WRITE_TIMEOUT)
            sock.sendall(BUSY)
        except OSError:
            pass
        finally:
            self.shutdown_request(sock)  # type: ignore[attr-defined]

    def _next_deadline(self, most: float) -> float:
        if not self._waiting:
            return most
        first = next(iter(self._waiting.values())).deadline  # the oldest ends first
        return max(0.0, min(most, first - time.monotonic()))

    def _expire(self) -> None:
        now = time.monotonic()
        while self._waiting:
            sock, waiting = next(iter(self._waiting.items()))
            if waiting.deadline > now:
                return
            logger.info("serve: dropped a client that sent no whole request in time")
            self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        self._waiting.pop(sock, None)
        if self._selector is not None:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(sock)
        with contextlib.suppress(OSError):
            sock.close()

    def early(self, sock: socket.socket) -> tuple[bytes, float]:
        """What the loop read of this connection's request, and its deadline."""
        return self._early.get(sock, (b"", time.monotonic() + self.read_timeout))

    def server_close(self) -> None:
        super().server_close()  # type: ignore[misc]
        self._probes.shutdown(wait=True)  # probes and refusals under way end first
        with self._lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join()
        self._close_own()

    def _close_own(self) -> None:
        self._probes.shutdown(wait=True)
        for end in (self._wake_r, self._wake_w):
            end.close()


class Incoming(io.RawIOBase):
    """A request's bytes: what the loop read already, then the socket's, all by the
    request's deadline (a client that dribbles its body is cut off there too)."""

    def __init__(self, sock: socket.socket, early: bytes, deadline: float) -> None:
        self.sock, self.early, self.deadline = sock, early, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self.early:
            n = min(len(view), len(self.early))
            view[:n], self.early = self.early[:n], self.early[n:]
            return n
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request was not sent in time")
        self.sock.settimeout(left)
        return self.sock.recv_into(view)


class Outgoing(io.RawIOBase):
    """The answer, written whole, each write within WRITE_TIMEOUT."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.sock.settimeout(WRITE_TIMEOUT)
        self.sock.sendall(data)
        return len(data)


def hung_up(sock: socket.socket) -> bool:
    """Whether the client closed its end (EOF, or a reset); False while it waits."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        if not poller.poll(0):
            return False
        # Readable: EOF, an error, or bytes. Peeked, never consumed.
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError, TimeoutError):
        return False
    except (OSError, ValueError):  # a reset; a socket closed under us
        return True


@contextlib.contextmanager
def watching(sock: socket.socket, gone: Cancel) -> Iterator[None]:
    """Set `gone` when the client hangs up while the block runs (its request is being
    answered). A client that sends more bytes is not watched further: it is there."""
    done = threading.Event()

    def watch() -> None:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        while not done.is_set():
            if not poller.poll(WATCH_EVERY * 1000):
                continue
            if not done.is_set() and hung_up(sock):
                logger.info("serve: the client hung up mid-request: stopping its hooks")
                gone.set()
            return

    threading.Thread(target=watch, name="serve-watch", daemon=True).start()
    try:
        yield
    finally:
        done.set()  # the watcher ends within WATCH_EVERY: the answer never waits for it
