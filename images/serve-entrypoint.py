"""Start `sandboxrun serve` in the compose service (see compose.yaml).

Writes the server's config file from the service's few variables, unless the operator
mounts one at /etc/sandboxrun/config.toml, makes a private copy of the token (the server
accepts only a token file of its own user with mode 0600, and the mounted one belongs to
whoever made it on the host), then becomes the server: it is the container's process 1,
and SIGTERM from `docker-compose down` stops it cleanly.

The variables are the container's, set by compose.yaml, never by a caller of the service:
    WORKSPACES    the host folder of the workspaces, mounted at the same path (required)
    HOOKS_IMAGE   the hook runtime image (default sandboxrun/hooks:latest)
    PROXY_IMAGE   the network allowlist's proxy image (default sandboxrun/proxy:latest)
Extra arguments (the service's `command:`) go to `sandboxrun serve`, e.g. --idle-exit 600.
"""

import json
import os
import sys
from typing import NoReturn

OPERATOR_CONFIG = "/etc/sandboxrun/config.toml"
MOUNTED_TOKEN = "/run/secrets/sandboxrun-token"
PRIVATE = "/tmp/sandboxrun"  # a tmpfs: the image's own files stay read-only
SOCKET = "/run/sandboxrun/serve.sock"  # in a volume: other containers can use it
LISTEN = "0.0.0.0:8765"  # compose publishes it on the host's loopback by default


def fail(message: str) -> NoReturn:
    print(f"sandboxrun-serve-entrypoint: {message}", file=sys.stderr, flush=True)
    sys.exit(2)


def toml_string(value: str) -> str:
    # A JSON string is a TOML basic string (the same escapes, \uXXXX included).
    return json.dumps(value)


def workspaces() -> str:
    path = os.environ.get("WORKSPACES", "")
    if not os.path.isabs(path) or os.path.realpath(path) == "/":
        fail(f"WORKSPACES={path!r}: set it to an absolute host folder other than / (.env)")
    if not os.path.isdir(path):
        fail(f"WORKSPACES={path}: not mounted here (compose.yaml mounts it at the same path)")
    return path


def write_private(name: str, data: bytes) -> str:
    os.makedirs(PRIVATE, mode=0o700, exist_ok=True)
    path = os.path.join(PRIVATE, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


def config() -> str:
    if os.path.isfile(OPERATOR_CONFIG):
        return OPERATOR_CONFIG
    # Hooks' mounts are made by the host's engine from host paths: the workspaces are at
    # the same path here and there, and only they are accepted as workspace roots.
    lines = [
        f"allowed_roots = [{toml_string(workspaces())}]",
        f"image = {toml_string(os.environ.get('HOOKS_IMAGE') or 'sandboxrun/hooks:latest')}",
        f"proxy_image = {toml_string(os.environ.get('PROXY_IMAGE') or 'sandboxrun/proxy:latest')}",
    ]
    return write_private("config.toml", ("\n".join(lines) + "\n").encode())


def token() -> str:
    try:
        with open(MOUNTED_TOKEN, "rb") as f:
            data = f.read(4096)
    except OSError as exc:
        fail(f"no token at {MOUNTED_TOKEN} ({exc.strerror}): run scripts/compose-prepare")
    return write_private("token", data)


def main() -> None:
    argv = [
        "sandboxrun", "serve", "--config", config(), "--socket", SOCKET,
        "--listen", LISTEN, "--token-file", token(), *sys.argv[1:],
    ]  # fmt: skip
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main()
