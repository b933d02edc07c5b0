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
- **Contents and index pages** (most of a page's lines end in a page number, or read "term, 24,
  231") go under a heading of their own, "Contents" or "Index": kept for a reader, never quoted
  and never retrieved as evidence.
- **Bookmarks** match their printed headings with or without the section number.
- **Code and output**: a run of lines set in a fixed-pitch font is a fenced block, line by line.
- **Hyphenation**: a word broken at a line end with a hyphen is joined ("accord-" + "ing"), unless
  the document spells it with the hyphen elsewhere and never without, the break is inside a
  compound already ("sim-to-" + "real"), or a part is not a lower-case word ("ROS-" + "2").

The text is Markdown (headings as `#` lines, paragraphs apart by a blank line), so chunking and
the reader page treat it as any other document; `pages` gives where each page's text starts.
PDFium is not thread-safe, so one lock serialises every use of it in this process.

Modules: `_lines` reads the lines with PDFium, `_layout` drops page furniture and marks headings,
`_paragraphs` joins paragraphs, mends hyphenation and writes the Markdown.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from textbound.documents.pdf._layout import (
    drop_furniture,
    mark_by_type,
    mark_listings,
    mark_outline,
)
from textbound.documents.pdf._lines import LOCK, PdfError, read_lines
from textbound.documents.pdf._paragraphs import compose, line_spacing, paragraph_blocks, vocabulary

__all__ = ["PdfError", "PdfText", "read_pdf"]


@dataclass
class PdfText:
    """A PDF's text as Markdown, where each page's text starts, and its title if it has one."""

    text: str
    page_starts: list[tuple[int, int]]
    """(1-based page, offset of its first character in `text`), in order."""
    title: str | None = None


def read_pdf(path: Path) -> PdfText:
    """Read a PDF's text as Markdown with its pages; raise PdfError when it cannot be read."""
    with LOCK:
        pages, outline, title = read_lines(path)
    sizes: Counter[float] = Counter()
    for lines in pages:
        for ln in lines:
            sizes[ln.size] += len(ln.text)
    if not sizes:
        raise PdfError("PDF has no extractable text (scanned images need OCR first)")
    body = sizes.most_common(1)[0][0]
    pages = drop_furniture(pages, body, line_spacing(pages, body))
    if not (outline and mark_outline(pages, outline)):
        mark_by_type(pages, body)
    mark_listings(pages)
    text, starts = compose(paragraph_blocks(pages, body), vocabulary(pages))
    if not text.strip():
        raise PdfError("PDF has no extractable text (scanned images need OCR first)")
    return PdfText(text=text + "\n", page_starts=starts, title=title)
