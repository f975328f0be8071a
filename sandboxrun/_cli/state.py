"""`sandboxrun state list|clean`: the persistent homes of hooks named in `state`, and
the /tmp folders of sessions under `tmp = "session"` (`_sandbox.sessiontmp`)."""

from __future__ import annotations

import argparse

from .._text import printable
from .common import emit, load


def command(args: argparse.Namespace) -> int:
    from .._sandbox import state as _state

    settings = load(args)
    if args.state_command == "clean":
        removed = _state.clean(settings, args.key, everything=args.all)
        for st in removed:
            print(printable(f"removed {st.key}  {st.hook}  ({st.workspace})"))
        print(f"removed {len(removed)} hook state(s)")
        return 0
    found = _state.states(settings)
    if args.json:
        emit({"stateDir": str(_state.state_root(settings)), "states": [
            {"key": st.key, "source": st.source, "hook": st.hook, "workspace": st.workspace,
             "path": str(st.path), "bytes": st.size}
            for st in found
        ]})  # fmt: skip
        return 0
    if not found:
        print(f"no hook states in {_state.state_root(settings)}")
    for st in found:
        print(printable(f"{st.key}  {st.size:>10}  {st.source:<9} {st.hook}  ({st.workspace})"))
    return 0
