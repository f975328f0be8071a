"""The Cline hook protocol (and Careti's): see reference/cline-hooks.md.

Pure functions over paths, bytes and dicts: no Docker, no threads. Careti is the
same dialect with other folders, so agent variants are data (`ClineDialect`).

Two engines run hook files, both read from cline/cline@21cb8d2525bcedf1f4b6890b27a74a14fe7451e4.
Which one finds and starts them is the user's `cline_variant` (`variant`); which one reads
their answers is the one that sent the event, known by its name (`for_event`):

- `vscode`, the VS Code extension (apps/vscode/src/core/hooks/): the hook names as
  events; the last JSON object of a hook that exited 0 (`parse_output`); `cancel`,
  `contextModification`, `errorMessage`. No field approves or widens anything, so a
  workspace hook's answer is read whole, trusted or not.
- `sdk`, the SDK and CLI (sdk/packages/core/src/hooks/hook-file-config.ts,
  hook-file-hooks.ts, subprocess-runner.ts; sdk/packages/shared/src/hooks/events.ts):
  the discovery below, its own event names (`tool_call` runs the PreToolUse files:
  `cline_sdk.EVENT_FILES`), an ISO `timestamp`, and its own reading of the answer
  (`cline_sdk`): whatever the exit code, `context`/`contextModification`, `cancel`,
  `errorMessage`, and `overrideInput`, a rewrite of the tool's input that a workspace
  hook loses unless `trust_workspace_decisions` (as a Claude project hook's
  `updatedInput`). Only PreToolUse and PostToolUse answers are read.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from .._errors import ConfigError
from .._log import logger
from .._types import Discovery, ExecResult, HookOutcome, HookSpec, Skipped
from .._wrapped import Record
from . import cline_sdk as sdk
from .base import (
    SH,
    AgentReply,
    ExecPlace,
    caller_folder,
    clean_answer,
    escape_name,
    event_bytes,
    json_line,
    lines,
    named_event,
    never_sequential,
    no_deadline,
    no_event_env,
    no_hook_dir,
    no_loop_limit,
    no_pinned_project,
    no_plugin,
    no_transcript,
    outcome_fields,
    own_failure,
    own_project_var,
    same_input,
    sandbox_ending,
    shell_command,
    source_of,
    stderr_is_shown,
    stderr_unchanged,
    unique_mounts,
)
from .files import DANGLING, unreadable
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
Variant = Literal["sdk", "vscode"]
# The VS Code extension: VALID_HOOK_TYPES (apps/vscode/src/core/hooks/utils.ts@21cb8d25).
VSCODE_NAMES = HOOK_NAMES[:9]
# The SDK/CLI: HookConfigFileName (sdk/packages/core/src/hooks/hook-file-config.ts@21cb8d25).
# PreCompact is a name there but maps to no event (HOOK_CONFIG_FILE_EVENT_MAP): never run.
SDK_NAMES = tuple(n for n in HOOK_NAMES if n not in ("Notification", "PreCompact"))
_SDK_NOT_RUN = {
    "PreCompact": "Cline's SDK/CLI maps PreCompact to no event and never runs it",
    "Notification": 'a hook of Cline\'s VS Code extension only (cline_variant = "vscode"):'
    " the SDK/CLI does not run it",
}
# SUPPORTED_HOOK_FILE_EXTENSIONS ("" too); `.ps1` and `.ts` are run by interpreters the
# image may lack (pwsh, bun): `_sandbox.preflight` names what is missing, the hook never silently
# stops (a `not run` error, a block under fail-closed).
SDK_EXTENSIONS = (".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".py",
                  ".ps1")  # fmt: skip
# inferHookCommand (hook-file-hooks.ts@21cb8d25), for a file without a shebang.
_BY_EXTENSION = {
    **dict.fromkeys((".sh", ".bash", ".zsh"), ("bash",)),
    **dict.fromkeys((".js", ".mjs", ".cjs"), ("node",)),
    **dict.fromkeys((".ts", ".mts", ".cts"), ("bun", "run")),
    ".py": ("python3",),
    ".ps1": ("pwsh", "-File"),
}
# What JavaScript's String.prototype.trim strips (the SDK trims a file's name).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(
    map(chr, range(0x2000, 0x200B))
)
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
    """Cline's hook protocol; the folders vary per fork, the discovery per `variant`:

    - `sdk` (Cline's SDK and CLI, `cline_variant = "sdk"`, the default): every regular
      file (not a symlink) of the folders whose name, trimmed and in any case, is a hook
      name, bare or with one of `SDK_EXTENSIONS`; no exec bit needed; every such file
      runs, in the order of their paths, started as `sdk_argv` says.
    - `vscode` (the VS Code extension's HookFactory; Careti): the executable file named
      exactly after the hook, no extension, started through `/bin/sh -c`.
    """

    agent: str
    global_dirs: tuple[str, ...]  # relative to $HOME
    workspace_dirs: tuple[str, ...]  # relative to each workspace root
    default_timeout: float = 30.0
    hook_names: tuple[str, ...] = HOOK_NAMES
    project_dir_var: str | None = None  # Cline hooks learn their roots from the event
    variant: Variant = "sdk"
    # Whose reading of the hooks' answers (`for_event`); None: the variant's.
    read_as: Variant | None = None

    may_add_to_stderr = staticmethod(stderr_is_shown)  # (`Dialect.may_add_to_stderr`)
    # Both engines name the workspace in every event (`workspaceRoots`), and the CLI may
    # start a hook from a daemon whose folder and environment are another run's: a hook
    # of Cline's (an installed shim) takes its roots from the event alone
    # (`_runner.reply.Caller.agent_hook`).
    roots_in_event = True
    shell = SH
    project_vars = property(own_project_var)
    exec_command = shell_command
    event_env = staticmethod(no_event_env)
    exec_plugin = staticmethod(no_plugin)
    agent_deadline = staticmethod(no_deadline)
    max_input = None
    failure_dialect = own_failure
    untrusted_stderr = staticmethod(stderr_unchanged)
    transcript = staticmethod(no_transcript)
    transcript_for_repository = True
    session_field = None
    name_field = "hookName"  # (`event_name`)
    env_file_dir = None
    next_input = staticmethod(same_input)
    pinned_project = staticmethod(no_pinned_project)
    default_loop_limit = staticmethod(no_loop_limit)
    message_field = None
    transcript_format = None

    def exec_place(self, event: Mapping[str, Any], cwd: str, home: str, given: bool) -> ExecPlace:
        """Its hooks may start in another run's folder (the CLI's hub daemon), so unless
        `--workspace` names one, the event's primary root, never the caller's folder, is
        the workspace, and the hook starts there, as Cline starts its hooks."""
        if given:
            return caller_folder(event, cwd, home, given)
        roots = self.event_workspaces(event)
        if not roots or not isinstance(roots[0], str) or not os.path.isabs(roots[0]):
            raise ConfigError("no workspace: the event names no absolute workspaceRoots"
                              " (--workspace names one)")  # fmt: skip
        return ExecPlace(roots[0], roots[0])

    def hook_places(self, home: str) -> list[str]:
        return [os.path.join(home, d) for d in self.global_dirs]

    def event_name(self, event: Mapping[str, Any]) -> str | None:
        """The event's name: Cline's `hookName`."""
        return named_event(event, "hookName")

    def tool_fields(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """The event's tool and tool call in the audit's terms (`tool_name`,
        `tool_use_id`): Cline names them in an object of the event's own, the CLI's
        `tool_call` / `tool_result` (`name`, `id`) or the extension's `preToolUse` /
        `postToolUse` (`toolName`; it names no call)."""
        for key in ("tool_call", "tool_result", "preToolUse", "postToolUse"):
            inner = event.get(key)
            if isinstance(inner, dict):
                return {"tool_name": inner.get("name", inner.get("toolName")),
                        "tool_use_id": inner.get("id")}  # fmt: skip
        return {}

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

    sequential = staticmethod(never_sequential)  # an event's hooks all start at once
    hook_dir_env = staticmethod(no_hook_dir)

    def agent_answer(
        self, event: str, answer: Mapping[str, Any], notes: Sequence[str]
    ) -> AgentReply:
        """`{"cancel", "contextModification", "errorMessage"}` (and the SDK's
        `overrideInput` when a user's hook rewrote the tool's input) on stdout, exit 0;
        what went wrong with a hook on stderr, which Cline shows the user."""
        fields = ("cancel", "contextModification", "errorMessage", "overrideInput")
        return json_line({k: answer[k] for k in fields if k in answer}), lines(notes), 0

    def untrusted_stdout(self, stdout: bytes, stdin: bytes = b"") -> tuple[bytes, str | None]:
        """The SDK's `overrideInput` dropped; the extension's answer has nothing to drop."""
        return sdk.untrusted_stdout(stdout) if self.variant == "sdk" else (stdout, None)

    def for_event(self, hook_name: str, event: Mapping[str, Any]) -> ClineDialect:
        """This dialect reading answers as the engine that sent the event reads them: the
        SDK names its events itself (`tool_call`...), the extension by the hook names
        (`PreToolUse`...), so the event's `hookName` (else the name it was run under)
        says which. Discovery stays the variant's (`cline_variant`)."""
        name = event.get("hookName") or hook_name
        reader: Variant = "sdk" if isinstance(name, str) and name in sdk.EVENT_FILES else "vscode"
        return self if reader == self.reader else replace(self, read_as=reader)

    @property
    def reader(self) -> Variant:
        return self.read_as or self.variant

    def hook_file(self, name: str) -> str:
        """The hook files an event name runs: the SDK's own names (`tool_call`...) mapped
        as the SDK maps them (`HOOK_CONFIG_FILE_EVENT_MAP`); a hook name is itself."""
        return sdk.EVENT_FILES.get(name, name) if self.variant == "sdk" else name

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
        # given are absolute (`_runner.reply.absolute_paths`): no current directory is read.
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
        skipped: list[Skipped] = []
        wanted = (self.hook_file(hook_name),) if hook_name else HOOK_NAMES
        record = Record(home)  # a shim is a file install recorded writing there
        found: list[tuple[str, HookSpec]] = []
        for folder, source, workdir in self.folders(workspaces, home, explicit):
            try:
                entries = sorted(os.listdir(folder))
            except (FileNotFoundError, NotADirectoryError):
                if os.path.islink(folder) and not os.path.exists(folder):
                    skipped.append(unreadable(escape_name(folder), source, DANGLING))
                continue
            except OSError as exc:
                why = f"cannot list folder: {exc.strerror}"
                skipped.append(unreadable(escape_name(folder), source, why))
                continue
            for entry in entries:
                path = os.path.join(folder, entry)
                classify = _classify_sdk if self.variant == "sdk" else _classify_vscode
                name, reason = classify(path, entry, wanted)
                if name is None:
                    continue
                if reason is None and (shim := read_shim(path, record)) is not None:
                    dirs = ", ".join(shim.hooks_dirs)
                    reason = f"a sandboxrun shim (install): it runs the hooks of {dirs}"
                if reason is not None:  # a near-miss the agent skips too, or a file it would
                    # run that cannot be read here (a dangling link): a lost hook
                    lost = reason.startswith(CANNOT_STAT)
                    skipped.append(Skipped(escape_name(path), source, reason, unreadable=lost))
                    continue
                argv = sdk_argv(path) if self.variant == "sdk" else vscode_argv(path)
                spec = HookSpec(
                    hook_name=name,
                    name=escape_name(path),  # what reports show; argv has the path
                    source=source,
                    argv=argv,
                    workdir=workdir,
                    mounts=unique_mounts([*workspaces, folder]),
                )
                found.append((path, spec))
        if self.variant == "sdk":  # listHookConfigFiles: sorted by path (localeCompare)
            found.sort(key=lambda item: _locale_key(item[0]))
        hooks = [spec for _path, spec in found]
        return Discovery(tuple(hooks), tuple(skipped))

    # -- input -------------------------------------------------------------------

    def prepare_input(
        self, hook_name: str, event: Mapping[str, Any], workspaces: Sequence[str]
    ) -> bytes:
        """The event as the hook reads it: base fields filled in (`hookName` as the caller
        named the event: `tool_call` stays the SDK's), compact, no newline. Any
        JSON-loadable event gives bytes (`event_bytes`: lone surrogates escaped)."""
        name = event.get("hookName") or hook_name
        # The SDK stamps its events in ISO time, the extension in milliseconds.
        now = sdk.iso_now() if name in sdk.EVENT_FILES else str(int(time.time() * 1000))
        base: dict[str, Any] = {
            "clineVersion": event.get("clineVersion"),
            "hookName": name,
            "timestamp": str(event.get("timestamp") or now),
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
        """Turn what the sandbox saw into the reading of the Cline that sent the event
        (`for_event`; the SDK's: `cline_sdk.read`, where `trust_workspace` keeps a
        workspace hook's `overrideInput`)."""
        common = outcome_fields(spec, result)
        ended = sandbox_ending(result, timeout)
        if ended:
            return HookOutcome(status=ended[0], error=f"{spec.hook_name} hook {ended[1]}", **common)
        if self.reader == "sdk":
            return sdk.read(spec, result, trust_workspace, common)
        if result.exit_code != 0:
            # Cline does not parse the stdout of a failed hook, even valid JSON.
            error = f"{spec.hook_name} hook exited with code {result.exit_code}"
            return HookOutcome(status="failed", error=error, **common)
        answer, warning = parse_output(result.stdout.decode("utf-8", "replace"))
        return HookOutcome(status="completed", error=warning, answer=answer, **common)

    def combine(self, outcomes: Sequence[HookOutcome], fail_closed: bool) -> dict[str, Any]:
        """Cline's combination, keeping every completed answer (see the reference; the
        SDK's: `cline_sdk.combine`)."""
        failures = [
            f"sandboxrun: hook {o.spec.name} {o.status}: {o.error}"
            for o in outcomes
            if fail_closed and o.status != "completed"
        ]
        if self.reader == "sdk":
            answers = [o.answer for o in outcomes if o.answer]  # a failed hook's too
            return sdk.combine(outcomes[0].spec.hook_name if outcomes else "", answers, failures)
        cancel = bool(failures) or any(o.answer.get("cancel") is True for o in outcomes)
        contexts = [o.answer.get("contextModification", "").strip() for o in outcomes]
        errors = [o.answer.get("errorMessage", "").strip() for o in outcomes] + failures
        return {
            "cancel": cancel,
            "contextModification": "\n\n".join(c for c in contexts if c),
            "errorMessage": "\n".join(e for e in errors if e),
        }


# resolveHooksConfigSearchPaths (sdk/packages/shared/src/storage/paths.ts@21cb8d25): the
# Documents folder, then ~/.cline/hooks ($CLINE_DIR is an environment variable: not read,
# as for every setting); per root the deprecated .clinerules/hooks, then .cline/hooks.
# The SDK gives its blocking (tool) hooks 120 s (DEFAULT_TOOL_HOOK_TIMEOUT_MS,
# sdk/packages/core/src/hooks/subprocess.ts@21cb8d25) and runs the others detached, whose
# answers decide nothing: a slow guard keeps its full time, as in Cline.
CLINE = ClineDialect(
    "cline", ("Documents/Cline/Hooks", ".cline/hooks"), (".clinerules/hooks", ".cline/hooks"),
    hook_names=(*HOOK_NAMES, *sdk.EVENT_NAMES), default_timeout=120.0,
)  # fmt: skip
# getAllHooksDirs (apps/vscode/src/core/storage/disk.ts@21cb8d25): the global folder,
# then each root's .clinerules/hooks (and a --hooks-dir: `explicit`).
CLINE_VSCODE = ClineDialect(
    "cline", ("Documents/Cline/Hooks",), (".clinerules/hooks",), variant="vscode"
)
# Careti (a fork of the extension): its reference names only its own two folders.
CARETI = ClineDialect("careti", ("Documents/.agents/hooks",), (".agents/hooks",), variant="vscode")


def every_variant(dialect: ClineDialect) -> tuple[ClineDialect, ...]:
    """The variants of the agent whose hooks `install` shims: for Cline both (the user's
    `cline_variant` may change after install), for a fork its own."""
    return (CLINE, CLINE_VSCODE) if dialect.agent == "cline" else (dialect,)


def vscode_argv(path: str) -> tuple[str, ...]:
    """The VS Code extension starts a hook through `/bin/sh -c '<path>'`: its shebang
    picks the interpreter."""
    return ("/bin/sh", "-c", shlex.quote(path))


def sdk_argv(path: str) -> tuple[str, ...]:
    """inferHookCommand (hook-file-hooks.ts@21cb8d25), spawned without a shell: the
    shebang's words (`env` dropped, `bash`/`sh`/`zsh`/`python3`/`python` by bare name,
    anything else as written), else the extension's interpreter (`_BY_EXTENSION`), else
    `bash`. The words are the hook's own: an interpreter the image lacks (bun, pwsh, zsh,
    or `-S` from `env -S`, which Cline cannot start either) is `_sandbox.preflight`'s `not run`."""
    words = _shebang_words(path)
    if words:
        return (*(_normalize(words) or words), path)
    ext = os.path.splitext(path)[1].lower()
    return (*_BY_EXTENSION.get(ext, ("bash",)), path)


def _normalize(words: list[str]) -> list[str] | None:
    """normalizeHookInterpreter: strips `env` (repeatedly; a bare `env`: None, and the
    caller keeps the shebang as written); names the shells and Python by their bare
    names; keeps anything else."""
    if not words:
        return None
    program = words[0].replace("\\", "/").lower().split("/")[-1]
    if program == "env":
        return _normalize(words[1:])
    if program in ("bash", "sh", "zsh", "python3", "python"):
        return [program, *words[1:]]
    return words


def _shebang_words(path: str) -> list[str]:
    """The words after `#!` on the first line (the SDK reads the whole file as UTF-8,
    splits on \\r?\\n, trims); read here from a regular file only, without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        head = os.read(fd, SHEBANG_MAX)
    except OSError:
        return []
    finally:
        os.close(fd)
    line = head.decode("utf-8", "replace").split("\n", 1)[0].strip(_JS_SPACE)
    return line[2:].split() if line.startswith("#!") else []


SHEBANG_MAX = 4096  # a first line longer than this is cut (Cline reads it whole)


def _locale_key(path: str) -> tuple[str, str]:
    """An approximation of JavaScript's `localeCompare` order (case folded first, then
    lower case before upper case)."""
    return (path.casefold(), path.swapcase())


def _sdk_name(root: str) -> str | None:
    """The hook name a file's name (its extension cut off) is to the SDK: trimmed and
    compared in lower case (`toHookConfigFileName`)."""
    key = root.strip(_JS_SPACE).lower()
    return next((n for n in HOOK_NAMES if n.lower() == key), None)


CANNOT_STAT = "cannot stat:"


def _file_kind(path: str, follow: bool) -> str | None:
    """Why `path` is not a regular file (None if it is)."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError as exc:
        return f"{CANNOT_STAT} {exc.strerror} (a dangling symlink?)"
    if stat.S_ISLNK(st.st_mode):
        return "a symlink: Cline's SDK/CLI runs regular files only (readdir's isFile)"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    return None


def _classify_sdk(path: str, entry: str, wanted: Sequence[str]) -> tuple[str | None, str | None]:
    """(hook name, None) for a hook the SDK runs; (name, reason) for a near-miss; (None, _)
    to ignore. Node's `extname` is `os.path.splitext`'s; `basename(file, ext.toLowerCase())`
    cuts the extension only when it is in lower case, so `PreToolUse.SH` matches nothing."""
    root, ext = os.path.splitext(entry)
    name = _sdk_name(root)
    if name is None or name not in wanted:
        return None, None
    if ext and ext.lower() not in SDK_EXTENSIONS:
        known = " ".join(SDK_EXTENSIONS)
        return name, f"extension {ext} is not one Cline's SDK/CLI runs: none, or {known}"
    if ext != ext.lower():
        return name, (
            f"extension {ext} in capitals: Cline's SDK/CLI then compares the whole name"
            f" {entry!r} with the hook names, and it matches none; use {ext.lower()}"
        )
    if name in _SDK_NOT_RUN:
        return name, _SDK_NOT_RUN[name]
    return name, _file_kind(path, follow=False)


def _classify_vscode(path: str, entry: str, wanted: Sequence[str]) -> tuple[str | None, str | None]:
    """(hook name, None) for a hook; (name, reason) for a near-miss; (None, _) to ignore.

    A hook is the file named exactly after the hook, executable (without the exec bit
    it is a disabled hook), symlinks followed (findUnixHook: fs.stat, X_OK)."""
    root, ext = os.path.splitext(entry)
    near = _sdk_name(root)
    exact = entry if entry in wanted and entry in VSCODE_NAMES else None
    if exact is None and (near is None or near not in wanted):
        return None, None
    if exact is None:
        assert near is not None
        if near not in VSCODE_NAMES:
            return near, f'{near} is a hook of Cline\'s SDK/CLI only (cline_variant = "sdk")'
        if root != near:
            return near, f"name differs in case: the hook must be named exactly {near}"
        sdk = ' (Cline\'s SDK/CLI would run it: cline_variant = "sdk")'
        sdk = sdk if ext.lower() in SDK_EXTENSIONS and ext == ext.lower() else ""
        return near, f"the VS Code extension runs only the file named {near}, no extension{sdk}"
    why = _file_kind(path, follow=True)
    if why is None and not os.stat(path).st_mode & 0o111:
        why = "not executable: a disabled hook (chmod +x to enable)"
    return exact, why


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
