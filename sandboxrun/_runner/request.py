"""One hook's run as the sandbox takes it: a `HookSpec` becomes an `ExecRequest` here,
for `run` (`_runner.HookRunner`) and `exec` (`_runner.exec.exec_request`) alike.

What a run is given besides the hook's own mounts and variables is decided here once:
its state (`_sandbox.state.prepare`: a persistent home when `state` names it), its
plugin's data folder (CLAUDE_PLUGIN_DATA: private inside, `_sandbox.state.plugin_data`),
the session's shared /tmp (`_sandbox.sessiontmp`), and an empty CLAUDE_ENV_FILE of ours
(`_sandbox.envfile`) when the agent gives the hook one. What was asked for and could not
be given comes back as notes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._dialects.claude.plugins import DATA_VAR
from .._sandbox import envfile as _envfile
from .._sandbox import sessiontmp as _sessiontmp
from .._sandbox.state import hook_ids, plugin_data
from .._sandbox.state import prepare as prepare_state
from .._settings import Settings
from .._types import ExecRequest, HookSpec


@dataclass(frozen=True, slots=True)
class Prepared:
    """A run ready to start, and what it was not given (a line each)."""

    request: ExecRequest
    notes: tuple[str, ...] = ()


def request_for(
    spec: HookSpec,
    stdin: bytes,
    settings: Settings,
    *,
    timeout: float,
    label: str,
    workspace: str,
    session: _sessiontmp.Session | None,
    env_file: bool,
) -> Prepared:
    """The run of `spec` reading `stdin`, for at most `timeout` s. `workspace`: the root
    its state and plugin data belong to; `session`: whose /tmp it shares (tmp =
    "session"); `env_file`: the agent gives this hook a CLAUDE_ENV_FILE (then it gets an
    empty one of ours, read back after the run: `_sandbox.envfile.collect`)."""
    state, state_note = prepare_state(settings, spec.source, spec.name, workspace)
    notes = [state_note]
    private: tuple[tuple[str, str | None], ...] = ()
    data = spec.env.get(DATA_VAR)
    if spec.plugin and data:  # CLAUDE_PLUGIN_DATA: private, persistent only with state
        private, data_note = plugin_data(settings, data, spec.plugin, spec.name, workspace)
        notes.append(data_note)
    mounted = (*spec.mounts, *(path for path, _ in private))
    tmp, tmp_note = _sessiontmp.prepare(settings, session, spec.source, mounted)
    notes.append(tmp_note)
    own_file = _envfile.new_file(*hook_ids(settings.user)) if env_file else None
    request = ExecRequest(
        argv=spec.argv,
        stdin=stdin,
        workdir=spec.workdir,
        mounts=spec.mounts,
        env={**spec.env, _envfile.VAR: _envfile.TARGET} if own_file else spec.env,
        timeout=timeout,
        label=label,
        state=state,
        tmp=tmp,
        env_file=own_file,
        private_dirs=private,
    )
    return Prepared(request, tuple(n for n in notes if n))
