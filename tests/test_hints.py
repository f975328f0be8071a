"""What the sandbox stopped (`_sandbox.hints`, issue 17 item 8): the patterns read from a hook's
stderr, their limits, and where the hint shows (the report, `check`, `run --answer agent`);
never in a decision. The real hooks are in tests/engine/test_sandbox_stopped.py."""

from __future__ import annotations

import pytest

from sandboxrun._check.events import EventLine
from sandboxrun._check.replay import judge
from sandboxrun._dialects.claude.dialect import CLAUDE
from sandboxrun._dialects.cline import CLINE
from sandboxrun._runner.reply import agent_answer
from sandboxrun._sandbox.hints import HOME_WRITE, NETWORK, READ_ONLY, TAIL, hint
from sandboxrun._sandbox.mounts import sandbox_home
from sandboxrun._types import CombinedResult, HookOutcome, HookSpec


@pytest.mark.parametrize(
    ("stderr", "stopped"),
    [(b"touch: cannot touch 'x': Read-only file system\n", READ_ONLY),
     (b"OSError: [Errno 30] Read-only file system: '/ws/.cache'\n", READ_ONLY),
     (b"curl: (6) Could not resolve host: registry.test\n", NETWORK),
     (b"curl: (7) Failed to connect to 10.0.0.1 port 80: Network is unreachable\n", NETWORK),
     (b"  cause: failed to lookup address information: Temporary failure in name resolution\n",
      NETWORK),
     (b"npm error code EAI_AGAIN\nnpm error request failed, reason: getaddrinfo EAI_AGAIN x\n",
      NETWORK),
     (b"Error: getaddrinfo ENOTFOUND registry.test\n", NETWORK),
     (b"Error: connect ENETUNREACH 10.0.0.1:443\n", NETWORK),
     (b"fatal: unable to access 'https://x.test/': Could not resolve host: x.test\n", NETWORK),
     (b"wget: unable to resolve host address 'x.test'\n", NETWORK)],
)  # fmt: skip
def test_each_wall_is_named_whatever_the_exit_code(stderr: bytes, stopped: str) -> None:
    for failed in (True, False):
        found = hint(b"some output\n" + stderr, failed=failed)
        assert found.stopped == stopped and found.sentence, found


@pytest.mark.parametrize(
    "stderr",
    [b"", b"all good\n", b"curl: (7) Failed to connect to 127.0.0.1 port 3000: Connection refused\n",
     b"cat: secret: Permission denied\n", b"bash: ./x: No such file or directory\n",
     b"jq: not found\n"],
)  # fmt: skip
def test_no_wall_in_a_hooks_own_business(stderr: bytes) -> None:
    """Connection refused (loopback), Permission denied (a file), a missing file or tool:
    never `sandboxStopped`; a missing one is a sentence only when the hook failed."""
    assert hint(stderr, failed=False).stopped is None
    assert hint(stderr, failed=False).sentence is None
    failed = hint(stderr, failed=True)
    assert failed.stopped is None
    assert (failed.sentence is not None) == (b"not found" in stderr or b"No such" in stderr)


def test_a_write_straight_in_home() -> None:
    stderr = f"bash: {sandbox_home()}/.x: Permission denied\n".encode()
    assert hint(stderr, failed=False).stopped == HOME_WRITE


def test_the_home_is_looked_up_only_for_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    # The warm path's answer waits for `hint`: no password-database look-up (which lets
    # the pool's threads take the GIL) unless a line says a write was refused.
    def looked_up() -> str:
        raise AssertionError("sandbox_home looked up")

    monkeypatch.setattr("sandboxrun._sandbox.hints.sandbox_home", looked_up)
    assert hint(b"blocked: rm -rf\n", failed=True).stopped is None
    with pytest.raises(AssertionError, match="looked up"):
        hint(b"bash: /x: Permission denied\n", failed=False)


def test_the_network_the_user_granted_is_not_the_sandboxs() -> None:
    """Under `network = "bridge"` a failed lookup is the world's, not the sandbox's; on an
    allowlist the sentence says what an allowlist hook may do."""
    stderr = b"curl: (6) Could not resolve host: x.test\n"
    assert hint(stderr, failed=True, network="bridge").stopped is None
    allow = hint(stderr, failed=False, network="allowlist")
    assert allow.stopped == NETWORK and "allowlist" in (allow.sentence or "")
    assert "grant it" in (hint(stderr, failed=False).sentence or "")
    ro = b"touch: cannot touch 'x': Read-only file system\n"
    assert hint(ro, failed=False, network="bridge").stopped == READ_ONLY


def test_a_pattern_the_event_holds_is_an_echo() -> None:
    """A logger copying the event (a tool output naming a read-only file system) to
    stderr hit no wall; the same words not in the event are one."""
    stderr = b'{"result": "mkdir: Read-only file system"}\n'
    assert hint(stderr, failed=False, event=stderr).stopped is None
    assert hint(stderr, failed=False, event=b"{}").stopped == READ_ONLY


def test_the_proxys_refusal_comes_first_and_only_the_tail_is_read() -> None:
    found = hint(b"Read-only file system\n", failed=False, refused=("evil.test", "x.test:8080"))
    assert found.stopped == "refused host evil.test, x.test:8080"
    assert "evil.test, x.test:8080" in (found.sentence or "")
    assert hint(b"Read-only file system\n" + b"." * TAIL, failed=False).stopped is None


# How the Claude dialect reads a PreToolUse hook's exit 2 with "no registry" on stderr.
DENY = {"blocked": True, "permissionDecision": "deny", "reason": "no registry"}


def _outcome(
    answer: dict[str, object], stopped: str | None, exit_code: int = 0, dialect: str = "claude"
) -> HookOutcome:
    spec = HookSpec("PreToolUse", "guard.sh", "user", ("/bin/sh", "-c", "g"), "/", ())
    return HookOutcome(spec, "completed", exit_code, answer=answer, sandbox_stopped=stopped)


def test_the_report_has_the_field_only_when_something_was_stopped() -> None:
    assert "sandboxStopped" not in _outcome({}, None).report()
    assert _outcome({}, NETWORK).report()["sandboxStopped"] == NETWORK


def test_check_names_it_beside_the_decision() -> None:
    """A block whose hook hit a wall: `check`'s reason (table details, JUnit message) says
    what the sandbox stopped after the hook's own reason; the decision is the hook's."""
    outcome = _outcome(DENY, NETWORK, exit_code=2)
    combined = CombinedResult(CLAUDE.combine([outcome], True), (outcome,))
    line = EventLine(1, "PreToolUse", {})
    result = judge(CLAUDE, True, line, combined, 5)
    assert result.decision == "denied"
    assert result.reason == "no registry; sandbox stopped: network connection"
    assert result.document["hooks"][0]["sandboxStopped"] == NETWORK


def test_run_answer_agent_says_it_and_keeps_the_answer() -> None:
    """`run --answer agent`: Claude's block stays exit 2 with the reason first; Cline's
    cancel stays on stdout; the hint is one more stderr line."""
    outcome = _outcome(DENY, NETWORK, exit_code=2)
    combined = CombinedResult(CLAUDE.combine([outcome], True), (outcome,))
    answer = agent_answer(CLAUDE, "PreToolUse", combined)
    assert answer.exit_code == 2 and answer.stdout == b""
    assert answer.stderr.decode().splitlines() == [
        "no registry", "sandboxrun: hook guard.sh: sandbox stopped: network connection"
    ]  # fmt: skip
    cline = _outcome({"cancel": True, "errorMessage": "audit"}, READ_ONLY)
    combined = CombinedResult(CLINE.combine([cline], True), (cline,))
    answer = agent_answer(CLINE, "PreToolUse", combined)
    assert answer.exit_code == 0 and b'"cancel": true' in answer.stdout
    assert b"sandbox stopped: read-only workspace write" in answer.stderr
