"""What a hook's environment holds, on every backend: nothing of the host's."""

from __future__ import annotations

from collections.abc import Mapping

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def hook_environment(extra: Mapping[str, str], home: str) -> dict[str, str]:
    """Nothing from the host: a fixed base, plus what the dialect asked for."""
    return {"HOME": home, "PATH": PATH, "LANG": "C.UTF-8", "TMPDIR": "/tmp", **extra}
