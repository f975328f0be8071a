"""`sandboxrun images build`: the hook runtime image from `images/Dockerfile`.

With a registry the Dockerfile's `FROM debian:bookworm-slim` is used as is. With
`--offline`, `images/offline-base.sh` first makes the base from a debootstrap
rootfs (`docker import`), and the build uses it through the `BASE` build argument.
Both steps are idempotent: a second call reuses the base and the build cache.

The build context is a temporary folder: the Dockerfile and the helper's source, plus
`extras/` with the uv wheel, fetched on the host with the host's own pip (`pip download`):
the build container cannot be trusted to reach PyPI (no registry, or a TLS-intercepting
proxy whose CA only the host knows), while the host's pip is already set up for both.
Certificates given with `--ca-cert` go to `extras/` too, and into the image's trust store.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._errors import ConfigError, EngineError
from ..._log import logger
from .engine import engine_errors

DEFAULT_BASE = "debian:bookworm-slim"
OFFLINE_BASE = "sandboxrun/base:bookworm"
IMAGE_LABEL = "sandboxrun.image"
# Words in a build error that mean the base could not be pulled.
_NO_REGISTRY = ("registry", "pull access denied", "manifest unknown", "no such host")
# uv for `uv run --script` hooks; pinned, so a rebuild reuses its layers and the image is
# the same on every machine. Bump it here (docs/getting-started.md's plain `docker build`
# names it too).
UV_VERSION = "0.13.9"
# The engine's architecture (`docker version`) -> the PyPI wheel's platform tag.
_WHEEL_PLATFORMS = {"amd64": "manylinux2014_x86_64", "arm64": "manylinux2014_aarch64"}
# The files of images/ that go into the build context (not offline-base.sh, nothing else).
_CONTEXT_FILES = ("Dockerfile", "sandboxrun-seccomp.c", "proxy.Dockerfile")
PROXY_IMAGE = "sandboxrun/proxy:latest"  # network allowlist's egress proxy (tinyproxy)


def images_dir() -> Path:
    """The Dockerfile's folder: packaged in a wheel, or `images/` of a source checkout."""
    package = Path(__file__).resolve().parents[2]  # sandboxrun/
    packaged = package / "_images_data"
    if packaged.is_dir():
        return packaged
    return package.parent / "images"


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _build_offline_base(folder: Path, tag: str) -> None:
    """Run offline-base.sh; its output goes to our stderr (stdout is the CLI's)."""
    script = folder / "offline-base.sh"
    if not script.is_file():
        raise EngineError(f"offline base build failed: {script} is missing; reinstall sandboxrun")
    logger.info("making the offline base {} with {}", tag, script)
    try:
        done = subprocess.run(
            ["bash", str(script), tag], stdin=subprocess.DEVNULL, stdout=sys.stderr, check=False
        )
    except OSError as exc:
        raise EngineError(f"offline base build failed: cannot run bash: {exc}") from None
    if done.returncode:
        raise EngineError(
            f"offline base build failed (exit {done.returncode}): see the messages above;"
            " it needs root, debootstrap and Debian's mirror"
        )


def wheel_platform(arch: str) -> str:
    """The PyPI platform tag of uv's wheel for an engine architecture (`amd64`, `arm64`)."""
    try:
        return _WHEEL_PLATFORMS[arch]
    except KeyError:
        known = ", ".join(_WHEEL_PLATFORMS)
        raise EngineError(
            f"no uv wheel for the engine's architecture {arch!r} (only {known})"
        ) from None


def fetch_uv(dest: Path, platform: str, pip: Sequence[str] = (sys.executable, "-m", "pip")) -> Path:
    """Download uv's wheel for `platform` into `dest` with the host's pip; return its path."""
    argv = [*pip, "download", f"uv=={UV_VERSION}", "--no-deps", "--only-binary=:all:"]
    argv += ["--platform", platform, "--dest", str(dest), "--quiet", "--no-input"]
    logger.info("fetching uv {} ({}) with the host's pip", UV_VERSION, platform)
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )
    except OSError as exc:
        raise EngineError(f"cannot fetch uv: cannot run {pip[0]}: {exc}") from None
    wheels = sorted(dest.glob("uv-*.whl"))
    if done.returncode or len(wheels) != 1:
        lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
        why = _one_line(lines[-1]) if lines else f"exit {done.returncode}"
        raise EngineError(
            f"cannot fetch uv {UV_VERSION} ({platform}) with `{' '.join(pip)} download`: {why};"
            " the host's pip needs PyPI (or its mirror) for the image's uv"
        )
    return wheels[0]


def read_ca_cert(path: str) -> bytes:
    """A PEM certificate file given with `--ca-cert`, checked before any build starts."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"--ca-cert {path}: cannot read it: {exc.strerror or exc}") from None
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise ConfigError(f"--ca-cert {path}: not a PEM certificate (no BEGIN CERTIFICATE)")
    return data


def make_context(folder: Path, context: Path, ca_certs: Sequence[str] = ()) -> None:
    """Put in `context` what the Dockerfile reads besides the wheel, and nothing else."""
    for name in _CONTEXT_FILES:
        if not (folder / name).is_file():
            raise EngineError(f"no {name} in {folder}: reinstall sandboxrun")
        shutil.copyfile(folder / name, context / name)
    extras = context / "extras"
    extras.mkdir(exist_ok=True)
    for n, path in enumerate(ca_certs):
        (extras / f"sandboxrun-ca-{n}.crt").write_bytes(read_ca_cert(path))


def build_images(
    client: Any,
    *,
    image: str,
    base: str = DEFAULT_BASE,
    offline: bool = False,
    offline_base: str = OFFLINE_BASE,
    ca_certs: Sequence[str] = (),
    proxy_image: str = PROXY_IMAGE,
) -> str:
    """Build the hook runtime image from images/Dockerfile and tag it `image`; return its id.

    `client` is a `docker.DockerClient`. With `offline`, the base image is first made by
    `images/offline-base.sh` (skipped when `offline_base` exists) and used instead of `base`.
    uv's wheel is fetched on the host (`fetch_uv`); `ca_certs` (PEM files) are added to the
    image's trust store. The allowlist's proxy image (`proxy_image`, images/proxy.Dockerfile)
    is built from the same base. Progress goes to the loguru logger; failures raise `EngineError`
    (`ConfigError` for a bad certificate file) with a one-line message.
    """
    folder = images_dir()
    for path in ca_certs:  # a typo fails now, not after the base and the download
        read_ca_cert(path)
    with tempfile.TemporaryDirectory(prefix="sandboxrun-build-") as tmp:
        context = Path(tmp)
        make_context(folder, context, ca_certs)
        with engine_errors(image=image):
            arch = str(client.version().get("Arch", ""))
        fetch_uv(context / "extras", wheel_platform(arch))
        if offline:
            _build_offline_base(folder, offline_base)
            base = offline_base
        image_id = _build(client, context, image=image, base=base, offline=offline)
        # The allowlist's proxy, from the same base: small, and cached after the first time.
        _build(client, context, image=proxy_image, base=base, offline=offline,
               dockerfile="proxy.Dockerfile")  # fmt: skip
        return image_id


def _build(
    client: Any, context: Path, *, image: str, base: str, offline: bool,
    dockerfile: str = "Dockerfile",
) -> str:  # fmt: skip
    logger.info("building {} from {} (base {})", image, context, base)
    image_id: str | None = None
    with engine_errors(image=base):
        for chunk in client.api.build(
            path=str(context),
            dockerfile=dockerfile,
            tag=image,
            buildargs={"BASE": base},
            labels={IMAGE_LABEL: "1"},
            rm=True,
            forcerm=True,
            decode=True,
        ):
            if "error" in chunk:
                detail = _one_line(chunk.get("errorDetail", {}).get("message") or chunk["error"])
                if not offline and any(w in detail for w in _NO_REGISTRY):
                    detail += "; no registry? try `sandboxrun images build --offline` as root"
                raise EngineError(f"building {image} from {base} failed: {detail}")
            stream = str(chunk.get("stream", "")).strip()
            if stream:
                logger.info("build: {}", stream)
            aux = chunk.get("aux")
            if isinstance(aux, dict) and "ID" in aux:
                image_id = str(aux["ID"])
    if image_id is None:
        # Older engines only print "Successfully built <short id>": ask for the tag instead.
        with engine_errors(image=image):
            image_id = str(client.images.get(image).id)
    return image_id
