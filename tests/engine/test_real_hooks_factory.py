"""Factory Droid hooks from public repositories (issue 18, item 7; provenance and licences
in tests/real_hooks/factory/PROVENANCE.md), each run as Droid runs it on the host and
then through `sandboxrun exec --agent factory`, with the same decision: a guard that
blocks an edit of `.env`, a secret scanner, a Stop report, a lead-list gate that blocks
(also through `run`, from the repository's wrapped hooks.json), and a formatter that
needs a workspace write, whose failure the sandbox names."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxrun import DockerBackend

from .claudelike_hooks import bare, boxed, checkout, event_for, run_event

VAR = "FACTORY_PROJECT_DIR"
SDL = "portalonline-gmap-scraper"


def both(tmp_path: Path, folder: str) -> tuple[Path, Path]:
    """Two clones of one repository: one for the host run, one for the sandboxed run."""
    return (checkout("factory", folder, tmp_path / "host" / folder),
            checkout("factory", folder, tmp_path / "box" / folder))  # fmt: skip


@pytest.mark.parametrize(("path", "code"), [(".env", 2), ("app/main.py", 0)])
def test_protect_files_guard_blocks_an_env_edit(
    engine: DockerBackend, tmp_path: Path, path: str, code: int
) -> None:
    """sdldev/portalonline-gmap-scraper .factory/hooks/protect-files.sh (bash, jq): an
    Edit of `.env` is refused with exit 2 and the reason on stderr, as on the host."""
    host, box = both(tmp_path, SDL)
    hook = '"$FACTORY_PROJECT_DIR"/.factory/hooks/protect-files.sh'
    results = []
    for ws, sandboxed in ((host, False), (box, True)):
        args = {"tool_name": "Edit", "tool_input": {"file_path": str(ws / path)}}
        event = event_for(ws, "PreToolUse", **args)
        results.append(boxed(ws, "factory", hook, event) if sandboxed
                       else bare(ws, hook, event, VAR))  # fmt: skip
    done, sandboxed = results
    assert (sandboxed.returncode, sandboxed.stdout) == (done.returncode, done.stdout)
    assert done.returncode == code, (done.stderr, sandboxed.stderr)
    if code == 2:
        assert "Cannot modify protected file" in sandboxed.stderr


def test_as_configured_the_hook_fails_alike(engine: DockerBackend, tmp_path: Path) -> None:
    """The repository's own command names `$DROID_PROJECT_DIR`, which Droid does not set:
    on the host the command is not found (127); sandboxed it cannot start either. Both
    are non-blocking errors for Droid (only exit 2 blocks), so the decision is the same."""
    host, box = both(tmp_path, SDL)
    hook = '"$DROID_PROJECT_DIR"/.factory/hooks/protect-files.sh'
    args = {"tool_name": "Edit", "tool_input": {"file_path": ".env"}}
    done = bare(host, hook, event_for(host, "PreToolUse", **args), VAR)
    sandboxed = boxed(box, "factory", hook, event_for(box, "PreToolUse", **args))
    assert done.returncode == 127
    assert sandboxed.returncode not in (0, 2), sandboxed.stderr
    assert sandboxed.stdout == done.stdout == ""


def test_scan_secrets_reports_without_blocking(engine: DockerBackend, tmp_path: Path) -> None:
    """sdldev .factory/hooks/scan-secrets.sh (PostToolUse) reads the written file at its
    absolute path and warns on stderr of a GitHub token; exit 0 both ways. (Its second
    check, `[a-zA-Z0-9_\\-=\\.]`, is an invalid range for GNU grep: it never matches,
    on the host as sandboxed.)"""
    host, box = both(tmp_path, SDL)
    hook = '"$FACTORY_PROJECT_DIR"/.factory/hooks/scan-secrets.sh'
    results = []
    for ws, sandboxed in ((host, False), (box, True)):
        (ws / "config.py").write_text(f'token = "ghp_{"a1" * 18}"\n')
        args = {"tool_name": "Create", "tool_input": {"file_path": str(ws / "config.py")}}
        event = event_for(ws, "PostToolUse", **args)
        results.append(boxed(ws, "factory", hook, event) if sandboxed
                       else bare(ws, hook, event, VAR))  # fmt: skip
    done, sandboxed = results
    assert (sandboxed.returncode, sandboxed.stdout) == (done.returncode, done.stdout)
    assert (done.returncode, done.stdout) == (0, "")
    assert "Potential secret detected matching pattern: ghp_" in sandboxed.stderr
    assert done.stderr.replace(str(host), str(box)) in sandboxed.stderr


def test_docs_coverage_stop_report(engine: DockerBackend, tmp_path: Path) -> None:
    """sdldev .factory/hooks/docs-coverage.py (Stop): walks the project's backend/ and
    prints the same report sandboxed (the project is mounted, read-only)."""
    host, box = both(tmp_path, SDL)
    hook = 'python3 "$FACTORY_PROJECT_DIR"/.factory/hooks/docs-coverage.py'
    for ws in (host, box):
        (ws / "backend").mkdir()
        (ws / "backend" / "api.py").write_text(
            'def documented():\n    """Yes."""\n\n\ndef bare():\n    return 1\n'
        )
    done = bare(host, hook, event_for(host, "Stop", stop_hook_active=False), VAR)
    sandboxed = boxed(box, "factory", hook, event_for(box, "Stop", stop_hook_active=False))
    assert (sandboxed.returncode, sandboxed.stdout) == (done.returncode, done.stdout)
    assert "Coverage: 50.0%" in done.stdout


def _revgate(ws: Path) -> None:
    """A stand-in for the revgate package the gate runs (`python -m revgate lint FILE`):
    it blocks, as revgate does for a list with P0 findings (exit 2)."""
    package = ws / "revgate"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "import sys\nprint(f'{sys.argv[2]}: P0 row 2 has no email address')\nsys.exit(2)\n"
    )
    (ws / "leads.csv").write_text("name,email\nAda,\n")


def test_revgate_gate_blocks_a_lead_list(engine: DockerBackend, tmp_path: Path) -> None:
    """alecmurillo/revgate .factory/hooks/lead_list_gate.py (PostToolUse Create): the
    written lead list is linted and refused (exit 2, the findings on stderr), on the
    host and sandboxed; and through `run`, from the repository's hooks.json (wrapped in
    `hooks`), Droid's reading is a block."""
    host, box = both(tmp_path, "revgate")
    hook = 'python3 "$FACTORY_PROJECT_DIR"/.factory/hooks/lead_list_gate.py'
    results = []
    for ws, sandboxed in ((host, False), (box, True)):
        _revgate(ws)
        args = {"tool_name": "Create", "tool_input": {"file_path": str(ws / "leads.csv")}}
        event = event_for(ws, "PostToolUse", **args)
        results.append(boxed(ws, "factory", hook, event) if sandboxed
                       else bare(ws, hook, event, VAR))  # fmt: skip
    done, sandboxed = results
    assert (sandboxed.returncode, sandboxed.stdout) == (done.returncode, done.stdout) == (2, "")
    assert "leads.csv: P0 row 2 has no email address" in sandboxed.stderr
    home = tmp_path / "home"
    home.mkdir()
    args = {"tool_name": "Create", "tool_input": {"file_path": str(box / "leads.csv")}}
    answer = run_event(home, "factory", "PostToolUse", event_for(box, "PostToolUse", **args))
    assert answer["blocked"] is True
    assert "Blocked by revgate" in answer["reason"]
    [report] = answer["hooks"]
    assert (report["source"], report["exitCode"]) == ("project", 2)


PRETTIER = """#!/bin/sh
# Stand-in for `prettier --write FILE`: rewrites the file in place.
[ "$1" = "--write" ] || exit 2
content=$(cat "$2") && printf '%s\\n' "$content" > "$2"
"""


def test_formatter_cannot_write_the_workspace(engine: DockerBackend, tmp_path: Path) -> None:
    """RyanLauderback/ryai-platform .factory/hooks/format_changed_file.py runs the
    project's prettier on the edited file. On the host the file is rewritten; sandboxed
    the workspace is read-only: the hook reports prettier's failure and exits 0 (it is
    non-blocking by design, so Droid proceeds either way) and the failure is named."""
    host, box = both(tmp_path, "ryai-platform")
    hook = 'python3 "$FACTORY_PROJECT_DIR"/.factory/hooks/format_changed_file.py'
    results = []
    for ws, sandboxed in ((host, False), (box, True)):
        tool = ws / "node_modules" / ".bin" / "prettier"
        tool.parent.mkdir(parents=True)
        tool.write_text(PRETTIER)
        tool.chmod(0o755)
        (ws / "src").mkdir()
        (ws / "src" / "a.ts").write_text("const a=1")
        args = {"tool_name": "Edit", "tool_input": {"file_path": str(ws / "src" / "a.ts")}}
        event = event_for(ws, "PostToolUse", **args)
        results.append(boxed(ws, "factory", hook, event) if sandboxed
                       else bare(ws, hook, event, VAR))  # fmt: skip
    done, sandboxed = results
    assert (done.returncode, done.stdout) == (0, "[project hook] prettier formatted src/a.ts\n")
    assert (host / "src" / "a.ts").read_text() == "const a=1\n"
    assert (sandboxed.returncode, sandboxed.stdout) == (0, "")
    assert (box / "src" / "a.ts").read_text() == "const a=1"
    assert "prettier failed on src/a.ts" in sandboxed.stderr
    # runc says EROFS; under gVisor the same refused write reads EACCES.
    assert any(w in sandboxed.stderr for w in ("Read-only file system", "Permission denied"))
