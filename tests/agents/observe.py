"""What each real agent hands a hook, observed, so that a change in it (protocol drift) is
seen before users hit it (issue 30, item 3).

One run of the agent's CLI, before any `install`, with two unsandboxed hooks of ours:

- the recording hook (`probe.py record EVENT`) on every event of `events`: it keeps
  what it was given: stdin, the environment, the working directory;
- the slow hook (`probe.py slow EVENT`) beside it on the event `timed`, configured with a
  timeout of `TIMEOUT` and sleeping `SLEEP` s: it tells the **timeout unit**. The time
  the agent waited on that event runs from the recording hook's start there to the first
  hook of a later event: if the slow hook ended before that, the agent waited for it
  ("not enforced"); if the agent went on within half of `TIMEOUT` seconds, it read the
  timeout as "milliseconds" (reading seconds, it cannot go on before `TIMEOUT` s); else
  "seconds". Wide bounds, no fine timing; the agent's extra time is about `TIMEOUT` s
  (seconds), ~0 (milliseconds) or `SLEEP` s (not enforced).

The observation is normalised JSON, with nothing that changes from run to run: the
agent, its npm package and version; per event the top-level stdin fields with their JSON
types (and those of an object one level down, as `tool_input.command`), the variables
the agent set for the hook (not in the environment the CLI was started with, nor the
shell's own: `PWD`, `SHLVL`...) each as `project` (its value is the project root, which
is the CLI's cwd), `in-project`, `empty` or `set`, and the hook's cwd (`.` for the
project root, else `other`); and the timeout's unit. The measured wait goes to stdout as
an `observed:` line (pytest `-s`; `scripts/agents-drift` shows it).

The pass compares it with `tests/agents/observed/<agent>.json` and fails with a diff when
they differ; `SANDBOX_TEST_AGENTS_OBSERVED=<folder>` writes it there instead (refresh the
committed files with `SANDBOX_TEST_AGENTS_OBSERVED=tests/agents/observed`;
`scripts/agents-drift` uses a temporary folder).

Adopting it for an agent is one test, named `test_observation` (the drift script selects
it by that name), in the agent's test file::

    def test_observation(account, agents_bin, model, netns):
        def configure(probe: observe.Probe) -> Path:
            # a project whose config runs probe.hooks(), trusted as the agent needs
            # (Claude-shaped agents: conftest.command_hooks(probe.hooks()) is the config)
            hooks = json.dumps(command_hooks(probe.hooks()))
            return make_project(account, {".x/settings.json": hooks})

        observe.observe("x", "@vendor/x-cli", account=account, agents_bin=agents_bin,
                        events=("SessionStart", "PreToolUse", "PostToolUse", "Stop"),
                        timed="PreToolUse", given=x_env(account, model),
                        configure=configure, run=lambda project: x(account, ..., project))

`events` must hold an event after `timed` (the post-tool one: the fake model's single
tool call is let through, since a timed-out hook fails open everywhere so far);
`timed=None` for an agent whose hooks have no timeout of their own (the Cline CLI's is
one for all): no slow hook, and the record's `timeout` is null. Per agent too: whether
`probe.hooks()` need a matcher, a script file per event (a Cline hook is a file: one
line, `exec` of the command), another config shape (Copilot's `bash`/`timeoutSec`). `given`
is the environment the CLI is started with beyond the account's own (`Account.env`);
`run` runs the CLI once in the project (its own assertions as in the agent's other
tests). Then commit the file `SANDBOX_TEST_AGENTS_OBSERVED=tests/agents/observed` writes.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import Account

HERE = Path(__file__).resolve().parent
OBSERVED = HERE / "observed"
TIMEOUT = 4  # what the slow hook is configured with, in the agent's own unit
SLEEP = 8  # how long it sleeps, in seconds: well past TIMEOUT seconds, so a kill shows
# Variables every shell keeps itself, whoever started it: not the agent's.
SHELL_OWN = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})

PROBE = """#!/usr/bin/python3 -I
# A hook of tests/agents/observe.py: `record EVENT` keeps what the agent handed it;
# `slow EVENT` sleeps past its timeout and notes the time if it lived to the end.
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
mode, event = sys.argv[1], sys.argv[2]
start = time.time()
data = sys.stdin.read()
if mode == "slow":
    time.sleep(%(sleep)d)
    with open(os.path.join(here, "slow-end"), "w") as out:
        out.write(repr(time.time()))
    sys.exit(0)
record = {"event": event, "start": start, "stdin": data, "env": dict(os.environ),
          "cwd": os.getcwd()}
name = os.path.join(here, "records", "%%.6f-%%d.json" %% (start, os.getpid()))
with open(name + ".part", "w") as out:
    json.dump(record, out)
os.rename(name + ".part", name)
"""


@dataclass(frozen=True)
class Probe:
    """The hooks of one observation run: the agent's config writer asks for them."""

    folder: Path
    events: tuple[str, ...]
    timed: str | None

    def command(self, mode: str, event: str) -> str:
        return shlex.join([str(self.folder / "probe.py"), mode, event])

    def hooks(self) -> dict[str, list[tuple[str, int | None]]]:
        """Per event, its hooks in order as (command, timeout or None): the recording
        hook first (an agent that runs an event's hooks one after another starts it
        first), and on the timed event the slow one with `TIMEOUT`."""
        found: dict[str, list[tuple[str, int | None]]] = {}
        for event in self.events:
            found[event] = [(self.command("record", event), None)]
            if event == self.timed:
                found[event].append((self.command("slow", event), TIMEOUT))
        return found


def observe(
    agent: str, package: str, *, account: Account, agents_bin: Path, events: Sequence[str],
    timed: str | None, given: Mapping[str, str], configure: Callable[[Probe], Path],
    run: Callable[[Path], object],
) -> None:  # fmt: skip
    """Observe what `agent` (npm `package`) hands a hook and compare it with the committed
    record, or write it where `SANDBOX_TEST_AGENTS_OBSERVED` says (see the module)."""
    assert timed is None or events.index(timed) < len(events) - 1, "an event must follow it"
    probe = Probe(account.home / f"observe-{uuid.uuid4().hex[:8]}", tuple(events), timed)
    (probe.folder / "records").mkdir(parents=True)
    (probe.folder / "probe.py").write_text(PROBE % {"sleep": SLEEP})
    (probe.folder / "probe.py").chmod(0o755)
    account.own(probe.folder)
    project = configure(probe)
    run(project)
    records = [json.loads(p.read_text()) for p in (probe.folder / "records").glob("*.json")]
    end = probe.folder / "slow-end"
    ended = float(end.read_text()) if end.exists() else None
    version = json.loads((agents_bin.parent / package / "package.json").read_text())["version"]
    base = {item.split("=", 1)[0] for item in account.env(given)[2:]}  # after `env -i`
    observation = {"agent": agent, "package": package, "version": version,
                   "events": described(records, base, project), "timeout": None}  # fmt: skip
    waited = ""
    if timed is not None:
        unit, seconds = timeout_unit(records, timed, ended)
        waited = f"; it went on {seconds:.1f} s after the timed event's start"
        print(f"observed: {agent} {version}: with timeout {TIMEOUT} on {timed} it went on"
              f" after {seconds:.1f} s: {unit}")  # fmt: skip
        observation["timeout"] = {"event": timed, "configured": TIMEOUT, "sleep": SLEEP,
                                  "unit": unit}  # fmt: skip
    text = json.dumps(observation, indent=2, sort_keys=True) + "\n"
    folder = os.environ.get("SANDBOX_TEST_AGENTS_OBSERVED")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{agent}.json").write_text(text)
        return
    committed = OBSERVED / f"{agent}.json"
    old = committed.read_text() if committed.exists() else ""
    if old != text:
        diff = "".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                            str(committed), f"{agent} {version}, observed"))  # fmt: skip
        pytest.fail(
            f"what {agent} {version} hands a hook is not what {committed.name} records (the"
            f" pinned version's record is stale, or the harness changed{waited}). Refresh it with"
            f" SANDBOX_TEST_AGENTS_OBSERVED=tests/agents/observed when the change is"
            f" meant:\n{diff}",
            pytrace=False,
        )


def timeout_unit(
    records: Sequence[Mapping[str, Any]], timed: str, ended: float | None
) -> tuple[str, float]:
    """The unit the agent read the slow hook's timeout in, and how long it waited."""
    starts = sorted(r["start"] for r in records if r["event"] == timed)
    assert starts, f"no hook ran on {timed}: {sorted({r['event'] for r in records})}"
    later = sorted(r["start"] for r in records if r["event"] != timed and r["start"] > starts[0])
    assert later, f"no hook ran after {timed}: the wait on it cannot be measured"
    waited = later[0] - starts[0]
    if ended is not None and ended <= later[0]:
        return "not enforced", waited
    # Half: the wait is timed from the recording hook's start, which a loaded machine
    # delays past the slow hook's spawn (where the agent's clock starts); a wait of
    # TIMEOUT milliseconds plus the tool's run stays far below it.
    if waited < TIMEOUT / 2:
        return "milliseconds", waited
    return "seconds", waited


def described(
    records: Iterable[Mapping[str, Any]], base: set[str], project: Path
) -> dict[str, Any]:
    """Per event: stdin's fields, the agent's variables, the cwd (the union over every
    run of the event, each kind of value sorted and joined with `|`)."""
    seen: dict[str, dict[str, dict[str, set[str]]]] = {}
    for record in records:
        event = seen.setdefault(record["event"], {"stdin": {}, "variables": {}, "cwd": {}})
        for name, kind in fields(record["stdin"]):
            event["stdin"].setdefault(name, set()).add(kind)
        for name, value in record["env"].items():
            if name not in base and name not in SHELL_OWN:
                event["variables"].setdefault(name, set()).add(place(value, project))
        event["cwd"].setdefault("cwd", set()).add(place(record["cwd"], project, cwd=True))
    return {
        name: {
            "cwd": "|".join(sorted(parts["cwd"]["cwd"])),
            "stdin": {k: "|".join(sorted(v)) for k, v in sorted(parts["stdin"].items())},
            "variables": {k: "|".join(sorted(v)) for k, v in sorted(parts["variables"].items())},
        }
        for name, parts in sorted(seen.items())
    }


def fields(stdin: str) -> list[tuple[str, str]]:
    """stdin's top-level fields and those of an object one level down, with JSON types."""
    try:
        value = json.loads(stdin)
    except ValueError:
        return [("(stdin)", "not JSON")]
    if not isinstance(value, dict):
        return [("(stdin)", kind(value))]
    found = []
    for name, inner in value.items():
        found.append((name, kind(inner)))
        if isinstance(inner, dict):
            found += [(f"{name}.{key}", kind(deeper)) for key, deeper in inner.items()]
    return found


def kind(value: object) -> str:
    if value is None:
        return "null"
    for python, name in ((bool, "boolean"), (str, "string"), (int, "number"),
                         (float, "number"), (dict, "object"), (list, "array")):  # fmt: skip
        if isinstance(value, python):
            return name
    return type(value).__name__


def place(value: str, project: Path, cwd: bool = False) -> str:
    """Where a value points, by the project root (the CLI's cwd), not the value itself."""
    if value == str(project):
        return "." if cwd else "project"
    if cwd:
        return "other"
    if value.startswith(f"{project}/"):
        return "in-project"
    return "set" if value else "empty"
