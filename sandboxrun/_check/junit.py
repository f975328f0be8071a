"""The JUnit XML report: one test case per event line, written with junitparser.

junitparser (no dependencies of its own, imported only when a report is asked for)
writes the Ant JUnit format that CI systems read (GitHub test reporters, GitLab, Jenkins).
A line that a hook blocked is a `failure`; a line whose hooks failed or could not run, or
that could not be read, is an `error`. Every string passes through `printable` first:
hooks and events choose those bytes, and XML 1.0 cannot carry most control characters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .._errors import ConfigError
from .._text import printable
from .replay import LineResult

# Decisions that are a policy's verdict (failure), not something that went wrong (error).
POLICY = frozenset({"blocked", "denied", "stopped"})
OUTPUT_LIMIT = 64 * 1024  # characters of `run`'s answer kept in system-out per case


def write_junit(
    path: str, results: Sequence[LineResult], agent: str, events: str, workspaces: Sequence[str]
) -> None:
    """Write the report for `results` to `path`."""
    from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

    suite = TestSuite(printable(f"sandboxrun check ({agent})"))
    suite.add_property("events", printable(events))
    suite.add_property("workspaces", printable(" ".join(workspaces)))
    for r in results:
        event = r.line.hook_name or "unreadable"
        case = TestCase(
            name=printable(f"line {r.line.number}: {event}"),
            classname=printable(f"sandboxrun.{agent}.{event}"),
            time=r.duration_ms / 1000,
        )
        if not r.passed:
            kind = Failure if r.decision in POLICY else Error
            message = f"{r.decision}: {r.reason}" if r.reason else r.decision
            result = kind(printable(message), r.decision)
            result.text = "\n".join(printable(f"hook: {name}") for name in r.hooks)
            case.result = [result]
        if r.document:
            text = json.dumps(r.document, ensure_ascii=True, indent=1)
            case.system_out = text[:OUTPUT_LIMIT]
        suite.add_testcase(case)
    xml = JUnitXml()
    xml.add_testsuite(suite)
    try:
        xml.write(path)
    except OSError as exc:
        raise ConfigError(f"cannot write the JUnit report {path}: {exc.strerror}") from None
