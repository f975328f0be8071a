"""`sandboxrun images build` without an engine: the build context, uv's wheel, --ca-cert."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import ConfigError, EngineError
from sandboxrun._backends.docker.images import (
    build_images,
    fetch_uv,
    images_dir,
    make_context,
    wheel_platform,
)

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _pip(script: str) -> tuple[str, ...]:
    """A stand-in for `python -m pip`: runs `script` with pip's arguments in sys.argv."""
    return (sys.executable, "-c", script)


def test_context_holds_only_what_the_dockerfile_reads(tmp_path: Path) -> None:
    """The build context is the Dockerfiles, the helper's source and extras/ with the CAs."""
    ca = tmp_path / "corp.pem"
    ca.write_bytes(PEM)
    context = tmp_path / "ctx"
    context.mkdir()
    make_context(images_dir(), context, [str(ca)])
    found = sorted(str(p.relative_to(context)) for p in context.rglob("*"))
    assert found == [
        "Dockerfile", "extras", "extras/sandboxrun-ca-0.crt", "proxy.Dockerfile",
        "sandboxrun-seccomp.c",
    ]  # fmt: skip
    assert (context / "extras" / "sandboxrun-ca-0.crt").read_bytes() == PEM


def test_fetch_uv_returns_the_wheel_pip_saved(tmp_path: Path) -> None:
    """fetch_uv asks pip for the pinned uv of the platform and returns the file it saved."""
    script = (
        "import sys, pathlib; a = sys.argv[1:];"
        "assert a[:2] == ['download', 'uv==' + a[1].split('==')[1]] and 'manylinux2014_x86_64' in a;"
        "pathlib.Path(a[a.index('--dest') + 1], 'uv-1-py3-none-x.whl').write_bytes(b'w')"
    )
    wheel = fetch_uv(tmp_path, "manylinux2014_x86_64", pip=_pip(script))
    assert wheel == tmp_path / "uv-1-py3-none-x.whl"


def test_fetch_uv_failure_is_one_clear_line(tmp_path: Path) -> None:
    """A pip that cannot reach the index gives one line naming uv, pip and pip's reason."""
    script = "import sys; print('noise'); print('ERROR: No matching distribution', file=sys.stderr); sys.exit(1)"
    with pytest.raises(EngineError) as err:
        fetch_uv(tmp_path, "manylinux2014_x86_64", pip=_pip(script))
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("cannot fetch uv ") and "No matching distribution" in message


def test_unknown_engine_architecture_is_refused() -> None:
    """An engine architecture without a uv wheel is named in the error."""
    assert wheel_platform("arm64") == "manylinux2014_aarch64"
    with pytest.raises(EngineError, match="'s390x'"):
        wheel_platform("s390x")


@pytest.mark.parametrize(
    ("content", "why"), [(None, "cannot read it"), (b"hello", "not a PEM certificate")]
)
def test_bad_ca_cert_fails_before_the_build(
    tmp_path: Path, content: bytes | None, why: str
) -> None:
    """A missing or non-PEM --ca-cert file is refused, by name, before the engine is asked."""
    path = tmp_path / "ca.crt"
    if content is not None:
        path.write_bytes(content)

    class NoEngine:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError("the engine was asked before the certificate was checked")

    with pytest.raises(ConfigError, match=f"--ca-cert {path}: {why}"):
        build_images(NoEngine(), image="x", ca_certs=[str(path)])
