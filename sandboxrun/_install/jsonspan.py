"""Where each value of a JSON document sits in its text, so `install` can change one
string or list and leave every other byte of a settings file as the user wrote it.

Written by hand: the `json` module parses without positions, and a format-preserving
JSON editor is not among this project's dependencies. It reuses `json`'s own string
and number scanners, and `json.loads` has already accepted the text before this runs
(the walker trusts the text to be valid JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]

Path = tuple[str | int, ...]

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = ("true", "false", "null")


def spans(text: str) -> dict[Path, tuple[int, int]]:
    """{JSON path: (start, end)} of every value in `text` (a repeated key: the last one,
    as `json.loads` keeps it)."""
    out: dict[Path, tuple[int, int]] = {}
    _value(text, (), 0, out)
    return out


@dataclass(slots=True)
class _Frame:
    """An open container: its path, `{` or `[`, where it starts, its member index."""

    path: Path
    kind: str
    start: int
    index: int = 0


def _value(text: str, path: Path, i: int, out: dict[Path, tuple[int, int]]) -> int:
    """Scan the value starting at `i`, record its span (and its children's); its end.
    Iterative (`_Frame`s): a deeply nested document cannot exhaust the recursion limit."""
    frames: list[_Frame] = []
    pos, current = i, path
    while True:
        pos = _skip(text, pos)
        if text[pos] in "{[":
            frame = _Frame(current, text[pos], pos)
            pos = _skip(text, pos + 1)
            if text[pos] in "}]":  # empty container
                out[current] = (frame.start, pos + 1)
                pos += 1
            else:
                frames.append(frame)
                current, pos = _member(text, frame, pos)
                continue
        else:
            start, pos = pos, _scalar(text, pos)
            out[current] = (start, pos)
        # after a value: close containers, or go on to the next member
        while frames:
            pos = _skip(text, pos)
            frame = frames[-1]
            if text[pos] == ",":
                frame.index += 1
                current, pos = _member(text, frame, _skip(text, pos + 1))
                break
            frames.pop()
            out[frame.path] = (frame.start, pos + 1)
            pos += 1
        else:
            return pos


def _member(text: str, frame: _Frame, pos: int) -> tuple[Path, int]:
    """The path of the member starting at `pos`, and where its value starts."""
    if frame.kind == "[":
        return (*frame.path, frame.index), pos
    key, _ = scanstring(text, pos + 1)
    return (*frame.path, key), _after_key(text, pos)


def _after_key(text: str, pos: int) -> int:
    _, end = scanstring(text, pos + 1)
    pos = _skip(text, end)
    assert text[pos] == ":"
    return _skip(text, pos + 1)


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


def _scalar(text: str, pos: int) -> int:
    ch = text[pos]
    if ch == '"':
        return int(scanstring(text, pos + 1)[1])
    for literal in _LITERALS:
        if text.startswith(literal, pos):
            return pos + len(literal)
    match = _NUMBER.match(text, pos)
    if match is None:
        raise ValueError(f"unexpected {ch!r} at {pos}")
    return match.end()


def replace_values(
    text: str, changes: Sequence[tuple[Path, object]], layout: str | None = None
) -> str:
    """`text` with the value at each path replaced by the JSON of the new value, every
    other byte unchanged. ASCII-only text stays ASCII (`\\u` escapes). `layout`: the
    same text as plain JSON, offset for offset (its comments blanked), to walk."""
    where = spans(text if layout is None else layout)
    ascii_only = text.isascii()
    edits = sorted(((where[p], v) for p, v in changes), key=lambda e: e[0][0], reverse=True)
    for (start, end), value in edits:
        text = text[:start] + json.dumps(value, ensure_ascii=ascii_only) + text[end:]
    return text


def indent_of(text: str) -> int | str:
    """The indentation a file uses (for a value written anew): its first indented line's."""
    match = re.search(r"\n([ \t]+)\S", text)
    if not match:
        return 2
    unit = match.group(1)
    return unit if "\t" in unit else len(unit)


def _members(text: str, obj: Path) -> list[tuple[str, int, int]]:
    """(key, key start, value end) of each member of the object at `obj`, in order."""
    start, _ = spans(text)[obj]
    assert text[start] == "{"
    out: list[tuple[str, int, int]] = []
    pos = _skip(text, start + 1)
    while text[pos] != "}":
        key, _ = scanstring(text, pos + 1)
        end = _value(text, (), _after_key(text, pos), {})
        out.append((key, pos, end))
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    return out


def insert_member(text: str, obj: Path, key: str, value: object, layout: str | None = None) -> str:
    """`text` with `"key": value` added as the last member of the object at `obj` (which
    lacks `key`), laid out as its last member is (the same line break and indentation
    before it, the same `: `); every other byte unchanged. `layout`: as for
    `replace_values` (the text with its comments blanked, to walk)."""
    walk = text if layout is None else layout
    members = _members(walk, obj)
    new = json.dumps(key, ensure_ascii=text.isascii())
    if not members:  # `{}`: the member alone inside the braces
        start, _ = spans(walk)[obj]
        return text[: start + 1] + f"{new}: {json.dumps(value)}" + text[start + 1 :]
    _, key_start, end = members[-1]
    before = walk[:key_start]
    gap = before[len(before.rstrip(" \t\r\n")) :]  # what separates it from the one before
    if len(members) == 1:
        gap = gap or " "
    colon = walk[scanstring(walk, key_start + 1)[1] : _after_key(walk, key_start)]
    return text[:end] + f",{gap}{new}{colon}{json.dumps(value)}" + text[end:]


def _items(text: str, array: Path) -> list[tuple[int, int]]:
    """(start, end) of each item of the array at `array`, in order."""
    where = spans(text)
    out: list[tuple[int, int]] = []
    while (*array, len(out)) in where:
        out.append(where[(*array, len(out))])
    return out


def append_item(text: str, array: Path, value: object, layout: str | None = None) -> str:
    """`text` with `value` added as the last item of the array at `array`, after the
    same separator as the item before it; every other byte unchanged."""
    walk = text if layout is None else layout
    items = _items(walk, array)
    encoded = json.dumps(value, ensure_ascii=text.isascii())
    if not items:  # `[]`: the item alone inside the brackets
        start, _ = spans(walk)[array]
        return text[: start + 1] + encoded + text[start + 1 :]
    end = items[-1][1]
    if len(items) > 1:
        between = walk[items[-2][1] : items[-1][0]]  # `,` and the whitespace around it
        gap = between.split(",", 1)[1] if "," in between else " "
        gap = gap if not gap.strip() else " "  # a comment there: one space
    else:
        start, _ = spans(walk)[array]
        inside = walk[start + 1 : items[0][0]]
        gap = inside if inside and not inside.strip() else " "
    return text[:end] + f",{gap}{encoded}" + text[end:]


def remove_item(text: str, array: Path, index: int, layout: str | None = None) -> str:
    """`text` without the item `index` of the array at `array` (from the end of the item
    before it, or for the first up to the next one), so that `append_item` followed by
    this gives the text back."""
    walk = text if layout is None else layout
    items = _items(walk, array)
    start, end = items[index]
    if index > 0:
        return text[: items[index - 1][1]] + text[end:]
    if len(items) > 1:
        return text[:start] + text[items[1][0] :]
    return text[:start] + text[end:]


def remove_member(text: str, obj: Path, key: str) -> str:
    """`text` without the member `key` of the object at `obj` (the last one of that name,
    as `json.loads` keeps it): from the end of the member before it (or, for the first,
    up to the next one), so that `insert_member` followed by this gives the text back."""
    members = _members(text, obj)
    i = max(n for n, m in enumerate(members) if m[0] == key)
    _, key_start, end = members[i]
    if i > 0:
        return text[: members[i - 1][2]] + text[end:]
    if len(members) > 1:
        return text[:key_start] + text[members[1][1] :]
    return text[:key_start] + text[end:]
