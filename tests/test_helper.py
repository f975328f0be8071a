"""How the image's helper is called (`_helper.command`): the protocol its label names."""

from __future__ import annotations

import pytest

from sandboxrun._backends.helper import Helper, command, image_helper

V2 = Helper("/usr/local/bin/sandboxrun-seccomp", 2)


def test_protocol_two_gets_a_deadline_and_the_write_allowlist() -> None:
    """Protocol 2: options before `--`, the deadline after ours, Landlock required."""
    argv = command(V2, ("/bin/sh", "-c", "x"), 30, ("/home/hook", "/h/.cache"), None)
    assert argv[:3] == [V2.path, "--deadline", "35"]
    assert argv[argv.index("--") :] == ["--", "/bin/sh", "-c", "x"]
    assert "--landlock-optional" not in argv
    assert argv[argv.index("/home/hook") - 1 : argv.index("--")] == [
        "--write",
        "/home/hook",
        "--write",
        "/h/.cache",
    ]


def test_landlock_is_optional_only_under_gvisor_or_when_the_user_says_so() -> None:
    """Without Landlock the helper refuses to start hooks, unless gVisor or the setting."""
    assert "--landlock-optional" in command(V2, ("true",), 1, ["/h"], "runsc")
    assert "--landlock-optional" in command(V2, ("true",), 1, ["/h"], None, landlock_optional=True)


def test_images_without_the_label_run_the_hook_directly() -> None:
    """No helper label, no helper; protocol 1 keeps the old calling convention."""
    assert image_helper({}, None) is None
    old = image_helper({"sandboxrun.seccomp-helper": "/h"}, None)
    assert old == Helper("/h", 1) and command(old, ("true",), 1, ["/x"], None) == ["/h", "true"]


def test_the_gate_is_asked_for_only_of_a_helper_that_has_it() -> None:
    """`sandboxrun.helper-gate=1` (with protocol 2) says `--gate` is understood; asking a
    helper without it to gate is refused: its hook would start before its event."""
    labels = {"sandboxrun.seccomp-helper": "/h", "sandboxrun.helper-protocol": "2"}
    assert image_helper(labels, None) == Helper("/h", 2, gate=False)
    gated = image_helper({**labels, "sandboxrun.helper-gate": "1"}, None)
    assert gated == Helper("/h", 2, gate=True)
    argv = command(gated, ("true",), 30, ["/h"], None, gate=360)
    assert argv[:5] == ["/h", "--gate", "360", "--deadline", "35"]
    assert "--gate" not in command(gated, ("true",), 30, ["/h"], None)  # cold: as before
    for helper in (V2, None, Helper("/h", 1)):
        with pytest.raises(ValueError, match="no gate"):
            command(helper, ("true",), 30, ["/h"], None, gate=360)
