"""The backend the settings name, built by the one function every entry point calls (the
CLI's commands, `serve`, the public API's `make_backend`), so that choosing Kubernetes
over Docker is one setting (`backend`), never a code change. Only the chosen backend's
module is imported: the `kubernetes` client is an optional extra, and docker's import
costs the cold path ~150 ms."""

from __future__ import annotations

from .._errors import ConfigError
from .._settings import Settings
from .base import Backend


def make_backend(settings: Settings, *, warm: bool = False) -> Backend:
    """A backend for `settings`; `warm=True` for a long-lived owner (`serve`, a platform's
    process) that keeps pools of sandboxes started ahead of time."""
    if settings.backend == "kubernetes":
        try:
            import kubernetes  # noqa: F401  (the extra; the backend imports it for real)
        except ImportError:
            raise ConfigError(
                'backend = "kubernetes" needs the Kubernetes client:'
                " pip install 'sandboxrun[kubernetes]'"
            ) from None
        from .kubernetes.backend import KubernetesBackend

        return KubernetesBackend(settings, warm=warm)
    from .docker.backend import DockerBackend

    return DockerBackend(settings, warm=warm)
