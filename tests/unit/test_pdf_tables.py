"""PDF tables: rows of cells apart by wide gaps become a Markdown table read row by row.

The pages are written by our own minimal PDF writer (tests/fixtures/pdf/writer.py); a row is
several pieces of text on one baseline, as a typesetter prints a table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.pdf.writer import Line, pdf_bytes
from textbound.answer.compose import extractive_draft
from textbound.documents.ingest import chunk_document, load_file
from textbound.documents.pdf import read_pdf
from textbound.fakes import HashEmbedder
from textbound.text.units import answer_units

KEYS = [("^A", "jumps to the start of the line."), ("^E", "jumps to the end of the line."),
        ("^K", "cuts the text after the cursor.")]
HISTORY = [("^P", "recalls the previous command."), ("^N", "steps forward through the history.")]


def _row(cells: list[tuple[float, str]], y: float) -> list[Line]:
    return [Line(text, x, y) for x, text in cells]


def _keys_page() -> list[Line]:
    """Prose, a caption, a header, a group label, rows, a second group, then prose again."""
    lines = [Line("The prompt offers a few editing keys, listed below by what they do.", 72, 700),
             Line("Editing keys", 250, 676),
             *_row([(140, "Key"), (200, "Action")], 662),
             Line("Moving", 250, 648)]
    y = 634.0
    for key, action in KEYS:
        lines += _row([(140, key), (200, action)], y)
        y -= 14
    lines.append(Line("History", 250, y))
    y -= 14
    for key, action in HISTORY:
        lines += _row([(140, key), (200, action)], y)
        y -= 14
    lines.append(Line("Every key works the same way in the script editor.", 72, y - 20))
    return lines


def _pdf(tmp_path: Path, pages: list[list[Line]]) -> Path:
    path = tmp_path / "keys.pdf"
    path.write_bytes(pdf_bytes(pages))
    return path


def test_a_printed_table_becomes_rows_under_its_header_and_group_labels_stay_text(
        tmp_path: Path) -> None:
    text = read_pdf(_pdf(tmp_path, [_keys_page()])).text
    assert "| Key | Action |\n|---|---|\n| ^A | jumps to the start of the line. |" in text
    assert "\n\nHistory\n\n| Key | Action |\n|---|---|\n| ^P |" in text
    assert "Moving" in text and "| Moving" not in text  # a label, not a row
    assert text.count("| Key | Action |") == 2  # the header a label follows is not printed alone
    rows = [u.text for u in answer_units(text) if u.kind == "row"]
    assert "Key: ^N; Action: steps forward through the history." in rows
    assert len(rows) == len(KEYS) + len(HISTORY)
    assert "Every key works the same way in the script editor." in text


def test_a_question_one_row_answers_is_answered_by_that_row(tmp_path: Path) -> None:
    path = _pdf(tmp_path, [_keys_page()])
    chunks = [{"chunk_id": f"c{n}", "text": c.text, "score": 0.7, "metadata": c.metadata}
              for n, c in enumerate(chunk_document(load_file(path, path.name)))]
    draft = extractive_draft("Which key recalls the previous command?", chunks, HashEmbedder())
    assert draft["sentences"][0]["text"] == "Key: ^P; Action: recalls the previous command."


def test_a_first_line_of_values_is_no_header_and_a_wrapped_cell_joins_its_row(
        tmp_path: Path) -> None:
    """Rows of values only (no column names): the rows read without names. A line starting
    right of the first column goes on the cell above it."""
    page = [Line("The logger keeps these counters.", 72, 700),
            *_row([(100, "count_in"), (220, "records read, one per line")], 680),
            *_row([(100, "count_out"), (220, "records written after the filter")], 666),
            *_row([(100, "count_bad(n)"), (220, "records dropped by rule n, kept in")], 652),
            Line("the reject file", 220, 640),
            *_row([(100, "count_max"), (220, "the largest batch seen")], 626),
            Line("Counters reset when the logger starts.", 72, 600)]
    text = read_pdf(_pdf(tmp_path, [page])).text
    assert "|  |  |\n|---|---|\n| count_in | records read, one per line |" in text
    rows = [u.text for u in answer_units(text) if u.kind == "row"]
    assert "count_bad(n); records dropped by rule n, kept in the reject file." in rows
    assert "count_max; the largest batch seen." in rows


def test_a_wrapped_cell_mends_its_line_end_hyphenation_as_a_paragraph_does(
        tmp_path: Path) -> None:
    """A word a cell breaks at its line end is joined ("re-" + "ject" is "reject"), a number's
    hyphen stays ("32-" + "bit" is "32-bit"), and other lines join with a space."""
    page = [Line("The logger keeps these counters.", 72, 700),
            *_row([(100, "count_in"), (220, "records read, one per line")], 680),
            *_row([(100, "count_bad"), (220, "records dropped, kept in the re-")], 666),
            Line("ject file", 220, 654),
            *_row([(100, "count_max"), (220, "the largest batch, a 32-")], 640),
            Line("bit number", 220, 628),
            *_row([(100, "count_out"), (220, "records written after the")], 614),
            Line("filter ran", 220, 602),
            Line("Counters reset when the logger starts.", 72, 580)]
    rows = [u.text for u in answer_units(read_pdf(_pdf(tmp_path, [page])).text)
            if u.kind == "row"]
    assert "count_bad; records dropped, kept in the reject file." in rows
    assert "count_max; the largest batch, a 32-bit number." in rows
    assert "count_out; records written after the filter ran." in rows


def test_a_centred_column_and_a_table_over_a_page_break(tmp_path: Path) -> None:
    """Centred cells still make a column; the rows on the next page keep the header."""
    def centred(bit: str, edge: str, y: float) -> list[Line]:
        # Helvetica's figures are 0.556 em wide: a bit's cell is centred on x = 110; the
        # edges' words are centred on x = 200 within a point or two
        return _row([(110 - 0.278 * 11 * len(bit), bit), (200 - 2.9 * len(edge), edge)], y)

    first = [Line("Each bit of the mask turns one edge on.", 72, 700),
             *_row([(100, "Bit"), (188, "Edge")], 680)]
    y = 666.0
    for bit, edge in [("1", "bottom"), ("2", "left"), ("4", "top")]:
        first += centred(bit, edge, y)
        y -= 14
    second = [*centred("8", "right", 700), *centred("16", "front", 686),
              Line("The default mask is 15.", 72, 660)]
    text = read_pdf(_pdf(tmp_path, [first, second])).text
    rows = [u.text for u in answer_units(text) if u.kind == "row"]
    assert rows == ["Bit: 1; Edge: bottom.", "Bit: 2; Edge: left.", "Bit: 4; Edge: top.",
                    "Bit: 8; Edge: right.", "Bit: 16; Edge: front."]


def test_a_table_goes_on_under_its_header_after_rows_set_as_code(tmp_path: Path) -> None:
    """Rows the book prints in a fixed-pitch font stay code; the rows after keep the header."""
    page = [Line("The log line accepts these fields.", 72, 700),
            *_row([(100, "Field"), (220, "Meaning")], 680),
            *_row([(100, "%h"), (220, "remote host")], 666),
            *_row([(100, "%u"), (220, "user name")], 652),
            Line("%t", 100, 638, mono=True), Line("time of the request", 220, 638, mono=True),
            *_row([(100, "%s"), (220, "status code")], 624),
            *_row([(100, "%b"), (220, "bytes sent")], 610),
            *_row([(100, "%f"), (220, "file served")], 596),
            Line("Unknown fields are printed as they are.", 72, 570)]
    text = read_pdf(_pdf(tmp_path, [page])).text
    rows = [u.text for u in answer_units(text) if u.kind == "row"]
    assert rows == ["Field: %h; Meaning: remote host.", "Field: %u; Meaning: user name.",
                    "Field: %s; Meaning: status code.", "Field: %b; Meaning: bytes sent.",
                    "Field: %f; Meaning: file served."]
    assert "```\n%t time of the request\n```" in text


@pytest.mark.parametrize("rows", [1, 2])
def test_too_few_rows_or_code_is_not_a_table(tmp_path: Path, rows: int) -> None:
    """Two lines with a wide gap are not a table, nor is code with an aligned comment."""
    page = [Line("Two settings matter here.", 72, 700)]
    page += [piece for n in range(rows)
             for piece in _row([(100, f"name{n}"), (220, f"value {n}")], 680 - 14 * n)]
    page += [Line("x = 1", 100, 620, mono=True), Line("# one", 220, 620, mono=True),
             Line("y = 2", 100, 606, mono=True), Line("# two", 220, 606, mono=True),
             Line("z = 3", 100, 592, mono=True), Line("# three", 220, 592, mono=True)]
    text = read_pdf(_pdf(tmp_path, [page])).text
    assert "|---|" not in text
    assert "```\nx = 1 # one\ny = 2 # two\nz = 3 # three\n```" in text


def test_a_pipe_inside_a_cell_stays_in_its_cell() -> None:
    """Tables escape a '|' in a cell as '\\|' (HTML and PDF alike): a row keeps its columns."""
    text = "| Symbol | Meaning |\n|---|---|\n| \\|x\\| | the size of x |\n"
    rows = [u.text for u in answer_units(text) if u.kind == "row"]
    assert rows == ["Symbol: |x|; Meaning: the size of x."]


def test_two_columns_of_prose_side_by_side_are_not_a_table(tmp_path: Path) -> None:
    """Prose set in two columns, read as lines with a gutter: whole lines, no table."""
    left = ["The logger reads each record as it", "arrives and checks it against the",
            "rules the operator has loaded for", "this source before it is stored."]
    right = ["A record that fails a rule goes to", "the reject file with the number of",
             "the rule it failed, so an operator", "can see why it was dropped later."]
    page = [piece for n, (a, b) in enumerate(zip(left, right, strict=True))
            for piece in _row([(72, a), (320, b)], 700 - 14 * n)]
    text = read_pdf(_pdf(tmp_path, [page])).text
    assert "|---|" not in text
    assert not [u for u in answer_units(text) if u.kind == "row"]


def _formula_row(name: str, what: str, y: float) -> list[Line]:
    """A row whose middle cell is a formula set on several baselines: a root sign a line above
    the row's text, a fraction's numerator and denominator, an exponent, then the last cell
    back on the row's baseline."""
    return [Line(name, 100, y), Line("s =", 180, y), Line("r", 195, y + 15),
            Line("1", 205, y + 4, 7), Line("N", 205, y - 4, 7), Line("sum (x - m)", 215, y + 2),
            Line("2", 270, y + 6, 7), Line(what, 300, y)]


def test_a_formula_cell_set_on_several_baselines_stays_in_its_row(tmp_path: Path) -> None:
    """The pieces of a formula printed above the row's baseline (up to `RAISED` line
    spacings) go on the row; the last cell after them closes it; three rows are a table."""
    page = [Line("The summary reports three spreads of the samples, each with its formula.",
                 72, 714),
            Line("Every spread is computed over the samples in range only, never the rest.",
                 72, 700),
            Line("The first divides by the count, the others by the count less one.", 72, 686),
            *_formula_row("spread_pop", "spread of all the samples", 640),
            *_formula_row("spread_est", "estimated spread of the source", 610),
            *_formula_row("spread_err", "error of the estimated spread", 580),
            Line("Spreads are zero when there is one sample.", 72, 540)]
    text = read_pdf(_pdf(tmp_path, [page])).text
    rows = [u.text for u in answer_units(text) if u.kind == "row"]
    assert len(rows) == 3, text
    assert rows[0].startswith("spread_pop; s = r") and rows[0].endswith(
        "spread of all the samples.")
    assert rows[1].endswith("estimated spread of the source.")
