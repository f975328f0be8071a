"""Pins: the identity of a repository's hook, and where the approved ones are kept.

A hook from a workspace source (`_dialects.base.WORKSPACE_SOURCES`) is known by its
config entry (agent, event, matcher, command, source level, and the fields that change
what its answer decides or when it runs: `fields`) and by every file of the
workspace its command names (for Cline's family: the hook file itself, which is its
argv): each file's sha256, size and mode. A file is the one the kernel opens: each
word is resolved as the kernel does, from the hook's working directory, symlinks
followed before `..` (`resolve`), and pinned at the path it resolves to, with the
symlinks on the way (a symlink swapped to point elsewhere is a change, and so is any
change of where a word resolves). The bytes of each file are kept (up to `MAX_KEPT`)
so that `sandboxrun review` can show a unified diff.

Pins live in the user's data folder (`~/.local/share/sandboxrun/pins/`, beside
`_install.files.store_root`), one file per workspace keyed by the workspace's real
path, which the file also names and which is checked on reading: the pins of one
workspace never approve another's. Nothing is ever read from or written to the
workspace. Files a hook sources or imports are not pinned (only the words of its
command are read).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import _userconfig
from .._sandbox.preflight import _expand
from .._types import HookSpec
from .fields import LEGACY_UNKNOWN, runs_of

MAX_KEPT = 256 << 10  # bytes of one file kept for the diff (larger: hashed, not shown)
MAX_HASHED = 64 << 20  # bytes of one file read for its hash (then the size says the rest)
FORMAT = 1  # the pins file's version
# A pin's: 2 pins the entry's `timeout` too (`fields`); 3 pins each file at the path the
# kernel resolves it to (before, at the word's path with `..` dropped as text: `legacy`).
VERSION = 3
MAX_LINKS = 40  # symlinks followed in one path before the kernel gives up (ELOOP)


@dataclass(frozen=True)
class Pin:
    """One hook's identity. `key` names the hook across versions (agent, event, entry
    point, what the report calls it); `digest` changes with its content (entry and
    files' bytes and symlink targets, never a mode); `shape` is the digest without the
    files' paths (a rename keeps it)."""

    key: str
    agent: str
    event: str
    name: str
    entry: Mapping[str, Any]
    files: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # 1: written before `fields.LEGACY_UNKNOWN` was pinned (not part of the digest)
    version: int = VERSION
    # This pin as a version 2 pin would have recorded it, with each file's record that of
    # the file the kernel opens (`known`): set by `identify`, never saved.
    legacy: Pin | None = field(default=None, compare=False, repr=False)

    @property
    def knows_timeout(self) -> bool:
        """Whether it pinned every field of `fields` (a version 1 pin did not)."""
        return self.version >= 2

    @property
    def digest(self) -> str:
        files = {p: [f.get("sha256"), f.get("link"), f.get("size")] for p, f in self.files.items()}
        return _sha({"entry": self.entry, "files": files})

    @property
    def files_digest(self) -> str:
        """The digest of the files alone (what `exec` compares with a `run` pin)."""
        return _sha({p: [f.get("sha256"), f.get("link"), f.get("size")]
                     for p, f in self.files.items()})  # fmt: skip

    @property
    def shape(self) -> str:
        files = sorted([str(f.get("sha256")), str(f.get("link"))] for f in self.files.values())
        return _sha({"entry": {k: v for k, v in self.entry.items() if k != "command"},
                     "command": self.entry.get("shape"), "files": files})  # fmt: skip

    @property
    def runs(self) -> dict[str, Any]:
        """The entry's fields that are not their default (`fields.runs`)."""
        value = self.entry.get("runs")
        return dict(value) if isinstance(value, Mapping) else {}

    def known(self, pinned: Pin) -> Pin:
        """This pin as `pinned` (an approved one) could have recorded it: of a pin older
        than version 3, its files at the paths their words name with `..` dropped as
        text, each with the bytes of the file the kernel opens there (so an older pin is
        approved only when the bytes it approved are the ones that run); of a version 1
        pin, without the fields it did not record (`fields.LEGACY_UNKNOWN`)."""
        pin = self.legacy if pinned.version < VERSION and self.legacy is not None else self
        if pinned.knows_timeout or not LEGACY_UNKNOWN & set(pin.runs):
            return pin
        entry = {k: v for k, v in pin.entry.items() if k != "runs"}
        runs = {k: v for k, v in pin.runs.items() if k not in LEGACY_UNKNOWN}
        if runs:
            entry["runs"] = runs
        return replace(pin, entry=entry)

    def modes(self) -> dict[str, str | None]:
        return {p: f.get("mode") for p, f in self.files.items()}

    def to_json(self) -> dict[str, Any]:
        files = {p: dict(f) for p, f in self.files.items()}
        data: dict[str, Any] = {"key": self.key, "agent": self.agent, "event": self.event,
                                "name": self.name, "entry": dict(self.entry),
                                "files": files}  # fmt: skip
        if self.knows_timeout:  # a version 1 pin stays one: it still lacks them
            data["version"] = self.version
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Pin:
        files = {str(p): dict(f) for p, f in data["files"].items()}
        version = data.get("version", 1)
        return cls(str(data["key"]), str(data["agent"]), str(data["event"]), str(data["name"]),
                   dict(data["entry"]), files,
                   version if isinstance(version, int) and version > 0 else 1)  # fmt: skip


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def relative(path: str, root: str) -> str:
    """`path` as the pins write it: relative to the workspace when inside it."""
    if os.path.isabs(path) and Path(path).is_relative_to(root):
        return os.path.relpath(path, root)
    return path


def identify(agent: str, spec: HookSpec, root: str, kind: str = "run") -> Pin:
    """The identity of a repository hook `spec` of workspace `root` (a real path).
    `kind`: `run` for a hook discovery found, `exec` for an `exec --untrusted` command."""
    root = os.path.realpath(root)
    workdir = spec.workdir or root
    files: dict[str, dict[str, Any]] = {}
    shape: list[str] = []
    old_files: dict[str, dict[str, Any]] = {}  # as a version 2 pin had them (`legacy`)
    old_shape: list[str] = []
    for word in command_words(spec):
        found = resolve(word, workdir, root)
        if found is None:
            shape.append(word)
        else:
            rel = relative(found.path, root)
            record = file_record(found.path, root, found.links)
            if rel in files:  # reached twice: every way there is part of it
                record["link"] = _links(files[rel]["link"], record["link"])
            files[rel] = record
            # A rename keeps the shape (the path is not in it), a swap of places does not.
            shape.append(f"\0{record['sha256']}:{record['link']}")
        lexical = _in_workspace(word, workdir, root)
        if lexical is None and found is None:
            old_shape.append(word)
            continue
        # Where version 2 looked (or, if it saw nothing, where it would have: never in
        # its pin, so never approved), with what the kernel opens.
        place = lexical or os.path.normpath(os.path.join(workdir, word))
        old = file_record(found.path if found else None, root)
        old["link"] = os.readlink(place) if lexical and os.path.islink(place) else None
        old_files[os.path.relpath(place, root)] = old
        old_shape.append(f"\0{old['sha256']}:{old['link']}")
    name = relative(spec.name, root)
    entry: dict[str, Any] = {"kind": kind, "source": spec.source, "matcher": spec.matcher,
             "condition": spec.condition, "command": [relative(a, root) for a in spec.argv],
             "shape": shape}  # fmt: skip
    extra = runs_of(agent, spec)
    if extra:  # only when set: the pins of hooks without them are as they were
        entry["runs"] = extra
    key = key_of(agent, spec, root, kind)
    legacy = Pin(key, agent, spec.hook_name, name, {**entry, "shape": old_shape}, old_files)
    return Pin(key, agent, spec.hook_name, name, entry, files, legacy=legacy)


def _links(a: str | None, b: str | None) -> str | None:
    both = sorted({x for x in (a, b) if x is not None})
    return "; ".join(both) if both else None


def key_of(agent: str, spec: HookSpec, root: str, kind: str = "run") -> str:
    """`identify`'s key alone, without reading a file: which pin the hook would have."""
    name = relative(spec.name, os.path.realpath(root))
    return "\x1f".join((kind, agent, spec.hook_name, name))


def command_words(spec: HookSpec) -> list[str]:
    """Every word of the hook's argv, a shell string (`sh -c STRING`) split into its
    words with the hook's `$NAME`s expanded (`$CLAUDE_PROJECT_DIR/...`)."""
    words: list[str] = []
    for arg in spec.argv:
        text = _expand(arg, spec.env) or arg
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words += list(lexer)
        except ValueError:  # unbalanced quotes: the words as they stand
            words += text.split()
    return words


@dataclass(frozen=True)
class Resolved:
    """Where a word of a command leads: `path`, the real path of the file the kernel
    opens (or as far as it got, `resolve`), and `links`, each symlink followed on the
    way once inside the workspace ("where -> target", where relative to the workspace
    when inside it)."""

    path: str
    links: tuple[str, ...]


def resolve(word: str, workdir: str, root: str) -> Resolved | None:
    """The file `word` names as the kernel finds it from `workdir` (components in turn,
    a symlink followed where it is met, so `link/..` is the link's target's parent), when
    it is a regular file inside the workspace `root` (a real path), or anything a symlink
    inside it leads to: another kind of file, nothing, a loop, or a place outside the
    workspace (`path` then says how far it got: outside, the sandbox has its own files,
    not the host's, so the host's are not followed there); else None (a word that names
    no file, or a file of the host the repository did not point at: `/bin/sh`)."""
    if not word or "\0" in word or word.startswith("-"):
        return None
    # Where the hook stands is where the agent put it (a change of where it leads moves
    # every relative word): the words' own links count from there.
    path = "/" if word.startswith("/") else os.path.realpath(os.path.join(root, workdir))
    todo = word.split("/")[::-1]  # the next part last
    links: list[str] = []
    followed = 0
    entered = _inside(path, root)  # links before the workspace are the host's, not its
    part = ""
    try:
        while todo:
            part = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                path = os.path.dirname(path)
                continue
            step = os.path.join(path, part)
            if entered and not (_inside(step, root) or _inside(root, step)):
                raise FileNotFoundError(step)  # left the workspace (but by its own path)
            if not stat.S_ISLNK(os.lstat(step).st_mode):
                path = step
                entered = entered or _inside(path, root)
                continue
            target = os.readlink(step)
            if entered or _inside(path, root):
                entered = True
                links.append(f"{relative(step, root)} -> {target}")
            followed += 1
            if followed > MAX_LINKS:
                raise OSError("too many levels of symbolic links")
            todo += target.split("/")[::-1]
            if target.startswith("/"):
                path = "/"
    except OSError:  # nothing there, not a folder, outside, a loop: as far as it got
        path = os.path.join(path, part, *todo[::-1])
        regular = False
    else:
        regular = os.path.isfile(path) and not os.path.islink(path)
    if links or (regular and _inside(path, root) and path != root):
        return Resolved(path, tuple(links))
    return None


def _inside(path: str, root: str) -> bool:
    """`path` is `root` or below it (both real paths, or `/`)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _in_workspace(word: str, workdir: str, root: str) -> str | None:
    """Where a version 2 pin looked for the file `word` names (lexically, `dir/..`
    dropped as text: see `resolve` for the file that runs), or None."""
    if not word or "\0" in word or word.startswith("-"):
        return None
    path = os.path.normpath(os.path.join(workdir, word))
    if not Path(path).is_relative_to(root) or path == root:
        return None
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    return path if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode) else None


def file_record(real: str | None, root: str, links: Sequence[str] = ()) -> dict[str, Any]:
    """sha256, size, mode, the symlinks on the way (`link`: None without one) and
    (bounded) bytes of the file at real path `real` (None: nothing there). Bytes are read
    only when it is inside the workspace: a symlink to `~/.ssh/id_rsa` pins where it
    points, never what is there."""
    record: dict[str, Any] = {"sha256": None, "size": None, "mode": None,
                              "link": "; ".join(links) if links else None,
                              "bytes": None}  # fmt: skip
    if real is None:
        return record
    if not Path(real).is_relative_to(root):
        record["outside"] = True
        return record
    with contextlib.suppress(OSError):
        st = os.stat(real)
        record["mode"] = f"{stat.S_IMODE(st.st_mode):04o}"
        if not stat.S_ISREG(st.st_mode):
            return record
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(real, flags)
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_HASHED)
        record["sha256"] = hashlib.sha256(data).hexdigest()
        record["size"] = st.st_size
        if len(data) <= MAX_KEPT:
            record["bytes"] = base64.b64encode(data).decode()
    return record


def pins_root(home: str) -> Path:
    """Where pins live: the user's data folder (as `_install.files.store_root`)."""
    return Path(_userconfig.data_dir(home)) / "pins"


class PinStore:
    """The approved pins of one workspace, in the user's data folder, or in a file of
    the user's choosing (`check --pins FILE`: the export, with no workspace in it)."""

    def __init__(self, home: str, workspace: str, file: str | None = None) -> None:
        self.workspace = os.path.realpath(workspace)
        key = hashlib.sha256(self.workspace.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self.path = Path(file) if file else pins_root(home) / f"{key}.json"
        self.exported = file is not None

    def load(self) -> dict[str, Pin]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            from .._errors import ConfigError

            raise ConfigError(f"pins file {self.path} unreadable: {exc}") from None
        # Pins of another workspace (a copied file, a hash collision) approve nothing here.
        if not self.exported and data.get("workspace") != self.workspace:
            return {}
        return {p["key"]: Pin.from_json(p) for p in data.get("hooks", [])}

    def save(self, pins: Mapping[str, Pin], export: bool = False) -> None:
        document: dict[str, Any] = {"format": FORMAT}
        if not export:
            document["workspace"] = self.workspace
        document["hooks"] = [pins[k].to_json() for k in sorted(pins)]
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".pins-")
        with os.fdopen(fd, "w") as f:
            json.dump(document, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)

    @contextlib.contextmanager
    def locked(self) -> Iterator[dict[str, Pin]]:
        """The pins, to change in the block: saved at its end, one writer at a time
        (several agents' hooks run at once)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            pins = self.load()
            before = dict(pins)
            yield pins
            if pins != before:
                self.save(pins, export=self.exported)


def file_bytes(record: Mapping[str, Any]) -> bytes | None:
    raw = record.get("bytes")
    return base64.b64decode(raw) if isinstance(raw, str) else None


def compare(pin: Pin, pinned: Mapping[str, Pin]) -> tuple[str, Pin | None]:
    """(status, the pin it is compared with): `approved` (same content and modes),
    `mode` (only a mode differs), `changed` (content or entry), `renamed` (the same
    content under another name), `new` (nothing like it approved)."""
    old = pinned.get(pin.key)
    if old is not None:
        now = pin.known(old)
        if old.digest != now.digest:
            return "changed", old
        return ("approved" if old.modes() == now.modes() else "mode"), old
    for other in pinned.values():
        same = (other.agent, other.event, other.entry.get("kind"), other.shape)
        if same == (pin.agent, pin.event, pin.entry.get("kind"), pin.known(other).shape):
            return "renamed", other
    return "new", None


def pairs(pins: Sequence[Pin]) -> dict[str, Pin]:
    return {p.key: p for p in pins}
