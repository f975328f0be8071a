"""The fenced blocks of the docs site and their marks (the convention of
docs/writing-docs.md): a shell block (`sh`, `bash`, `shell`, `console`) has, on the line
right above its opening fence, `<!-- runnable -->` or `<!-- not runnable: why -->`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
SHELL = {"sh", "bash", "shell", "console"}
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`{]*)")
_MARK = re.compile(r"^<!--\s*(runnable|not runnable:\s*(\S.*?))\s*-->$")


@dataclass(frozen=True)
class Block:
    page: str  # relative to docs/
    line: int  # of the opening fence, 1-based
    lang: str
    mark: str | None  # "runnable", "not runnable", or None when unmarked or malformed
    why: str
    body: str

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of one page, with the mark on the line above it."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, lang = opening.groups()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        body = "\n".join(line.removeprefix(indent) for line in lines[i + 1 : end]) + "\n"
        above = lines[i - 1].strip() if i else ""
        mark = _MARK.match(above)
        kind = None if mark is None else mark.group(1).split(":")[0]
        why = (mark.group(2) or "") if mark else ""
        rel = page.relative_to(DOCS).as_posix()
        found.append(Block(rel, i + 1, lang.lower(), kind, why, body))
        i = end + 1
    return found


def all_blocks() -> list[Block]:
    return [b for page in sorted(DOCS.rglob("*.md")) for b in blocks(page)]


def runnable() -> list[Block]:
    return [b for b in all_blocks() if b.lang in SHELL and b.mark == "runnable"]
