"""The shipped corpus: verified against its manifest, extracted safely, loaded completely."""
import hashlib
import io
import shutil
import tarfile
from pathlib import Path

import pytest

from course_lib.core import decode
from course_lib.core import load as corpus


def test_shipped_corpus_matches_manifest_and_loads_every_page():
    pages = corpus.load_pages()
    manifest = corpus.read_manifest()
    html_entries = sorted(n for n in manifest if n.endswith(".html"))
    assert [p.path for p in pages] == html_entries
    assert len(pages) == 62
    assert all("<html" in p.html for p in pages)


def test_pages_are_kept_byte_for_byte_with_their_boilerplate():
    page = next(p for p in corpus.load_pages() if p.path == "library/datetime.html")
    assert 'class="sphinxsidebar"' in page.html and "headerlink" in page.html
    digest = hashlib.sha256(page.html.encode("utf-8")).hexdigest()
    assert digest == corpus.read_manifest()["library/datetime.html"]


def _copy_corpus(tmp_path):
    target = tmp_path / "corpus"
    shutil.copytree(corpus.ensure_corpus(), target)
    return target


def test_verify_names_a_missing_and_a_corrupt_file(tmp_path):
    target = _copy_corpus(tmp_path)
    (target / "library/threading.html").unlink()
    (target / "glossary.html").write_text("tampered")
    problems = corpus.verify(target)
    assert problems == [f"{target}/glossary.html: corrupt (sha256 differs from MANIFEST.sha256)",
                        f"{target}/library/threading.html: missing"]


def test_ensure_corpus_repairs_a_damaged_extraction(tmp_path):
    target = _copy_corpus(tmp_path)
    (target / "glossary.html").write_text("tampered")
    corpus.ensure_corpus(target)
    assert corpus.verify(target) == []


def _archive_with(tmp_path, name: str) -> Path:
    archive = tmp_path / "evil.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        info = tarfile.TarInfo(name)
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
    return archive


@pytest.mark.parametrize("name", ["../escape.html", "/tmp/absolute.html", "a/../../escape.html"])
def test_extraction_cannot_write_outside_its_target(tmp_path, name):
    archive = _archive_with(tmp_path, name)
    with pytest.raises(corpus.CorpusError, match="unsafe archive member"):
        corpus.extract(archive, tmp_path / "target")
    assert not (tmp_path / "escape.html").exists()


def test_extraction_refuses_links_and_a_damaged_archive_is_one_error(tmp_path):
    archive = tmp_path / "link.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        info = tarfile.TarInfo("page.html")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    with pytest.raises(corpus.CorpusError, match="unsafe archive member: 'page.html' is not a regular file"):
        corpus.extract(archive, tmp_path / "target")
    assert not (tmp_path / "target" / "page.html").is_symlink()
    damaged = tmp_path / "damaged.tar.xz"
    damaged.write_bytes(corpus.ARCHIVE.read_bytes()[:5000])
    with pytest.raises(corpus.CorpusError, match="the archive is damaged"):
        corpus.extract(damaged, tmp_path / "target2")


def test_missing_archive_gives_a_clear_error(tmp_path):
    with pytest.raises(corpus.CorpusError, match="missing"):
        corpus.extract(tmp_path / "nope.tar.xz", tmp_path / "target")


def test_a_malformed_manifest_line_is_named(tmp_path):
    bad = tmp_path / "MANIFEST.sha256"
    bad.write_text("not-a-digest file.html\n")
    with pytest.raises(corpus.CorpusError, match="MANIFEST.sha256:1"):
        corpus.read_manifest(bad)


def test_load_pages_reads_any_folder_of_html(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.html").write_text("<p>a</p>")
    (tmp_path / "sub" / "b.html").write_text("<p>b</p>")
    (tmp_path / "notes.txt").write_text("not html")
    pages = corpus.load_pages(tmp_path)
    assert [(p.path, p.html) for p in pages] == [("a.html", "<p>a</p>"), ("sub/b.html", "<p>b</p>")]


def test_other_html_extensions_are_read_and_server_pages_are_named(tmp_path):
    for name in ("a.htm", "b.HTML", "c.xhtml", "d.html", "e.php", "sub/f.shtml", "notes.txt", "style.css"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(f"<p>{name}</p>")
    loaded = corpus.load_corpus(tmp_path)
    assert [p.path for p in loaded.pages] == ["a.htm", "b.HTML", "c.xhtml", "d.html"]
    assert loaded.ignored == ["e.php", "sub/f.shtml"]
    assert loaded.notes() == ["2 files with other extensions ignored: e.php, sub/f.shtml; "
                              "pass --include '*.php' --include '*.shtml' to read them"]
    included = corpus.load_corpus(tmp_path, include=["*.PHP", "*.shtml"])
    assert [p.path for p in included.pages] == ["a.htm", "b.HTML", "c.xhtml", "d.html", "e.php", "sub/f.shtml"]
    assert included.ignored == [] and included.notes() == []


def test_a_folder_of_server_pages_only_says_how_to_read_them(tmp_path):
    (tmp_path / "index.php").write_text("<p>hi</p>")
    with pytest.raises(corpus.CorpusError) as info:
        corpus.load_pages(tmp_path)
    assert info.value.hint == "1 file with other extensions ignored: index.php; pass --include '*.php' to read them"


def test_load_pages_rejects_a_missing_folder(tmp_path):
    with pytest.raises(corpus.CorpusError, match="no such folder"):
        corpus.load_pages(tmp_path / "missing")


def test_a_folder_with_mixed_encodings_loads(tmp_path):
    (tmp_path / "utf8.html").write_bytes("<p>café</p>".encode())
    (tmp_path / "bom.html").write_bytes(b"\xef\xbb\xbf<p>bom</p>")
    (tmp_path / "cp1252.html").write_bytes("<p>curly \u201cquotes\u201d</p>".encode("cp1252"))
    pages = {p.path: p.html for p in corpus.load_pages(tmp_path)}
    assert pages == {"bom.html": "<p>bom</p>", "cp1252.html": "<p>curly \u201cquotes\u201d</p>",
                     "utf8.html": "<p>café</p>"}


def test_bad_files_are_skipped_one_by_one_with_their_reasons(tmp_path):
    outside = tmp_path / "outside.html"
    outside.write_text("<p>secret</p>")
    site = tmp_path / "site"
    site.mkdir()
    (site / "good.html").write_text("<p>good</p>")
    (site / "empty.html").write_text("  \n")
    (site / "nul.html").write_bytes(b"<p>\x00\x01</p>")
    (site / "noise.html").write_bytes(bytes(range(1, 256)) * 40)
    (site / "link.html").symlink_to(outside)
    (site / "dir.html").mkdir()
    loaded = corpus.load_corpus(site)
    assert [p.path for p in loaded.pages] == ["good.html"]
    reasons = dict(loaded.skipped)
    assert reasons["empty.html"] == "empty file"
    assert reasons["nul.html"].startswith("binary file (NUL")
    assert reasons["noise.html"].startswith("binary file (")
    assert "outside the corpus" in reasons["link.html"]
    assert reasons["dir.html"] == "a folder, not a file"


def test_a_legacy_encoded_page_is_not_mistaken_for_binary():
    assert decode.sniff_binary("<p>Привет, мир, это страница</p>".encode("cp1251")) is None
    assert decode.sniff_binary(b"<p>\x01\x02\x03\x04\x05\x06</p>") is not None


def test_a_folder_with_no_usable_page_is_one_error_naming_every_reason(tmp_path):
    (tmp_path / "empty.html").write_text("")
    (tmp_path / "blank.htm").write_text("  ")
    (tmp_path / "noise.html").write_bytes(bytes(range(1, 256)) * 20)
    with pytest.raises(corpus.CorpusError) as info:
        corpus.load_pages(tmp_path)
    assert info.value.what == ("no usable page in this folder: 3 skipped: 2 empty file (blank.htm, ...); "
                               "1 binary file (noise.html)")
    (tmp_path / "sub").mkdir()
    with pytest.raises(corpus.CorpusError, match=r"no HTML file \(\.html, \.htm, \.xhtml, \.xht\) in this folder"):
        corpus.load_pages(tmp_path / "sub")
    with pytest.raises(corpus.CorpusError, match="not a folder"):
        corpus.load_pages(tmp_path / "empty.html")


def test_a_missing_shipped_archive_is_one_line(monkeypatch, tmp_path):
    missing = corpus.Shipped(tmp_path / "x.tar.xz", tmp_path / "M", tmp_path / "c", "")
    monkeypatch.setitem(corpus.CORPORA, "pandas", missing)
    with pytest.raises(corpus.CorpusError, match="archive is missing") as err:
        corpus.load_pages(corpus="pandas")
    assert "\n" not in str(err.value)


def test_one_stray_byte_in_a_utf8_page_costs_one_character(tmp_path):
    (tmp_path / "cafe.html").write_bytes("<p>Café crème</p>".encode() + b"<p>\xff</p>")
    (tmp_path / "legacy.html").write_bytes("<p>Café crème</p>".encode("cp1252"))
    pages = {p.path: p.html for p in corpus.load_pages(tmp_path)}
    assert pages == {"cafe.html": "<p>Café crème</p><p>\ufffd</p>", "legacy.html": "<p>Café crème</p>"}


# --- decoding by evidence: nothing skipped with a false reason, every repair counted -------------

def _one_page(tmp_path, raw: bytes):
    (tmp_path / "page.html").write_bytes(raw)
    loaded = corpus.load_corpus(tmp_path)
    assert loaded.skipped == []
    return loaded.pages[0].html, dict(loaded.repaired).get("page.html", "")


def test_a_utf8_page_with_a_few_bad_bytes_stays_utf8_and_says_so(tmp_path):
    html, repaired = _one_page(tmp_path, "<p>Café crème brûlée</p>".encode() + b"<p>\xff\xfe x \xfd</p>")
    assert html == "<p>Café crème brûlée</p><p>\ufffd\ufffd x \ufffd</p>"
    assert repaired == "3 undecodable bytes (UTF-8) replaced"


def test_declared_utf8_keeps_a_page_with_more_bad_bytes_than_accents(tmp_path):
    raw = b'<meta charset="utf-8"><p>' + "Café".encode() + b" \x80\x81\x82\x83\x84\x85 ok</p>"
    assert decode.sniff_encoding(raw)[0] == "utf-8-replace"
    html, repaired = _one_page(tmp_path, raw)
    assert "Café" in html and repaired == "6 undecodable bytes (UTF-8) replaced"


def test_a_utf8_page_with_a_byte_order_mark_and_a_stray_byte_is_not_skipped(tmp_path):
    html, repaired = _one_page(tmp_path, b"\xef\xbb\xbf<p>caf\xc3\xa9 \xff</p>")
    assert html == "<p>café \ufffd</p>" and repaired == "1 undecodable byte (UTF-8) replaced"


def test_a_utf16_declaration_on_an_ascii_page_is_ignored_as_browsers_do(tmp_path):
    raw = b'<html><head><meta charset="utf-16"></head><body><p>Plain ASCII text here.</p></body></html>'
    name, reason = decode.sniff_encoding(raw)
    assert name == "utf-8" and "declared charset utf-16 ignored" in reason
    assert _one_page(tmp_path, raw) == (raw.decode(), "")


def test_a_declared_legacy_charset_survives_one_bad_byte(tmp_path):
    text = "<meta charset=\"shift_jis\"><p>日本語のテキストです</p>"
    html, repaired = _one_page(tmp_path, text.encode("shift_jis") + b"\x81")
    assert html == text + "\ufffd" and repaired == "1 undecodable byte (shift_jis) replaced"
    utf8 = text.encode()  # the declaration does not fit these bytes: they are UTF-8
    assert decode.sniff_encoding(utf8)[0] == "utf-8"


def test_a_legacy_page_with_a_stray_control_character_is_read_not_called_binary(tmp_path):
    raw = ('<meta charset="windows-1251"><p>' + "Привет, мир, это страница. " * 40 + "</p>").encode("cp1251")
    html, repaired = _one_page(tmp_path, raw + b"\x1b[2J")
    assert html.startswith('<meta charset="windows-1251"><p>Привет, мир') and html.endswith("</p>[2J")
    assert repaired == "1 control character removed"


def test_control_characters_are_removed_and_counted(tmp_path):
    text = "<p>" + "A page of ordinary text. " * 20 + "a\x1b[31m red\x07 \u009b C1</p>"
    html, repaired = _one_page(tmp_path, text.encode())
    assert html.endswith(" a[31m red  C1</p>") and repaired == "3 control characters removed"


def test_an_unreadable_page_is_skipped_not_fatal(tmp_path, monkeypatch):
    (tmp_path / "a.html").write_text("<p>a</p>")
    (tmp_path / "locked.html").write_text("<p>b</p>")
    real = corpus.Path.open

    def open_(self, *args, **kwargs):
        # As root a chmod does not stop a read, so the refusal is simulated where the loader reads.
        if self.name == "locked.html":
            raise PermissionError(13, "Permission denied")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(corpus.Path, "open", open_)
    loaded = corpus.load_corpus(tmp_path)
    assert [p.path for p in loaded.pages] == ["a.html"]
    assert loaded.skipped == [("locked.html", "cannot read: permission denied")]
