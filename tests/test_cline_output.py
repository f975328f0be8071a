"""Cline hook output as the VS Code extension reads it (`cline_variant = "vscode"`):
parse_output (JSON finding and validation) and interpret (exit codes)."""

from __future__ import annotations

import json

import pytest

from sandboxrun import ExecResult, HookSpec, parse_output
from sandboxrun._dialects.cline import CLINE_VSCODE, CONTEXT_LIMIT, TRUNCATION_NOTE

NOTE = "\n\n[... context truncated due to size limit ...]"


# -- finding the JSON ----------------------------------------------------------------


def test_whole_stdout_json() -> None:
    """A stdout that is exactly one JSON object is parsed as the answer."""
    out = '{"cancel": true, "contextModification": "ctx", "errorMessage": "no"}'
    assert parse_output(out) == (
        {"cancel": True, "contextModification": "ctx", "errorMessage": "no"},
        None,
    )


def test_whole_stdout_json_with_surrounding_whitespace() -> None:
    """Leading and trailing whitespace around the whole-stdout JSON is fine."""
    assert parse_output('\n  {"cancel": true}\n\n') == ({"cancel": True}, None)


def test_cancel_defaults_to_false() -> None:
    """An object without `cancel` answers cancel false, keeping the other fields."""
    assert parse_output('{"contextModification": "x"}') == (
        {"contextModification": "x", "cancel": False},
        None,
    )


def test_logs_before_the_json() -> None:
    """Log lines before the JSON object are skipped."""
    out = 'starting\nchecking {things}\n{"cancel": true}\n'
    assert parse_output(out) == ({"cancel": True}, None)


def test_plain_lines_after_the_json_are_fine() -> None:
    """Lines without `}` after the JSON object do not hide it."""
    out = 'log\n{"cancel": true, "errorMessage": "stop"}\ndone.\nbye\n'
    assert parse_output(out) == ({"cancel": True, "errorMessage": "stop"}, None)


def test_a_line_with_a_brace_after_the_json_defeats_it() -> None:
    """A later line containing `}` is taken as the end, so the JSON is lost: cancel false."""
    out = '{"cancel": true}\nall done }\n'
    answer, warning = parse_output(out)
    assert answer == {"cancel": False}
    assert warning is not None


def test_a_later_balanced_object_wins() -> None:
    """The last JSON object is the answer, not the first."""
    out = '{"cancel": true}\n{"cancel": false, "errorMessage": "later"}\n'
    assert parse_output(out) == ({"cancel": False, "errorMessage": "later"}, None)


def test_text_after_the_closing_brace_on_the_same_line_defeats_it() -> None:
    """`{...} trailing` on the last brace line does not parse: cancel false with a warning."""
    answer, warning = parse_output('log\n{"cancel": true} <- answer\n')
    assert answer == {"cancel": False}
    assert warning is not None


def test_text_before_the_opening_brace_is_dropped() -> None:
    """On the first JSON line, anything before the first `{` is dropped."""
    assert parse_output('result: {"cancel": true}') == ({"cancel": True}, None)
    assert parse_output('log\nresult: {"cancel": true}\n') == ({"cancel": True}, None)


def test_crlf_line_endings() -> None:
    """Windows line endings work, before, inside and after the JSON."""
    out = 'log line\r\n{\r\n  "cancel": true,\r\n  "errorMessage": "a"\r\n}\r\ntrailer\r\n'
    assert parse_output(out) == ({"cancel": True, "errorMessage": "a"}, None)


def test_crlf_is_not_left_in_string_values() -> None:
    """A CRLF-terminated single line answer yields values without stray carriage returns."""
    answer, _ = parse_output('log\r\n{"contextModification": "x"}\r\n')
    assert answer["contextModification"] == "x"


def test_pretty_printed_json_after_logs() -> None:
    """A multi-line (indented) JSON object after logs is found, nested objects included."""
    doc = {"cancel": True, "contextModification": "c", "extra": {"a": {"b": [1, 2]}}}
    out = "some log\n" + json.dumps(doc, indent=2) + "\nfinished\n"
    assert parse_output(out) == ({"cancel": True, "contextModification": "c"}, None)


def test_pretty_printed_json_alone() -> None:
    """A stdout that is only an indented JSON object parses whole."""
    out = json.dumps({"cancel": True, "errorMessage": "e"}, indent=4)
    assert parse_output(out) == ({"cancel": True, "errorMessage": "e"}, None)


@pytest.mark.parametrize("out", ["", "\n", "   \n\t\n", "\r\n"])
def test_empty_stdout_is_cancel_false(out: str) -> None:
    """An empty or blank stdout means cancel false."""
    assert parse_output(out)[0] == {"cancel": False}


@pytest.mark.parametrize("out", ["hello", "all good\nno json here\n", "{ unbalanced", "{not json}"])
def test_no_json_is_cancel_false_with_a_warning(out: str) -> None:
    """Output with no JSON object is cancel false, with a warning (not a failure)."""
    answer, warning = parse_output(out)
    assert answer == {"cancel": False}
    assert warning is not None


@pytest.mark.parametrize("out", ["42", "[1, 2]", '[{"cancel": true}]', '"text"', "true", "null"])
def test_non_object_json_gives_defaults(out: str) -> None:
    """JSON that is not an object gives the defaults, with a warning."""
    answer, warning = parse_output(out)
    assert answer == {"cancel": False}
    assert warning is not None


# -- validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc",
    [
        {"cancel": "true"},
        {"cancel": 1},
        {"cancel": None},
        {"cancel": True, "contextModification": 5},
        {"cancel": True, "contextModification": ["a"]},
        {"cancel": True, "contextModification": None},
        {"cancel": True, "errorMessage": {"m": 1}},
        {"cancel": True, "errorMessage": False},
        {"cancel": True, "context_modification": 5},
        {"cancel": True, "error_message": 3},
    ],
)
def test_invalid_types_make_the_output_invalid(doc: dict[str, object]) -> None:
    """A field of the wrong type invalidates the whole output: cancel false, a warning."""
    answer, warning = parse_output(json.dumps(doc))
    assert answer == {"cancel": False}
    assert warning is not None and "invalid" in warning


@pytest.mark.parametrize("value", [True, False])
def test_legacy_should_continue_makes_the_output_invalid(value: bool) -> None:
    """The legacy field `shouldContinue` invalidates the output, even beside cancel true."""
    answer, warning = parse_output(json.dumps({"cancel": True, "shouldContinue": value}))
    assert answer == {"cancel": False}
    assert warning is not None and "shouldContinue" in warning


def test_snake_case_spellings_are_accepted() -> None:
    """`context_modification` and `error_message` are read as the camelCase fields."""
    out = '{"cancel": true, "context_modification": "ctx", "error_message": "err"}'
    assert parse_output(out) == (
        {"cancel": True, "contextModification": "ctx", "errorMessage": "err"},
        None,
    )


def test_camel_case_wins_over_snake_case() -> None:
    """When both spellings are present, the camelCase value is used."""
    out = '{"contextModification": "camel", "context_modification": "snake"}'
    assert parse_output(out)[0]["contextModification"] == "camel"


def test_unknown_keys_are_ignored() -> None:
    """Unknown keys neither invalidate the output nor appear in the answer."""
    out = '{"cancel": true, "decision": "block", "reason": 5, "nested": {"x": []}}'
    assert parse_output(out) == ({"cancel": True}, None)


def test_empty_strings_are_valid() -> None:
    """Empty strings are valid values and are kept as such."""
    out = '{"cancel": false, "contextModification": "", "errorMessage": ""}'
    assert parse_output(out) == (
        {"cancel": False, "contextModification": "", "errorMessage": ""},
        None,
    )


def test_context_longer_than_the_limit_is_truncated_with_the_exact_note() -> None:
    """A context over 50,000 characters is cut to 50,000 followed by Cline's note."""
    assert CONTEXT_LIMIT == 50_000
    assert TRUNCATION_NOTE == NOTE
    context = "a" * 49_999 + "bc" + "z" * 100
    answer, warning = parse_output(json.dumps({"contextModification": context}))
    assert warning is None
    assert answer["contextModification"] == "a" * 49_999 + "b" + NOTE


def test_context_of_exactly_the_limit_is_kept() -> None:
    """A context of exactly 50,000 characters is not truncated."""
    context = "x" * 50_000
    answer, _ = parse_output(json.dumps({"contextModification": context}))
    assert answer["contextModification"] == context


def test_truncation_counts_characters_not_bytes() -> None:
    """The limit is in characters: 50,000 multi-byte characters are kept whole."""
    context = "é" * 50_000
    answer, _ = parse_output(json.dumps({"contextModification": context}, ensure_ascii=False))
    assert answer["contextModification"] == context


def test_snake_case_context_is_truncated_too() -> None:
    """The limit applies to `context_modification` as well."""
    answer, _ = parse_output(json.dumps({"context_modification": "y" * 60_000}))
    assert answer["contextModification"] == "y" * 50_000 + NOTE


def test_error_message_is_not_truncated() -> None:
    """The 50,000-character limit applies to the context only."""
    answer, _ = parse_output(json.dumps({"errorMessage": "e" * 60_000}))
    assert answer["errorMessage"] == "e" * 60_000


@pytest.mark.parametrize(
    "out",
    [
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        "[" * 100_000 + "]" * 100_000,
        "log\n" + '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n",
        "log\n" + "{\n" * 5_000 + "}\n" * 5_000,
    ],
)
def test_deeply_nested_json_does_not_crash(out: str) -> None:
    """Pathologically nested JSON yields cancel false, not a RecursionError."""
    answer, _ = parse_output(out)
    assert answer == {"cancel": False}


# -- interpret: the hook's run as the VS Code extension reads it (the SDK: test_cline_sdk_answer)


SPEC = HookSpec(
    hook_name="PreToolUse",
    name="/ws/.clinerules/hooks/PreToolUse",
    source="workspace",
    argv=("/bin/sh", "-c", "/ws/.clinerules/hooks/PreToolUse"),
    workdir="/ws",
    mounts=("/ws",),
)


def result(**kw: object) -> ExecResult:
    """An ExecResult with harmless defaults."""
    fields: dict[str, object] = {"exit_code": 0, "stdout": b"", "stderr": b"", "duration_ms": 12}
    fields.update(kw)
    return ExecResult(**fields)  # type: ignore[arg-type]


def test_completed_hook_is_parsed() -> None:
    """Exit 0: the stdout is parsed and the outcome is completed."""
    outcome = CLINE_VSCODE.interpret(SPEC, result(stdout=b'{"cancel": true}'), 30)
    assert outcome.status == "completed"
    assert outcome.answer == {"cancel": True}
    assert outcome.error is None
    assert (outcome.exit_code, outcome.duration_ms) == (0, 12)
    assert outcome.spec is SPEC


def test_completed_hook_with_garbage_is_a_warning_not_a_failure() -> None:
    """Exit 0 with no JSON: completed, cancel false, the warning in `error`."""
    outcome = CLINE_VSCODE.interpret(SPEC, result(stdout=b"just talking"), 30)
    assert outcome.status == "completed"
    assert outcome.answer == {"cancel": False}
    assert outcome.error


@pytest.mark.parametrize("code", [1, 2, 127, 255])
def test_nonzero_exit_fails_and_stdout_is_not_parsed(code: int) -> None:
    """Exit != 0: failed, Cline's message, and even a valid cancel on stdout is ignored."""
    outcome = CLINE_VSCODE.interpret(
        SPEC, result(exit_code=code, stdout=b'{"cancel": true}', stderr=b"boom\n"), 30
    )
    assert outcome.status == "failed"
    assert outcome.error == f"PreToolUse hook exited with code {code}"
    assert outcome.answer == {}
    assert outcome.exit_code == code
    assert outcome.stderr == "boom\n"


def test_timeout_is_timed_out() -> None:
    """A hook that hit its deadline is timed_out, with the timeout in the message."""
    outcome = CLINE_VSCODE.interpret(
        SPEC, result(exit_code=None, timed_out=True, stdout=b'{"cancel": true}'), 30
    )
    assert outcome.status == "timed_out"
    assert outcome.answer == {}
    assert outcome.error is not None and "timed out" in outcome.error and "30" in outcome.error


def test_oom_is_failed_with_oom_killed() -> None:
    """An OOM-killed hook failed, and the outcome says oomKilled."""
    outcome = CLINE_VSCODE.interpret(
        SPEC, result(exit_code=137, oom_killed=True, stdout=b'{"cancel": true}'), 30
    )
    assert outcome.status == "failed"
    assert outcome.oom_killed is True
    assert outcome.report()["oomKilled"] is True
    assert outcome.answer == {}
    assert outcome.error is not None and "out of memory" in outcome.error


def test_killed_reason_is_failed_with_that_reason() -> None:
    """A hook we killed (e.g. for output) failed with our reason as the error."""
    reason = "printed more than 16777216 bytes; killed"
    outcome = CLINE_VSCODE.interpret(
        SPEC,
        result(
            exit_code=137, killed_reason=reason, output_truncated=True, stdout=b'{"cancel": true}'
        ),
        30,
    )
    assert outcome.status == "failed"
    assert outcome.error == f"PreToolUse hook {reason}"
    assert outcome.output_truncated is True
    assert outcome.answer == {}


def test_stderr_is_carried_and_never_changes_the_answer() -> None:
    """stderr is kept as detail on a completed hook; the answer comes from stdout only."""
    outcome = CLINE_VSCODE.interpret(
        SPEC, result(stdout=b'{"cancel": false}', stderr=b'{"cancel": true}\nwarn'), 30
    )
    assert outcome.answer == {"cancel": False}
    assert outcome.stderr == '{"cancel": true}\nwarn'


def test_invalid_utf8_does_not_crash() -> None:
    """Invalid UTF-8 in stdout and stderr is decoded with replacement characters."""
    outcome = CLINE_VSCODE.interpret(
        SPEC,
        result(stdout=b'\xff\xfe log\n{"contextModification": "a\xc3"}\n', stderr=b"\xff\x80"),
        30,
    )
    assert outcome.status == "completed"
    assert outcome.answer == {"cancel": False, "contextModification": "a\ufffd"}
    assert outcome.stderr == "\ufffd\ufffd"


def test_output_truncated_flag_is_carried_on_a_completed_hook() -> None:
    """A completed hook whose output was cut keeps outputTruncated in its report."""
    outcome = CLINE_VSCODE.interpret(SPEC, result(stdout=b"{}", output_truncated=True), 30)
    assert outcome.status == "completed"
    assert outcome.report()["outputTruncated"] is True
