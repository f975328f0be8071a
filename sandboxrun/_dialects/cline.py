"""The Cline hook protocol (and Careti's): see reference/cline-hooks.md.

Pure functions over paths, bytes and dicts: no Docker, no threads. Careti is the
same dialect with other folders, so agent variants are data (`ClineDialect`).

Untrusted decisions: Cline's answer has no field that approves or widens anything
(`cancel` blocks, `contextModification` adds context, `errorMessage` explains a
cancel), so a workspace hook's answer is read whole, trusted or not.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._install.record import Record
from .._log import logger
from .._types import Discovery, ExecResult, HookOutcome, HookSpec, Skipped
from .base import (
    clean_answer,
    escape_name,
    event_bytes,
    outcome_fields,
    sandbox_ending,
    source_of,
    unique_mounts,
)
from .installed import moved_folder, read_shim

HOOK_NAMES = (
    "TaskStart",
    "TaskResume",
    "TaskCancel",
    "TaskComplete",
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "PreCompact",
    "Notification",
    "TaskError",  # Cline's SDK/CLI (reference: "Cline's newer SDK/CLI")
    "SessionShutdown",
)
# The extensions Cline's SDK accepts and the interpreter it runs each with, when the file
# has no shebang or no exec bit (reference: "the interpreter comes from the shebang or
# the extension, and no exec bit is needed there"). `.ts` needs a Node that strips types.
INTERPRETERS = {".sh": "bash", ".py": "python3", ".js": "node", ".ts": "node"}
# Accepted by the SDK on Windows only: named as a near-miss with its reason on Linux.
_WINDOWS_ONLY = {".ps1": "a PowerShell hook"}
CONTEXT_LIMIT = 50_000
TRUNCATION_NOTE = "\n\n[... context truncated due to size limit ...]"
# Cline's order of the common fields; the payload object comes last.
_BASE_FIELDS = (
    "clineVersion",
    "hookName",
    "timestamp",
    "taskId",
    "workspaceRoots",
    "userId",
    "model",
)


@dataclass(frozen=True, slots=True)
class ClineDialect:
    """Cline's HookFactory protocol; the folders vary per fork (each tuple in Cline's
    order: the SDK's folder first, then the legacy one the VS Code extension reads)."""

    agent: str
    global_dirs: tuple[str, ...]  # relative to $HOME
    workspace_dirs: tuple[str, ...]  # relative to each workspace root
    default_timeout: float = 30.0
    hook_names: tuple[str, ...] = HOOK_NAMES
    project_dir_var: str | None = None  # Cline hooks learn their roots from the event

    def event_workspaces(self, event: Mapping[str, Any]) -> list[str]:
        roots = event.get("workspaceRoots")
        return list(roots) if isinstance(roots, list) else []

    def matches(self, spec: HookSpec, event: Mapping[str, Any]) -> bool:
        return True  # Cline hooks have no matchers: the file name is the event

    def blocked_answer(self, reason: str) -> dict[str, Any]:
        return {"cancel": True, "contextModification": "", "errorMessage": reason}

    def wrapper_failure(self, reason: str, fail_closed: bool) -> tuple[bytes, bytes, int]:
        """Cline reads a hook's answer on stdout, not its exit code: the block is a
        cancel there; a non-zero exit without one is a failed hook, which blocks nothing."""
        if not fail_closed:
            return b"", f"sandboxrun: {reason}\n".encode(), 1
        answer = self.blocked_answer(f"sandboxrun (fail-closed): {reason}")
        return json.dumps(answer).encode() + b"\n", b"", 0

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        return stdout, None  # no field of Cline's answer approves or widens (docstring)

    # -- discovery ---------------------------------------------------------------

    def folders(
        self, workspaces: Sequence[str], home: str, explicit: Sequence[str] = ()
    ) -> list[tuple[str, str, str]]:
        """(folder, source, workdir) in Cline's order: the global folders first, then
        each root's folders (`.cline/hooks` before the legacy `.clinerules/hooks`). A
        folder reached twice (one a symlink to the other) is listed once.

        Explicit hook folders replace all of them: that is how a trusted global hook
        forwards events to sandboxrun without sandboxrun finding (and re-running) itself.
        """
        # No root: `install` only lists a folder's hooks, never runs them. The paths
        # given are absolute (`_answer.absolute_paths`): no current directory is read.
        primary = workspaces[0] if workspaces else home
        if explicit:
            # A folder inside a workspace holds the workspace's hooks, however it was named.
            return [
                (d, source_of(d, workspaces, "explicit"), primary)
                for d in map(os.path.normpath, explicit)
            ]
        scanned = [(os.path.join(home, d), "global", primary, home, d) for d in self.global_dirs]
        scanned += [
            (os.path.join(r, d), "workspace", r, r, d)
            for r in workspaces
            for d in self.workspace_dirs
        ]
        # `sandboxrun install` moved a folder's hooks aside (its shims are skipped below):
        # they are read in its place, so `run` runs what the agent ran before the install.
        found: list[tuple[str, str, str]] = []
        for path, source, workdir, base, d in scanned:
            found.append((path, source, workdir))
            if os.path.isdir(moved_folder(base, d)):
                found.append((moved_folder(base, d), source, workdir))
        seen: set[str] = set()
        unique = []
        for folder in found:
            real = os.path.realpath(folder[0])
            if real not in seen:
                seen.add(real)
                unique.append(folder)
        return unique

    def discover(
        self,
        hook_name: str | None,
        workspaces: Sequence[str],
        home: str,
        explicit: Sequence[str] = (),
    ) -> Discovery:
        """The hooks for `hook_name` (every hook name if None), and the near-misses."""
        hooks: list[HookSpec] = []
        skipped: list[Skipped] = []
        wanted = (hook_name,) if hook_name else HOOK_NAMES
        record = Record(home)  # a shim is a file install recorded writing there
        for folder, source, workdir in self.folders(workspaces, home, explicit):
            try:
                entries = sorted(os.listdir(folder))
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                why = f"cannot list folder: {exc.strerror}"
                skipped.append(Skipped(escape_name(folder), source, why))
                continue
            for entry in entries:
                path = os.path.join(folder, entry)
                name, reason = _classify(path, entry, wanted)
                if name is None:
                    continue
                if reason is None and (shim := read_shim(path, record)) is not None:
                    dirs = ", ".join(shim.hooks_dirs)
                    reason = f"a sandboxrun shim (install): it runs the hooks of {dirs}"
                if reason is not None:
                    skipped.append(Skipped(escape_name(path), source, reason))
                    continue
                hooks.append(
                    HookSpec(
                        hook_name=name,
                        name=escape_name(path),  # what reports show; argv has the path
                        source=source,
                        argv=hook_argv(path, entry),
                        workdir=workdir,
                        mounts=unique_mounts([*workspaces, folder]),
                    )
                )
        return Discovery(tuple(hooks), tuple(skipped))

    # -- input -------------------------------------------------------------------

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event as the hook reads it: base fields filled in, compact, no newline.
        Any JSON-loadable event gives bytes (`event_bytes`: lone surrogates escaped)."""
        base: dict[str, Any] = {
            "clineVersion": event.get("clineVersion"),
            "hookName": event.get("hookName") or hook_name,
            "timestamp": str(event.get("timestamp") or int(time.time() * 1000)),
            "taskId": event.get("taskId"),
            # The roots the hooks really get (mounted at these paths), not what was asked.
            "workspaceRoots": list(workspaces),
            "userId": event.get("userId"),
            "model": event.get("model"),
        }
        merged = {k: v for k, v in base.items() if v is not None}
        merged.update({k: v for k, v in event.items() if k not in _BASE_FIELDS})
        return event_bytes(merged)

    # -- output ------------------------------------------------------------------

    def interpret(
        self, spec: HookSpec, result: ExecResult, timeout: float, trust_workspace: bool = False
    ) -> HookOutcome:
        """Turn what the sandbox saw into Cline's reading of it (`trust_workspace` changes
        nothing: no Cline field approves or widens; see the module docstring)."""
        common = outcome_fields(spec, result)
        ended = sandbox_ending(result, timeout)
        if ended:
            return HookOutcome(status=ended[0], error=f"{spec.hook_name} hook {ended[1]}", **common)
        if result.exit_code != 0:
            # Cline does not parse the stdout of a failed hook, even valid JSON.
            error = f"{spec.hook_name} hook exited with code {result.exit_code}"
            return HookOutcome(status="failed", error=error, **common)
        answer, warning = parse_output(result.stdout.decode("utf-8", "replace"))
        return HookOutcome(status="completed", error=warning, answer=answer, **common)

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """Cline's combination, keeping every completed answer (see the reference)."""
        cancel = any(o.answer.get("cancel") is True for o in outcomes)
        contexts = [o.answer.get("contextModification", "").strip() for o in outcomes]
        errors = [o.answer.get("errorMessage", "").strip() for o in outcomes]
        if fail_closed:
            for o in outcomes:
                if o.status != "completed":
                    cancel = True
                    errors.append(f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}")
        return {
            "cancel": cancel,
            "contextModification": "\n\n".join(c for c in contexts if c),
            "errorMessage": "\n".join(e for e in errors if e),
        }


CLINE = ClineDialect(
    "cline", (".cline/hooks", "Documents/Cline/Hooks"), (".cline/hooks", ".clinerules/hooks")
)
# Careti's reference names only its own two folders: unchanged.
CARETI = ClineDialect("careti", ("Documents/.agents/hooks",), (".agents/hooks",))


def hook_argv(path: str, entry: str) -> tuple[str, ...]:
    """How Cline starts a hook file: an extensionless hook, or an executable one that
    starts with `#!`, through `/bin/sh -c '<path>'` (so the shebang picks the
    interpreter, as Cline spawns it); any other `.sh`/`.py`/`.js`/`.ts` file by the
    interpreter of its extension (`bash`, `python3`, `node`), no exec bit needed."""
    ext = os.path.splitext(entry)[1]
    if ext not in INTERPRETERS or (_executable(path) and _has_shebang(path)):
        return ("/bin/sh", "-c", shlex.quote(path))
    return (INTERPRETERS[ext], path)


def _executable(path: str) -> bool:
    try:
        return bool(os.stat(path).st_mode & 0o111)
    except OSError:
        return False


def _has_shebang(path: str) -> bool:
    """Whether a regular file starts with `#!` (opened without blocking: a FIFO swapped
    in after the check cannot stall discovery)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, 2) == b"#!"
    except OSError:
        return False
    finally:
        os.close(fd)


def _classify(path: str, entry: str, wanted: Sequence[str]) -> tuple[str | None, str | None]:
    """(hook name, None) for a hook; (name, reason) for a near-miss; (None, _) to ignore.

    A hook is the file named exactly after the hook (executable: without the exec bit it
    is a disabled hook), or that name with one of the SDK's extensions (`INTERPRETERS`;
    the exec bit is not needed there)."""
    stem, dot, ext = entry.partition(".")
    ext = dot + ext
    exact = stem if stem in wanted and (not ext or ext in INTERPRETERS) else None
    near = next((w for w in wanted if stem.lower() == w.lower()), None)
    if exact is None and near is None:
        return None, None
    try:
        st = os.stat(path)
    except OSError as exc:
        return near or exact, f"cannot stat: {exc.strerror} (a dangling symlink?)"
    if exact is None:
        assert near is not None
        if stem != near:
            return near, f"name differs in case: the hook must be named exactly {near}"
        if ext in _WINDOWS_ONLY:
            return near, f"{_WINDOWS_ONLY[ext]} ({near}{ext}): no PowerShell in the sandbox"
        known = ", ".join(INTERPRETERS)
        return near, f"extension {ext} is not one Cline runs: {near} alone, or with {known}"
    if stat.S_ISDIR(st.st_mode):
        return exact, "is a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return exact, "is not a regular file"
    if not ext and not st.st_mode & 0o111:
        return exact, "not executable: a disabled hook (chmod +x to enable)"
    return exact, None


def parse_output(stdout: str) -> tuple[dict[str, Any], str | None]:
    """A completed hook's stdout -> (validated answer, warning or None)."""
    text = stdout.replace("\r\n", "\n")
    if not text.strip():
        return {"cancel": False}, None
    try:
        data: Any = clean_answer(json.loads(text))
    except (ValueError, RecursionError):
        data = _last_json_object(text)
        if data is None:
            logger.warning("hook printed no JSON object; treated as cancel=false")
            return {"cancel": False}, "no JSON object in stdout; treated as cancel=false"
    if not isinstance(data, dict):
        return {"cancel": False}, "stdout JSON is not an object; treated as cancel=false"
    return _validate(data)


def _last_json_object(text: str) -> Any:
    """Cline's fallback: the last line with `}`, upward until the braces balance."""
    lines = text.split("\n")
    end = next((i for i in range(len(lines) - 1, -1, -1) if "}" in lines[i]), None)
    if end is None:
        return None
    depth = 0
    for start in range(end, -1, -1):
        depth += lines[start].count("}") - lines[start].count("{")
        if depth <= 0 and "{" in lines[start]:
            chunk = [lines[start][lines[start].index("{") :], *lines[start + 1 : end + 1]]
            try:
                return clean_answer(json.loads("\n".join(chunk)))
            except (ValueError, RecursionError):
                return None
    return None


def _validate(data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    if "shouldContinue" in data:
        return {"cancel": False}, "invalid output: legacy field shouldContinue; ignored"
    answer: dict[str, Any] = {}
    fields = (
        ("cancel", ("cancel",), bool),
        ("contextModification", ("contextModification", "context_modification"), str),
        ("errorMessage", ("errorMessage", "error_message"), str),
    )
    for key, spellings, kind in fields:
        for spelling in spellings:
            if spelling in data:
                if not isinstance(data[spelling], kind):
                    msg = f"invalid output: {spelling} must be a {kind.__name__}; ignored"
                    return {"cancel": False}, msg
                answer[key] = data[spelling]
                break
    answer.setdefault("cancel", False)
    context = answer.get("contextModification")
    if context is not None and len(context) > CONTEXT_LIMIT:
        answer["contextModification"] = context[:CONTEXT_LIMIT] + TRUNCATION_NOTE
    return answer, None
