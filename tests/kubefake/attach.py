"""`pods/{name}/attach` as the API server and kubelet serve it: a WebSocket with the
subprotocol `v5.channel.k8s.io` (or `v4.channel.k8s.io`), relayed to the engine's attach
socket of the pod's container.

Frames carry a channel byte first: 0 stdin (from the client), 1 stdout, 2 stderr, 3 the
status (a `metav1.Status`). In v5, the client's `[255, 0]` closes stdin: relayed as a
half-close of the engine socket, so the container's stdin sees EOF (and, `stdinOnce`,
stays closed). Output flows as it comes, one frame per engine frame, and waits for the
client to take it (no buffering of a flood). When the container's output ends, channel 3
gets `{"metadata":{},"status":"Success"}` and the socket closes: the kubelet's attach
reports no exit code (unlike exec); the pod's status holds it.

Before the upgrade, the errors the API server gives: 400 for a container that is not
running (waiting to start, or a completed pod) or a wrong container name.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import socket
import threading
from typing import Any

from aiohttp import WSMsgType, web
from docker.utils.socket import frames_iter

from .errors import ApiError
from .runtime import Runtime
from .store import Pod

V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"
STDIN, STDOUT, STDERR, STATUS, CLOSE = 0, 1, 2, 3, 255
SUCCESS = json.dumps({"metadata": {}, "status": "Success"}).encode()


def _flag(request: web.Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("1", "true")


def _check(request: web.Request, pod: Pod) -> tuple[str, dict[str, Any]]:
    """The container to attach to, or the API server's refusal."""
    containers = [c["name"] for c in pod["spec"]["containers"]]
    name = request.query.get("container") or containers[0]
    pod_name = pod["metadata"]["name"]
    if name not in containers:
        raise ApiError(400, "BadRequest", f"container {name} is not valid for pod {pod_name}")
    if not any(_flag(request, s) for s in ("stdin", "stdout", "stderr")):
        raise ApiError(400, "BadRequest", "you must specify at least 1 of stdin, stdout, stderr")
    status = pod.get("status", {})
    phase = status.get("phase")
    if phase in ("Succeeded", "Failed"):
        raise ApiError(400, "BadRequest", "cannot attach to a container in a completed pod;"
                       f" current phase is {phase}")  # fmt: skip
    states = {s["name"]: s.get("state", {}) for s in status.get("containerStatuses") or []}
    state = states.get(name, {})
    if "running" not in state:
        reason = state.get("waiting", {}).get("reason", "ContainerCreating")
        raise ApiError(400, "BadRequest",
                       f'container "{name}" in pod "{pod_name}" is waiting to start: {reason}')  # fmt: skip
    return name, state


async def attach(rt: Runtime, request: web.Request, pod: Pod) -> web.StreamResponse:
    _check(request, pod)
    cid = rt.container_id(pod["metadata"]["uid"])
    if cid is None:
        raise ApiError(400, "BadRequest", f'pod "{pod["metadata"]["name"]}" has no container')
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
    if not {V5, V4} & set(offered):
        raise ApiError(400, "BadRequest", f"kubefake: none of the subprotocols {offered} is served"
                       f" (only {V5}, {V4})")  # fmt: skip
    stdin = _flag(request, "stdin")
    params = {"stdin": int(stdin), "stdout": int(_flag(request, "stdout")),
              "stderr": int(_flag(request, "stderr")), "stream": 1}  # fmt: skip
    loop = asyncio.get_running_loop()
    attached = await loop.run_in_executor(
        None, lambda: rt.client.api.attach_socket(cid, params=params)
    )
    sock: socket.socket = getattr(attached, "_sock", attached)
    ws = web.WebSocketResponse(protocols=(V5, V4), autoping=True)
    await ws.prepare(request)
    ended = asyncio.Event()
    reader = threading.Thread(target=_pump_out, args=(sock, ws, loop, ended), daemon=True)
    reader.start()
    inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    writer = threading.Thread(target=_write_stdin, args=(sock, inbox), daemon=True)
    writer.start()
    inbound = asyncio.create_task(_pump_in(ws, inbox, stdin, ws.ws_protocol == V5))
    await asyncio.wait([inbound, asyncio.create_task(ended.wait())],
                       return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
    if ended.is_set() and not ws.closed:
        with contextlib.suppress(ConnectionError):
            await ws.send_bytes(bytes([STATUS]) + SUCCESS)
        await ws.close()
    inbound.cancel()
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # unblocks both threads; stdin ends (stdinOnce)
    inbox.put(None)
    await loop.run_in_executor(None, reader.join, 30)
    await loop.run_in_executor(None, writer.join, 30)
    sock.close()
    attached.close()
    return ws


async def _pump_in(ws: web.WebSocketResponse, inbox: queue.SimpleQueue[bytes | None],
                   stdin: bool, v5: bool) -> None:  # fmt: skip
    """Client → container: stdin frames to the writer; v5's close of channel 0 ends
    its input (a half-close). Ends when the client closes the socket."""
    async for msg in ws:
        if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT):
            continue
        data = msg.data if isinstance(msg.data, bytes) else msg.data.encode()
        if data[:1] == bytes([STDIN]) and stdin and len(data) > 1:
            inbox.put(data[1:])
        elif data[:1] == bytes([CLOSE]) and v5 and data[1:2] == bytes([STDIN]) and stdin:
            stdin = False
            inbox.put(None)


def _write_stdin(sock: socket.socket, inbox: queue.SimpleQueue[bytes | None]) -> None:
    """The container's stdin, in a thread of its own: a hook that never reads blocks
    only this writer (never the server's loop or its shared executor)."""
    try:
        while (data := inbox.get()) is not None:
            sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the container closed its stdin, or the relay is over: the rest is dropped


def _pump_out(sock: socket.socket, ws: web.WebSocketResponse, loop: asyncio.AbstractEventLoop,
              ended: asyncio.Event) -> None:  # fmt: skip
    """Container → client, one frame at a time, each sent before the next is read."""
    try:
        for stream, data in frames_iter(sock, tty=False):  # type: ignore[no-untyped-call]
            channel = STDERR if stream == 2 else STDOUT
            if ws.closed:
                break
            asyncio.run_coroutine_threadsafe(ws.send_bytes(bytes([channel]) + data), loop).result()
    except (OSError, ConnectionError, RuntimeError):
        pass  # the client went away, or we shut the socket: the relay is over
    finally:
        loop.call_soon_threadsafe(ended.set)
