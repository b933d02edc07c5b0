"""A Word document (.docx) read as the blocks it shows: headings, paragraphs, lists, tables, code.

A .docx is a ZIP archive whose `word/document.xml` holds the body in order. What a reader of the
page sees, as Markdown:

* a paragraph whose style is a heading ("Heading 1" .. "Heading 6", in any language Word
  names it: the style's outline level says so too) is a heading; "Title" is the document's
  title (and a level-1 heading);
* a paragraph in a list (numbered or bulleted) is a list item, `- item`;
* a table is a Markdown table, its first row the header cells, so each row is read with them;
* paragraphs set in a code style ("Code", "Source Code", "HTML Preformatted", "Plain Text") or
  wholly in a fixed-pitch font (Courier New, Consolas ...) are a code block, line by line;
* text boxes, comments, headers and footers are not the body and are left out, and so is a
  table of contents; text in other content controls is read where it stands.

The document's title is its Title property (`docProps/core.xml`), else its Title paragraph,
else the file name. The archive is read within the limits of `zipped.Inflated`.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

from textbound.documents.ingest.blocks import Blocks, escaped, table
from textbound.documents.ingest.documents import SkipFile
from textbound.documents.ingest.zipped import Inflated, local, opened

__all__ = ["read_docx"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_CODE_STYLE = re.compile(r"code|source|preformatted|verbatim|plain ?text|listing", re.I)
_MONO_FONTS = re.compile(r"courier|consol|mono|menlo|lucida console|source code|fira code", re.I)
_HEADING = re.compile(r"^heading ?([1-6])$", re.I)


def read_docx(path: Path) -> tuple[str, str | None]:
    """Return the document's text as Markdown and its title; raise SkipFile saying why not."""
    return opened(path, "Word document", _read)


def _styles(doc: Inflated) -> dict[str, tuple[str, int | None]]:
    """{style id: (its name, its heading level or None)} from word/styles.xml."""
    try:
        root = doc.xml("word/styles.xml")
    except SkipFile:
        return {}
    out: dict[str, tuple[str, int | None]] = {}
    for style in root.iter(f"{_W}style"):
        sid = style.get(f"{_W}styleId") or ""
        name_el = style.find(f"{_W}name")
        name = (name_el.get(f"{_W}val") if name_el is not None else None) or sid
        outline = style.find(f"{_W}pPr/{_W}outlineLvl")
        m = _HEADING.match(name)
        level = int(m.group(1)) if m else (
            int(outline.get(f"{_W}val") or 9) + 1 if outline is not None else None)
        out[sid] = (name, level if level is not None and level <= 6 else None)
    return out


def _text(el: ElementTree.Element) -> str:
    """A paragraph's (or cell's) text: its runs in order, tabs and breaks as spaces.

    A text box anchored in the paragraph (`w:txbxContent`, written twice when Word keeps a
    fallback drawing) is not its text; deleted text (`w:delText`) and field codes are not text.
    """
    parts: list[str] = []
    todo = [el]
    while todo:
        node = todo.pop()
        tag = local(node.tag)
        if tag == "txbxContent":
            continue
        if tag == "t" and node.text:
            parts.append(node.text)
        elif tag in ("tab", "br", "cr"):
            parts.append(" ")
        todo.extend(reversed(list(node)))
    return "".join(parts)


def _blocks(body: ElementTree.Element) -> list[ElementTree.Element]:
    """The body's paragraphs and tables in order, those inside content controls included.

    A table of contents (a content control from the "Table of Contents" gallery) is left out.
    """
    out: list[ElementTree.Element] = []
    for el in body:
        tag = local(el.tag)
        if tag in ("p", "tbl"):
            out.append(el)
        elif tag == "sdt":
            gallery = el.find(f"{_W}sdtPr/{_W}docPartObj/{_W}docPartGallery")
            if gallery is not None and "contents" in (gallery.get(f"{_W}val") or "").lower():
                continue
            content = el.find(f"{_W}sdtContent")
            if content is not None:
                out.extend(_blocks(content))
    return out


def _mono(p: ElementTree.Element) -> bool:
    """Whether every run with text is set in a fixed-pitch font."""
    runs = [r for r in p.iter(f"{_W}r") if any((t.text or "").strip()
                                               for t in r.iter(f"{_W}t"))]
    if not runs:
        return False
    for r in runs:
        fonts = r.find(f"{_W}rPr/{_W}rFonts")
        name = (fonts.get(f"{_W}ascii") or fonts.get(f"{_W}hAnsi") or "") if fonts is not None \
            else ""
        if not _MONO_FONTS.search(name):
            return False
    return True


def _table(tbl: ElementTree.Element) -> str:
    return table([[" ".join(_text(p) for p in tc.iter(f"{_W}p")).strip()
                   for tc in tr.findall(f"{_W}tc")] for tr in tbl.findall(f"{_W}tr")])


def _read(doc: Inflated) -> tuple[str, str | None]:
    styles = _styles(doc)
    body = doc.xml("word/document.xml").find(f"{_W}body")
    if body is None:
        raise SkipFile("not a readable Word document (it has no body)")
    out = Blocks()
    title: str | None = None
    for el in _blocks(body):
        if local(el.tag) == "tbl":
            out.add(_table(el))
            continue
        text = _text(el)
        style_el = el.find(f"{_W}pPr/{_W}pStyle")
        name, level = styles.get(style_el.get(f"{_W}val") or "", ("", None)) \
            if style_el is not None else ("", None)
        if _CODE_STYLE.search(name) or _mono(el):
            out.code(text)
            continue
        text = " ".join(text.split())
        if name.lower() == "title" and text:
            title = title or text
            out.add("# " + text)
        elif level is not None and text:
            out.add("#" * level + " " + text)
        elif (el.find(f"{_W}pPr/{_W}numPr") is not None or name.lower().startswith("list")) \
                and text:
            out.add("- " + text)
        else:
            out.add(escaped(text))
    return out.text("Word document"), doc.title("docProps/core.xml") or title
