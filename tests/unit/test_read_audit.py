"""benchmarks/read_audit.py: the loaders' artefacts on a book, counted without questions."""

from __future__ import annotations

from pathlib import Path

from benchmarks.read_audit import audit, main


def _book(tmp_path: Path) -> Path:
    book = tmp_path / "book"
    book.mkdir()
    (book / "moved.html").write_text(
        '<html><head><meta http-equiv="refresh" content="0; url=intro.html"></head>'
        "<body><p>The node you are looking for is at Intro.</p></body></html>")
    (book / "intro.md").write_text(
        "# Intro\n\nThe shell reads a line and, oth- erwise, waits for the\n\n"
        "next line to arrive from the terminal or from a script file <td>as</td> typed.\n\n"
        "\u2022 a bullet the loader left in the text\n\n"
        "Next Chapter\n")
    return book


def test_each_artefact_is_counted_and_a_skipped_page_says_why(tmp_path: Path) -> None:
    row = audit(_book(tmp_path))
    assert row["files"] == 2
    assert row["skipped"] == {
        "a page that only sends the browser on to another (a redirect): no text of its own": 1}
    assert row["mid-sentence"] == 1  # "... for the" / "next line ..."
    assert row["broken words"] == 1  # "oth- erwise"
    assert row["bullets"] == 1
    assert row["html tags"] == 2  # "<td>", "</td>" left in a sentence
    assert row["passages"] == 1 and row["short"] == 0


def test_the_table_has_a_row_per_book_and_a_missing_path_is_an_error(tmp_path: Path,
                                                                     capsys) -> None:
    assert main([str(_book(tmp_path))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| book | files | passages |") and len(out) == 3
    assert main([str(tmp_path / "nothing")]) == 2


def test_a_heading_before_a_lower_case_name_is_no_cut_sentence(tmp_path: Path) -> None:
    """A manual's "## 2.3. DESCRIPTION" before "bzip2 compresses files ..." is how it is
    printed; the paragraph cut after "compresses" is what the count is for."""
    (tmp_path / "bzip2.md").write_text(
        "# bzip2\n\n## 2.3. DESCRIPTION\n\nbzip2 compresses\n\nfiles using the Burrows-Wheeler "
        "block sorting text compression algorithm, and Huffman coding.\n")
    assert audit(tmp_path)["mid-sentence"] == 1
