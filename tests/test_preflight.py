"""The preflight's reading of commands and shebangs, against a made-up image listing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sandboxrun import ExecResult, FakeBackend, HookFactory, Settings
from sandboxrun._backends.image_tools import ImageTools, image_tools, parse_probe
from sandboxrun._sandbox.preflight import first_command, missing, shebang, unreadable

IMAGE = "test/hooks:1"
PROBE_OUT = "\n".join(
    [
        "p /usr/local/bin", "p /usr/bin", "p /bin",
        "x /usr/bin/python3", "x /usr/bin/bash", "x /usr/bin/env", "x /usr/bin/jq",
        "x /bin/bash", "x /bin/sh", "x /bin/python3", "x /usr/bin/env",
        "d /", "d /usr", "d /usr/bin", "d /usr/lib", "d /usr/lib/python3", "d /opt", "d /tmp",
        "d /opt/hooks", "d /opt/hooks/a", "d /opt/hooks/a/b", "d /home",
        "l /bin", "ok dirs",
    ]
)  # fmt: skip
TOOLS = parse_probe(PROBE_OUT, IMAGE)


def check(command: str, ws: Path, env: dict[str, str] | None = None) -> str | None:
    return missing(("/bin/sh", "-c", command), str(ws), (str(ws),), env or {}, TOOLS)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "hooks").mkdir(parents=True)
    return root


def script(path: Path, first_line: str) -> Path:
    path.write_text(f"{first_line}\necho hi\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("node x.js", ["node", "x.js"]),
        ("A=1 B='two words' exec env -i python3 /x.py | jq .", ["A=1", "B=two words", "exec",
                                                              "env", "-i", "python3", "/x.py"]),
        ('"$CLAUDE_PROJECT_DIR"/hooks/g.sh; echo', ["/p/hooks/g.sh"]),
        ("${CLAUDE_PROJECT_DIR}/g.sh && x", ["/p/g.sh"]),
        ("'$CLAUDE_PROJECT_DIR'/g.sh", ["$CLAUDE_PROJECT_DIR/g.sh"]),
    ],
)  # fmt: skip
def test_first_command_words(command: str, words: list[str]) -> None:
    """The first simple command's words, with the hook's own variables expanded, quotes kept."""
    assert first_command(command, {"CLAUDE_PROJECT_DIR": "/p"}) == words


@pytest.mark.parametrize(
    "command", ["$UNSET/x.sh", "$(which node) x.js", "`echo node` x", "python3 'unbalanced"]
)
def test_first_command_does_not_guess(command: str) -> None:
    """Unknown variables, command substitution and broken quoting are not read."""
    assert first_command(command, {"CLAUDE_PROJECT_DIR": "/p"}) is None


@pytest.mark.parametrize(
    ("command", "sentence"),
    [
        ("nosuchtool check", "`nosuchtool` is not in image test/hooks:1"),
        ("uv run --script x.py", "`uv` is not in image test/hooks:1"),
        ("FOO=1 exec env -u X npx foo", "`npx` is not in image test/hooks:1"),
        ("python3 /nonexistent/x.py", "script /nonexistent/x.py is not mounted"),
        ("python3 -W ignore -u /home/me/.claude/hooks/x.py", "script /home/me/.claude/hooks/x.py is not mounted"),
        ("bash /tmp/x.sh", "script /tmp/x.sh is not mounted"),
        ("/home/me/hooks/g.sh", "/home/me/hooks/g.sh is not mounted"),
        ("env -S 'nosuchtool x'", "`nosuchtool` is not in image test/hooks:1"),
    ],
)  # fmt: skip
def test_missing_names_what_is_missing(ws: Path, command: str, sentence: str) -> None:
    """A missing program or an unmounted script is one sentence naming it."""
    assert check(command, ws) == sentence


@pytest.mark.parametrize(
    "command",
    [
        "jq -r .tool_name", "python3 hooks/missing.py", "python3 -c 'print(1)'", "python3 -m x",
        "bash -c 'nosuchtool'", "if true; then nosuchtool; fi", "[ -f x ] && nosuchtool",
        "cd /elsewhere && nosuchtool", "echo hi", "{ nosuchtool; }", "(nosuchtool)",
        "$TOOL run", "~/bin/tool", "python3 /opt/hooks/a/b/c/x.py", "/usr/bin/python3 -",
        "python3 /usr/lib/python3/x.py",
    ],
)  # fmt: skip
def test_not_guessed_or_fine(ws: Path, command: str) -> None:
    """Builtins, constructs, unknown variables and paths the listing cannot see run as they are."""
    assert check(command, ws) is None


def test_shebangs_of_mounted_files(ws: Path) -> None:
    """A mounted hook file's interpreter, plain or through env, must be in the image."""
    cases = {
        "#!/usr/bin/env nosuchlang": "`nosuchlang` (the interpreter of {}) is not in image test/hooks:1",
        "#!/usr/bin/env -S nosuchlang --flag": "`nosuchlang` (the interpreter of {})",
        "#!/usr/local/bin/node": "`/usr/local/bin/node` (the interpreter of {})",
        "#!/usr/bin/env python3": None,
        "#!/bin/bash -e": None,
        "no shebang at all": None,
        "#!/opt/hooks/a/b/venv/bin/python": None,  # deeper than the listing: not known, not guessed
    }  # fmt: skip
    for i, (line, want) in enumerate(cases.items()):
        path = script(ws / "hooks" / f"h{i}", line)
        got = missing(("/bin/sh", "-c", str(path)), str(ws), (str(ws),), {}, TOOLS)
        if want is None:
            assert got is None, line
        else:
            assert got is not None and got.startswith(want.format(path)), (line, got)


def test_the_git_root_of_a_codex_hook(ws: Path) -> None:
    """`$(git rev-parse --show-toplevel)` (Codex's way to its repository, in its login
    shell's `-lc`), or in backquotes, reads as the mounted folder holding `.git`, when
    the image has git; nothing else is read, and without a mounted `.git` nothing is."""
    script(ws / "hooks" / "x.sh", "#!/usr/bin/env nosuchlang")
    (ws / "sub").mkdir()
    git = parse_probe(PROBE_OUT.replace("x /usr/bin/jq", "x /usr/bin/jq\nx /usr/bin/git"), IMAGE)
    want = f"`nosuchlang` (the interpreter of {ws}/hooks/x.sh) is not in image {IMAGE}"

    def run(command: str, tools: ImageTools = git, workdir: Path = ws) -> str | None:
        return missing(("/bin/sh", "-lc", command), str(workdir), (str(ws),), {}, tools)

    (ws.parent / ".git").mkdir()  # a repository around the workspace: not mounted
    assert run('"$(git rev-parse --show-toplevel)"/hooks/x.sh') is None
    (ws / ".git").mkdir()
    assert run('"$(git rev-parse --show-toplevel)"/hooks/x.sh') == want
    assert run("`git rev-parse --show-toplevel`/hooks/x.sh", workdir=ws / "sub") == want
    assert run('"$(git rev-parse --show-toplevel)"/hooks/x.sh', TOOLS) is None  # no git inside
    assert run('"$(git rev-parse --show-cdup)"hooks/x.sh') is None  # only that one command
    assert run('"$(git rev-parse --show-toplevel; true)"/hooks/x.sh') is None


def test_shebang_reads_a_bounded_first_line_of_regular_files(tmp_path: Path) -> None:
    """Only a regular file's first line, at most 256 bytes, is read; a FIFO is never opened."""
    long = script(tmp_path / "long", "#!/usr/bin/" + "n" * 1000)
    assert shebang(str(long)) == ["/usr/bin/" + "n" * (256 - 11), ""]
    fifo = tmp_path / "fifo"
    import os

    os.mkfifo(fifo)
    assert shebang(str(fifo)) is None
    assert shebang(str(tmp_path / "absent")) is None


def test_link_out_of_the_mounts(ws: Path, tmp_path: Path) -> None:
    """A mounted link to a host file outside the mounts is not mounted; to an image file, fine."""
    outside = script(tmp_path / "outside.sh", "#!/bin/sh")
    (ws / "hooks" / "out").symlink_to(outside)
    (ws / "hooks" / "py").symlink_to("/usr/bin/python3")  # a venv's python
    (ws / "hooks" / "node").symlink_to("/usr/bin/node")
    assert (
        check(str(ws / "hooks" / "out"), ws)
        == f"{ws}/hooks/out is not mounted (it links to {outside})"
    )
    assert check(f"{ws}/hooks/py -V", ws) is None
    assert (
        check(f"{ws}/hooks/node -v", ws)
        == f"{ws}/hooks/node is not mounted (it links to /usr/bin/node)"
    )


def test_runner_reports_error_and_never_runs(tmp_path: Path, home: Path, make_hook) -> None:  # type: ignore[no-untyped-def]
    """A hook the image cannot start is an `error` outcome, not a run; fail-closed cancels."""
    ws = tmp_path / "ws"
    make_hook(ws / ".clinerules/hooks", body="#!/usr/bin/env nosuchlang\n")
    backend = FakeBackend(lambda r: ExecResult(0, b"{}", b"", 1), tools=TOOLS)
    result = HookFactory(Settings.load(fail_closed=True), backend).run("PreToolUse", {}, [str(ws)])
    assert backend.requests == []
    [outcome] = result.outcomes
    assert outcome.status == "error"
    assert (
        outcome.error
        == f"not run: `nosuchlang` is not in image {IMAGE}"  # Cline's SDK starts it by name
    )
    assert result.answer["cancel"] is True


def test_cache_is_written_once_and_read_back(tmp_path: Path) -> None:
    """The probe runs once per image id; a damaged cache file is probed again."""
    runs: list[object] = []

    def run(request: object) -> ExecResult:
        runs.append(request)
        return ExecResult(0, PROBE_OUT.encode(), b"", 1)

    first = image_tools(run, IMAGE, "sha256:abc", str(tmp_path))
    again = image_tools(run, IMAGE, "sha256:abc", str(tmp_path))
    assert len(runs) == 1 and first == again == TOOLS
    cache = tmp_path / "image-abc.json"
    assert json.loads(cache.read_text())["executables"]
    cache.write_text("{broken")
    assert image_tools(run, IMAGE, "sha256:abc", str(tmp_path)) == TOOLS
    assert len(runs) == 2


def test_tools_lookup(tmp_path: Path) -> None:
    """Files in PATH folders come from the listing; tmpfs is empty; deep paths are unknown."""
    t: ImageTools = TOOLS
    assert (t.has("/usr/bin/jq"), t.has("/usr/bin/node"), t.has("/tmp/x")) == (True, False, False)
    assert (t.has("/home/me/x"), t.has("/opt/hooks/x.py"), t.has("/bin/x/y")) == (False, None, None)


def test_a_file_mounted_alone(tmp_path: Path) -> None:
    """A hook file mounted by itself (exec's way for a file in a system folder) is mounted."""
    guard = script(tmp_path / "guard", "#!/bin/sh")
    got = missing((str(guard),), str(tmp_path), (str(guard),), {}, TOOLS)
    assert got is None


def test_unreadable_mounts_are_named(tmp_path: Path) -> None:
    """A mount (or the hook file) its user could not read is named, with its mode; modes
    that grant the hook's class are fine."""
    ws = tmp_path / "ws"
    ws.mkdir()
    hook = script(ws / "guard.sh", "#!/bin/sh")
    me = (os.getuid(), os.getgid())
    stranger = (me[0] + 4242, me[1] + 4242)
    ws.chmod(0o700)
    why = unreadable([str(ws)], [str(hook)], stranger)
    assert why is not None and why.startswith(f"{ws} is not readable by the hook's user")
    assert "mode 700" in why and "chmod o+rx" in why
    assert unreadable([str(ws)], [str(hook)], me) is None  # the owner may
    ws.chmod(0o750)
    assert unreadable([str(ws)], [], stranger) is not None
    assert unreadable([str(ws)], [], (stranger[0], me[1])) is None  # by its group
    assert unreadable([str(ws)], [], (stranger[0], 1), groups=[me[1]]) is None  # added group
    ws.chmod(0o755)
    hook.chmod(0o700)
    assert unreadable([str(ws)], [str(hook)], stranger) == (
        f"{hook} is not readable by the hook's user, uid {stranger[0]} (mode 700, owner"
        f" {me[0]}): make it readable (e.g. chmod o+rx) or set `user` in your config"
    )
    assert unreadable([str(ws)], ["/bin/sh", "-c", str(hook)], stranger) is None  # not argv[0]


def test_runner_never_runs_a_hook_that_cannot_read_its_workspace(
    tmp_path: Path,
    home: Path,
    make_hook,  # type: ignore[no-untyped-def]
) -> None:
    """As root, hooks run as nobody: a root-only workspace would fail every hook (a guard
    that silently allows). It is an `error` naming the folder, and fail-closed cancels."""
    ws = tmp_path / "ws"
    make_hook(ws / ".clinerules/hooks", body="#!/bin/bash\necho '{}'\n")
    ws.chmod(0o700)
    stranger = os.getuid() + 4242
    backend = FakeBackend(lambda r: ExecResult(0, b"{}", b"", 1), tools=TOOLS)
    settings = Settings.load(fail_closed=True, user=f"{stranger}:{stranger}")
    result = HookFactory(settings, backend).run("PreToolUse", {}, [str(ws)])
    assert backend.requests == []
    [outcome] = result.outcomes
    assert outcome.status == "error"
    assert outcome.error is not None and f"{ws} is not readable by the hook's user" in outcome.error
    assert result.answer["cancel"] is True
