"""Regular expressions from hook configs, compiled and searched at a bounded cost.

`regex.compile` writes out each counted repeat: `a{4294967294}` (13 characters) asks for
gigabytes, `(?:(?:(?:a{100}){100}){100}){10}` took 16 s and 3 GB. So a pattern is
measured before it is compiled: read by the `regex` package's own parser (the reading
the compile expands, so the two never disagree: inline flags, verbose mode, V1 sets),
which builds a tree without writing anything out, then sized as the product of its
nested repeats (the larger count of each; an unbounded one's lower count, plus one).
Over `MAX_SIZE`, or nested deeper than `MAX_DEPTH` levels, it is not compiled.

The rule every dialect follows (`search`): a repository's pattern (`WORKSPACE_SOURCES`)
that cannot be evaluated, because it is over the bound, longer than
`MAX_WORKSPACE_PATTERN`, invalid, or its search ran past `MATCH_TIMEOUT`, raises
`PatternError`; the runner makes that hook an `error` outcome naming why (a block under
fail-closed) for the events its matcher applies to, and runs the event's other hooks.
Discovery never drops such a hook. A user's own pattern over the bound is compiled
anyway, with a warning; one that does not compile is the dialect's to read (most run
the hook), and one whose search runs past the budget matches.

The parser is `regex._regex_core`'s, private to the `regex` package: a tree whose shape
this module does not recognise is refused (for a repository) rather than guessed at.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import regex

from .._errors import PatternError as PatternError
from .._log import logger
from .._types import HookSpec
from .base import from_repository

MAX_WORKSPACE_PATTERN = 256  # characters; real tool patterns are a few dozen
# Compiled size, in parsed items: a sane tool pattern is under a hundred. At the bound
# the costliest item measured compiles in 55 ms and 25 MB (`\X{10000}`); past it the
# cost grows with the product, without limit.
MAX_SIZE = 10_000
MAX_DEPTH = 64  # levels of the parsed tree (about two per group)
MATCH_TIMEOUT = 0.1  # seconds per search: far above a sane pattern's microseconds

_core: Any = importlib.import_module("regex._regex_core")


def problem(pattern: str, workspace: bool = True) -> str | None:
    """Why `pattern` may not be compiled (its length for a `workspace` one, its measured
    size), or None. Never compiles, and never allocates more than the parse does."""
    if workspace and len(pattern) > MAX_WORKSPACE_PATTERN:
        return f"longer than {MAX_WORKSPACE_PATTERN} characters (a workspace pattern)"
    try:
        size = _size(_parse(pattern), 0)
    except regex.error as exc:
        return f"invalid regular expression: {exc}"
    except (RecursionError, _TooDeep):
        return f"nested deeper than {MAX_DEPTH} levels"
    except (ValueError, OverflowError, TypeError, AttributeError) as exc:
        return f"could not be measured ({type(exc).__name__}: {str(exc)[:60]})"
    if size > MAX_SIZE:
        return f"expands to over {MAX_SIZE} items when compiled (nested counted repeats)"
    return None


def invalid(pattern: str) -> str | None:
    """Why the parser refuses `pattern`'s syntax, or None (also when it is only too
    large: `problem`). For a trusted pattern at discovery: never compiles."""
    why = problem(pattern, workspace=False)
    return why if why is not None and why.startswith("invalid") else None


def compile_pattern(pattern: str, workspace: bool) -> tuple[regex.Pattern[str] | None, str | None]:
    """(pattern, None), or (None, why not). A `workspace` pattern is compiled only
    within the bound; a trusted one over it is compiled too (not cached), with a warning."""
    why = problem(pattern, workspace)
    if why is None:
        return _compile(pattern)
    if workspace or why.startswith("invalid"):
        return None, why
    logger.warning("pattern {!r} {}: compiled anyway (the user's own)", pattern[:80], why)
    return _uncached(pattern)


def search(pattern: str, text: str, spec: HookSpec) -> bool | None:
    """Whether `pattern` is found in `text` (unanchored), for `spec`'s hook. A workspace
    pattern that cannot be evaluated raises `PatternError`; a trusted one that does not
    compile is None (the dialect decides), and one whose search runs too long matches."""
    workspace = from_repository(spec.source)
    compiled, why = compile_pattern(pattern, workspace)
    if compiled is None:
        if workspace:
            raise PatternError(f"matcher {pattern[:80]!r} {why}")
        return None
    try:
        return compiled.search(text, timeout=MATCH_TIMEOUT) is not None
    except TimeoutError:
        if workspace:
            raise PatternError(
                f"matcher {pattern[:80]!r}: its search took over {MATCH_TIMEOUT}s"
            ) from None
        logger.warning("matcher of hook {!r} took over {}s: runs (trusted)", spec.name,
                       MATCH_TIMEOUT)  # fmt: skip
        return True


# Within the bound only: a cached pattern costs at most what `MAX_SIZE` allows.
@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> tuple[regex.Pattern[str] | None, str | None]:
    return _uncached(pattern)


def _uncached(pattern: str) -> tuple[regex.Pattern[str] | None, str | None]:
    try:
        return regex.compile(pattern), None
    except (regex.error, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        return None, f"invalid regular expression: {exc}"


class _TooDeep(Exception):
    pass


def _parse(pattern: str) -> Any:
    """The parsed tree, as `regex.compile` reads it before compiling (its `_compile`'s
    loop: a global flag found mid-pattern restarts the parse with it)."""
    flags = 0
    for _ in range(8):  # each pass adds flags; a handful of passes settles them
        source = _core.Source(pattern)
        info = _core.Info(flags, source.char_type, {})
        source.ignore_space = bool(info.flags & _core.VERBOSE)
        try:
            parsed = _core._parse_pattern(source, info)
        except _core._UnscopedFlagSet:
            flags = info.global_flags
            continue
        if not source.at_end():
            raise regex.error("unbalanced parenthesis", pattern, source.pos)
        return parsed
    raise ValueError("its flags did not settle")


def _size(node: Any, depth: int) -> int:
    """Items `node` compiles to, at most: its children's sum, times its repeat count."""
    if depth > MAX_DEPTH:
        raise _TooDeep
    if not isinstance(node, _core.RegexBase):
        raise TypeError(f"unknown item {type(node).__name__}")
    inner = 0
    for value in vars(node).values():
        items = value if isinstance(value, list | tuple) else [value]
        for item in items:
            if isinstance(item, _core.RegexBase):
                inner += _size(item, depth + 1)
    size = max(1, inner)
    if isinstance(node, _core.GreedyRepeat):  # lazy and possessive repeats too
        low, high = node.min_count, node.max_count
        size *= max(1, high if high is not None else low + 1)
    return size
