"""Which tools a Kiro hook's `matcher` selects, as the CLI's `hook_matches_tool` reads it
(aws/amazon-q-developer-cli@15cc8f3c `crates/chat-cli/src/cli/chat/cli/hooks.rs`):

- no matcher, or `*`: every tool; `@builtin`: every tool that is not an MCP tool (an MCP
  tool's name is `@server/tool`; `is_mcp_tool_ref`, `cli/agent/mod.rs`: starts with `@`
  and not with `@builtin`);
- `@server`: every tool of that MCP server (the part of the name before the first `/`);
- anything else: the exact name, or, when the pattern holds `*` or `?`, a `globset` glob
  over the whole name (`util/pattern_matching.rs`); a glob globset refuses matches
  nothing. globset's defaults: `*` and `?` cross `/` (no literal separator), `[...]`
  and `[!...]` classes with ranges, `{a,b}` alternatives, `\\` escapes the next
  character; case-sensitive. A glob whose `{a,b}` alternatives expand past
  `MAX_ALTERNATIVES` is sandboxrun's own limit, not globset's: Kiro would match with it,
  so it is never taken for "no match" (a guard dropped in silence): `PatternError`, its
  hook's `error` (a block under fail-closed), as for any pattern sandboxrun cannot
  evaluate (`_dialects.patterns`).

Only tool events carry a tool: Kiro filters by matcher only when it runs a hook with a
tool context (preToolUse, postToolUse); agentSpawn, userPromptSubmit and stop hooks run
whatever their matcher says.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..._errors import PatternError

MCP_DELIMITER = "/"  # `util/consts.rs` MCP_SERVER_TOOL_DELIMITER


def is_mcp(tool: str) -> bool:
    return tool.startswith("@") and not tool.startswith("@builtin")


def tool_matches(matcher: str | None, tool: str) -> bool:
    if matcher is None or matcher == "*":
        return True
    if matcher == "@builtin":
        return not is_mcp(tool)
    if is_mcp(tool) and matcher == "@" + tool[1:].split(MCP_DELIMITER, 1)[0]:
        return True
    if matcher == tool:
        return True
    if "*" in matcher or "?" in matcher:
        return glob_match(matcher, tool)
    return False


Token = tuple[str, str, bool]  # (kind: lit|any|star|class, text, negated)
MAX_ALTERNATIVES = 256  # `{a,b}{c,d}...` expanded: more is an error (`PatternError`)


class _TooMany(Exception):
    pass


def glob_match(glob: str, text: str) -> bool:
    """globset's `Glob::new(glob).compile_matcher().is_match(text)`, default options:
    False where globset refuses the glob. In O(len(glob) * len(text)) steps: a repository's
    `*a*a*a*...b` cannot stall a run (no regular expression backtracks here).
    `PatternError` past `MAX_ALTERNATIVES` (a glob Kiro would use, sandboxrun will not)."""
    try:
        alternatives = parse(glob)
    except _TooMany:
        raise PatternError(
            f"the glob {glob[:80]!r} expands to more than {MAX_ALTERNATIVES} alternatives"
        ) from None
    return alternatives is not None and any(_match(t, text) for t in alternatives)


@functools.lru_cache(maxsize=256)
def parse(glob: str) -> tuple[tuple[Token, ...], ...] | None:
    """The glob as token lists, one per `{a,b}` alternative, or None where globset
    refuses it (an unclosed `[` or `{`, a nested `{`, a dangling `\\`); `_TooMany` when it
    expands to more than `MAX_ALTERNATIVES` (not cached: it stops there each time)."""
    heads: list[list[Token]] = [[]]
    group: list[list[Token]] | None = None  # the alternatives of the open `{`
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        token: Token | None = None
        if c == "\\":
            if i + 1 >= n:
                return None
            token = ("lit", glob[i + 1], False)
            i += 1
        elif c == "*":
            token = ("star", "", False)
        elif c == "?":
            token = ("any", "", False)
        elif c == "[":
            end = _class_end(glob, i)
            if end is None:
                return None
            body = glob[i + 1 : end]
            negated = body[:1] in ("!", "^")
            token = ("class", body[1:] if negated else body, negated)
            i = end
        elif c == "{":
            if group is not None:
                return None  # globset: nested alternates are an error
            group = [[]]
        elif c == "}" and group is not None:
            heads = [h + g for h in heads for g in group]
            if len(heads) > MAX_ALTERNATIVES:
                raise _TooMany
            group = None
        elif c == "," and group is not None:
            group.append([])
        else:
            token = ("lit", c, False)
        if token is not None:
            for tokens in group if group is not None else heads:
                tokens.append(token)
        i += 1
    if group is not None:
        return None
    return tuple(tuple(h) for h in heads)


def _one(token: Token, ch: str) -> bool:
    kind, text, negated = token
    if kind == "lit":
        return ch == text
    if kind == "any":
        return True
    hit, i = False, 0
    while i < len(text):
        if i + 2 < len(text) and text[i + 1] == "-":
            hit = hit or text[i] <= ch <= text[i + 2]
            i += 3
        else:
            hit = hit or ch == text[i]
            i += 1
    return hit != negated


def _match(tokens: Sequence[Token], text: str) -> bool:
    """Wildcard matching with one saved star (a later star supersedes an earlier one)."""
    t = s = 0
    star, mark = -1, 0
    while s < len(text):
        if t < len(tokens) and tokens[t][0] != "star" and _one(tokens[t], text[s]):
            t, s = t + 1, s + 1
        elif t < len(tokens) and tokens[t][0] == "star":
            star, mark, t = t, s, t + 1
        elif star >= 0:
            mark += 1
            t, s = star + 1, mark
        else:
            return False
    while t < len(tokens) and tokens[t][0] == "star":
        t += 1
    return t == len(tokens)


def _class_end(glob: str, start: int) -> int | None:
    """The index of the `]` closing the class opened at `start` (a `]` right after the
    `[` or `[!` is a member, as in globset)."""
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":
        i += 1
    end = glob.find("]", i)
    return end if end >= 0 else None
