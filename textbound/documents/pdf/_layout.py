"""Which lines are page furniture (running headers, footers, page numbers) and which are headings.

The rules are in `textbound.documents.pdf`'s docstring. Both steps work on the lines in place of
the page lists: furniture is dropped, headings are marked (`Line.heading`).
"""

from __future__ import annotations

import re

from textbound.documents.pdf._lines import SENTENCE_END, Line

__all__ = ["PAGE_NUMBER", "ROMAN", "drop_furniture", "mark_by_type", "mark_footnotes",
           "mark_listings", "mark_outline"]

ROMAN = r"(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
PAGE_NUMBER = re.compile(
    rf"^(?:page\s+)?(?:\d{{1,4}}|{ROMAN})(?:\s*(?:of|/)\s*\d{{1,4}})?$"
    r"|^[-\u2013\u2014]\s*\d{1,4}\s*[-\u2013\u2014]$", re.I)


# --- page furniture --------------------------------------------------------------------------

def _mask(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _edges(lines: list[Line]) -> list[Line]:
    """Return the page's two top-most and two bottom-most lines."""
    by_height = sorted(lines, key=lambda ln: -ln.y)
    return by_height[:2] + [ln for ln in by_height[-2:] if ln not in by_height[:2]]


def _frame(text: str) -> tuple[str, str] | None:
    """A running header's shape: its first and last words, numbers masked ("chapter", "#")."""
    words = _mask(text).split()
    return (words[0], words[-1]) if len(words) > 2 else None


def drop_furniture(pages: list[list[Line]], body: float, leading: float
                    ) -> list[list[Line]]:
    """Drop running headers, footers and page numbers; see the module docstring.

    Only a line set apart from the page's text (a gap above 1.8 line spacings between it and the
    nearest line that is not among the page's edge lines) can be furniture, so the first line
    of a paragraph that happens to recur at the top of another page stays. A running header
    that names a chapter of one page ("Chapter 1: Introduction 1") recurs nowhere; it is
    furniture when two other pages' furniture at its height has its shape (`_frame`).
    """
    seen: dict[str, list[tuple[int, float]]] = {}
    for lines in pages:
        for ln in _edges(lines):
            seen.setdefault(_mask(ln.text), []).append((ln.page, ln.y))

    def apart(ln: Line, inner: list[float]) -> bool:
        return not inner or min(abs(ln.y - y) for y in inner) > 1.8 * leading

    def elsewhere(places: list[tuple[int, float]], ln: Line) -> set[int]:
        """The other pages that have one of `places` at about the line's height."""
        return {p for p, y in places if p != ln.page and abs(y - ln.y) < 4}

    def furniture(ln: Line) -> bool:
        if PAGE_NUMBER.match(ln.text.strip()):
            return True
        if ln.size > body + 0.5:
            return False
        return bool(elsewhere(seen.get(_mask(ln.text), []), ln))

    candidates: list[Line] = []
    for lines in pages:
        edges = _edges(lines)
        inner = [ln.y for ln in lines if ln not in edges]
        candidates += [ln for ln in edges if apart(ln, inner)]
    drop = {id(ln) for ln in candidates if furniture(ln)}
    shapes: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for ln in candidates:
        if id(ln) in drop and (shape := _frame(ln.text)) is not None:
            shapes.setdefault(shape, []).append((ln.page, ln.y))
    for ln in candidates:
        shape = _frame(ln.text)
        if id(ln) not in drop and shape is not None and ln.size <= body + 0.5 \
                and len(elsewhere(shapes.get(shape, []), ln)) >= 2:
            drop.add(id(ln))
    return [[ln for ln in lines if id(ln) not in drop] for lines in pages]


# --- footnotes -------------------------------------------------------------------------------

NOTE_MARK = re.compile(
    r"^(?:\d{1,3}|[*\u2020\u2021\u00a7\u00b6]{1,3}|[\u00b9\u00b2\u00b3\u2070-\u2079]{1,3})\s*(?=\S)")
"""A footnote's marker: a number (superscript or not), *, †, ‡, § or ¶."""


def mark_footnotes(pages: list[list[Line]], body: float) -> None:
    """Mark the footnotes at the foot of each page (`Line.footnote`).

    The lines below the page's lowest line of body-size (or larger) text, all set smaller than
    the body text and none in a fixed-pitch font, are the page's footnotes when the first of
    them starts with a marker; each line that starts with a marker begins a footnote.
    """
    for lines in pages:
        main = [ln for ln in lines if ln.size >= body - 0.5 and not ln.listing]
        if not main:
            continue
        floor = min(ln.y for ln in main)
        below = sorted((ln for ln in lines if ln.y < floor), key=lambda ln: -ln.y)
        if not below or not NOTE_MARK.match(below[0].text) or any(
                ln.size >= body - 0.5 or ln.mono or ln.heading or ln.listing for ln in below):
            continue
        for ln in below:
            ln.footnote = 1 if NOTE_MARK.match(ln.text) else 2


# --- contents and index pages ---------------------------------------------------------------

_PAGE_REF = r"(?:\d{1,4}|[ivxlc]{1,6})"
_TOC_LINE = re.compile(rf"(?:\.\s*){{3,}}\s*{_PAGE_REF}$|\s{_PAGE_REF}$", re.I)
"""A contents entry: a title, dot leaders or a space, and the page it starts on."""
_PAGES = r"\d{1,4}(?:[\u2013-]\d{1,4})?"
_INDEX_LINE = re.compile(rf"^[^,]{{1,80}},\s*{_PAGES}(?:,\s*{_PAGES})*(?:\s|,|$)")
"""An index entry: a term, then the pages it is on ("voxel grids, 24, 231")."""
LISTING_MIN_LINES = 8
LISTING_SHARE = 0.6
_LEADER_LINE = re.compile(rf"(?:\.\s*){{5,}}\s*{_PAGE_REF}$", re.I)
"""A contents entry set with dot leaders ("Caveats ........ 3"): nothing else prints them."""
LEADER_RUN = 3
"""Entries with dot leaders in a row that are a contents list wherever they stand on a page."""
_RUN_ON = 3
"""Lines an entry may take before the one with its leaders and page."""


def _listing(lines: list[Line]) -> str | None:
    """Return "Contents" or "Index" when a page lists where things are rather than saying them."""
    body = [ln for ln in lines if ln.heading == 0 and not ln.mono]
    if len(body) < LISTING_MIN_LINES:
        return None
    if sum(bool(_INDEX_LINE.match(ln.text)) for ln in body) >= LISTING_SHARE * len(body):
        return "Index"
    if sum(bool(_TOC_LINE.search(ln.text)) for ln in body) >= LISTING_SHARE * len(body):
        return "Contents"
    return None


def mark_listings(pages: list[list[Line]], *, outlined: bool = False) -> None:
    """Mark the lines of table-of-contents and index pages with what the page is.

    Their text stays in the document (a reader sees it) under a heading of its own, "Contents"
    or "Index", which answers never quote and retrieval leaves out: a contents line ("Voxel
    grids . . . 23") names a topic without saying anything about it. `outlined`: the headings
    came from the bookmarks, and one a listing page prints ("Function and Data Index") stays
    the heading its list goes under; a heading read from type alone there is a listing line.
    """
    before: str | None = None
    for lines in pages:
        kind = _listing(lines)
        if kind is not None:
            _mark(lines, kind, outlined)
        else:
            if before is not None:
                # the list runs on at the top of the next page, down to its first other line
                shape = _INDEX_LINE.match if before == "Index" else _TOC_LINE.search
                top = next((i for i, ln in enumerate(lines) if not shape(ln.text)), len(lines))
                _mark(lines[:top], before, outlined)
            _mark(_leader_runs(lines), "Contents", outlined)
        before = kind


def _mark(lines: list[Line], kind: str, outlined: bool) -> None:
    for ln in lines:
        if ln.heading >= 0 and not (outlined and ln.heading):
            ln.heading = 0
            ln.parts = []
            ln.listing = kind


def _leader_runs(lines: list[Line]) -> list[Line]:
    """The lines of contents lists set with dot leaders on a page that also says things.

    A DocBook book opens each chapter, and its FAQ, with a contents list of its own above the
    text, and an entry too long for one line runs on to the next, where its leaders and page
    are ("3.1. Programs run OK on Valgrind, but at exit produce a bunch of errors involving" /
    "and then die with a segmentation fault. ........ 2"): a run of such entries (up to
    _RUN_ON lines before each leader, none ending a sentence) with at least LEADER_RUN leaders.
    """
    out: list[Line] = []
    run: list[Line] = []
    pending: list[Line] = []  # lines that may run on into the next entry's leader
    leaders = 0
    for ln in lines:
        if _LEADER_LINE.search(ln.text):
            run += [*pending, ln]
            pending = []
            leaders += 1
        elif len(pending) < _RUN_ON and not (ln.heading or ln.mono) \
                and not re.search(r"[.!:]$", ln.text):
            pending.append(ln)
        else:
            if leaders >= LEADER_RUN:
                out.extend(run)
            run, pending, leaders = [], [], 0
    return out + (run if leaders >= LEADER_RUN else [])


# --- headings --------------------------------------------------------------------------------

_NUMBERED = frozenset({"chapter", "appendix", "part", "section", "annex"})
"""Words a printed heading may put before its number that a bookmark leaves out."""


def _norm(text: str) -> str:
    """Fold a title for matching: no case, no punctuation, no leading section number.

    A bookmark "2.3 Joins Between Tables" matches the printed heading "Joins Between Tables",
    and the other way round; "A Copying Information" matches "Appendix A Copying Information"
    (Texinfo prints the word its bookmarks leave out), as "3 Utilities" does "Chapter 3 Utilities".
    """
    words = re.sub(r"[^\w]+", " ", text.casefold()).split()
    if len(words) > 2 and words[0] in _NUMBERED and (words[1].isdigit() or len(words[1]) == 1):
        words.pop(0)
    while len(words) > 1 and (words[0].isdigit() or re.fullmatch(r"[ivxlc]+|[a-z]", words[0])
                              and words[1].isdigit()):
        words.pop(0)
    return " ".join(words)


def mark_outline(pages: list[list[Line]], outline: list[tuple[int, str, int]]) -> bool:
    """Mark the lines that print the outline's titles; False (nothing marked) if most are not."""
    found: list[tuple[Line, int, list[Line]]] = []
    taken: set[int] = set()
    for level, title, page in outline:
        want = _norm(title)
        hit = None
        for number in (page, page + 1):  # a destination can sit at the foot of the page before
            lines = pages[number - 1] if 0 < number <= len(pages) else []
            for i, ln in enumerate(lines):
                got = _norm(ln.text)
                if id(ln) in taken or not got or not want.startswith(got):
                    continue
                group = [ln]
                while got != want and i + len(group) < len(lines):  # a title wrapped over lines
                    more = _norm(f"{got} {lines[i + len(group)].text}")
                    if not want.startswith(more):
                        break
                    got = more
                    group.append(lines[i + len(group)])
                if got == want:
                    hit = group
                    break
            if hit:
                break
        if hit:
            taken.update(id(ln) for ln in hit)
            found.append((hit[0], level, hit[1:]))
    if not found or len(found) * 2 < len(outline):
        return False
    for first, level, rest in found:
        _make_heading(first, level, rest)
    return True


def _make_heading(first: Line, level: int, rest: list[Line]) -> None:
    first.heading = min(level, 6)
    first.parts = rest
    for ln in rest:
        ln.heading = -1  # printed as part of `first`


def mark_by_type(pages: list[list[Line]], body: float) -> None:
    """Mark headings by font size and weight; see the module docstring."""

    def looks_like_heading(ln: Line) -> bool:
        return len(ln.text) <= 150 and not ln.text.endswith((",", ";")) and \
            any(ch.isalpha() for ch in ln.text)

    sizes = sorted({ln.size for lines in pages for ln in lines
                    if ln.size >= body + 1.0 and looks_like_heading(ln)}, reverse=True)
    level_of = {size: min(i + 1, 6) for i, size in enumerate(sizes)}
    bold_level = min(len(sizes) + 1, 6)
    for lines in pages:
        prev: Line | None = None
        for ln in lines:
            if ln.size in level_of and looks_like_heading(ln):
                level = level_of[ln.size]
            elif looks_like_heading(ln) and _bold_heading(ln, prev, body):
                level = bold_level
            else:
                prev = ln
                continue
            if (prev is not None and prev.heading > 0 and prev.size == ln.size
                    and 0 < prev.y - ln.y <= 1.6 * ln.size):
                prev.parts.append(ln)  # the same heading, wrapped
                ln.heading = -1
            else:
                _make_heading(ln, level, [])
                prev = ln


def _bold_heading(ln: Line, prev: Line | None, body: float) -> bool:
    """Whether a body-size line reads as a run-in heading: short, all bold, not a sentence."""
    if not ln.bold or abs(ln.size - body) > 0.5 or len(ln.text) > 80:
        return False
    if SENTENCE_END.search(ln.text.rstrip("?")):
        return False
    # a bold line that carries on a plain sentence from the line above is emphasis, not a title
    return prev is None or bool(prev.heading) or prev.bold \
        or bool(SENTENCE_END.search(prev.text)) or prev.y - ln.y >= 2 * body
