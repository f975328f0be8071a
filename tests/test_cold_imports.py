"""The cold path imports only what it needs: `sandboxrun run` is started for every event
an agent sees, and docker, pydantic and loguru are most of its start-up time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sandboxrun._dialects import AGENTS
from sandboxrun._dialects.registry import DIALECTS, WHERE

HEAVY = (
    "docker", "requests", "loguru", "pydantic", "pydantic_settings", "prometheus_client",
    "regex", "sandboxrun._review",
)  # fmt: skip

PROBE = """
import json, sys
from sandboxrun._cli import main
main(sys.argv[1:])
loaded = [m for m in {heavy!r} if m in sys.modules]
loaded += sorted(m for m in sys.modules if m.startswith("sandboxrun._dialects."))
print("IMPORTED", json.dumps(loaded), file=sys.stderr)
"""


def imported(*argv: str, stdin: str = "", cwd: Path | None = None) -> tuple[str, list[str]]:
    """stdout of `sandboxrun ARGV` in a fresh interpreter, and the heavy modules it
    loaded (and the `sandboxrun._dialects` modules)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv], input=stdin,
        capture_output=True, text=True, timeout=120, cwd=cwd, check=True,
    )  # fmt: skip
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("IMPORTED"))
    return done.stdout, json.loads(line.split(" ", 1)[1])


def dialect_modules(loaded: list[str]) -> set[str]:
    """The modules among `loaded` that define an agent's dialect (the registry's)."""
    return {f"sandboxrun._dialects.{module}" for module, *_ in WHERE.values()} & set(loaded)


def test_the_agent_choices_are_the_dialect_registry() -> None:
    """The CLI lists the agents without importing the dialects; the lists agree."""
    assert list(AGENTS) == sorted(DIALECTS)


def test_importing_the_package_loads_no_heavy_dependency() -> None:
    """`import sandboxrun` loads names on first use (PEP 562)."""
    code = f"import sys, sandboxrun; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout  # fmt: skip
    assert out.strip() == "[]"


def test_the_command_line_itself_loads_no_heavy_dependency() -> None:
    """Building the parser (every command does; `--help` shows it) imports no dialect,
    settings or engine module: each command's flags are defined in light modules."""
    code = (
        "import sys; from sandboxrun._cli.parser import parser; parser();"
        f" print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout  # fmt: skip
    assert out.strip() == "[]"


def test_run_without_a_matching_hook_needs_neither_docker_nor_loguru(tmp_path: Path) -> None:
    """An event with no hook to run answers without importing docker or loguru (the
    settings still need pydantic)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    config = tmp_path / "config.toml"
    config.write_text("")
    out, heavy = imported(
        "run", "PreToolUse", "--config", str(config), "--home", str(tmp_path / "home"),
        "--workspace", str(tmp_path / "ws"), stdin="{}", cwd=tmp_path / "ws",
    )  # fmt: skip
    assert json.loads(out)["hooks"] == []
    assert not {"docker", "requests", "loguru"} & set(heavy), heavy


@pytest.mark.parametrize(
    ("agent", "event", "modules", "flags"),
    [
        ("cline", "PreToolUse", {"cline"}, ()),
        ("claude", "PreToolUse", {"claude.dialect"}, ()),
        ("codex", "PreToolUse", {"codex", "claude.dialect"}, ()),  # a row of Claude's table
        ("gemini", "BeforeTool", {"gemini.dialect"}, ()),
        # as an installed agent's own hook (the shims' `--answer agent`)
        ("gemini", "BeforeTool", {"gemini.dialect"}, ("--answer", "agent")),
        ("copilot", "preToolUse", {"copilot"}, ("--answer", "agent")),
    ],
)
def test_run_imports_only_the_dialect_of_its_agent(
    tmp_path: Path, agent: str, event: str, modules: set[str], flags: tuple[str, ...]
) -> None:
    """The registry is lazy (issue 19, target 4): a cold `run` imports its own agent's
    dialect, not the eighteen others' (tens of milliseconds of every cold start)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    config = tmp_path / "config.toml"
    config.write_text('serve = "off"\n')
    out, loaded = imported(
        "run", event, "--agent", agent, *flags, "--config", str(config), "--home",
        str(tmp_path / "home"), "--workspace", str(tmp_path / "ws"), stdin="{}",
        cwd=tmp_path / "ws",
    )  # fmt: skip
    assert flags or json.loads(out) is not None
    assert dialect_modules(loaded) == {f"sandboxrun._dialects.{m}" for m in modules}, loaded


def test_a_hook_under_review_imports_no_other_agents_dialect(tmp_path: Path) -> None:
    """With a hook to run, the review gate (`_review`) runs before the engine is asked:
    it too imports no other agent's dialect (it imported Cursor's, and with it Claude's
    settings and matchers and the `regex` module, for every agent's run)."""
    ws = tmp_path / "ws"
    hooks = ws / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text("#!/bin/sh\necho '{}'\n")
    (hooks / "PreToolUse").chmod(0o755)
    (tmp_path / "home").mkdir()
    config = tmp_path / "config.toml"  # no engine answers there: the run ends at `check`
    config.write_text(f'serve = "off"\ndocker_host = "unix://{tmp_path}/none.sock"\n')
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), "run", "PreToolUse", "--config",
         str(config), "--home", str(tmp_path / "home"), "--workspace", str(ws)],
        input="{}", capture_output=True, text=True, timeout=120, cwd=ws,
    )  # fmt: skip
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("IMPORTED"))
    loaded = json.loads(line.split(" ", 1)[1])
    assert dialect_modules(loaded) == {"sandboxrun._dialects.cline"}, loaded
    assert "regex" not in loaded


REGISTRY_PROBE = """
import sys
from sandboxrun._dialects.registry import DIALECTS, WHERE
dialects = {"sandboxrun._dialects." + module for module, *_ in WHERE.values()}
known = "crush" in DIALECTS and "nobody" not in DIALECTS and len(DIALECTS) == len(WHERE)
before = dialects & set(sys.modules)
crush = DIALECTS["crush"]
print(known, crush.agent, sorted(before), sorted(dialects & set(sys.modules)))
"""


def test_the_registry_imports_a_dialect_on_first_lookup() -> None:
    """Names, `in` and `len` import no dialect; a lookup imports that one only (and
    what it is built on: Crush reads Claude's matchers, not Claude's dialect)."""
    out = subprocess.run([sys.executable, "-c", REGISTRY_PROBE], capture_output=True,
                         text=True, check=True, timeout=60).stdout  # fmt: skip
    assert out.strip() == "True crush [] ['sandboxrun._dialects.crush']"


def test_the_registry_is_the_mapping_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """Iteration keeps the registry's order and loads every dialect; a value set (a
    test's replacement) wins until undone; an unknown name is a KeyError."""
    from sandboxrun._dialects import registry
    from sandboxrun._dialects.claude.dialect import CLAUDE
    from sandboxrun._dialects.cline import CLINE, CLINE_VSCODE

    assert list(registry.DIALECTS) == list(registry.WHERE)
    assert [d.agent for d in registry.DIALECTS.values()] == list(registry.WHERE)
    assert registry.DIALECTS["cline"] is CLINE and registry.DIALECTS.get("nobody") is None
    with pytest.raises(KeyError):
        registry.DIALECTS["nobody"]
    monkeypatch.setitem(registry.DIALECTS, "cline", CLAUDE)
    monkeypatch.setitem(registry.DIALECTS, "extra", CLINE_VSCODE)
    assert registry.DIALECTS["cline"] is CLAUDE and "extra" in registry.DIALECTS
    monkeypatch.undo()
    assert registry.DIALECTS["cline"] is CLINE and "extra" not in registry.DIALECTS
    assert list(registry.DIALECTS) == list(registry.WHERE)


LATE_LOGURU = """
import sandboxrun
from loguru import logger

seen = []
logger.remove()
logger.add(lambda m: seen.append(m.record["name"]), level="DEBUG")
sandboxrun.parse_output("no json here")  # the library logs a warning here: off
quiet = list(seen)
logger.enable("sandboxrun")
sandboxrun.parse_output("no json here")  # on: the application asked
print(quiet, seen[len(quiet):])
"""


def test_an_application_importing_loguru_after_us_keeps_control_of_our_logs() -> None:
    """Our logs are off by default even when loguru is imported after sandboxrun, and
    an application's `enable` is never undone by our lazy import of loguru."""
    out = subprocess.run(
        [sys.executable, "-c", LATE_LOGURU], capture_output=True, text=True, check=True,
        timeout=60,
    ).stdout.strip()  # fmt: skip
    assert out == "[] ['sandboxrun._dialects.cline']"


def test_the_cli_still_logs_through_the_lazy_logger(tmp_path: Path) -> None:
    """A warning (here: an ignored SANDBOXRUN_ variable) imports loguru on the spot and
    reaches stderr in the CLI's format, at every verbosity."""
    (tmp_path / "ws").mkdir()
    config = tmp_path / "config.toml"
    config.write_text('serve = "off"\n')  # no server of the real account's is started
    argv = ["run", "PreToolUse", "--config", str(config), "--home", str(tmp_path),
            "--workspace", str(tmp_path / "ws")]  # fmt: skip
    env = {"PATH": "/usr/bin:/bin", "SANDBOXRUN_IMAGE": "evil"}
    for flags in ([], ["-vv"]):
        done = subprocess.run(
            [sys.executable, "-m", "sandboxrun", *flags, *argv], input="{}", env=env,
            capture_output=True, text=True, timeout=120, cwd=tmp_path / "ws", check=True,
        )  # fmt: skip
        assert done.stderr.startswith("sandboxrun: warning: ignored from the environment")


def test_the_light_client_imports_only_what_its_request_needs(tmp_path: Path) -> None:
    """Through a server (`_client`), the command reads a simple config file, checks the
    socket and sends its request with neither typing, tomllib, socket.py nor pathlib:
    the client's start is measured in milliseconds (`bench/client_start.py`)."""
    config = tmp_path / "config.toml"
    config.write_text(f'serve = "use"\nserve_socket = "{tmp_path}/run/serve.sock"\n')
    code = (
        "import sys; from sandboxrun._client import via_server;"
        f" assert via_server(['run', 'PreToolUse', '--config', {str(config)!r}]) is None;"
        " print(sorted(m for m in ('typing', 'tomllib', 'socket', 'pathlib', *sys.argv[1:])"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, *HEAVY], capture_output=True, text=True,
                         check=True, timeout=60, stdin=subprocess.DEVNULL).stdout  # fmt: skip
    assert out.strip() == "[]"


def test_each_dialect_class_serves_its_agents() -> None:
    """The registry's agents by dialect class (what the `*_shaped` guards once told
    generic code, which no longer asks): ten Claude-shaped agents, and each class serves
    some agent (a wrong module name in `WHERE` would not)."""
    from sandboxrun._dialects import registry
    from sandboxrun._dialects.claude.dialect import ClaudeDialect
    from sandboxrun._dialects.cline import ClineDialect
    from sandboxrun._dialects.copilot.dialect import CopilotDialect
    from sandboxrun._dialects.crush.dialect import CrushDialect
    from sandboxrun._dialects.cursor.dialect import CursorDialect
    from sandboxrun._dialects.gemini.dialect import GeminiDialect
    from sandboxrun._dialects.goose.dialect import GooseDialect
    from sandboxrun._dialects.kiro.dialect import KiroDialect
    from sandboxrun._dialects.windsurf.dialect import WindsurfDialect

    classes = (ClaudeDialect, GeminiDialect, CopilotDialect, WindsurfDialect, ClineDialect,
               CursorDialect, GooseDialect, KiroDialect, CrushDialect)  # fmt: skip
    dialects = list(registry.DIALECTS.values())
    assert all(sum(isinstance(d, cls) for cls in classes) == 1 for d in dialects)
    # Claude's package and Codex's (a ClaudeDialect with a reader of its own), by the table
    claude_rows = [a for a, (module, *_) in registry.WHERE.items()
                   if module.split(".")[0] in ("claude", "codex")]  # fmt: skip
    assert sum(isinstance(d, ClaudeDialect) for d in dialects) == len(claude_rows)
    for cls in classes:
        assert any(isinstance(d, cls) for d in dialects), cls.__name__
    assert not any(name.endswith("_shaped") for name in vars(registry))


def test_the_command_modules_import_no_dialect() -> None:
    """`exec`'s, `run`'s and the shims' (`--answer agent`) modules import no agent's
    dialect of their own: the agent's is imported when its command runs."""
    code = (
        "import sys, sandboxrun._runner.exec, sandboxrun._runner.reply, sandboxrun._install.answer, sandboxrun._runner.factory;"
        " from sandboxrun._dialects.registry import WHERE;"
        " print(sorted({'sandboxrun._dialects.' + m for m, *_ in WHERE.values()} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout  # fmt: skip
    assert out.strip() == "[]"
