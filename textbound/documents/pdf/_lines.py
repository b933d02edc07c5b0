"""Read a PDF's lines with PDFium: text, page, baseline, left edge, font size and weight.

PDFium is not thread-safe: callers hold `LOCK` around `read_lines`.
"""

from __future__ import annotations

import ctypes
import re
import statistics
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LOCK", "SENTENCE_END", "Line", "PdfError", "read_lines"]

LOCK = threading.Lock()
_PLACEHOLDER_TITLES = {"untitled", "(anonymous)", "anonymous", "(untitled)"}
_HYPHEN_MARK = ("\ufffe", "\x02")  # PDFium's mark for a hyphen it saw at a line end
SENTENCE_END = re.compile(r"[.!?:][\"'\u201d\u2019)\]]*$")


class PdfError(Exception):
    """A PDF that cannot be read; the message says why, in words a user can act on."""


@dataclass(eq=False)  # lines are compared by identity
class Line:
    """One printed line: its text, page, baseline, left edge, font size and weight."""

    text: str
    page: int
    x: float
    y: float
    size: float
    bold: bool
    heading: int = 0  # level, 0 for body text
    mono: bool = False  # set wholly in a fixed-pitch (typewriter) font: code or program output
    listing: str = ""  # "Contents" or "Index" on a page that lists where things are
    footnote: int = 0  # 1: a footnote's first line (it starts with its marker), 2: a later line
    parts: list[Line] = field(default_factory=list)
    cells: list[tuple[float, float, str]] = field(default_factory=list)
    """(left edge, right edge, text) of each stretch of the line between gaps wider than the
    font size: the cells of a table row; empty when the line has no such gap (prose, whose word
    spaces are a fraction of the font size even when justified)."""
    table: str = ""  # in a table (_tables): "head", "row", "more" (goes on a row) or "group"
    row: list[str] = field(default_factory=list)  # a head or row line's cells, by column
    head: list[str] | None = None  # the header cells, on the line a table block starts with


def _is_bold(raw: Any, tp: Any, index: int, buf: Any, flags: Any) -> bool:
    if raw.FPDFText_GetFontWeight(tp, index) >= 600:
        return True
    raw.FPDFText_GetFontInfo(tp, index, buf, len(buf), ctypes.byref(flags))
    name = buf.value.decode("latin-1").split("+")[-1].lower()
    return any(w in name for w in ("bold", "black", "heavy", "semibold"))


_MONO_NAMES = ("mono", "courier", "consol", "typewriter", "menlo", "inconsolata", "cmtt", "sfmt",
               "lmmono", "txtt", "beramono", "dejavusansm", "lucidaconsole")
_FIXED_PITCH = 1  # the PDF font descriptor's FixedPitch flag
_PITCH_PAIRS = 12
"""Pairs of letters a font needs on a page before its pitch is measured (and 6 kinds of letter)."""
_PITCH_SPREAD = 0.05
"""A font whose advances (10th to 90th percentile, over their median) vary less is fixed-pitch:
a typewriter font's are all one width (Courier 0.600 of the font size, cmtt 0.525), a text
font's vary by half or more ("i" against "m")."""


class Pitch:
    """Which fonts of one document are fixed-pitch, measured on its pages as they are read.

    A font's name or its FixedPitch flag often says so, but not always: Ghostscript's Nimbus
    Mono L (bzip2's and fontconfig's manuals, set by DocBook) carries neither, so their code read
    as prose. What holds for any font: in a fixed-pitch one every letter advances the same
    width. Measured from PDFium's character origins on each page until the font has enough
    pairs of letters; the name and flag decide only for a font seen too little to measure.
    """

    def __init__(self) -> None:
        self.fixed: dict[str, bool] = {}
        self._seen: dict[str, list[tuple[float, str]]] = {}

    def measure(self, raw: Any, tp: Any, text: str, buf: Any, flags: Any) -> None:
        """Add the page's pairs of adjacent letters on one line, per font not yet decided."""
        x, y = ctypes.c_double(), ctypes.c_double()
        for i in range(0, len(text) - 1, 3):
            a, b = text[i], text[i + 1]
            if a.isspace() or b.isspace():
                continue
            name = _font_name(raw, tp, i, buf, flags)
            if name in self.fixed or _font_name(raw, tp, i + 1, buf, flags) != name:
                continue
            size = raw.FPDFText_GetFontSize(tp, i)
            raw.FPDFText_GetCharOrigin(tp, i, ctypes.byref(x), ctypes.byref(y))
            x0, y0 = x.value, y.value
            raw.FPDFText_GetCharOrigin(tp, i + 1, ctypes.byref(x), ctypes.byref(y))
            if size <= 0 or abs(y.value - y0) > 0.5 * size or x.value <= x0:
                continue  # the next letter starts a line, or the text runs another way
            seen = self._seen.setdefault(name, [])
            seen.append(((x.value - x0) / size, a))
            if len(seen) >= _PITCH_PAIRS and len({c for _, c in seen}) >= 6:
                widths = sorted(w for w, _ in seen)
                n = len(widths)
                spread = (widths[n * 9 // 10] - widths[n // 10]) / widths[n // 2]
                self.fixed[name] = spread < _PITCH_SPREAD
                del self._seen[name]

    def is_mono(self, raw: Any, tp: Any, index: int, buf: Any, flags: Any) -> bool:
        """Whether the character at index is set in a fixed-pitch font."""
        name = _font_name(raw, tp, index, buf, flags)
        if name in self.fixed:
            return self.fixed[name]
        key = name.lower().replace("-", "")
        return bool(flags.value & _FIXED_PITCH) or any(w in key for w in _MONO_NAMES)


def _font_name(raw: Any, tp: Any, index: int, buf: Any, flags: Any) -> str:
    raw.FPDFText_GetFontInfo(tp, index, buf, len(buf), ctypes.byref(flags))
    return str(buf.value.decode("latin-1").split("+")[-1])


_CELL_GAP = 1.0
"""A gap between two characters of a line wider than this many times the font size parts cells."""


def _cells(raw: Any, tp: Any, text: str, s: int, e: int) -> list[tuple[float, float, str]]:
    """Split text[s:e] at gaps wider than _CELL_GAP x the font size; [] when there is none.

    Only the characters on either side of a space are measured: PDFium writes a space wherever
    the printed words stand apart, so a gap between cells is always at one.
    """
    left, right = ctypes.c_double(), ctypes.c_double()
    bottom, top = ctypes.c_double(), ctypes.c_double()

    def box(k: int) -> tuple[float, float]:
        raw.FPDFText_GetCharBox(tp, k, ctypes.byref(left), ctypes.byref(right),
                                ctypes.byref(bottom), ctypes.byref(top))
        return left.value, right.value

    cuts: list[tuple[int, int, float, float]] = []  # (end of a cell, start of the next, edges)
    for m in re.finditer(r"\s+", text[s:e]):
        a, b = s + m.start() - 1, s + m.end()
        before, after = box(a)[1], box(b)[0]
        if after - before > _CELL_GAP * max(raw.FPDFText_GetFontSize(tp, b), 1.0):
            cuts.append((a + 1, b, before, after))
    if not cuts:
        return []
    out: list[tuple[float, float, str]] = []
    start, start_x = s, box(s)[0]
    for end, nxt, before, after in cuts:
        out.append((start_x, before, text[start:end]))
        start, start_x = nxt, after
    out.append((start_x, box(e - 1)[1], text[start:e]))
    return [(round(a, 1), round(b, 1), _hyphen(" ".join(t.split()))) for a, b, t in out]


def _hyphen(text: str) -> str:
    """The text with PDFium's line-end hyphen mark printed as the hyphen it stands for."""
    return text[:-1] + "-" if text.endswith(_HYPHEN_MARK) else text


def _page_lines(raw: Any, textpage: Any, number: int, pitch: Pitch | None = None) -> list[Line]:
    """Return the page's lines in PDFium's reading order, a hyphen mark ending its line.

    `pitch` holds what the document's earlier pages measured of its fonts (a new one if None).
    """
    tp = textpage.raw
    count = textpage.count_chars()
    text = textpage.get_text_range(0, count)
    if len(text) != count:  # characters outside the BMP: map index to character one by one
        text = "".join(chr(raw.FPDFText_GetUnicode(tp, i) or 32) for i in range(count))
    x, y = ctypes.c_double(), ctypes.c_double()
    buf, flags = ctypes.create_string_buffer(96), ctypes.c_int()
    pitch = Pitch() if pitch is None else pitch
    pitch.measure(raw, tp, text, buf, flags)
    out: list[Line] = []
    for m in re.finditer(r"[^\r\n\ufffe\x02]+[\ufffe\x02]?", text):
        s, e = m.start(), m.end()
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s == e:
            continue
        raw.FPDFText_GetCharOrigin(tp, s, ctypes.byref(x), ctypes.byref(y))
        probes = sorted({s, (s + e) // 2, e - 1})
        sizes = [raw.FPDFText_GetFontSize(tp, i) for i in probes if not text[i].isspace()]
        out.append(Line(
            text=_hyphen(" ".join(text[s:e].split())), page=number, x=x.value, y=y.value,
            size=round(statistics.median(sizes) if sizes else 0.0, 1),
            bold=all(_is_bold(raw, tp, i, buf, flags) for i in probes if not text[i].isspace()),
            mono=all(pitch.is_mono(raw, tp, i, buf, flags)
                     for i in probes if not text[i].isspace()),
            cells=_cells(raw, tp, text, s, e)))
    return out


def read_lines(path: Path) -> tuple[list[list[Line]], list[tuple[int, str, int]], str | None,
                                    dict[int, str]]:
    """Return the lines of each page, the outline as (level, title, page), the title and labels.

    The labels are the PDF's own page labels (/PageLabels) as {1-based page: label}, for the
    pages that have one; empty when the PDF defines none.
    """
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        doc = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if exc.err_code == raw.FPDF_ERR_PASSWORD:
            raise PdfError("encrypted PDF (needs a password)") from exc
        reason = str(exc).rstrip(".")
        raise PdfError(f"unreadable PDF ({reason})") from exc
    try:
        pages: list[list[Line]] = []
        labels: dict[int, str] = {}
        pitch = Pitch()
        for index in range(len(doc)):
            label = doc.get_page_label(index).strip()
            if label:
                labels[index + 1] = label
            page = doc[index]
            textpage = page.get_textpage()
            try:
                pages.append(_page_lines(raw, textpage, index + 1, pitch))
            finally:
                textpage.close()
                page.close()
        outline: list[tuple[int, str, int]] = []
        try:
            for item in doc.get_toc():
                dest = item.get_dest()
                at = dest.get_index() if dest is not None else None
                if at is not None and item.get_title().strip():
                    outline.append((item.level + 1, item.get_title().strip(), at + 1))
        except pdfium.PdfiumError:
            outline = []  # a broken outline costs the bookmarks, not the book
        title = (doc.get_metadata_value("Title") or "").strip() or None
        if title and title.lower() in _PLACEHOLDER_TITLES:
            title = None
    except pdfium.PdfiumError as exc:
        raise PdfError(f"unreadable PDF ({str(exc).rstrip('.')})") from exc
    finally:
        doc.close()
    return pages, outline, title, labels
