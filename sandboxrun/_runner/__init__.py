"""The runner: an event or an `exec` command -> one sandboxed run per hook -> the reply.

`factory` finds the hooks of an event (`HookFactory`, `resolve_workspaces`) and
`combined` runs them (`CombinedHookRunner`, `NoOpHookRunner`); `hook` is one hook's run
for `run` and `exec` alike (`HookRunner`), `request` what that run is given
(`request_for`); `session` what our own failure means for an answer; `exec` the
`sandboxrun exec` command (its spec, the pass-through of the hook's bytes); `reply` what
`run` and `exec` answer, in the CLI or in `serve`.

The names `from sandboxrun._runner import HookFactory` found here before this package
existed are loaded on first access (PEP 562): the cold client imports `reply` on every
start, and must not pay for the factory's imports (the review gate, the dialects).
"""

from __future__ import annotations

# Not `typing`'s TYPE_CHECKING: `typing` costs the light client milliseconds (as in
# `sandboxrun/__init__.py`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .combined import RUN_GRACE, CombinedHookRunner, NoOpHookRunner
    from .factory import HookFactory, resolve_workspaces
    from .hook import HookRunner, hook_timeout

# Where each name lives: the names of the module `_runner.py` was before it became this
# package, so that `from sandboxrun._runner import HookFactory` keeps working.
_WHERE = {
    "RUN_GRACE": "combined", "CombinedHookRunner": "combined", "NoOpHookRunner": "combined",
    "HookFactory": "factory", "resolve_workspaces": "factory", "HookRunner": "hook",
    "hook_timeout": "hook",
}  # fmt: skip
__all__ = [
    "RUN_GRACE", "CombinedHookRunner", "HookFactory", "HookRunner", "NoOpHookRunner",
    "hook_timeout", "resolve_workspaces",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
