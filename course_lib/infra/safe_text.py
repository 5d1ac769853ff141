"""Text that is safe to show: no terminal control sequences from a page, no password from a URL.

Pages, file names and golden files come from anywhere. A page can hold an ESC byte that, printed
raw, recolours or rewrites a learner's terminal, or a BEL that beeps; a database URL pasted into
the wrong option would otherwise be echoed back with its password. Everything the command line
prints passes through `printable` (controls shown escaped, as `\\x1b`) and `redact` (any
`scheme://user:password@` shown as `scheme://user:***@`).
"""
from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and the C1 controls (U+0080-U+009F): a terminal acts on them.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROLS_AND_NEWLINES = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
# `scheme://user:password@`: the password runs to the LAST `@` before white space, as a URL
# parser reads a password with an unencoded `@` (`p@ss`: neither `p` nor `ss` may show); a `/`
# in it is hidden too: a port and path mistaken for a password cost a few characters of a
# message, a password cannot. One slash is enough: a URL passed as a path (`--corpus`) comes
# back as `postgresql:/alice:...`.
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*:/+[^\s:/@]*:)\S*@")
# libpq's key=value form: `host=db password=secret` or `password='two words'`.
_KEYWORD_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?:'(?:[^'\\]|\\.)*'|\S+)", re.I)
HIDDEN = "***"
# What is removed from a page's text: the controls above, but form feed and carriage return,
# which HTML reads as white space. No page means them as text.
CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def _escaped(match: re.Match) -> str:
    return f"\\x{ord(match.group()):02x}"


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` with every control character that a terminal acts on shown escaped (`\\x1b`).

    Tab and newline are kept, unless `one_line`, which escapes newlines too (a file name with a
    newline in it must not start a line of its own).
    """
    pattern = _CONTROLS_AND_NEWLINES if one_line else _CONTROLS
    return pattern.sub(_escaped, text)


def without_controls(text: str) -> tuple[str, int]:
    """`text` with every character of `CONTROLS` removed, and how many there were."""
    return CONTROLS.subn("", text)


def redact(text: str) -> str:
    """`text` with the password of every `scheme://user:password@host` URL, and of every libpq
    `password=...` setting, replaced by ***."""
    text = _URL_PASSWORD.sub(lambda m: f"{m.group('head')}{HIDDEN}@", text)
    return _KEYWORD_PASSWORD.sub(lambda m: f"{m.group('head')}{HIDDEN}", text)


def safe(text: str, *, one_line: bool = False) -> str:
    """Both: no password, no raw control character. What the command line prints."""
    return printable(redact(text), one_line=one_line)
