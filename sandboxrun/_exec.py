"""`sandboxrun exec`: one hook command, sandboxed, with byte-for-byte pass-through.

For agents whose hooks are shell commands (Claude Code, Qoder, Codex...): a settings
entry `"command": "./hooks/guard.sh"` becomes `"command": "sandboxrun exec --
./hooks/guard.sh"` and behaves the same, only confined. stdin goes in unchanged;
stdout, stderr and the exit code come back unchanged (2 stays 2).

When the sandbox, not the hook, ends the run (deadline, out of memory, output cap,
engine failure, a hook it could not start, an interpreter or script the sandbox lacks
(`_preflight`); under fail-closed also exit 126/127, a command that could not be run
or found), the agent gets a non-blocking error: exit 1 and one line on stderr. With
fail-closed it gets a block in its own terms instead: exit 2 with the reason on stderr
for the claude family, `{"cancel": true, ...}` on stdout for Cline's.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ._backend import Backend
from ._claude import ClaudeDialect
from ._claude_settings import project_root
from ._cline import ClineDialect
from ._dialect import sandbox_ending, unique_mounts
from ._errors import ConfigError, EngineError, RuntimeMissing
from ._mounts import check_root, hook_mount, mountable_file
from ._preflight import image_tools_of, missing
from ._runner import DIALECTS
from ._settings import Settings, account_home
from ._types import ExecRequest, ExecResult


@dataclass(frozen=True, slots=True)
class ExecOutput:
    """What `sandboxrun exec` hands back to the agent."""

    stdout: bytes
    stderr: bytes
    exit_code: int


def exec_request(
    settings: Settings, command: Sequence[str], stdin: bytes, workspace: str | None
) -> ExecRequest:
    """The sandboxed run of `command` in the workspace (given, else the project the
    current directory belongs to: the agent starts its hooks there).

    Not the agent's project-dir variable: a repository can set the environment of
    the hooks an agent starts, and the workspace decides what is mounted. Inside,
    the variable names the workspace actually mounted.
    """
    if not command:
        raise ConfigError("exec needs a command: sandboxrun exec [OPTIONS] -- COMMAND [ARG...]")
    dialect = DIALECTS[settings.agent]
    var = dialect.project_dir_var
    cwd = os.getcwd()
    found = cwd
    if isinstance(dialect, ClaudeDialect):  # a session in a subfolder: the whole project
        found = project_root(cwd, account_home(), dialect.project_dir)
    root = check_root(workspace or found, settings.allowed_roots)
    # One argument is a shell string, as the agent itself would run it; several are argv.
    argv = ("/bin/sh", "-c", command[0]) if len(command) == 1 else tuple(command)
    inside = Path(cwd).is_relative_to(root)
    return ExecRequest(
        argv=argv,
        stdin=stdin,
        workdir=cwd if inside else root,  # where the agent started the hook, if mounted
        mounts=unique_mounts([root, *_files_named(command, root)]),
        env={var: root} if var else {},
        timeout=settings.timeout or dialect.default_timeout,
        label=" ".join(command)[:200],
    )


def _files_named(command: Sequence[str], root: str) -> list[str]:
    """What to mount for the files a command names by absolute path outside the
    workspace (`~/.claude/hooks/g.sh`, `python3 /opt/hooks/g.py`): each one's folder,
    or the file alone where its folder is a system folder or the home (`_mounts`)."""
    words: list[str] = []
    for part in command:
        try:
            words += shlex.split(part) if len(command) == 1 else [part]
        except ValueError:  # an unbalanced quote: the shell will say so inside
            words += part.split()
    inside = os.path.realpath(root) + os.sep
    return [
        hook_mount(os.path.abspath(word))
        for word in words
        if os.path.isabs(word)
        and os.path.isfile(word)
        and mountable_file(word)
        and not os.path.realpath(word).startswith(inside)
    ]


def run_exec(settings: Settings, backend: Backend, request: ExecRequest) -> ExecOutput:
    """Run once; pass the hook's bytes through, or say why the sandbox ended it. A
    missing runtime always blocks; other engine failures block under fail-closed."""
    try:
        backend.check()
        tools = image_tools_of(backend)
        r = request
        why = missing(r.argv, r.workdir, r.mounts, r.env, tools) if tools else None
        if why is not None:  # it would exit 127 inside: a sandbox failure, never an allow
            return sandbox_failure(settings, f"the hook cannot start: {why}")
        result = backend.run(request)
    except EngineError as exc:
        if isinstance(exc, RuntimeMissing):
            settings = settings.model_copy(update={"fail_closed": True})
        return sandbox_failure(settings, f"the sandbox could not run the hook: {exc}")
    ended = sandbox_ending(result, request.timeout)
    if ended:
        return sandbox_failure(settings, f"hook {ended[1]}", result)
    if settings.fail_closed and result.exit_code in (126, 127):
        # The shell we wrap a command string in, or the hook's interpreter, says the
        # command could not be run or found: under fail-closed that is no answer, so block.
        why = f"hook command could not be started (exit {result.exit_code})"
        return sandbox_failure(settings, why, result)
    stderr = result.stderr
    if result.output_truncated:  # rare: hook answers are small; say so rather than hide it
        kept = settings.stdout_tail
        stderr += f"sandboxrun: output was cut to its last {kept} bytes (stdout_tail)\n".encode()
    return ExecOutput(result.stdout, stderr, result.exit_code or 0)


def sandbox_failure(settings: Settings, why: str, result: ExecResult | None = None) -> ExecOutput:
    """The agent's answer when the sandbox, not the hook, ended the run."""
    stderr = result.stderr if result else b""
    if not settings.fail_closed:
        return ExecOutput(b"", stderr + f"sandboxrun: {why}\n".encode(), 1)
    reason = f"sandboxrun (fail-closed): {why}"
    dialect = DIALECTS[settings.agent]
    if isinstance(dialect, ClineDialect):  # Cline's family answers on stdout, not by exit code
        answer = dialect.blocked_answer(reason)
        return ExecOutput(json.dumps(answer).encode() + b"\n", stderr, 0)
    return ExecOutput(b"", stderr + reason.encode() + b"\n", 2)
