"""The one place that talks to the docker SDK's client and translates its errors.

`engine_errors()` maps docker/requests exceptions to our tree, so callers above
never see a foreign exception; `retry_engine` retries API calls that failed
transiently (a dropped connection, a 5xx). Never wrap anything that runs a
hook in it: a hook runs at most once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import docker
import docker.errors
import requests
from docker.utils.socket import SocketError
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from ..._errors import EngineError, EngineUnavailable, ImageMissing

T = TypeVar("T")
BUILD_HINT = "run `sandboxrun images build --offline` (or `sandboxrun images build`)"
ENGINE_HINT = (
    "start Docker (scripts/ensure-engine does it as root) or set docker_host in your config file"
)
DEFAULT_ADDRESS = "unix:///var/run/docker.sock"


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, requests.exceptions.ConnectionError | requests.exceptions.Timeout):
        return True
    if isinstance(exc, docker.errors.APIError) and not isinstance(exc, docker.errors.NotFound):
        return exc.status_code is not None and exc.status_code >= 500
    return False


def retry_engine(fn: Callable[..., T]) -> Callable[..., T]:
    """Retry an idempotent engine call a few times on transient errors."""
    wrapped: Callable[..., T] = retry(
        retry=retry_if_exception(_transient),
        stop=stop_after_attempt(3),
        wait=wait_exponential(multiplier=0.05, max=1.0),
        reraise=True,
    )(fn)
    return wrapped


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


@contextlib.contextmanager
def engine_errors(address: str | None = None, image: str | None = None) -> Iterator[None]:
    """Translate docker and requests exceptions into `EngineError`s with one-line hints."""
    try:
        yield
    except docker.errors.ImageNotFound:
        raise ImageMissing(f"image {image!r} not found: {BUILD_HINT}") from None
    except docker.errors.APIError as exc:
        raise EngineError(f"Docker Engine error: {_one_line(exc.explanation or exc)}") from None
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        where = address or DEFAULT_ADDRESS
        raise EngineUnavailable(
            f"no Docker Engine answers at {where}: {ENGINE_HINT} ({_one_line(exc)[:160]})"
        ) from None
    except (OSError, SocketError) as exc:  # the attach stream broke under us
        raise EngineError(f"lost the connection to the Docker Engine: {_one_line(exc)}") from None


def connect(address: str | None) -> Any:
    """A docker client for `address` (None: the local socket). Never `DOCKER_HOST`:
    a repository can set the environment of hook processes, and another engine
    could forge any answer (see `_settings`)."""
    with engine_errors(address):
        client = docker.DockerClient(base_url=address or DEFAULT_ADDRESS)
        retry_engine(client.ping)()
        return client
