"""compose.yaml as the README runs it: `scripts/compose-prepare`, then `up` builds the
hook images and starts `sandboxrun serve` next to the engine; a `run` over its TCP port
(with the token) answers as a cold `sandboxrun run` does; `down -v` leaves nothing.

Runs with Debian's `docker-compose` (1.29) and, where installed, Compose v2's
`docker compose`. Without `docker-compose` it skips, except in CI (`scripts/setup`
installs it). The images are built under test tags (`sandboxrun/*:compose-test`), never
over the ones other runs use; the build cache makes that quick after the first time.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend

ROOT = Path(__file__).resolve().parents[2]
TAGS = {
    "HOOKS_IMAGE": "sandboxrun/hooks:compose-test",
    "PROXY_IMAGE": "sandboxrun/proxy:compose-test",
    "SERVE_IMAGE": "sandboxrun/serve:compose-test",
}
GUARD = """#!/bin/sh
case "$(cat)" in
  *"rm -rf"*) echo '{"cancel": true, "errorMessage": "rm -rf is not allowed here"}' ;;
  *) echo '{"cancel": false}' ;;
esac
"""
EVENT = {"preToolUse": {"toolName": "execute_command", "parameters": {"command": "rm -rf /"}}}


def _v2_plugin() -> bool:
    try:
        done = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.fixture(params=["docker-compose", "docker compose"], ids=["v1", "v2"])
def compose_cmd(request: pytest.FixtureRequest, engine: DockerBackend) -> list[str]:
    """The compose command under test: Debian's `docker-compose` must be there in CI;
    Compose v2's plugin is tested where it is installed."""
    if request.param == "docker-compose":
        if shutil.which("docker-compose") is None:
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail("CI needs docker-compose (scripts/setup installs it)")
            pytest.skip("docker-compose is not installed (apt-get install docker-compose)")
        return ["docker-compose"]
    if not _v2_plugin():
        pytest.skip("Compose v2 (`docker compose`) is not installed")
    return ["docker", "compose"]


@pytest.fixture(scope="module")
def prepared() -> Iterator[Path]:
    """A folder with what scripts/compose-prepare makes (build contexts, token, .env),
    and the workspaces folder; the README's route: --offline as root."""
    folder = Path(tempfile.mkdtemp(prefix="sr-compose-", dir="/tmp"))
    folder.chmod(0o755)
    offline = ["--offline"] if os.geteuid() == 0 else []
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "compose-prepare"), *offline,
         "--out", str(folder / "build"), "--env-file", str(folder / ".env"),
         "--workspaces", str(folder / "ws")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class Project:
    """One compose project of the test: its own name and published port."""

    def __init__(self, command: list[str], folder: Path) -> None:
        self.name = f"srtest{uuid.uuid4().hex[:10]}"
        self.argv = [*command, "--env-file", str(folder / ".env"), "-f", str(ROOT / "compose.yaml"),
                     "-p", self.name]  # fmt: skip
        # The shell's values win over the env file's: none of compose.yaml's from ours,
        # then our tags and a free loopback port.
        ours = {"WORKSPACES", "BASE_IMAGE", "BUILD_DIR", "TOKEN_FILE", "DOCKER_SOCKET"}
        env = {k: v for k, v in os.environ.items() if k not in ours}
        self.env = {**env, **TAGS, "SERVE_PUBLISH": "127.0.0.1:"}
        self.token = (folder / "build" / "token").read_text().strip()

    def __call__(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(
            [*self.argv, *args], env=self.env, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, f"{' '.join(args)}: {done.stderr[-3000:]}"
        return done.stdout

    def leftovers(self) -> list[str]:
        """What of this project the engine still has: containers, networks, volumes."""
        label = f"label=com.docker.compose.project={self.name}"
        found = []
        for kind in (["ps", "-a"], ["network", "ls"], ["volume", "ls"]):
            out = subprocess.run(
                ["docker", *kind, "-q", "--filter", label],
                capture_output=True, text=True, timeout=60, check=True,
            ).stdout  # fmt: skip
            found += [f"{kind[0]} {line}" for line in out.split()]
        return found


def request(port: int, method: str, path: str, token: str | None, body: Any = None) -> Any:
    """One HTTP request to the service: (status, JSON)."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def wait_healthy(project: Project, port: int) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            status, health = request(port, "GET", "/healthz", project.token)
            if status == 200 and health["ok"]:
                return
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"serve did not answer: {project('logs', 'serve')[-3000:]}")
        time.sleep(0.5)


def engine_socket_holders(project: Project) -> list[str]:
    """The project's services whose containers have the engine's socket mounted."""
    ids = project("ps", "-a", "-q").split()
    found = subprocess.run(
        ["docker", "inspect", "--format",
         '{{index .Config.Labels "com.docker.compose.service"}}'
         '{{range .Mounts}} {{.Destination}}{{end}}', *ids],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.splitlines()  # fmt: skip
    return sorted(line.split()[0] for line in found if "/var/run/docker.sock" in line.split())


def comparable(stdout: bytes) -> dict[str, Any]:
    """`run`'s answer without what varies from run to run (durations, the warm flag)."""
    document: dict[str, Any] = json.loads(stdout)
    for hook in document["hooks"]:
        hook.pop("durationMs")
        hook.pop("warm")
    return document


def test_compose_serves_runs_like_the_cold_path(compose_cmd: list[str], prepared: Path) -> None:
    workspace = prepared / "ws" / f"proj-{uuid.uuid4().hex[:8]}"
    (workspace / ".clinerules" / "hooks").mkdir(parents=True)
    guard = workspace / ".clinerules" / "hooks" / "PreToolUse"
    guard.write_text(GUARD)
    guard.chmod(0o755)
    event = json.dumps(EVENT).encode()
    project = Project(compose_cmd, prepared)
    hostname = ""  # the serve container's: its hook containers carry it as a label
    try:
        project("up", "-d", "--build", timeout=900)
        port = int(project("port", "serve", "8765").strip().rpartition(":")[2])
        wait_healthy(project, port)
        assert engine_socket_holders(project) == ["serve"]
        hostname = subprocess.run(
            ["docker", "inspect", "--format", "{{.Config.Hostname}}",
             project("ps", "-q", "serve").strip()],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout.strip()  # fmt: skip

        body = {"args": ["PreToolUse", "--workspace", str(workspace)], "cwd": str(workspace),
                "stdin": base64.b64encode(event).decode(), "env": {}}  # fmt: skip
        assert request(port, "POST", "/v1/run", None, body)[0] == 401
        status, served = request(port, "POST", "/v1/run", project.token, body)
        assert status == 200, served
        assert served["exitCode"] == 0, base64.b64decode(served["stderr"])

        config = prepared / f"cold-{project.name}.toml"
        config.write_text(f'image = "{TAGS["HOOKS_IMAGE"]}"\n')
        cold = subprocess.run(
            [sys.executable, "-m", "sandboxrun", "run", "--config", str(config), "--no-serve",
             "PreToolUse", "--workspace", str(workspace)],
            input=event, capture_output=True, timeout=120, cwd=workspace,
        )  # fmt: skip
        assert cold.returncode == 0, cold.stderr
        answer = comparable(base64.b64decode(served["stdout"]))
        assert answer == comparable(cold.stdout)
        assert answer["cancel"] is True
        assert answer["hooks"][0]["status"] == "completed"
    finally:
        project("down", "-v", "--remove-orphans", timeout=300)
    assert project.leftovers() == []
    assert hostname
    hooks = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=sandboxrun.host={hostname}"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.split()  # fmt: skip
    assert hooks == [], "serve left hook containers behind"
