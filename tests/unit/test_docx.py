"""Word documents (.docx): headings by style, lists, tables with their header, code, the title."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from textbound.documents.ingest import chunk_document, load_file
from textbound.documents.ingest.documents import SkipFile

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
STYLES = f"""<w:styles {W}>
  <w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
  <w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>
  <w:style w:type="paragraph" w:styleId="Kapitel2"><w:name w:val="Kapitel"/>
    <w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
  <w:style w:type="paragraph" w:styleId="SourceCode"><w:name w:val="Source Code"/></w:style>
</w:styles>"""


def _p(text: str, style: str = "", extra: str = "", font: str = "") -> str:
    ppr = f'<w:pPr><w:pStyle w:val="{style}"/>{extra}</w:pPr>' if style or extra else ""
    rpr = f'<w:rPr><w:rFonts w:ascii="{font}" w:hAnsi="{font}"/></w:rPr>' if font else ""
    return f"<w:p>{ppr}<w:r>{rpr}<w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>"


LIST = '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'
CELL = "<w:tc><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:tc>"
BODY = "".join([
    _p("Course notes: Statistics", "Title"),
    _p("Homework", "berschrift1"),
    _p("Homework is due every Friday before noon."),
    _p("Hand it in on paper", extra=LIST), _p("or by e-mail", extra=LIST),
    _p("Grading", "Kapitel2"),
    "<w:tbl>" + "".join("<w:tr>" + "".join(CELL.format(c) for c in row) + "</w:tr>"
                        for row in (("Part", "Weight"), ("Exam", "60%"),
                                    ("Homework", "40%"))) + "</w:tbl>",
    _p("Load the data with:"),
    _p("df &lt;- read.csv(\"grades.csv\")", font="Courier New"),
    _p("summary(df)", "SourceCode"),
    _p("# is a comment in R, as this sentence says."),
])


def _docx(path: Path, body: str = BODY, core: bool = True) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", f"<w:document {W}><w:body>{body}</w:body></w:document>")
        z.writestr("word/styles.xml", STYLES)
        if core:
            z.writestr("docProps/core.xml",
                       '<cp:coreProperties xmlns:cp="urn:cp" '
                       'xmlns:dc="http://purl.org/dc/elements/1.1/">'
                       "<dc:title>STAT 101 notes</dc:title></cp:coreProperties>")
    return path


def test_a_word_document_reads_as_its_blocks(tmp_path: Path) -> None:
    doc = load_file(_docx(tmp_path / "notes.docx"), "notes.docx")
    assert doc.title == "STAT 101 notes" and doc.kind == "markdown"
    assert doc.text == (
        "# Course notes: Statistics\n\n# Homework\n\n"
        "Homework is due every Friday before noon.\n\n"
        "- Hand it in on paper\n\n- or by e-mail\n\n## Grading\n\n"
        "| Part | Weight |\n|---|---|\n| Exam | 60% |\n| Homework | 40% |\n\n"
        "Load the data with:\n\n```\ndf <- read.csv(\"grades.csv\")\nsummary(df)\n```\n\n"
        "\\# is a comment in R, as this sentence says.\n")
    paths = {tuple(c.metadata["heading_path"]) for c in chunk_document(doc)}
    assert ("Homework",) in paths  # "When is homework due?" finds its section


def test_the_title_paragraph_names_a_document_without_a_title_property(tmp_path: Path) -> None:
    doc = load_file(_docx(tmp_path / "notes.docx", core=False), "notes.docx")
    assert doc.title == "Course notes: Statistics"


@pytest.mark.parametrize(("data", "reason"), [
    (b"plain text named .docx", "not a Word document (not a ZIP archive)"),
    (None, "Word document has no text"),
])
def test_a_file_that_is_no_readable_word_document_is_skipped_saying_why(
        tmp_path: Path, data: bytes | None, reason: str) -> None:
    path = tmp_path / "empty.docx"
    if data is None:
        _docx(path, body=_p("   "))
    else:
        path.write_bytes(data)
    with pytest.raises(SkipFile, match=reason.replace("(", r"\(").replace(")", r"\)")):
        load_file(path, "empty.docx")


def test_a_table_of_contents_and_text_boxes_are_left_out_and_content_controls_read(
        tmp_path: Path) -> None:
    toc = ('<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Table of Contents"/>'
           "</w:docPartObj></w:sdtPr><w:sdtContent>" + _p("Homework ........ 2")
           + "</w:sdtContent></w:sdt>")
    control = "<w:sdt><w:sdtPr/><w:sdtContent>" + _p("Office hours are on Monday.") \
        + "</w:sdtContent></w:sdt>"
    boxed = ("<w:p><w:r><w:t>Exams are closed book.</w:t></w:r><w:r><w:drawing><w:txbxContent>"
             "<w:p><w:r><w:t>A pull quote</w:t></w:r></w:p></w:txbxContent></w:drawing></w:r>"
             "</w:p>")
    doc = load_file(_docx(tmp_path / "n.docx", body=toc + control + boxed), "n.docx")
    assert doc.text == "Office hours are on Monday.\n\nExams are closed book.\n"
