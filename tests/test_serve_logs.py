"""The log lines `serve` hands each request back (what the CLI would have printed on the
caller's stderr): through one shared sink, routed by request (`app._Routes`), at the
request's own verbosity, and still there after the application removed loguru's sinks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from loguru import logger

from sandboxrun import ExecResult, FakeBackend, _log
from sandboxrun._server import App
from sandboxrun._server import app as _app
from tests.test_cli_unit import _restore_library_logging  # noqa: F401 - autouse, shared


@pytest.fixture(autouse=True)
def enabled() -> Iterator[None]:
    _log._ready()  # the library's own first use quiets it: before we turn it on
    logger.remove()
    logger.enable("sandboxrun")
    yield


def _lines(verbose: int, tag: str, start: threading.Barrier) -> str:
    with _app._captured_logs(verbose) as buffer:
        start.wait()
        for _ in range(20):
            _log.logger.debug("debug {}", tag)
            _log.logger.info("info {}", tag)
            _log.logger.warning("warning {}", tag)
    return buffer.getvalue()


def test_requests_at_once_get_their_own_lines_at_their_own_level() -> None:
    out: dict[int, str] = {}
    start = threading.Barrier(6)

    def ask(i: int) -> None:
        out[i] = _lines(i % 3, f"r{i}", start)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, text in out.items():
        levels = {0: ["warning"], 1: ["info", "warning"], 2: ["debug", "info", "warning"]}[i % 3]
        want = [f"sandboxrun: {level}: {level} r{i}" for _ in range(20) for level in levels]
        assert text.splitlines() == want


def test_a_request_still_gets_its_lines_after_the_sinks_were_removed(home: Path) -> None:
    app = App(lambda settings: FakeBackend(lambda r: ExecResult(0, b"", b"", 1)))
    request = {"args": ["PreToolUse"], "cwd": str(home), "verbose": 0, "stdin": "",
               "env": {"SANDBOXRUN_BOGUS": "1"}}  # fmt: skip
    first = app.answer("run", request).stderr
    assert b"SANDBOXRUN_BOGUS" in first  # the warning the command would print itself
    logger.remove()  # an application reconfiguring loguru: the shared sink comes back
    assert app.answer("run", request).stderr == first
