"""Claude/Qoder hook output: exit codes, the JSON answer (interpret) and how several
answers combine (combine), called on the dialect directly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sandboxrun import ExecResult, HookOutcome, HookSpec
from sandboxrun._dialects.claude.dialect import CLAUDE, HOOK_NAMES

COMBINED_KEYS = [
    "blocked",
    "permissionDecision",
    "reason",
    "additionalContext",
    "systemMessage",
    "continue",
    "stopReason",
    "updatedInput",
]
NOTHING = {
    "blocked": False,
    "permissionDecision": None,
    "reason": "",
    "additionalContext": "",
    "systemMessage": "",
    "continue": True,
    "stopReason": "",
    "updatedInput": None,
}


def spec(event: str = "PreToolUse", name: str = "guard.sh", source: str = "user") -> HookSpec:
    """A discovered hook for `event` (the user's own: the agent's semantics apply)."""
    return HookSpec(
        event,
        name,
        source,
        ("/bin/sh", "-c", name),
        "/ws",
        ("/ws",),
        {"CLAUDE_PROJECT_DIR": "/ws"},
    )


def run(
    stdout: Any = b"",
    *,
    event: str = "PreToolUse",
    name: str = "guard.sh",
    exit_code: int | None = 0,
    stderr: bytes = b"",
    **kw: Any,
) -> HookOutcome:
    """Interpret one hook run whose stdout is `stdout` (JSON-encoded unless str/bytes)."""
    if isinstance(stdout, str):
        stdout = stdout.encode()
    elif not isinstance(stdout, bytes):
        stdout = json.dumps(stdout).encode()
    result = ExecResult(exit_code, stdout, stderr, 7, **kw)
    return CLAUDE.interpret(spec(event, name), result, 60.0)


def specific(event: str = "PreToolUse", **fields: Any) -> dict[str, Any]:
    """A JSON answer with hookSpecificOutput for `event`."""
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


def combine(*outcomes: HookOutcome, fail_closed: bool = False) -> dict[str, Any]:
    """The combined answer of `outcomes`, checking its keys."""
    answer = CLAUDE.combine(outcomes, fail_closed)
    assert list(answer) == COMBINED_KEYS
    return answer


# -- exit 2 ------------------------------------------------------------------------


def test_exit_2_blocks_with_stderr_as_the_reason() -> None:
    """Exit 2 on PreToolUse is a completed run that denies, stderr being the reason."""
    outcome = run(exit_code=2, stderr=b"rm -rf is not allowed\n")
    assert outcome.status == "completed"
    assert outcome.error is None
    assert outcome.stderr == "rm -rf is not allowed\n"
    assert combine(outcome) == {
        **NOTHING,
        "blocked": True,
        "permissionDecision": "deny",
        "reason": "rm -rf is not allowed",
    }


def test_exit_2_ignores_json_on_stdout() -> None:
    """Exit 2 beats the same hook's JSON allow: stdout is ignored."""
    allow = specific(permissionDecision="allow", additionalContext="ctx")
    outcome = run({**allow, "continue": False}, exit_code=2, stderr=b"no")
    assert combine(outcome) == {
        **NOTHING,
        "blocked": True,
        "permissionDecision": "deny",
        "reason": "no",
    }


@pytest.mark.parametrize(
    ("event", "blocked", "decision", "where"),
    [
        ("PreToolUse", True, "deny", "reason"),
        ("PermissionRequest", True, "deny", "reason"),
        ("PostToolUse", True, None, "reason"),
        ("PostToolUseFailure", True, None, "reason"),
        ("UserPromptSubmit", True, None, "reason"),
        ("Stop", True, None, "reason"),
        ("SubagentStop", True, None, "reason"),
        ("PreCompact", False, None, "systemMessage"),
        ("Notification", False, None, "systemMessage"),
        ("SessionStart", False, None, "systemMessage"),
        ("SessionEnd", False, None, "systemMessage"),
        ("SubagentStart", False, None, "systemMessage"),
    ],
)
def test_exit_2_per_event(event: str, blocked: bool, decision: str | None, where: str) -> None:
    """Exit 2 blocks where the event can block; elsewhere stderr goes to the user only."""
    answer = combine(run(event=event, exit_code=2, stderr=b"  why  \n"))
    assert answer == {**NOTHING, "blocked": blocked, "permissionDecision": decision, where: "why"}


def test_exit_2_without_stderr_names_the_hook() -> None:
    """Exit 2 with an empty stderr still blocks, with a reason naming the hook."""
    answer = combine(run(exit_code=2, name="./deny.sh"))
    assert answer["blocked"] is True
    assert answer["reason"] == "hook ./deny.sh exited with code 2 (no stderr)"


# -- other exit codes, timeouts, kills -------------------------------------------------


def test_exit_1_is_a_non_blocking_error() -> None:
    """Exit 1 fails the hook with stderr's first line; nothing is blocked, JSON ignored."""
    outcome = run(
        specific(permissionDecision="deny"),
        exit_code=1,
        stderr=b"\n  oops: bad input  \nmore detail\n",
    )
    assert outcome.status == "failed"
    assert outcome.error == "oops: bad input"
    assert outcome.answer == {}
    assert combine(outcome) == NOTHING


def test_other_exit_code_without_stderr() -> None:
    """A non-zero exit without stderr says which code it was."""
    outcome = run(exit_code=3)
    assert (outcome.status, outcome.error) == ("failed", "PreToolUse hook exited with code 3")


def test_missing_command_is_a_non_blocking_error() -> None:
    """sh's exit 127 for a missing command is a failure that does not block."""
    outcome = run(exit_code=127, stderr=b"/bin/sh: 1: ./nope.sh: not found\n")
    assert (outcome.status, outcome.error) == ("failed", "/bin/sh: 1: ./nope.sh: not found")
    assert combine(outcome)["blocked"] is False


def test_timeout_gives_no_decision() -> None:
    """A hook killed at its deadline is timed_out and decides nothing."""
    outcome = run(specific(permissionDecision="deny"), exit_code=None, timed_out=True)
    assert outcome.status == "timed_out"
    assert outcome.error == "PreToolUse hook timed out after 60s and was killed"
    assert outcome.answer == {}
    assert combine(outcome) == NOTHING


@pytest.mark.parametrize(
    ("kw", "error"),
    [
        ({"exit_code": 137, "oom_killed": True}, "PreToolUse hook was killed: out of memory"),
        (
            {"exit_code": 137, "killed_reason": "printed more than 16 MiB"},
            "PreToolUse hook printed more than 16 MiB",
        ),
        ({"exit_code": None}, "PreToolUse hook ended without an exit code"),
        ({"exit_code": 2, "oom_killed": True}, "PreToolUse hook was killed: out of memory"),
    ],
    ids=["oom", "killed", "no-exit-code", "oom-with-exit-2"],
)
def test_killed_hooks_fail(kw: dict[str, Any], error: str) -> None:
    """OOM, a kill by sandboxrun or a missing exit code is a non-blocking failure."""
    outcome = run(b"", stderr=b"denied", **kw)
    assert (outcome.status, outcome.error, outcome.answer) == ("failed", error, {})
    assert outcome.oom_killed is kw.get("oom_killed", False)


# -- exit 0: the JSON answer ---------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "blocked"), [("deny", True), ("ask", False), ("allow", False)]
)
def test_permission_decision(decision: str, blocked: bool) -> None:
    """permissionDecision deny/ask/allow is the decision; only deny blocks."""
    outcome = run(specific(permissionDecision=decision, permissionDecisionReason="because"))
    assert outcome.status == "completed"
    assert combine(outcome) == {
        **NOTHING,
        "blocked": blocked,
        "permissionDecision": decision,
        "reason": "because",
    }


def test_json_after_leading_whitespace() -> None:
    """A JSON object after leading whitespace (and with trailing newline) is the answer."""
    out = "\n\t  " + json.dumps(specific(permissionDecision="deny")) + "\n"
    assert combine(run(out))["permissionDecision"] == "deny"


def test_deny_reason_falls_back_to_top_level_reason_then_a_default() -> None:
    """A deny without permissionDecisionReason uses `reason`, else names the hook."""
    with_reason = run({**specific(permissionDecision="deny"), "reason": "top"})
    assert combine(with_reason)["reason"] == "top"
    bare = run(specific(permissionDecision="deny"), name="g.sh")
    assert combine(bare)["reason"] == "blocked by hook g.sh"


@pytest.mark.parametrize(
    ("decision", "expected", "blocked"), [("approve", "allow", False), ("block", "deny", True)]
)
def test_legacy_decision_on_pre_tool_use(decision: str, expected: str, blocked: bool) -> None:
    """The older top-level decision approve/block maps to allow/deny with its reason."""
    answer = combine(run({"decision": decision, "reason": "legacy"}))
    assert answer == {
        **NOTHING,
        "blocked": blocked,
        "permissionDecision": expected,
        "reason": "legacy",
    }


def test_hook_specific_decision_beats_legacy() -> None:
    """hookSpecificOutput.permissionDecision wins over a top-level decision."""
    doc = {"decision": "block", "reason": "old", **specific(permissionDecision="allow")}
    answer = combine(run(doc))
    assert (answer["permissionDecision"], answer["blocked"]) == ("allow", False)


@pytest.mark.parametrize(
    "event", ["PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "SubagentStop"]
)
def test_decision_block_blocks(event: str) -> None:
    """`decision: block` with a reason blocks PostToolUse, UserPromptSubmit, Stop, SubagentStop."""
    answer = combine(run({"decision": "block", "reason": "fix the tests first"}, event=event))
    assert answer == {**NOTHING, "blocked": True, "reason": "fix the tests first"}


def test_stop_block_without_reason_gets_one_and_a_warning() -> None:
    """A Stop block lacking its required reason still blocks, with a default reason and a note."""
    outcome = run({"decision": "block"}, event="Stop", name="s.sh")
    assert outcome.status == "completed"
    assert outcome.error == 'decision "block" without a reason'
    assert combine(outcome)["reason"] == "blocked by hook s.sh"


@pytest.mark.parametrize(
    "event", ["Notification", "SessionStart", "SessionEnd", "PreCompact", "SubagentStart"]
)
def test_decision_block_cannot_block_other_events(event: str) -> None:
    """`decision: block` on an event that cannot block changes nothing."""
    assert combine(run({"decision": "block", "reason": "x"}, event=event)) == NOTHING


@pytest.mark.parametrize("event", ["PostToolUse", "UserPromptSubmit", "Stop"])
def test_approve_elsewhere_changes_nothing(event: str) -> None:
    """`decision: approve` outside the permission events means nothing."""
    assert combine(run({"decision": "approve", "reason": "x"}, event=event)) == NOTHING


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        (
            {"hookSpecificOutput": {"permissionDecision": "allow"}},
            "hookSpecificOutput.hookEventName is missing (must be 'PreToolUse')",
        ),
        (
            specific("PostToolUse", additionalContext="x"),
            "hookSpecificOutput.hookEventName is 'PostToolUse', not 'PreToolUse'",
        ),
        ({"hookSpecificOutput": "deny"}, "hookSpecificOutput must be an object"),
        (
            specific(permissionDecision="block"),
            'hookSpecificOutput.permissionDecision must be "allow", "deny" or "ask"',
        ),
        (specific(updatedInput=["ls"]), "hookSpecificOutput.updatedInput must be an object"),
        (specific(additionalContext=5), "hookSpecificOutput.additionalContext must be a string"),
        ({"continue": "no"}, "continue must be true or false"),
        ({"decision": "deny"}, 'decision must be "approve" or "block", not \'deny\''),
        ({"reason": 3, "decision": "block"}, "reason must be a string"),
        ({"systemMessage": ["a"]}, "systemMessage must be a string"),
    ],
)
def test_invalid_answer_is_rejected(doc: dict[str, Any], why: str) -> None:
    """An answer breaking the schema is a non-blocking error with no decision."""
    outcome = run(doc)
    assert outcome.status == "failed"
    assert outcome.error == f"PreToolUse hook answer rejected: {why}"
    assert outcome.answer == {}
    assert combine(outcome) == NOTHING


def test_rejected_answer_blocks_when_fail_closed() -> None:
    """With fail_closed, a rejected answer (missing hookEventName) denies, naming the hook."""
    outcome = run({"hookSpecificOutput": {"permissionDecision": "allow"}}, name="g.sh")
    answer = combine(outcome, fail_closed=True)
    assert (answer["blocked"], answer["permissionDecision"]) == (True, "deny")
    assert answer["reason"].startswith("sandboxrun: hook g.sh failed: ")
    assert "hookEventName is missing" in answer["reason"]


def test_null_fields_mean_absent() -> None:
    """JSON nulls count as absent fields."""
    doc = {"continue": None, "reason": None, **specific(permissionDecision=None)}
    assert combine(run(doc)) == NOTHING


def test_continue_false_stops_and_beats_allow() -> None:
    """continue:false stops the agent, blocking even over a permission allow."""
    doc = {"continue": False, "stopReason": "build is red", **specific(permissionDecision="allow")}
    answer = combine(run(doc))
    assert answer == {
        **NOTHING,
        "blocked": True,
        "permissionDecision": "allow",
        "continue": False,
        "stopReason": "build is red",
    }


@pytest.mark.parametrize("event", ["Notification", "SessionEnd", "PostToolUse"])
def test_continue_false_on_any_event(event: str) -> None:
    """continue:false blocks on every event, even those that otherwise cannot block."""
    answer = combine(run({"continue": False, "stopReason": "halt"}, event=event))
    assert (answer["blocked"], answer["continue"], answer["stopReason"]) == (True, False, "halt")


def test_stop_reason_without_continue_false_is_ignored() -> None:
    """A stopReason from a hook that lets the agent continue is not reported."""
    assert combine(run({"stopReason": "meh"}))["stopReason"] == ""


def test_system_message_and_suppress_output() -> None:
    """systemMessage reaches the user; suppressOutput is kept in the per-hook answer."""
    outcome = run({"systemMessage": "careful", "suppressOutput": True})
    assert outcome.answer["suppressOutput"] is True
    assert combine(outcome)["systemMessage"] == "careful"


@pytest.mark.parametrize(
    "event", ["PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "SubagentStart"]
)
def test_additional_context_from_hook_specific_output(event: str) -> None:
    """hookSpecificOutput.additionalContext is the context, for every event."""
    outcome = run(specific(event, additionalContext="remember X"), event=event)
    assert combine(outcome)["additionalContext"] == "remember X"


def test_top_level_additional_context_is_ignored_with_a_note() -> None:
    """additionalContext outside hookSpecificOutput is ignored, and the outcome says why."""
    outcome = run(
        {"additionalContext": "x", "permissionDecision": "deny"}, event="UserPromptSubmit"
    )
    assert outcome.status == "completed"
    assert outcome.error == (
        "additionalContext belongs in hookSpecificOutput; ignored; "
        "permissionDecision belongs in hookSpecificOutput; ignored"
    )
    assert combine(outcome) == NOTHING


# -- exit 0: plain text --------------------------------------------------------------


@pytest.mark.parametrize("event", HOOK_NAMES)
def test_plain_stdout_is_context_only_for_prompt_and_session_start(event: str) -> None:
    """Plain text on stdout becomes context for UserPromptSubmit and SessionStart only."""
    answer = combine(run("  branch: main\n", event=event))
    expected = "branch: main" if event in ("UserPromptSubmit", "SessionStart") else ""
    assert answer == {**NOTHING, "additionalContext": expected}


@pytest.mark.parametrize("out", ["[1, 2]", '"text"', "42", 'ok {"a": 1}'])
def test_json_that_is_not_an_object_is_plain_text(out: str) -> None:
    """Stdout that is not a JSON object (after whitespace) is plain text."""
    outcome = run(out, event="SessionStart")
    assert outcome.status == "completed"
    assert combine(outcome)["additionalContext"] == out


def test_broken_json_is_plain_text_with_a_note() -> None:
    """Stdout that starts like JSON but does not parse is plain text, noted in `error`."""
    outcome = run('{"decision": "block",', event="UserPromptSubmit")
    assert outcome.status == "completed"
    assert outcome.error == "stdout starts with '{' but is not valid JSON: read as plain text"
    assert combine(outcome) == {**NOTHING, "additionalContext": '{"decision": "block",'}


def test_empty_stdout_is_a_silent_success() -> None:
    """No output at all is a completed run with no decision."""
    outcome = run(b"")
    assert (outcome.status, outcome.error) == ("completed", None)
    assert combine(outcome) == NOTHING


# -- updatedInput and PermissionRequest ---------------------------------------------------


def test_updated_input() -> None:
    """PreToolUse's updatedInput replaces the tool input."""
    doc = specific(permissionDecision="allow", updatedInput={"command": "ls -la"})
    assert combine(run(doc))["updatedInput"] == {"command": "ls -la"}


def test_last_updated_input_in_configuration_order_wins() -> None:
    """Of several updatedInputs, the last hook in configuration order wins."""
    first = run(specific(updatedInput={"v": 1}), name="a")
    middle = run(specific(additionalContext="no input"), name="b")
    last = run(specific(updatedInput={"v": 3}), name="c")
    assert combine(first, middle, last)["updatedInput"] == {"v": 3}
    assert combine(last, middle, first)["updatedInput"] == {"v": 1}


@pytest.mark.parametrize(("behavior", "blocked"), [("allow", False), ("deny", True)])
def test_permission_request_decision(behavior: str, blocked: bool) -> None:
    """PermissionRequest's decision.behavior allows or denies, message being the reason."""
    doc = specific(
        "PermissionRequest",
        decision={"behavior": behavior, "message": "policy", "updatedInput": {"a": 1}},
    )
    answer = combine(run(doc, event="PermissionRequest"))
    assert answer == {
        **NOTHING,
        "blocked": blocked,
        "permissionDecision": behavior,
        "reason": "policy",
        "updatedInput": {"a": 1},
    }


def test_permission_request_interrupt_stops() -> None:
    """A PermissionRequest deny with interrupt:true also stops the agent."""
    doc = specific(
        "PermissionRequest", decision={"behavior": "deny", "message": "no", "interrupt": True}
    )
    answer = combine(run(doc, event="PermissionRequest"))
    assert (answer["continue"], answer["stopReason"], answer["blocked"]) == (False, "no", True)


def test_permission_request_bad_behavior_is_rejected() -> None:
    """A PermissionRequest decision without allow/deny is rejected."""
    doc = specific("PermissionRequest", decision={"behavior": "ask"})
    outcome = run(doc, event="PermissionRequest")
    assert outcome.status == "failed"
    assert "decision.behavior" in (outcome.error or "")


def test_permission_request_legacy_block_denies() -> None:
    """Top-level decision block on PermissionRequest denies, like PreToolUse."""
    answer = combine(run({"decision": "block", "reason": "r"}, event="PermissionRequest"))
    assert (answer["permissionDecision"], answer["reason"]) == ("deny", "r")


# -- combining several hooks ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("decisions", "winner"),
    [
        (["allow", "deny", "ask"], "deny"),
        (["allow", "ask", "allow"], "ask"),
        (["allow", "allow"], "allow"),
        ([None, "allow"], "allow"),
        ([None, None], None),
    ],
)
def test_strictest_decision_wins(decisions: list[str | None], winner: str | None) -> None:
    """deny > ask > allow; the reasons of the hooks that gave the winning decision are joined."""
    outcomes = [
        run(specific(permissionDecision=d, permissionDecisionReason=f"{d} {i}"), name=str(i))
        for i, d in enumerate(decisions)
    ]
    answer = combine(*outcomes)
    assert answer["permissionDecision"] == winner
    assert answer["blocked"] is (winner == "deny")
    expected = [f"{d} {i}" for i, d in enumerate(decisions) if d == winner and d is not None]
    assert answer["reason"] == "\n".join(expected)


def test_exit_2_of_one_hook_beats_another_hooks_allow() -> None:
    """One hook's exit 2 denies even when another hook allows."""
    allow = run(specific(permissionDecision="allow", permissionDecisionReason="fine"), name="a")
    deny = run(exit_code=2, stderr=b"blocked by policy", name="b")
    answer = combine(allow, deny)
    assert (answer["blocked"], answer["permissionDecision"]) == (True, "deny")
    assert answer["reason"] == "blocked by policy"


def test_every_answer_is_used_even_after_a_deny() -> None:
    """Contexts and messages of all hooks are kept when one denies."""
    deny = run(
        {
            "systemMessage": "m1",
            **specific(permissionDecision="deny", permissionDecisionReason="no"),
        },
        name="a",
    )
    other = run({"systemMessage": "m2", **specific(additionalContext="c2")}, name="b")
    answer = combine(deny, other)
    assert (answer["systemMessage"], answer["additionalContext"]) == ("m1\nm2", "c2")


def test_contexts_joined_in_configuration_order() -> None:
    """additionalContext values are joined with newlines in order, empty ones dropped."""
    outs = [
        run(specific("SessionStart", additionalContext=c), event="SessionStart")
        for c in ("one", "", "two")
    ]
    outs.append(run("three", event="SessionStart"))
    assert combine(*outs)["additionalContext"] == "one\ntwo\nthree"


def test_blocking_reasons_joined() -> None:
    """Several blocking Stop hooks' reasons are joined with newlines."""
    a = run({"decision": "block", "reason": "a"}, event="Stop")
    b = run(exit_code=2, stderr=b"b", event="Stop")
    c = run({}, event="Stop")
    assert combine(a, b, c) == {**NOTHING, "blocked": True, "reason": "a\nb"}


def test_nothing_to_combine() -> None:
    """No outcomes: nothing blocked, every field empty."""
    assert combine() == NOTHING
    assert combine(fail_closed=True) == NOTHING


# -- fail-closed -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "status", "why"),
    [
        ({"exit_code": 1, "stderr": b"crash"}, "failed", "crash"),
        ({"exit_code": None, "timed_out": True}, "timed_out", "timed out after 60s"),
    ],
    ids=["failed", "timed_out"],
)
def test_fail_closed_denies_naming_the_hook(bad: dict[str, Any], status: str, why: str) -> None:
    """With fail_closed, a hook that did not complete denies, the reason naming it and why."""
    ok = run(specific(permissionDecision="allow", permissionDecisionReason="fine"), name="ok.sh")
    broken = run(name="broken.sh", **bad)
    assert combine(ok, broken) == {**NOTHING, "permissionDecision": "allow", "reason": "fine"}
    answer = combine(ok, broken, fail_closed=True)
    assert (answer["blocked"], answer["permissionDecision"]) == (True, "deny")
    assert answer["reason"].startswith(f"sandboxrun: hook broken.sh {status}: ")
    assert why in answer["reason"]
    assert "ok.sh" not in answer["reason"]


def test_fail_closed_keeps_a_real_deny_reason_first() -> None:
    """Fail-closed adds its reason after the hooks' own deny reasons."""
    deny = run(exit_code=2, stderr=b"no", name="a")
    broken = run(exit_code=5, name="b")
    assert combine(deny, broken, fail_closed=True)["reason"] == (
        "no\nsandboxrun: hook b failed: PreToolUse hook exited with code 5"
    )


def test_fail_closed_on_an_event_without_permissions() -> None:
    """Fail-closed blocks a Stop event without inventing a permission decision."""
    broken = run(event="Stop", exit_code=1, stderr=b"x", name="s")
    answer = combine(broken, fail_closed=True)
    assert answer == {**NOTHING, "blocked": True, "reason": "sandboxrun: hook s failed: x"}


def test_fail_closed_changes_nothing_for_healthy_hooks() -> None:
    """fail_closed with every hook completed is the ordinary combination."""
    ok = run(specific(permissionDecision="allow"))
    assert combine(ok, fail_closed=True) == combine(ok)


def test_blocked_answer() -> None:
    """blocked_answer denies with the reason, in the combined answer's keys."""
    answer = CLAUDE.blocked_answer("sandboxrun: no engine")
    assert list(answer) == COMBINED_KEYS
    assert answer == {
        **NOTHING,
        "blocked": True,
        "permissionDecision": "deny",
        "reason": "sandboxrun: no engine",
    }
