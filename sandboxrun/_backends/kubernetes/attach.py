"""One hook's streams, over the API server's attach websocket (`v5.channel.k8s.io`).

The pod's helper holds the hook at its gate until stdin is readable, so nothing runs
before we are attached: write the event on channel 0, close stdin through the close
channel (255, a v5 addition: with v4 stdin could only end by closing everything, and
the hook's answer with it), then read channels 1 and 2 as they come, with the Docker
backend's host-side caps: the last `stdout_tail` bytes of stdout, 64 KiB of stderr, and
past `output_limit` bytes in all the pod is deleted (`killed_reason`). Our deadline
deletes it too (`timed_out`), and a watchdog closes the socket if the stream still has
not ended shortly after. Kills run on timer threads, never on the reading thread.

Frames are read here, one at a time, rather than through `WSClient.update`, which
gathers every frame already waiting into memory: a flood would grow it without bound.
Channel 3 carries a `Status` when the stream ends; the kubelet's attach puts no exit
code in it (exec does), so the backend reads that from the pod's status when absent.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

from kubernetes.stream import stream
from kubernetes.stream.ws_client import V5_CHANNEL_PROTOCOL
from websocket import ABNF, WebSocketException

from ..._errors import EngineError
from ..._log import logger
from ..._settings import Settings
from ..lifecycle import STREAM_GRACE
from .pod import CONTAINER

STDIN, STDOUT, STDERR, ERROR, CLOSE = 0, 1, 2, 3, 255
STDERR_KEEP = 64 << 10
CHUNK = 32 << 10  # stdin frames: the API server relays frames, it need not hold one big one


def open_attach(core: Any, namespace: str, name: str, server: str) -> Any:
    """The attach websocket to the pod's container (a `WSClient`). `core` must be a
    CoreV1Api of its own (`Cluster.fresh_core`)."""
    ws = stream(
        core.connect_get_namespaced_pod_attach, name, namespace, container=CONTAINER,
        stdin=True, stdout=True, stderr=True, tty=False, _preload_content=False, binary=True,
    )  # fmt: skip
    if ws.subprotocol != V5_CHANNEL_PROTOCOL:
        ws.close()
        raise EngineError(
            f"the Kubernetes API at {server} attaches with {ws.subprotocol or 'no subprotocol'}"
            f", not {V5_CHANNEL_PROTOCOL}: a hook's stdin cannot be closed without it"
            " (Kubernetes 1.30 or later)"
        )
    return ws


class Streams:
    """The mutable state of one attach; used once. `kill()` deletes the pod (True if it
    was still there)."""

    def __init__(
        self, ws: Any, stdin: bytes, timeout: float, settings: Settings, kill: Callable[[], bool]
    ) -> None:
        self.ws, self.stdin, self.timeout, self.kill = ws, stdin, timeout, kill
        self.s = settings
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.status: dict[str, Any] | None = None  # channel 3's Status, if any came
        self.total = 0
        self.truncated = False
        self.timed_out = False
        self.deadline_fired = False
        self.killed = False
        self.killed_reason: str | None = None
        self._killer: threading.Thread | None = None

    def run(self) -> None:
        """Deliver the event and read until the streams end (or our deadline passed)."""
        writer = threading.Thread(target=self._feed, daemon=True)
        writer.start()
        timer = threading.Timer(self.timeout, self._deadline)
        watchdog = threading.Timer(self.timeout + STREAM_GRACE, self._hang_up)
        for t in (timer, watchdog):
            t.daemon = True
            t.start()
        try:
            self._read()
        finally:
            timer.cancel()
            watchdog.cancel()
            self._hang_up()
            self.ws.close()
            # After the server's close frame the websocket counts itself closed and its
            # close() leaves the socket open: close that too.
            with contextlib.suppress(AttributeError):
                self.ws.sock.shutdown()
        # The stream can end (the kill worked) before the kill's answer reaches its
        # thread: wait for it, or `timed_out` is read before it is set.
        timer.join(timeout=STREAM_GRACE)
        if self._killer is not None:
            self._killer.join(timeout=STREAM_GRACE)
        writer.join(timeout=STREAM_GRACE)

    def exit_code(self) -> int | None:
        """The exit code channel 3 reported, if it did (exec does; attach does not: its
        "Success" says the stream ended well, not how the hook exited)."""
        st = self.status
        if not st:
            return None
        for cause in (st.get("details") or {}).get("causes") or []:
            if cause.get("reason") == "ExitCode":
                with contextlib.suppress(TypeError, ValueError):
                    return int(cause.get("message"))
        return None

    def _feed(self) -> None:
        """Send the event, then close stdin so the hook sees EOF. A hook that never
        reads may make this block until the pod is gone; both are fine."""
        with contextlib.suppress(WebSocketException, OSError):
            data = self.stdin
            for i in range(0, len(data), CHUNK):
                self.ws.write_channel(STDIN, data[i : i + CHUNK])
            self.ws.close_channel(STDIN)

    def _read(self) -> None:
        sock = self.ws.sock
        while True:
            try:
                opcode, frame = sock.recv_data_frame(True)
            except (WebSocketException, OSError, AttributeError):
                return  # closed: by the server (the container ended), or by our watchdog
            if opcode == ABNF.OPCODE_CLOSE:
                return
            if opcode not in (ABNF.OPCODE_BINARY, ABNF.OPCODE_TEXT) or not frame.data:
                continue
            data = bytes(frame.data) if not isinstance(frame.data, str) else frame.data.encode()
            channel, payload = data[0], data[1:]
            if channel == ERROR:
                with contextlib.suppress(ValueError):
                    self.status = json.loads(payload or b"{}")
            elif channel in (STDOUT, STDERR):
                self._keep(channel, payload)

    def _keep(self, channel: int, payload: bytes) -> None:
        self.total += len(payload)
        if self.killed_reason:
            return  # draining: the pod is being deleted
        buf = self.stdout if channel == STDOUT else self.stderr
        buf += payload
        keep = self.s.stdout_tail if channel == STDOUT else STDERR_KEEP
        if len(buf) > keep:
            del buf[: len(buf) - keep]
            self.truncated = True
        if self.total > self.s.output_limit:
            self.truncated = True
            limit = self.s.output_limit
            self.killed_reason = f"killed: output exceeded {limit} bytes (output_limit)"
            self._killer = threading.Thread(target=self._kill, daemon=True)
            self._killer.start()

    def _deadline(self) -> None:
        self.deadline_fired = True
        self.timed_out = self._kill()

    def _kill(self) -> bool:
        try:
            gone = self.kill()
        except Exception as exc:  # the cleanup still deletes it; the deadline still holds
            logger.debug("kill: {}", exc)
            return False
        self.killed = self.killed or gone
        return gone

    def _hang_up(self) -> None:
        sock = getattr(self.ws.sock, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
