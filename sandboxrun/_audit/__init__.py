"""The audit trail: what every hook decided, why, and how it ran, one JSON line each.

Written when the user's config names a file (`audit_log`; the config file only: the
environment is no source of settings, so a repository can neither turn it off nor point
it elsewhere). Every entry point records through here: `run`, `check`, the Python API
and `serve`'s `run` through `_runner.session.answer_event`, `exec` (cold and served) through
`_runner.reply.answer_exec`. A request `serve` answers is written by the server, with the
settings it answered under. A line (`hook_line`) holds: time, entry point, agent,
event, session, tool and tool-use id (where the agent's event names them), the hook
(name, source level, sha256 of its file or its command), its decision and reason, exit
code, status, what the sandbox stopped, duration, warm or cold, backend, image and its
id, runtime, truncations. Never the environment (the hook's or the host's), and the
event itself only with `audit_payload = true`.

Auditing never changes an answer: a file that cannot be written is a warning on stderr.
`summary.py` reads the file back for `sandboxrun audit`.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._dialects.base import SESSION_FIELDS
from .._log import logger
from .._text import printable
from .log import AuditLog

if TYPE_CHECKING:
    from .._settings import Settings
    from .._types import CombinedResult, ExecResult, HookOutcome, HookSpec, Skipped

MAX_FIELD = 500  # characters of a reason or an error kept in a line
MAX_HASHED = 16 << 20  # a hook file larger than this is hashed as its first 16 MiB
MAX_PAYLOAD = 1 << 20  # bytes of an event kept with `audit_payload` (then cut, said so)
# Where the agents' events name their session, tool and tool call (first found wins).
_SESSION = SESSION_FIELDS  # the same as a shared /tmp's (`_sandbox.sessiontmp`)
_TOOL = ("tool_name", "toolName")
_TOOL_USE = ("tool_use_id", "toolUseId", "tool_call_id", "toolCallId")
_STATUS = {"completed": "completed", "failed": "failed", "timed_out": "timed out",
           "error": "error"}  # fmt: skip


def enabled(settings: Settings) -> bool:
    """Whether hook runs are recorded: an audit file, OpenTelemetry traces, or both."""
    return bool(settings.audit_log or settings.otel_endpoint)


def write(settings: Settings, records: Sequence[Mapping[str, Any]]) -> None:
    """Append one event's records to the user's audit log and send them as spans (when
    each is configured); never raises (a warning instead)."""
    if settings.otel_endpoint and records:
        try:
            from . import otel  # the optional extra: imported only when configured
        except ImportError:
            logger.warning("otel_endpoint is set but OpenTelemetry is not installed:"
                           " pip install 'sandboxrun[otel]'")  # fmt: skip
        else:
            try:
                otel.emit(settings, records)
            except Exception as exc:  # traces never change an answer
                logger.warning("otel: spans not recorded: {}", exc)
    if not settings.audit_log or not records:
        return
    lines = [
        (json.dumps(r, ensure_ascii=True, separators=(",", ":"), default=str) + "\n").encode()
        for r in records
    ]
    try:
        AuditLog(settings.audit_log, settings.audit_max_bytes, settings.audit_keep).append(lines)
    except OSError as exc:
        logger.warning("audit_log {} not written: {}", settings.audit_log, exc.strerror or exc)


def event_records(
    settings: Settings, backend: object, *, entry: str, served: bool, hook_name: str,
    event: Mapping[str, Any], result: CombinedResult, failed: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """One record per hook of an event (run, failed, or never run), or one record without
    a hook when the hooks could not run at all (`failed`, or a block of sandboxrun's)."""
    base = _base(settings, backend, entry, served, hook_name, event)
    records = [_outcome(base, o) for o in result.outcomes]
    records += [_not_run(base, s) for s in result.not_run]
    if not records and (failed or _decision(result.answer) != "none"):
        decision, reason = _decision(result.answer), _reason(result.answer)
        records.append({**base, "hook": None, "status": "error", "decision": decision,
                        "reason": reason})  # fmt: skip
    return records


def exec_record(
    settings: Settings, backend: object, *, served: bool, stdin: bytes, label: str,
    untrusted: bool, outcome: HookOutcome, result: ExecResult | None, sandbox_ended: bool,
    why: str = "",
) -> dict[str, Any]:  # fmt: skip
    """The record of one `exec`: the hook as the agent read what exec handed it, for
    the event its `outcome` was read for (`_runner.exec.audit_exec` names it). `why`: the
    sandbox's own failure, the reason when the agent's reading has none."""
    event = _event(stdin)
    base = _base(settings, backend, "exec", served, outcome.spec.hook_name, event, stdin)
    record = _outcome(base, outcome)
    digest = _sha256(label.encode("utf-8", "surrogatepass"))
    record["hook"] = {"name": _cut(label), "source": "untrusted" if untrusted else "user",
                      "sha256": digest, "of": "command"}  # fmt: skip
    if sandbox_ended:
        timed_out = result is not None and result.timed_out
        record["status"] = "timed out" if timed_out else "error"
        record["reason"] = record["reason"] or _cut(why)
    return record


def _base(
    settings: Settings, backend: object, entry: str, served: bool, hook_name: str,
    event: Mapping[str, Any], raw: bytes | None = None,
) -> dict[str, Any]:  # fmt: skip
    own = _tool_fields(settings.agent, event)
    base: dict[str, Any] = {
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds"),
        "entry": entry,
        "served": served,
        "agent": settings.agent,
        "event": _cut(hook_name),
        "sessionId": _first(event, _SESSION),
        "toolName": _first(event, _TOOL) or _first(own, _TOOL),
        "toolUseId": _first(event, _TOOL_USE) or _first(own, _TOOL_USE),
        "backend": settings.backend,
        "image": settings.image,
        "imageId": getattr(backend, "image_id", None) or None,
        "runtime": settings.runtime,
    }
    if settings.audit_payload:
        text = raw if raw is not None else json.dumps(event, ensure_ascii=False).encode()
        base["payload"] = _payload(text)
    return base


def _outcome(base: Mapping[str, Any], o: HookOutcome) -> dict[str, Any]:
    return {
        **base,
        "hook": _hook(o.spec),
        "decision": _decision(o.answer) if o.status == "completed" else "none",
        "reason": _reason(o.answer) or _cut(o.error or ""),
        "exitCode": o.exit_code,
        "status": _STATUS.get(o.status, o.status),
        "sandboxStopped": o.sandbox_stopped,
        "refusedHosts": list(o.refused_hosts),
        "durationMs": o.duration_ms,
        "warm": o.warm,
        "outputTruncated": o.output_truncated,
        "oomKilled": o.oom_killed,
    }


def _not_run(base: Mapping[str, Any], s: Skipped) -> dict[str, Any]:
    hook = _hook(s.spec) if s.spec else {"name": _cut(s.path), "source": s.source}
    return {**base, "hook": hook, "decision": "none", "reason": _cut(s.reason),
            "status": "not run"}  # fmt: skip


def _hook(spec: HookSpec) -> dict[str, Any]:
    """The hook's name, level and identity: the sha256 of its file when its name is one
    (a Cline hook file, a script), else of its command."""
    digest, of = None, "command"
    if os.path.isabs(spec.name) and os.path.isfile(spec.name):
        try:
            with open(spec.name, "rb") as f:
                digest, of = _sha256(f.read(MAX_HASHED)), "file"
        except OSError:
            digest = None
    if digest is None:
        digest = _sha256(spec.name.encode("utf-8", "surrogatepass"))
    return {"name": _cut(spec.name), "source": spec.source, "sha256": digest, "of": of}


def _decision(answer: Mapping[str, Any]) -> str:
    """block, ask, allow (said so) or none (no opinion), in any agent's fields (a deny
    is a block: Crush's reading says `decision: "deny"` alone)."""
    said = {answer.get(k) for k in ("permissionDecision", "decision", "permission")}
    if answer.get("cancel") is True or answer.get("blocked") is True or "deny" in said:
        return "block"
    if "ask" in said:
        return "ask"
    if said & {"allow", "approve"}:
        return "allow"
    return "none"


def _reason(answer: Mapping[str, Any]) -> str:
    for key in ("errorMessage", "reason", "stopReason", "agent_message", "user_message"):
        text = answer.get(key)
        if isinstance(text, str) and text.strip():
            return _cut(text)
    return ""


def _first(event: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = event.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return _cut(str(value), 200)
    return None


def _tool_fields(agent: str, event: Mapping[str, Any]) -> Mapping[str, Any]:
    """The tool and tool call where the agent's events name them in fields of their own
    (`Dialect.tool_fields`: Cline's `tool_call.id`...)."""
    from .._dialects.registry import DIALECTS

    return DIALECTS[agent].tool_fields(event) if agent in DIALECTS else {}


def _event(stdin: bytes) -> dict[str, Any]:
    try:
        event = json.loads(stdin) if stdin.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return event if isinstance(event, dict) else {}


def _payload(raw: bytes) -> Any:
    cut = len(raw) > MAX_PAYLOAD
    text = raw[:MAX_PAYLOAD].decode("utf-8", "replace")
    if not cut:
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
    return {"text": text, "cut": cut, "bytes": len(raw)}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cut(text: str, limit: int = MAX_FIELD) -> str:
    """One printable line of at most `limit` characters (a hook's words are hostile)."""
    one = printable(" ".join(text.split()))
    return one if len(one) <= limit else one[: limit - 1] + "…"
