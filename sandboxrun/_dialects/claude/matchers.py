"""Claude-family matchers: which tool (source, trigger...) a settings entry applies to.

Semantics, in order (reference/claude-hooks.md, plus what a hostile workspace needs):

1. Events absent from `MATCH_FIELDS` (UserPromptSubmit, Stop...) ignore matchers.
2. No matcher, `""` and `"*"` match everything.
3. A matcher of only letters, digits, `_` and `|` is a list of exact, case-sensitive
   names: `Edit|Write` matches `Edit` and `Write`, not `NotebookEdit`.
4. Anything else is a regular expression (the `regex` package, `re`-compatible syntax),
   searched anywhere in the event's field (`^...$` anchors it); a field that is not a
   string is matched as "".
5. Trust decides what a broken matcher means (`.._dialects.patterns`). A workspace
   pattern (project, local) is never dropped at discovery: one that cannot be evaluated
   (longer than `MAX_WORKSPACE_PATTERN`, over the compile bound, invalid, or its search
   past `MATCH_TIMEOUT`) makes its hook an `error` for the events it applies to, a block
   under fail-closed: a repository can neither stall nor exhaust a run, nor turn a guard
   off. A trusted pattern (user, explicit) that does not compile, or whose search times
   out, matches: a typo in the user's own guard runs it too often rather than never.
"""

from __future__ import annotations

import functools
import re
import shlex
import time
from collections.abc import Mapping
from typing import Any

import regex

from ..._log import logger
from ..._types import HookSpec
from ..base import from_repository
from ..patterns import MATCH_TIMEOUT as MATCH_TIMEOUT
from ..patterns import MAX_WORKSPACE_PATTERN as MAX_WORKSPACE_PATTERN
from ..patterns import PatternError, invalid, search

# The event field a matcher is tested against; events absent here ignore matchers.
MATCH_FIELDS = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "PermissionRequest": "tool_name",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "PreCompact": "trigger",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "PermissionDenied": "tool_name",
    "Setup": "trigger",
    "PostCompact": "trigger",
    "UserPromptExpansion": "command_name",
}
SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")  # exact names, or a `|` list of them


def matches_all(matcher: str | None) -> bool:
    return matcher is None or matcher in ("", "*")


def check(matcher: str, source: str) -> tuple[bool, str | None]:
    """(keep the entry, why it needs saying) for a matcher found at discovery: always
    kept; a workspace one is judged where it is used (an `error` if it cannot be), a
    trusted one that is invalid runs for every event. Never compiles."""
    if matches_all(matcher) or SIMPLE_MATCHER.fullmatch(matcher) or from_repository(source):
        return True, None
    error = invalid(matcher)
    if error is None:
        return True, None
    return True, f"{matcher[:80]!r}: {error}; runs for every event"


def matches(spec: HookSpec, event: Mapping[str, Any]) -> bool:
    """Whether `spec` applies to `event`: its matcher (the rules in this module's
    docstring), then its `if` rule (`condition_matches`)."""
    return _matcher_matches(spec, event) and condition_matches(spec, event)


def _matcher_matches(spec: HookSpec, event: Mapping[str, Any]) -> bool:
    field = MATCH_FIELDS.get(spec.hook_name)
    matcher = spec.matcher
    if field is None or matches_all(matcher):
        return True
    assert matcher is not None
    value = event.get(field)
    text = value if isinstance(value, str) else ""
    if SIMPLE_MATCHER.fullmatch(matcher):
        return text in matcher.split("|")
    found = search(matcher, text, spec)  # a workspace pattern: PatternError if it cannot be
    return True if found is None else found  # a trusted one that does not compile: runs


# -- `if`: a permission rule the tool call must match ------------------------------------
#
# Claude Code evaluates `if` on tool events only; elsewhere a hook that has one never runs.
# A rule is `Tool` or `Tool(content)`: `Bash(git *)`, `Edit(*.ts)`, `Bash(npm run test:*)`.
# Content is matched as a glob (`*` any text; for paths `*` stops at `/`, `**` does not)
# against the tool's main argument: Bash's `command` (whole, and each of its subcommands
# with `VAR=value` prefixes dropped), a file tool's path (whole, relative to `cwd`, and
# the file name), WebFetch's `domain:` host. Content sandboxrun cannot read for a tool
# matches: a hook runs too often rather than never. Bounded like matchers: a workspace
# rule over `MAX_WORKSPACE_PATTERN` characters, not a rule, or whose search runs past the
# budget is its hook's `error` (`PatternError`); a trusted one past the budget matches.

CONDITION_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"}
)
_RULE = re.compile(r"([^()\s]+)(?:\((.*)\))?", re.DOTALL)
_PATH_FIELDS = {
    "Read": "file_path", "Edit": "file_path", "Write": "file_path",
    "MultiEdit": "file_path", "NotebookEdit": "notebook_path",
    "Glob": "path", "Grep": "path",
}  # fmt: skip
MAX_SUBJECTS = 64  # subcommands of one Bash command looked at; beyond, the rule matches
MAX_SPLIT = 1 << 16  # characters of a Bash command split into subcommands
CONDITION_BUDGET = 0.5  # seconds for all the searches of one rule


def check_condition(rule: str, source: str) -> tuple[bool, str | None]:
    """(keep the hook, why it needs saying) for an `if` rule found at discovery: always
    kept; a workspace one is judged where it is used (`condition_matches`)."""
    if from_repository(source) or _RULE.fullmatch(rule.strip()) is not None:
        return True, None
    why = f"{rule[:40]!r} is not a permission rule like Bash(git *)"
    return True, f"{why}; runs for every tool call"


def condition_matches(spec: HookSpec, event: Mapping[str, Any]) -> bool:
    """Whether the tool call of `event` satisfies `spec`'s `if` (None: always)."""
    rule = spec.condition
    if rule is None:
        return True
    trusted = not from_repository(spec.source)
    if spec.hook_name not in CONDITION_EVENTS:
        return False
    if not trusted and len(rule) > MAX_WORKSPACE_PATTERN:
        raise PatternError(f"if longer than {MAX_WORKSPACE_PATTERN} characters (a workspace rule)")
    parsed = _RULE.fullmatch(rule.strip())
    if parsed is None:
        if trusted:
            return True
        raise PatternError(f"if {rule[:40]!r} is not a permission rule like Bash(git *)")
    tool, content = parsed.group(1), parsed.group(2)
    name = event.get("tool_name")
    name = name if isinstance(name, str) else ""
    if not (name == tool or ("*" in tool and _glob(tool, False).fullmatch(name))):
        return False
    if content is None or content.strip() in ("", "*"):
        return True
    tool_input = event.get("tool_input")
    fields = tool_input if isinstance(tool_input, Mapping) else {}
    subjects, paths = _subjects(name, content, fields, event.get("cwd"))
    if subjects is None:
        return True  # content sandboxrun cannot read for this tool: runs
    try:
        return _search(content, subjects, paths)
    except TimeoutError:
        if not trusted:
            why = f"if {rule[:40]!r}: its search took over {CONDITION_BUDGET}s"
            raise PatternError(why) from None
        logger.warning("if of hook {!r} took over {}s: runs", spec.name, CONDITION_BUDGET)
        return True


def _subjects(
    tool: str, content: str, fields: Mapping[str, Any], cwd: Any
) -> tuple[list[str] | None, bool]:
    """(the strings the content is matched against, whether they are paths), or None."""
    if tool == "Bash":
        command = fields.get("command")
        return (_subcommands(command) if isinstance(command, str) else [""]), False
    if tool in _PATH_FIELDS:
        path = fields.get(_PATH_FIELDS[tool])
        if not isinstance(path, str):
            return [""], True
        found = [path, path.rsplit("/", 1)[-1]]
        if isinstance(cwd, str) and cwd and path.startswith(cwd.rstrip("/") + "/"):
            found.append(path[len(cwd.rstrip("/")) + 1 :])
        return found, True
    if tool == "WebFetch" and content.startswith("domain:"):
        url = fields.get("url")
        if not isinstance(url, str):
            return [""], False
        host = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1].split(":")[0]
        return [f"domain:{host}"], False
    return None, False


def _subcommands(command: str) -> list[str] | None:
    """The command, and each command of a `&&`/`||`/`;`/`|` list without `VAR=x` prefixes."""
    found = [command]
    if len(command) > MAX_SPLIT:
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    words: list[str] = []
    try:
        for token in lexer:
            if token and set(token) <= set(";&|"):
                found.append(" ".join(words))
                words = []
            elif words or not _ASSIGNMENT.fullmatch(token):
                words.append(token)
            if len(found) > MAX_SUBJECTS:
                return None
    except ValueError:  # unbalanced quotes: the whole command only
        return found
    found.append(" ".join(words))
    return [f for f in found if f]


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


def _search(content: str, subjects: list[str], paths: bool) -> bool:
    """Whether the glob `content` matches one of `subjects` (within the budget)."""
    patterns = [content]
    if not paths and content.endswith(":*"):  # the legacy prefix form: `npm run test:*`
        patterns = [content[:-2] + "*"]
    if not paths and patterns[0].endswith(" *"):  # `git *` matches a bare `git` too
        patterns.append(patterns[0][:-2])
    if paths:
        bare = content.lstrip("/") if not content.startswith("~") else content
        patterns.append(bare.removeprefix("./"))
    deadline = time.monotonic() + CONDITION_BUDGET
    for pattern in dict.fromkeys(patterns):
        compiled = _glob(pattern, paths)
        for subject in subjects:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if compiled.fullmatch(subject, timeout=left) is not None:
                return True
    return False


@functools.lru_cache(maxsize=256)
def _glob(pattern: str, paths: bool) -> regex.Pattern[str]:
    """A glob as a regex: `**` any text, `*` any text (but `/` when `paths`)."""
    star = "[^/]*" if paths else ".*"
    parts = [regex.escape(p) for p in pattern.split("*")]
    out = parts[0]
    i = 1
    while i < len(parts):
        if paths and parts[i] == "" and i + 1 < len(parts):  # `**`
            out += ".*" + parts[i + 1]
            i += 2
        else:
            out += star + parts[i]
            i += 1
    return regex.compile(out, regex.DOTALL)
