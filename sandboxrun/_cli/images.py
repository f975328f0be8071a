"""`sandboxrun images build`: the hook image (and the proxy's), offline if asked."""

from __future__ import annotations

import argparse

from .common import load


def command(args: argparse.Namespace) -> int:
    from .._backends.docker.engine import connect
    from .._backends.docker.images import build_images
    from .._settings import Settings

    settings = load(args)
    # The default image unless --tag: a team's own `image` (built FROM it) is never
    # overwritten by a build of ours.
    default = args.tag or str(Settings.model_fields["image"].default)
    image_id = build_images(
        connect(settings.docker_host),
        image=default,
        offline=args.offline,
        ca_certs=args.ca_cert,
    )
    print(f"built {default} ({image_id[:19]})")
    return 0
