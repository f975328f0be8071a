"""The sandbox, observed from inside a real container: each hardening property is
checked by a hook that tries to break it, not by reading our own configuration."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from .conftest import HookWriter, Runner, pooled, under_gvisor


def context(result: dict) -> str:
    return str(result["contextModification"])


def only(result: dict) -> dict:
    assert len(result["hooks"]) == 1, result
    return dict(result["hooks"][0])


def test_hook_blocks_and_reads_event(hook: HookWriter, run_hooks: Runner) -> None:
    """A jq hook reads the event from stdin (EOF arrives) and its cancel is combined."""
    hook("""
        tool=$(jq -r .preToolUse.toolName)
        jq -n --arg t "$tool" '{cancel: true, errorMessage: "no \\($t)"}'
    """)
    result = run_hooks(event={"preToolUse": {"toolName": "execute_command"}})
    assert result["cancel"] is True
    assert result["errorMessage"] == "no execute_command"
    assert only(result)["status"] == "completed"


def test_workspace_is_read_only(hook: HookWriter, run_hooks: Runner, workspace: Path) -> None:
    """New files cannot be created in the workspace, and existing ones stay unchanged."""
    hook("""
        cat README.md >/dev/null || exit 9
        touch new-file || true
        (echo changed >> README.md) 2>/dev/null || true
        echo '{"contextModification": "tried"}'
    """)
    result = run_hooks()
    assert only(result)["status"] == "completed", result
    assert not (workspace / "new-file").exists()
    assert (workspace / "README.md").read_text() == "hello from the workspace\n"
    # runc says EROFS; gVisor checks permissions first and says EACCES. Either refuses.
    assert any(m in only(result)["stderr"] for m in ("Read-only file system", "Permission denied"))


def test_root_filesystem_is_read_only(hook: HookWriter, run_hooks: Runner) -> None:
    """/etc, /usr/bin and / cannot be written; /tmp and $HOME can (tmpfs)."""
    hook("""
        for p in /etc/evil /usr/bin/evil /evil; do
          if touch "$p" 2>/dev/null; then echo "{\\"contextModification\\": \\"wrote $p\\"}"; exit; fi
        done
        touch /tmp/ok "$HOME/ok" || exit 3
        grep -E ' / .*\\bro\\b' /proc/mounts >/dev/null || exit 4
        echo '{"contextModification": "all refused"}'
    """)
    result = run_hooks()
    assert context(result) == "all refused", result


def test_no_network(hook: HookWriter, run_hooks: Runner) -> None:
    """Only the loopback interface exists; connecting out and DNS both fail."""
    hook(
        """
        import json, socket
        ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]]
        tries = []
        for target in [("1.1.1.1", 53), ("169.254.169.254", 80), ("172.17.0.1", 2375)]:
            try:
                socket.create_connection(target, timeout=2).close()
                tries.append(f"{target} reached")
            except OSError as exc:
                tries.append(type(exc).__name__)
        try:
            socket.getaddrinfo("example.com", 80)
            tries.append("dns resolved")
        except OSError:
            tries.append("dns failed")
        print(json.dumps({"contextModification": json.dumps({"ifaces": ifaces, "tries": tries})}))
    """,
        shebang="#!/usr/bin/env python3",
    )
    seen = json.loads(context(run_hooks()))
    assert seen["ifaces"] == ["lo"]
    assert not any("reached" in t or "resolved" in t for t in seen["tries"]), seen


def test_no_network_keeps_loopback_and_localhost(hook: HookWriter, run_hooks: Runner) -> None:
    """Without network (NetworkDisabled), `localhost` still resolves, a server on it can be
    reached from the same hook, no route leads anywhere else, and /etc/hosts is read-only."""
    hook(
        """
        import json, socket
        seen = {"localhost": socket.getaddrinfo("localhost", 80, socket.AF_INET)[0][4][0]}
        server = socket.create_server(("127.0.0.1", 0))
        socket.create_connection(server.getsockname(), timeout=2).close()
        seen["loopback"] = "ok"
        seen["routes"] = open("/proc/net/route").read().splitlines()[1:]
        try:
            open("/etc/hosts", "a").close()
            seen["hosts"] = "writable"
        except OSError:
            seen["hosts"] = "read-only"
        print(json.dumps({"contextModification": json.dumps(seen)}))
    """,
        shebang="#!/usr/bin/env python3",
    )
    seen = json.loads(context(run_hooks()))
    assert seen == {"localhost": "127.0.0.1", "loopback": "ok", "routes": [], "hosts": "read-only"}


def test_no_host_environment(
    hook: HookWriter, run_hooks: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Host variables do not reach the hook, not even through /proc/1/environ."""
    monkeypatch.setenv("SANDBOXRUN_TEST_SECRET", "hunter2")
    hook("""
        if env | grep -q hunter2; then echo '{"contextModification": "leaked env"}'; exit; fi
        if tr '\\0' '\\n' < /proc/1/environ 2>/dev/null | grep -q hunter2; then
          echo '{"contextModification": "leaked proc"}'; exit
        fi
        echo "{\\"contextModification\\": \\"$(env | cut -d= -f1 | sort | tr '\\n' ' ')\\"}"
    """)
    names = set(context(run_hooks()).split())
    assert names <= {"HOME", "PATH", "LANG", "TMPDIR", "HOSTNAME", "PWD", "SHLVL", "_"}, names


def test_non_root_no_capabilities_no_new_privileges(hook: HookWriter, run_hooks: Runner) -> None:
    """The hook is not root, holds no capability and cannot gain privileges."""
    hook("""
        caps=$(grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status | tr -s '\\t ' ' ' | tr '\\n' ';')
        echo "{\\"contextModification\\": \\"uid=$(id -u) $caps\\"}"
    """)
    seen = context(run_hooks())
    assert not seen.startswith("uid=0 "), seen
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        # gVisor's /proc/self/status has no CapAmb line; the others must all be empty.
        if not (under_gvisor() and cap == "CapAmb" and cap not in seen):
            assert f"{cap}: 0000000000000000" in seen, seen
    # Nor a NoNewPrivs line.
    assert "NoNewPrivs: 1" in seen or (under_gvisor() and "NoNewPrivs" not in seen), seen


def test_timeout_kills_a_hook_that_ignores_sigterm(hook: HookWriter, run_hooks: Runner) -> None:
    """A hook trapping SIGTERM and spinning is killed at its deadline and reported timed_out."""
    hook("""
        trap '' TERM INT
        sleep 300 &
        while :; do :; done
    """)
    started = time.monotonic()
    result = run_hooks(timeout=2)
    elapsed = time.monotonic() - started
    report = only(result)
    assert report["status"] == "timed_out", report
    assert report["exitCode"] == 137
    assert result["cancel"] is False  # fail-open
    assert elapsed < 2 + 30, elapsed  # the deadline is 2 s; a kill is over within 1 s here


def test_fail_closed_timeout_cancels(hook: HookWriter, run_hooks: Runner) -> None:
    """With fail_closed a timed-out hook becomes a cancel that names the hook."""
    hook("sleep 60")
    result = run_hooks(timeout=1, fail_closed=True)
    assert result["cancel"] is True
    assert "timed_out" in result["errorMessage"] and "PreToolUse" in result["errorMessage"]


def test_stdout_flood_is_bounded_and_killed(hook: HookWriter, run_hooks: Runner) -> None:
    """A hook printing endlessly is killed past the output cap; only the tail is kept."""
    hook("yes '{\"cancel\": true}'")
    result = run_hooks(output_limit=4 << 20, stdout_tail=64 << 10, timeout=20)
    report = only(result)
    assert report["status"] == "failed", report
    assert report["outputTruncated"] is True
    assert "output_limit" in report["error"]
    assert result["cancel"] is False  # a killed hook's stdout is not an answer


def test_long_output_keeps_the_final_json(hook: HookWriter, run_hooks: Runner) -> None:
    """Megabytes of logs before the answer are trimmed to the tail, and the answer is found."""
    hook("""
        head -c 3000000 /dev/zero | tr '\\0' 'x' | fold -w 100
        echo '{"cancel": true}'
    """)
    result = run_hooks(stdout_tail=256 << 10)
    assert result["cancel"] is True
    assert only(result)["outputTruncated"] is True


def test_hook_that_never_reads_a_large_stdin(hook: HookWriter, run_hooks: Runner) -> None:
    """10 MB of stdin that the hook never reads neither hangs nor fails the run."""
    hook("echo '{\"cancel\": true}'")
    result = run_hooks(event={"preToolUse": {"parameters": {"content": "x" * 10_000_000}}})
    assert result["cancel"] is True
    assert only(result)["durationMs"] < 15_000


def test_stdin_arrives_whole_with_eof(hook: HookWriter, run_hooks: Runner) -> None:
    """A hook that waits for EOF gets the whole event, byte for byte."""
    hook("""
        n=$(wc -c)
        echo "{\\"contextModification\\": \\"$n\\"}"
    """)
    event = {"preToolUse": {"parameters": {"content": "y" * 300_000}}}
    assert int(context(run_hooks(event=event))) > 300_000


def test_background_child_does_not_hold_the_run(hook: HookWriter, run_hooks: Runner) -> None:
    """A child left running with stdout open dies with the hook; the run ends at once."""
    hook("""
        (sleep 100; echo late) &
        echo '{"contextModification": "done"}'
    """)
    result = run_hooks(timeout=30)
    assert context(result) == "done"
    assert only(result)["durationMs"] < 10_000


def test_memory_limit_reports_oom(hook: HookWriter, run_hooks: Runner) -> None:
    """A hook allocating past the memory limit is killed and reported as OOM."""
    hook(
        """
        x = bytearray(512 * 1024 * 1024)
        print('{"cancel": true}')
    """,
        shebang="#!/usr/bin/env python3",
    )
    result = run_hooks(memory="64m")
    report = only(result)
    assert report["status"] == "failed"
    assert report["oomKilled"] is True, report
    assert result["cancel"] is False


def test_pids_limit_contains_a_fork_bomb(hook: HookWriter, run_hooks: Runner) -> None:
    """A fork bomb hits the pids limit and is killed at the deadline, not the host."""
    hook("""
        bomb() { bomb | bomb & }; bomb
        sleep 2; echo '{"cancel": true}'
    """)
    result = run_hooks(timeout=5, pids=64)
    assert only(result)["status"] in {"timed_out", "failed", "completed"}
    # The point: it ended, and the next hook runs normally.
    hook('echo \'{"contextModification": "fine"}\'')
    assert context(run_hooks()) == "fine"


@pytest.mark.parametrize("code", [1, 2, 124, 137, 143])
def test_exit_codes_are_reported(hook: HookWriter, run_hooks: Runner, code: int) -> None:
    """Each non-zero exit is a failed hook with that exact code; stdout is not parsed."""
    hook(f"echo '{{\"cancel\": true}}'; echo oops >&2; exit {code}")
    result = run_hooks()
    report = only(result)
    assert (report["status"], report["exitCode"]) == ("failed", code)
    assert report["error"] == f"PreToolUse hook exited with code {code}"
    assert report["stderr"] == "oops\n"
    assert result["cancel"] is False


def test_second_run_sees_nothing_of_the_first(hook: HookWriter, run_hooks: Runner) -> None:
    """/tmp and $HOME are fresh in every run."""
    hook("""
        found=$(ls /tmp/marker "$HOME/marker" 2>/dev/null | wc -l)
        touch /tmp/marker "$HOME/marker"
        echo "{\\"contextModification\\": \\"$found\\"}"
    """)
    assert context(run_hooks()) == "0"
    assert context(run_hooks()) == "0"


def test_hooks_of_two_roots_run_concurrently(
    hook: HookWriter, run_hooks: Runner, workspace: Path
) -> None:
    """Global and workspace hooks run in parallel: the spans of two 6-second hooks overlap
    (run one after the other, they never would, however fast or slow the machine)."""
    span = 'a=$(date +%s.%N); sleep 6; echo "{\\"contextModification\\": \\"$a $(date +%s.%N)\\"}"'
    hook(span)
    home_hooks = workspace.parent / "home" / "Documents" / "Cline" / "Hooks"
    home_hooks.mkdir(parents=True)
    (home_hooks / "PreToolUse").write_text(f"#!/bin/sh\n{span}\n")
    (home_hooks / "PreToolUse").chmod(0o755)
    result = run_hooks()
    assert [h["source"] for h in result["hooks"]] == ["global", "workspace"]
    (g0, g1), (w0, w1) = (map(float, s.split()) for s in context(result).split("\n\n"))
    assert max(g0, w0) < min(g1, w1), context(result)


def test_hook_runs_in_workspace_at_same_path(
    hook: HookWriter, run_hooks: Runner, workspace: Path
) -> None:
    """The workspace is mounted at its host path and is the working directory."""
    hook('echo "{\\"contextModification\\": \\"$(pwd)\\"}"')
    assert context(run_hooks()) == str(workspace)


def test_no_container_left_behind(engine, hook: HookWriter, run_hooks: Runner) -> None:
    """After runs (including killed ones) no container of this process remains."""
    hook("sleep 30")
    run_hooks(timeout=1)
    mine = {"label": ["sandboxrun.managed=1", f"sandboxrun.pid={os.getpid()}"]}
    left = engine.api.containers(all=True, filters=mine)
    assert [c for c in left if c["Id"] not in pooled(engine)] == []
