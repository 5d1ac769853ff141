"""Decoding: the bytes of an HTML file to text, choosing the encoding the way a browser does.

`corpus.load_pages` and `parse.parse_file` both read raw bytes; this is the one place that
decides between a byte order mark, a declared charset, UTF-8 and cp1252.
"""
from __future__ import annotations

import re

_META = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([-\w.:]+)|<\?xml[^>]*encoding=["']([-\w.:]+)""",
                   re.I)
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def sniff_encoding(raw: bytes) -> tuple[str, str]:
    """Choose the encoding of an HTML file and say why: BOM, then <meta charset>, then UTF-8, then
    UTF-8 with the stray bytes replaced ("utf-8-replace") when the text is mostly UTF-8, then cp1252.

    Browsers read "iso-8859-1" and "ascii" as windows-1252, so we do too. A declared encoding
    that does not decode the bytes is ignored (a page saved by another tool keeps its old meta
    tag), and undeclared bytes that are not UTF-8 are read as cp1252, the usual culprit.
    """
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name, f"byte order mark ({name})"
    match = _META.search(raw[:4096])
    if match:
        declared = (match.group(1) or match.group(2)).decode("ascii", "replace").lower()
        name = "cp1252" if declared in ("iso-8859-1", "latin-1", "latin1", "ascii", "us-ascii") else declared
        try:
            raw.decode(name)
            return name, f"declared charset {declared}"
        except (LookupError, UnicodeDecodeError):
            pass
    try:
        raw.decode("utf-8")
        return "utf-8", "valid UTF-8" + (" (declared charset did not decode)" if match else "")
    except UnicodeDecodeError as err:
        first_bad = f"byte {raw[err.start]:#04x} at {err.start}"
    if _mostly_utf8(raw):
        return "utf-8-replace", f"mostly valid UTF-8 ({first_bad}): stray bytes replaced"
    return "cp1252", f"not valid UTF-8 ({first_bad}): read as cp1252"


def _mostly_utf8(raw: bytes) -> bool:
    """True when the bytes hold at least as many valid multi-byte UTF-8 characters as invalid bytes: a UTF-8
    page with one stray byte (keep its "Café", lose one character) rather than a legacy page,
    whose accented letters are all invalid UTF-8 and which has no valid multi-byte character."""
    text = raw.decode("utf-8", "replace")
    replaced = text.count("\ufffd") - raw.count("\ufffd".encode())
    multibyte = sum(1 for ch in text if ord(ch) > 127) - replaced
    return 0 < replaced <= multibyte


# cp1252 leaves five bytes undefined; a browser shows them as the same code points as latin-1.
_CP1252 = {i: bytes([i]).decode("cp1252") for i in range(0x80, 0xA0)
           if i not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)}


def decode_html(raw: bytes) -> str:
    """Decode the bytes of an HTML file to text, choosing the encoding with `sniff_encoding`."""
    name, _ = sniff_encoding(raw)
    if name == "utf-8-replace":
        return raw.decode("utf-8", "replace").lstrip("\ufeff")
    if name == "cp1252":
        return raw.decode("latin-1").translate(_CP1252)
    return raw.decode(name).lstrip("\ufeff")
