"""An EPUB book read in its reading order, each chapter as an HTML page is read.

An EPUB is a ZIP archive: `META-INF/container.xml` names the package document (`.opf`), whose
manifest lists the book's files and whose spine gives the order a reader turns the pages in.
Each XHTML document of the spine goes through the HTML reader (`html.html_to_markdown`:
headings, tables with their header cells, definition lists, code), and the chapters are joined
into one document under the book's title (`dc:title`). What a reader does not see is not text:
the navigation document, images, style sheets, fonts.

A book that cannot be read says why: not a ZIP archive, no package document, a spine with no
text, or content encrypted by DRM (`META-INF/encryption.xml` naming a chapter, not only fonts).
Only the container, the package document and the spine's pages are unpacked, within the
limits of `zipped.Inflated`: a ZIP bomb is refused, not unpacked; images and fonts are never
read.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote

from textbound.documents.ingest.documents import SkipFile
from textbound.documents.ingest.html import html_to_markdown
from textbound.documents.ingest.zipped import Inflated, local, opened

__all__ = ["read_epub"]

_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})


def read_epub(path: Path) -> tuple[str, str | None]:
    """Return the book's text as Markdown and its title; raise SkipFile saying why not."""
    return opened(path, "EPUB", _read)


def _read(book: Inflated) -> tuple[str, str | None]:
    container = book.xml("META-INF/container.xml")
    rootfile = next((el.get("full-path") for el in container.iter()
                     if local(el.tag) == "rootfile" and el.get("full-path")), None)
    if rootfile is None:
        raise SkipFile("not a readable EPUB (its container names no package document)")
    package = book.xml(rootfile)
    base = posixpath.dirname(rootfile)
    manifest = {el.get("id"): el for el in package.iter() if local(el.tag) == "item"}
    title = next(((el.text or "").strip() for el in package.iter()
                  if local(el.tag) == "title" and (el.text or "").strip()), None)
    encrypted = _encrypted(book)
    pages: list[str] = []
    for ref in (el for el in package.iter() if local(el.tag) == "itemref"):
        item = manifest.get(ref.get("idref"))
        if item is None or item.get("media-type") not in _HTML_TYPES \
                or "nav" in (item.get("properties") or "").split():
            continue
        name = posixpath.normpath(posixpath.join(base, unquote(item.get("href") or "")))
        if name in encrypted:
            raise SkipFile("encrypted EPUB (DRM): its chapters cannot be read")
        try:
            html = book.read(name).decode("utf-8", errors="replace")
            md = html_to_markdown(html)[0].strip()
        except KeyError:
            continue  # a spine entry the archive lacks: the rest of the book still reads
        except SkipFile as exc:
            if "too large" in str(exc):
                raise
            continue  # a page that only redirects to another
        if md:
            pages.append(md)
    if not pages:
        raise SkipFile("EPUB has no text in its reading order")
    return "\n\n".join(pages) + "\n", title


def _encrypted(book: Inflated) -> set[str]:
    """The archive's files that META-INF/encryption.xml lists, fonts aside (DRM)."""
    if "META-INF/encryption.xml" not in book.archive.namelist():
        return set()
    root = book.xml("META-INF/encryption.xml")
    return {posixpath.normpath(unquote(el.get("URI") or "")) for el in root.iter()
            if local(el.tag) == "CipherReference" and not re.search(
                r"\.(?:otf|ttf|woff2?)$", el.get("URI") or "", re.I)}
