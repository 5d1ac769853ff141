"""Decoding by the libraries (course_lib.core.decode): bs4 finds the byte order mark and the
declared charset, charset-normalizer guesses an undeclared legacy page, and the course's policy
keeps a Western page in cp1252, as a browser would, whatever the guess."""
from course_lib.core.decode import decode_html, decode_page, sniff_encoding

RUSSIAN = "<p>" + "Привет, мир, это длинная страница о документации. " * 30 + "</p>"
FRENCH = "<p>" + "Le café est très élégant à côté de la gare. " * 30 + "</p>"


def test_an_undeclared_cyrillic_page_is_read_in_its_own_encoding():
    for codec in ("cp1251", "koi8_r"):
        raw = RUSSIAN.encode(codec)
        name, reason = sniff_encoding(raw)
        assert name == codec and reason.endswith(f"read as {codec}")
        assert decode_page(raw) == (RUSSIAN, "")


def test_an_undeclared_western_page_stays_cp1252_even_with_an_undefined_byte():
    # charset-normalizer takes this for Baltic cp775; a browser shows cp1252, and so does the course.
    raw = FRENCH.encode("cp1252") + b"\x81"
    assert sniff_encoding(raw)[0] == "cp1252"
    assert decode_html(raw) == FRENCH + "\x81"


def test_a_short_legacy_page_is_no_evidence_for_another_script():
    assert sniff_encoding("<p>日本語</p>".encode("shift_jis"))[0] == "cp1252"  # too short to tell
    assert sniff_encoding(b"<p>\x81\x9d</p>")[0] == "cp1252"


def test_a_utf32_byte_order_mark_is_read():
    raw = "\ufeff<p>café</p>".encode("utf-32-le")
    assert sniff_encoding(raw) == ("utf-32-le", "byte order mark (utf-32-le)")
    assert decode_html(raw) == "<p>café</p>"


def test_an_xml_declaration_is_a_declared_charset():
    raw = '<?xml version="1.0" encoding="koi8-r"?><p>Привет</p>'.encode("koi8_r")
    assert sniff_encoding(raw) == ("koi8-r", "declared charset koi8-r")
