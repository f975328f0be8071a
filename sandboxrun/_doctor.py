"""`sandboxrun doctor`: is this machine ready to run hooks sandboxed?"""

from __future__ import annotations

from ._docker import DockerBackend
from ._errors import SandboxrunError
from ._settings import Settings


def doctor(settings: Settings) -> int:
    """Print one pass/fail line per check; 0 if all pass, 1 otherwise."""
    lines: list[tuple[bool, str, str]] = []
    try:
        backend = DockerBackend(settings)
        version = backend.api.version()
        lines.append((True, "engine", f"Docker Engine {version.get('Version')} at "
                      f"{settings.docker_host or 'the default address'}"))
        info = backend.api.info()
        runtimes = ", ".join(sorted(info.get("Runtimes", {})))
        wanted = settings.runtime or f"{info.get('DefaultRuntime')} (engine default)"
        lines.append((True, "runtimes", f"available: {runtimes}; hooks use {wanted}"))
        try:
            backend.check()
            lines.append((True, "image", f"{settings.image} present"))
        except SandboxrunError as exc:
            lines.append((False, "image/runtime", str(exc)))
    except SandboxrunError as exc:
        lines.append((False, "engine", str(exc)))
    for ok, what, detail in lines:
        print(f"{'pass' if ok else 'FAIL'}  {what}: {detail}")
    return 0 if all(ok for ok, _, _ in lines) else 1
