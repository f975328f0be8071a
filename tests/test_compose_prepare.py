"""scripts/compose-prepare's env file: our keys set once, the user's WORKSPACES kept."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compose-prepare"


def prepare() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("compose_prepare", str(SCRIPT))
    spec = importlib.util.spec_from_loader("compose_prepare", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_a_new_env_file_gets_our_keys_and_the_workspaces(tmp_path: Path) -> None:
    env, ws = tmp_path / ".env", tmp_path / "ws"
    prepare().env_file(env, {"BASE_IMAGE": "b", "BUILD_DIR": "/x"}, str(ws))
    assert env.read_text() == f"BASE_IMAGE=b\nBUILD_DIR=/x\nWORKSPACES={ws}\n"
    assert ws.is_dir()


def test_a_second_run_replaces_our_keys_and_keeps_the_users(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("# mine\nWORKSPACES=/srv/mine\nBASE_IMAGE=old\nSERVE_PUBLISH=10.0.0.2:80\n")
    prepare().env_file(env, {"BASE_IMAGE": "new"}, str(tmp_path / "unused"))
    assert env.read_text() == (
        "# mine\nWORKSPACES=/srv/mine\nSERVE_PUBLISH=10.0.0.2:80\nBASE_IMAGE=new\n"
    )
    assert not (tmp_path / "unused").exists()
