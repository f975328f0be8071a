"""Agent CLIs from npm, installed once into a folder of the machine's cache (outside the
clone) named by a hash of what was asked for, and reused by every later run. Stdlib only:
the pass's `agents_bin` fixture and `scripts/agents-drift` both use it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

# Outside the clone, kept between runs on this machine; a test variable moves it.
CACHE = Path(os.environ.get("SANDBOX_TEST_AGENTS_CACHE") or "/var/cache/sandboxrun-agents")


class NpmFailed(Exception):
    """npm could not install the agents (the message ends with npm's own words)."""


def cache_dir() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    CACHE.chmod(0o755)
    return CACHE


def installed(prefix: str, files: Mapping[str, bytes], npm: Sequence[str]) -> Path:
    """`node_modules/.bin` of `files` (package.json, a lockfile) installed with `npm`
    (`ci`, `install`) in `<cache>/<prefix>-<hash of the files' bytes, in their order>`:
    made in a staging folder, renamed when complete (a run that finds it complete reuses
    it; one killed midway leaves only its staging folder)."""
    key = hashlib.sha256(b"".join(files.values())).hexdigest()[:16]
    folder = CACHE / f"{prefix}-{key}"
    if not (folder / ".complete").exists():
        staging = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=cache_dir()))
        for name, data in files.items():
            (staging / name).write_bytes(data)
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        argv = ["npm", *npm, "--no-audit", "--no-fund", "--loglevel=error"]
        done = subprocess.run(argv, cwd=staging, env=env, capture_output=True, text=True,
                              timeout=900, check=False)  # fmt: skip
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise NpmFailed(f"npm {' '.join(npm)} failed: {done.stderr.strip()[-600:]}")
        (staging / ".complete").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        staging.chmod(0o755)
        try:
            staging.rename(folder)
        except OSError:  # another run made it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    return folder / "node_modules" / ".bin"


def pinned() -> Path:
    """`node_modules/.bin` of the agents this folder pins (`npm ci` of its lockfile)."""
    here = Path(__file__).resolve().parent
    files = {name: (here / name).read_bytes() for name in ("package-lock.json", "package.json")}
    return installed("npm", files, ["ci"])


if __name__ == "__main__":
    # `python -m tests.agents.npmcache`: fill the cache ahead of the pass (scripts/test
    # starts it in the background, beside the other passes); a failure is the pass's to
    # report (its fixture runs the same install again and names npm's words).
    try:
        print(f"tests/agents: the pinned agents are in {pinned().parent.parent}")
    except (NpmFailed, OSError, subprocess.SubprocessError) as failed:
        print(f"tests/agents: could not install the pinned agents ahead: {failed}")
