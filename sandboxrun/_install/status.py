"""What `list` and `doctor` say about an installed workspace: a hook that runs
unsandboxed although sandboxrun was installed for it (a pull brought it), a moved hook
without a shim, a wrapper or shim that cannot work or that the workspace chose. Each
agent's install module says it (`notes`, with `unwrapped.py`'s sentences); for an agent
install does not support yet, each hook not wrapped by hand (`hand_wrapper`)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from itertools import product

from .._dialects.base import WORKSPACE_SOURCES
from .._dialects.registry import DIALECTS
from . import command as _command
from .registry import installer


def notes(agent: str, roots: Sequence[str], home: str) -> list[str]:
    """One sentence per hook that runs unsandboxed although sandboxrun was installed
    for it (e.g. a pull brought it), and per installed hook that cannot work: the
    agent's install module says (`registry`). For an agent install does not support
    yet, one per hook the agent runs unwrapped."""
    module = installer(agent)
    if module is None:
        return _unwrapped_notes(agent, roots, home)
    return module.notes(DIALECTS[agent], roots, home)


def hand_wrapper(agent: str, command: str, untrusted: bool) -> str:
    """The one form a hand-wrapped hook command counts as sandboxed in, for an agent
    `install` does not support yet: this sandboxrun started isolated, by absolute paths
    (`command.launcher`'s `PYTHON -I SCRIPT`: a PATH or PYTHONPATH an agent's
    environment sets chooses nothing), `--untrusted` for a repository's hook, and the
    original as ONE single-quoted argument, so the agent's shell runs nothing of it."""
    return _hand_wrapper(_command.hook_script(), agent, command, untrusted)


def _hand_wrapper(script: str, agent: str, command: str, untrusted: bool) -> str:
    head = [_command._python_of(script), "-I", script, "exec", "--agent", agent]
    return shlex.join([*head, *(["--untrusted"] if untrusted else []), "--", command])


def _hand_wrapped(name: str, agent: str, workspace: bool) -> bool:
    """Whether `name` is exactly `hand_wrapper`'s form (`--fail-closed` may follow the
    agent; a user's own hook may leave `--untrusted` out); anything else, a look-alike
    with `$(...)`, a redirection or another sandboxrun included, is not."""
    try:
        words = shlex.split(name)
    except ValueError:
        return False
    if shlex.join(words) != name:  # only that quoting: the shell expands nothing of it
        return False
    scripts = {_command.hook_script(), _command.executable()}  # and what `list` printed before
    for script, untrusted in product(scripts, (True, False) if not workspace else (True,)):
        form = shlex.split(_hand_wrapper(script, agent, "x", untrusted))[:-1]
        for options in ([], ["--fail-closed"]):
            head = form[:-1] + options + form[-1:]  # options before the `--`
            if len(words) == len(head) + 1 and words[: len(head)] == head:
                return True
    return False


def _unwrapped_notes(agent: str, roots: Sequence[str], home: str) -> list[str]:
    """Each hook the agent runs itself, on the host: every one whose command is not
    exactly a hand wrapper (`hand_wrapper`), with the line to write instead."""
    found = DIALECTS[agent].discover(None, list(roots) or [os.getcwd()], home).hooks
    return [
        f"{agent} runs this hook unsandboxed (install does not support {agent} yet): "
        f"{h.hook_name} ({h.source}) {h.name}; sandboxed it is: "
        + hand_wrapper(agent, h.name, h.source in WORKSPACE_SOURCES)
        for h in found
        if not _hand_wrapped(h.name, agent, h.source in WORKSPACE_SOURCES)
    ]
