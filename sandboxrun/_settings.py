"""Settings: one value, built once at the edge (CLI or caller) and passed down.

Sources, strongest first: keyword arguments (the command line), then the user's own
config file: the `--config FILE` given on the command line, else
`~/.config/sandboxrun/config.toml` where `~` is the account's home from the password
database. Nothing is read from the workspace or the current directory (no `.env`).

The environment is not a source. Agents start hooks with environment variables a
repository can choose (Claude Code applies a project's `env` block to every hook
process), so a variable that picked the network, the user, the image, the engine,
the config file or a limit would let a cloned repository loosen its own sandbox or
forge its answer. The one exception only tightens: `SANDBOXRUN_FAIL_CLOSED=1` turns
fail-closed on (a variable can never turn it off). Other `SANDBOXRUN_*` variables
are ignored with a warning; `HOME`, `XDG_CONFIG_HOME` and `DOCKER_HOST` are not read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic.dataclasses import dataclass as _dataclass
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from . import _userconfig
from ._dialects.table import WHERE
from ._errors import ConfigError
from ._log import logger
from ._userconfig import account_home as account_home  # re-exported: callers import it here
from ._userconfig import read_config as _read_config

# The `--agent` names, in the registry's order: derived from its one table, never
# listed again (mypy cannot read a Literal built at run time: a `str` to it).
if TYPE_CHECKING:
    Agent = str
else:
    Agent = Literal[tuple(WHERE)]
TIGHTENING_ENV = "SANDBOXRUN_FAIL_CLOSED"
_DOMAIN = re.compile(r"(\*\.)?([A-Za-z0-9_]([A-Za-z0-9_-]{0,62})\.)*[A-Za-z0-9_-]{1,63}")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_CONFIG_FILE: ContextVar[tuple[Path, bool]] = ContextVar("sandboxrun_config_file")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Folders that hold other people's files: never the folder of sandboxrun's socket.
SHARED_FOLDERS = ("/", "/tmp", "/var/tmp", "/home", "/var", "/opt", "/srv", "/mnt", "/media",
                  "/run")  # fmt: skip
# The names a hook's CLAUDE_ENV_FILE lines may set by default (`env_file_allow`,
# `_sandbox.envfile`): each names a mode or a display preference, never a program, a file
# or a folder, so no value of it makes the agent's shell or its tools load code.
DEFAULT_ENV_FILE_ALLOW = (
    "NODE_ENV",  # a build mode name ("production"); Claude Code's own example
    "NO_COLOR",  # turns colour off in tools that honour it; a flag, read as set or not
    "FORCE_COLOR",  # turns colour on (a level number); a flag, read by Node's tools
)


def config_path() -> Path:
    """Where the user's own config file lives by default (it need not exist)."""
    return Path(_userconfig.config_path(account_home()))


@_dataclass(frozen=True)
class WorkspaceVolume:
    """Kubernetes backend: where a folder the hook reads comes from in the cluster, mounted
    read-only at `path` (the path the request names, as on the agent's host). In the
    config file: `[[kube_volumes]]` tables with `kind`, `source`, `path`, `sub_path`.
    Costs of each kind:

    - `pvc`: a PersistentVolumeClaim with access mode ReadOnlyMany (`source` is the claim
      name, `sub_path` a folder inside it, e.g. one tenant's workspace). Works on any
      cluster whose storage offers ReadOnlyMany (NFS, CephFS, cloud file stores); the
      platform keeps the claim's content in step with the agent's workspace, and a hook
      reads over the network. Allowed by the `restricted` Pod Security Standard.
    - `hostPath`: a folder of the node (`source`), for single-node clusters where the
      workspace lives on that node; no copy, no network. The `restricted` (and even the
      `baseline`) Pod Security Standard refuses hostPath volumes, so the namespace of
      `deploy/kubernetes/` rejects such pods: there, give the folder to a `local`
      PersistentVolume and use a `pvc` instead.

    Both are mounted with `recursiveReadOnly: Enabled`: a filesystem mounted below the
    folder is read-only too, and a node that cannot do that (Linux < 5.12, an older
    runtime) refuses the pod rather than leave it writable.
    """

    kind: Literal["pvc", "hostPath"]
    source: str
    path: str
    sub_path: str = ""

    def __post_init__(self) -> None:
        if not self.path.startswith("/") or self.path.rstrip("/") == "":
            raise ValueError(
                f"{self.path!r}: a volume's path must be an absolute folder other than /"
            )
        if self.sub_path.startswith("/") or ".." in self.sub_path.split("/"):
            raise ValueError(f"{self.sub_path!r}: sub_path must be relative, without '..'")


class Settings(BaseSettings):
    """Everything that shapes a sandboxed hook run."""

    model_config = SettingsConfigDict(extra="forbid", frozen=True)

    agent: Agent = Field(
        "cline", description="whose hooks and protocol: cline, careti, the Claude family, codex..."
    )
    image: str = Field(
        "sandboxrun/hooks:latest", description="the hook image (yours: build FROM this one)"
    )
    runtime: str | None = Field(None, description="OCI runtime, e.g. runsc; None = engine default")
    runtime_class: str | None = Field(
        None,
        description="Kubernetes backend: the hook pods' RuntimeClass, e.g. gvisor;"
        " None = the cluster's default",
    )
    timeout: float | None = Field(
        None, gt=0, le=3600, description="seconds per hook; None: the agent's (cline 30, claude 60)"
    )
    memory: str = Field("512m", description="memory limit; swap is not allowed on top")
    pids: int = Field(256, ge=16, le=1 << 16, description="process/thread limit per hook")
    cpus: float = Field(1.0, gt=0, le=64, description="CPUs a hook may use")
    tmpfs_size: str = Field("64m", description="size of each of /tmp and $HOME")
    nofile: int = Field(1024, ge=16, le=1 << 20, description="open files per hook process")
    stdout_tail: int = Field(1 << 20, ge=4096, le=1 << 30, description="bytes of stdout kept")
    output_limit: int = Field(16 << 20, ge=4096, le=1 << 34, description="output before a kill")
    stderr_report: int = Field(4000, ge=0, le=1 << 20, description="stderr characters reported")
    fail_closed: bool = Field(
        False, description="block when a hook fails, times out or cannot start (and on our errors)"
    )
    cline_variant: Literal["sdk", "vscode"] = Field(
        "sdk",
        description="which Cline finds and starts the hooks: sdk (its SDK and CLI: four"
        " folders, any case, extensions, no exec bit) or vscode (the VS Code extension:"
        " the executable file named exactly after the hook)",
    )
    trust_workspace_decisions: bool = Field(
        False,
        description="honour a workspace hook's allow and updatedInput (Cline's SDK:"
        " overrideInput; the agent's own semantics); by default a repository's hooks may"
        " block, ask or add context only",
    )
    review: Literal["off", "warn", "required"] = Field(
        "warn",
        description="a repository's hook new, changed or removed since you approved it"
        " (`sandboxrun review`): off, warn (it runs, its report says so) or required (a new"
        " one is held until approved; a changed one runs its approved version, where it"
        " can; a removed one is an error, a block under fail-closed)",
    )
    review_pins: str | None = Field(
        None,
        description="approved pins from this file (`review --approve --pins FILE`) instead"
        " of your data folder: a CI's gate (`check --require-reviewed`); `review --approve`"
        " writes there too",
    )
    network: Literal["none", "bridge", "allowlist"] = Field(
        "none",
        description="bridge gives hooks network: only for hooks you trust; allowlist: only"
        " `allow_domains`, through an egress proxy",
    )
    allow_domains: tuple[str, ...] = Field(
        (),
        description="hosts an allowlist hook may reach (HTTP on 80, HTTPS on 443); *.d for"
        " the subdomains of d",
    )
    proxy_image: str = Field("sandboxrun/proxy:latest", description="the allowlist's proxy")
    egress_network: str | None = Field(
        None, description="the network the allowlist proxy reaches out on; None: our bridge"
    )
    docker_host: str | None = Field(
        None, description="engine address; default unix:///var/run/docker.sock (never DOCKER_HOST)"
    )
    user: str | None = Field(None, description="uid[:gid] to run hooks as (never 0)")
    groups: tuple[int, ...] = Field((), description="extra group ids for the hook process")
    allowed_roots: tuple[str, ...] = Field(
        (),
        description="set, the only folders workspace roots may lie below; they admit other"
        " owners' folders, and a dot-folder of your home they list (`serve --listen` needs it)",
    )
    hook_paths: tuple[str, ...] = Field(
        (), description="folders hook commands may name files in (mounted read-only)"
    )
    env_file_allow: tuple[str, ...] = Field(
        DEFAULT_ENV_FILE_ALLOW,
        description="names a hook's CLAUDE_ENV_FILE lines may hand on to the agent (your own"
        " hooks only; a value pointing into the workspace is refused whatever the name)",
    )
    max_hooks: int = Field(32, ge=1, le=1024, description="hooks run for one event at most")
    max_parallel: int = Field(4, ge=1, le=256, description="hooks of one event run at once")
    state: tuple[str, ...] = Field(
        (),
        description="hooks (globs on the name `list` shows: a path or a command) that keep"
        " a persistent private $HOME per workspace (off by default; see _sandbox/state.py)",
    )
    state_size: str = Field("64m", description="a hook state over this is not mounted")
    state_dir: str | None = Field(
        None, description="where hook states live (default ~/.local/share/sandboxrun/state)"
    )
    tmp: Literal["run", "session"] = Field(
        "run",
        description="run: each hook run gets its own empty /tmp; session: the repository's"
        " and your own hooks of one agent session in one workspace share a /tmp (a host"
        " folder under `state_dir`, capped by `tmpfs_size`), so a pair that hands a file"
        " over in /tmp (a PostToolUse list a Stop guard reads) works as on the host; an"
        " event without a session id gets its own. Docker backend only",
    )
    tmp_max_age: float = Field(
        604800.0,
        ge=3600,
        le=31536000,
        description="seconds a session's /tmp is kept unused before `state clean` (or the"
        " next new session) removes it",
    )
    pool_size: int = Field(
        2,
        ge=0,
        le=64,
        description="warm path (an API backend with warm=True, serve):"
        " containers started ahead of time per kind of hook; 0: none",
    )
    pool_total: int = Field(16, ge=1, le=1024, description="pooled containers in all")
    pool_idle: float = Field(
        300.0, ge=5, le=86400, description="seconds a pooled container waits before it goes"
    )
    serve: Literal["auto", "use", "off"] = Field(
        "auto",
        description="auto: `run` and `exec` go through your `sandboxrun serve`, started on"
        " first use when none answers (not under CI=true; it stops after `serve_idle`);"
        ' use: only a running one; off: never (always the cold path). "start" is the old'
        ' name of "auto"',
    )
    serve_idle: float = Field(
        900.0,
        ge=1,
        le=86400,
        description="seconds without a request before a server `run` or `exec` started stops",
    )
    serve_socket: str | None = Field(
        None,
        description="the server's unix socket, in a folder of its own (not the home, not /tmp;"
        " default: /run/user/<uid>/sandboxrun/serve.sock, else ~/.cache/sandboxrun/serve.sock)",
    )
    serve_token_file: str | None = Field(
        None, description="the token a TCP client of `serve --listen` must send (required on TCP)"
    )
    serve_max_requests: int = Field(
        64,
        ge=1,
        le=1024,
        description="requests `serve` answers at once; past them a request gets 503 and its"
        " client runs it cold (probes are always answered)",
    )
    serve_read_timeout: float = Field(
        10.0,
        gt=0,
        le=300,
        description="seconds a client of `serve` has to send its whole request, else it is dropped",
    )
    log_format: Literal["text", "json"] = Field(
        "text", description="how `serve` logs on stderr: text lines, or one JSON object a line"
    )
    audit_log: str | None = Field(
        None,
        description="the audit trail: one JSON line per hook run, on every entry point"
        " (absolute path; the config file only, so a repository can neither turn it off nor"
        " move it; `sandboxrun audit` summarises it)",
    )
    audit_payload: bool = Field(
        False, description="also record each event's JSON in the audit trail (it may hold"
        " file contents and prompts)",
    )  # fmt: skip
    audit_max_bytes: int = Field(
        10 << 20, ge=4096, description="the audit file is rotated when it would pass this size"
    )
    audit_keep: int = Field(5, ge=1, le=100, description="rotated audit files kept (.1 ... .N)")
    otel_endpoint: str | None = Field(
        None,
        description="OpenTelemetry: the OTLP/HTTP traces URL (e.g. http://collector:4318/v1/traces);"
        " one span per event, one per hook (`pip install 'sandboxrun[otel]'`; OTEL_* variables"
        " are ignored)",
    )
    # A table in the file; kept as sorted pairs, so settings stay hashable (serve keys on them).
    otel_headers: tuple[tuple[str, str], ...] = Field(
        (), description="headers sent with each export (a table, e.g. an API key)"
    )
    otel_service_name: str = Field("sandboxrun", description="the traces' service.name")
    otel_timeout: float = Field(
        2.0, gt=0, le=30, description="seconds an export may take (a one-shot command waits"
        " at most this long at exit, after its answer)",
    )  # fmt: skip
    landlock: Literal["required", "optional"] = Field(
        "required",
        description="optional: run hooks on kernels without Landlock (host FIFOs in the"
        " workspace then stay writable)",
    )
    backend: Literal["docker", "kubernetes"] = Field(
        "docker",
        description="where hooks run: the local Docker Engine, or one pod each in a"
        " Kubernetes cluster (the extra sandboxrun[kubernetes])",
    )
    kube_namespace: str = Field(
        "sandboxrun", description="Kubernetes backend: the hook pods' namespace"
    )
    kubeconfig: str | None = Field(
        None,
        description='Kubernetes backend: a kubeconfig file (absolute path), or "in-cluster"'
        " (the pod's service account: serve and the Python API only, never a command an agent"
        " starts); None: ~/.kube/config of your account (never KUBECONFIG)",
    )
    kube_context: str | None = Field(
        None, description="Kubernetes backend: the kubeconfig's context"
    )
    kube_volumes: tuple[WorkspaceVolume, ...] = Field(
        (),
        description="Kubernetes backend: the volumes that hold the workspaces hooks read"
        " (every folder a hook is given must lie in one)",
    )

    @field_validator("memory", "tmpfs_size", "state_size")
    @classmethod
    def _size(cls, value: str) -> str:
        parse_size(value)
        return value

    @field_validator("allow_domains")  # the proxy compares ASCII names (see allowlist.py)
    @classmethod
    def _domains(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # Names only: each becomes two anchored regexes of the proxy's filter file.
        for domain in value:
            if not _DOMAIN.fullmatch(domain):
                raise ValueError(f"{domain!r}: not a host name (e.g. pypi.org, *.npmjs.org)"
                                 + _ascii_form(domain))  # fmt: skip
        return tuple(sorted({d.lower() for d in value}))

    @model_validator(mode="after")
    def _allowlist(self) -> Settings:
        if self.network == "allowlist" and not self.allow_domains:
            raise ValueError("network allowlist needs allow_domains (--allow-domain D)")
        return self

    @model_validator(mode="after")
    def _session_tmp(self) -> Settings:
        # A pod's /tmp cannot be a folder of this host: refused, never silently per run.
        if self.tmp == "session" and self.backend == "kubernetes":
            raise ValueError('tmp = "session" needs the docker backend (a pod has its own /tmp)')
        return self

    @field_validator("kube_namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        # A namespace name is a DNS label (RFC 1123).
        if not (len(value) <= 63 and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", value)):
            raise ValueError("must be a namespace name (lower case, digits, '-')")
        return value

    @field_validator("kubeconfig")
    @classmethod
    def _kubeconfig(cls, value: str | None) -> str | None:
        if value is not None and value != "in-cluster" and not os.path.isabs(value):
            raise ValueError(f'{value!r}: must be an absolute path or "in-cluster"')
        return value

    @field_validator("runtime_class")
    @classmethod
    def _runtime_class(cls, value: str | None) -> str | None:
        # A RuntimeClass name is a DNS subdomain (RFC 1123).
        if value is not None and not (len(value) <= 253 and _SUBDOMAIN.fullmatch(value)):
            raise ValueError("must be a RuntimeClass name (lower case, digits, '-', '.')")
        return value

    @field_validator("user")
    @classmethod
    def _user(cls, value: str | None) -> str | None:
        if value is None:
            return None
        uid, _, gid = value.partition(":")
        if not uid.isdigit() or (gid and not gid.isdigit()):
            raise ValueError("must be numeric uid or uid:gid, e.g. 1000:1000")
        if int(uid) == 0:
            raise ValueError("hooks never run as root (uid 0)")
        return value

    @field_validator("serve", mode="before")
    @classmethod
    def _serve(cls, value: Any) -> Any:
        if value == "start":  # before issue 19, "auto" only used a running server
            logger.warning('serve = "start" is now called "auto" (the default): change it in'
                           " your config file")  # fmt: skip
            return "auto"
        return value

    @field_validator("serve_socket", "serve_token_file", "audit_log", "review_pins")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not os.path.isabs(value):
            raise ValueError(f"{value!r}: must be an absolute path")
        return value

    @field_validator("serve_socket")
    @classmethod
    def _socket_folder(cls, value: str | None) -> str | None:
        # The socket's folder is sandboxrun's own: the server makes it 0700, and no
        # workspace may be it, hold it or lie in it (`_sandbox.mounts.own_files`). A shared folder
        # or the home there would refuse every workspace in it (each hook an error).
        if value is None:
            return value
        folder = os.path.realpath(os.path.dirname(os.path.normpath(value)))
        home = os.path.realpath(account_home())
        if folder in SHARED_FOLDERS or folder == home or home.startswith(folder.rstrip("/") + "/"):
            raise ValueError(
                f"{value!r}: its folder {folder} is shared or your home; put the socket in a"
                " folder of its own (e.g. ~/.cache/sandboxrun/serve.sock)"
            )
        return value

    @field_validator("state_dir")
    @classmethod
    def _state_dir(cls, value: str | None) -> str | None:
        if value is not None and (not os.path.isabs(value) or os.path.realpath(value) == "/"):
            raise ValueError(f"{value!r}: must be an absolute folder other than /")
        return value

    @field_validator("hook_paths")
    @classmethod
    def _hook_paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # Relative, a trusted place would move with each caller's folder (`serve`
        # answers callers in many): into the workspace, for one.
        for path in value:
            if not os.path.isabs(path):
                raise ValueError(f"{path!r}: must be an absolute path")
        return value

    @field_validator("otel_headers", mode="before")
    @classmethod
    def _otel_headers(cls, value: Any) -> Any:
        return tuple(sorted(value.items())) if isinstance(value, dict) else value

    @field_validator("otel_endpoint")
    @classmethod
    def _otel_endpoint(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", value):
            raise ValueError(f"{value!r}: must be an http:// or https:// URL")
        return value

    @field_validator("env_file_allow")
    @classmethod
    def _env_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:  # exact names: a pattern would let in names nobody looked at
            if not _IDENTIFIER.fullmatch(name):
                raise ValueError(f"{name!r}: must be a variable name (no patterns)")
        return value

    @field_validator("allowed_roots")
    @classmethod
    def _roots(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for root in value:
            if not os.path.isabs(root) or os.path.realpath(root) == "/":
                raise ValueError(f"{root!r}: must be an absolute folder other than /")
        return tuple(os.path.realpath(r) for r in value)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The caller's values over the user's config file; no environment, no dotenv,
        # no secrets dir (see the module docstring).
        path, required = _CONFIG_FILE.get((config_path(), False))
        return (init_settings, _UserConfigFile(settings_cls, path, required))

    @classmethod
    def load(
        cls,
        config: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
        **overrides: Any,
    ) -> Settings:
        """Build settings from `overrides` (the command line) over the config file
        (`config`, else the account's own); any problem is one `ConfigError` line.
        `environ`: the caller's environment (default ours; `serve` passes its client's),
        read only for the tightening variable and the warning about the others."""
        path = Path(config) if config is not None else config_path()
        given = {k: v for k, v in overrides.items() if v is not None}
        if "fail_closed" not in given and env_fail_closed(environ):
            given["fail_closed"] = True
        _warn_ignored_environment(environ)
        token = _CONFIG_FILE.set((path, config is not None))
        try:
            return cls(**given)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "settings"
            raise ConfigError(
                f"invalid setting {where}={_short(err.get('input'))}: {err['msg']}"
                f" (from the command line or {path})"
            ) from None
        finally:
            _CONFIG_FILE.reset(token)


class _UserConfigFile(TomlConfigSettingsSource):
    """The user's TOML config file, read safely (see `_read_config`)."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path, required: bool) -> None:
        self._required = required
        super().__init__(settings_cls, toml_file=path)

    def _read_files(self, files: Any, deep_merge: bool = False) -> dict[str, Any]:
        # Read even when missing: a config file named on the command line must exist.
        return _read_config(Path(files), self._required)


def env_fail_closed(environ: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(TIGHTENING_ENV, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def _warn_ignored_environment(environ: Mapping[str, str] | None = None) -> None:
    names = os.environ if environ is None else environ
    ignored = [n for n in names if n.startswith("SANDBOXRUN_") and n != TIGHTENING_ENV]
    if ignored:
        logger.warning(
            "ignored from the environment (settings come only from the command line and"
            " the config file): {}",
            ", ".join(sorted(ignored)),
        )


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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


def _ascii_form(domain: str) -> str:
    """For an international name, its ASCII (IDNA) spelling, which the allowlist needs."""
    try:
        ascii_name = domain.encode("idna").decode("ascii")
    except UnicodeError:
        return ""
    return f"; write it in its ASCII form: {ascii_name}" if ascii_name != domain else ""
