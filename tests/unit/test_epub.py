"""EPUB books: read in the spine's order, each chapter as an HTML page, refused with a reason."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from textbound.documents.ingest import chunk_document, load_file
from textbound.documents.ingest.documents import SkipFile

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf"
    media-type="application/oebps-package+xml"/></rootfiles>
</container>"""

PACKAGE = """<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:title>Statistics with R</dc:title><dc:identifier id="id">x</dc:identifier>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c1" href="text/ch%201.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
  </manifest>
  <spine><itemref idref="nav"/><itemref idref="c2"/><itemref idref="c1"/></spine>
</package>"""

NAV = ('<html xmlns="http://www.w3.org/1999/xhtml"><body><nav><ol><li><a href="text/ch2.xhtml">'
       "Vectors</a></li></ol></nav><p>Contents of this book</p></body></html>")
CH1 = ('<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Data frames</h1>'
       "<p>A data frame holds columns of equal length.</p>"
       "<table><tr><th>Function</th><th>Returns</th></tr>"
       "<tr><td>nrow(df)</td><td>the number of rows</td></tr></table></body></html>")
CH2 = ('<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Vectors</h1>'
       "<p>Create a vector with c():</p><pre>x &lt;- c(1, 2, 3)\nmean(x)</pre></body></html>")


def _epub(path: Path, extra: dict[str, str] | None = None) -> Path:
    files = {"META-INF/container.xml": CONTAINER, "OEBPS/content.opf": PACKAGE,
             "OEBPS/nav.xhtml": NAV, "OEBPS/text/ch 1.xhtml": CH1, "OEBPS/text/ch2.xhtml": CH2,
             "OEBPS/style.css": "body { color: black }", **(extra or {})}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for name, data in files.items():
            z.writestr(name, data)
    return path


def test_an_epub_reads_in_its_spine_order_as_html_chapters(tmp_path: Path) -> None:
    doc = load_file(_epub(tmp_path / "stats.epub"), "stats.epub")
    assert doc.title == "Statistics with R" and doc.kind == "html"
    # the spine's order (chapter 2 first), not the archive's; the navigation document is not text
    assert doc.text.index("# Vectors") < doc.text.index("# Data frames")
    assert "Contents of this book" not in doc.text and "color: black" not in doc.text
    assert "Create a vector with c():\n\n```\nx <- c(1, 2, 3)\nmean(x)\n```" in doc.text
    assert "| Function | Returns |\n|---|---|\n| nrow(df) | the number of rows |" in doc.text
    paths = {tuple(c.metadata["heading_path"]) for c in chunk_document(doc)}
    assert ("Data frames",) in paths and ("Vectors",) in paths  # each chapter its section


@pytest.mark.parametrize(("make", "reason"), [
    (lambda p: p.write_bytes(b"%PDF-1.4 not a zip"), "not an EPUB (not a ZIP archive)"),
    (lambda p: _epub(p, {"META-INF/encryption.xml":
                         '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
                         '<EncryptedData xmlns="http://www.w3.org/2001/04/xmlenc#">'
                         '<CipherData><CipherReference URI="OEBPS/text/ch2.xhtml"/></CipherData>'
                         "</EncryptedData></encryption>"}), "encrypted EPUB (DRM)"),
])
def test_a_file_that_is_no_readable_epub_is_skipped_saying_why(tmp_path: Path, make,
                                                               reason: str) -> None:
    path = tmp_path / "book.epub"
    make(path)
    with pytest.raises(SkipFile, match=reason.replace("(", r"\(").replace(")", r"\)")):
        load_file(path, "book.epub")


def test_a_zip_bomb_is_refused_not_unpacked(tmp_path: Path, monkeypatch) -> None:
    """The text is counted as it is inflated, whatever size the archive declares."""
    monkeypatch.setattr("textbound.documents.ingest.documents.MAX_FILE_BYTES", 50_000)
    path = _epub(tmp_path / "bomb.epub", {"OEBPS/text/ch2.xhtml": "<p>" + "a" * 200_000 + "</p>"})
    with pytest.raises(SkipFile, match="too large unpacked"):
        load_file(path, "bomb.epub")


def test_obfuscated_fonts_are_no_drm(tmp_path: Path) -> None:
    path = _epub(tmp_path / "fonts.epub", {
        "META-INF/encryption.xml":
            '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<EncryptedData xmlns="http://www.w3.org/2001/04/xmlenc#"><CipherData>'
            '<CipherReference URI="OEBPS/fonts/Body.otf"/></CipherData></EncryptedData>'
            "</encryption>"})
    assert "# Vectors" in load_file(path, "fonts.epub").text
