"""Review: a repository's hook that is new or changed since the user approved it is
shown with its diff (`sandboxrun review`) and, under `review = "required"`, held until
approved (issue 22). `pins` knows a hook's identity and keeps the approved ones; this
module applies the user's policy where hooks are found for running (`gate`: `run`,
`check`, `serve`, the Python API through `_runner.HookFactory`; `exec_gate`: `exec
--untrusted`), and records approvals and holds in the audit trail.

`review` is read from the user's config only (`_settings`): a repository cannot set
it. The user's own, managed and plugin hooks are never held: only sources of
`WORKSPACE_SOURCES`.

Under "required", a changed hook whose earlier version was approved runs that version
instead (`approved`: its pinned bytes bound over the changed files, and its entry's
`fields` as approved: a guard made `async` runs synchronously), reported as
`awaiting review`; where that cannot be done faithfully it is held like a new one.
An approved hook the event lacks (`removed`: deleted, or its matcher narrowed) is an
error under "required" (a block under fail-closed) and a note under "warn".
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import _audit
from .._dialects.base import from_repository
from .._log import logger
from .._types import ApprovedFile, HookOutcome, HookSpec, Skipped, review_note
from .approved import HELD, NotFaithful, approved_files, bound, cannot_run
from .fields import restore
from .pins import VERSION, Pin, PinStore, compare, identify
from .removed import REMOVED, as_spec, dropped, pin_roots

__all__ = [
    "HELD", "ExecReview", "Gated", "NotFaithful", "Scope", "approve", "bound", "cannot_run",
    "exec_gate", "exec_note", "gate", "migrate", "pin_roots",
]  # fmt: skip

if TYPE_CHECKING:
    from .._settings import Settings


@dataclass(frozen=True)
class Seen:
    """One repository hook as it is now, against its approved pin."""

    pin: Pin
    status: str  # approved, new, changed, renamed, mode, removed (pin: the approved one)
    old: Pin | None
    workspace: str
    # Nothing of this workspace was pinned yet: under warn, its hooks are pinned as they
    # are, quietly (the first run in a checkout); a hook added later is reported new.
    first: bool = False


def _home() -> str:
    from .. import _settings  # looked up at call time: tests patch the account's home

    return _settings.account_home()


def hook_root(spec: HookSpec, workspaces: Sequence[str], project_var: str | None) -> str:
    """The workspace a repository hook belongs to: the project its agent names (Claude's
    family: a session in a subfolder has the project's hooks), else the root its file
    or workdir lies in, else the first."""
    if project_var and spec.env.get(project_var):
        return os.path.realpath(spec.env[project_var])
    reals = [os.path.realpath(w) for w in workspaces]
    for place in (*spec.argv, spec.name, spec.workdir):
        if os.path.isabs(place):
            for root in reals:
                if os.path.realpath(place).startswith(root + os.sep):
                    return root
    return reals[0] if reals else os.path.realpath(spec.workdir or "/")


def survey(
    agent: str, specs: Sequence[HookSpec], workspaces: Sequence[str],
    project_var: str | None, pins_file: str | None = None,
) -> list[Seen]:  # fmt: skip
    """Each repository hook of `specs` against the approved pins of its workspace."""
    out: list[Seen] = []
    stores: dict[str, dict[str, Pin]] = {}
    for spec in specs:
        if not from_repository(spec.source):
            continue
        root = hook_root(spec, workspaces, project_var)
        if root not in stores:
            stores[root] = PinStore(_home(), root, pins_file).load()
        pin = identify(agent, spec, root)
        status, old = compare(pin, stores[root])
        out.append(Seen(pin, status, old, root, not stores[root]))
    return out


def approve(seen: Sequence[Seen], pins_file: str | None = None) -> None:
    """Pin the current version of each hook of `seen` (in its workspace's store)."""
    by_root: dict[str, list[Seen]] = {}
    for s in seen:
        by_root.setdefault(s.workspace, []).append(s)
    for root, items in by_root.items():
        with PinStore(_home(), root, pins_file).locked() as pins:
            for s in items:
                if s.status == REMOVED:  # approving a removal forgets the hook
                    pins.pop(s.pin.key, None)
                    continue
                if s.old is not None and s.status == "renamed":
                    pins.pop(s.old.key, None)
                pins[s.pin.key] = s.pin


def migrate(seen: Sequence[Seen], pins_file: str | None = None) -> None:
    """Pins of an earlier version that `compare` found approved (`Pin.known`: the bytes
    they approved are the bytes the kernel opens now) written again as the current
    version, each only if the pin stored is still the one compared. Never raises: a
    pins file that cannot be written keeps the older pins, still compared so."""
    stale = [s for s in seen if s.status == "approved" and s.old is not None
             and s.old.version < VERSION and s.old.key == s.pin.key]  # fmt: skip
    by_root: dict[str, list[Seen]] = {}
    for s in stale:
        by_root.setdefault(s.workspace, []).append(s)
    for root, items in by_root.items():
        try:
            with PinStore(_home(), root, pins_file).locked() as pins:
                for s in items:
                    if pins.get(s.pin.key) == s.old:
                        pins[s.pin.key] = s.pin
        except (OSError, ValueError) as exc:
            logger.warning("review: could not write the pins of {} anew: {}", root, exc)


def first_sight(
    settings: Settings, agent: str, specs: Sequence[HookSpec], workspaces: Sequence[str],
    project_var: str | None, everything: Callable[[], Sequence[HookSpec]],
) -> None:  # fmt: skip
    """Under warn, a checkout seen for the first time (nothing of it pinned): every
    repository hook it has, for every event (`everything`: discovery without an event),
    pinned as it is, quietly. Else the hooks of each later event would read "new" on
    their first run, though they were there from the start; a hook a pull adds later is
    reported new. Under required nothing is pinned without `review --approve`."""
    if settings.review != "warn" or settings.review_pins is not None:
        return
    roots = {hook_root(s, workspaces, project_var) for s in specs
             if from_repository(s.source)}  # fmt: skip
    if not any(not PinStore(_home(), root, None).load() for root in roots):
        return
    try:
        seen = survey(agent, everything(), workspaces, project_var)
        approve([s for s in seen if s.first and s.status == "new"])
    except Exception as exc:  # never an error of the answer; `gate` says what it finds
        logger.warning("review: could not pin the checkout: {}", exc)


class Scope(NamedTuple):
    """One event's run, for the approved hooks it lacks (`removed.dropped`): its hooks
    as found before matchers, whether a hook applies to the event, and where the pins
    of its workspaces are (`removed.pin_roots`)."""

    hook_name: str
    candidates: Sequence[HookSpec]
    applies: Callable[[HookSpec], bool]
    roots: Sequence[str]


class Gated(NamedTuple):
    """What `gate` decided: the hooks to run, the outcomes of those held (and, under
    required, of approved hooks removed: errors, a block under fail-closed), and under
    warn the removed ones to report beside the run (never a block)."""

    run: list[HookSpec]
    held: list[HookOutcome]
    noted: list[Skipped]


def gate(
    settings: Settings, agent: str, specs: Sequence[HookSpec], workspaces: Sequence[str],
    project_var: str | None, entry: str = "run",
    everything: Callable[[], Sequence[HookSpec]] | None = None, scope: Scope | None = None,
) -> Gated:  # fmt: skip
    """The user's `review` policy applied to the hooks about to run: (the hooks to run,
    each marked with what changed; the outcomes of those held; removed ones noted).
    Never raises: a pins file that cannot be read is a warning, and under "required"
    holds every repository hook. `everything`: all the checkout's hooks, for its first
    sight; `scope`: the event, to find approved hooks it lacks (None: not looked for)."""
    policy = settings.review
    repo = any(from_repository(s.source) for s in specs)
    if policy == "off" or not (repo or scope):
        return Gated(list(specs), [], [])
    try:  # first sight too: its pins unreadable must not make the run fail under warn
        if everything is not None and repo:
            first_sight(settings, agent, specs, workspaces, project_var, everything)
        seen = survey(agent, specs, workspaces, project_var, settings.review_pins)
        gone = [] if scope is None else dropped(
            _home(), agent, scope.hook_name, scope.candidates, specs, seen, scope.roots,
            lambda c: hook_root(c, workspaces, project_var), scope.applies,
            settings.review_pins,
        )  # fmt: skip
    except Exception as exc:  # our reading failed: never a silent approval
        logger.warning("review: pins not read: {}", exc)
        if policy != "required":
            return Gated(list(specs), [], [])
        held = [s for s in specs if from_repository(s.source)]
        kept = [s for s in specs if not from_repository(s.source)]
        why = f"{HELD} (pins not read: {exc})"
        if scope is not None and not held:  # an approved guard may be missing: unknown
            held = [HookSpec(hook_name=scope.hook_name, name="(approved repository hooks)",
                             source="project", argv=(), workdir="", mounts=())]  # fmt: skip
        return Gated(kept, [HookOutcome(spec=replace(s, review="awaiting review"),
                                        status="error", error=why) for s in held], [])  # fmt: skip
    if settings.review_pins is None:  # an export is written by `review --approve` only
        migrate(seen)
    found = iter(seen)  # in the order of the repository hooks of `specs`
    run: list[HookSpec] = []
    held_out: list[HookOutcome] = []
    records: list[dict[str, Any]] = []
    first_seen: list[Seen] = []
    for spec in specs:
        s = next(found) if from_repository(spec.source) else None
        if s is None or s.status == "approved":
            run.append(spec)
            continue
        hold = policy == "required" and s.status in ("new", "changed")
        files = in_place(s) if hold else None
        if isinstance(files, tuple):  # its approved version runs instead, marked
            assert s.old is not None  # `in_place` gives files only for an approved one
            approved = restore(spec, agent, s.old.runs, s.old.knows_timeout)
            run.append(replace(approved, review="awaiting review", approved=files,
                               as_approved=True))  # fmt: skip
            logger.warning("hook {} changed since approved: its approved version runs", spec.name)
            records.append(record(settings, s, "ran approved", entry))
            continue
        if hold:
            why = HELD if files is None else cannot_run(files)
            held_out.append(HookOutcome(spec=replace(spec, review="awaiting review"),
                                        status="error", error=why))  # fmt: skip
            logger.warning("hook {} {}", spec.name, why)
        elif s.status == "new" and s.first and settings.review_pins is None:
            first_seen.append(s)  # warn, a checkout's first run: pinned as it is, quietly
            run.append(spec)
            logger.info("hook {}: pinned on first sight", spec.name)
            continue
        else:
            if s.status == "new" and settings.review_pins is None:
                first_seen.append(s)
            run.append(replace(spec, review=s.status))
            logger.warning("hook {}: {}", spec.name, review_note(s.status))
        records.append(record(settings, s, "held" if hold else "ran", entry))
    noted = removals(settings, gone, held_out, records, entry)
    if first_seen:
        try:
            approve(first_seen)
        except OSError as exc:
            logger.warning("review: could not pin: {}", exc)
    audit(settings, records)
    return Gated(run, held_out, noted)


def removals(
    settings: Settings, gone: Sequence[Seen], held: list[HookOutcome],
    records: list[dict[str, Any]], entry: str,
) -> list[Skipped]:  # fmt: skip
    """Approved hooks this event lacks (`removed.dropped`), never dropped silently: under
    required each is an error outcome added to `held` (a guard that cannot run: a block
    under fail-closed); under warn each is returned to be reported beside the run
    (`notRun`), without a spec, so never a block (`CombinedHookRunner.run`)."""
    noted: list[Skipped] = []
    required = settings.review == "required"
    for s in gone:
        spec = as_spec(s.pin, s.workspace)
        logger.warning("hook {}: {}", spec.name, review_note(REMOVED))
        if required:
            held.append(HookOutcome(spec=spec, status="error",
                                    error=f"not run: {review_note(REMOVED)}"))  # fmt: skip
        else:
            noted.append(Skipped(spec.name, spec.source, review_note(REMOVED)))
        records.append(record(settings, s, "held" if required else "noted", entry))
    return noted


def in_place(s: Seen, entry: bool = True) -> tuple[ApprovedFile, ...] | str | None:
    """For a changed hook with an approved earlier version: the approved bytes to run in
    place of its changed files, or why they cannot be run so (the hook is then held);
    None for any other hook (a new one: nothing approved to run)."""
    if s.status != "changed" or s.old is None:
        return None
    return approved_files(s.old, s.pin, s.workspace, entry)


def record(settings: Settings, s: Seen, decision: str, entry: str) -> dict[str, Any]:
    """One audit line for a review decision (`"entry": "review"`)."""
    return {
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds"),
        "entry": "review", "via": entry, "agent": s.pin.agent, "event": s.pin.event,
        "hook": {"name": s.pin.name, "source": s.pin.entry.get("source")},
        "workspace": s.workspace, "status": s.status, "decision": decision,
        "policy": settings.review,
    }  # fmt: skip


def audit(settings: Settings, records: Sequence[Mapping[str, Any]]) -> None:
    if records and _audit.enabled(settings):
        _audit.write(settings, records)


class ExecReview(NamedTuple):
    """What `exec_gate` decided: `status` is `held` when the command must not run,
    another status to tell the user about (`awaiting review` with `approved`: its
    approved version runs instead), None when approved or off."""

    status: str | None
    approved: tuple[ApprovedFile, ...] = ()


def exec_gate(
    settings: Settings, command: Sequence[str], request: Any, stdin: bytes, served: bool,
    event_name: str | None = None,
) -> ExecReview:  # fmt: skip
    """The review of an `exec --untrusted` command (a repository's hook: its command and
    the workspace files it names), with the policy applied (`ExecReview`). The event is
    `event_name` (`exec --event`, which install writes), else the one the dialect reads
    in stdin: its approval is keyed by it (Copilot's camelCase input names none, so its
    approved hooks were held as new under required)."""
    if settings.review == "off":
        return ExecReview(None)
    from .._dialects.registry import dialect_of
    from .._runner.exec import _event

    name = event_name or dialect_of(settings).event_name(_event(stdin)) or ""
    root = request.mounts[0] if request.mounts else request.workdir
    spec = HookSpec(hook_name=name, name=" ".join(command), source="project",
                    argv=tuple(command), workdir=request.workdir, mounts=(),
                    env=request.env)  # fmt: skip
    try:
        pinned = PinStore(_home(), root, settings.review_pins).load()
        if not pinned and settings.review == "warn" and settings.review_pins is None:
            every = dialect_of(settings).discover(None, [root], _home()).hooks
            first_sight(settings, settings.agent, every, [root], None, lambda: every)
            pinned = PinStore(_home(), root, settings.review_pins).load()
        pin = identify(settings.agent, spec, root, kind="exec")
    except Exception as exc:  # never a silent approval
        logger.warning("review: pins not read: {}", exc)
        return ExecReview("held" if settings.review == "required" else None)
    # The hook `review` showed and approved (discovery reads past install's wrapper to
    # this command): its files decide; else this command's own pin from an earlier exec.
    old = pinned.get("\x1f".join(("run", settings.agent, name, pin.name)))
    if old is not None:
        now = pin.known(old)
        status = "changed" if old.files_digest != now.files_digest else (
            "approved" if old.modes() == now.modes() else "mode")  # fmt: skip
    else:
        status, old = compare(pin, pinned)
    if status == "approved":
        if old is not None and old.key == pin.key and settings.review_pins is None:
            migrate([Seen(pin, status, old, os.path.realpath(root))])
        return ExecReview(None)
    seen = Seen(pin, status, old, os.path.realpath(root), not pinned)
    held = settings.review == "required" and status in ("new", "changed")
    via = "exec (served)" if served else "exec"
    files = in_place(seen, entry=False) if held else None
    if isinstance(files, tuple):  # its approved version runs instead
        audit(settings, [record(settings, seen, "ran approved", via)])
        return ExecReview("awaiting review", files)
    if held and files:
        logger.warning("hook {}: {}", seen.pin.name, cannot_run(files))
    if status == "new" and not held and settings.review_pins is None:
        try:
            approve([seen])
        except OSError as exc:
            logger.warning("review: could not pin: {}", exc)
        if seen.first:  # a checkout's first run: pinned as it is, quietly (as `gate`)
            return ExecReview(None)
    audit(settings, [record(settings, seen, "held" if held else "ran", via)])
    return ExecReview("held" if held else status)


def exec_note(agent: str, stdout: bytes, exit_code: int, status: str) -> tuple[bytes, bytes]:
    """Where `exec` tells the user a repository hook is not as approved, never changing
    a decision: (stdout, a line for stderr). The Claude family's `systemMessage` (shown
    to the user) when the hook answered exit 0 with nothing or a JSON object; else a
    stderr line on exit 0 only (non-blocking in every agent); on any other exit code,
    only the debug log: stderr there may be what the agent reads as a block's reason."""
    import json

    from .._dialects.registry import DIALECTS

    note = f"sandboxrun: {review_note(status, status == 'awaiting review')}"
    if exit_code != 0:
        logger.debug("{}", note)
        return stdout, b""
    dialect = DIALECTS.get(agent)
    field = dialect.message_field if dialect is not None else None  # (Claude's systemMessage)
    if field:
        try:
            data = json.loads(stdout) if stdout.strip() else {}
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            old = data.get(field)
            data[field] = f"{old}\n{note}" if isinstance(old, str) and old else note
            return json.dumps(data, ensure_ascii=True).encode() + b"\n", b""
    return stdout, (note + "\n").encode()
