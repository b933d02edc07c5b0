"""An EPUB book read in its reading order, each chapter as an HTML page is read.

An EPUB is a ZIP archive: `META-INF/container.xml` names the package document (`.opf`), whose
manifest lists the book's files and whose spine gives the order a reader turns the pages in.
Each XHTML document of the spine goes through the HTML reader (`html.html_to_markdown`:
headings, tables with their header cells, definition lists, code), and the chapters are joined
into one document under the book's title (`dc:title`). What a reader does not see is not text:
the navigation document, images, style sheets, fonts.

A book that cannot be read says why: not a ZIP archive, no package document, a spine with no
text, or content encrypted by DRM (`META-INF/encryption.xml` naming a chapter, not only fonts).
Only the container, the package document and the spine's pages are unpacked, and at most
MAX_FILE_BYTES of them in all (counted as they are inflated, whatever sizes the archive
declares), from an archive of at most MAX_ENTRIES files: a ZIP bomb is refused, not unpacked;
images and fonts are never read.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
import zlib
from pathlib import Path
from urllib.parse import unquote
from xml.etree import ElementTree

from textbound.documents.ingest.documents import MAX_FILE_BYTES, SkipFile
from textbound.documents.ingest.html import html_to_markdown

__all__ = ["MAX_ENTRIES", "read_epub"]

MAX_ENTRIES = 5_000
"""Files an archive may hold; a book has a few hundred."""
_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class _Budget:
    """Bytes left to inflate; reading past it refuses the book."""

    def __init__(self) -> None:
        self.left = MAX_FILE_BYTES

    def read(self, archive: zipfile.ZipFile, name: str) -> bytes:
        with archive.open(name) as f:
            data = f.read(self.left + 1)
        if len(data) > self.left:
            raise SkipFile(f"EPUB too large unpacked (its text is over {MAX_FILE_BYTES:,} "
                           "bytes)")
        self.left -= len(data)
        return data


def _xml(archive: zipfile.ZipFile, name: str, budget: _Budget) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(budget.read(archive, name))
    except (KeyError, ElementTree.ParseError) as exc:
        raise SkipFile(f"not a readable EPUB ({name} is missing or broken)") from exc


def read_epub(path: Path) -> tuple[str, str | None]:
    """Return the book's text as Markdown and its title; raise SkipFile saying why not."""
    try:
        return _read(path)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise SkipFile(f"not a readable EPUB (a broken archive: {exc})") from exc


def _read(path: Path) -> tuple[str, str | None]:
    with zipfile.ZipFile(path) as archive:
        if len(archive.infolist()) > MAX_ENTRIES:
            raise SkipFile(f"EPUB holds more than {MAX_ENTRIES:,} files")
        budget = _Budget()
        container = _xml(archive, "META-INF/container.xml", budget)
        rootfile = next((el.get("full-path") for el in container.iter()
                         if _local(el.tag) == "rootfile" and el.get("full-path")), None)
        if rootfile is None:
            raise SkipFile("not a readable EPUB (its container names no package document)")
        package = _xml(archive, rootfile, budget)
        base = posixpath.dirname(rootfile)
        manifest = {el.get("id"): el for el in package.iter() if _local(el.tag) == "item"}
        title = next(((el.text or "").strip() for el in package.iter()
                      if _local(el.tag) == "title" and (el.text or "").strip()), None)
        encrypted = _encrypted(archive, budget)
        pages: list[str] = []
        for ref in (el for el in package.iter() if _local(el.tag) == "itemref"):
            item = manifest.get(ref.get("idref"))
            if item is None or item.get("media-type") not in _HTML_TYPES \
                    or "nav" in (item.get("properties") or "").split():
                continue
            name = posixpath.normpath(posixpath.join(base, unquote(item.get("href") or "")))
            if name in encrypted:
                raise SkipFile("encrypted EPUB (DRM): its chapters cannot be read")
            try:
                html = budget.read(archive, name).decode("utf-8", errors="replace")
            except KeyError:
                continue  # a spine entry the archive lacks: the rest of the book still reads
            try:
                md = html_to_markdown(html)[0].strip()
            except SkipFile:
                continue  # a page that only redirects to another
            if md:
                pages.append(md)
    if not pages:
        raise SkipFile("EPUB has no text in its reading order")
    return "\n\n".join(pages) + "\n", title


def _encrypted(archive: zipfile.ZipFile, budget: _Budget) -> set[str]:
    """The archive's files that META-INF/encryption.xml lists, fonts aside (DRM)."""
    if "META-INF/encryption.xml" not in archive.namelist():
        return set()
    root = _xml(archive, "META-INF/encryption.xml", budget)
    return {posixpath.normpath(unquote(el.get("URI") or "")) for el in root.iter()
            if _local(el.tag) == "CipherReference" and not re.search(
                r"\.(?:otf|ttf|woff2?)$", el.get("URI") or "", re.I)}
