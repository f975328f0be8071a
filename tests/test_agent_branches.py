"""Generic code never asks which agent it serves (issue 31): `scripts/agent-branches`
finds no agent name compared, dialect class tested, `*_shaped` guard or `getattr` probe
on a dialect outside `_dialects/` and `_install/`. A new need is a `Dialect` member."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "agent-branches"


def test_no_generic_module_asks_which_agent_it_serves() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--max", "0"], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert done.stdout.strip().splitlines()[-1] == "total: 0 (none)"


def test_the_count_sees_a_branch(tmp_path: Path) -> None:
    """The walk finds each kind (else a zero proves nothing)."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("agent_branches", str(SCRIPT))
    spec = importlib.util.spec_from_loader("agent_branches", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    code = tmp_path / "x.py"
    code.write_text(
        "if agent == 'codex' or settings.agent in ('claude', 'qwen'): pass\n"
        "isinstance(d, ClaudeDialect)\nclaude_shaped(d)\ngetattr(dialect, 'x', None)\n"
    )
    kinds = [kind for _line, kind, _src in module.places(code, module.agent_names())]
    assert kinds == ["compare", "compare", "isinstance", "shaped", "getattr"]
