"""Claude-family matchers: which tool (source, trigger...) a settings entry applies to.

Semantics, in order (reference/claude-hooks.md, plus what a hostile workspace needs):

1. Events absent from `MATCH_FIELDS` (UserPromptSubmit, Stop...) ignore matchers.
2. No matcher, `""` and `"*"` match everything.
3. A matcher of only letters, digits, `_` and `|` is a list of exact, case-sensitive
   names: `Edit|Write` matches `Edit` and `Write`, not `NotebookEdit`.
4. Anything else is a regular expression (the `regex` package, `re`-compatible syntax),
   searched anywhere in the event's field (`^...$` anchors it); a field that is not a
   string is matched as "".
5. Trust decides what a broken matcher means. A workspace pattern (project, local) longer
   than `MAX_WORKSPACE_PATTERN` or that does not compile is skipped at discovery with a
   reason; one whose search exceeds `MATCH_TIMEOUT` does not match (logged): a
   repository cannot stall a run with catastrophic backtracking. A trusted pattern
   (user, explicit) that does not compile, or whose search times out, matches: a typo in
   the user's own guard runs it too often rather than never.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

import regex
from loguru import logger

from ._dialect import WORKSPACE_SOURCES
from ._types import HookSpec

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
}
SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")  # exact names, or a `|` list of them
MAX_WORKSPACE_PATTERN = 256  # characters; real tool patterns are a few dozen
MATCH_TIMEOUT = 0.1  # seconds per search: far above a sane pattern's microseconds


def matches_all(matcher: str | None) -> bool:
    return matcher is None or matcher in ("", "*")


def check(matcher: str, source: str) -> tuple[bool, str | None]:
    """(keep the entry, why it needs saying) for a matcher found at discovery."""
    if matches_all(matcher) or SIMPLE_MATCHER.fullmatch(matcher):
        return True, None
    workspace = source in WORKSPACE_SOURCES
    if workspace and len(matcher) > MAX_WORKSPACE_PATTERN:
        return False, f"longer than {MAX_WORKSPACE_PATTERN} characters (a workspace pattern)"
    error = _compile(matcher)[1]
    if error is None:
        return True, None
    if workspace:
        return False, f"invalid regular expression {matcher!r}: {error}"
    return True, f"invalid regular expression {matcher!r}: {error}; runs for every event"


def matches(spec: HookSpec, event: Mapping[str, Any]) -> bool:
    """Whether `spec` applies to `event` (the rules in this module's docstring)."""
    field = MATCH_FIELDS.get(spec.hook_name)
    matcher = spec.matcher
    if field is None or matches_all(matcher):
        return True
    assert matcher is not None
    value = event.get(field)
    text = value if isinstance(value, str) else ""
    if SIMPLE_MATCHER.fullmatch(matcher):
        return text in matcher.split("|")
    trusted = spec.source not in WORKSPACE_SOURCES
    pattern = _compile(matcher)[0]
    if pattern is None:
        return trusted
    try:
        return pattern.search(text, timeout=MATCH_TIMEOUT) is not None
    except TimeoutError:
        logger.warning(
            "matcher of hook {!r} took over {}s: {}",
            spec.name, MATCH_TIMEOUT, "runs (trusted)" if trusted else "skipped (workspace)",
        )  # fmt: skip
        return trusted


@functools.lru_cache(maxsize=256)
def _compile(matcher: str) -> tuple[regex.Pattern[str] | None, str | None]:
    """(pattern, None) or (None, why it does not compile)."""
    try:
        return regex.compile(matcher), None
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        return None, str(exc)
