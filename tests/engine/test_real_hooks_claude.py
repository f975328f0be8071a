"""More real-world Claude Code hook shapes (issue #9), each run as the agent runs it on the
host and then through sandboxrun, decisions compared: a SessionStart hook writing
CLAUDE_ENV_FILE, a plugin hook discovered by `run`, a registry-age guard through the
network allowlist (against a test server on the test's own network)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
import time
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, HookFactory
from sandboxrun._backends.docker.allowlist import PROXY_LABEL, proxy_key
from sandboxrun._settings import account_home
from tests.fake_home import command as as_account

from .conftest import cli, engine_runtime, engine_settings
from .test_allowlist import GVISOR_NONE, IMAGE, PROXY_IMAGE


def session_start(marker: Path) -> str:
    """A SessionStart hook as people write them: one benign export, and two that would run
    code in the agent's next Bash command on the host (the second touches `marker`)."""
    return (
        'echo \'export NODE_ENV="dev build"\' >> "$CLAUDE_ENV_FILE"; '
        "echo 'export PATH=/repo/bin:$PATH' >> \"$CLAUDE_ENV_FILE\"; "
        f"echo 'export X=$(touch {marker})' >> \"$CLAUDE_ENV_FILE\"; "
        "echo session ready"
    )


def sourced(env_file: Path, *names: str) -> list[str]:
    """What the agent's bash sees after sourcing `env_file`: each name's value."""
    script = f'. "{env_file}" >/dev/null 2>&1; ' + "; ".join(f'echo "${{{n}}}"' for n in names)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    return done.stdout.splitlines()


def claude_home(tmp_path: Path, settings: dict[str, Any]) -> tuple[Path, Path, Path]:
    """(home, workspace, agent env file) with the user's settings written."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    env_file = home / ".claude" / "session-env" / "s1" / "sessionstart-hook-0.sh"
    env_file.parent.mkdir(parents=True)
    return home, ws, env_file


def test_a_session_start_hook_hands_on_only_its_literal_exports(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Unsandboxed, the hook's file would put /repo/bin first on the agent's PATH and run
    `touch` on the host. Through `run --env-file`, the agent gets NODE_ENV alone, the
    context is the same, and the report names the two refused lines."""
    marker = tmp_path / "pwned"
    command = session_start(marker)
    entry = {"hooks": [{"type": "command", "command": command}]}
    home, ws, env_file = claude_home(tmp_path, {"hooks": {"SessionStart": [entry]}})
    event = json.dumps({"cwd": str(ws), "source": "startup", "session_id": "s1"})
    bare_file = tmp_path / "bare.sh"
    bare = subprocess.run(["sh", "-c", command], input=event, capture_output=True,
                          text=True, cwd=ws, env={**os.environ, "CLAUDE_ENV_FILE": str(bare_file)})  # fmt: skip
    assert sourced(bare_file, "NODE_ENV", "PATH")[:2] == ["dev build", "/repo/bin:/usr/bin:/bin"]
    assert marker.exists()  # unsandboxed, the agent's next Bash command ran the hook's code
    marker.unlink()
    ran = subprocess.run(
        cli("run", "SessionStart", "--agent", "claude", "--env-file", str(env_file), home=home),
        input=event, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    answer = json.loads(ran.stdout)
    assert answer["additionalContext"] == bare.stdout.strip() == "session ready"
    [report] = answer["hooks"]
    assert report["envFile"]["copied"] == ["NODE_ENV"]
    assert [r.split(":")[0] for r in report["envFile"]["refused"]] == ["line 2", "line 3"]
    assert sourced(env_file, "NODE_ENV", "PATH") == ["dev build", "/usr/bin:/bin"]
    assert env_file.read_text() == "export NODE_ENV='dev build'\n"
    assert not marker.exists()


def test_a_project_session_start_hook_hands_nothing_on(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """A repository's own SessionStart hook runs, but what it writes stays in the sandbox."""
    home, ws, env_file = claude_home(tmp_path, {})
    entry = {"hooks": [{"type": "command", "command": session_start(tmp_path / "pwned")}]}
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [entry]}}))
    ran = subprocess.run(
        cli("run", "SessionStart", "--agent", "claude", "--env-file", str(env_file), home=home),
        input=json.dumps({"cwd": str(ws)}), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    [report] = json.loads(ran.stdout)["hooks"]
    assert report["source"] == "project" and report["envFile"]["copied"] == []
    assert "workspace hook" in report["envFile"]["notCopied"]
    assert not env_file.exists()


@pytest.fixture
def session_env() -> Iterator[Path]:
    """An env file where Claude Code makes them: ~/.claude/session-env/<session>/."""
    root = Path(account_home()) / ".claude" / "session-env"
    created = not root.exists()
    folder = root / f"sandboxrun-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    yield folder / "sessionstart-hook-0.sh"
    shutil.rmtree(root if created else folder)


def test_exec_hands_on_only_literal_exports(
    engine: DockerBackend, session_env: Path, tmp_path: Path
) -> None:
    """`exec` around the same hook: the agent's CLAUDE_ENV_FILE (from exec's environment)
    gets NODE_ENV; stdout and the exit code are the hook's; each refusal is one line."""
    env = {**os.environ, "CLAUDE_ENV_FILE": str(session_env)}
    marker = tmp_path / "pwned"
    command = session_start(marker)
    event = json.dumps({"hook_event_name": "SessionStart", "session_id": "s1"})
    bare = subprocess.run(["sh", "-c", command], capture_output=True, text=True, input=event,
                          cwd=tmp_path, env={**env, "CLAUDE_ENV_FILE": str(tmp_path / "b")})  # fmt: skip
    boxed = subprocess.run(cli("exec", "--", command), capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=120, input=event)  # fmt: skip
    assert (
        (boxed.returncode, boxed.stdout) == (bare.returncode, bare.stdout) == (0, "session ready\n")
    )
    refused = [
        ln for ln in boxed.stderr.splitlines() if ln.startswith("sandboxrun: CLAUDE_ENV_FILE")
    ]
    assert len(refused) == 2, boxed.stderr
    assert sourced(session_env, "NODE_ENV", "PATH") == ["dev build", "/usr/bin:/bin"]
    assert not marker.exists()


GUARD = """import json, os, sys
event = json.load(sys.stdin)
data = os.environ["CLAUDE_PLUGIN_DATA"]
os.makedirs(data, exist_ok=True)
with open(os.path.join(data, "seen"), "a") as f:
    f.write("x")
seen = len(open(os.path.join(data, "seen")).read())
if "rm -rf" in event.get("tool_input", {}).get("command", ""):
    print(f"plugin guard: no rm -rf (call {seen})", file=sys.stderr)
    sys.exit(2)
"""
PLUGIN = "guard@test-market"
COMMAND = 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'


def installed_plugin(home: Path) -> Path:
    """The guard plugin as Claude Code installs and enables it, in `home`."""
    root = home / ".claude" / "plugins" / "cache" / "test-market" / "guard" / "1.0.0"
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "guard.py").write_text(GUARD)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": COMMAND}]}
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    registry = {"version": 2, "plugins": {PLUGIN: [{"scope": "user", "installPath": str(root)}]}}
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text(json.dumps(registry))
    return root


@pytest.mark.parametrize("command", ["rm -rf /", "ls"], ids=["rm", "ls"])
def test_a_plugin_hook_discovered_by_run(
    engine: DockerBackend, tmp_path: Path, command: str
) -> None:
    """`run --agent claude` finds the enabled plugin's hooks.json, mounts its root and
    gives it a writable CLAUDE_PLUGIN_DATA; the decision is the unsandboxed one."""
    home, ws, _ = claude_home(tmp_path, {"enabledPlugins": {PLUGIN: True}})
    root = installed_plugin(home)
    event = json.dumps({"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(ws)})
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(root),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "bare-data")}  # fmt: skip
    bare = subprocess.run(["sh", "-c", COMMAND], input=event, capture_output=True, text=True,
                          cwd=ws, env=env)  # fmt: skip
    ran = subprocess.run(cli("run", "PreToolUse", "--agent", "claude", home=home), input=event,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    answer = json.loads(ran.stdout)
    [report] = answer["hooks"]
    assert (report["source"], report["exitCode"]) == ("plugin", bare.returncode), report
    assert answer["blocked"] is (bare.returncode == 2) is ("rm -rf" in command)
    if bare.returncode == 2:
        assert answer["reason"] == bare.stderr.strip()
    assert not (home / ".claude" / "plugins" / "data").exists()  # the host's is not touched


def test_plugin_data_persists_only_with_state(engine: DockerBackend, tmp_path: Path) -> None:
    """Without `state` each run starts with empty plugin data; with the plugin named in
    `state`, it is kept between runs (in the state folder, not the agent's)."""
    home, ws, _ = claude_home(tmp_path, {"enabledPlugins": {PLUGIN: True}})
    installed_plugin(home)
    event = json.dumps({"tool_name": "Bash", "tool_input": {"command": "rm -rf x"},
                        "cwd": str(ws)})  # fmt: skip
    runtime = f'runtime = "{engine_runtime()}"\n' if engine_runtime() else ""
    config = tmp_path / "config.toml"

    def reasons(extra: str) -> list[str]:
        config.write_text(f'{runtime}state_dir = "{tmp_path / "state"}"\n{extra}')
        out = []
        for _ in range(2):
            ran = subprocess.run(cli("run", "PreToolUse", "--agent", "claude", config=config,
                                     home=home), input=event, capture_output=True, text=True,
                                 timeout=120)  # fmt: skip
            out.append(json.loads(ran.stdout)["reason"])
        return out

    assert reasons("") == ["plugin guard: no rm -rf (call 1)"] * 2
    assert reasons(f'state = ["{PLUGIN}"]\n') == [
        "plugin guard: no rm -rf (call 1)", "plugin guard: no rm -rf (call 2)"
    ]  # fmt: skip


# A registry-age guard: blocks `npm install PKG` for a package published less than a week
# ago, as supply-chain guards do; the registry is reached by name (on the host through
# DNS, emulated here by REGISTRY_URL; in the sandbox through the allowlist proxy).
REGISTRY_GUARD = textwrap.dedent("""
    import json, os, re, sys, urllib.request
    from datetime import datetime, timezone
    command = json.load(sys.stdin).get("tool_input", {}).get("command", "")
    m = re.match(r"npm install (\\S+)", command)
    if m:
        url = os.environ.get("REGISTRY_URL", "http://registry.test") + "/" + m[1]
        info = json.load(urllib.request.urlopen(url, timeout=20))
        created = datetime.fromisoformat(info["created"])
        age = (datetime.now(timezone.utc) - created).days
        if age < 7:
            print(f"{m[1]} was published {age} days ago: wait a week", file=sys.stderr)
            sys.exit(2)
""").strip()


@pytest.fixture(scope="module")
def registry(engine: DockerBackend) -> Iterator[dict[str, str]]:
    """A package registry (an HTTP server as registry.test) on the test's own network."""
    api = engine.api
    try:
        api.inspect_image(PROXY_IMAGE)
    except Exception:
        if os.environ.get("CI", "").lower() == "true":
            raise
        pytest.skip(f"no {PROXY_IMAGE}: run `sandboxrun images build`")
    tag = uuid.uuid4().hex[:8]
    now = datetime.now(UTC).isoformat()
    serve = (
        f'mkdir -p /tmp/r && cd /tmp/r && echo \'{{"created": "{now}"}}\' > fresh-pkg && '
        'echo \'{"created": "2020-01-01T00:00:00+00:00"}\' > old-pkg && '
        "exec python3 -m http.server 80"
    )
    net = api.create_network(f"sandboxrun-test-registry-{tag}", labels={"sandboxrun.test": tag})
    cid = None
    try:
        cid = api.create_container(
            IMAGE, entrypoint=["/bin/sh", "-c"], command=[serve], user="0",
            name=f"sandboxrun-test-registry-{tag}", labels={"sandboxrun.test": tag},
            networking_config=api.create_networking_config(
                {net["Id"]: api.create_endpoint_config(aliases=["registry.test"])}
            ),
            host_config=api.create_host_config(network_mode=net["Id"]),
        )["Id"]  # fmt: skip
        api.start(cid)
        info = api.inspect_container(cid)["NetworkSettings"]["Networks"]
        ip = next(iter(info.values()))["IPAddress"]
        _wait_for(f"http://{ip}/old-pkg")
        yield {"network": net["Id"], "ip": ip}
    finally:
        key = proxy_key(["registry.test"], net["Id"])
        mine = api.containers(all=True, filters={"label": f"{PROXY_LABEL}={key}"})
        for c in ([cid] if cid else []) + [c["Id"] for c in mine]:
            api.remove_container(c, force=True)
        api.remove_network(net["Id"])


def _wait_for(url: str, bound: float = 60.0) -> None:
    """Until the server the test started answers (it starts while the test goes on)."""
    deadline = time.monotonic() + bound
    while True:
        try:
            urllib.request.urlopen(url, timeout=5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.runc_only(GVISOR_NONE)
@pytest.mark.parametrize("package", ["fresh-pkg", "old-pkg"])
def test_a_registry_age_guard_through_the_allowlist(
    engine: DockerBackend, registry: dict[str, str], tmp_path: Path, package: str
) -> None:
    """The guard looks the package up through the allowlist proxy and decides as it does
    on the host: a package published today is blocked, an old one allowed."""
    home, ws, _ = claude_home(tmp_path, {})
    script = home / ".claude" / "hooks" / "registry_guard.py"
    script.parent.mkdir()
    script.write_text(REGISTRY_GUARD)
    command = f"python3 {script}"
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    event = {"tool_name": "Bash", "tool_input": {"command": f"npm install {package}"},
             "cwd": str(ws)}  # fmt: skip
    env = {**os.environ, "REGISTRY_URL": f"http://{registry['ip']}"}
    bare = subprocess.run(["sh", "-c", command], input=json.dumps(event), capture_output=True,
                          text=True, cwd=ws, env=env, timeout=60)  # fmt: skip
    settings = engine_settings(agent="claude", network="allowlist", timeout=60,
                               allow_domains=["registry.test"], egress_network=registry["network"])  # fmt: skip
    backend = DockerBackend(settings, client=engine.client)
    result = HookFactory(settings, backend, home=str(home)).run("PreToolUse", event).to_json()
    [report] = result["hooks"]
    assert report["exitCode"] == bare.returncode == (2 if package == "fresh-pkg" else 0), report
    assert result["blocked"] is (bare.returncode == 2)
    if bare.returncode == 2:
        assert result["reason"] == bare.stderr.strip()
    assert "refusedHosts" not in report


def test_exec_gives_a_wrapped_plugin_hook_private_data(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Wrapped by exec, the plugin guard writes its CLAUDE_PLUGIN_DATA (a private tmpfs at
    the agent's path) and decides as unsandboxed; the agent's own data folder is not
    touched, and a data folder other than the plugin's own is ignored, said so. In a fake
    account home (tests/fake_home.py) where installed_plugins.json lists the plugin."""
    home, ws, _ = claude_home(tmp_path, {})
    root = installed_plugin(home)
    data = home / ".claude" / "plugins" / "data" / "guard-test-market"
    event = json.dumps({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(root)}
    bare = subprocess.run(["sh", "-c", COMMAND], input=event, capture_output=True, text=True,
                          cwd=ws, env={**env, "CLAUDE_PLUGIN_DATA": str(tmp_path / "d")})  # fmt: skip
    boxed = subprocess.run(as_account(home, cli("exec", "--", COMMAND)), input=event,
                           capture_output=True, text=True, cwd=ws, timeout=120,
                           env={**env, "CLAUDE_PLUGIN_DATA": str(data)})  # fmt: skip
    assert (boxed.returncode, boxed.stderr) == (bare.returncode, bare.stderr) == (
        2, "plugin guard: no rm -rf (call 1)\n"
    )  # fmt: skip
    assert not data.exists()
    for elsewhere in (tmp_path / "elsewhere", data.parent / "other-market"):
        boxed = subprocess.run(as_account(home, cli("exec", "--", COMMAND)), input=event,
                               capture_output=True, text=True, cwd=ws, timeout=120,
                               env={**env, "CLAUDE_PLUGIN_DATA": str(elsewhere)})  # fmt: skip
        assert "CLAUDE_PLUGIN_DATA ignored" in boxed.stderr and boxed.returncode != 2
        assert not elsewhere.exists()
