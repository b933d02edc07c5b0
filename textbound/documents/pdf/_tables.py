"""Find the tables a PDF prints: rows of cells apart by wide gaps, their last column aligned.

A PDF has no table markup: a table is lines whose words stand in columns. `Line.cells` splits
a line at gaps wider than the font size (word spaces, even justified, are a fraction of it). A
run of at least `MIN_ROWS` such lines on one page whose last cells stand in one column (their
left edges, centres or right edges within `ALIGN` points of the row above: columns are set
flush left, centred or flush right) is a table; its first line is the header. Read row by
row, a question that one row answers is answered by that row with its header cells
("Key: ^P; Action: recalls the previous command."), not by a paragraph of every cell on
the page.

Inside a run:
- a line of one cell that opens with a capitalised word, followed by another row, is a group
  label ("Line Editing", "History"): the table is cut there, the label stands as a paragraph,
  and the rows after it go on under the same header;
- any other line that starts right of the first column continues the row above (a wrapped
  cell, or the pieces of a formula set on several baselines): each of its pieces joins the cell
  of the column nearest to it;
- two columns of prose are no table: most of a table's first cells are short (`KEY_WORDS`);
- a table that runs over a page break, or past a few of its rows set in a fixed-pitch font,
  goes on under its header when the lines after have as many columns, their last in the
  same column.
Lines in a fixed-pitch font are code or output and stay so; contents and index pages are not
tables.
"""

from __future__ import annotations

import re

from textbound.documents.pdf._lines import Line

__all__ = ["ALIGN", "CODE_ROWS", "MIN_ROWS", "RAISED", "mark_tables"]

ALIGN = 4.0
"""Points within which a column's cells share a left edge, centre or right edge."""
MIN_ROWS = 3
"""Lines with cells (the header among them) a run needs to be a table."""
KEY_WORDS = 4
"""A table's first cells are short (a key, a name, a value): at least half of its rows' first
cells have at most this many words. Two columns of prose side by side, read as one line with
a wide gap, are not a table: their first cells are whole lines of text."""
CODE_ROWS = 4
"""Lines in a fixed-pitch font a table may be interrupted by and go on under its header after:
rows whose cells the book sets as code ("%g or %G  the shorter of %e and %f")."""
RAISED = 1.5
"""How far above its row's baseline (in line spacings) a piece of the row may print: a root
sign or a fraction's numerator in a formula cell stands a full line above the row's text."""
_LABEL = re.compile(r"^[A-Z][a-z]")
_HEADER_CELL = re.compile(r"^[^\W\d_]+(?:[ /-][^\W\d_]+){0,2}$")
"""A header cell names a column in at most three words ("Function", "Storage size", "plot");
a row's cells hold values ("STATS_min", "min(y)", "2 bytes"). A table whose first line is
not all header cells has no header: its rows read without column names."""

Cell = tuple[float, float, str]


def _candidate(ln: Line) -> bool:
    return len(ln.cells) >= 2 and not (ln.mono or ln.heading or ln.listing or ln.footnote)


def _aligned(a: Cell, b: Cell) -> bool:
    return (abs(a[0] - b[0]) <= ALIGN or abs(a[1] - b[1]) <= ALIGN
            or abs(a[0] + a[1] - b[0] - b[1]) <= 2 * ALIGN)


def _near(columns: list[Cell], cell: Cell) -> int:
    mid = (cell[0] + cell[1]) / 2
    return min(range(len(columns)), key=lambda k: abs((columns[k][0] + columns[k][1]) / 2 - mid))


def _row_of(ln: Line, last: Cell, first_right: float) -> bool:
    return _candidate(ln) and ln.x < first_right and _aligned(ln.cells[-1], last)


def _run(lines: list[Line], i: int, leading: float) -> list[tuple[Line, str]]:
    """The lines of the table starting at lines[i] (a candidate line), each with its part.

    A part is "row", "group" (a label) or "more" (goes on the row above).
    """
    head = lines[i]
    first_right = head.cells[1][0] - 1.0  # a line starting right of this is no new row
    last = head.cells[-1]
    run = [(head, "row")]
    row, low = head, head.y  # the last row line; the lowest baseline so far
    j = i + 1
    while j < len(lines):
        ln = lines[j]
        if ln.page != head.page or ln.mono or ln.heading or ln.listing or ln.footnote \
                or low - ln.y >= 2.5 * leading:
            break
        after = lines[j + 1] if j + 1 < len(lines) else None
        if _row_of(ln, last, first_right) and ln.y < row.y:
            run.append((ln, "row"))
            row, last = ln, ln.cells[-1]
        elif not ln.cells and _LABEL.match(ln.text) and after is not None and ln.y < row.y \
                and _row_of(after, last, first_right) and 0 < ln.y - after.y < 2.5 * leading:
            run.append((ln, "group"))
        elif ln.x >= first_right and low - ln.y < 1.6 * leading \
                and ln.y < row.y + RAISED * leading:
            run.append((ln, "more"))  # a wrapped cell, a formula's pieces
        else:
            break
        low = min(low, ln.y)
        j += 1
    return run


def _rows(run: list[tuple[Line, str]], columns: list[Cell]) -> None:
    """Mark each line with its part; set a row's cells by column, continuations merged in."""
    row: Line | None = None
    for ln, part in run:
        ln.table = part
        if part == "row":
            cells = [""] * len(columns)
            for n, cell in enumerate(ln.cells):
                k = 0 if n == 0 else len(columns) - 1 if n == len(ln.cells) - 1 \
                    else _near(columns, cell)
                cells[k] = f"{cells[k]} {cell[2]}".strip()
            ln.row, row = cells, ln
        elif part == "group":
            row = None
        elif row is not None:
            for cell in ln.cells or [(ln.x, ln.x + ln.size * len(ln.text) / 2, ln.text)]:
                k = _near(columns, cell)
                row.row[k] = f"{row.row[k]}\n{cell[2]}".strip()  # compose mends the lines


def mark_tables(pages: list[list[Line]], leading: float) -> None:
    """Mark the lines of each table (`Line.table`: head, row, more, group; `Line.row`: cells)."""
    carried: tuple[list[str], Cell, int] | None = None  # the open table (this page or the last)
    for lines in pages:
        i, ended = 0, 0  # ended: where the page's last table ended
        while i < len(lines):
            ln = lines[i]
            if not _candidate(ln):
                i += 1
                continue
            run = _run(lines, i, leading)
            # a table goes on at the top of the next page, or after a few of its rows set in a
            # fixed-pitch font (printed as code, as they are)
            between = lines[ended:i]
            goes_on = (carried is not None and len(ln.cells) == carried[2]
                       and _aligned(ln.cells[-1], carried[1])
                       and (i == 0 or (0 < len(between) <= CODE_ROWS
                                       and all(b.mono for b in between))))
            keys = [len(r.cells[0][2].split()) <= KEY_WORDS for r, _ in run if _candidate(r)]
            if len(keys) < MIN_ROWS - goes_on or 2 * sum(keys) < len(keys):
                i += 1
                continue
            columns = list(ln.cells)
            _rows(run, columns)
            if goes_on and carried is not None:
                ln.head = carried[0]
            elif all(_HEADER_CELL.match(" ".join(c.split())) for c in ln.row):
                ln.table, ln.head = "head", ln.row
            else:
                ln.head = [""] * len(columns)
            header = ln.head
            for (_, before), (after, _) in zip(run, run[1:], strict=False):
                if before == "group":
                    after.head = header  # the rows after a group label go on under the header
            rows = [r for r, part in run if part == "row"]
            carried = (header, rows[-1].cells[-1], len(columns))
            i += len(run)
            ended = i
        if lines and not lines[-1].table:
            carried = None
