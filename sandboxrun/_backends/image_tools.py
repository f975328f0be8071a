"""What the hook image holds: the executables on its PATH, and its folders near the root.

Found once per image id by one probe container (run through the same hardened backend
as every hook), then kept in memory by the backend and on disk under the user's cache
folder (`~/.cache/sandboxrun/image-<id>.json`), so a `sandboxrun run` per event pays a
small file read, not a container. An image id names its content, so the cache never
goes stale; a damaged cache file is probed again and rewritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._log import logger
from .._sandbox.mounts import HOOK_HOME, sandbox_home
from .._types import ExecRequest, ExecResult

VERSION = 1
DEPTH = 4  # folders are listed this deep: enough to tell /opt/x from a missing /home/me/y
MAX_CACHE_BYTES = 4 << 20
# Plain sh for the PATH (any image has it); GNU find for the folders, where it is there.
PROBE = rf"""
IFS=:
for d in $PATH; do
  printf 'p %s\n' "$d"
  for f in "$d"/*; do [ -f "$f" ] && [ -x "$f" ] && printf 'x %s\n' "$f"; done
done
find / -xdev -maxdepth {DEPTH} -type d 2>/dev/null | sed 's/^/d /' || exit 0
find / -xdev -maxdepth {DEPTH} -type l -xtype d 2>/dev/null | sed 's/^/l /' || exit 0
echo 'ok dirs'
"""
# Empty tmpfs at every start: nothing the hook names there exists when it starts (nor in
# the hook's home, `_sandbox.mounts.sandbox_home`, where only what is mounted shows).
EMPTY_AT_START = ("/tmp", HOOK_HOME)


@dataclass(frozen=True, slots=True)
class ImageTools:
    """The image's executables (full paths) and folders; `dirs` None when not listed."""

    image: str
    path_dirs: tuple[str, ...]
    executables: frozenset[str]
    names: frozenset[str]
    dirs: frozenset[str] | None
    links: frozenset[str]  # symlinks to folders (/bin -> usr/bin): not walked below

    def has(self, path: str) -> bool | None:
        """Whether the image holds the file at `path`: True, False, or None (unknown:
        deeper than the listing, or below a folder symlink)."""
        parent = os.path.dirname(path)
        if parent in self.path_dirs:
            return path in self.executables
        if any(path == e or path.startswith(e + "/") for e in EMPTY_AT_START):
            return False
        if self.dirs is not None:
            parts = Path(parent).parts[1:]
            for depth in range(1, min(len(parts), DEPTH) + 1):
                folder = "/" + "/".join(parts[:depth])
                if folder in self.links:
                    return None
                if folder not in self.dirs:
                    return False
        home = sandbox_home()  # last: a password-database lookup
        return False if path == home or path.startswith(home + "/") else None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "image": self.image,
            "path": list(self.path_dirs),
            "executables": sorted(self.executables),
            "dirs": None if self.dirs is None else sorted(self.dirs),
            "links": sorted(self.links),
        }


def from_json(data: Any, image: str) -> ImageTools | None:
    """The tools of a cache document, or None if it is not one of ours."""
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    lists = [data.get(k) for k in ("path", "executables", "links")]
    dirs = data.get("dirs")
    if not all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in lists):
        return None
    if dirs is not None and not (isinstance(dirs, list) and all(isinstance(s, str) for s in dirs)):
        return None
    path, executables, links = lists
    assert path is not None and executables is not None and links is not None
    return ImageTools(
        image=image,
        path_dirs=tuple(path),
        executables=frozenset(executables),
        names=frozenset(os.path.basename(e) for e in executables),
        dirs=None if dirs is None else frozenset(dirs),
        links=frozenset(links),
    )


def parse_probe(stdout: str, image: str) -> ImageTools:
    """The probe's lines (`p DIR`, `x FILE`, `d DIR`, `l LINK`, `ok dirs`) as tools."""
    found: dict[str, list[str]] = {"p": [], "x": [], "d": [], "l": []}
    complete = False
    for line in stdout.splitlines():
        kind, _, value = line.partition(" ")
        if kind in found and value:
            found[kind].append(value)
        complete = complete or line == "ok dirs"
    return ImageTools(
        image=image,
        path_dirs=tuple(dict.fromkeys(found["p"])),
        executables=frozenset(found["x"]),
        names=frozenset(os.path.basename(e) for e in found["x"]),
        dirs=frozenset(found["d"]) if complete and found["d"] else None,
        links=frozenset(found["l"]),
    )


def cache_file(cache_dir: str, image_id: str) -> Path:
    return Path(cache_dir) / f"image-{image_id.removeprefix('sha256:')[:64]}.json"


def load(cache_dir: str, image_id: str, image: str) -> ImageTools | None:
    """The cached tools of this image id, or None (absent, unreadable or damaged)."""
    try:
        with open(cache_file(cache_dir, image_id), "rb") as f:
            raw = f.read(MAX_CACHE_BYTES + 1)
        return None if len(raw) > MAX_CACHE_BYTES else from_json(json.loads(raw), image)
    except (OSError, ValueError, RecursionError):
        return None


def store(cache_dir: str, image_id: str, tools: ImageTools) -> None:
    """Write the cache atomically (a reader sees the old file or the whole new one)."""
    target = cache_file(cache_dir, image_id)
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".image-", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(tools.to_json(), f)
        os.replace(tmp, target)
    except OSError as exc:  # a cache that cannot be written costs a probe next time
        logger.warning("could not write the image cache {}: {}", target, exc)
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)


def probe(run: Callable[[ExecRequest], ExecResult], image: str) -> ImageTools | None:
    """Run the probe container once; None (checks skipped) if it did not answer."""
    request = ExecRequest(
        argv=("/bin/sh", "-c", PROBE), stdin=b"", workdir="/", timeout=60, label="image probe"
    )
    result = run(request)
    text = result.stdout.decode("utf-8", "replace")
    if result.exit_code != 0 or result.output_truncated or not text.strip():
        why = result.start_error or result.stderr.decode("utf-8", "replace").strip()[-200:]
        logger.warning("image probe failed (exit {}): {}", result.exit_code, why)
        return None
    return parse_probe(text, image)


def image_tools(
    run: Callable[[ExecRequest], ExecResult], image: str, image_id: str, cache_dir: str
) -> ImageTools | None:
    """From the disk cache, else from one probe (then cached)."""
    tools = load(cache_dir, image_id, image) if image_id else None
    if tools is None:
        tools = probe(run, image)
        if tools is not None and image_id:
            store(cache_dir, image_id, tools)
    return tools
