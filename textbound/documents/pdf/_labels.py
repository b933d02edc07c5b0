"""The page number a book prints on each page (its label), for citations.

The rules are in `textbound.documents.pdf`'s docstring: the PDF's own page labels when it has
them, else the printed page numbers the furniture pass dropped, fitted to runs of pages that
agree on one offset (printed = index - k), so that a page whose number is missing or misread
still gets the label its neighbours imply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from textbound.documents.pdf._layout import PAGE_NUMBER, ROMAN
from textbound.documents.pdf._lines import Line

__all__ = ["printed_labels"]

_ROMAN_WORD = re.compile(rf"^{ROMAN}$", re.I)
_DIGITS = re.compile(r"^\d{1,4}$")
_FIRST_NUMBER = re.compile(r"\d{1,4}|[ivxlcdm]+", re.I)
MIN_RUN = 2
"""Pages a run must have printed for its offset to count: one page alone may be a misreading."""
AGREEMENT = 0.5
"""More than this share of the pages that print a number must sit in runs, else no labels."""
_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}


def roman_value(text: str) -> int:
    """Return the value of a (valid) Roman numeral, in either case."""
    total, last = 0, 0
    for ch in reversed(text.lower()):
        v = _VALUES[ch]
        total += -v if v < last else v
        last = max(last, v)
    return total


def to_roman(value: int, upper: bool = False) -> str:
    """Write a positive number as a Roman numeral ("xiv"), upper case when asked."""
    out = []
    for v, s in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
                 (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while value >= v:
            out.append(s)
            value -= v
    text = "".join(out)
    return text.upper() if upper else text


def _number(token: str) -> tuple[str, int] | None:
    """Return (kind, value) of a page number token: "arabic", "roman" or "ROMAN"."""
    if _DIGITS.match(token):
        return "arabic", int(token)
    if _ROMAN_WORD.match(token):
        return ("ROMAN" if token.isupper() else "roman"), roman_value(token)
    return None


def candidates(line: Line) -> set[tuple[str, int]]:
    """Return the page numbers a furniture line may print.

    A bare page number ("12", "xiv", "Page 3 of 9", "- 7 -") is one; a running header or footer
    may start or end with one ("12 CHAPTER 1. ROBOTS", "CONTENTS gnuplot 5.4 3").
    """
    text = line.text.strip()
    if PAGE_NUMBER.match(text):
        m = _FIRST_NUMBER.search(re.sub(r"^page\s+", "", text, flags=re.I))
        hit = _number(m.group(0)) if m else None
        return {hit} if hit else set()
    tokens = text.split()
    if len(tokens) < 2:
        return set()
    return {hit for hit in (_number(tokens[0]), _number(tokens[-1])) if hit}


@dataclass
class _Run:
    """Pages that print their numbers at one offset from the file's page index."""

    kind: str
    offset: int
    first: int
    last: int
    support: int = 1

    def label(self, page: int) -> str | None:
        value = page - self.offset
        if value < 1:
            return None
        return str(value) if self.kind == "arabic" else to_roman(value, self.kind == "ROMAN")


def _runs(cands: dict[int, set[tuple[str, int]]]) -> list[_Run]:
    """Group the numbered pages, in order, into runs of one (kind, offset)."""
    numbered = sorted(cands)
    offsets = {p: {(kind, p - value) for kind, value in cands[p]} for p in numbered}
    runs: list[_Run] = []
    for i, page in enumerate(numbered):
        here = offsets[page]
        if runs and (runs[-1].kind, runs[-1].offset) in here:
            runs[-1].last = page
            runs[-1].support += 1
            continue
        ahead = offsets[numbered[i + 1]] if i + 1 < len(numbered) else set()
        kind, offset = min(here & ahead or here)  # the reading the next page agrees with
        runs.append(_Run(kind, offset, page, page))
    kept: list[_Run] = []
    for run in runs:
        if run.support < MIN_RUN:
            continue  # a misreading, or a number that is not a page number
        if kept and (kept[-1].kind, kept[-1].offset) == (run.kind, run.offset):
            kept[-1].last = run.last
            kept[-1].support += run.support
        else:
            kept.append(run)
    return kept


def _value(label: str) -> int:
    return int(label) if label.isdigit() else roman_value(label)


def printed_labels(furniture: list[list[Line]]) -> dict[int, str]:
    """Return {1-based page: printed label} from the furniture lines each page dropped.

    Empty when fewer than most of the pages that print a number agree with a run: a document
    whose numbers do not follow the pages gets no labels rather than wrong ones.
    """
    cands = {}
    for number, lines in enumerate(furniture, start=1):
        found = set().union(*(candidates(ln) for ln in lines)) if lines else set()
        if found:
            cands[number] = found
    runs = _runs(cands)
    if not runs or sum(r.support for r in runs) <= AGREEMENT * len(cands):
        return {}
    labels: dict[int, str] = {}
    for i, run in enumerate(runs):
        for page in range(run.first, run.last + 1):
            label = run.label(page)
            if label:
                labels[page] = label
        nxt = runs[i + 1] if i + 1 < len(runs) else None
        end = nxt.first if nxt else len(furniture) + 1
        for page in range(run.last + 1, end):  # pages between runs: what the neighbours imply
            label = _between(page, run, nxt)
            if label:
                labels[page] = label
    first = runs[0]
    for page in range(1, first.first):  # pages before the first run, counting back
        label = first.label(page)
        if label:
            labels[page] = label
    return labels


def _between(page: int, before: _Run, after: _Run | None) -> str | None:
    """Label a page between two runs, or after the last one; None where they disagree.

    The next run counted back wins when its number comes after every number of the run before
    (or the two count in different numerals: roman front matter, then 1, 2, ...); else the run
    before counted on, when its number comes before the next run's first. Unnumbered plates
    between two runs at different offsets get no label.
    """
    if after is None:
        return before.label(page)
    mixed = before.kind != after.kind
    back = after.label(page)
    last = before.label(before.last)
    if back and (mixed or last is None or _value(back) > _value(last)):
        return back
    on = before.label(page)
    first = after.label(after.first)
    if on and (mixed or first is None or _value(on) < _value(first)):
        return on
    return None
