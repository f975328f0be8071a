"""Gemini CLI's hooks: `settings` (where they are configured), `dialect` (the protocol)."""
