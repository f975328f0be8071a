"""Claude/Qoder hook discovery: settings levels, de-duplication, disableAllHooks, skipped
entries with their JSON path, matchers checked up front, the HookSpec fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sandboxrun._dialects.claude.dialect import (
    CLASSIC_HOOK_NAMES,
    CLAUDE,
    HOOK_NAMES,
    QODER,
    QODER_CN,
    ClaudeDialect,
)
from sandboxrun._dialects.registry import DIALECTS


def write(path: Path, doc: Any) -> Path:
    """Write `doc` (JSON-encoded unless it is a str) to `path`, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def config(
    *commands: str, event: str = "PreToolUse", matcher: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A settings document with one matcher entry holding `commands`."""
    entry: dict[str, Any] = {
        "hooks": [{"type": "command", "command": c, **extra} for c in commands]
    }
    if matcher is not None:
        entry["matcher"] = matcher
    return {"hooks": {event: [entry]}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The project root."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


def levels(home: Path, ws: Path) -> tuple[Path, Path, Path]:
    """The user, project and local settings files of Claude Code."""
    return (
        home / ".claude/settings.json",
        ws / ".claude/settings.json",
        ws / ".claude/settings.local.json",
    )


def found(home: Path, ws: Path, hook: str | None = "PreToolUse", dialect: ClaudeDialect = CLAUDE):
    """Discover with the project root `ws`."""
    return dialect.discover(hook, [str(ws)], str(home))


# -- levels --------------------------------------------------------------------------


def test_levels_are_concatenated_user_project_local(home: Path, ws: Path) -> None:
    """Hooks of all three levels are found, in the order user, project, local."""
    user, project, local = levels(home, ws)
    write(local, config("l.sh"))
    write(project, config("p.sh"))
    write(user, config("u.sh"))
    result = found(home, ws)
    assert [(h.name, h.source) for h in result.hooks] == [
        ("u.sh", "user"),
        ("p.sh", "project"),
        ("l.sh", "local"),
    ]
    assert result.skipped == ()


def test_spec_fields(home: Path, ws: Path) -> None:
    """Each hook runs `/bin/sh -c COMMAND` in the project root, with CLAUDE_PROJECT_DIR set."""
    write(levels(home, ws)[1], config("./hooks/check.sh --strict", matcher="Bash"))
    [spec] = found(home, ws).hooks
    assert spec.hook_name == "PreToolUse"
    assert spec.name == "./hooks/check.sh --strict"
    assert spec.argv == ("/bin/sh", "-c", "./hooks/check.sh --strict")
    assert spec.workdir == str(ws)
    assert spec.mounts == (str(ws),)
    assert dict(spec.env) == {"CLAUDE_PROJECT_DIR": str(ws)}
    assert spec.timeout is None
    assert spec.matcher == "Bash"


def test_no_matcher_is_none(home: Path, ws: Path) -> None:
    """An entry without a matcher gives a spec whose matcher is None."""
    write(levels(home, ws)[1], config("x"))
    assert found(home, ws).hooks[0].matcher is None


def test_user_hooks_folder_is_mounted_not_the_user_dir(home: Path, ws: Path) -> None:
    """User-level hooks also mount `~/.claude/hooks` if it exists, never `~/.claude`."""
    (home / ".claude/hooks").mkdir(parents=True)
    write(levels(home, ws)[0], config("u.sh"))
    write(levels(home, ws)[1], config("p.sh"))
    user_spec, project_spec = found(home, ws).hooks
    assert user_spec.mounts == (str(ws), str(home / ".claude/hooks"))
    assert project_spec.mounts == (str(ws),)
    assert str(home / ".claude") not in user_spec.mounts


def test_user_hooks_folder_absent_is_not_mounted(home: Path, ws: Path) -> None:
    """Without `~/.claude/hooks`, a user-level hook mounts only the workspace roots."""
    write(levels(home, ws)[0], config("u.sh"))
    assert found(home, ws).hooks[0].mounts == (str(ws),)


def test_project_settings_come_from_the_first_root_only(home: Path, tmp_path: Path) -> None:
    """Only the first root is the project; every root is mounted."""
    a, b = tmp_path / "a", tmp_path / "b"
    write(a / ".claude/settings.json", config("a.sh"))
    write(b / ".claude/settings.json", config("b.sh"))
    [spec] = CLAUDE.discover("PreToolUse", [str(a), str(b)], str(home)).hooks
    assert spec.name == "a.sh"
    assert spec.mounts == (str(a), str(b))
    assert spec.workdir == str(a)
    assert dict(spec.env) == {"CLAUDE_PROJECT_DIR": str(a)}


def test_missing_files_are_fine(home: Path, ws: Path) -> None:
    """No settings files at all: no hooks and nothing skipped."""
    assert found(home, ws).hooks == ()
    assert found(home, ws).skipped == ()


def test_empty_file_configures_nothing(home: Path, ws: Path) -> None:
    """An empty settings file is no hooks, not an error."""
    write(levels(home, ws)[2], "\n")
    assert found(home, ws).skipped == ()


def test_file_without_hooks_key(home: Path, ws: Path) -> None:
    """A settings file with other keys only has no hooks and no complaints."""
    write(levels(home, ws)[1], {"permissions": {"allow": ["Bash"]}})
    result = found(home, ws)
    assert (result.hooks, result.skipped) == ((), ())


def test_project_in_home_reads_the_file_once(home: Path) -> None:
    """When the project root is HOME, its settings (the user's) are read once."""
    write(home / ".claude/settings.json", {"hooks": {"Bogus": []}})
    result = CLAUDE.discover("PreToolUse", [str(home)], str(home))
    assert [s.source for s in result.skipped] == ["user"]


def test_only_the_requested_event(home: Path, ws: Path) -> None:
    """Asking for PreToolUse does not return a Stop hook of the same file."""
    doc = config("pre.sh")
    doc["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "stop.sh"}]}]
    write(levels(home, ws)[1], doc)
    assert [h.name for h in found(home, ws).hooks] == ["pre.sh"]
    assert [h.name for h in found(home, ws, "Stop").hooks] == ["stop.sh"]


def test_none_lists_every_event(home: Path, ws: Path) -> None:
    """discover(None) returns the hooks of every event, in file order, for `list`."""
    doc = {
        "hooks": {
            name: [{"hooks": [{"type": "command", "command": f"{name}.sh"}]}] for name in HOOK_NAMES
        }
    }
    write(levels(home, ws)[1], doc)
    result = found(home, ws, None)
    assert [h.hook_name for h in result.hooks] == list(HOOK_NAMES)
    assert [h.name for h in result.hooks] == [f"{n}.sh" for n in HOOK_NAMES]


def test_timeout_is_in_seconds(home: Path, ws: Path) -> None:
    """An entry's `timeout` becomes the spec's timeout in seconds (float)."""
    write(levels(home, ws)[1], config("a.sh", timeout=5))
    write(levels(home, ws)[2], config("b.sh", timeout=0.5))
    assert [h.timeout for h in found(home, ws).hooks] == [5.0, 0.5]


# -- de-duplication ------------------------------------------------------------------


def test_same_command_at_several_levels_is_kept_per_source(home: Path, ws: Path) -> None:
    """An identical command at user, project and local level is never merged: one per source."""
    user, project, local = levels(home, ws)
    write(user, config("check.sh", matcher="Bash"))
    write(project, config("check.sh", "other.sh", matcher="Bash"))
    write(local, config("check.sh", matcher="Bash"))
    result = found(home, ws)
    assert [(h.name, h.source) for h in result.hooks] == [
        ("check.sh", "user"),
        ("check.sh", "project"),
        ("other.sh", "project"),
        ("check.sh", "local"),
    ]
    assert result.skipped == ()


def test_same_command_twice_in_one_source_runs_once(home: Path, ws: Path) -> None:
    """Within one settings file, a repeated command with the same matcher is kept once."""
    doc = config("check.sh", matcher="Bash")
    doc["hooks"]["PreToolUse"].append(config("check.sh", matcher="Bash")["hooks"]["PreToolUse"][0])
    path = write(levels(home, ws)[0], doc)
    result = found(home, ws)
    assert [(h.name, h.source) for h in result.hooks] == [("check.sh", "user")]
    assert [(s.path, s.reason) for s in result.skipped] == [
        (
            str(path),
            "hooks.PreToolUse[1].hooks[0]: the same command is already configured here; runs once",
        )
    ]


def test_same_command_in_one_file_runs_once(home: Path, ws: Path) -> None:
    """A command listed twice in one file (two entries) is kept once."""
    doc = config("x.sh")
    doc["hooks"]["PreToolUse"].append({"hooks": [{"type": "command", "command": "x.sh"}]})
    write(levels(home, ws)[1], doc)
    assert [h.name for h in found(home, ws).hooks] == ["x.sh"]


def test_commands_differing_in_spacing_are_different(home: Path, ws: Path) -> None:
    """Only identical strings are duplicates."""
    write(levels(home, ws)[1], config("x.sh", "x.sh "))
    assert [h.name for h in found(home, ws).hooks] == ["x.sh", "x.sh "]


def test_same_command_for_two_events_is_two_hooks(home: Path, ws: Path) -> None:
    """De-duplication is per event: the same command on PreToolUse and Stop runs for both."""
    doc = config("log.sh")
    doc["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "log.sh"}]}]
    write(levels(home, ws)[1], doc)
    assert [h.hook_name for h in found(home, ws, None).hooks] == ["PreToolUse", "Stop"]


@pytest.mark.parametrize(
    ("first", "second", "kept", "runs_for", "skips"),
    [
        ("Bash", "Edit", 1, {"Bash", "Edit"}, {"Read", "NotebookEdit"}),
        ("Bash", "Edit.*", 2, {"Bash", "Edit", "NotebookEdit"}, {"Read", "Bashful"}),
        ("Write|Edit", "mcp__.*", 2, {"Write", "Edit", "mcp__x__y"}, {"Read"}),
        ("Bash", "*", 1, {"Bash", "Read"}, set()),
        ("Bash", None, 1, {"Bash", "Read"}, set()),
        ("Bash", "(?i)zzz", 2, {"Bash", "ZZZ"}, {"Read"}),
    ],
)
def test_duplicate_in_one_source_with_another_matcher_runs_where_either_matches(
    home: Path,
    ws: Path,
    first: str,
    second: str | None,
    kept: int,
    runs_for: set[str],
    skips: set[str],
) -> None:
    """A duplicate command within one source joins matchers only where that is safe."""
    doc = config("g.sh", matcher=first)
    doc["hooks"]["PreToolUse"] += config("g.sh", matcher=second)["hooks"]["PreToolUse"]
    write(levels(home, ws)[0], doc)
    specs = found(home, ws).hooks
    assert len(specs) == kept
    for tool in runs_for:
        assert any(CLAUDE.matches(s, {"tool_name": tool}) for s in specs), tool
    for tool in skips:
        assert not any(CLAUDE.matches(s, {"tool_name": tool}) for s in specs), tool


def test_project_matcher_never_merges_into_the_users(home: Path, ws: Path) -> None:
    """The user's `Bash` and a project's `(?i)zzz` on the same command stay two hooks, and
    the user's still matches Bash (merged, they made an invalid pattern that never ran)."""
    write(levels(home, ws)[0], config("g.sh", matcher="Bash"))
    write(levels(home, ws)[1], config("g.sh", matcher="(?i)zzz"))
    user, project = found(home, ws).hooks
    assert (user.source, user.matcher, project.source) == ("user", "Bash", "project")
    assert CLAUDE.matches(user, {"tool_name": "Bash"})
    assert not CLAUDE.matches(project, {"tool_name": "Bash"})


def test_duplicate_in_explicit_files_merges_mounts(home: Path, tmp_path: Path, ws: Path) -> None:
    """A command kept once from two explicit files still mounts both files' hooks folders."""
    a = write(tmp_path / "a/settings.json", config("g.sh"))
    b = write(tmp_path / "b/settings.json", config("g.sh"))
    (tmp_path / "a/hooks").mkdir()
    (tmp_path / "b/hooks").mkdir()
    [spec] = CLAUDE.discover("PreToolUse", [str(ws)], str(home), [str(a), str(b)]).hooks
    assert {str(tmp_path / "a/hooks"), str(tmp_path / "b/hooks")} <= set(spec.mounts)


# -- disableAllHooks -----------------------------------------------------------------


def test_disable_all_hooks_in_user_settings_turns_everything_off(home: Path, ws: Path) -> None:
    """`disableAllHooks: true` in the user's own settings turns off every level's hooks."""
    files = levels(home, ws)
    for i, path in enumerate(files):
        write(path, {**config(f"h{i}.sh"), **({"disableAllHooks": True} if i == 0 else {})})
    result = found(home, ws)
    assert result.hooks == ()
    assert [(s.path, s.reason) for s in result.skipped] == [
        (str(files[0]), "disableAllHooks is true: every hook off")
    ]


@pytest.mark.parametrize("where", [1, 2], ids=["project", "local"])
def test_workspace_disable_all_hooks_spares_user_hooks(home: Path, ws: Path, where: int) -> None:
    """A workspace file's `disableAllHooks` turns off the workspace's hooks, never the user's."""
    files = levels(home, ws)
    for i, path in enumerate(files):
        write(path, {**config(f"h{i}.sh"), **({"disableAllHooks": True} if i == where else {})})
    result = found(home, ws)
    assert [(h.name, h.source) for h in result.hooks] == [("h0.sh", "user")]
    assert [(s.path, s.reason) for s in result.skipped] == [
        (str(files[where]), "disableAllHooks is true: this workspace's hooks off")
    ]


def test_disable_all_hooks_false_changes_nothing(home: Path, ws: Path) -> None:
    """`disableAllHooks: false` leaves the hooks on."""
    write(levels(home, ws)[1], {**config("x"), "disableAllHooks": False})
    assert len(found(home, ws).hooks) == 1


def test_disable_all_hooks_not_a_bool_is_ignored(home: Path, ws: Path) -> None:
    """A non-boolean disableAllHooks is reported and ignored."""
    write(levels(home, ws)[1], {**config("x"), "disableAllHooks": "yes"})
    result = found(home, ws)
    assert len(result.hooks) == 1
    assert "disableAllHooks must be true or false" in result.skipped[0].reason


# -- broken files and entries ----------------------------------------------------------


def test_invalid_json_file_is_skipped_with_its_position(home: Path, ws: Path) -> None:
    """A settings file that is not JSON is skipped, naming line and column; others still run."""
    user, project, local = levels(home, ws)
    write(user, config("u.sh"))
    write(project, '{\n  "hooks": {\n    "PreToolUse" []\n  }\n}\n')
    write(local, config("l.sh"))
    result = found(home, ws)
    assert [h.name for h in result.hooks] == ["u.sh", "l.sh"]
    [skip] = result.skipped
    assert (skip.path, skip.source) == (str(project), "project")
    assert skip.reason == "not valid JSON: Expecting ':' delimiter: line 3 column 18"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("[1, 2]", "not a JSON object (a list)"),
        (b"\xff\xfe{}", "not valid UTF-8"),
    ],
)
def test_unusable_file_is_skipped(home: Path, ws: Path, content: str | bytes, why: str) -> None:
    """A file that is not a JSON object in UTF-8 is skipped with the reason."""
    path = levels(home, ws)[1]
    path.parent.mkdir(parents=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert [s.reason for s in found(home, ws).skipped] == [why]


def test_settings_path_that_is_a_directory(home: Path, ws: Path) -> None:
    """A directory where the settings file should be is reported."""
    levels(home, ws)[1].mkdir(parents=True)
    assert [s.reason for s in found(home, ws).skipped] == ["is a directory, not a settings file"]


def test_utf8_bom_is_accepted(home: Path, ws: Path) -> None:
    """A settings file saved with a UTF-8 byte-order mark still loads."""
    path = levels(home, ws)[1]
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(config("x")).encode())
    assert [h.name for h in found(home, ws).hooks] == ["x"]


GOOD = {"type": "command", "command": "good.sh"}


@pytest.mark.parametrize(
    ("hooks", "where", "why"),
    [
        (["x"], "hooks", "must be an object mapping event names to lists"),
        ({"PreToolUse": {"hooks": []}}, "hooks.PreToolUse", "must be a list of matcher entries"),
        (
            {"PreToolUse": ["x", {"hooks": [GOOD]}]},
            "hooks.PreToolUse[0]",
            "must be an object with a hooks list",
        ),
        (
            {"PreToolUse": [{"matcher": "Bash"}, {"hooks": [GOOD]}]},
            "hooks.PreToolUse[0]",
            "has no hooks list",
        ),
        (
            {"PreToolUse": [{"hooks": "x.sh"}, {"hooks": [GOOD]}]},
            "hooks.PreToolUse[0]",
            "has no hooks list",
        ),
        (
            {"PreToolUse": [{"hooks": [GOOD, "x.sh"]}]},
            "hooks.PreToolUse[0].hooks[1]",
            "must be an object",
        ),
        (
            {"PreToolUse": [{"hooks": [GOOD, {"type": "command"}]}]},
            "hooks.PreToolUse[0].hooks[1]",
            "has no command string",
        ),
        (
            {"PreToolUse": [{"hooks": [GOOD, {"type": "command", "command": ["ls"]}]}]},
            "hooks.PreToolUse[0].hooks[1]",
            "has no command string",
        ),
        (
            {"PreToolUse": [{"hooks": [GOOD, {"type": "command", "command": "  "}]}]},
            "hooks.PreToolUse[0].hooks[1]",
            "has no command string",
        ),
        (
            {"PreToolUse": [{"hooks": [GOOD, {"type": "prompt", "prompt": "ok?"}]}]},
            "hooks.PreToolUse[0].hooks[1]",
            "not run: a prompt hook (asks a model); sandboxrun runs only command hooks,"
            " in the sandbox",
        ),
        (
            {"PreToolUse": [{"hooks": [GOOD, {"command": "x.sh"}]}]},
            "hooks.PreToolUse[0].hooks[1]",
            "has no type (one of \"command\", 'http', 'prompt', 'agent', 'mcp_tool')",
        ),
        (
            {"PreToolUse": [{"hooks": [GOOD, {"type": "command", "command": "x", "timeout": 0}]}]},
            "hooks.PreToolUse[0].hooks[1]",
            "timeout must be more than 0 and at most 3600 seconds, not 0",
        ),
        (
            {"PreToolUse": [{"hooks": [GOOD, {"type": "command", "command": "x", "timeout": -5}]}]},
            "hooks.PreToolUse[0].hooks[1]",
            "timeout must be more than 0 and at most 3600 seconds, not -5",
        ),
        (
            {
                "PreToolUse": [
                    {"hooks": [GOOD, {"type": "command", "command": "x", "timeout": "9"}]}
                ]
            },
            "hooks.PreToolUse[0].hooks[1]",
            "timeout must be a number of seconds, not '9'",
        ),
        (
            {
                "PreToolUse": [
                    {"hooks": [GOOD, {"type": "command", "command": "x", "timeout": True}]}
                ]
            },
            "hooks.PreToolUse[0].hooks[1]",
            "timeout must be a number of seconds, not True",
        ),
        (
            {
                "PreToolUse": [
                    {"matcher": 5, "hooks": [{"type": "command", "command": "x"}]},
                    {"hooks": [GOOD]},
                ]
            },
            "hooks.PreToolUse[0].matcher",
            "must be a string",
        ),
        (
            {"Pretooluse": [{"hooks": [GOOD]}], "PreToolUse": [{"hooks": [GOOD]}]},
            "hooks.Pretooluse",
            "unknown event name (did you mean PreToolUse?)",
        ),
        (
            {"BeforeTool": [], "PreToolUse": [{"hooks": [GOOD]}]},
            "hooks.BeforeTool",
            "unknown event name",
        ),
        (
            {"before tool": [], "PreToolUse": [{"hooks": [GOOD]}]},
            'hooks["before tool"]',
            "unknown event name",
        ),
    ],
)
def test_malformed_entries_are_skipped_with_their_json_path(
    home: Path, ws: Path, hooks: Any, where: str, why: str
) -> None:
    """A malformed entry is skipped naming the file and its JSON path; valid ones still load."""
    path = write(levels(home, ws)[1], {"hooks": hooks})
    result = found(home, ws)
    assert [(s.path, s.source, s.reason) for s in result.skipped] == [
        (str(path), "project", f"{where}: {why}")
    ]
    expected = [] if where in ("hooks", "hooks.PreToolUse") else ["good.sh"]
    assert [h.name for h in result.hooks] == expected


def test_unknown_event_is_reported_even_when_asking_for_another(home: Path, ws: Path) -> None:
    """Unknown event names are reported whatever event is asked for."""
    write(levels(home, ws)[1], {"hooks": {"PreToolUse": [], "Nope": []}})
    assert [s.reason for s in found(home, ws, "Stop").skipped] == ["hooks.Nope: unknown event name"]


def test_invalid_regex_ignored_where_matchers_are_ignored(home: Path, ws: Path) -> None:
    """On UserPromptSubmit and Stop a matcher is ignored, so an invalid regex there skips nothing."""
    write(levels(home, ws)[1], config("p.sh", event="UserPromptSubmit", matcher="("))
    [spec] = found(home, ws, "UserPromptSubmit").hooks
    assert CLAUDE.matches(spec, {"prompt": "hi"})


# -- explicit settings files ----------------------------------------------------------


def test_explicit_files_replace_the_levels(home: Path, ws: Path, tmp_path: Path) -> None:
    """Explicit settings files are the only ones read, in order, with source `explicit`."""
    write(levels(home, ws)[0], config("u.sh"))
    write(levels(home, ws)[1], config("p.sh"))
    a = write(tmp_path / "a.json", config("a.sh"))
    b = write(tmp_path / "conf/settings.json", config("b.sh"))
    result = CLAUDE.discover("PreToolUse", [str(ws)], str(home), [str(a), str(tmp_path / "conf")])
    assert [(h.name, h.source) for h in result.hooks] == [
        ("a.sh", "explicit"),
        ("b.sh", "explicit"),
    ]
    assert all(h.workdir == str(ws) for h in result.hooks)
    assert b.exists()


def test_explicit_hooks_folder_is_mounted(home: Path, ws: Path, tmp_path: Path) -> None:
    """An explicit settings file's sibling `hooks` folder is mounted, not its whole folder."""
    conf = tmp_path / "conf"
    (conf / "hooks").mkdir(parents=True)
    write(conf / "settings.json", config("b.sh"))
    [spec] = CLAUDE.discover("PreToolUse", [str(ws)], str(home), [str(conf)]).hooks
    assert spec.mounts == (str(ws), str(conf / "hooks"))


def test_missing_explicit_file_is_reported(home: Path, ws: Path, tmp_path: Path) -> None:
    """An explicit settings file that does not exist is reported as skipped."""
    missing = tmp_path / "nope.json"
    result = CLAUDE.discover("PreToolUse", [str(ws)], str(home), [str(missing)])
    assert [(s.path, s.source, s.reason) for s in result.skipped] == [
        (str(missing), "explicit", "not found")
    ]


# -- agent variants --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "user_dir", "project_dir", "var"),
    [
        (CLAUDE, ".claude", ".claude", "CLAUDE_PROJECT_DIR"),
        (QODER, ".qoder", ".qoder", "QODER_PROJECT_DIR"),
        (QODER_CN, ".qoder-cn", ".qoder", "QODERCN_PROJECT_DIR"),
    ],
    ids=["claude", "qoder", "qoder-cn"],
)
def test_agent_folders_and_variable(
    home: Path, ws: Path, dialect: ClaudeDialect, user_dir: str, project_dir: str, var: str
) -> None:
    """Each agent reads its own user and project folders and sets its own variable."""
    for folder in {".claude", ".qoder", ".qoder-cn"}:
        write(home / folder / "settings.json", config(f"user{folder}"))
        write(ws / folder / "settings.json", config(f"project{folder}"))
        write(ws / folder / "settings.local.json", config(f"local{folder}"))
    result = found(home, ws, dialect=dialect)
    assert [(h.name, h.source) for h in result.hooks] == [
        (f"user{user_dir}", "user"),
        (f"project{project_dir}", "project"),
        (f"local{project_dir}", "local"),
    ]
    assert all(dict(h.env) == {var: str(ws)} for h in result.hooks)
    assert (dialect.user_dir, dialect.project_dir, dialect.project_dir_var) == (
        user_dir,
        project_dir,
        var,
    )


@pytest.mark.parametrize("name", ["claude", "qoder", "qoder-cn"])
def test_registered_in_dialects(name: str) -> None:
    """The three claude-family agents are registered: Qoder's with the classic 12 events
    and 60 s, Claude Code with its current 29 events and 600 s."""
    dialect = DIALECTS[name]
    assert isinstance(dialect, ClaudeDialect)
    assert dialect.agent == name
    current = name == "claude"
    assert dialect.default_timeout == (600.0 if current else 60.0)
    assert dialect.hook_names == (HOOK_NAMES if current else CLASSIC_HOOK_NAMES)
    assert (len(HOOK_NAMES), len(CLASSIC_HOOK_NAMES)) == (29, 12)
