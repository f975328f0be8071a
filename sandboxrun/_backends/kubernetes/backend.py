"""KubernetesBackend: one hardened Pod per hook invocation (being built: issue 12).

Until its runner lands, choosing `backend = "kubernetes"` fails before any hook runs,
with a one-line error, so a guard under fail-closed blocks rather than allows.
"""

from __future__ import annotations

from ..._errors import ConfigError
from ..._settings import Settings
from ..._types import ExecRequest, ExecResult
from ..image_tools import ImageTools

_NOT_YET = "the Kubernetes backend cannot run hooks yet in this version"


class KubernetesBackend:
    def __init__(self, settings: Settings, warm: bool = False) -> None:
        self.settings = settings
        self.warm = warm

    def check(self) -> None:
        raise ConfigError(_NOT_YET)

    def run(self, request: ExecRequest) -> ExecResult:
        raise ConfigError(_NOT_YET)

    def image_tools(self) -> ImageTools | None:
        return None

    def abort(self) -> None:
        return None

    def close(self) -> None:
        return None

    def __enter__(self) -> KubernetesBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
