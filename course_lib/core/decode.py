"""From the bytes of a page to its text: is it text at all, which encoding, what was repaired.

The detection is the libraries': a byte order mark and a declared charset (<meta>, <?xml?>) are
found by bs4's `EncodingDetector`, and the encoding of an undeclared legacy page is guessed by
`charset-normalizer`. What stays here is the course's policy over their answers, which the
loader's reports depend on: a declaration is believed only when the bytes do not contradict
it; mostly-valid UTF-8 stays UTF-8 with its bad bytes counted (an error you can see), not read
as cp1252 (mojibake you cannot); a legacy page is read as cp1252, as browsers do, unless it is
plainly in another script (a Cyrillic page in cp1251); and every repair is reported.
"""
from __future__ import annotations

import codecs
import unicodedata

from bs4.dammit import EncodingDetector

from course_lib.infra.safe_text import without_controls

BINARY_SHARE = 0.02  # more control characters than this in a sample: not text
SNIFF_BYTES = _SAMPLE = 8192  # the bytes `sniff_binary` reads: a caller reads no more to decide
# Labels browsers read as windows-1252; a <meta> that says UTF-16 or UTF-32 was itself read as
# ASCII, so it cannot be true, and browsers ignore it (they read UTF-16 only with a BOM).
_AS_CP1252 = {"iso-8859-1", "latin-1", "latin1", "ascii", "us-ascii"}
_NOT_IN_META = ("utf-16", "utf-32", "utf_16", "utf_32", "ucs-2", "ucs2")
# Legacy text (cp1252) forms a valid UTF-8 sequence by chance for well under 1 in 20 of its high
# bytes; when unsure, UTF-8 errs loudly (bad bytes are reported as repaired), cp1252 silently (Ã©).
UTF8_EVIDENCE = 10
# charset-normalizer's coherence (how much the text reads as some language) below which its
# guess is no evidence: a short page or a stray byte (b"\x81\x9d" "is" Japanese) stays cp1252.
LANGUAGE_EVIDENCE = 0.2
# cp1252 leaves five bytes undefined; a browser shows them as the same code points as latin-1.
_CP1252 = {i: bytes([i]).decode("cp1252") for i in range(0x80, 0xA0)
           if i not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)}
_CODEC_OF = {"utf-8-replace": "utf-8"}


def sniff_binary(raw: bytes) -> str | None:
    """Why these bytes are not a text file, or None when they look like text: NUL bytes (outside
    UTF-16 with a BOM); more than `BINARY_SHARE` of the first 8 KB being control characters
    (random data has one in ten; text none but tab and newline); or a sample mostly not UTF-8
    with a tenth of that share. A legacy page (cp1251) has at most a stray control: it is kept."""
    sample = raw[:_SAMPLE]
    if not sample or sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    if b"\x00" in sample:
        return "binary file (NUL bytes): not an HTML file"
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13)) + sample.count(127)
    undecodable = sample.decode("utf-8", "replace").count("\ufffd")
    share = controls / len(sample)
    if share > BINARY_SHARE or (share > BINARY_SHARE / 10 and undecodable / len(sample) > 0.3):
        return (f"binary file ({controls} control and {undecodable} undecodable bytes "
                f"in the first {len(sample)}): not an HTML file")
    return None


def _utf8_evidence(raw: bytes) -> tuple[int, int, str]:
    """(valid multi-byte characters, bad bytes, where the first bad byte is) of `raw` as UTF-8."""
    try:
        text, bad, first_bad = raw.decode("utf-8"), 0, ""
    except UnicodeDecodeError as err:
        text = raw.decode("utf-8", "replace")
        bad, first_bad = _replaced(text, raw, "utf-8"), f"byte {raw[err.start]:#04x} at {err.start}"
    return len(text) - len(text.encode("ascii", "ignore")) - bad, bad, first_bad


def _replaced(text: str, raw: bytes, name: str) -> int:
    """How many characters decoding `raw` as `name` replaced with U+FFFD (not counting any the
    page itself holds)."""
    try:
        literal = raw.count("\ufffd".encode(_CODEC_OF.get(name, name)))
    except (UnicodeEncodeError, LookupError):
        literal = 0
    return max(0, text.count("\ufffd") - literal)


def _legacy(raw: bytes) -> str:
    """The encoding of a page that is not UTF-8 and declares nothing usable: charset-normalizer's
    guess when it reads the bytes as a language in a script other than Latin (cp1251, Shift JIS,
    KOI8-R), else cp1252. Its guesses among Latin encodings are not trusted: on short pages it
    takes French in cp1252 for Baltic cp775, where cp1252 is what a browser would show."""
    from charset_normalizer import from_bytes

    best = from_bytes(raw).best()
    if best is None or best.coherence < LANGUAGE_EVIDENCE:
        return "cp1252"
    letters = [c for c in str(best) if ord(c) > 127 and c.isalpha()]
    latin = sum(unicodedata.name(c, "").startswith("LATIN") for c in letters)
    return best.encoding if letters and latin < len(letters) / 2 else "cp1252"


def _declared_fits(raw: bytes, declared: str, bad: int, multibyte: int, first_bad: str) -> tuple[str, str]:
    """(encoding, reason) when the declared charset fits the bytes, else ("", why it was ignored)."""
    name = "cp1252" if declared in _AS_CP1252 else declared
    if name.startswith(_NOT_IN_META):
        return "", f" (declared charset {declared} ignored: the page is not UTF-16)"
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return "", f" (unknown declared charset {declared} ignored)"
    if codec == "utf-8":
        if not bad:
            return "utf-8", f"declared charset {declared}"
        if multibyte:
            return "utf-8-replace", f"declared charset {declared}; {bad} bad bytes ({first_bad}) replaced"
        return "", f" (declared charset {declared} does not fit: no valid UTF-8 character)"
    if _replaced(_decode(raw, name), raw, name) <= bad:
        return name, f"declared charset {declared}"
    return "", f" (declared charset {declared} does not fit the bytes)"


def sniff_encoding(raw: bytes) -> tuple[str, str]:
    """Choose the encoding of an HTML file by the evidence of its bytes, and say why.

    A byte order mark decides. A declared charset ("iso-8859-1" and "ascii" mean windows-1252, as
    in browsers) is used unless the bytes contradict it: UTF-16/32 named in an ASCII-readable tag,
    an unknown label, or more replacements than UTF-8 would need. Else UTF-8 if the bytes are
    UTF-8, or if they hold a valid multi-byte character per `UTF8_EVIDENCE` bad bytes (any one,
    when UTF-8 is declared): "utf-8-replace", each bad byte becoming U+FFFD (`decode_page`
    counts them); else the legacy encoding `_legacy` picks, cp1252 unless plainly another script.
    """
    _, bom = EncodingDetector.strip_byte_order_mark(raw)
    if bom:
        name = codecs.lookup(bom).name
        return name, f"byte order mark ({name})"
    multibyte, bad, first_bad = _utf8_evidence(raw)
    declared, ignored = EncodingDetector.find_declared_encoding(raw, is_html=True), ""
    if declared:
        name, reason = _declared_fits(raw, declared, bad, multibyte, first_bad)
        if name:
            return name, reason
        ignored = reason
    if not bad:
        return "utf-8", "valid UTF-8" + ignored
    if UTF8_EVIDENCE * multibyte >= bad:
        return "utf-8-replace", f"mostly valid UTF-8 ({bad} bad bytes, first {first_bad}): replaced{ignored}"
    name = _legacy(raw)
    return name, f"not valid UTF-8 ({first_bad}): read as {name}{ignored}"


def _decode(raw: bytes, name: str) -> str:
    """`raw` decoded as `name` (a name `sniff_encoding` returns), unreadable bytes as U+FFFD."""
    codec = codecs.lookup(_CODEC_OF.get(name, name)).name
    if codec == "cp1252":
        return raw.decode("latin-1").translate(_CP1252)
    return raw.decode(codec, "replace").lstrip("\ufeff")


def decode_html(raw: bytes) -> str:
    """Decode the bytes of an HTML file to text, choosing the encoding with `sniff_encoding`.

    Never raises: a byte the chosen encoding cannot read becomes U+FFFD (`decode_page` counts them).
    """
    return _decode(raw, sniff_encoding(raw)[0])


def decode_page(raw: bytes) -> tuple[str, str]:
    """A page's text for the corpus, and what was repaired in it ("" when nothing was).

    Decoded as `decode_html` does; bytes the encoding could not read are replaced with U+FFFD
    and control characters (`safe_text.CONTROLS`) removed, and the note counts both, so a loader
    reports the page as repaired instead of changing it without a word.
    """
    name, _ = sniff_encoding(raw)
    text = _decode(raw, name)
    replaced = _replaced(text, raw, name)
    text, controls = without_controls(text)
    codec = "UTF-8" if name.startswith("utf-8") else name
    repairs = [f"{replaced} undecodable byte{'s' * (replaced != 1)} ({codec}) replaced" if replaced else "",
               f"{controls} control character{'s' * (controls != 1)} removed" if controls else ""]
    return text, "; ".join(r for r in repairs if r)
