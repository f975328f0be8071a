"""GitHub Copilot CLI (and cloud agent) hooks: `dialect` (the protocol), `config` (where
hooks are configured), `events` (event names in both spellings, matchers)."""

from .dialect import COPILOT, CopilotDialect

__all__ = ["COPILOT", "CopilotDialect"]
