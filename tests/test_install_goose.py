"""`install` / `uninstall --agent goose` without an engine: each plugin's hooks.json
rewritten in place (Claude-shaped groups, `type` optional, `on_failure` kept), byte-exact
undo, dry runs, `${PLUGIN_ROOT}` kept out of Goose's textual replacement, and what
`list`/`doctor` say about a plugin a pull adds. Goose's format: block/goose
`crates/goose/src/hooks/mod.rs@0825b570` (`sandboxrun/_dialects/goose`)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

import sandboxrun._cli as cli
from sandboxrun._dialects.goose import GOOSE
from sandboxrun._install.status import notes

HOOKS = """{
  "hooks": {
    "PreToolUse": [
      { "matcher": "developer__shell",
        "hooks": [{"type": "command", "command": "${PLUGIN_ROOT}/scripts/guard.sh", "timeout": 10, "on_failure": "block"},
                  {"command": "echo 'hi' | tee -a /tmp/log"},
                  {"type": "prompt", "prompt": "ok?"}]}
    ],
\t"Stop": [{"hooks": [{"command": "$PLUGIN_ROOT/stop.sh"}]}]
  }
}\r\n"""


def sandboxrun(*args: str) -> int:
    return cli.main(list(args))


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".agents" / "plugins" / "guard" / "hooks").mkdir(parents=True)
    hooks(root, "guard").write_bytes(HOOKS.encode())
    return root


def hooks(base: Path, name: str) -> Path:
    return base / ".agents" / "plugins" / name / "hooks" / "hooks.json"


def at(project: Path, home: Path) -> list[str]:
    return ["--agent", "goose", "--workspace", str(project), "--home", str(home)]


def actions(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return [a for rules in data["hooks"].values() for r in rules for a in r["hooks"]]


def test_install_wraps_each_command_untrusted_and_uninstall_restores_bytes(
    project: Path, home: Path, capsys: Any
) -> None:
    path = hooks(project, "guard")
    assert sandboxrun("install", *at(project, home)) == 0
    wrapped = actions(path)
    commands = [a.get("command", "") for a in wrapped]
    for c in (commands[0], commands[1], commands[3]):
        assert "exec --agent goose --untrusted" in c and "${PLUGIN_ROOT}" not in c
    # sh reads the original back byte for byte (Goose's replacement finds nothing)
    assert shlex.split(commands[0])[-1] == "${PLUGIN_ROOT}/scripts/guard.sh"
    assert shlex.split(commands[1])[-1] == "echo 'hi' | tee -a /tmp/log"
    assert "--timeout 5" in commands[0] and "--timeout 25" in commands[1]  # below Goose's
    assert wrapped[0]["on_failure"] == "block" and wrapped[2] == {"type": "prompt", "prompt": "ok?"}
    assert path.read_bytes().decode().endswith("}\r\n")
    capsys.readouterr()
    assert sandboxrun("install", *at(project, home)) == 0
    assert "no change" in capsys.readouterr().out
    assert sandboxrun("uninstall", *at(project, home)) == 0
    assert path.read_bytes() == HOOKS.encode()


def test_dry_run_changes_nothing(project: Path, home: Path) -> None:
    assert sandboxrun("install", *at(project, home), "--dry-run") == 0
    assert hooks(project, "guard").read_bytes() == HOOKS.encode()


def test_discovery_runs_the_original_of_a_recorded_wrapper(project: Path, home: Path) -> None:
    sandboxrun("install", *at(project, home))
    found = GOOSE.discover(None, [str(project)], str(home)).hooks
    root = project / ".agents" / "plugins" / "guard"
    assert [h.argv[-1] for h in found] == [
        f"{root}/scripts/guard.sh", "echo 'hi' | tee -a /tmp/log", "$PLUGIN_ROOT/stop.sh",
    ]  # fmt: skip
    assert found[0].fail_closed is True


@pytest.mark.parametrize("name", ["a b", "it's", "x';touch pwned;'", 'q"$(id)'])
def test_a_hostile_plugin_root_cannot_break_the_wrappers_quoting(
    tmp_path: Path, home: Path, name: str
) -> None:
    """Goose puts the plugin root into the command text before `sh -c`: the wrapper
    holds no `${PLUGIN_ROOT}` for it to replace, so sh hands sandboxrun the original."""
    root = tmp_path / "proj"
    path = hooks(root, name)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"command": "${PLUGIN_ROOT}/x"}]}]}}))
    assert sandboxrun("install", *at(root, home)) == 0
    [wrapper] = [a["command"] for a in actions(path)]
    expanded = wrapper.replace("${PLUGIN_ROOT}", str(path.parent.parent))  # as Goose does
    rest = expanded.split(" exec ", 1)[1]  # the words sh hands sandboxrun
    said = subprocess.run(["sh", "-c", "printf '%s\\n' " + rest], capture_output=True,
                          text=True, check=True, cwd=tmp_path).stdout  # fmt: skip
    assert said.splitlines()[-1] == "${PLUGIN_ROOT}/x"
    assert not (tmp_path / "pwned").exists()


def test_user_plugins_with_user_and_no_managed(home: Path, capsys: Any) -> None:
    path = hooks(home, "mine")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"command": "s"}]}]}}))
    assert sandboxrun("install", "--agent", "goose", "--user", "--home", str(home)) == 0
    [command] = [a["command"] for a in actions(path)]
    assert "exec --agent goose --" in command and "--untrusted" not in command
    assert sandboxrun("install", "--agent", "goose", "--managed", "--home", str(home)) != 0
    assert "no managed level" in capsys.readouterr().err


def test_a_symlink_out_of_the_project_is_not_rewritten(
    tmp_path: Path, home: Path, capsys: Any
) -> None:
    mine = hooks(home, "mine")
    mine.parent.mkdir(parents=True)
    mine.write_text('{"hooks": {}}')
    root = tmp_path / "proj"
    (root / ".agents" / "plugins").mkdir(parents=True)
    (root / ".agents" / "plugins" / "evil").symlink_to(home / ".agents" / "plugins" / "mine")
    assert sandboxrun("install", *at(root, home)) != 0
    assert "outside the project" in capsys.readouterr().err
    assert mine.read_text() == '{"hooks": {}}'


def test_doctor_names_a_plugin_a_pull_adds(project: Path, home: Path) -> None:
    assert sandboxrun("install", *at(project, home)) == 0
    assert notes("goose", [str(project)], str(home)) == []
    added = hooks(project, "pulled")
    added.parent.mkdir(parents=True)
    added.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [{"command": "evil"}]}]}}))
    said = notes("goose", [str(project)], str(home))
    assert len(said) == 1 and "pulled" in said[0] and "evil" in said[0]
