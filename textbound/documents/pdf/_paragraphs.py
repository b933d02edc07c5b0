"""Join lines into paragraphs, mend line-end hyphenation, and write the blocks as Markdown.

The rules are in `textbound.documents.pdf`'s docstring.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter

from textbound.documents.pdf._lines import SENTENCE_END, Line
from textbound.text.commands import called_name
from textbound.text.linebreaks import joined_lines, line_break
from textbound.text.linebreaks import vocabulary as lines_vocabulary

__all__ = ["BULLETS", "compose", "line_spacing", "paragraph_blocks", "vocabulary"]

BULLETS = "\u2022\u25e6\u25aa\u2023\u2043\u25cf\u25a0"
"""The bullet glyphs a printed list opens its items with."""
_BULLET = re.compile(rf"^(?:[{BULLETS}]|[*\-\u2013]\s|\(?\d{{1,2}}[.)]\s)")
"""A list item's bullet or number; a "*" or dash only with a space after ("*digest)" is C)."""
_BULLET_MARK = re.compile(rf"^[{BULLETS}]\s+")
"""A bullet glyph opening a paragraph: the paragraph is a list item ("- ...")."""
_NUMBERED = re.compile(r"^\(?(\d{1,2})[.)]\s")


def _number(ln: Line) -> int | None:
    found = _NUMBERED.match(ln.text)
    return int(found.group(1)) if found else None


def _item_starts(ln: Line, para: list[Line], blocks: list[tuple[int, list[Line]]]) -> bool:
    """Whether a line that opens with a bullet starts a list item rather than goes on a sentence.

    "... where sizeof(long) and sizeof(void*) are" + "8. Under LP64, ..." is one sentence
    broken before a number: a numbered item starts a list only at 1, after a sentence or a
    colon, in a paragraph that is an item itself, or after item N-1 among the last few blocks
    (and on contents pages, whose chapter numbers follow their sections' page numbers).
    """
    if not _BULLET.match(ln.text) or _definition_goes_on(para):
        return False  # "* ider, int ider_len)": a C signature's arguments, broken at a pointer
    number = _number(ln)
    if number is None or number == 1 or ln.listing or SENTENCE_END.search(para[-1].text) \
            or _BULLET.match(para[0].text):
        return True
    return any(_number(lines[0]) == number - 1 for _, lines in blocks[-_ITEM_REACH:] if lines)


_CATEGORY = re.compile(r"\s(\[[A-Z][A-Za-z ]{1,24}\])$")
"""A definition line's category, set flush right: Texinfo's "void f (int a, [Function]"."""


def _defines(ln: Line) -> bool:
    """Whether a line is a definition line: its category stands apart at its end, as a cell.

    A citation that happens to end a line of prose ("... as in [Knuth]") is no category.
    """
    return bool(ln.cells and _CATEGORY.search(" " + ln.cells[-1][2])
                and _CATEGORY.search(ln.text))


def _definition_goes_on(para: list[Line]) -> bool:
    """Whether the open paragraph is a definition line whose arguments go on to the next line.

    Texinfo prints "void sha256_update (struct sha256_ctx *ctx, size_t length, const
    [Function]" and the rest of the arguments on an indented line under it, "uint8_t *data)",
    then the description, indented less. The definition goes on while its parentheses are open;
    a line ending in a category starts a definition of its own.
    """
    if not _defines(para[0]):
        return False
    text = " ".join(ln.text for ln in para)
    return text.count("(") > text.count(")")


def _folded(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).casefold()


def _definition_heading(para: list[Line], blocks: list[tuple[int, list[Line]]]
                        ) -> tuple[int, list[Line]]:
    """A definition line as the heading of what describes it, one level below the last heading.

    Texinfo prints "int asn1_parser2tree (const char * file, asn1 node * definitions, char *
    error_desc) [Function]" and then its arguments, what it does and what it returns: the line
    names what the paragraphs under it are about, as an API reference's heading does, and is
    no answer itself. Written "### `int asn1_parser2tree (...)`" without its category, so the
    description's sentences are read as about it (textbound/answer/named_section.py). The
    subheading Texinfo sets just above it, naming the function ("asn1 parser2tree"), goes into
    it: the definition takes its place.
    """
    found = _CATEGORY.search(para[0].text)
    first = para[0].text[:found.start()] if found else para[0].text
    signature = " ".join([first, *(ln.text for ln in para[1:])]).replace("`", "'")
    level = next((lvl for lvl, lines in reversed(blocks) if 0 < lvl and not (
        lines[0].text.startswith("`"))), 0)
    name = called_name(signature)
    if name and blocks and blocks[-1][0] >= 0 and len(blocks[-1][1]) == 1 and _folded(
            blocks[-1][1][0].text) == _folded(name):
        # its subheading, printed just before it ("asn1 parser2tree"): the definition takes
        # its place, at its level when it was read as a heading
        sub = blocks.pop()[0]
        level = sub - 1 if sub > 0 else level
    head = para[0]
    return (min(6, level + 1), [Line(f"`{' '.join(signature.split())}`", head.page, head.x, head.y,
                                     head.size, head.bold)])


_HANGING = 2.0
"""How far (in font sizes) a list item's later lines may sit right of its bullet: LaTeX's,
Texinfo's and DocBook's items hang theirs about one em in, under the text after the bullet."""
_ITEM_REACH = 3
"""Blocks back that the item before a numbered line may be (an item, then a line of its own)."""


# --- paragraphs and hyphenation --------------------------------------------------------------

def vocabulary(pages: list[list[Line]]) -> Counter[str]:
    """Count the words the document prints whole: not the two halves of a line-end break."""
    return lines_vocabulary(ln.text for lines in pages for ln in lines)


def line_spacing(pages: list[list[Line]], body: float) -> float:
    gaps = [a.y - b.y for lines in pages for a, b in zip(lines, lines[1:], strict=False)
            if not a.heading and not b.heading and abs(a.size - body) <= 0.5
            and abs(b.size - body) <= 0.5 and 0.8 * body < a.y - b.y < 2.5 * body]
    return statistics.median(gaps) if gaps else 1.2 * body


CODE = -1
"""The level of a block of lines set in a fixed-pitch font: code or output, kept line by line."""
TABLE = -2
"""The level of a block of table lines (textbound/documents/pdf/_tables.py), one row a line."""
ENTRY = -3
"""The level of a definition entry: a term on a line of its own, its description under it."""
_TERM_CHARS = 40
"""The longest line that may be a term (`BZ_PARAM_ERROR`, `-v, --verbose`)."""
_TERM_INDENT = 1.5
"""How far (in font sizes) a description's lines sit right of its term, at the least."""


def _is_term(para: list[Line], ln: Line, gap_ok: bool) -> bool:
    """Whether the open paragraph is a term whose description begins, indented, at `ln`.

    bzip2's manual prints "BZ_PARAM_ERROR" on a line of its own at the margin and "Returned
    when a parameter ..." under it, one and a half ems in: an entry of a definition list, as
    Texinfo's tables and DocBook's variable lists are set.
    """
    term = para[0]  # a table row never: table lines take their own branch first
    return (len(para) == 1 and gap_ok
            and len(term.text) <= _TERM_CHARS and not SENTENCE_END.search(term.text)
            and not term.text.endswith((",", ";")) and term.text.count("(") == term.text.count(")")
            and not _BULLET.match(term.text) and not _defines(term)
            and ln.x - term.x >= _TERM_INDENT * ln.size)


def _hangs(para: list[Line], ln: Line) -> bool:
    """Whether `ln` goes on the description of a term set on the same line as it.

    Texinfo's tables print "< word" at the margin and "Open file word for reading ..." beside
    it, apart by a wide gap; the description's later lines stand under its first word.
    """
    return _in_column(para, ln.x, ln.size)


def _in_column(para: list[Line], x: float, size: float) -> bool:
    """Whether `x` stands at the description column of the term that opens `para`, if any."""
    return _run_in(para[0]) and abs(x - para[0].cells[-1][0]) <= 0.8 * size


def _run_in(ln: Line) -> bool:
    """Whether a line opens with a short term set apart from the text beside it."""
    return len(ln.cells) >= 2 and len(ln.cells[0][2]) <= _TERM_CHARS


def _block(para: list[Line]) -> tuple[int, list[Line]]:
    """A finished run of lines: a table, code (a fixed-pitch font) or a paragraph."""
    return (TABLE if para[0].table else CODE if para[0].mono else 0, para)


def paragraph_blocks(pages: list[list[Line]], body: float,
                     title: str = "") -> list[tuple[int, list[Line]]]:
    """Group lines into (heading level or 0, lines) blocks in reading order.

    `title`: the document's; the text after a contents list that no heading came before goes
    under it (as a level-1 heading), not under the list's "Contents".

    Footnote lines (`Line.footnote`) leave the flow: the paragraph a page break interrupts goes
    on as if they were not there, and each footnote is a paragraph of its own right after the
    paragraph that was open at its page's foot (or before the heading that ends it).
    """
    leading = line_spacing(pages, body)
    blocks: list[tuple[int, list[Line]]] = []
    para: list[Line] = []
    notes: list[list[Line]] = []
    left = 0.0
    listing = ""
    last: tuple[int, list[Line]] | None = None  # the book's last heading before a listing
    terms: set[int] = set()  # the first lines of definition entries

    def close(then: list[Line] | None = None) -> None:
        """End the open paragraph (if any), then write the footnotes waiting for it."""
        nonlocal para
        if para and _defines(para[0]) and not para[0].mono:
            blocks.append(_definition_heading(para, blocks))
        elif para:
            blocks.append((ENTRY, para) if id(para[0]) in terms else _block(para))
        blocks.extend((0, note) for note in notes)
        notes.clear()
        para = then or []

    for ln in (ln for lines in pages for ln in lines):
        if ln.heading < 0:
            continue
        if ln.footnote:
            if ln.footnote == 1 or not notes or notes[-1][-1].page != ln.page:
                notes.append([ln])
            else:
                notes[-1].append(ln)
            continue
        if ln.listing != listing:
            # a run of contents or index pages goes under a heading of its own, at the deepest
            # level so that the book's next heading of any level ends it; text after it that
            # has no heading of its own goes back under the heading it was under before
            close()
            if ln.listing:
                blocks.append((6, [Line(ln.listing, ln.page, ln.x, ln.y, ln.size, False)]))
            elif not ln.heading and last is not None:
                blocks.append(last)
            elif not ln.heading and title:
                blocks.append((1, [Line(title, ln.page, ln.x, ln.y, ln.size, False)]))
            listing = ln.listing
        if ln.heading:
            close()
            heading = (ln.heading, [ln, *ln.parts])
            if not ln.listing:
                last = heading
            blocks.append(heading)
            continue
        prev = para[-1] if para else None
        if ln.table or (prev is not None and prev.table):
            # a table's lines are its block: a header (or a row carrying one) starts it, a group
            # label stands alone between two blocks of the same table
            if ln.table == "group":
                close()
                blocks.append((0, [ln]))
            elif ln.table and ln.head is None and prev is not None and prev.table:
                para.append(ln)  # a row or a row's continuation goes on the open table
            else:
                close([ln])
                left = ln.x
            continue
        if prev is not None and (ln.mono or prev.mono):
            # code and output keep their lines: a run of fixed-pitch lines is one block
            if ln.mono and prev.mono and (ln.page != prev.page
                                         or 0 < prev.y - ln.y < 2.5 * leading):
                para.append(ln)
            elif not ln.mono and ln.page == prev.page and _is_term(
                    para, ln, 0 < prev.y - ln.y <= leading * 1.3 + 0.5):
                # an option or a name in a fixed-pitch font on a line of its own, its
                # description indented under it ("-c --stdout" / "Compress or decompress
                # to standard output."): a definition entry, as a proportional term's is
                terms.add(id(para[0]))
                para.append(ln)
                left = ln.x
            else:
                close([ln])
                left = ln.x
            continue
        if prev is None:
            para, left = [ln], ln.x
            continue
        same_column = ln.page == prev.page and 0 < prev.y - ln.y < 3 * max(ln.size, prev.size)
        if same_column:
            gap_ok = prev.y - ln.y <= leading * 1.3 + 0.5
            if _is_term(para, ln, gap_ok):
                terms.add(id(para[0]))
                para.append(ln)
                left = ln.x
                continue
            if gap_ok and _hangs(para, ln):
                para.append(ln)
                continue
            if _run_in(ln) and abs(ln.x - para[0].x) <= 0.8 * ln.size \
                    and _in_column(para, ln.cells[-1][0], ln.size):
                close([ln])  # the next term, its description in the same column
                left = ln.x
                continue
            if id(para[0]) in terms and ln.x < left - 0.8 * ln.size:
                close([ln])  # back at the margin: the next term
                left = ln.x
                continue
            # a list item's lines after the first hang under its text, right of its bullet
            indent = (_HANGING if _BULLET.match(para[0].text) else 0.8) * ln.size
            new = (not gap_ok
                   or ln.x - left > indent and not _definition_goes_on(para)
                   or _defines(ln) or _item_starts(ln, para, blocks))
        else:  # a page or column break: the paragraph goes on while its sentence does
            new = bool(SENTENCE_END.search(prev.text)) and not ln.text[:1].islower() \
                or _defines(ln) or _item_starts(ln, para, blocks)
        if new:
            close([ln])
            left = ln.x
        else:
            para.append(ln)
            left = min(left, ln.x) if same_column else ln.x
    close()
    return blocks


FENCE = "`" * 3


def _escape(text: str) -> str:
    """Keep a body paragraph from reading as a Markdown heading or code fence."""
    return "\\" + text if text.startswith(("#", "```", "~~~")) else text


def _row_line(cells: list[str], words: Counter[str]) -> str:
    return "| " + " | ".join(joined_lines(c, words).replace("|", "\\|") for c in cells) + " |"


def compose(blocks: list[tuple[int, list[Line]]], words: Counter[str]
             ) -> tuple[str, list[tuple[int, int]]]:
    """Write the blocks as Markdown, noting where each page's text starts."""
    out: list[str] = []
    pos = 0
    starts: list[tuple[int, int]] = []

    def emit(piece: str, page: int) -> None:
        nonlocal pos
        if not starts or starts[-1][0] != page:
            starts.append((page, pos))
        out.append(piece)
        pos += len(piece)

    for level, lines in blocks:
        if level == TABLE and not any(ln.table == "row" for ln in lines):
            continue  # a header a group label follows: the rows after it repeat it
        if out:
            out.append("\n\n")
            pos += 2
        if level == TABLE:
            cells = lines[0].head or []
            emit(_row_line(cells, words) + "\n" + "|---" * len(cells) + "|", lines[0].page)
            for ln in lines:
                if ln.table == "row":
                    emit("\n" + _row_line(ln.row, words), ln.page)
            continue
        if level == CODE:
            emit(FENCE + "\n", lines[0].page)
            for ln in lines:
                emit(ln.text.replace(FENCE, "` ` `") + "\n", ln.page)
            emit(FENCE, lines[-1].page)
            continue
        if level == ENTRY:  # written as an HTML definition list's entry is
            emit(f"- **{lines[0].text}**: ", lines[0].page)
            lines = lines[1:]
        elif level:
            emit("#" * level + " " + " ".join(ln.text for ln in lines), lines[0].page)
            continue
        # a bulleted paragraph is a list item, written as Markdown writes one
        first = _BULLET_MARK.sub("- ", lines[0].text, count=1)
        pieces: list[tuple[str, int]] = [(_escape(first), lines[0].page)]
        for prev, ln in zip(lines, lines[1:], strict=False):
            cut, gap = line_break(prev.text, ln.text, words)
            if cut:
                pieces[-1] = (pieces[-1][0][:-1], pieces[-1][1])
            pieces.append((gap + ln.text, ln.page))
        for piece, page in pieces:
            emit(piece, page)
    return "".join(out), starts
