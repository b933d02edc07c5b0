"""A manual page set as text, read as the blocks it prints.

Many HTML manuals hold their manual pages as `man` formatted them, in `<pre>` (postfix's, one
`<pre>` a page; ncurses', one `<pre>` a section under an `<h2>`), and a `.txt` file may be
`man foo > foo.txt`. Read as code, every passage of such a page was code: sentences cut at
each line, an option's description apart from the option. What `man` prints has a structure of
its own, set by indentation, and this module reads it:

* a line at the left margin is a section heading (NAME, DESCRIPTION ...), one a few spaces in
  a subsection heading; the running header and footer (`postkick(1) ... postkick(1)`) go;
* the SYNOPSIS is how a program is invoked or a function declared: code, line by line;
* a paragraph at the text's indent is prose: its lines join, a word broken at a line end is
  mended as in a printed book (`textbound.text.linebreaks`), justification's double spaces go;
* a term on a line of its own with its description indented under it (`-c config_dir` /
  `Read the main.cf ...`), or a short term with its description beside it, in the column its
  later lines keep (`-x   do not attempt ...`), is a definition entry, `- **term**:
  description`, as an HTML `<dl>` is written; a bullet or a number as the term is a list item;
* a paragraph in the description's column goes on the entry's description, as a paragraph;
* lines set one by one (FILES, SEE ALSO: every line short of the page's width) are list items
  at the text's indent, and code in a description ("# postfix stop" / "# postsuper");
* a block indented further whose lines are short terms with their descriptions in one column
  (tmux's "C-o         Rotate the panes ...", a term on lines of its own above its
  description's first line, later lines in that column) is a listing: an entry per term,
  `- **term**: description` as above (a term holding `*`, `_` or a backtick is written as
  inline code, so it stays text); a "description" that opens on no letter ("5.0      # line
  2") makes it an example;
* anything else indented further is an example: code, its lines kept as printed.

A page is read so only when it is a manual page: a NAME section whose first line reads
"name - what it does", or a running header `name(section)` at both ends of its first line.
"""

from __future__ import annotations

import re
from collections import Counter

from textbound.documents.ingest.blocks import escaped
from textbound.text.linebreaks import joined_lines, vocabulary

__all__ = ["is_manual_page", "layout", "manual_blocks"]

_NAME = re.compile(r"(?m)^[ \t]*NAME[ \t]*\n(?:[ \t]*\n)*[ \t]+[\w.+:-]+(?:,\s*[\w.+:-]+)*"
                   r"[ \t]+(?:-|\\-|\u2013|\u2014)[ \t]+\S")
"""NAME, then "name - what it does" indented; several names may run over lines before it."""
_HEADER = re.compile(r"^([\w.+:-]+\(\d\w*\)).*\s\1\s*$")
"""The running header: the page's name and section at both ends of a line at the margin."""
_FOOTER = re.compile(r"^(?:\S.*\s{6,}|\s{40,})[\w.+:-]+\(\d\w*\)\s*$")
"""A running footer: a line at the margin ending, far apart, in a page's name and section
("ncurses 6.4    2023-08-19    clear(1)"), or that name alone set right ("     POSTKICK(1)").
An indented line never is: ncurses' routine index ends its rows in "curs_add_wch(3x)"."""
_INLINE_TERM = re.compile(r"^(\S(?:.*?\S)??)( {2,}|\t+)(\S.*)$")
_TERM_CHARS = 64
"""The longest term on a line of its own: "import_environment (see 'postconf -d' output)"."""
_INLINE_TERM_CHARS = 24
"""The longest term with its description beside it ("-x", "MAIL_CONFIG")."""
_SHORT_LINE = 0.8
"""Lines all shorter than this share of the room they have (the page's width less their indent)
are set one by one (FILES, SEE ALSO), not running text: a paragraph fills its lines."""
_LISTING_ROWS = 3
"""The fewest rows of a listing (a term and its description beside it) set deeper than the text."""
_SENTENCE_END = re.compile(r"[.!?:;,][\"')\]]*$")
_SYNTAX = frozenset({"SYNOPSIS", "SYNTAX"})
"""Sections that give how a program is invoked or a function declared: code, line by line."""
_ITEM = re.compile(r"^(?:[\u2022\u00b7*o+-]|\d{1,2}[.)])$")
"""A term that is a list item's bullet or number."""


def is_manual_page(text: str) -> bool:
    """Whether the text (a page's, or a file's) is a manual page set as text."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return bool(_NAME.search(text) or _HEADER.match(first))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def layout(texts: list[str]) -> tuple[int, int]:
    """A page's text indent and width, from all its parts.

    The indent is the least one of 3 or more that a tenth of the lines (or three) have:
    subsection headings sit less far in, descriptions and examples further. The width is the
    longest that a hundredth of the lines (or three) reach: running text is filled to it, and
    one wide line of an example (tmux's key table at column 81, 109 characters) is no measure.
    """
    lines = [ln.expandtabs(8).rstrip() for t in texts for ln in t.split("\n") if ln.strip()]
    found = Counter(_indent(ln) for ln in lines)
    fits = [i for i, n in found.items() if i >= 3 and (n >= 3 or n >= len(lines) / 10)]
    body = min(fits, default=min((i for i in found if i >= 3), default=0))
    widths = sorted((len(ln) for ln in lines), reverse=True)
    return body, widths[min(len(widths) - 1, max(2, len(widths) // 100))] if widths else 0


def _blocks_of(lines: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    for line in lines:
        if not line.strip():
            if out and out[-1]:
                out.append([])
            continue
        if not out:
            out.append([])
        out[-1].append(line)
    return [b for b in out if b]


def _prose(lines: list[str], words: Counter[str]) -> str:
    return " ".join(joined_lines("\n".join(" ".join(ln.split()) for ln in lines), words).split())


def _entry(block: list[str], base: int, described: int) -> tuple[str, list[str], int] | None:
    """(term, description lines, description column) when the block is a definition entry.

    `described`: the column the page's descriptions mostly stand in; a one-line entry with its
    term beside it ("OK     Accept the address ...") must start its description there.
    """
    first = block[0].strip()
    rest = block[1:]
    m = _INLINE_TERM.match(first)
    if m is not None and _ITEM.match(m.group(1)):  # "o   In June 1999, xterm ..."
        return m.group(1), [" " * (base + m.start(3)) + m.group(3), *rest], base + m.start(3)
    if rest and all(_indent(ln) > base for ln in rest) and len(first) <= _TERM_CHARS \
            and "  " not in first and (not _SENTENCE_END.search(first) or _ITEM.match(first)):
        return first, rest, _indent(rest[0])
    tag = described - base  # a term as wide as its tag leaves one space: "pie=no Enable ..."
    if rest and all(_indent(ln) == described for ln in rest) and 0 < tag - 1 < len(first) - 1 \
            and first[tag - 1] == " " and first[tag] != " " and "  " not in first[:tag - 1]:
        return first[:tag - 1], [" " * described + first[tag:], *rest], described
    if m is None or len(m.group(1)) > _INLINE_TERM_CHARS:
        return None
    column = base + m.start(3)
    if rest and all(_indent(ln) == column for ln in rest) \
            or not rest and (column == described or m.group(1).startswith(("-", "+"))):
        return m.group(1), [" " * column + m.group(3), *rest], column
    return None


def _listing(block: list[str]) -> list[tuple[str, list[str]]] | None:
    """(term, description lines) for each row when an indented block is a two-column listing.

    Rows start at the block's indent with a term of at most `_INLINE_TERM_CHARS` and its
    description in the column most of them share; terms may stand on lines of their own above
    it ("Up, Down" / "Left, Right" / "Change to the pane above ..."), and a description's later
    lines stand in that column. At least `_LISTING_ROWS` rows, each description opening on a
    letter; any other line makes the block no listing.
    """
    at = _indent(block[0])
    found = Counter(at + m.start(3) for m in (_INLINE_TERM.match(ln.strip()) for ln in block
                                               if _indent(ln) == at)
                    if m is not None and len(m.group(1)) <= _INLINE_TERM_CHARS)
    if not found:
        return None
    column = found.most_common(1)[0][0]
    rows: list[tuple[str, list[str]]] = []
    terms: list[str] = []
    for ln in block:
        text = ln.strip()
        m = _INLINE_TERM.match(text) if _indent(ln) == at else None
        if m is not None and at + m.start(3) == column and len(m.group(1)) <= _INLINE_TERM_CHARS:
            rows.append((", ".join([*terms, m.group(1)]), [m.group(3)]))
            terms = []
        elif _indent(ln) == at and len(text) <= _INLINE_TERM_CHARS and "  " not in text:
            terms.append(text)
        elif _indent(ln) == column and terms:
            rows.append((", ".join(terms), [text]))
            terms = []
        elif _indent(ln) == column and rows:
            rows[-1][1].append(text)
        else:
            return None
    if terms or len(rows) < _LISTING_ROWS or not all(d[0][:1].isalpha() for _, d in rows):
        return None
    return rows


def manual_blocks(text: str, page: tuple[int, int] | None = None, section: str = "") -> list[str]:
    """Return a manual page's text as Markdown blocks (see the module docstring).

    `page`: the page's `layout` when `text` is one part of it (one `<pre>` of several);
    `section`: the heading it stands under there.
    """
    # groff's UTF-8 output breaks a word at a line end with U+2010 (a hyphen) or U+00AD
    lines = [re.sub("[\u2010\u00ad]$", "-", ln.expandtabs(8).rstrip())
             for ln in text.replace("\r\n", "\n").split("\n")]
    lines = [ln for ln in lines if not (_HEADER.match(ln) or _FOOTER.match(ln))]
    words = vocabulary(ln.strip() for ln in lines)
    body, width = layout(lines) if page is None else page
    deeper = Counter(_indent(ln) for ln in lines if ln.strip() and _indent(ln) > body)
    described = deeper.most_common(1)[0][0] if deeper else -1  # where descriptions stand
    out: list[str] = []
    terms: list[str] = []  # lone short lines that may be the first terms of the next entry
    columns: list[int] = []  # description columns of the entries open here, outermost first
    for block in _blocks_of(lines):
        at = _indent(block[0])
        if at < body and at <= 4:
            # headings: at the margin a section, a few spaces in a subsection; text under a
            # heading on the same block goes on as a block of its own
            out.extend(map(escaped, terms))
            terms, columns = [], []
            section = " ".join(block[0].split())
            out.append(("## " if at == 0 else "### ") + section)
            block = block[1:]
            if not block:
                continue
            at = _indent(block[0])
        if section.upper() in _SYNTAX:  # how it is invoked or declared: code, as printed
            out.append("```\n" + "\n".join(ln[min(at, body):] for ln in block) + "\n```")
            continue
        # an entry at the text's indent, or a list inside an entry's description
        entry = _entry(block, at, described) if at == body or at in columns else None
        if entry is not None:
            term, desc, column = entry
            columns = [c for c in columns if c <= at] + [column]
            item = _ITEM.match(term) and not terms
            term = ", ".join([*terms, term])
            head = ("1. " if term[:1].isdigit() else "- ") if item else f"- **{term}**: "
            out.append(head + _prose(desc, words))
            terms = []
            continue
        if at == body and len(block) == 1 and len(block[0].strip()) <= _TERM_CHARS \
                and not _SENTENCE_END.search(block[0]):
            terms.append(block[0].strip())  # "net.work.addr.ess", "net.work.addr", "net  Matches"
            continue
        out.extend(map(escaped, terms))
        terms = []
        lined = len(block) > 1 and all(len(ln.strip()) < _SHORT_LINE * (width - at)
                                       for ln in block)
        if at == body and lined:
            out.extend("- " + " ".join(ln.split()) for ln in block)
            columns = []
        elif (at == body or at in columns) and not lined:
            out.append(escaped(_prose(block, words)))  # running text, or a description's next
            columns = [c for c in columns if c <= at]
        elif (rows := _listing(block)) is not None:
            for term, desc in rows:
                shown = f"`{term}`" if set(term) & set("*_`") else f"**{term}**"
                out.append(f"- {shown}: " + _prose(desc, words))
        else:
            code = "\n".join(ln[min(_indent(x) for x in block):] for ln in block)
            out.append("```\n" + code + "\n```")
    return out + [escaped(t) for t in terms]
