"""An OpenDocument text (.odt, LibreOffice's and OpenOffice's) read as the blocks it shows.

An .odt is a ZIP archive whose `content.xml` holds the body in order. As Markdown:

* a heading (`text:h`) keeps its outline level (`## Grading`);
* a list's items (`text:list-item`, nested lists too) are `- item`;
* a table is a Markdown table, its first row the header cells;
* paragraphs in a code style ("Preformatted Text", "Source Text", any style named for code) are
  a code block, line by line;
* the table of contents, the alphabetical index and other generated indexes, frames' and
  notes' text are left out (an index lists where things are; a note is not the sentence).

The title is the document's Title property (`meta.xml`), else its Title paragraph, else the
file name. The archive is read within the limits of `zipped.Inflated`.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

from textbound.documents.ingest.blocks import Blocks, escaped, table
from textbound.documents.ingest.documents import SkipFile
from textbound.documents.ingest.zipped import Inflated, local, opened

__all__ = ["read_odt"]

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_CODE_STYLE = re.compile(r"code|source|preformatted|verbatim|listing", re.I)
_SKIP = frozenset({"table-of-content", "alphabetical-index", "illustration-index",
                   "table-index", "object-index", "user-index", "bibliography", "note",
                   "tracked-changes", "sequence-decls"})
"""Elements whose text is not the body's (generated indexes, footnotes, change records)."""


def read_odt(path: Path) -> tuple[str, str | None]:
    """Return the document's text as Markdown and its title; raise SkipFile saying why not."""
    return opened(path, "OpenDocument text", _read)


def _text(el: ElementTree.Element) -> str:
    """A paragraph's text: spans in order, `text:s` as its spaces, tabs and breaks as spaces."""
    parts: list[str] = [el.text or ""]
    for child in el:
        tag = local(child.tag)
        if tag == "s":
            parts.append(" " * int(child.get(f"{_TEXT}c") or 1))
        elif tag in ("tab", "line-break"):
            parts.append(" ")
        elif tag not in _SKIP and tag != "frame":
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _style_names(content: ElementTree.Element) -> dict[str, str]:
    """{automatic style: the named style it derives from}: "P3" -> "Preformatted_20_Text"."""
    out: dict[str, str] = {}
    for el in content.iter():
        if local(el.tag) == "style":
            name = next((v for k, v in el.attrib.items() if local(k) == "name"), "")
            parent = next((v for k, v in el.attrib.items() if local(k) == "parent-style-name"),
                          "")
            out[name] = parent or name
    return out


def _table(tbl: ElementTree.Element) -> str:
    return table([[" ".join(_text(p) for p in cell.iter() if local(p.tag) in ("p", "h")).strip()
                   for cell in row if local(cell.tag) == "table-cell"]
                  for row in tbl.iter() if local(row.tag) == "table-row"])


def _read(doc: Inflated) -> tuple[str, str | None]:
    content = doc.xml("content.xml")
    body = next((el for el in content.iter() if local(el.tag) == "text"
                 and el.tag.startswith("{urn:oasis:names:tc:opendocument:xmlns:office")), None)
    if body is None:
        raise SkipFile("not a readable OpenDocument text (it has no text body)")
    styles = _style_names(content)
    out = Blocks()
    title: str | None = None

    def walk(parent: ElementTree.Element, item: bool) -> None:
        nonlocal title
        for el in parent:
            tag = local(el.tag)
            if tag in ("list", "list-item", "section", "list-header"):
                walk(el, item or tag == "list-item")
            elif tag == "table":
                out.add(_table(el))
            elif tag in ("p", "h"):
                style = next((v for k, v in el.attrib.items() if local(k) == "style-name"), "")
                named = styles.get(style, style).replace("_20_", " ")
                text = _text(el)
                if tag == "p" and _CODE_STYLE.search(named):
                    out.code(text)
                    continue
                text = " ".join(text.split())
                if tag == "h" and text:
                    level = int(el.get(f"{_TEXT}outline-level") or 1)
                    out.add("#" * min(max(level, 1), 6) + " " + text)
                elif named.lower() == "title" and text:
                    title = title or text
                    out.add("# " + text)
                else:
                    out.add("- " + text if item and text else escaped(text))

    walk(body, False)
    return out.text("OpenDocument text"), doc.title("meta.xml") or title
