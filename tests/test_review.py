"""Review of repository hooks (issue 22): pins by hash, the diff, holds until approved.

Claude Code's hook settings (`.claude/settings.json`, `"$CLAUDE_PROJECT_DIR"/...` in a
command) as in tests/test_claude_dialect.py; the runs go to a FakeBackend.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import ExecRequest, ExecResult, FakeBackend, HookFactory, Settings, _review
from sandboxrun._review.pins import PinStore, pins_root
from sandboxrun._review.show import diff, pending, scan, summary

GUARD = '#!/bin/sh\ncase "$(cat)" in *"rm -rf"*) echo no >&2; exit 2;; esac\nexit 0\n'
WEAK = "#!/bin/sh\nexit 0\n"
COMMAND = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'


def project(ws: Path, body: str = GUARD, command: str = COMMAND, name: str = "guard.sh") -> Path:
    """A workspace whose PreToolUse hook runs `.claude/hooks/<name>` (its body `body`)."""
    hook = ws / ".claude" / "hooks" / name
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(body)
    hook.chmod(0o755)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    return hook


def event(ws: Path) -> dict[str, Any]:
    return {"session_id": "s", "cwd": str(ws), "tool_name": "Bash",
            "tool_input": {"command": "rm -rf /"}, "hook_event_name": "PreToolUse"}  # fmt: skip


def allow() -> FakeBackend:
    return FakeBackend(lambda request: ExecResult(0, b"", b"", 3))


def run(settings: Settings, home: Path, ws: Path, fake: FakeBackend | None = None) -> Any:
    return HookFactory(settings, fake or allow(), home=str(home)).run("PreToolUse", event(ws))


def approve_all(settings: Settings, home: Path, ws: Path) -> None:
    _review.approve(pending(scan(settings, [str(ws)], str(home), ["claude"])))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_weakened_guard_is_reported_with_its_diff(home, ws) -> None:
    """warn (the default): a checkout's hooks run and are pinned on first sight; after a
    commit weakens one, it still runs, its report says so, and `review` shows what was
    taken out."""
    settings = Settings.load(agent="claude")
    assert settings.review == "warn"
    hook = project(ws)
    first = run(settings, home, ws).to_json()["hooks"][0]
    assert "review" not in first  # the first run in a checkout: pinned quietly
    assert run(settings, home, ws).to_json()["hooks"][0].get("review") is None  # pinned
    assert list(pins_root(str(home)).glob("*.json"))  # in the user's data folder
    assert not any(p.name.startswith(".pins") for p in ws.rglob("*"))  # never the workspace
    hook.write_text(WEAK)
    fake = allow()
    report = run(settings, home, ws, fake).to_json()["hooks"][0]
    assert len(fake.requests) == 1  # warn never changes what runs
    assert report["review"] == "changed"
    assert "changed since approved: run `sandboxrun review`" in report["reviewNote"]
    [seen] = pending(scan(settings, [str(ws)], str(home), ["claude"]))
    assert seen.status == "changed"
    text = diff(seen)
    assert '-case "$(cat)" in *"rm -rf"*) echo no >&2; exit 2;; esac' in text
    assert "approved: .claude/hooks/guard.sh" in text
    assert "await review" in (summary([seen]) or "")


def test_required_holds_a_changed_hook_and_blocks_under_fail_closed(home, ws) -> None:
    """A changed hook whose approved version cannot run in its place (here: its matcher
    changed too) is held, a block under fail-closed (tests/test_review_approved.py: the
    approved version runs where it can)."""
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    hook = project(ws)
    approve_all(settings, home, ws)
    fake = allow()
    run(settings, home, ws, fake)
    assert len(fake.requests) == 1  # approved: runs
    hook.write_text(WEAK)
    settings_file = ws / ".claude" / "settings.json"
    settings_file.write_text(settings_file.read_text().replace('"Bash"', '"Bash|Read"'))
    fake = allow()
    res = run(settings, home, ws, fake)
    assert fake.requests == []  # held: never started
    [outcome] = res.outcomes
    assert outcome.status == "error" and "not run: awaiting review" in (outcome.error or "")
    assert "its approved version cannot run: its matcher changed" in (outcome.error or "")
    assert res.to_json()["hooks"][0]["review"] == "awaiting review"
    assert res.answer.get("permissionDecision") == "deny"  # fail-closed: a block


def test_required_has_no_trust_on_first_use(home, ws) -> None:
    """A hook seen for the first time under required is held, and not pinned."""
    settings = Settings.load(agent="claude", review="required", fail_closed=True)
    project(ws)
    fake = allow()
    res = run(settings, home, ws, fake)
    assert fake.requests == [] and "awaiting review" in (res.outcomes[0].error or "")
    assert res.answer.get("permissionDecision") == "deny"  # fail-closed: a block
    assert pending(scan(settings, [str(ws)], str(home), ["claude"]))[0].status == "new"
    res = run(settings, home, ws, allow())  # still held: seeing it was no approval
    assert res.outcomes[0].status == "error"


def test_user_hooks_are_never_held(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required")
    user = home / ".claude" / "settings.json"
    user.parent.mkdir(parents=True)
    entry = {"hooks": [{"type": "command", "command": "mine.sh"}]}
    user.write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    fake = allow()
    res = run(settings, home, ws, fake)
    assert len(fake.requests) == 1 and res.outcomes[0].spec.review is None


def test_chmod_alone_is_shown_but_not_a_content_change(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required")
    hook = project(ws)
    approve_all(settings, home, ws)
    hook.chmod(0o700)
    fake = allow()
    res = run(settings, home, ws, fake)
    assert len(fake.requests) == 1  # same bytes: runs even under required
    assert res.to_json()["hooks"][0]["review"] == "mode"
    [seen] = pending(scan(settings, [str(ws)], str(home), ["claude"]))
    assert "mode .claude/hooks/guard.sh: 0755 -> 0700" in diff(seen)


def test_rename_alone_is_shown_but_not_a_content_change(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required")
    project(ws)
    approve_all(settings, home, ws)
    shutil.rmtree(ws / ".claude")
    project(ws, command='"$CLAUDE_PROJECT_DIR"/.claude/hooks/g2.sh', name="g2.sh")
    fake = allow()
    res = run(settings, home, ws, fake)
    assert len(fake.requests) == 1
    assert res.to_json()["hooks"][0]["review"] == "renamed"
    [seen] = pending(scan(settings, [str(ws)], str(home), ["claude"]))
    assert "renamed:" in diff(seen)
    approve_all(settings, home, ws)
    assert pending(scan(settings, [str(ws)], str(home), ["claude"])) == []


def test_rename_with_another_command_is_new(home, ws) -> None:
    """Same files but other words in the command: no rename, a new hook (held)."""
    settings = Settings.load(agent="claude", review="required")
    project(ws)
    approve_all(settings, home, ws)
    project(ws, command=COMMAND + " --skip-checks")
    fake = allow()
    run(settings, home, ws, fake)
    assert fake.requests == []


def test_a_swapped_symlink_is_a_change(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required")
    hook = project(ws)
    (ws / "a.sh").write_text(GUARD)
    (ws / "b.sh").write_text(GUARD)  # the same bytes: only the target differs
    hook.unlink()
    hook.symlink_to(ws / "a.sh")
    approve_all(settings, home, ws)
    hook.unlink()
    hook.symlink_to(ws / "b.sh")
    fake = allow()
    run(settings, home, ws, fake)
    assert fake.requests == []
    [seen] = pending(scan(settings, [str(ws)], str(home), ["claude"]))
    assert seen.status == "changed"
    assert f"symlinks to b.sh: approved .claude/hooks/guard.sh -> {ws / 'a.sh'}; now" in diff(seen)


def test_a_symlink_out_of_the_workspace_is_pinned_by_target_never_read(home, ws, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("TOKEN=hunter2\n")
    hook = project(ws)
    hook.unlink()
    hook.symlink_to(secret)
    settings = Settings.load(agent="claude")
    [seen] = scan(settings, [str(ws)], str(home), ["claude"])
    record = seen.pin.files[str(secret)]  # pinned where it resolves
    assert record["link"] == f".claude/hooks/guard.sh -> {secret}"
    assert record["bytes"] is None and record["outside"]
    assert "hunter2" not in diff(seen)


def test_pins_of_one_workspace_never_approve_another(home, tmp_path) -> None:
    settings = Settings.load(agent="claude", review="required")
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    project(one), project(two)
    approve_all(settings, home, one)
    assert pending(scan(settings, [str(one)], str(home), ["claude"])) == []
    assert pending(scan(settings, [str(two)], str(home), ["claude"]))[0].status == "new"
    # A pins file copied to the other workspace's place approves nothing there either.
    shutil.copy(PinStore(str(home), str(one)).path, PinStore(str(home), str(two)).path)
    fake = allow()
    run(settings, home, two, fake)
    assert fake.requests == []


def test_a_repository_cannot_set_review(home, ws, monkeypatch) -> None:
    """Only the user's config sets `review`: not the environment (which a repository's
    settings can give hooks), and nothing is read from the workspace."""
    monkeypatch.setenv("SANDBOXRUN_REVIEW", "off")
    (ws / "config.toml").write_text('review = "off"\n')
    (ws / ".sandboxrun.toml").write_text('review = "off"\n')
    monkeypatch.chdir(ws)
    assert Settings.load().review == "warn"


def test_the_export_is_the_ci_gate(home, ws, tmp_path) -> None:
    """`review --approve --pins FILE` writes pins without the workspace's path, which
    a checkout elsewhere (the CI's) reads back through `review_pins`."""
    settings = Settings.load(agent="claude")
    project(ws)
    export = tmp_path / "pins.json"
    _review.approve(scan(settings, [str(ws)], str(home), ["claude"]), str(export))
    assert str(ws) not in export.read_text()
    clone = tmp_path / "clone"
    shutil.copytree(ws, clone)
    gate = Settings.load(agent="claude", review="required", review_pins=str(export))
    fake = allow()
    run(gate, home, clone, fake)
    assert len(fake.requests) == 1
    (clone / ".claude/hooks/guard.sh").write_text(WEAK)
    fake = allow()
    run(gate, home, clone, fake)
    [request] = fake.requests  # the approved version, from the export, in its place
    assert [t for t, _ in request.overlays] == [str(clone / ".claude/hooks/guard.sh")]


def exec_request(ws: Path) -> ExecRequest:
    return ExecRequest(argv=("/bin/bash", "-c", COMMAND), stdin=b"", workdir=str(ws),
                       mounts=(str(ws),), env={"CLAUDE_PROJECT_DIR": str(ws)})  # fmt: skip


def test_exec_untrusted_is_held_under_required(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required")
    project(ws)
    stdin = json.dumps(event(ws)).encode()
    assert _review.exec_gate(settings, [COMMAND], exec_request(ws), stdin, False).status == "held"
    warn = Settings.load(agent="claude")
    assert (
        _review.exec_gate(warn, [COMMAND], exec_request(ws), stdin, False).status is None
    )  # pinned
    assert _review.exec_gate(settings, [COMMAND], exec_request(ws), stdin, False).status is None
    (ws / ".claude/hooks/guard.sh").write_text(WEAK)
    changed = _review.exec_gate(settings, [COMMAND], exec_request(ws), stdin, False)
    assert changed.status == "awaiting review"  # its approved version runs instead
    assert [f.data for f in changed.approved] == [GUARD.encode()]
    assert _review.exec_gate(warn, [COMMAND], exec_request(ws), stdin, False).status == "changed"


def test_exec_warning_goes_where_the_user_sees_it_never_on_a_block() -> None:
    out, line = _review.exec_note("claude", b"", 0, "changed")
    assert "changed since approved" in json.loads(out)["systemMessage"] and line == b""
    out, line = _review.exec_note("claude", b'{"systemMessage": "hi"}', 0, "changed")
    assert json.loads(out)["systemMessage"].startswith("hi\n")
    assert _review.exec_note("claude", b"", 2, "changed") == (b"", b"")  # a block: untouched
    assert _review.exec_note("claude", b"plain text", 0, "new")[0] == b"plain text"
    out, line = _review.exec_note("cline", b"", 0, "changed")
    assert out == b"" and b"run `sandboxrun review`" in line


def test_review_is_audited(home, ws, tmp_path) -> None:
    log = tmp_path / "audit.jsonl"
    settings = Settings.load(agent="claude", review="required", audit_log=str(log))
    project(ws)
    run(settings, home, ws)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    held = [r for r in lines if r["entry"] == "review"]
    assert held and held[0]["decision"] == "held" and held[0]["status"] == "new"
    assert os.path.isfile(log)


def test_a_hook_added_later_is_reported_new_under_warn(home, ws) -> None:
    settings = Settings.load(agent="claude")
    project(ws)
    run(settings, home, ws)  # pinned on first sight
    project(ws, command=COMMAND + " --strict")  # a later commit adds (replaces) a hook
    report = run(settings, home, ws).to_json()["hooks"][0]
    assert report["review"] == "new" and "pinned on first sight" in report["reviewNote"]
    assert run(settings, home, ws).to_json()["hooks"][0].get("review") is None  # now pinned


def test_a_folder_symlink_out_of_the_workspace_is_never_read(home, ws, tmp_path) -> None:
    """`.claude/hooks` a symlink to a folder outside (`~/.ssh`): the file the command
    names through it is pinned as outside, its bytes never read or kept."""
    outside = tmp_path / "dotssh"
    outside.mkdir()
    (outside / "guard.sh").write_text("PRIVATE KEY\n")
    project(ws)
    shutil.rmtree(ws / ".claude" / "hooks")
    (ws / ".claude" / "hooks").symlink_to(outside)
    [seen] = scan(Settings.load(agent="claude"), [str(ws)], str(home), ["claude"])
    record = seen.pin.files[str(outside / "guard.sh")]
    assert record["outside"] and record["bytes"] is None and record["sha256"] is None
    assert record["link"] == f".claude/hooks -> {outside}"
    assert "PRIVATE KEY" not in diff(seen)


def test_every_file_a_compound_command_names_is_pinned(home, ws) -> None:
    """Shell metacharacters: each command of `a; b && c | d` is read for files."""
    project(ws, command="./.claude/hooks/guard.sh;./x.sh&&sh ./y.sh | ./z.sh")
    for name in ("x.sh", "y.sh", "z.sh"):
        (ws / name).write_text(name)
    [seen] = scan(Settings.load(agent="claude"), [str(ws)], str(home), ["claude"])
    assert set(seen.pin.files) == {".claude/hooks/guard.sh", "x.sh", "y.sh", "z.sh"}


def test_cline_hook_file_is_pinned_and_a_chmod_that_turns_it_on_is_new(home, ws) -> None:
    """The VS Code extension runs only executable hook files: a chmod +x is a new hook."""
    settings = Settings.load(agent="cline", cline_variant="vscode")
    hook = ws / ".clinerules" / "hooks" / "PreToolUse"
    hook.parent.mkdir(parents=True)
    hook.write_text(GUARD)
    hook.chmod(0o644)
    assert scan(settings, [str(ws)], str(home), ["cline"]) == []  # off: not a hook
    hook.chmod(0o755)
    [seen] = scan(settings, [str(ws)], str(home), ["cline"])
    assert seen.status == "new" and ".clinerules/hooks/PreToolUse" in seen.pin.files


def test_exec_reads_the_pins_review_approved(home, ws) -> None:
    """`install` wraps the command in `exec --untrusted`; `review` shows the hook (read
    past the wrapper) and its approval is the one `exec` compares with."""
    warn = Settings.load(agent="claude")
    required = Settings.load(agent="claude", review="required")
    hook = project(ws)
    stdin = json.dumps(event(ws)).encode()
    approve_all(warn, home, ws)
    assert _review.exec_gate(required, [COMMAND], exec_request(ws), stdin, False).status is None
    hook.write_text(WEAK)
    assert _review.exec_gate(warn, [COMMAND], exec_request(ws), stdin, False).status == "changed"
    review = _review.exec_gate(required, [COMMAND], exec_request(ws), stdin, False)
    assert review.status == "awaiting review" and review.approved[0].data == GUARD.encode()
    approve_all(warn, home, ws)
    assert _review.exec_gate(required, [COMMAND], exec_request(ws), stdin, False).status is None


def test_files_that_swap_places_are_no_rename(home, ws) -> None:
    settings = Settings.load(agent="claude", review="required")
    project(ws, command="./a.sh ./b.sh")
    (ws / "a.sh").write_text("A")
    (ws / "b.sh").write_text("B")
    approve_all(settings, home, ws)
    project(ws, command="./c.sh ./d.sh")  # the same bytes, in other places
    (ws / "c.sh").write_text("B")
    (ws / "d.sh").write_text("A")
    # The approved command is gone (removed), another is there (new).
    found = pending(scan(settings, [str(ws)], str(home), ["claude"]))
    assert sorted(s.status for s in found) == ["new", "removed"]
    (ws / "c.sh").write_text("A")
    (ws / "d.sh").write_text("B")
    [seen] = pending(scan(settings, [str(ws)], str(home), ["claude"]))
    assert seen.status == "renamed"


def test_exec_reads_the_pins_review_approved_for_copilots_hooks(home, ws) -> None:
    """Copilot's camelCase input names no event: exec keys an approval by install's
    `--event`, else by the event the dialect derives from the input. Keyed by none, an
    approved Copilot guard was held as new under required (no decision: Copilot's own
    flow let the call through; seen with the real CLI, tests/agents/test_copilot.py)."""
    command = '"$COPILOT_PROJECT_DIR"/.github/hooks/guard.sh'
    hook = ws / ".github" / "hooks" / "guard.sh"
    hook.parent.mkdir(parents=True)
    hook.write_text(GUARD)
    hook.chmod(0o755)
    entry = {"type": "command", "bash": command}
    (hook.parent / "hooks.json").write_text(json.dumps({"version": 1,
                                                        "hooks": {"preToolUse": [entry]}}))  # fmt: skip
    _review.approve(pending(scan(Settings.load(agent="copilot"), [str(ws)], str(home),
                                 ["copilot"])))  # fmt: skip
    required = Settings.load(agent="copilot", review="required")
    stdin = json.dumps({"sessionId": "s", "timestamp": 1, "cwd": str(ws), "toolName": "bash",
                        "toolArgs": {"command": "rm -r victim"}}).encode()  # fmt: skip
    request = ExecRequest(argv=("/bin/bash", "-c", command), stdin=b"", workdir=str(ws),
                          mounts=(str(ws),), env={"COPILOT_PROJECT_DIR": str(ws)})  # fmt: skip
    for named in ("preToolUse", None):
        review = _review.exec_gate(required, [command], request, stdin, False, named)
        assert review.status is None, named
    hook.write_text(WEAK)
    review = _review.exec_gate(required, [command], request, stdin, False, "preToolUse")
    assert review.status == "awaiting review" and review.approved[0].data == GUARD.encode()
