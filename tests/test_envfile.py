"""CLAUDE_ENV_FILE: the strict reading of what a hook wrote, the name allowlist and the
values that point into a workspace, and which agent file may receive the lines
(`_sandbox.envfile`)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from sandboxrun import ExecRequest, ExecResult, FakeBackend, HookFactory, Settings
from sandboxrun._errors import ConfigError
from sandboxrun._sandbox import envfile as _envfile
from sandboxrun._sandbox.envfile import agent_file, append, collect, parse
from sandboxrun._types import Cancel

# The names the tests' own hooks set, as a user would list them in env_file_allow.
ALLOW = frozenset({"GREETING", "A", "B", "C", "D", "URL", "APP_ENV_NAME", "X"})


@pytest.mark.parametrize(
    ("line", "name", "value"),
    [
        ("export GREETING=hello", "GREETING", "hello"),
        ("GREETING=hello", "GREETING", "hello"),
        ("export A='two words'", "A", "two words"),
        ('export A="two words"', "A", "two words"),
        ("export A=", "A", ""),
        ("export A=x'y z'\"w\"v", "A", "xy zwv"),
        (
            "export URL=https://example.test:8080/a,b@c+d%20",
            "URL",
            "https://example.test:8080/a,b@c+d%20",
        ),
        ("  export   APP_ENV_NAME=dev  ", "APP_ENV_NAME", "dev"),
        ("export A='$HOME `x` \\\\'", "A", "$HOME `x` \\\\"),
    ],
)
def test_literal_lines_are_accepted_and_requoted(line: str, name: str, value: str) -> None:
    parsed = parse(line + "\n", ALLOW)
    assert parsed.accepted == ((name, value),) and not parsed.refused
    assert parsed.lines() == [f"export {name}={shlex.quote(value)}\n"]


@pytest.mark.parametrize(
    "line",
    [
        "export PATH=/repo/bin:/usr/bin",
        "export LD_PRELOAD=/tmp/x.so",
        "BASH_ENV=/tmp/x",
        "export PROMPT_COMMAND=id",
        "export PYTHONPATH=/repo",
        "export NODE_OPTIONS=--require=/repo/x.js",
        "export GIT_SSH_COMMAND=x",
        "export PERL5OPT=-Mx",
        "export RUBYOPT=-rx",
        "export PS4=x",
        "export IFS=x",
        "export X=$(curl x|sh)",
        "export X=`id`",
        'export X="$(id)"',
        'export X="a\\"b"',
        "export X=$HOME",
        "export X=a;id",
        "export X=a|sh",
        "export X=~/bin",
        "export X=a b",
        "export X='unterminated",
        "export 1X=a",
        "export X-Y=a",
        "alias ls=rm",
        "eval x",
        "source /tmp/x",
        "export X=a\x1bb",
        "export X='a\x07b'",
    ],
)
def test_hostile_or_unclear_lines_are_refused(line: str) -> None:
    parsed = parse(line, ALLOW)
    assert not parsed.accepted, parsed
    assert len(parsed.refused) == 1 and parsed.refused[0].startswith("line 1: ")


def test_requoted_lines_mean_the_same_to_bash(tmp_path: Path) -> None:
    """What the agent's bash sources sets exactly the literal values, and runs nothing."""
    marker = tmp_path / "ran"
    text = (
        f"export A='it''s'\nB=\"x y\"\n# a comment\n\nexport C=$(touch {marker})\n"
        f"export D='$(touch {marker})'\n"
    )
    target = tmp_path / "agent.sh"
    append(str(target), parse(text, ALLOW).lines())
    out = subprocess.run(
        ["bash", "-c", f'. {target} && printf "%s|%s|%s" "$A" "$B" "$D"'],
        capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]},
    )  # fmt: skip
    assert out.stdout == f"its|x y|$(touch {marker})"
    assert not marker.exists()


# The named variables: each loads code or config; none is on the default list.
NAMED = [
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "XDG_CACHE_HOME",
    "OPENSSL_CONF", "npm_config_userconfig", "npm_config_script_shell", "NPM_CONFIG_PREFIX",
    "GOFLAGS", "CC", "MAKEFLAGS", "AWS_CONFIG_FILE", "CURL_HOME", "LUA_INIT", "PHPRC",
    "JAVA_HOME", "GNUPGHOME", "DOTNET_STARTUP_HOOKS", "PS0", "HOSTALIASES", "PATH",
    "LD_PRELOAD", "BASH_ENV", "PYTHONPATH", "NODE_OPTIONS", "GIT_CONFIG_GLOBAL", "HOME",
]  # fmt: skip


@pytest.mark.parametrize("name", NAMED)
def test_names_off_the_default_list_are_refused_by_name(name: str) -> None:
    """By default only names that load no code pass; each other one is named."""
    allow = Settings().env_file_allow
    parsed = parse(f"export {name}=/opt/x\nexport NODE_ENV=production\n", allow)
    assert parsed.accepted == (("NODE_ENV", "production"),)
    assert parsed.refused == (f"line 1: {name} is not in env_file_allow",)


def test_the_default_list_is_small_and_listed_in_the_docs() -> None:
    readme = (Path(__file__).parent.parent / "docs" / "agents" / "claude.md").read_text()
    assert Settings().env_file_allow == ("NODE_ENV", "NO_COLOR", "FORCE_COLOR")
    assert all(f"`{name}`" in readme for name in Settings().env_file_allow)


def test_env_file_allow_comes_from_the_users_config_only(home: Path) -> None:
    """The user lists names in their config file; a pattern or a non-name is refused."""
    from tests.conftest import user_config

    user_config(home, 'env_file_allow = ["GREETING"]\n')
    assert Settings.load().env_file_allow == ("GREETING",)
    for bad in ('["XDG_*"]', '["A=B"]', '["*"]'):
        user_config(home, f"env_file_allow = {bad}\n")
        with pytest.raises(ConfigError, match="variable name"):
            Settings.load()


@pytest.mark.parametrize(
    "value",
    [
        "{ws}/.cfg", "{ws}", "{ws}/a/../.cfg", "/opt/x:{ws}/bin", "--conf={ws}/x",
        "'{ws}/with space'", "file://{ws}/x", "{link}/.cfg", "{state}/x", "{plugin}/y",
        ".cfg/x", "../x", "..", ".", "./x", "'~/x'", "a,sub/dir",
    ],
)  # fmt: skip
def test_a_listed_name_pointing_into_the_workspace_is_refused(tmp_path: Path, value: str) -> None:
    """A value that is, or holds, a path into what the hook had mounted or could write
    (as written or through a link), or a relative path, never passes."""
    ws, state, plugin = tmp_path / "ws", tmp_path / "state", tmp_path / "plugin"
    for folder in (ws, state, plugin):
        folder.mkdir()
    (tmp_path / "link").symlink_to(ws)
    request = ExecRequest(("x",), b"", str(ws), mounts=(str(ws), str(plugin)), state=str(state))
    text = "export GREETING=" + value.format(ws=ws, link=tmp_path / "link", state=state,
                                             plugin=plugin)  # fmt: skip
    parsed = parse(text, ALLOW, _envfile.places(request))
    assert not parsed.accepted, parsed
    assert parsed.refused[0].startswith("line 1: GREETING: ")


@pytest.mark.parametrize(
    "value", ["/opt/tool", "https://example.test/a/b", "production", "1.2.3", "a:b", "''"]
)
def test_a_listed_name_with_a_value_outside_the_workspace_passes(
    tmp_path: Path, value: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    parsed = parse(f"export GREETING={value}", ALLOW, (str(ws),))
    assert len(parsed.accepted) == 1 and not parsed.refused


def test_a_file_over_the_bound_gives_nothing(tmp_path: Path) -> None:
    path = Path(_envfile.new_file(os.getuid(), os.getgid()))
    path.write_text("export A=1\n" * (_envfile.MAX_BYTES // 10))
    parsed = collect(str(path), ALLOW)
    assert not parsed.accepted and "more than" in parsed.refused[0]
    assert not path.exists() and not path.parent.exists()


def test_a_hook_that_swapped_its_file_for_a_link_gives_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("export TOKEN=s3cret\n")
    path = Path(_envfile.new_file(os.getuid(), os.getgid()))
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    path.unlink()
    path.symlink_to(secret)
    parsed = collect(str(path), ALLOW)
    assert not parsed.accepted and "could not be read" in parsed.refused[0]


def test_the_agent_file_must_be_in_its_session_env_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = home / ".claude" / "session-env" / "abc"
    session.mkdir(parents=True)
    good = session / "sessionstart-hook-0.sh"
    assert agent_file(str(good), str(home)) == str(good)  # not there yet: fine
    good.write_text("")
    assert agent_file(str(good), str(home)) == str(good)
    assert agent_file(None, str(home)) is None
    for bad in (home / ".bashrc", tmp_path / "x.sh", session / ".." / ".." / ".." / ".bashrc"):
        with pytest.raises(ValueError, match="session-env"):
            agent_file(str(bad), str(home))
    link = session / "link.sh"
    link.symlink_to(home / ".bashrc")
    with pytest.raises(ValueError, match="regular file"):
        agent_file(str(link), str(home))
    escape = home / ".claude" / "session-env" / "out"
    escape.symlink_to(tmp_path)
    with pytest.raises(ValueError, match="session-env"):
        agent_file(str(escape / "x.sh"), str(home))


# -- the runner: who gets a file, whose lines reach the agent ------------------------


def _writer(seen: list[ExecRequest]) -> FakeBackend:
    """A backend whose 'hook' appends `export <command's last word>=1` to its env file."""

    def run(request: ExecRequest) -> ExecResult:
        seen.append(request)
        if request.env_file:
            name = request.argv[-1].split()[-1]
            with open(request.env_file, "a") as f:
                f.write(f"export {name}=1\nexport PATH=/x\n")
        return ExecResult(exit_code=0, stdout=b"", stderr=b"", duration_ms=1)

    return FakeBackend(run)


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    entry = {"hooks": [{"type": "command", "command": f"echo {n}"} for n in ("FIRST", "SECOND")]}
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": [entry], "PreToolUse": [entry]}})
    )
    (ws / ".claude").mkdir(parents=True)
    project = {"hooks": [{"type": "command", "command": "echo PROJECT"}]}
    (ws / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": [project]}})
    )
    target = home / ".claude" / "session-env" / "s" / "sessionstart-hook-0.sh"
    target.parent.mkdir(parents=True)
    return home, ws, target


def test_user_hooks_lines_reach_the_agent_in_order(tmp_path: Path) -> None:
    home, ws, target = _setup(tmp_path)
    seen: list[ExecRequest] = []
    factory = HookFactory(Settings(agent="claude", env_file_allow=("FIRST", "SECOND", "PROJECT")), _writer(seen), home=str(home),
                          env_file=str(target))  # fmt: skip
    result = factory.run("SessionStart", {"cwd": str(ws)}).to_json()
    assert target.read_text() == "export FIRST=1\nexport SECOND=1\n"
    reports = {r["name"]: r["envFile"] for r in result["hooks"]}
    assert reports["echo FIRST"]["copied"] == ["FIRST"]
    assert (
        reports["echo PROJECT"]["copied"] == []
        and "workspace" in reports["echo PROJECT"]["notCopied"]
    )
    assert all(r.env[_envfile.VAR] == _envfile.TARGET for r in seen)
    assert not any(os.path.exists(r.env_file or "") for r in seen)  # removed afterwards


def test_a_run_whose_caller_went_away_after_its_hooks_copies_nothing(tmp_path: Path) -> None:
    """`serve`: the client hangs up between the last hook's end and the copy (its hooks
    completed, each with lines that would pass): the agent's file stays untouched."""
    home, ws, target = _setup(tmp_path)
    gone = Cancel()
    writer = _writer([])
    hook = writer._handler

    def then_hang_up(request: ExecRequest) -> ExecResult:
        result = hook(request)
        if request.argv[-1].endswith("SECOND"):  # the last hook has ended
            gone.set()
        return result

    writer._handler = then_hang_up
    factory = HookFactory(Settings(agent="claude", env_file_allow=("FIRST", "SECOND"), max_parallel=1),
                          writer, home=str(home), env_file=str(target), cancel=gone)  # fmt: skip
    result = factory.run("SessionStart", {"cwd": str(ws)}).to_json()
    assert {r["name"]: r["status"] for r in result["hooks"]}["echo SECOND"] == "completed"
    assert not target.exists()
    answered = HookFactory(Settings(agent="claude", env_file_allow=("FIRST", "SECOND")),
                           _writer([]), home=str(home), env_file=str(target), cancel=Cancel())  # fmt: skip
    answered.run("SessionStart", {"cwd": str(ws)})
    assert target.read_text() == "export FIRST=1\nexport SECOND=1\n"  # the control


def test_other_events_get_no_env_file(tmp_path: Path) -> None:
    home, ws, target = _setup(tmp_path)
    seen: list[ExecRequest] = []
    factory = HookFactory(Settings(agent="claude", env_file_allow=("FIRST", "SECOND", "PROJECT")), _writer(seen), home=str(home),
                          env_file=str(target))  # fmt: skip
    factory.run("PreToolUse", {"cwd": str(ws), "tool_name": "Bash"})
    assert seen and all(r.env_file is None and _envfile.VAR not in r.env for r in seen)
    assert not target.exists()


def test_an_env_file_outside_the_agents_folder_is_refused(tmp_path: Path) -> None:
    home, ws, _ = _setup(tmp_path)
    bashrc = home / ".bashrc"
    factory = HookFactory(Settings(agent="claude", env_file_allow=("FIRST", "SECOND", "PROJECT")), _writer([]), home=str(home),
                          env_file=str(bashrc))  # fmt: skip
    with pytest.raises(ConfigError, match="--env-file refused"):
        factory.run("SessionStart", {"cwd": str(ws)})
    closed = HookFactory(Settings(agent="claude", fail_closed=True), _writer([]),
                         home=str(home), env_file=str(bashrc))  # fmt: skip
    assert closed.run("SessionStart", {"cwd": str(ws)}).answer["blocked"] is True
    assert not bashrc.exists()


# -- exec: the same rules as run's (issue 31, item 2) --------------------------------


def _exec_env(
    home: Path, tmp_path: Path, agent: str, folder: str, code: int,
    stdin: bytes = b'{"hook_event_name": "SessionStart"}', hook_name: str | None = None,
    seen: list[ExecRequest] | None = None,
) -> tuple[Path, bytes]:  # fmt: skip
    """`exec` of a SessionStart command (`stdin`, `exec --event` `hook_name`) that writes
    `export NODE_ENV=production` to its env file and exits `code`, the agent's
    CLAUDE_ENV_FILE in `~/<folder>/session-env`: (that file, exec's stderr)."""
    from sandboxrun._runner.exec import exec_request, run_exec

    target = home / folder / "session-env" / "s1" / "sessionstart-hook-0.sh"
    target.parent.mkdir(parents=True)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    environ = {_envfile.VAR: str(target)}

    def hook(request: ExecRequest) -> ExecResult:
        if seen is not None:
            seen.append(request)
        if request.env_file:
            with open(request.env_file, "a") as f:
                f.write("export NODE_ENV=production\n")
        return ExecResult(code, b"", b"", 5)

    settings = Settings.load(agent=agent)
    request = exec_request(settings, ["hook"], stdin, None, environ, cwd=str(ws),
                           hook_name=hook_name)  # fmt: skip
    out = run_exec(settings, FakeBackend(hook), request, environ, hook_name=hook_name)
    return target, out.stderr


def test_exec_hands_lines_to_the_agents_own_session_env_folder(home: Path, tmp_path: Path) -> None:
    """Qoder's CLAUDE_ENV_FILE is in `~/.qoder/session-env`, as `run --env-file` takes it
    (`Dialect.env_file_dir`); `exec` took only `~/.claude/session-env`'s, for every agent."""
    target, err = _exec_env(home, tmp_path, "qoder", ".qoder", 0)
    assert target.read_text() == "export NODE_ENV=production\n", err


def test_exec_gives_an_env_file_only_for_the_events_run_gives_one(
    home: Path, tmp_path: Path
) -> None:
    """As `run` (`_sandbox.envfile.EVENTS`): a PreToolUse command gets no CLAUDE_ENV_FILE even
    where the agent's environment names one; `exec` gave one for any event."""
    seen: list[ExecRequest] = []
    stdin = b'{"hook_event_name": "PreToolUse", "tool_name": "Bash"}'
    target, _ = _exec_env(home, tmp_path, "claude", ".claude", 0, stdin, seen=seen)
    assert seen and seen[0].env_file is None and _envfile.VAR not in seen[0].env
    assert not target.exists()


def test_exec_event_names_the_event_for_the_env_file(home: Path, tmp_path: Path) -> None:
    """`exec --event SessionStart` with an event that names none (Copilot-style): the
    event is the one given, and it gets the file."""
    target, err = _exec_env(home, tmp_path, "claude", ".claude", 0, b"{}", "SessionStart")
    assert target.read_text() == "export NODE_ENV=production\n", err


@pytest.mark.parametrize("code", [1, 3])
def test_exec_hands_on_only_a_completed_hooks_lines(home: Path, tmp_path: Path, code: int) -> None:
    """As `run` (`HookRunner._env_lines`): a hook that failed (exit 1, a non-blocking
    error to the agent) hands nothing on, and exec says so; `exec` copied them."""
    target, err = _exec_env(home, tmp_path, "claude", ".claude", code)
    assert not target.exists()
    assert b"NODE_ENV not copied: the hook failed" in err
