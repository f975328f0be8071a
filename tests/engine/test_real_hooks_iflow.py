"""iFlow CLI hooks (issue 18, item 7; tests/real_hooks/iflow/PROVENANCE.md). The public
iFlow hooks found are copies of one template, Trellis's SessionStart context hook, whose
licence file the index does not hold: the fixture is a faithful minimal reproduction of
it (python3, reads the project's `.trellis/` files from the hook's cwd, since iFlow sets
no project variable), run as iFlow runs it on the host and through `sandboxrun run
--agent iflow` (its `.iflow/settings.json`, matcher `startup`) and `exec`, with the same
context."""

from __future__ import annotations

import json
from pathlib import Path

from sandboxrun import DockerBackend

from .claudelike_hooks import bare, boxed, checkout, event_for, run_event

COMMAND = "python3 .iflow/hooks/session-start.py"  # its settings.json entry


def project(tmp_path: Path, side: str) -> Path:
    ws = checkout("iflow", "trellis-reproduction", tmp_path / side)
    (ws / ".trellis").mkdir()
    (ws / ".trellis" / "workflow.md").write_text("# Workflow\n1. read the spec\n")
    (ws / ".trellis" / ".current-task").write_text("add-login\n")
    (ws / ".trellis" / "tasks" / "add-login").mkdir(parents=True)
    (ws / ".trellis" / "tasks" / "add-login" / "prd.md").write_text("login\n")
    return ws


def test_trellis_session_start_context_the_same_sandboxed(
    engine: DockerBackend, tmp_path: Path
) -> None:
    host, box = project(tmp_path, "host"), project(tmp_path, "box")
    done = bare(host, COMMAND, event_for(host, "SessionStart", source="startup"), None)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "read the spec" in context and "Status: READY" in context
    assert "No context available" in context  # no get_context.py in this project
    sandboxed = boxed(box, "iflow", COMMAND, event_for(box, "SessionStart", source="startup"))
    assert (sandboxed.returncode, sandboxed.stdout) == (0, done.stdout), sandboxed.stderr
    home = tmp_path / "home"
    home.mkdir()
    answer = run_event(home, "iflow", "SessionStart",
                       event_for(box, "SessionStart", source="startup"))  # fmt: skip
    assert answer["additionalContext"] == context
    [report] = answer["hooks"]
    assert (report["source"], report["exitCode"]) == ("project", 0)
    resumed = run_event(home, "iflow", "SessionStart",
                        event_for(box, "SessionStart", source="resume"))  # fmt: skip
    assert resumed["hooks"] == []  # matcher "startup": not on resume, as in iFlow
