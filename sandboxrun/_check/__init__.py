"""`sandboxrun check`: the CI gate. Recorded events (JSON Lines) are replayed through a
workspace's hooks in the sandbox, each line answered by `_runner.session.answer_event` exactly
as `sandboxrun run` answers it, and judged: a block, a deny, a failed hook (unless
fail-open) or an unreadable line fails the gate.

    events.py   reading the JSON Lines file: one `EventLine` per line, problems kept
    replay.py   running each line and judging its answer: `LineResult`
    report.py   what a person reads: progress on stderr, the summary table on stdout
    junit.py    the JUnit XML report (junitparser), one test case per event line
    command.py  the command line's `check`: flags, settings, exit code
"""
