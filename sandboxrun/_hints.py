"""What the sandbox stopped, read from a failed hook's stderr, in one sentence.

A hook that worked unsandboxed and fails inside usually hit one of the sandbox's walls:
a write to the read-only workspace or image, the missing network, a tool the image does
not have. Saying so in the hook's report turns a puzzling failure into a known limit.
"""

from __future__ import annotations

from ._mounts import HOME_FOLDERS, sandbox_home

# (what the tools print, what it means): the first match wins.
_WALLS: tuple[tuple[tuple[bytes, ...], str], ...] = (
    (
        (b"Read-only file system",),
        "the sandbox stopped a write: the workspace and the image are read-only"
        " (only /tmp and $HOME are writable, and are emptied after the run)",
    ),
    (
        (
            b"Network is unreachable",
            b"Temporary failure in name resolution",
            b"Could not resolve host",
            b"Name or service not known",
            b"getaddrinfo ENOTFOUND",
            b"getaddrinfo EAI_AGAIN",
        ),
        "the sandbox stopped a network connection: hooks have no network"
        " unless you grant it (network in your config)",
    ),
    (
        (b": command not found", b": not found", b"No such file or directory"),
        "something the hook needs is not in the sandbox: a tool missing from the image,"
        " or a file outside what is mounted",
    ),
)


def sandbox_wall(stderr: bytes) -> str | None:
    """The sentence for the first wall a failed hook's stderr shows, or None."""
    tail = stderr[-8192:]
    if _home_write(tail):
        return (
            "the sandbox stopped a write straight in $HOME: while a workspace lies below"
            " your home, only /tmp and the home's tool and agent folders"
            f" ({', '.join('~/' + f for f in HOME_FOLDERS[:3] + HOME_FOLDERS[6:])}...)"
            " are writable, and are emptied after the run"
        )
    for needles, sentence in _WALLS:
        if any(n in tail for n in needles):
            return sentence
    return None


def _home_write(tail: bytes) -> bool:
    """Whether a line says a write straight in the home was refused (Landlock: EACCES)."""
    home = sandbox_home().encode("utf-8", "surrogateescape") + b"/"
    return any(b"Permission denied" in ln and home in ln for ln in tail.splitlines())


def refused_sentence(hosts: tuple[str, ...]) -> str:
    """What the allowlist proxy refused a hook, in one sentence."""
    return (
        f"the sandbox's allowlist proxy refused {', '.join(hosts)}: not in allow_domains"
        " (network allowlist in your config, or --allow-domain)"
    )
