"""Review pins the file the kernel opens (issue 29, item 1): each word of a command is
resolved as the kernel resolves it, symlinks followed before `..`, and pinned at the
path it resolves to with the symlinks on the way. Claude Code's settings as in
tests/test_review.py; runs go to a FakeBackend (`check`: tests/test_review_check.py)."""

from __future__ import annotations

import json
from pathlib import Path

from sandboxrun import Settings, _review
from sandboxrun._review import Seen
from sandboxrun._review.pins import PinStore, identify
from sandboxrun._review.show import diff, pending, scan
from sandboxrun._types import HookSpec
from tests.test_review import (
    COMMAND,
    GUARD,
    WEAK,
    allow,
    approve_all,
    event,
    exec_request,
    project,
    run,
)
from tests.test_review import ws as ws  # the fixture

DECOY = '#!/bin/sh\necho "a guard" >&2; exit 2\n'  # what review pinned before
RUNS = "#!/bin/sh\necho UNREVIEWED-CODE-RAN >&2; exit 0\n"  # what the shell runs
DOTDOT = 'sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/../hooks/guard.sh'


def reproduction(ws: Path, command: str = DOTDOT) -> Path:
    """The issue's repository: `.claude/hooks -> ../a/b`, `a/b/guard.sh` a guard,
    `a/hooks/guard.sh` anything; the command climbs out of the symlinked folder."""
    project(ws, command=command)
    (ws / ".claude" / "hooks" / "guard.sh").unlink()
    (ws / ".claude" / "hooks").rmdir()
    for folder, body in (("a/b", DECOY), ("a/hooks", RUNS)):
        (ws / folder).mkdir(parents=True)
        (ws / folder / "guard.sh").write_text(body)
        (ws / folder / "guard.sh").chmod(0o755)
    (ws / ".claude" / "hooks").symlink_to("../a/b")
    return ws / "a" / "hooks" / "guard.sh"


def only(settings: Settings, home: Path, ws: Path) -> Seen:
    [seen] = scan(settings, [str(ws)], str(home), ["claude"])
    return seen


def test_dotdot_after_a_symlinked_folder_pins_the_file_that_runs(home, ws) -> None:
    runs = reproduction(ws)
    warn = Settings.load(agent="claude")
    required = Settings.load(agent="claude", review="required", fail_closed=True)
    seen = only(warn, home, ws)
    assert set(seen.pin.files) == {"a/hooks/guard.sh"}  # not a/b/guard.sh
    assert seen.pin.files["a/hooks/guard.sh"]["link"] == ".claude/hooks -> ../a/b"
    assert "UNREVIEWED-CODE-RAN" in diff(seen)  # review shows what runs
    approve_all(warn, home, ws)
    fake = allow()
    run(required, home, ws, fake)
    assert len(fake.requests) == 1  # approved: it runs
    (ws / "a" / "b" / "guard.sh").write_text(WEAK)  # the decoy never runs: no change
    assert pending(scan(warn, [str(ws)], str(home), ["claude"])) == []
    runs.write_text(RUNS.replace("UNREVIEWED", "CHANGED"))  # a later commit
    [seen] = pending(scan(warn, [str(ws)], str(home), ["claude"]))
    assert seen.status == "changed" and "+echo CHANGED-CODE-RAN" in diff(seen)
    assert run(warn, home, ws).to_json()["hooks"][0]["review"] == "changed"
    fake = allow()
    res = run(required, home, ws, fake)
    assert fake.requests == []  # reached through a symlink: held, never its bytes bound
    assert "a/hooks/guard.sh is or was a symlink" in (res.outcomes[0].error or "")
    assert res.answer.get("permissionDecision") == "deny"


def test_exec_untrusted_pins_the_file_that_runs(home, ws) -> None:
    """`exec --untrusted` as install writes it: the same pin, the same holds."""
    runs = reproduction(ws)
    warn = Settings.load(agent="claude")
    required = Settings.load(agent="claude", review="required")
    stdin = json.dumps(event(ws)).encode()
    request = exec_request(ws)
    approve_all(warn, home, ws)
    assert _review.exec_gate(required, [DOTDOT], request, stdin, False).status is None
    runs.write_text(WEAK)
    assert _review.exec_gate(warn, [DOTDOT], request, stdin, False).status == "changed"
    assert _review.exec_gate(required, [DOTDOT], request, stdin, False).status == "held"


def test_a_symlinked_folder_retargeted_is_a_change(home, ws) -> None:
    """Without `..`: pinned where the folder leads, so pointing it elsewhere (at a file
    of the same bytes) is a change."""
    project(ws, command=COMMAND)
    (ws / "a" / "b").mkdir(parents=True)
    (ws / ".claude" / "hooks" / "guard.sh").rename(ws / "a" / "b" / "guard.sh")
    (ws / ".claude" / "hooks").rmdir()
    (ws / ".claude" / "hooks").symlink_to("../a/b")
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    assert set(only(settings, home, ws).pin.files) == {"a/b/guard.sh"}
    approve_all(settings, home, ws)
    (ws / "a" / "c").mkdir()
    (ws / "a" / "c" / "guard.sh").write_text(GUARD)  # the same bytes, another place
    (ws / ".claude" / "hooks").unlink()
    (ws / ".claude" / "hooks").symlink_to("../a/c")
    seen = only(settings, home, ws)
    assert seen.status == "changed" and set(seen.pin.files) == {"a/c/guard.sh"}
    fake = allow()
    assert run(settings, home, ws, fake).answer.get("permissionDecision") == "deny"
    assert fake.requests == []


def test_a_chain_of_links_is_pinned_link_by_link(home, ws) -> None:
    project(ws, command=COMMAND)
    (ws / "y" / "z").mkdir(parents=True)
    (ws / ".claude" / "hooks" / "guard.sh").rename(ws / "y" / "z" / "guard.sh")
    (ws / ".claude" / "hooks").rmdir()
    (ws / ".claude" / "hooks").symlink_to("../x")
    (ws / "x").symlink_to("y/z")
    settings = Settings.load(agent="claude", review="required")
    record = only(settings, home, ws).pin.files["y/z/guard.sh"]
    assert record["link"] == ".claude/hooks -> ../x; x -> y/z" and record["bytes"]
    approve_all(settings, home, ws)
    (ws / "y" / "w").mkdir()
    (ws / "y" / "w" / "guard.sh").write_text(GUARD)
    (ws / "x").unlink()
    (ws / "x").symlink_to("y/w")  # the link in the middle, elsewhere
    assert only(settings, home, ws).status == "changed"
    (ws / "x").unlink()
    (ws / "x").symlink_to("x")  # a loop: no file, but where the links lead is pinned
    seen = only(settings, home, ws)
    [(path, record)] = seen.pin.files.items()
    assert record["sha256"] is None and record["link"].startswith(".claude/hooks -> ../x")
    assert seen.status == "changed" and path.startswith("x")


def test_a_path_that_leaves_the_workspace_and_comes_back(home, ws, tmp_path) -> None:
    """Out by `..` to the folders above the workspace and back by its name, with or
    without a symlink: pinned where it lands, its bytes read there. Out through any
    other place: the sandbox has its own files there, not the host's, so a symlink of
    the host there is not followed: pinned as outside, never read."""
    settings = Settings.load(agent="claude", review="required")
    project(ws, command=f'sh "$CLAUDE_PROJECT_DIR"/../{ws.name}/.claude/hooks/guard.sh')
    record = only(settings, home, ws).pin.files[".claude/hooks/guard.sh"]
    assert record["link"] is None and record["bytes"]
    project(ws)
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "guard.sh").write_text(GUARD)
    (ws / ".claude" / "hooks" / "guard.sh").unlink()
    (ws / ".claude" / "hooks").rmdir()
    (ws / ".claude" / "hooks").symlink_to(f"../../{ws.name}/a/b")
    record = only(settings, home, ws).pin.files["a/b/guard.sh"]
    assert record["link"] == f".claude/hooks -> ../../{ws.name}/a/b" and record["bytes"]
    approve_all(settings, home, ws)
    (ws / ".claude" / "hooks").unlink()
    (ws / ".claude" / "hooks").symlink_to(f"../../{ws.name}/a/../a/b")  # the same file
    assert only(settings, home, ws).status == "changed"  # but not the same way there
    outside = tmp_path / "out"
    outside.symlink_to(ws / "a" / "b")
    (ws / ".claude" / "hooks").unlink()
    (ws / ".claude" / "hooks").symlink_to(outside)
    seen = only(settings, home, ws)
    [(path, record)] = seen.pin.files.items()
    assert path == str(outside / "guard.sh") and record["outside"] and record["bytes"] is None
    assert record["link"] == f".claude/hooks -> {outside}" and seen.status == "changed"


def test_a_symlink_to_no_regular_file_is_pinned_as_such(home, ws) -> None:
    """A word that a symlink of the workspace sends to a device, or to nothing: not a
    file to hash, but where it leads is in the pin and its diff (`sh x` with `x ->
    /dev/stdin` runs the event as a script)."""
    project(ws, command="sh ./x ./gone")
    (ws / "x").symlink_to("/dev/stdin")
    (ws / "gone").symlink_to("nothing/here")
    pin = only(Settings.load(agent="claude"), home, ws).pin
    assert pin.files["/dev/stdin"]["link"] == "x -> /dev/stdin"
    assert pin.files["/dev/stdin"]["outside"] and pin.files["/dev/stdin"]["sha256"] is None
    assert pin.files["nothing/here"]["link"] == "gone -> nothing/here"


def test_words_that_name_no_workspace_file_are_words(home, ws) -> None:
    """The host's programs (`/bin/sh`, `sh`) are no pin's files: only what the workspace
    holds or a symlink of it points at."""
    project(ws, command="/bin/sh ./.claude/hooks/guard.sh /etc/hostname")
    pin = only(Settings.load(agent="claude"), home, ws).pin
    assert set(pin.files) == {".claude/hooks/guard.sh"}
    assert "/bin/sh" in pin.entry["shape"] and "/etc/hostname" in pin.entry["shape"]


# Written by sandboxrun at f349a0e (`review --approve --pins`, pins version 2) for
# `reproduction`'s workspace with two hooks: COMMAND through the symlinked folder
# (pinned at `.claude/hooks/guard.sh` with a/b/guard.sh's bytes), and DOTDOT (pinned the
# same, though a/hooks/guard.sh runs).
DECOY_SHA = "4c90815f6bae1f1d8bad8c0d01055fbf810366403c6ee15c71b6aee88657ca8e"
V2_FILE = {"bytes": "IyEvYmluL3NoCmVjaG8gZ3VhcmQgPiYyOyBleGl0IDIK", "link": None,
           "mode": "0755", "sha256": DECOY_SHA, "size": 33}  # fmt: skip
V2_DECOY = "#!/bin/sh\necho guard >&2; exit 2\n"


def v2_pin(command: str, words: list[str]) -> dict[str, object]:
    return {"agent": "claude", "event": "PreToolUse", "name": command, "version": 2,
            "key": f"run\x1fclaude\x1fPreToolUse\x1f{command}",
            "entry": {"command": ["/bin/sh", "-c", command], "condition": None,
                      "kind": "run", "matcher": "Bash", "source": "project",
                      "shape": ["/bin/sh", "-c", *words, f"\0{DECOY_SHA}:None"]},
            "files": {".claude/hooks/guard.sh": V2_FILE}}  # fmt: skip


def upgraded(ws: Path, tmp_path: Path) -> Path:
    """`reproduction`'s workspace with both hooks, and the export version 2 wrote."""
    reproduction(ws)
    (ws / "a" / "b" / "guard.sh").write_text(V2_DECOY)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": c}
                                          for c in (COMMAND, DOTDOT)]}  # fmt: skip
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    export = tmp_path / "v2.json"
    hooks = [v2_pin(COMMAND, []), v2_pin(DOTDOT, ["sh"])]
    export.write_text(json.dumps({"format": 1, "hooks": hooks}))
    return export


def test_a_version_2_pin_stays_approved_when_its_bytes_are_what_runs(home, ws, tmp_path):
    """No mass re-review after an upgrade: a version 2 pin whose bytes are those of the
    file the kernel opens is approved (then written anew); one whose bytes are not is
    changed (the issue's reproduction, approved before this fix)."""
    export = upgraded(ws, tmp_path)
    gate = Settings.load(agent="claude", review="required", review_pins=str(export),
                         fail_closed=True)  # fmt: skip
    by_name = {s.pin.name: s.status for s in scan(gate, [str(ws)], str(home), ["claude"])}
    assert by_name == {COMMAND: "approved", DOTDOT: "changed"}
    before = export.read_text()
    fake = allow()
    res = run(gate, home, ws, fake)
    assert [r.argv[-1] for r in fake.requests] == [COMMAND]  # the other is held
    assert res.answer.get("permissionDecision") == "deny"
    assert export.read_text() == before  # an export is written by `review --approve` only
    # The user's own pins: migrated on the next run.
    store = PinStore(str(home), str(ws))
    store.save(PinStore(str(home), str(ws), str(export)).load())
    run(Settings.load(agent="claude"), home, ws)
    pins = {p.name: p for p in store.load().values()}
    assert pins[COMMAND].version == 3 and set(pins[COMMAND].files) == {"a/b/guard.sh"}
    assert pins[DOTDOT].version == 2  # changed: not approved, not migrated
    assert {
        s.pin.name: s.status
        for s in scan(
            gate.model_copy(update={"review_pins": None}), [str(ws)], str(home), ["claude"]
        )
    } == by_name


def test_a_version_2_pin_changed_through_a_symlink_is_held(home, ws, tmp_path) -> None:
    """Its approved bytes are bound only where version 2 looked is where the kernel
    opens: never through a symlink."""
    export = upgraded(ws, tmp_path)
    (ws / "a" / "b" / "guard.sh").write_text(WEAK)
    gate = Settings.load(agent="claude", review="required", review_pins=str(export),
                         fail_closed=True)  # fmt: skip
    fake = allow()
    res = run(gate, home, ws, fake)
    assert fake.requests == [] and len(res.outcomes) == 2
    assert all("one is reached by a symlink" in (o.error or "") for o in res.outcomes)


def test_words_count_their_links_from_where_the_hook_stands(ws) -> None:
    """A working directory reached through a symlink is where the agent put the hook:
    its words resolve from there, and words that name nothing stay words."""
    (ws / "real").mkdir()
    (ws / "real" / "guard.sh").write_text(GUARD)
    (ws / "sub").symlink_to("real")
    spec = HookSpec(hook_name="PreToolUse", name="g", source="project", mounts=(),
                    argv=("/bin/sh", "-c", "echo hi && sh ./guard.sh"),
                    workdir=str(ws / "sub"))  # fmt: skip
    pin = identify("claude", spec, str(ws))
    assert set(pin.files) == {"real/guard.sh"} and pin.files["real/guard.sh"]["link"] is None
    assert pin.entry["shape"][:5] == ["/bin/sh", "-c", "echo", "hi", "&&"]
