"""The light client's start (issue 19, target 3: at most 15 ms): from the process's
start to the request's first byte on the server's socket, over N runs, p50 and p90.

    .venv/bin/python bench/client_start.py [--runs 50] [--against OTHER/.venv/bin]

No engine needed: this process plays the server (its own socket, in a temporary folder
of mode 0700, named by a config file given with `--config`), times the first byte of
each request, and answers it with an empty 200, so the client exits at once. "Start"
is taken just before `fork` (subprocess.Popen), so the interpreter's own start-up is in
it, as an agent's hook sees it. Rows: the command installed hooks start (`PYTHON -I
.../sandboxrun-hook`: bin/sandboxrun-hook), the `sandboxrun` console script (an
installer's entry-point launcher, which imports `re` before anything of ours), `python -m
sandboxrun` (runpy's imports), and for scale the bare interpreter (`python -c pass`, to
its exit, and `python -I -S -c pass`). Then
`python -X importtime` of `sandboxrun._client`: what the client's imports cost.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from sandboxrun._install.command import launcher

CLI = str(Path(sys.executable).parent / "sandboxrun")
REPLY = json.dumps({"stdout": "", "stderr": "", "exitCode": 0}).encode()
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(REPLY), REPLY)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class FirstByte:
    """A unix socket that answers every request, noting when its first byte came."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, 0o600)
        self.sock.listen(8)
        self.arrived = threading.Event()
        self.at = 0.0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            with conn:
                if not conn.recv(1):
                    continue
                self.at = time.perf_counter()
                self.arrived.set()
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:  # the head, then the body it announces
                    data += conn.recv(1 << 16)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                while len(body) < length - 1:
                    body += conn.recv(1 << 16)
                conn.sendall(ANSWER)


def first_byte_ms(cmd: list[str], server: FirstByte, cwd: str) -> float:
    server.arrived.clear()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=cwd)
    proc.communicate(b'{"hookName": "PreToolUse"}')
    if proc.returncode != 0 or not server.arrived.wait(5):
        raise SystemExit(f"{cmd[0]}: no request reached the socket (exit {proc.returncode})")
    return (server.at - started) * 1000


def exit_ms(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True)
    return (time.perf_counter() - started) * 1000


def import_ms(runs: int) -> float:
    samples = []
    for _ in range(runs):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import sandboxrun._client"],
            capture_output=True, text=True, check=True,
        ).stderr  # fmt: skip
        last = [line for line in err.splitlines() if line.endswith("| sandboxrun._client")]
        samples.append(int(last[-1].split("|")[1]) / 1000)
    return pct(samples, 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--against", metavar="BIN", type=Path,
                        help="also time the hooks' command of the install in this bin folder"
                        " (e.g. the main branch's .venv/bin), interleaved")  # fmt: skip
    args = parser.parse_args()
    # Bytecode as an installed package has it (bench/run.py `compiled`).
    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "sandboxrun"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="sr-") as tmp:
        folder = Path(tmp) / "run"
        folder.mkdir(mode=0o700)
        path = str(folder / "serve.sock")
        config = Path(tmp) / "config.toml"
        config.write_text(f'serve_socket = "{path}"\n')
        server = FirstByte(path)
        request = ["run", "PreToolUse", "--config", str(config)]
        hook = launcher()  # `PYTHON -I .../sandboxrun-hook`, as installed hooks start it
        rows = {
            "installed hooks' command, to first byte": [*hook, *request],
            "sandboxrun (console script), to first byte": [CLI, *request],
            "python -m sandboxrun, to first byte": [sys.executable, "-m", "sandboxrun", *request],
        }
        if args.against:  # that install's hooks' command (an older one: no sandboxrun-hook)
            found = [args.against / n for n in ("sandboxrun-hook", "sandboxrun")]
            other = str(next(p for p in found if p.exists()))
            rows[f"{other}, to first byte"] = [str(args.against / "python3"), "-I", other, *request]
        bare = {
            "python -c pass, to exit": [sys.executable, "-c", "pass"],
            "python -I -S -c pass, to exit": [sys.executable, "-I", "-S", "-c", "pass"],
        }
        samples: dict[str, list[float]] = {name: [] for name in [*rows, *bare]}
        for _ in range(args.runs):  # interleaved: the machine's load falls on every row
            for name, cmd in rows.items():
                samples[name].append(first_byte_ms(cmd, server, tmp))
            for name, cmd in bare.items():
                samples[name].append(exit_ms(cmd))
    width = max(map(len, samples))
    print(f"{'':{width}}  p50 ms  p90 ms   (runs: {args.runs}, {os.cpu_count()} CPUs)")
    for name, values in samples.items():
        print(f"{name:{width}}  {pct(values, 0.5):6.1f}  {pct(values, 0.9):6.1f}")
    print(f"{'import sandboxrun._client (-X importtime)':{width}}  {import_ms(15):6.1f}")


if __name__ == "__main__":
    main()
