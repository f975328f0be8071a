"""The harness of the real agent CLIs (issue 30): each agent from npm (exact versions in
this folder's package-lock.json, installed into a cache outside the clone and reused),
run headless as an account of its own, inside a network namespace that has loopback
only, against the fake model of `fakemodel.py`.

Needs root (to make the accounts and the namespace): run as another user the tests skip
with the reason; under `CI=true` a skip is a failure, a failed npm install included.
`scripts/test` runs this folder as a pass of its own (`pyproject.toml` keeps it out of
the other passes: `norecursedirs`).
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from . import fakemodel, npmcache
from .fakebase import FakeServer

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
S = TypeVar("S", bound=FakeServer)
# Loopback only, and no proxy: the variables an agent (or npm) would route through.
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy",
                   "https_proxy", "all_proxy", "no_proxy")  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/tests/agents/" in str(item.path):
            item.add_marker(pytest.mark.docker)  # counted in the engine tests' summary line


def need(condition: bool, reason: str) -> None:
    """Skip with `reason` when `condition` fails; under `CI=true`, fail instead."""
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the agents' pass must run)", pytrace=False)
    pytest.skip(reason)


def _run(argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=False, **kwargs)


# -- the agents, from npm ------------------------------------------------------------


@pytest.fixture(scope="session")
def agents_bin() -> Path:
    """`node_modules/.bin` of the pinned agents: `npm ci` of this folder's lockfile into
    the cache (one folder per lockfile, made once, then reused); or the folder
    `SANDBOX_TEST_AGENTS_BIN` names (`scripts/agents-drift`: the newest versions)."""
    need(os.geteuid() == 0, "the agents' pass makes accounts and a network namespace: run as root")
    given = os.environ.get("SANDBOX_TEST_AGENTS_BIN")
    if given:
        need(Path(given).is_dir(), f"SANDBOX_TEST_AGENTS_BIN={given} is not a folder")
        return Path(given)
    need(
        shutil.which("npm") is not None,
        "npm is not installed (scripts/setup installs node and npm)",
    )
    try:
        return npmcache.pinned()
    except npmcache.NpmFailed as failed:
        need(False, f"tests/agents: {failed}")
        raise  # not reached: need() skips or fails


# -- sandboxrun, as an account runs it -------------------------------------------------


def account_can_run(user: str, python: str) -> bool:
    return (
        _run(["runuser", "-u", user, "--", python, "-I", "-c", "import sandboxrun"]).returncode == 0
    )


def account_python(user: str) -> str:
    """A Python the agent's account can start with sandboxrun importable: the clone's
    venv when the account can reach it (CI: `python3 -m venv` of the system's Python),
    else a venv of the cache made from /usr/bin/python3 with this clone installed
    editable (a venv under root's 0700 home, e.g. pyenv's, is out of its reach)."""
    mine = str(ROOT / ".venv" / "bin" / "python")
    if account_can_run(user, mine):
        return mine
    key = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    venv = npmcache.cache_dir() / f"venv-{key}"
    python = str(venv / "bin" / "python")
    if not account_can_run(user, python):
        shutil.rmtree(venv, ignore_errors=True)
        made = _run(["/usr/bin/python3", "-m", "venv", str(venv)], timeout=300)
        need(
            made.returncode == 0, f"could not make a venv the account can run: {made.stderr[-400:]}"
        )
        pip = _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-e", str(ROOT)], timeout=900)  # fmt: skip
        need(pip.returncode == 0, f"pip install into {venv} failed: {pip.stderr[-600:]}")
    need(account_can_run(user, python), f"{user} cannot import sandboxrun with {python}")
    return python


# -- accounts --------------------------------------------------------------------------


@dataclass
class Account:
    """An account of the agent's own, in the docker group; its home is fresh."""

    name: str
    home: Path
    python: str

    @property
    def sandboxrun(self) -> list[str]:
        return [self.python, "-m", "sandboxrun"]

    def env(self, extra: Mapping[str, str] = ()) -> list[str]:  # type: ignore[assignment]
        """`env -i` with the account's own basics (no proxy variables) and `extra`."""
        base = {"HOME": str(self.home), "USER": self.name, "LOGNAME": self.name,
                "SHELL": "/bin/bash", "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "TERM": "dumb"}  # fmt: skip
        base.update(extra)
        assert not set(base) & set(PROXY_VARIABLES)
        return ["env", "-i", *(f"{k}={v}" for k, v in base.items())]

    def as_me(self, argv: Sequence[str], netns: str | None = None,
              extra: Mapping[str, str] = ()) -> list[str]:  # type: ignore[assignment]  # fmt: skip
        """`argv` run as this account (and in `netns`), with a clean environment."""
        prefix = ["ip", "netns", "exec", netns] if netns else []
        return [*prefix, "runuser", "-u", self.name, "--", *self.env(extra), *argv]

    def sbx(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """`sandboxrun ARGS` as this account."""
        return _run(self.as_me([*self.sandboxrun, *args]), cwd=cwd or self.home, timeout=600)

    def config(self, text: str) -> None:
        """The account's own sandboxrun config file (with its audit trail)."""
        folder = self.home / ".config" / "sandboxrun"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(f'audit_log = "{self.audit_log}"\n{text}')
        self.own(self.home / ".config")

    @property
    def audit_log(self) -> Path:
        return self.home / "audit.jsonl"

    def audit(self) -> list[dict[str, Any]]:
        if not self.audit_log.exists():
            return []
        return [json.loads(line) for line in self.audit_log.read_text().splitlines() if line]

    def own(self, path: Path) -> None:
        _run(["chown", "-R", f"{self.name}:{self.name}", str(path)])


def make_account(agent: str) -> Iterator[Account]:
    need(_run(["getent", "group", "docker"]).returncode == 0, "no docker group on this machine")
    top = Path(tempfile.mkdtemp(prefix=f"sandboxrun-agent-{agent}-"))
    top.chmod(0o755)
    name = f"sbxa-{agent[:8]}-{os.getpid()}"
    home = top / "home"
    made = _run(["useradd", "--create-home", "--home-dir", str(home), "--groups", "docker",
                 "--shell", "/bin/bash", "--user-group", name])  # fmt: skip
    need(made.returncode == 0, f"useradd {name} failed: {made.stderr.strip()}")
    try:
        assert pwd.getpwnam(name).pw_dir == str(home)  # sandboxrun's home is the agent's $HOME
        yield Account(name, home, account_python(name))
    finally:
        _run(["userdel", name])
        shutil.rmtree(top, ignore_errors=True)


# -- the network namespace -------------------------------------------------------------


@dataclass
class Netns:
    """A network namespace with loopback up, and a route out that goes nowhere: every
    packet to any other address (DNS included) is rejected and counted, so an attempted
    connection fails fast and the test sees it."""

    name: str

    def attempts(self) -> str:
        """What tried to leave loopback ("" when nothing did)."""
        found = []
        for tool in ("iptables", "ip6tables"):
            rules = _run(["ip", "netns", "exec", self.name, tool, "-L", "OUTPUT", "-n", "-v", "-x"])
            for line in rules.stdout.splitlines():
                words = line.split()
                if "REJECT" in words and words[0] != "0":
                    found.append(f"{tool}: {words[0]} packet(s) rejected")
        recent = _run(["ip", "netns", "exec", self.name, "cat", "/proc/net/xt_recent/out"])
        if found and recent.stdout.strip():
            found.append(f"to: {recent.stdout.strip()}")
        return "; ".join(found)


@pytest.fixture(scope="session")
def netns() -> Iterator[Netns]:
    need(os.geteuid() == 0, "the agents' pass makes a network namespace: run as root")
    name = f"sbxa-{os.getpid()}"
    steps = [
        ["ip", "netns", "add", name],
        ["ip", "-n", name, "link", "set", "lo", "up"],
        ["ip", "-n", name, "link", "add", "out0", "type", "veth", "peer", "name", "out1"],
        ["ip", "-n", name, "addr", "add", "10.255.255.1/32", "dev", "out0"],
        ["ip", "-n", name, "link", "set", "out0", "up"],
        ["ip", "-n", name, "link", "set", "out1", "up"],
        ["ip", "-n", name, "route", "add", "default", "dev", "out0"],
        ["ip", "netns", "exec", name, "iptables", "-A", "OUTPUT", "!", "-o", "lo", "-m", "recent",
         "--rdest", "--name", "out", "--set", "-j", "REJECT"],
        ["ip", "-n", name, "-6", "route", "add", "default", "dev", "out0"],
        # TCP and UDP only: the kernel's own neighbour discovery (ICMPv6) is no agent's.
        ["ip", "netns", "exec", name, "ip6tables", "-A", "OUTPUT", "!", "-o", "lo", "-p", "tcp",
         "-j", "REJECT"],
        ["ip", "netns", "exec", name, "ip6tables", "-A", "OUTPUT", "!", "-o", "lo", "-p", "udp",
         "-j", "REJECT"],
    ]  # fmt: skip
    try:
        for step in steps:
            done = _run(step)
            need(done.returncode == 0, f"cannot make the network namespace ({' '.join(step)}): "
                 f"{done.stderr.strip()}")  # fmt: skip
        yield Netns(name)
    finally:
        _run(["ip", "netns", "del", name])


def watched(netns: Netns, start: Callable[[str], S]) -> Iterator[S]:
    """A fake model server (`start(netns)`), listening on loopback inside the namespace;
    after the test, nothing may have tried to leave loopback."""
    before = netns.attempts()
    server = start(netns.name)
    yield server
    server.stop()
    after = netns.attempts()
    assert after == before, f"an agent tried to leave loopback: {after}"


@pytest.fixture
def model(netns: Netns) -> Iterator[fakemodel.FakeModel]:
    """The fake Anthropic Messages API (Claude Code's)."""
    yield from watched(netns, fakemodel.start)


# -- a project -------------------------------------------------------------------------


def command_hooks(
    events: Mapping[str, Sequence[tuple[str, int | None]]], matcher: str | None = None
) -> dict[str, Any]:
    """The `hooks` object of Claude Code's settings, and of the agents shaped like it
    (Codex, Gemini CLI, Qwen Code): per event one group of command hooks, each given as
    (command, timeout or None), with `matcher` when one is given."""
    groups: dict[str, Any] = {}
    for event, hooks in events.items():
        entries = []
        for command, timeout in hooks:
            entry: dict[str, Any] = {"type": "command", "command": command}
            if timeout is not None:
                entry["timeout"] = timeout
            entries.append(entry)
        groups[event] = [{"matcher": matcher, "hooks": entries} if matcher else {"hooks": entries}]
    return {"hooks": groups}


def make_project(account: Account, files: Mapping[str, str]) -> Path:
    """A git project in the account's home with a `victim` folder and `files` (paths
    relative to the project; `.sh`/`.py` made executable), owned by the account."""
    project = account.home / f"project-{uuid.uuid4().hex[:8]}"
    (project / "victim").mkdir(parents=True)
    (project / "victim" / "keep.txt").write_text("the model must not remove this\n")
    for relative, text in files.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if path.suffix in (".sh", ".py"):
            path.chmod(0o755)
    _run(["git", "init", "-q", str(project)])
    account.own(project)
    return project


def snapshot(paths: Sequence[Path]) -> dict[str, bytes | None]:
    """Every regular file under `paths` (files or folders), byte for byte."""
    found: dict[str, bytes | None] = {}
    for top in paths:
        if top.is_file():
            found[str(top)] = top.read_bytes()
        elif top.is_dir():
            for path in sorted(top.rglob("*")):
                if path.is_file() and ".git" not in path.relative_to(top).parts:
                    found[str(path)] = path.read_bytes()
        else:
            found[str(top)] = None
    return found
