"""Each install route as installed, warm from its second hook (issue 31, item 4), in one
run: the first hook of a session and the p50 of the next ones, against the same guard run
bare, as the agent runs it unsandboxed.

Routes (`install` into temporary folders: a fake home, a project each, `--managed-file`):

    Cline shim            `install --agent cline --workspace`: the shim (`run --answer agent`)
    Claude per-file       `install --agent claude --workspace`: the wrapper (`exec`)
    Claude --managed      `install --agent claude --managed-file F`: the forwarder
                          (`run --answer agent`)
    Codex --managed       `install --agent codex --managed-file F`: the forwarder
    Cursor                `install --agent cursor --workspace`: the wrapper (`exec`)
    Gemini                `install --agent gemini --workspace`: the wrapper (`exec`)

Each is driven as its agent drives it: the command string the route's file holds, run
by `sh -c` in the project with the agent's project variable and its event on stdin
(the shim: its path). The guard is the demo's kind (bash + jq) in each agent's protocol,
and every answer is checked to block. A session: its own server socket (nothing
running), then the session-start hook where the route has one (the session-start check
`install` adds; a managed route's `SessionStart` forwarder), `--gap` seconds (the first
model turn), the first hook; then `--next` more of every route, interleaved with the
bare guards. `warm` counts the runs the audit trail says ran in a container started
ahead of time.

    .venv/bin/python bench/routes.py [--sessions 3] [--next 20] [--gap 3]

Needs a running engine and the hook image (scripts/setup). Its servers run on sockets
in a temporary folder (a server of yours is neither used nor touched) and are stopped
at the end. Takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandboxrun import _client as client

CLI = [sys.executable, "-m", "sandboxrun"]
ENV = {k: v for k, v in os.environ.items() if k != "CI"}  # CI=true would start no server
JQ = "#!/bin/bash\ncmd=$(jq -r '%s // \"\"')\n"
GUARDS = {  # agent -> (the jq path of the command, what it does with an `rm -rf`)
    "cline": (".preToolUse.parameters.command", 'case "$cmd" in *"rm -rf"*)'
              ' echo \'{"cancel": true, "errorMessage": "no rm -rf"}\' ;;'
              ' *) echo \'{"cancel": false}\' ;; esac'),
    "claude": (".tool_input.command", 'case "$cmd" in *"rm -rf"*) echo "no rm -rf" >&2;'
               " exit 2 ;; esac"),
    "cursor": (".command", 'case "$cmd" in *"rm -rf"*)'
               ' echo \'{"permission": "deny", "user_message": "no rm -rf"}\' ;;'
               ' *) echo \'{"permission": "allow"}\' ;; esac'),
    "gemini": (".tool_input.command", 'case "$cmd" in *"rm -rf"*)'
               ' echo \'{"decision": "deny", "reason": "no rm -rf"}\' ;; esac'),
}  # fmt: skip
GUARDS["codex"] = GUARDS["claude"]


@dataclass
class Route:
    """One install route: how its hook is run, and whether an answer blocks."""

    name: str
    agent: str
    root: Path
    config: Path
    hook: list[str] = field(default_factory=list)  # argv of the installed hook
    bare: list[str] = field(default_factory=list)  # argv of the guard itself
    event: bytes = b""
    env: dict[str, str] = field(default_factory=dict)
    session_start: list[str] | None = None  # the session-start hook, if the route has one
    start_event: bytes = b""
    times: dict[str, list[float]] = field(default_factory=lambda: {"bare": [], "first": [],
                                                                    "next": []})  # fmt: skip

    def run(self, argv: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(argv, input=stdin, capture_output=True, cwd=self.root,
                              env={**ENV, **self.env}, timeout=300)  # fmt: skip

    def timed(self, kind: str, argv: list[str]) -> None:
        start = time.perf_counter()
        done = self.run(argv, self.event)
        self.times[kind].append((time.perf_counter() - start) * 1000)
        if not blocks(self.agent, done):
            raise SystemExit(f"{self.name} ({kind}) did not block: {done}")


def blocks(agent: str, done: subprocess.CompletedProcess[bytes]) -> bool:
    """Whether the agent blocks on what its hook answered (each protocol's block)."""
    if agent in ("claude", "codex"):
        return done.returncode == 2
    answer = json.loads(done.stdout.decode().strip().splitlines()[-1])
    key, value = {"cline": ("cancel", True), "cursor": ("permission", "deny"),
                  "gemini": ("decision", "deny")}[agent]  # fmt: skip
    return bool(answer.get(key) == value)


def write_guard(path: Path, agent: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    jq, body = GUARDS[agent]
    path.write_text(JQ % jq + body + "\n")
    path.chmod(0o755)
    return path


def sh(command: str) -> list[str]:
    return ["/bin/sh", "-c", command]


def claude_like(settings: dict[str, Any], event: str) -> str:
    """The command of the (one) handler of `event` in a Claude-shaped hooks document."""
    return str(settings["hooks"][event][-1]["hooks"][0]["command"])


def install(home: Path, config: Path, *args: str) -> None:
    argv = [*CLI, "install", "--config", str(config), "--home", str(home), *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"install {' '.join(args)}: {done.stderr}")


def claude_event(root: Path, event: str = "PreToolUse") -> bytes:
    return json.dumps({"session_id": "s1", "hook_event_name": event, "cwd": str(root),
                       "tool_name": "Bash", "tool_input": {"command": "rm -rf ~/projects"},
                       "transcript_path": "", "permission_mode": "default",
                       "source": "startup"}).encode()  # fmt: skip


def routes(folder: Path) -> list[Route]:
    """Every route, installed into its own project under `folder`."""
    home = folder / "home"
    for agent_dir in (".claude", ".codex", ".gemini", ".cursor"):  # the agents "ran" here
        (home / agent_dir).mkdir(parents=True, exist_ok=True)
    made = []

    def project(name: str) -> tuple[Path, Path]:
        root = folder / name
        (root / ".git").mkdir(parents=True)
        config = folder / f"{name}.toml"
        return root, config

    root, config = project("cline")
    guard = write_guard(root / ".clinerules" / "hooks" / "PreToolUse", "cline")
    bare = root / "bare-guard"
    shutil.copy(guard, bare)  # the shim takes the guard's place (moved aside)
    write_config(config, folder, "cline", 0)
    install(home, config, "--agent", "cline", "--workspace", str(root))
    event = {"clineVersion": "3.36.0", "hookName": "PreToolUse", "taskId": "t1",
             "timestamp": "1732000000000", "workspaceRoots": [str(root)], "userId": "u1",
             "preToolUse": {"toolName": "execute_command",
                            "parameters": {"command": "rm -rf ~/projects"}}}  # fmt: skip
    made.append(Route("Cline shim", "cline", root, config, [str(guard)], [str(bare)],
                      json.dumps(event).encode()))  # fmt: skip

    for name, managed in (("Claude per-file", False), ("Claude --managed", True)):
        root, config = project(name.split()[1].strip("-"))
        guard = write_guard(root / ".claude" / "hooks" / "guard.sh", "claude")
        command = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'
        hooks = {"PreToolUse": [{"matcher": "Bash",
                                 "hooks": [{"type": "command", "command": command}]}]}  # fmt: skip
        (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
        write_config(config, folder, root.name, 0)
        route = Route(name, "claude", root, config, bare=[str(guard)], event=claude_event(root),
                      env={"CLAUDE_PROJECT_DIR": str(root)})  # fmt: skip
        if managed:  # the forwarders, SessionStart's too
            file = folder / "managed-settings.json"
            install(home, config, "--agent", "claude", "--managed-file", str(file))
            settings = start = json.loads(file.read_text())
        else:  # the wrappers; the session-start check in the user's own settings
            install(home, config, "--agent", "claude", "--workspace", str(root))
            settings = json.loads((root / ".claude" / "settings.json").read_text())
            start = json.loads((home / ".claude" / "settings.json").read_text())
        route.hook = sh(claude_like(settings, "PreToolUse"))
        route.session_start = sh(claude_like(start, "SessionStart"))
        route.start_event = claude_event(root, "SessionStart")
        made.append(route)

    root, config = project("codex")
    guard = write_guard(root / ".codex" / "hooks" / "guard.sh", "codex")
    hooks = {"PreToolUse": [{"hooks": [{"type": "command", "command": str(guard)}]}]}
    (root / ".codex" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    write_config(config, folder, "codex", 0)
    requirements = folder / "requirements.toml"
    install(home, config, "--agent", "codex", "--managed-file", str(requirements))
    forwarders = tomllib.loads(requirements.read_text())
    made.append(Route("Codex --managed", "codex", root, config,
                      sh(claude_like(forwarders, "PreToolUse")), [str(guard)], claude_event(root),
                      session_start=sh(claude_like(forwarders, "SessionStart")),
                      start_event=claude_event(root, "SessionStart")))  # fmt: skip

    root, config = project("cursor")
    guard = write_guard(root / ".cursor" / "hooks" / "guard.sh", "cursor")
    hooks = {"beforeShellExecution": [{"command": ".cursor/hooks/guard.sh"}]}
    (root / ".cursor" / "hooks.json").write_text(json.dumps({"version": 1, "hooks": hooks}))
    write_config(config, folder, "cursor", 0)
    install(home, config, "--agent", "cursor", "--workspace", str(root))
    written = json.loads((root / ".cursor" / "hooks.json").read_text())
    event = {"conversation_id": "c1", "generation_id": "g1", "hook_event_name":
             "beforeShellExecution", "workspace_roots": [str(root)], "cwd": str(root),
             "command": "rm -rf ~/projects"}  # fmt: skip
    made.append(Route("Cursor", "cursor", root, config,
                      sh(written["hooks"]["beforeShellExecution"][0]["command"]), [str(guard)],
                      json.dumps(event).encode()))  # fmt: skip

    root, config = project("gemini")
    guard = write_guard(root / ".gemini" / "hooks" / "guard.sh", "gemini")
    command = "$GEMINI_PROJECT_DIR/.gemini/hooks/guard.sh"
    hooks = {"BeforeTool": [{"matcher": "run_shell_command",
                             "hooks": [{"type": "command", "command": command}]}]}  # fmt: skip
    (root / ".gemini" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    write_config(config, folder, "gemini", 0)
    install(home, config, "--agent", "gemini", "--workspace", str(root))
    written = json.loads((root / ".gemini" / "settings.json").read_text())
    user = json.loads((home / ".gemini" / "settings.json").read_text())
    event = {"session_id": "s1", "hook_event_name": "BeforeTool", "cwd": str(root),
             "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf ~/projects"},
             "transcript_path": "", "timestamp": "2026-11-28T00:00:00Z"}  # fmt: skip
    start = {
        "session_id": "s1",
        "hook_event_name": "SessionStart",
        "cwd": str(root),
        "source": "startup",
        "transcript_path": "",
        "timestamp": "2026-11-28T00:00:00Z",
    }
    made.append(Route("Gemini", "gemini", root, config, ["bash", "-c", claude_like(written,
                      "BeforeTool")], [str(guard)], json.dumps(event).encode(),
                      {"GEMINI_PROJECT_DIR": str(root)},
                      ["bash", "-c", claude_like(user, "SessionStart")],
                      json.dumps(start).encode()))  # fmt: skip
    return made


def write_config(config: Path, folder: Path, name: str, session: int) -> str:
    """The route's config (its hooks' own, named by what install wrote): a socket of
    this session's, its audit file. The socket's path."""
    sock = folder / "s" / f"{name}{session}" / "serve.sock"
    config.write_text(f'serve = "auto"\nserve_socket = "{sock}"\nserve_idle = 600\n'
                      f'review = "off"\naudit_log = "{folder / name}.audit.jsonl"\n')  # fmt: skip
    return str(sock)


def stop(sock: str) -> None:
    """Stop the server at `sock` (if any) and wait until it is gone with its pool."""
    conn = client.connect(sock)
    if conn is None:
        return
    pid = client.exchange(conn, "GET", "/healthz")[1]["pid"]
    conn.close()
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 120
    while os.path.exists(sock) and time.monotonic() < deadline:
        time.sleep(0.1)


def warm_share(route: Route, skip: int) -> tuple[int, int]:
    """(warm, all) of the route's guard runs in its audit file after the first `skip`."""
    audit = Path(tomllib.loads(route.config.read_text())["audit_log"])
    text = audit.read_text() if audit.exists() else ""
    lines = [json.loads(line) for line in text.splitlines()]
    runs = [r for r in lines if r.get("hook") and r.get("event") != "SessionStart"][skip:]
    return sum(1 for r in runs if r.get("warm")), len(runs)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--next", type=int, default=20, help="hooks after the first, per session")
    parser.add_argument("--gap", type=float, default=3.0,
                        help="seconds between the session start and its first hook")  # fmt: skip
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="srr-", dir="/tmp"))  # a socket's path is short
    folder.chmod(0o755)  # the hooks' user (nobody, as root) reads the projects
    loads = [os.getloadavg()[0]]
    all_routes = routes(folder)
    first_warm: dict[str, list[bool]] = {r.name: [] for r in all_routes}
    sockets: list[str] = []
    try:
        for session in range(args.sessions):
            for route in all_routes:
                sock = write_config(route.config, folder, route.root.name, session + 1)
                sockets.append(sock)
                if route.session_start:
                    route.run(route.session_start, route.start_event)
                time.sleep(args.gap)
                seen = warm_share(route, 0)[1]
                route.timed("first", route.hook)
                first_warm[route.name].append(warm_share(route, seen)[0] == 1)
            for _ in range(args.next):
                for route in all_routes:
                    route.timed("bare", route.bare)
                    route.timed("next", route.hook)
            loads.append(os.getloadavg()[0])
            for sock in sockets:
                stop(sock)
    finally:
        for sock in sockets:
            stop(sock)
    shown = ("route", "bare p50", "first", "x bare", "next p50", "x bare", "next p90", "warm")
    print("{:<18} {:>9} {:>8} {:>7} {:>9} {:>7} {:>9} {:>12}".format(*shown))
    for route in all_routes:
        bare = statistics.median(route.times["bare"])
        first = statistics.median(route.times["first"])
        nxt = statistics.median(route.times["next"])
        warm, total = warm_share(route, 0)
        firsts = sum(first_warm[route.name])
        print(f"{route.name:<18} {bare:9.0f} {first:8.0f} {first / bare:7.2f} {nxt:9.0f}"
              f" {nxt / bare:7.2f} {pct(route.times['next'], 0.9):9.0f}"
              f" {warm - firsts:>4}/{total - len(first_warm[route.name]):<3}"
              f" (1st {firsts}/{len(first_warm[route.name])})")  # fmt: skip
    print(
        f"(ms; first: median of {args.sessions} sessions' first hook, {args.gap:g} s after"
        f" the session start; next: {args.next} per session, interleaved with the bare"
        " guards; warm: runs in a container started ahead of time, by the audit trail)"
    )
    print(
        f"(python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average"
        f" {min(loads):.1f}-{max(loads):.1f} (1 min) during the run)"
    )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
