"""The docs site holds its own rules: every shell block says whether a test runs it
(docs/writing-docs.md), and the configuration reference is generated from the settings
model, naming every field with its description."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

import pytest

from sandboxrun._settings import Settings
from tests.docblocks import DOCS, ROOT, SHELL, all_blocks, runnable


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_reference", ROOT / "scripts" /
                                                  "config_reference.py")  # fmt: skip
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_shell_block_is_marked_runnable_or_not_with_why() -> None:
    shell = [b for b in all_blocks() if b.lang in SHELL]
    assert len(shell) > 10, "the docs lost their shell blocks?"
    unmarked = [b.where for b in shell if b.mark is None]
    assert not unmarked, f"mark these <!-- runnable --> or <!-- not runnable: why -->: {unmarked}"
    assert all(b.why for b in shell if b.mark == "not runnable")


def test_no_block_is_left_without_a_language() -> None:
    """A bare fence could be shell in disguise: output and usage say `text`."""
    bare = [b.where for b in all_blocks() if not b.lang]
    assert not bare, f"give these an info string (sh, text, toml...): {bare}"


def test_some_blocks_run() -> None:
    pages = {b.page for b in runnable()}
    assert {"ci.md", "configuration.md", "troubleshooting.md"} <= pages


def test_a_mark_on_a_non_shell_block_is_refused() -> None:
    """A mark on a `text` block would look run and not be."""
    stray = [b.where for b in all_blocks() if b.lang not in SHELL and b.mark is not None]
    assert not stray, stray


def test_the_configuration_reference_names_every_field_with_its_description() -> None:
    page = _reference().render()
    for name, field in Settings.model_fields.items():
        assert field.description, f"Settings.{name} needs a Field(description=...)"
        row = re.search(rf"^\| `{name}` \|(.*)$", page, re.M)
        assert row, f"{name} is not in the reference"
        assert " ".join(field.description.split()).replace("|", "\\|") in row.group(1)


def test_the_reference_is_generated_not_written_by_hand() -> None:
    """The page exists only in the build (the hook adds it), so it cannot go stale."""
    assert not (DOCS / "configuration-reference.md").exists()
    assert "scripts/config_reference.py" in (ROOT / "mkdocs.yml").read_text()


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [(int | None, "integer (optional)"), (tuple[str, ...], "list of string"),
     (tuple[tuple[str, str], ...], "table of string")],
)  # fmt: skip
def test_types_read_as_toml(annotation: object, expected: str) -> None:
    assert _reference().type_name(annotation) == expected


def test_every_page_is_in_the_nav() -> None:
    """mkdocs only warns for a page missing from the nav: keep them all reachable."""
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    missing = {p for p in pages if f": {p}" not in nav}
    assert not missing, missing
