"""Engine calls without an engine: retries of transient errors, translation of foreign
exceptions into our tree, and the rule that a hook is never re-run."""

from __future__ import annotations

import threading
from typing import Any
from unittest import mock

import docker.errors
import pytest
import requests

from sandboxrun import (
    DockerBackend,
    EngineError,
    EngineUnavailable,
    ExecRequest,
    ImageMissing,
    Settings,
)
from sandboxrun._backends.docker.engine import engine_errors, retry_engine


def flaky(failures: list[BaseException]) -> mock.Mock:
    """A callable that raises the given errors in turn, then returns "ok"."""
    return mock.Mock(side_effect=[*failures, "ok"])


def test_transient_errors_are_retried() -> None:
    """Dropped connections and 5xx answers are retried until the call succeeds."""
    server_error = docker.errors.APIError("boom", response=mock.Mock(status_code=500))
    call = flaky([requests.exceptions.ConnectionError(), server_error])
    assert retry_engine(call)() == "ok"
    assert call.call_count == 3


def test_client_errors_are_not_retried() -> None:
    """A 404 or 409 is an answer, not a hiccup: it is raised at once."""
    call = flaky([docker.errors.NotFound("gone")])
    with pytest.raises(docker.errors.NotFound):
        retry_engine(call)()
    assert call.call_count == 1


def test_retries_give_up() -> None:
    """An engine that keeps failing is reported after a few attempts."""
    call = mock.Mock(side_effect=requests.exceptions.ConnectionError("down"))
    with pytest.raises(requests.exceptions.ConnectionError):
        retry_engine(call)()
    assert call.call_count == 3


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (docker.errors.ImageNotFound("x"), ImageMissing),
        (docker.errors.APIError("x"), EngineError),
        (requests.exceptions.ConnectionError("x"), EngineUnavailable),
        (docker.errors.DockerException("x"), EngineUnavailable),
        (ConnectionResetError("x"), EngineError),
    ],
)
def test_foreign_errors_are_translated(raised: Exception, expected: type) -> None:
    """docker, requests and socket errors become one-line errors of our own tree."""
    with pytest.raises(expected) as info, engine_errors(image="img"):
        raise raised
    assert "\n" not in str(info.value)


def test_missing_image_says_how_to_build_it() -> None:
    """The one-line error for a missing image names the command that fixes it."""
    with pytest.raises(ImageMissing, match="sandboxrun images build"), engine_errors(image="i"):
        raise docker.errors.ImageNotFound("no such image")


def test_start_is_never_retried_and_the_container_is_removed(tmp_path: Any) -> None:
    """A start that failed may have run the hook: it is not retried, and cleanup happens."""
    client = mock.MagicMock()
    client.api.create_container.return_value = {"Id": "c1"}
    client.api.start.side_effect = requests.exceptions.ConnectionError("lost")
    backend = DockerBackend(Settings(), client=client)
    request = ExecRequest(argv=("true",), stdin=b"", workdir=str(tmp_path), mounts=(str(tmp_path),))
    with pytest.raises(EngineUnavailable):
        backend.run(request)
    assert client.api.start.call_count == 1
    backend.close()  # removal goes on after the run has ended: wait for it
    client.api.remove_container.assert_called_with("c1", force=True, v=True)


def test_removal_goes_on_after_the_run_and_close_waits_for_it(tmp_path: Any) -> None:
    """The run ends without waiting for its container's removal; until the removal is
    done the container counts as in flight (so `abort` would remove it); `close` waits."""
    release = threading.Event()
    client = mock.MagicMock()
    client.api.create_container.return_value = {"Id": "c1"}
    client.api.start.side_effect = requests.exceptions.ConnectionError("lost")
    client.api.remove_container.side_effect = lambda *a, **kw: release.wait(30)
    backend = DockerBackend(Settings(), client=client)
    request = ExecRequest(argv=("true",), stdin=b"", workdir=str(tmp_path), mounts=(str(tmp_path),))
    with pytest.raises(EngineUnavailable):
        backend.run(request)  # returns while the removal is held back
    assert backend._active == {"c1"}
    release.set()
    backend.close()
    client.api.remove_container.assert_called_with("c1", force=True, v=True)
    assert backend._active == set()


@pytest.mark.parametrize("writable", [True, False])
def test_no_network_disables_the_engine_network_only_with_our_hosts_file(
    tmp_path: Any, writable: bool
) -> None:
    """network "none": NetworkDisabled plus NetworkMode none, and a read-only /etc/hosts
    naming localhost (the engine writes none then); a cache folder that cannot be written
    falls back to NetworkMode none alone."""
    cache = tmp_path / "cache"
    if not writable:
        cache.write_text("a file, not a folder")
    client = mock.MagicMock()
    backend = DockerBackend(Settings(), client=client, cache_dir=str(cache))
    request = ExecRequest(argv=("true",), stdin=b"", workdir=str(tmp_path), mounts=(str(tmp_path),))
    config = backend._config(request, "name", None)
    host = client.api.create_host_config.call_args.kwargs
    assert host["network_mode"] == "none"
    hosts = [m for m in host["mounts"] if m["Target"] == "/etc/hosts"]
    assert config["network_disabled"] is writable
    if writable:
        assert hosts and hosts[0]["ReadOnly"] is True
        assert (cache / "hosts").read_text().startswith("127.0.0.1\tlocalhost\n")
        assert (cache / "hosts").stat().st_mode & 0o777 == 0o644
    else:
        assert hosts == []
