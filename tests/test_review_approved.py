"""Under `review = "required"`, a changed repository hook with an approved earlier
version runs that version (its pinned bytes bound over the changed files), reported as
`awaiting review`; where that cannot be done faithfully it is held (issue 22).
Claude Code's hook settings as in tests/test_review.py; runs go to a FakeBackend."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

import pytest

from sandboxrun import ExecRequest, ExecResult, FakeBackend, Settings, _review
from sandboxrun._backends.docker.backend import DockerBackend
from sandboxrun._backends.helper import Helper
from sandboxrun._errors import ConfigError
from sandboxrun._review.pins import MAX_KEPT
from sandboxrun._runner.exec import run_exec
from sandboxrun._types import ApprovedFile
from tests.test_kubernetes_pod import WS, pod, request
from tests.test_review import COMMAND, GUARD, WEAK, approve_all, event, exec_request, project, run
from tests.test_review import ws as ws  # the fixture


def required() -> Settings:
    return Settings.load(agent="claude", review="required", fail_closed=True)


class Seeing:
    """A FakeBackend's handler that records what each run's overlays held, while it ran."""

    def __init__(self) -> None:
        self.seen: list[dict[str, object]] = []

    def __call__(self, request: ExecRequest) -> ExecResult:
        for target, source in request.overlays:
            folder = os.path.dirname(source)
            self.seen.append({
                "target": target, "source": source, "bytes": Path(source).read_bytes(),
                "mode": stat.S_IMODE(os.stat(source).st_mode),
                "folder": stat.S_IMODE(os.stat(folder).st_mode),
            })  # fmt: skip
        return ExecResult(0, b"", b"", 3)


def test_a_weakened_guard_runs_its_approved_version(home, ws, tmp_path) -> None:
    log = tmp_path / "audit.jsonl"
    settings = Settings.load(agent="claude", review="required", fail_closed=True,
                             audit_log=str(log))  # fmt: skip
    hook = project(ws)
    approve_all(settings, home, ws)
    hook.write_text(WEAK)
    seeing = Seeing()
    fake = FakeBackend(seeing)
    res = run(settings, home, ws, fake)
    [request] = fake.requests
    [bound] = seeing.seen
    assert bound["target"] == str(hook) and bound["bytes"] == GUARD.encode()
    assert bound["mode"] == 0o755 and bound["folder"] == 0o700
    assert not Path(str(bound["source"])).is_relative_to(ws)  # never in the workspace
    assert not os.path.exists(os.path.dirname(str(bound["source"])))  # removed after
    report = res.to_json()["hooks"][0]
    assert report["review"] == "awaiting review" and report["ranApproved"] is True
    assert "approved version ran in its place" in report["reviewNote"]
    assert request.argv == ("/bin/sh", "-c", '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh')
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["decision"] for r in lines if r["entry"] == "review"] == ["ran approved"]


def test_a_new_hook_is_still_held(home, ws) -> None:
    project(ws)
    fake = FakeBackend(Seeing())
    res = run(required(), home, ws, fake)
    assert fake.requests == [] and res.answer.get("permissionDecision") == "deny"
    assert "ranApproved" not in res.to_json()["hooks"][0]


def held(home: Path, ws: Path) -> str:
    """Run the workspace's hook under required: it must be held; its error."""
    fake = FakeBackend(Seeing())
    res = run(required(), home, ws, fake)
    assert fake.requests == [], "ran"
    [outcome] = res.outcomes
    assert res.answer.get("permissionDecision") == "deny"  # fail-closed: a block
    assert outcome.error and outcome.error.startswith("not run: awaiting review")
    return outcome.error


def approved_then(home: Path, ws: Path) -> Path:
    hook = project(ws)
    approve_all(required(), home, ws)
    return hook


def test_a_hook_file_replaced_by_a_folder_is_held(home, ws) -> None:
    hook = approved_then(home, ws)
    hook.unlink()
    hook.mkdir()
    assert "guard.sh is no longer a file" in held(home, ws)


def test_a_deleted_hook_file_is_held(home, ws) -> None:
    approved_then(home, ws).unlink()
    assert "is no longer a file" in held(home, ws)


def test_a_symlink_out_of_the_workspace_at_the_hooks_path_is_held(home, ws, tmp_path) -> None:
    hook = approved_then(home, ws)
    outside = tmp_path / "outside.sh"
    outside.write_text(WEAK)
    hook.unlink()
    hook.symlink_to(outside)
    # Pinned where it resolves: another file than the one approved.
    assert f"guard.sh is no longer a file it reaches; {outside} is new" in held(home, ws)


def test_a_symlink_inside_the_workspace_at_the_hooks_path_is_held(home, ws) -> None:
    """A bind follows a symlink at its target, inside the container's own root: the
    approved bytes are never bound through one."""
    hook = approved_then(home, ws)
    (ws / "weak.sh").write_text(WEAK)
    hook.unlink()
    hook.symlink_to(ws / "weak.sh")
    assert "weak.sh is new" in held(home, ws)


def test_a_changed_file_reached_through_a_symlink_is_held(home, ws) -> None:
    """Approved as reached through a symlink, then changed: its approved bytes are never
    bound (a bind follows a symlink at its target, inside the container's own root)."""
    hook = project(ws)
    (ws / "real.sh").write_text(GUARD)
    hook.unlink()
    hook.symlink_to(ws / "real.sh")
    approve_all(required(), home, ws)
    (ws / "real.sh").write_text(WEAK)
    assert "real.sh is or was a symlink" in held(home, ws)


def test_a_folder_on_the_way_swapped_for_a_symlink_is_held(home, ws) -> None:
    hook = approved_then(home, ws)
    other = ws / "other"
    other.mkdir()
    (other / "guard.sh").write_text(WEAK)
    (other / "guard.sh").chmod(0o755)
    hook.unlink()
    hook.parent.rmdir()
    hook.parent.symlink_to(other)
    assert "other/guard.sh is new" in held(home, ws)


def test_a_file_too_large_to_keep_is_held(home, ws) -> None:
    hook = project(ws, body="#!/bin/sh\n" + "#" * MAX_KEPT + "\n")
    approve_all(required(), home, ws)
    hook.write_text(WEAK)
    assert "approved bytes were not kept" in held(home, ws)


def test_a_file_the_command_names_that_appeared_is_held(home, ws) -> None:
    project(ws, command="./.claude/hooks/guard.sh ./allow-list.txt")
    approve_all(required(), home, ws)
    (ws / "allow-list.txt").write_text("rm\n")
    assert "allow-list.txt is new" in held(home, ws)


def test_a_temporary_folder_inside_the_workspace_is_refused(home, ws, monkeypatch) -> None:
    hook = approved_then(home, ws)
    hook.write_text(WEAK)
    inside = ws / "tmp"
    inside.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(inside))
    assert "lies inside a mount" in held(home, ws)
    assert list(inside.iterdir()) == []  # and nothing of it was left there


def test_paths_that_leave_the_workspace_are_never_bound() -> None:
    from sandboxrun._review.approved import _unfit

    record = {"sha256": "x", "link": None, "mode": "0755", "bytes": None}
    for rel in ("../x", "/etc/passwd", "a/../../x", "a//b"):
        assert "not a path inside the workspace" in str(_unfit(rel, record, record))


def test_bound_checks_the_target_right_before_the_run(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "g.sh").write_text(WEAK)
    files = (ApprovedFile(str(ws / "g.sh"), GUARD.encode(), 0o755),)
    with _review.bound(files, [str(ws)]) as overlays:
        [(target, source)] = overlays
        assert target == str(ws / "g.sh") and Path(source).read_bytes() == GUARD.encode()
    assert not os.path.exists(source)
    elsewhere = _review.bound(files, [str(tmp_path / "elsewhere")])
    with pytest.raises(_review.NotFaithful, match="not in what the sandbox mounts"), elsewhere:
        pass


def test_exec_runs_the_approved_version(home, ws) -> None:
    settings = required()
    hook = approved_then(home, ws)
    hook.write_text(WEAK)
    stdin = json.dumps(event(ws)).encode()
    review = _review.exec_gate(settings, [COMMAND], exec_request(ws), stdin, False)
    assert review.status == "awaiting review"
    seeing = Seeing()
    fake = FakeBackend(seeing)
    out = run_exec(settings, fake, exec_request(ws), approved=review.approved)
    assert out.exit_code == 0 and seeing.seen[0]["bytes"] == GUARD.encode()
    hook.unlink()
    hook.mkdir()  # between the gate and the run: held, a block under fail-closed
    out = run_exec(settings, fake, exec_request(ws), approved=review.approved)
    assert out.sandbox_ended and out.exit_code == 2 and b"awaiting review" in out.stderr
    assert len(fake.requests) == 1


def test_a_run_with_overlays_goes_cold(home, tmp_path) -> None:
    """A pooled container's mounts are fixed when it starts: the approved files of one
    run are never in them."""
    backend = DockerBackend(Settings.load(agent="claude"), client=object(), warm=True)
    backend._helper = Helper("/usr/local/bin/sandboxrun-seccomp", protocol=2, gate=True)
    overlaid = ExecRequest(argv=("true",), stdin=b"", workdir="/w", mounts=("/w",),
                           overlays=(("/w/g.sh", str(tmp_path / "0")),))  # fmt: skip
    assert backend._pooled(overlaid) is None


def test_the_kubernetes_backend_holds_it() -> None:
    with pytest.raises(ConfigError, match="not run: awaiting review"):
        pod(request(overlays=((f"{WS}/g.sh", "/tmp/x/0"),)))


def test_a_backend_that_refuses_it_never_reports_it_ran(home, ws) -> None:
    hook = approved_then(home, ws)
    hook.write_text(WEAK)

    def refuse(request: ExecRequest) -> ExecResult:
        raise ConfigError("not run: awaiting review (the backend cannot bind files)")

    res = run(required(), home, ws, FakeBackend(refuse))
    report = res.to_json()["hooks"][0]
    assert report["status"] == "error" and "ranApproved" not in report
    assert report["review"] == "awaiting review"
    assert res.answer.get("permissionDecision") == "deny"
