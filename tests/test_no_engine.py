"""Unit tests never reach an engine (tests/conftest.py: `_no_engine`): a client of the
Docker SDK cannot be made here, nor in a Python process a unit test starts, and the
product sees what it sees on a machine without an engine."""

from __future__ import annotations

import subprocess
import sys

import docker
import pytest

from sandboxrun._backends.docker.engine import connect
from sandboxrun._errors import EngineUnavailable
from tests.conftest import NO_ENGINE


def test_the_sdk_makes_no_client() -> None:
    with pytest.raises(docker.errors.DockerException, match="unit tests never reach"):
        docker.DockerClient(base_url="unix:///var/run/docker.sock")


def test_connecting_is_the_engine_missing() -> None:
    """The package's one connection (`engine.connect`) says no engine answers, naming why."""
    with pytest.raises(EngineUnavailable) as caught:
        connect(None)
    assert str(caught.value).startswith("no Docker Engine answers at unix:///var/run/docker.sock")
    assert NO_ENGINE in str(caught.value)


def test_nor_in_a_process_the_test_starts() -> None:
    """tests/site/sitecustomize.py carries it into the Python processes a test starts."""
    code = "from sandboxrun._backends.docker.engine import connect; connect(None)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "EngineUnavailable: no Docker Engine answers" in done.stderr
    assert NO_ENGINE in done.stderr
