"""Text a hook or a repository controls, made safe for a terminal or a log line.

Hook names, paths, commands, reasons and engine messages may carry escape sequences
(a terminal title, a screen clear), C1 controls (U+0080-U+009F, which some terminals
read as ESC [), bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069, which make
a line read differently from what it is), line breaks (forged log lines), lone
surrogates and unassigned code points. `printable` escapes all of them.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every non-printable character escaped as Python writes it (\\x1b,
    \\u202e, \\udc80): what `str.isprintable` calls non-printable (the Cc, Cf, Cs, Co,
    Cn, Zl, Zp and Zs categories, except the ASCII space) never reaches the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    code = ord(c)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
