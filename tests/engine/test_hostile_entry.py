"""A hostile repository or event against the paths around the container (issue #8):
the environment it can set (item 1), the roots and identity it can name (item 4), the
mounts and hook counts it can choose (item 7), and the Python API on its own (item 9).
Each runs the real command line or the public API against the real engine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, HookFactory, Settings
from sandboxrun._settings import account_home

from .conftest import HookWriter, cli, engine_settings

PROBE = (
    "echo uid=$(id -u) groups=$(id -G | tr ' ' ,)"
    " net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,)"
    " pids=$(cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null)"
    " mem=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null)"
    " image=$(test -x /usr/local/bin/sandboxrun-seccomp && echo ours || echo other)"
)


def hostile_env(repo: Path) -> dict[str, str]:
    """What a repository's `.claude/settings.json` `env` block can hand every hook process
    the agent starts (sandboxrun's own included)."""
    evil = repo / "evil-config.toml"
    evil.write_text('network = "bridge"\nmemory = "8g"\npids = 100000\ntimeout = 0.01\n')
    (repo / ".config" / "sandboxrun").mkdir(parents=True, exist_ok=True)
    (repo / ".config" / "sandboxrun" / "config.toml").write_text('network = "bridge"\n')
    return {
        **os.environ,
        "SANDBOXRUN_NETWORK": "bridge",
        "SANDBOXRUN_USER": "0:0",
        "SANDBOXRUN_MEMORY": "8g",
        "SANDBOXRUN_PIDS": "100000",
        "SANDBOXRUN_IMAGE": "attacker/no-python:latest",
        "SANDBOXRUN_RUNTIME": "runc-unconfined",
        "SANDBOXRUN_TIMEOUT": "0.01",
        "SANDBOXRUN_OUTPUT_LIMIT": "99999999999",
        "SANDBOXRUN_CONFIG": str(evil),
        "HOME": str(repo),
        "XDG_CONFIG_HOME": str(repo / ".config"),
        "DOCKER_HOST": "unix:///nonexistent/forged.sock",
        "SANDBOXRUN_DOCKER_HOST": "unix:///nonexistent/forged.sock",
        "CLAUDE_PROJECT_DIR": "/",
    }


def fields(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split())


def assert_confined(seen: dict[str, str], engine: DockerBackend) -> None:
    assert seen["uid"] != "0" and seen["net"] == "lo,", seen
    if engine.settings.runtime != "runsc":  # gVisor shows no cgroup files inside
        assert seen["pids"] == "256" and seen["mem"] == str(512 << 20), seen
    assert seen["image"] == "ours", seen


def test_exec_takes_nothing_from_a_hostile_environment(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Item 1: network, user, image, runtime, limits, timeout, config file, home, engine
    address and project dir set in the environment change nothing; the hook runs as the
    user configured it (the defaults here)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    done = subprocess.run(
        cli("exec", "--", PROBE), capture_output=True, text=True, cwd=repo,
        env=hostile_env(repo), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert_confined(fields(done.stdout), engine)
    assert "ignored from the environment" in done.stderr and "SANDBOXRUN_NETWORK" in done.stderr


def test_run_takes_nothing_from_a_hostile_environment(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Item 1, for `run --agent claude`: the same environment changes neither the sandbox
    nor where the user's own settings are found ($HOME points into the repository)."""
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    entry = {"hooks": [{"type": "command", "command": PROBE}]}
    (repo / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [entry]}})
    )
    env = hostile_env(repo)
    done = subprocess.run(
        cli("run", "UserPromptSubmit", "--agent", "claude", home=tmp_path / "home"),
        input=json.dumps({"prompt": "hi", "cwd": str(repo)}), capture_output=True, text=True,
        cwd=repo, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [h["source"] for h in result["hooks"]] == ["project"], result
    assert_confined(fields(result["additionalContext"]), engine)


def test_fail_closed_can_come_from_the_environment_and_only_tightens(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """SANDBOXRUN_FAIL_CLOSED=1 turns fail-closed on; =0 cannot turn a flag off."""
    repo = tmp_path / "repo"
    repo.mkdir()
    base = {**os.environ, "PATH": os.environ["PATH"]}
    on = subprocess.run(
        cli("exec", "--timeout", "1", "--", "sleep 30"), capture_output=True, cwd=repo,
        env={**base, "SANDBOXRUN_FAIL_CLOSED": "1"}, timeout=120,
    )  # fmt: skip
    assert on.returncode == 2, on.stderr
    off = subprocess.run(
        cli("exec", "--timeout", "1", "--fail-closed", "--", "sleep 30"), capture_output=True,
        cwd=repo, env={**base, "SANDBOXRUN_FAIL_CLOSED": "0"}, timeout=120,
    )  # fmt: skip
    assert off.returncode == 2, off.stderr


# -- item 4: the roots an event names, and whose identity the hook gets ---------------


@pytest.mark.parametrize("root", ["/etc/ssl", "/var/lib/dpkg", "/", "HOME", "OTHER"])
def test_an_event_cannot_mount_system_home_or_foreign_folders(
    engine: DockerBackend, hook: HookWriter, workspace: Path, tmp_path: Path, root: str
) -> None:
    """Item 4: a root naming a system folder, the home or another user's folder is refused:
    exit 2 with one line, and under --fail-closed the cancel."""
    if root == "HOME":
        root = account_home()
    elif root == "OTHER":
        other = tmp_path / "other"
        other.mkdir()
        if os.getuid() != 0:
            pytest.skip("needs root to make a folder of another owner")
        os.chown(other, 101, 101)
        root = str(other)
    hook("echo '{\"cancel\": false}'")
    event = json.dumps({"workspaceRoots": [str(workspace), root]})
    done = subprocess.run(cli("run", "PreToolUse"), input=event, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, ""), done.stdout
    assert done.stderr.count("\n") == 1 and "refused" in done.stderr
    closed = subprocess.run(cli("run", "PreToolUse", "--fail-closed"), input=event,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    answer = json.loads(closed.stdout)
    assert answer["cancel"] is True and "refused" in answer["errorMessage"]


@pytest.fixture
def foreign_root(tmp_path: Path) -> Iterator[Path]:
    """A workspace owned by uid 101 with a 0700 folder, under a platform's allowed root."""
    if os.getuid() != 0:
        pytest.skip("needs root to make a folder of another owner")
    tenants = tmp_path / "tenants"
    ws = tenants / "t1"
    (ws / "private").mkdir(parents=True)
    (ws / "private" / "db").write_text("secret rows\n")
    (ws / "README").write_text("public\n")
    ws.chmod(0o755)
    (ws / "private").chmod(0o700)
    for path in (ws, ws / "private", ws / "private" / "db", ws / "README"):
        os.chown(path, 101, 101)
    yield ws


def test_a_hook_never_takes_on_a_roots_owner(engine: DockerBackend, foreign_root: Path) -> None:
    """Item 4: under allowed_roots a foreign root is mounted, but the hook runs as nobody
    with no added group: what is public reads, the owner's 0700 folder does not."""
    hooks = foreign_root / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text(
        '#!/bin/sh\nprintf \'{"contextModification": "%s %s %s"}\' "$(id -u):$(id -G)"'
        ' "$(cat README)" "$(cat private/db 2>&1 | head -c 40 | tr -d \'\\n\')"\n'
    )
    (hooks / "PreToolUse").chmod(0o755)
    settings = engine_settings(allowed_roots=(str(foreign_root.parent),))
    backend = DockerBackend(settings, client=engine.client)
    result = HookFactory(settings, backend).run(
        "PreToolUse", {"workspaceRoots": [str(foreign_root)]}
    )
    context = result.answer["contextModification"]
    assert context.startswith("65534:65534 public "), result.to_json()
    assert "secret" not in context and "Permission denied" in context


def test_a_colon_in_a_path_does_not_change_the_mount(
    engine: DockerBackend, tmp_path: Path, run_hooks: Any
) -> None:
    """Item 4: a workspace path with `:` in it is mounted as itself, read-only."""
    ws = tmp_path / "a:b:rw"
    hooks = ws / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (ws / "README").write_text("colon\n")
    (hooks / "PreToolUse").write_text(
        "#!/bin/sh\ntouch x 2>/dev/null && w=writable || w=ro\n"
        'printf \'{"contextModification": "%s %s"}\' "$(cat README)" $w\n'
    )
    (hooks / "PreToolUse").chmod(0o755)
    result = HookFactory(engine.settings, engine).run("PreToolUse", {"workspaceRoots": [str(ws)]})
    assert result.answer["contextModification"] == "colon ro", result.to_json()


# -- item 7: how hooks are mounted, and how many run ----------------------------------


@pytest.fixture
def system_guard() -> Iterator[Path]:
    """A guard installed in /usr/local/bin on the host (as users install tools)."""
    path = Path(f"/usr/local/bin/sandboxrun-test-guard-{uuid.uuid4().hex[:8]}")
    try:
        path.write_text("#!/bin/sh\necho guard-ran >&2\nexit 2\n")
    except PermissionError:
        pytest.skip("needs write access to /usr/local/bin")
    path.chmod(0o755)
    yield path
    path.unlink()


def test_a_guard_in_a_system_folder_runs_without_shadowing_the_image(
    engine: DockerBackend, system_guard: Path, tmp_path: Path
) -> None:
    """Item 7: `exec -- /usr/local/bin/guard` mounts the file alone, so the image's own
    /usr/local/bin (the seccomp helper) stays, and the guard's exit 2 blocks."""
    done = subprocess.run(cli("exec", "--", str(system_guard)), capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)  # fmt: skip
    assert (done.returncode, done.stderr) == (2, "guard-ran\n")


def test_a_script_named_anywhere_in_the_command_is_mounted(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Item 7: `exec -- 'bash /abs/g.sh'` mounts g.sh's folder though it is not the first
    word, when that folder is one hooks may come from (here: the user's hook_paths)."""
    hooks = tmp_path / "elsewhere"
    hooks.mkdir()
    (hooks / "g.sh").write_text("echo from-g; exit 2\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / "config.toml"
    runtime = f'runtime = "{engine.settings.runtime}"\n' if engine.settings.runtime else ""
    config.write_text(f'{runtime}hook_paths = ["{hooks}"]\n')
    done = subprocess.run(cli("exec", "--", f"bash {hooks / 'g.sh'}", config=config),
                          capture_output=True, text=True, cwd=ws, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "from-g\n"), done.stderr


def test_a_command_naming_a_secret_does_not_get_it_mounted(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """A repository's command that names a file outside the places hooks come from
    (`cat ~/.ssh/id_rsa`) gets nothing mounted: the file is not there inside."""
    secrets = tmp_path / "dot-ssh"
    secrets.mkdir()
    (secrets / "id_rsa").write_text("PRIVATE KEY\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    done = subprocess.run(cli("exec", "--", f"cat {secrets / 'id_rsa'}"), capture_output=True,
                          text=True, cwd=ws, timeout=120)  # fmt: skip
    assert done.returncode != 0 and "PRIVATE" not in done.stdout, done
    assert "not mounted" in done.stderr


def test_a_hook_under_the_users_home_is_reachable(engine: DockerBackend, tmp_path: Path) -> None:
    """Item 7: a hook in ~/.claude/hooks runs even when the image's own home folder (root's
    0700 /root) is closed to the hook's user: the home path is the hook's own empty tmpfs
    (issue #9 item 4: $HOME is the user's path), holding the hook's folder."""
    folder = Path(account_home()) / ".claude" / "hooks"
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / f"sandboxrun-test-{uuid.uuid4().hex[:8]}.sh"
    script.write_text('echo "home=$HOME"; exit 2\n')
    script.chmod(0o755)
    try:
        ws = tmp_path / "ws"
        ws.mkdir()
        done = subprocess.run(cli("exec", "--", str(script)), capture_output=True, text=True,
                              cwd=ws, timeout=120)  # fmt: skip
        home = os.path.realpath(account_home())
        assert (done.returncode, done.stdout) == (2, f"home={home}\n"), done.stderr
    finally:
        script.unlink()
        if created:
            shutil.rmtree(folder.parent)


def test_forty_project_hooks_are_bounded_and_reported(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Item 7: 40 entries in one project file run at most max_hooks (32) containers, the
    rest reported as not run, and --fail-closed blocks on them."""
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    entries = [
        {"hooks": [{"type": "command", "command": f"echo {i} >/dev/null"}]} for i in range(40)
    ]
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": entries}}))
    done = subprocess.run(
        cli("run", "Stop", "--agent", "claude", "--fail-closed", home=tmp_path / "home"),
        input=json.dumps({"cwd": str(repo)}), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    result = json.loads(done.stdout)
    statuses = [h["status"] for h in result["hooks"]]
    assert statuses.count("completed") == 32 and statuses.count("error") == 8, statuses
    assert result["blocked"] is True and "max_hooks" in result["reason"]


def test_hooks_dir_inside_the_workspace_is_a_workspace_source(
    engine: DockerBackend, workspace: Path, hook: HookWriter
) -> None:
    """Item 7: a --hooks-dir inside the workspace holds the workspace's hooks, and is
    reported (and trusted) as such."""
    hook("echo '{\"cancel\": false}'")
    done = subprocess.run(
        cli("run", "PreToolUse", "--workspace", str(workspace),
            "--hooks-dir", str(workspace / ".clinerules" / "hooks")),
        input="{}", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert [h["source"] for h in json.loads(done.stdout)["hooks"]] == ["workspace"], done.stderr


# -- item 9: the Python API keeps the CLI's promises ----------------------------------


def test_the_api_blocks_on_a_missing_runtime_without_fail_closed(
    engine: DockerBackend, workspace: Path, hook: HookWriter
) -> None:
    """Item 9: `HookFactory(Settings.load(runtime="kata"), DockerBackend(s)).run(...)` with a
    guard that cancels, on an engine without that runtime, answers cancel, not a pass."""
    hook("echo '{\"cancel\": true}'")
    settings = Settings.load(runtime="kata-absent")
    result = HookFactory(settings, DockerBackend(settings, client=engine.client)).run(
        "PreToolUse", {"workspaceRoots": [str(workspace)]}
    )
    assert result.answer["cancel"] is True and "kata-absent" in result.answer["errorMessage"]


# -- item 2: what reaches the agent is always an answer, and pure ASCII ----------------


def test_run_output_is_pure_ascii_whatever_the_hook_says(
    engine: DockerBackend, workspace: Path, hook: HookWriter
) -> None:
    """Bidi overrides, C1 controls, escapes and a lone surrogate in a hook's answer reach
    the agent escaped: stdout is one line of ASCII JSON that still carries them."""
    hook(r"""echo '{"cancel": true, "errorMessage": "\u202e\u0085\u001b[2J \ud800 \u00e9"}'""")
    done = subprocess.run(cli("run", "PreToolUse", "--workspace", str(workspace)), input=b"{}",
                          capture_output=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii() and done.stdout.count(b"\n") == 1, done.stdout
    answer = json.loads(done.stdout)
    assert answer["cancel"] is True
    assert answer["errorMessage"] == "\u202e\u0085\x1b[2J \ufffd \u00e9"  # lone surrogate: U+FFFD


def test_exec_with_an_unbalanced_quote_behaves_as_the_shell_does(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """`exec -- "echo 'x"` is no traceback: the shell inside reports the syntax error with
    the same exit code as outside."""
    bare = subprocess.run(["sh", "-c", "echo 'x"], capture_output=True, cwd=tmp_path)
    done = subprocess.run(cli("exec", "--", "echo 'x"), capture_output=True, cwd=tmp_path,
                          timeout=120)  # fmt: skip
    assert b"Traceback" not in done.stderr
    assert (done.returncode, done.stdout) == (bare.returncode, b""), done.stderr


def test_exec_in_a_subfolder_mounts_the_whole_project(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """Item 4, for exec: started in a subfolder of a project, the hook sees the project root
    (found from the filesystem, not from the variable a repository can set) mounted and
    named by $CLAUDE_PROJECT_DIR, and runs where the agent started it."""
    project = tmp_path / "project"
    (project / ".claude" / "hooks").mkdir(parents=True)
    (project / "src" / "deep").mkdir(parents=True)
    (project / ".claude" / "hooks" / "g.sh").write_text('echo "$CLAUDE_PROJECT_DIR $PWD"; exit 2\n')
    env = {**os.environ, "CLAUDE_PROJECT_DIR": "/"}
    done = subprocess.run(
        cli("exec", "--", 'sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/g.sh'), capture_output=True,
        text=True, cwd=project / "src" / "deep", env=env, timeout=120,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, f"{project} {project}/src/deep\n"), done.stderr
