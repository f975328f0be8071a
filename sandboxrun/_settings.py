"""Settings: one value, built once at the edge (CLI or caller) and passed down.

Sources, strongest first: keyword arguments (the command line), `SANDBOXRUN_*`
environment variables, then the user's own config file
(`$SANDBOXRUN_CONFIG`, else `$XDG_CONFIG_HOME/sandboxrun/config.toml`, else
`~/.config/sandboxrun/config.toml`). Nothing is ever read from the workspace or
the current directory (no `.env`): a cloned repository must not be able to
loosen its own sandbox.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from ._errors import ConfigError

Agent = Literal["cline", "careti", "claude", "qoder", "qoder-cn"]


def config_path() -> Path:
    """Where the user's config file lives (it need not exist)."""
    explicit = os.environ.get("SANDBOXRUN_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "sandboxrun" / "config.toml"


class Settings(BaseSettings):
    """Everything that shapes a sandboxed hook run."""

    model_config = SettingsConfigDict(env_prefix="SANDBOXRUN_", extra="forbid", frozen=True)

    agent: Agent = "cline"
    image: str = "sandboxrun/hooks:latest"
    runtime: str | None = Field(None, description="OCI runtime, e.g. runsc; None = engine default")
    timeout: float | None = Field(
        None, gt=0, le=3600, description="seconds per hook; None: the agent's (cline 30, claude 60)"
    )
    memory: str = Field("512m", description="memory limit; swap is not allowed on top")
    pids: int = Field(256, ge=16, description="process/thread limit per hook")
    cpus: float = Field(1.0, gt=0, le=64)
    tmpfs_size: str = Field("64m", description="size of each of /tmp and $HOME")
    nofile: int = Field(1024, ge=16, le=1 << 20)
    stdout_tail: int = Field(1 << 20, ge=4096, description="bytes of stdout kept (the tail)")
    output_limit: int = Field(16 << 20, ge=4096, description="bytes of output before a kill")
    stderr_report: int = Field(4000, ge=0, description="characters of stderr in the report")
    fail_closed: bool = False
    trust_workspace_decisions: bool = Field(
        False,
        description="honour a workspace hook's allow and updatedInput (the agent's own"
        " semantics); by default a repository's hooks may block, ask or add context only",
    )
    network: Literal["none", "bridge"] = Field(
        "none", description="bridge gives hooks network: only for hooks you trust"
    )
    docker_host: str | None = Field(None, description="engine address; default: DOCKER_HOST")
    user: str | None = Field(None, description="uid:gid to run hooks as; default: see docs")

    @field_validator("memory", "tmpfs_size")
    @classmethod
    def _size(cls, value: str) -> str:
        parse_size(value)
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # No dotenv and no secrets dir: both would read from the current directory.
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, config_path()))

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """Build settings; any problem becomes one `ConfigError` line naming the value."""
        given = {k: v for k, v in overrides.items() if v is not None}
        try:
            return cls(**given)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {config_path()}: invalid TOML: {exc}") from None
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "settings"
            raise ConfigError(
                f"invalid setting {where}={err.get('input')!r}: {err['msg']}"
                f" (from the command line, SANDBOXRUN_{where.upper()} or {config_path()})"
            ) from None


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str) -> int:
    """'512m' -> bytes, the way `docker run --memory` reads it."""
    raw = text.strip().lower().removesuffix("ib").removesuffix("b") if text else ""
    unit = raw[-1:] if raw[-1:] in _UNITS else ""
    number = raw[: len(raw) - len(unit)]
    try:
        value = int(float(number) * _UNITS[unit])
    except ValueError:
        raise ValueError(f"not a size: {text!r} (use e.g. 512m, 1g)") from None
    if value <= 0:
        raise ValueError(f"size must be positive: {text!r}")
    return value
