"""What the sandbox stopped, read from a hook's stderr and the allowlist proxy's refusals.

A hook that worked unsandboxed and fails inside usually hit one of the sandbox's walls:
a write to the read-only workspace or image, the missing network, a tool the image does
not have. Real hooks often answer such a wall with a decision rather than a failure
(exit 0 with `cancel: true`, uv's exit 2 that Claude Code reads as a block), so what
was stopped is named whatever the hook answered: `sandboxStopped` in each hook's report
(a short phrase, `STOPPED`) and a sentence on `exec`'s stderr. A hint only: it never
changes a decision, an exit code or stdout.

Limits (docs/commands.md, `sandboxStopped`): the stderr patterns are the usual tools' words
(glibc, curl, Python, node, git, uv, pip, wget) in English, read in the last 8 KiB;
a hook that prints them itself is believed (its own report is its to write anyway),
except that a pattern the event itself contains (a logger echoing a tool's output) is
ignored. "Connection refused" and "Permission denied" are not walls: on loopback and on
files they are a hook's own business as often as the sandbox's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .mounts import HOME_FOLDERS, sandbox_home

TAIL = 8192  # the bytes of stderr read: the end, where the error that stopped it is

# The vocabulary of `sandboxStopped` (besides "refused host H, ..." from the proxy).
READ_ONLY = "read-only workspace write"
HOME_WRITE = "home write"
NETWORK = "network connection"
STOPPED = (READ_ONLY, HOME_WRITE, NETWORK, "refused host ...")

_READ_ONLY_WORDS = (b"Read-only file system",)  # EROFS, in every libc's and tool's words
_NETWORK_WORDS = (
    b"Network is unreachable",  # ENETUNREACH: no route (network none)
    b"connect ENETUNREACH",  # node
    b"Temporary failure in name resolution",  # EAI_AGAIN: curl, Python, pip, uv
    b"Could not resolve host",  # curl, git
    b"Name or service not known",  # EAI_NONAME
    b"getaddrinfo ENOTFOUND",  # node, npm
    b"getaddrinfo EAI_AGAIN",
    b"unable to resolve host address",  # wget
)
_MISSING_WORDS = (b": command not found", b": not found", b"No such file or directory")


@dataclass(frozen=True, slots=True)
class Hint:
    """What the sandbox stopped (`sandboxStopped`, None if nothing shows it) and the
    sentence that says why and what to do (None if there is nothing to say)."""

    stopped: str | None = None
    sentence: str | None = None


def hint(
    stderr: bytes,
    *,
    failed: bool,
    refused: tuple[str, ...] = (),
    network: str = "none",
    event: bytes = b"",
) -> Hint:
    """The hint for one hook's run. `failed`: the hook failed (exit code not 0), so a
    missing tool or file is worth a sentence too (never `sandboxStopped`: nothing was
    stopped). `network`: the settings' (`bridge` hooks have a network: its failures are
    not the sandbox's). `event`: what the hook read on stdin (see the module docstring)."""
    if refused:  # the proxy's own word: never a guess
        return Hint(f"refused host {', '.join(refused)}", refused_sentence(refused))
    tail = stderr[-TAIL:]
    if _home_write(tail):
        return Hint(HOME_WRITE, _HOME_SENTENCE)
    if _shows(tail, _READ_ONLY_WORDS, event):
        return Hint(READ_ONLY, _READ_ONLY_SENTENCE)
    if network != "bridge" and _shows(tail, _NETWORK_WORDS, event):
        sentence = _ALLOWLIST_SENTENCE if network == "allowlist" else _NETWORK_SENTENCE
        return Hint(NETWORK, sentence)
    if failed and _shows(tail, _MISSING_WORDS, event):
        return Hint(None, _MISSING_SENTENCE)
    return Hint()


def refused_sentence(hosts: tuple[str, ...]) -> str:
    """What the allowlist proxy refused a hook, in one sentence."""
    return (
        f"the sandbox's allowlist proxy refused {', '.join(hosts)}: it admits only the hosts"
        " in allow_domains, plain HTTP on port 80 and HTTPS (CONNECT) on 443"
        " (network allowlist in your config, or --allow-domain)"
    )


def _shows(tail: bytes, words: tuple[bytes, ...], event: bytes) -> bool:
    return any(w in tail and w not in event for w in words)


def _home_write(tail: bytes) -> bool:
    """Whether a line says a write straight in the home was refused (Landlock: EACCES)."""
    denied = [ln for ln in tail.splitlines() if b"Permission denied" in ln]
    if not denied:  # the usual run: no password-database look-up on the answer's path
        return False
    home = sandbox_home().encode("utf-8", "surrogateescape") + b"/"
    return any(home in ln for ln in denied)


_READ_ONLY_SENTENCE = (
    "the sandbox stopped a write: the workspace and the image are read-only"
    " (only /tmp and $HOME are writable, and are emptied after the run)"
)
_HOME_SENTENCE = (
    "the sandbox stopped a write straight in $HOME: while a workspace lies below"
    " your home, only /tmp and the home's tool and agent folders"
    f" ({', '.join('~/' + f for f in HOME_FOLDERS[:3] + HOME_FOLDERS[6:])}...)"
    " are writable, and are emptied after the run"
)
_NETWORK_SENTENCE = (
    "the sandbox stopped a network connection: hooks have no network"
    " unless you grant it (network in your config)"
)
_ALLOWLIST_SENTENCE = (
    "the sandbox stopped a network connection: an allowlist hook resolves no names and"
    " reaches only allow_domains, through the proxy in HTTP_PROXY/HTTPS_PROXY"
)
_MISSING_SENTENCE = (
    "something the hook needs is not in the sandbox: a tool missing from the image,"
    " or a file outside what is mounted"
)
