"""Read a PDF the way a teacher's book is laid out: pages, headings, paragraphs, no furniture.

PDFium (through pypdfium2) gives every line of text with its page, baseline, left edge, font size
and weight. From those:

- **Running headers, footers and page numbers go.** A line among the two top-most or bottom-most
  of its page is dropped when it is a bare page number ("12", "Page 3 of 9", "xiv") or when the
  same words (digits ignored) stand at about the same height on another page, and it is set no
  larger than the body text.
- **Headings** come from the outline (bookmarks) when most of its entries are found printed on
  their pages; otherwise from type: a short line set at least a point larger than the body text
  (levels by size, largest first), or a short body-size line set wholly in bold (the lowest level).
- **Paragraphs**: lines join until a gap wider than the line spacing, an indented first line, a
  list bullet or a heading; across a page or column break the paragraph goes on when its sentence
  does.
- **Hyphenation**: a word broken at a line end with a hyphen is joined ("accord-" + "ing"), unless
  the document spells it with the hyphen elsewhere and never without, the break is inside a
  compound already ("sim-to-" + "real"), or a part is not a lower-case word ("ROS-" + "2").

The text is Markdown (headings as `#` lines, paragraphs apart by a blank line), so chunking and
the reader page treat it as any other document; `pages` gives where each page's text starts.
PDFium is not thread-safe, so one lock serialises every use of it in this process.
"""

from __future__ import annotations

import ctypes
import re
import statistics
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PdfError", "PdfText", "read_pdf"]

_LOCK = threading.Lock()
_PLACEHOLDER_TITLES = {"untitled", "(anonymous)", "anonymous", "(untitled)"}
_HYPHEN_MARK = ("\ufffe", "\x02")  # PDFium's mark for a hyphen it saw at a line end
_ROMAN = r"(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_PAGE_NUMBER = re.compile(
    rf"^(?:page\s+)?(?:\d{{1,4}}|{_ROMAN})(?:\s*(?:of|/)\s*\d{{1,4}})?$"
    r"|^[-\u2013\u2014]\s*\d{1,4}\s*[-\u2013\u2014]$", re.I)
_BULLET = re.compile(
    r"^(?:[\u2022\u25e6\u25aa\u2023\u2043\u25cf\u25a0*]|[-\u2013]\s|\(?\d{1,2}[.)]\s)")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_SENTENCE_END = re.compile(r"[.!?:][\"'\u201d\u2019)\]]*$")


class PdfError(Exception):
    """A PDF that cannot be read; the message says why, in words a user can act on."""


@dataclass
class PdfText:
    """A PDF's text as Markdown, where each page's text starts, and its title if it has one."""

    text: str
    page_starts: list[tuple[int, int]]
    """(1-based page, offset of its first character in `text`), in order."""
    title: str | None = None


@dataclass(eq=False)  # lines are compared by identity
class _Line:
    text: str
    page: int
    x: float
    y: float
    size: float
    bold: bool
    heading: int = 0  # level, 0 for body text
    parts: list[_Line] = field(default_factory=list)


# --- reading lines with PDFium ---------------------------------------------------------------

def _is_bold(raw: Any, tp: Any, index: int, buf: Any, flags: Any) -> bool:
    if raw.FPDFText_GetFontWeight(tp, index) >= 600:
        return True
    raw.FPDFText_GetFontInfo(tp, index, buf, len(buf), ctypes.byref(flags))
    name = buf.value.decode("latin-1").split("+")[-1].lower()
    return any(w in name for w in ("bold", "black", "heavy", "semibold"))


def _page_lines(raw: Any, textpage: Any, number: int) -> list[_Line]:
    """Return the page's lines in PDFium's reading order, a hyphen mark ending its line."""
    tp = textpage.raw
    count = textpage.count_chars()
    text = textpage.get_text_range(0, count)
    if len(text) != count:  # characters outside the BMP: map index to character one by one
        text = "".join(chr(raw.FPDFText_GetUnicode(tp, i) or 32) for i in range(count))
    x, y = ctypes.c_double(), ctypes.c_double()
    buf, flags = ctypes.create_string_buffer(96), ctypes.c_int()
    out: list[_Line] = []
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
        line = text[s:e]
        if line.endswith(_HYPHEN_MARK):
            line = line[:-1] + "-"
        out.append(_Line(
            text=" ".join(line.split()), page=number, x=x.value, y=y.value,
            size=round(statistics.median(sizes) if sizes else 0.0, 1),
            bold=all(_is_bold(raw, tp, i, buf, flags) for i in probes if not text[i].isspace())))
    return out


def _read(path: Path) -> tuple[list[list[_Line]], list[tuple[int, str, int]], str | None]:
    """Return the lines of each page, the outline as (level, title, page) and the title."""
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
        pages: list[list[_Line]] = []
        for index in range(len(doc)):
            page = doc[index]
            textpage = page.get_textpage()
            try:
                pages.append(_page_lines(raw, textpage, index + 1))
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
    return pages, outline, title


# --- page furniture --------------------------------------------------------------------------

def _mask(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _edges(lines: list[_Line]) -> list[_Line]:
    """Return the page's two top-most and two bottom-most lines."""
    by_height = sorted(lines, key=lambda ln: -ln.y)
    return by_height[:2] + [ln for ln in by_height[-2:] if ln not in by_height[:2]]


def _drop_furniture(pages: list[list[_Line]], body: float, leading: float
                    ) -> list[list[_Line]]:
    """Drop running headers, footers and page numbers; see the module docstring.

    Only a line set apart from the page's text (a gap above 1.8 line spacings between it and the
    nearest line that is not among the page's edge lines) can be furniture, so the first line
    of a paragraph that happens to recur at the top of another page stays.
    """
    seen: dict[str, list[tuple[int, float]]] = {}
    for lines in pages:
        for ln in _edges(lines):
            seen.setdefault(_mask(ln.text), []).append((ln.page, ln.y))

    def furniture(ln: _Line, inner: list[float]) -> bool:
        if inner and min(abs(ln.y - y) for y in inner) <= 1.8 * leading:
            return False
        if _PAGE_NUMBER.match(ln.text.strip()):
            return True
        if ln.size > body + 0.5:
            return False
        others = {p for p, y in seen.get(_mask(ln.text), []) if p != ln.page and abs(y - ln.y) < 4}
        return bool(others)

    out = []
    for lines in pages:
        edges = _edges(lines)
        inner = [ln.y for ln in lines if ln not in edges]
        drop = {id(ln) for ln in edges if furniture(ln, inner)}
        out.append([ln for ln in lines if id(ln) not in drop])
    return out


# --- headings --------------------------------------------------------------------------------

def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def _mark_outline(pages: list[list[_Line]], outline: list[tuple[int, str, int]]) -> bool:
    """Mark the lines that print the outline's titles; False (nothing marked) if most are not."""
    found: list[tuple[_Line, int, list[_Line]]] = []
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


def _make_heading(first: _Line, level: int, rest: list[_Line]) -> None:
    first.heading = min(level, 6)
    first.parts = rest
    for ln in rest:
        ln.heading = -1  # printed as part of `first`


def _mark_by_type(pages: list[list[_Line]], body: float) -> None:
    """Mark headings by font size and weight; see the module docstring."""

    def looks_like_heading(ln: _Line) -> bool:
        return len(ln.text) <= 150 and not ln.text.endswith((",", ";")) and \
            any(ch.isalpha() for ch in ln.text)

    sizes = sorted({ln.size for lines in pages for ln in lines
                    if ln.size >= body + 1.0 and looks_like_heading(ln)}, reverse=True)
    level_of = {size: min(i + 1, 6) for i, size in enumerate(sizes)}
    bold_level = min(len(sizes) + 1, 6)
    for lines in pages:
        prev: _Line | None = None
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


def _bold_heading(ln: _Line, prev: _Line | None, body: float) -> bool:
    """Whether a body-size line reads as a run-in heading: short, all bold, not a sentence."""
    if not ln.bold or abs(ln.size - body) > 0.5 or len(ln.text) > 80:
        return False
    if _SENTENCE_END.search(ln.text.rstrip("?")):
        return False
    # a bold line that carries on a plain sentence from the line above is emphasis, not a title
    return prev is None or bool(prev.heading) or prev.bold \
        or bool(_SENTENCE_END.search(prev.text)) or prev.y - ln.y >= 2 * body


# --- paragraphs and hyphenation --------------------------------------------------------------

def _vocabulary(pages: list[list[_Line]]) -> Counter[str]:
    """Count the words the document prints whole: not the two halves of a line-end break."""
    words: Counter[str] = Counter()
    broken = False
    for ln in (ln for lines in pages for ln in lines):
        tokens = _WORD.findall(ln.text)
        if broken and tokens and ln.text.startswith(tokens[0]):
            tokens = tokens[1:]
        broken = bool(re.search(r"[^\W\d_]-$", ln.text))
        if broken and tokens:
            tokens = tokens[:-1]
        words.update(t.lower() for t in tokens)
    return words


def _keeps_hyphen(head: str, tail: str, words: Counter[str]) -> bool:
    """Whether a line ending in a hyphen keeps it before the next line; see the module docstring."""
    left = head.rsplit(" ", 1)[-1][:-1]
    right = re.match(r"[^\s.,;:!?)\]\"'\u201d\u2019]*", tail)
    right_word = right.group(0) if right else ""
    a = re.search(r"[^\W\d_]+$", left)
    b = re.match(r"[^\W\d_]+", right_word)
    if not a or not b or a.end() != len(left) or "-" in left or not b.group(0).islower():
        return True
    joined, compound = f"{left}{right_word}".lower(), f"{left}-{right_word}".lower()
    if words[joined]:
        return False
    # a compound of two words the book uses is likelier than a split into two words
    return words[compound] > 0 or (words[left.lower()] > 0 and words[b.group(0)] > 0)


def _leading(pages: list[list[_Line]], body: float) -> float:
    gaps = [a.y - b.y for lines in pages for a, b in zip(lines, lines[1:], strict=False)
            if not a.heading and not b.heading and abs(a.size - body) <= 0.5
            and abs(b.size - body) <= 0.5 and 0.8 * body < a.y - b.y < 2.5 * body]
    return statistics.median(gaps) if gaps else 1.2 * body


def _blocks(pages: list[list[_Line]], body: float) -> list[tuple[int, list[_Line]]]:
    """Group lines into (heading level or 0, lines) blocks in reading order."""
    leading = _leading(pages, body)
    blocks: list[tuple[int, list[_Line]]] = []
    para: list[_Line] = []
    left = 0.0
    for ln in (ln for lines in pages for ln in lines):
        if ln.heading < 0:
            continue
        if ln.heading:
            if para:
                blocks.append((0, para))
                para = []
            blocks.append((ln.heading, [ln, *ln.parts]))
            continue
        prev = para[-1] if para else None
        if prev is None:
            para, left = [ln], ln.x
            continue
        same_column = ln.page == prev.page and 0 < prev.y - ln.y < 3 * max(ln.size, prev.size)
        if same_column:
            new = (prev.y - ln.y > leading * 1.3 + 0.5 or ln.x - left > 0.8 * ln.size
                   or bool(_BULLET.match(ln.text)))
        else:  # a page or column break: the paragraph goes on while its sentence does
            new = bool(_SENTENCE_END.search(prev.text)) and not ln.text[:1].islower() \
                or bool(_BULLET.match(ln.text))
        if new:
            blocks.append((0, para))
            para, left = [ln], ln.x
        else:
            para.append(ln)
            left = min(left, ln.x) if same_column else ln.x
    if para:
        blocks.append((0, para))
    return blocks


def _escape(text: str) -> str:
    """Keep a body paragraph from reading as a Markdown heading or code fence."""
    return "\\" + text if text.startswith(("#", "```", "~~~")) else text


def _compose(blocks: list[tuple[int, list[_Line]]], words: Counter[str]
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
        if out:
            out.append("\n\n")
            pos += 2
        if level:
            emit("#" * level + " " + " ".join(ln.text for ln in lines), lines[0].page)
            continue
        pieces: list[tuple[str, int]] = [(_escape(lines[0].text), lines[0].page)]
        for prev, ln in zip(lines, lines[1:], strict=False):
            if re.search(r"[^\W\d_]-$", prev.text):
                if not _keeps_hyphen(prev.text, ln.text, words):
                    pieces[-1] = (pieces[-1][0][:-1], pieces[-1][1])
                pieces.append((ln.text, ln.page))
            else:
                pieces.append((" " + ln.text, ln.page))
        for piece, page in pieces:
            emit(piece, page)
    return "".join(out), starts


def read_pdf(path: Path) -> PdfText:
    """Read a PDF's text as Markdown with its pages; raise PdfError when it cannot be read."""
    with _LOCK:
        pages, outline, title = _read(path)
    sizes: Counter[float] = Counter()
    for lines in pages:
        for ln in lines:
            sizes[ln.size] += len(ln.text)
    if not sizes:
        raise PdfError("PDF has no extractable text (scanned images need OCR first)")
    body = sizes.most_common(1)[0][0]
    pages = _drop_furniture(pages, body, _leading(pages, body))
    if not (outline and _mark_outline(pages, outline)):
        _mark_by_type(pages, body)
    text, starts = _compose(_blocks(pages, body), _vocabulary(pages))
    if not text.strip():
        raise PdfError("PDF has no extractable text (scanned images need OCR first)")
    return PdfText(text=text + "\n", page_starts=starts, title=title)
