"""Read a PDF the way a teacher's book is laid out: pages, headings, paragraphs, no furniture.

PDFium (through pypdfium2) gives every line of text with its page, baseline, left edge, font size
and weight. From those:

- **Running headers, footers and page numbers go.** A line among the two top-most or bottom-most
  of its page is dropped when it is a bare page number ("12", "Page 3 of 9", "xiv") or when the
  same words (digits ignored) stand at about the same height on another page, and it is set no
  larger than the body text; so is one with the shape of two other pages' running headers at
  its height (the same first and last word, digits ignored: "Chapter 1: Scope 1" among
  "Chapter 2: Sensors 2", "Chapter 2: Sensors 3"), a header that names a one-page chapter.
- **Headings** come from the outline (bookmarks) when most of its entries are found printed on
  their pages; otherwise from type: a short line set at least a point larger than the body text
  (levels by size, largest first), or a short body-size line set wholly in bold (the lowest level).
- **Printed page labels**: the page number the book prints on each page, for citations (the
  file's page index stays the page the reader opens). The PDF's own page labels (/PageLabels)
  when it has them; else the printed numbers the furniture pass dropped: a bare page number, or
  the number a running header or footer starts or ends with ("12 CHAPTER 1", "CONTENTS 3").
  These are fitted to runs of pages at one offset (printed = index - k; roman numerals, such as
  front matter, are runs of their own); a run needs two pages, so one misread number is
  overruled, and a page whose number is missing or misread gets what its run implies. Pages
  before the first run count back, pages after the last count on, pages between two runs take
  what the runs agree on (an unnumbered plate between runs at different offsets gets none).
  Unless more than half of the pages that print a number sit in runs, no page gets a label
  (citations then name the index).
- **Footnotes** leave the text they interrupt: the lines below a page's lowest body-size line,
  all set smaller than the body text, whose first starts with a marker (a number, superscript or
  not, *, †, ‡, §, ¶). The paragraph the page break interrupts goes on as
  if they were not there; each footnote (a line with a marker starts one) is a paragraph of its own
  right after the paragraph that was open at its page's foot, still on its own page (the text
  goes back to that page for the footnote, so `page_starts` may name a page twice).
- **Paragraphs**: lines join until a gap wider than the line spacing, an indented first line, a
  list bullet or a heading; across a page or column break the paragraph goes on when its sentence
  does. A term set beside its description ("< word", a wide gap, "Open file word ...") keeps
  the description's later lines, indented under its first word, in its paragraph. A bulleted
  paragraph is written as a Markdown list item ("- ..."), so it reads as one.
- **Contents and index pages** (most of a page's lines end in a page number, or read "term, 24,
  231") go under a heading of their own, "Contents" or "Index": kept for a reader, never quoted
  and never retrieved as evidence; a bookmarked title the page prints above its list
  ("Function and Data Index") stays the heading that one goes under.
- **Bookmarks** match their printed headings with or without the section number, and without
  the word a book prints before it ("Appendix A Copying Information" for "A Copying
  Information").
- **Definitions**: a line whose category stands flush right (Texinfo's "int f (const char *
  file) [Function]") heads the paragraphs that describe it, one level below the heading above
  it, written as code ("### `int f (const char * file)`"), the subheading naming it just above
  it taken into it; an answer quoting its "Returns: ..." is led by it
  (textbound/answer/named_section.py).
- **Code and output**: a run of lines set in a fixed-pitch font is a fenced block, line by line.
- **Tables**: lines whose words stand in columns apart by gaps wider than the font size, three
  or more with their last column at one edge, are a Markdown table whose first line is the
  header (`_tables`): a row is read with its header cells, as an HTML table's is.
- **Hyphenation**: a word broken at a line end with a hyphen is joined ("accord-" + "ing"), unless
  the document spells it with the hyphen elsewhere and never without, the break is inside a
  compound already ("sim-to-" + "real"), or a part is not a lower-case word ("ROS-" + "2");
  a break after a digit keeps its hyphen ("32-" + "bit" is "32-bit", "1-" + "Jan-1970"); a
  table cell wrapped over lines is mended the same way.

The text is Markdown (headings as `#` lines, paragraphs apart by a blank line), so chunking and
the reader page treat it as any other document; `page_starts` gives where each page's text
starts and `page_labels` the number printed on it.
PDFium is not thread-safe, so one lock serialises every use of it in this process.

Modules: `_lines` reads the lines (and the PDF's page labels) with PDFium, `_layout` drops page
furniture and marks headings, listings and footnotes, `_labels` fits the printed page numbers,
`_tables` finds tables, `_paragraphs` joins paragraphs, mends hyphenation and writes the
Markdown.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from textbound.documents.pdf._labels import printed_labels
from textbound.documents.pdf._layout import (
    drop_furniture,
    mark_by_type,
    mark_footnotes,
    mark_listings,
    mark_outline,
)
from textbound.documents.pdf._lines import LOCK, PdfError, read_lines
from textbound.documents.pdf._paragraphs import compose, line_spacing, paragraph_blocks, vocabulary
from textbound.documents.pdf._tables import mark_tables

__all__ = ["PdfError", "PdfText", "read_pdf"]


@dataclass
class PdfText:
    """A PDF's text as Markdown, where each page's text starts, and its title if it has one."""

    text: str
    page_starts: list[tuple[int, int]]
    """(1-based page, offset of its first character in `text`), in the text's order."""
    title: str | None = None
    page_labels: dict[int, str] = field(default_factory=dict)
    """{1-based page: the page number the book prints there ("18", "xiv")}; pages without one
    are left out (a citation then names the file's page)."""
    label_source: str = ""
    """Where the labels come from: "pdf" (its /PageLabels), "printed" (the printed page
    numbers), or "" (none)."""


def read_pdf(path: Path) -> PdfText:
    """Read a PDF's text as Markdown with its pages; raise PdfError when it cannot be read."""
    with LOCK:
        pages, outline, title, labels = read_lines(path)
    sizes: Counter[float] = Counter()
    for lines in pages:
        for ln in lines:
            sizes[ln.size] += len(ln.text)
    if not sizes:
        raise PdfError("PDF has no extractable text (scanned images need OCR first)")
    body = sizes.most_common(1)[0][0]
    kept = drop_furniture(pages, body, line_spacing(pages, body))
    source = "pdf" if labels else ""
    if not labels:
        furniture = [[ln for ln in lines if id(ln) not in {id(k) for k in page_kept}]
                     for lines, page_kept in zip(pages, kept, strict=True)]
        labels = printed_labels(furniture)
        source = "printed" if labels else ""
    pages = kept
    outlined = bool(outline and mark_outline(pages, outline))
    if not outlined:
        mark_by_type(pages, body)
    mark_listings(pages, outlined=outlined)
    mark_footnotes(pages, body)
    mark_tables(pages, line_spacing(pages, body))
    text, starts = compose(paragraph_blocks(pages, body, title or path.stem), vocabulary(pages))
    if not text.strip():
        raise PdfError("PDF has no extractable text (scanned images need OCR first)")
    return PdfText(text=text + "\n", page_starts=starts, title=title, page_labels=labels,
                   label_source=source)
