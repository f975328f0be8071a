"""The default image carries what real hooks are written in, and each tool works the way a
hook uses it: confined, read-only, with no network (issue #9, build item 1)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import docker.errors
import pytest

from sandboxrun import DockerBackend
from sandboxrun._backends.docker.images import OFFLINE_BASE

from .conftest import cli, engine_runtime

BLOCKED = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "rm -rf /"}})  # fmt: skip
ALLOWED = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "ls"}})  # fmt: skip

# A node guard as people publish them: reads the event, blocks `rm -rf` the Claude way.
NODE_GUARD = """\
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const event = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const command = (event.tool_input || {}).command || "";
  if (/\\brm\\s+-[a-z]*r[a-z]*f|\\brm\\s+-[a-z]*f[a-z]*r/.test(command)) {
    console.error(`Blocked: ${command}`);
    process.exit(2);
  }
  console.log(JSON.stringify({ decision: "approve", tool: event.tool_name }));
});
"""

# A `uv run --script` guard with inline metadata and no dependencies.
UV_GUARD = """\
#!/usr/bin/env -S uv run --script
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
import json, sys
event = json.load(sys.stdin)
if "rm -rf" in event.get("tool_input", {}).get("command", ""):
    print(json.dumps({"decision": "block", "reason": "rm -rf"}))
    sys.exit(2)
print(json.dumps({"decision": "approve"}))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "guard.js").write_text(NODE_GUARD)
    (root / "hooks" / "guard.py").write_text(UV_GUARD)
    (root / "hooks" / "guard.py").chmod(0o755)
    return root


def sandboxed(
    project: Path, *command: str, stdin: str = "", timeout: str = "40"
) -> subprocess.CompletedProcess[str]:
    """Run a hook command through the real `sandboxrun exec`, in the project."""
    argv = cli("exec", "--workspace", str(project), "--timeout", timeout, "--", *command)
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, cwd=project, timeout=120
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["python", "--version"], "Python 3."),
        (["python3", "-c", "import ssl, sqlite3, json; print('stdlib ok')"], "stdlib ok"),
        (["node", "-e", "console.log('node', 6 * 7)"], "node 42"),
        (["npx", "--version"], "9."),
        (["npm", "--version"], "9."),
        (["uv", "--version"], "uv 0."),
        (["uvx", "--version"], "uvx 0."),
        (["curl", "--version"], "curl "),
        (["awk", "BEGIN { print 6 * 7 }"], "42"),
        (["gawk", "--version"], "GNU Awk"),
        (["find", "hooks", "-name", "*.js"], "hooks/guard.js"),
        (["dash", "-c", "echo dash $((6 * 7))"], "dash 42"),
        (["sh", "-c", "echo sh ok | sed s/ok/fine/ | grep fine | jq -R ."], '"sh fine"'),
        (["git", "--version"], "git version"),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else None,
)
def test_tool_runs_in_the_sandbox(
    engine: DockerBackend, project: Path, command: list[str], expected: str
) -> None:
    """Each tool hooks are written in starts in the sandbox and does its job."""
    done = sandboxed(project, *command)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout


@pytest.mark.parametrize(
    ("command"),
    [["uv", "run", "--script", "hooks/guard.py"], ["./hooks/guard.py"]],
    ids=["uv-run-script", "shebang"],
)
def test_uv_script_guard_decides_offline(
    engine: DockerBackend, project: Path, command: list[str]
) -> None:
    """A `uv run --script` guard with no dependencies blocks `rm -rf` and allows `ls`,
    offline and read-only, called by uv or through its shebang."""
    blocked = sandboxed(project, *command, stdin=BLOCKED)
    assert (blocked.returncode, json.loads(blocked.stdout)) == (
        2, {"decision": "block", "reason": "rm -rf"},
    ), blocked.stderr  # fmt: skip
    allowed = sandboxed(project, *command, stdin=ALLOWED)
    assert (allowed.returncode, json.loads(allowed.stdout)) == (0, {"decision": "approve"})


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on the host to compare with")
@pytest.mark.parametrize("stdin", [BLOCKED, ALLOWED], ids=["rm-rf", "ls"])
def test_node_guard_decides_the_same_sandboxed(
    engine: DockerBackend, project: Path, stdin: str
) -> None:
    """A node guard gives the same exit code, stdout and stderr sandboxed as on the host."""
    bare = subprocess.run(
        ["node", "hooks/guard.js"], input=stdin, capture_output=True, text=True,
        cwd=project, timeout=60,
    )  # fmt: skip
    wrapped = sandboxed(project, "node", "hooks/guard.js", stdin=stdin)
    assert (wrapped.returncode, wrapped.stdout, wrapped.stderr) == (
        bare.returncode, bare.stdout, bare.stderr,
    )  # fmt: skip
    assert bare.returncode == (2 if "rm -rf" in stdin else 0)


def test_npx_no_install_is_offline_and_quick(engine: DockerBackend, project: Path) -> None:
    """`npx --no-install` runs the project's own bin offline, and a missing package fails
    with npm's error well before the deadline (npm's retries would outwait it)."""
    bin_dir = project / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "hello").write_text("#!/bin/sh\necho hello from the project\n")
    (bin_dir / "hello").chmod(0o755)
    local = sandboxed(project, "npx", "--no-install", "hello")
    assert (local.returncode, local.stdout) == (0, "hello from the project\n"), local.stderr
    missing = sandboxed(project, "npx", "--no-install", "cowsay", "hi", timeout="40")
    assert missing.returncode == 1
    assert "npm ERR!" in missing.stderr and "timed out" not in missing.stderr


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def tls_material(project: Path) -> Path:
    """A throwaway CA and a server certificate for 127.0.0.1, in the project."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl on the host to make a test CA")
    tls = project / "tls"
    tls.mkdir()
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.crt", "-days", "2", "-subj", "/CN=sandboxrun test CA", cwd=tls)  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr",
             "-subj", "/CN=127.0.0.1", cwd=tls)  # fmt: skip
    (tls / "ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "leaf.crt", "-days", "2", "-extfile", "ext", cwd=tls)  # fmt: skip
    for f in tls.iterdir():
        f.chmod(0o644)  # the hook's uid reads the server key from the read-only mount
    return tls


# Inside one sandbox: an HTTPS server on the loopback with the CA's certificate, and each
# TLS client hooks use asked to trust it (uv is given an index there; 404 = TLS worked).
TLS_PROBE = """\
python3 - <<'PY' &
import http.server, ssl
srv = http.server.HTTPServer(("127.0.0.1", 8443), http.server.SimpleHTTPRequestHandler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("tls/leaf.crt", "tls/leaf.key")
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
PY
for i in 1 2 3 4 5 6 7 8 9 10; do curl -sk -o /dev/null https://127.0.0.1:8443/ && break; sleep 0.5; done
url=https://127.0.0.1:8443/
curl -sS -o /dev/null -w 'curl %{http_code}\\n' "$url"
python3 -c 'import sys, urllib.request; print("python", urllib.request.urlopen(sys.argv[1]).status)' "$url"
node -e 'require("https").get(process.argv[1], r => console.log("node", r.statusCode)).on("error", e => console.log("node", e.code))' "$url"
UV_INDEX_URL="${url}simple" uv run --no-project --with nosuchpkg python -c 1 2>&1 | grep -q 'No solution found' && echo "uv 404"
kill $!
"""


def test_ca_cert_flag_makes_hooks_trust_the_ca(
    engine: DockerBackend, project: Path, tls_material: Path, tmp_path: Path
) -> None:
    """`images build --ca-cert FILE` puts the CA in the image's trust store: curl, python,
    node and uv inside the sandbox then trust a server it signed."""
    tag = f"sandboxrun-test/hooks-ca:{os.getpid()}"
    config = tmp_path / "config.toml"
    runtime = f'runtime = "{engine_runtime()}"\n' if engine_runtime() else ""
    config.write_text(f'image = "{tag}"\n{runtime}')
    # The same base as the default image's build, so every layer but the last comes cached.
    offline = ["--offline"] if engine.client.images.list(name=OFFLINE_BASE) else []
    build = cli("images", "build", *offline, "--tag", tag,
                "--ca-cert", str(tls_material / "ca.crt"), config=config)  # fmt: skip
    try:
        built = subprocess.run(build, capture_output=True, text=True, timeout=900)
        assert built.returncode == 0, built.stderr[-2000:]
        argv = cli("exec", "--workspace", str(project), "--", "sh", "-c", TLS_PROBE,
                   config=config)  # fmt: skip
        probe = subprocess.run(argv, capture_output=True, text=True, cwd=project, timeout=120)
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):  # the build may have failed
            engine.client.images.remove(tag, force=True)
    assert probe.stdout.splitlines() == ["curl 200", "python 200", "node 200", "uv 404"], (
        probe.stderr
    )
