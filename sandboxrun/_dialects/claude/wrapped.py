"""The wrapper `sandboxrun install` writes around a Claude-family hook command.

`install` turns `"command": "./hooks/guard.sh"` into `"command":
"/home/me/.local/share/sandboxrun/hook exec --agent claude --untrusted -- ./hooks/guard.sh"`
(an `args` handler: `"command": "/…/hook", "args": ["exec", …, "--", argv…]`): `hook` is
the launcher `install` writes in the user's data folder (`_wrapped.LAUNCHER`), one short
path in what Claude Code shows the model of a hook's command. It starts
`/…/bin/python3 -I /…/bin/sandboxrun-hook`, which the system's files (`--managed`),
read by every account, and an older install name themselves: `"'/…/bin/python3' -I
'/…/bin/sandboxrun-hook' exec …"` (older still, the script `/…/bin/sandboxrun`, the
same command). The launcher (`python -I script`) starts
sandboxrun's Python isolated: the agent starts hooks with the environment a
repository's settings `env` block sets (`PYTHONPATH` and a `sitecustomize.py`,
`PYTHONHOME`...), and `-I` makes Python ignore every `PYTHON*` variable, the user's
site folder and the current folder before any code of ours runs.

Which commands are such wrappers is decided by install's record (`_wrapped.Record`),
never by their shape: a repository can write any shape.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from ..._wrapped import READY


@dataclass(frozen=True, slots=True)
class Original:
    """The handler a wrapper runs: `command` (a shell string, or the program when
    `args` is not None) and `args`."""

    command: str
    args: tuple[str, ...] | None


def ready_test(launcher: Sequence[str]) -> str:
    """The shell test of the guards: whether `launcher` can start sandboxrun. The
    launcher file (one word) is asked (`hook --ready`); `python -I script`, both
    absolute, are looked at."""
    if len(launcher) == 1:
        return f"[ -x {shlex.quote(launcher[0])} ] && {shlex.quote(launcher[0])} {READY}"
    return f"[ -x {shlex.quote(launcher[0])} ] && [ -f {shlex.quote(launcher[-1])} ]"


def gone(launcher: Sequence[str]) -> str:
    """What the guards say when `ready_test` fails."""
    if len(launcher) == 1:
        return f"{launcher[0]} finds no sandboxrun (moved or uninstalled?)"
    return f"{launcher[-1]} is missing"


def missing_guard(launcher: Sequence[str]) -> str:
    """The prefix of a fail-closed wrapper: if sandboxrun is gone (moved, uninstalled),
    the hook blocks (exit 2, the reason on stderr) instead of failing with 127, which
    the agent would read as a non-blocking error: a guard that stopped guarding."""
    why = shlex.quote(f"sandboxrun (fail-closed): {gone(launcher)}")
    return f"{ready_test(launcher)} || {{ echo {why} >&2; exit 2; }}; "


def unguarded(command: str) -> str:
    """`command` without the `missing_guard` of its own launcher (exactly that one:
    the launcher file's, or `python -I script`'s)."""
    _, sep, rest = command.partition("; exit 2; }; ")
    try:
        words = shlex.split(rest) if sep else []
    except ValueError:
        return command
    guards = [missing_guard(words[:n]) for n in (1, 3) if len(words) >= n]
    return rest if command in [g + rest for g in guards] else command


def chosen_files(command: str, args: Sequence[str] | None) -> list[str]:
    """The files a recorded wrapper makes the agent trust: the Python and sandboxrun it
    starts and the config file it names (`list` checks none comes with the workspace)."""
    try:
        words = [command, *args] if args is not None else shlex.split(unguarded(command))
    except ValueError:
        return []
    head = words[: words.index("--")] if "--" in words else words
    verb = next((i for i, w in enumerate(head) if w in ("exec", "run")), len(head))
    config = [head[i + 1] for i in range(verb, len(head) - 1) if head[i] == "--config"]
    return [w for w in head[:verb] if not w.startswith("-")] + config


def wrap(
    launcher: Sequence[str], agent: str, command: str, args: Sequence[str] | None,
    shell: object, options: Sequence[str] = (),
) -> tuple[str, list[str] | None]:  # fmt: skip
    """(command, args) of the wrapper that runs this handler through `sandboxrun exec`
    in its whole-command form: the shell string is ONE argument, so pipes, redirections,
    `$(...)` and `${CLAUDE_PLUGIN_ROOT}` are the sandbox's shell's, not the agent's."""
    head = ["exec", "--agent", agent, *options, "--"]
    if args is not None:
        argv = [command, *args]
        tail = [shlex.quote(command)] if not args else argv
        return launcher[0], [*launcher[1:], *head, *tail]
    tail = ["bash", "-c", command] if shell == "bash" else [command]
    guard = missing_guard(launcher) if "--fail-closed" in options else ""
    return guard + shlex.join([*launcher, *head, *tail]), None
