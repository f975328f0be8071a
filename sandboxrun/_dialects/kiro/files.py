"""Kiro's standalone hook files in `.kiro/hooks/`: Kiro CLI v3's `<name>.json` and the
Kiro IDE's `<name>.kiro.hook`, read as Kiro reads them (the rules, the sources and what
stays unconfirmed: `dialect.py`'s docstring).

- v3 (`{"version": "v1", "hooks": [{name, trigger, matcher, action: {type, command |
  prompt}, timeout, enabled}]}`): a `command` action runs; an `agent` action is a prompt
  for the model, listed as not a command; `enabled: false` is listed as disabled.
- IDE (`{version, enabled, name, when: {type, patterns?, toolTypes?}, then: {type,
  command | prompt, timeout?}}`): `runCommand` runs; `askAgent` is a prompt, listed.

`matcher` is a regular expression (Rust's `regex`, unanchored). A repository writes it:
sandboxrun searches with a deadline (`regex_matches`), and refuses what Rust's engine has
not got (a back-reference, a look-around) and what would cost too much to compile
(`.._dialects.patterns`: nested counted repeats): such a hook is listed as not run, and
under fail-closed it blocks its event, as a hook that cannot start does.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import regex

from ..._log import logger
from ..._types import HookSpec, Skipped
from ..base import escape_name
from ..claude.handler import brief, unicode_ok
from ..claude.settings import recorded
from ..files import Note, read_json, unreadable
from ..patterns import MATCH_TIMEOUT, problem
from .hook import KiroHook

V3_EVENTS = (
    "SessionStart", "Stop", "PreToolUse", "PostToolUse", "PreTaskExec", "PostTaskExec",
    "UserPromptSubmit", "PostFileCreate", "PostFileSave", "PostFileDelete", "Manual",
)  # fmt: skip
IDE_EVENTS = (
    "fileEdited", "fileCreated", "fileDeleted", "userTriggered", "promptSubmit", "agentStop",
    "preToolUse", "postToolUse", "preTaskExecution", "postTaskExecution",
)  # fmt: skip
V3_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})  # matcher: the tool's name
V3_FILE_EVENTS = frozenset({"PostFileCreate", "PostFileSave", "PostFileDelete"})  # a path
V3_DEFAULT_TIMEOUT = 60.0  # seconds (a public hook guide's reading of the docs: unconfirmed)
MAX_HOOK_FILES = 200  # per folder, as for agent files
MAX_MATCHER = 1000  # characters: longer is refused, not compiled


def hook_files(folder: str) -> list[str]:
    """The `*.json` and `*.kiro.hook` files of a hooks folder, sorted (Kiro runs the hooks
    of an event in file-name order), at most `MAX_HOOK_FILES`."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith((".json", ".kiro.hook")))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names[:MAX_HOOK_FILES]]


def folders(project: str, home: str) -> list[tuple[str, str]]:
    """(hooks folder, source): the user's `~/.kiro/hooks` first, then the project's."""
    return [(os.path.join(home, ".kiro", "hooks"), "user"),
            (os.path.join(project, ".kiro", "hooks"), "project")]  # fmt: skip


def discover_files(
    template: KiroHook, wanted: str | None, project: str, home: str
) -> tuple[list[HookSpec], list[Skipped]]:
    """Every runnable hook of both hooks folders (for the event `wanted`, or all), and
    what is listed as not run. `template`: a `KiroHook` with the mounts and workdir."""
    hooks: list[HookSpec] = []
    skipped: list[Skipped] = []
    seen: set[str] = set()
    for folder, source in folders(project, home):
        for path in hook_files(folder):
            real = os.path.realpath(path)
            if real in seen:  # the project is the home folder: read once, as the user's
                continue
            seen.add(real)
            shown = escape_name(path)
            data, problem = read_json(path, must_exist=True)
            if data is None:
                skipped.append(unreadable(shown, source, f"not read: {problem}"))
                continue
            base = replace(template, source=source)
            installed = recorded(home, path, "project" if source == "project" else "user")
            read = _ide if path.endswith(".kiro.hook") else _v3
            for item in read(data, base, installed):
                if isinstance(item, str):
                    skipped.append(unreadable(shown, source, item))
                elif isinstance(item, Skipped):  # a spec: it would run, but cannot
                    if item.spec is None or wanted in (None, item.spec.hook_name):
                        skipped.append(replace(item, path=shown))
                elif wanted is None or item.hook_name == wanted:
                    hooks.append(item)
    return hooks, skipped


def _command(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        return None
    return value if unicode_ok(value) else None


def _unwrapped(command: str, handler: dict[str, Any], installed: Any) -> str:
    """What a wrapper `install` recorded runs (`recorded`); anything else as written."""
    original = installed(handler) if installed is not None else None
    if original is not None and original[1] is None and isinstance(original[0], str):
        return str(original[0])
    return command


def _seconds(value: Any, default: float | None) -> float | str | None:
    """A `timeout` in seconds; 0 means none (sandboxrun's own deadline then)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return f"timeout must be a number of seconds, not {brief(value)}"
    return float(value) if value else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _v3(data: Mapping[str, Any], base: KiroHook, installed: Any) -> list[Any]:
    """One v3 file: hooks (KiroHook), not-run entries (Skipped) and problems (str)."""
    if data.get("version") != "v1":
        return [f'not read: version {brief(data.get("version"))}, not "v1"']
    entries = data.get("hooks")
    if not isinstance(entries, list):
        return ["not read: hooks must be a list"]
    out: list[Any] = []
    for i, entry in enumerate(entries):
        where = f"hooks[{i}]"
        if not isinstance(entry, dict):
            out.append(f"{where}: not an object")
            continue
        trigger = entry.get("trigger")
        if trigger not in V3_EVENTS:  # a name the agent may know is a remark; no name, lost
            unknown = f"{where}: unknown trigger {brief(trigger)}"
            out.append(Note(unknown) if isinstance(trigger, str) else unknown)
            continue
        action = _object(entry.get("action"))
        name = entry["name"] if isinstance(entry.get("name"), str) else where
        spec = replace(base, hook_name=trigger, name=name, flavor="v3")
        if entry.get("enabled") is False:
            out.append(Skipped("", base.source, f"{trigger} {name!r}: disabled (enabled: false)"))
            continue
        if action.get("type") == "agent":
            prompt = f"{trigger} {name!r}: an agent prompt, not a command (Kiro gives it the model)"
            out.append(Skipped("", base.source, prompt))
            continue
        command = _command(action.get("command"))
        if action.get("type") != "command" or command is None:
            out.append(f"{where}: action is neither a command nor an agent prompt")
            continue
        timeout = _seconds(entry.get("timeout"), V3_DEFAULT_TIMEOUT)
        if isinstance(timeout, str):
            out.append(f"{where}: {timeout}")
            continue
        matcher = entry.get("matcher")
        why = matcher_problem(matcher) if trigger in V3_TOOL_EVENTS | V3_FILE_EVENTS else None
        command = _unwrapped(command, action, installed)
        given = matcher if isinstance(matcher, str) and matcher else None
        spec = replace(spec, name=command, argv=("bash", "-c", command), timeout=timeout,
                       matcher=given)  # fmt: skip
        if why:  # listed, never run; fail-closed blocks on it (`CombinedHookRunner`)
            out.append(Skipped("", base.source, f"{trigger} {name!r}: matcher {why}", spec=spec))
            continue
        out.append(spec)
    return out


def _ide(data: Mapping[str, Any], base: KiroHook, installed: Any) -> list[Any]:
    """One IDE `.kiro.hook` file: its one hook, or why it is not run."""
    when, then = _object(data.get("when")), _object(data.get("then"))
    event, action = when.get("type"), then.get("type")
    name = data["name"] if isinstance(data.get("name"), str) else "hook"
    if event not in IDE_EVENTS:  # as v3's unknown trigger
        why = f"not read: when.type {brief(event)} is no Kiro IDE trigger"
        return [Note(why) if isinstance(event, str) else why]
    spec = replace(base, hook_name=event, name=name, flavor="ide")
    if data.get("enabled") is False:
        return [Skipped("", base.source, f"{event} {name!r}: disabled (enabled: false)")]
    if action == "askAgent":
        why = f"{event} {name!r}: askAgent, a prompt for the agent, not a command: never run"
        return [Skipped("", base.source, why)]
    command = _command(then.get("command"))
    if action != "runCommand" or command is None:
        return ["not read: then is neither runCommand with a command nor askAgent"]
    timeout = _seconds(then.get("timeout"), None)
    if isinstance(timeout, str):
        return [f"not read: then.{timeout}"]
    command = _unwrapped(command, then, installed)
    return [replace(spec, name=command, argv=("bash", "-c", command), timeout=timeout)]


# -- the v3 matcher: a regular expression ----------------------------------------------


def matcher_problem(matcher: Any) -> str | None:
    """Why sandboxrun will not use this matcher, or None (also for no matcher)."""
    if matcher is None or matcher == "":
        return None
    if not isinstance(matcher, str) or not unicode_ok(matcher):
        return f"must be a string, not {brief(matcher)}"
    if len(matcher) > MAX_MATCHER:
        return f"longer than {MAX_MATCHER} characters"
    try:
        tree = re._parser.parse(matcher)  # type: ignore[attr-defined]
    except (re.error, RecursionError, OverflowError) as exc:
        return f"is no regular expression ({str(exc)[:80]})"
    return _refused(tree) or problem(matcher, workspace=False)


def _refused(items: Any) -> str | None:
    """A back-reference or a look-around, which Rust's `regex` (Kiro's) refuses."""
    for op, arg in items:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            return "has a back-reference (Kiro's regex engine refuses it)"
        if name in ("ASSERT", "ASSERT_NOT"):
            return "has a look-around (Kiro's regex engine refuses it)"
        subs: list[Any] = []
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            subs = [arg[2]]
        elif name == "SUBPATTERN":
            subs = [arg[-1]]
        elif name == "BRANCH":
            subs = list(arg[1])
        elif name == "ATOMIC_GROUP":
            subs = [arg]
        found = next((w for sub in subs if (w := _refused(sub))), None)
        if found:
            return found
    return None


@functools.lru_cache(maxsize=256)  # only patterns within the bound (`matcher_problem`)
def _compile(matcher: str) -> regex.Pattern[str] | None:
    if matcher_problem(matcher):
        return None
    try:
        return regex.compile(matcher)
    except (regex.error, ValueError, OverflowError, RecursionError):
        return None


def regex_matches(matcher: str | None, text: str) -> bool:
    """Rust's `Regex::is_match`: found anywhere in `text`. A repository writes the
    pattern, so the search has `MATCH_TIMEOUT`; one past it, or a pattern refused, is a
    match: its hook runs (in the sandbox) or, refused, blocks under fail-closed as one
    that cannot start. A guard never stops applying because its pattern is slow."""
    if not matcher:
        return True
    pattern = _compile(matcher)
    if pattern is None:
        return True
    try:
        return pattern.search(text, timeout=MATCH_TIMEOUT) is not None
    except TimeoutError:
        logger.warning("matcher {!r} took over {}s: taken as a match", matcher[:80], MATCH_TIMEOUT)
        return True


def event_path(event: Mapping[str, Any]) -> str | None:
    """The file a file event names (the field is unconfirmed: `file_path`, `path`, or
    `tool_input.path`)."""
    tool_input = event.get("tool_input")
    for value in (event.get("file_path"), event.get("path"),
                  tool_input.get("path") if isinstance(tool_input, dict) else None):  # fmt: skip
        if isinstance(value, str):
            return value
    return None


def file_hooks_under(roots: Sequence[str], home: str) -> list[str]:
    """Every hook file of both folders (for `list` and `doctor`)."""
    project = roots[0] if roots else home
    return [p for folder, _ in folders(project, home) for p in hook_files(folder)]
