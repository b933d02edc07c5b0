"""OpenDocument text (.odt): headings by outline level, lists, tables, code, indexes left out."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from textbound.documents.ingest import load_file
from textbound.documents.ingest.documents import SkipFile

NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
      'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"')
BODY = """
<text:table-of-content><text:index-body><text:p>Homework 2</text:p></text:index-body>
</text:table-of-content>
<text:p text:style-name="Title">Course notes</text:p>
<text:h text:outline-level="1">Homework</text:h>
<text:p>Homework is due every<text:s text:c="2"/>Friday before noon.<text:note><text:note-body>
<text:p>A footnote.</text:p></text:note-body></text:note></text:p>
<text:list><text:list-item><text:p>on paper</text:p></text:list-item>
<text:list-item><text:p>by e-mail</text:p><text:list><text:list-item><text:p>as a PDF</text:p>
</text:list-item></text:list></text:list-item></text:list>
<text:h text:outline-level="2">Grading</text:h>
<table:table><table:table-row><table:table-cell><text:p>Part</text:p></table:table-cell>
<table:table-cell><text:p>Weight</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>Exam</text:p></table:table-cell>
<table:table-cell><text:p>60%</text:p></table:table-cell></table:table-row></table:table>
<text:p text:style-name="P1">df &lt;- read.csv("grades.csv")</text:p>
<text:p text:style-name="P1">summary(df)</text:p>
"""
STYLES = ('<office:automatic-styles><style:style style:name="P1" style:family="paragraph" '
          'style:parent-style-name="Preformatted_20_Text"/></office:automatic-styles>')


def _odt(path: Path, body: str = BODY) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text",
                   compress_type=zipfile.ZIP_STORED)
        z.writestr("content.xml", f"<office:document-content {NS}>{STYLES}<office:body>"
                                  f"<office:text>{body}</office:text></office:body>"
                                  "</office:document-content>")
    return path


def test_an_opendocument_text_reads_as_its_blocks(tmp_path: Path) -> None:
    doc = load_file(_odt(tmp_path / "notes.odt"), "notes.odt")
    assert doc.title == "Course notes" and doc.kind == "markdown"
    assert doc.text == (
        "# Course notes\n\n# Homework\n\nHomework is due every Friday before noon.\n\n"
        "- on paper\n\n- by e-mail\n\n- as a PDF\n\n## Grading\n\n"
        "| Part | Weight |\n|---|---|\n| Exam | 60% |\n\n"
        "```\ndf <- read.csv(\"grades.csv\")\nsummary(df)\n```\n")


@pytest.mark.parametrize(("data", "reason"), [
    (b"text named .odt", "not an OpenDocument text (not a ZIP archive)"),
    (None, "OpenDocument text has no text"),
])
def test_a_file_that_is_no_readable_opendocument_text_is_skipped_saying_why(
        tmp_path: Path, data: bytes | None, reason: str) -> None:
    path = tmp_path / "x.odt"
    if data is None:
        _odt(path, body="<text:p> </text:p>")
    else:
        path.write_bytes(data)
    with pytest.raises(SkipFile, match=reason.replace("(", r"\(").replace(")", r"\)")):
        load_file(path, "x.odt")
