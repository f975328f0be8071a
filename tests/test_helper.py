"""How the image's helper is called (`_helper.command`): the protocol its label names."""

from __future__ import annotations

import pytest

from sandboxrun._backends.helper import (
    FRAME_MARK,
    Frame,
    FrameReader,
    Helper,
    command,
    frame_header,
    image_helper,
    new_nonce,
)

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


def test_the_frame_is_asked_for_only_of_a_helper_that_has_it() -> None:
    """`sandboxrun.helper-frame=1` (with the gate) says `--frame` is understood; its
    deadline is then the hook's own (it reports the kill), ours the backstop."""
    labels = {"sandboxrun.seccomp-helper": "/h", "sandboxrun.helper-protocol": "2",
              "sandboxrun.helper-frame": "1"}  # fmt: skip
    assert image_helper(labels, None) == Helper("/h", 2)  # no gate: no frame either
    framed = image_helper({**labels, "sandboxrun.helper-gate": "1"}, None)
    assert framed == Helper("/h", 2, gate=True, frame=True)
    argv = command(framed, ("true",), 30, ["/h"], None, gate=360, frame=True)
    assert argv[:6] == ["/h", "--gate", "360", "--frame", "--deadline", "30"]
    for helper in (Helper("/h", 2, gate=True), V2, None):
        with pytest.raises(ValueError, match="no final frame"):
            command(helper, ("true",), 30, ["/h"], None, frame=True)


NONCE = "5" * 32


def frame(nonce: str = NONCE, rest: str = " exit=3 reason=exit oom=0\n") -> bytes:
    return FRAME_MARK + nonce.encode() + rest.encode()


def feed(chunks: list[bytes], nonce: str = NONCE) -> tuple[bytes, FrameReader]:
    reader = FrameReader(nonce)
    out = b"".join(reader.feed(c) for c in chunks)
    return out, reader


def test_a_nonce_is_what_the_helper_reads() -> None:
    """32 lowercase hex digits and a newline (images/sandboxrun-seccomp.c, read_nonce)."""
    nonce = new_nonce()
    assert len(nonce) == 32 and set(nonce) <= set("0123456789abcdef") and nonce != new_nonce()
    assert frame_header(nonce) == nonce.encode() + b"\n"


def test_the_frame_is_taken_out_of_the_stream_however_it_is_cut() -> None:
    stream = b"hook says \x1e hi\n" + frame() + b"an orphan's late words"
    for cut in range(len(stream) + 1):
        for step in (1, 7):
            chunks = [stream[:cut]] + [stream[i : i + step] for i in range(cut, len(stream), step)]
            out, reader = feed(chunks)
            assert out == b"hook says \x1e hi\n", (cut, step)
            assert reader.done and reader.frame == Frame(3, "exit", False)


def test_a_lookalike_frame_is_the_hooks_output() -> None:
    """Another nonce, a cut mark, a mark at the very end: all passed through."""
    lie = frame("0" * 32, " exit=0 reason=exit oom=0\n")
    out, reader = feed([lie, b"\x1eSRF1 ", NONCE[:10].encode(), b"x\n", FRAME_MARK])
    assert not reader.done
    assert out + reader.flush() == lie + b"\x1eSRF1 " + NONCE[:10].encode() + b"x\n" + FRAME_MARK


def test_what_the_frame_says() -> None:
    for rest, expected in [
        (" exit=137 reason=deadline oom=0\n", Frame(137, "deadline", False)),
        (" exit=137 reason=output oom=?\n", Frame(137, "output", None)),
        (" exit=137 reason=exit oom=1\n", Frame(137, "exit", True)),
        (" exit=137 reason=whatever oom=1\n", None),  # not a frame of ours: the old way
        (" exit=0 reason=exit oom=0 extra\n", None),
    ]:
        _, reader = feed([frame(rest=rest)])
        assert reader.done and reader.frame == expected, rest
    _, reader = feed([frame(rest=" exit=0" + " " * 200)])  # no newline in time: given up
    assert reader.done and reader.frame is None
