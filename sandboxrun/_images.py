"""`sandboxrun images build`: the hook runtime image from `images/Dockerfile`.

With a registry the Dockerfile's `FROM debian:bookworm-slim` is used as is. With
`--offline`, `images/offline-base.sh` first makes the base from a debootstrap
rootfs (`docker import`), and the build uses it through the `BASE` build argument.
Both steps are idempotent: a second call reuses the base and the build cache.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from loguru import logger

from ._engine import engine_errors
from ._errors import EngineError

DEFAULT_BASE = "debian:bookworm-slim"
OFFLINE_BASE = "sandboxrun/base:bookworm"
IMAGE_LABEL = "sandboxrun.image"
# Words in a build error that mean the base could not be pulled.
_NO_REGISTRY = ("registry", "pull access denied", "manifest unknown", "no such host")


def images_dir() -> Path:
    """The Dockerfile's folder: packaged in a wheel, or `images/` of a source checkout."""
    packaged = Path(__file__).parent / "_images_data"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "images"


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


def build_images(
    client: Any,
    *,
    image: str,
    base: str = DEFAULT_BASE,
    offline: bool = False,
    offline_base: str = OFFLINE_BASE,
) -> str:
    """Build the hook runtime image from images/Dockerfile and tag it `image`; return its id.

    `client` is a `docker.DockerClient`. With `offline`, the base image is first made by
    `images/offline-base.sh` (skipped when `offline_base` exists) and used instead of `base`.
    Progress goes to the loguru logger; failures raise `EngineError` with a one-line message.
    """
    folder = images_dir()
    if not (folder / "Dockerfile").is_file():
        raise EngineError(f"no Dockerfile in {folder}: reinstall sandboxrun")
    if offline:
        _build_offline_base(folder, offline_base)
        base = offline_base
    logger.info("building {} from {} (base {})", image, folder, base)
    image_id: str | None = None
    with engine_errors(image=base):
        for chunk in client.api.build(
            path=str(folder),
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
