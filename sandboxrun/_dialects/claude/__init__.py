"""The Claude Code family (Claude Code, Qoder, Qoder CN).

`dialect` is the protocol (input, answers, combining); `settings` reads the settings
files; `matchers` decides which hooks apply to an event; `handler` reads one handler.
"""
