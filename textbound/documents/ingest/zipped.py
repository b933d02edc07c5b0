"""Reading inside a ZIP archive (EPUB, Word), within limits a ZIP bomb cannot get past."""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from xml.etree import ElementTree

from textbound.documents.ingest import documents
from textbound.documents.ingest.documents import SkipFile

__all__ = ["MAX_ENTRIES", "Inflated", "local", "opened"]

MAX_ENTRIES = 5_000
"""Files an archive may hold; a book has a few hundred."""
T = TypeVar("T")


class Inflated:
    """Bytes left to inflate from one archive; reading past them refuses the file.

    Counted as the data inflates, whatever sizes the archive declares; at most
    MAX_FILE_BYTES (documents.py) in all. Only what is read counts: images are never read.
    """

    def __init__(self, archive: zipfile.ZipFile, what: str) -> None:
        self.archive, self.what = archive, what
        self.left = documents.MAX_FILE_BYTES

    def read(self, name: str) -> bytes:
        """The member's bytes; KeyError when the archive has no such member."""
        with self.archive.open(name) as f:
            data = f.read(self.left + 1)
        if len(data) > self.left:
            raise SkipFile(f"{self.what} too large unpacked (its text is over "
                           f"{documents.MAX_FILE_BYTES:,} bytes)")
        self.left -= len(data)
        return data

    def xml(self, name: str) -> ElementTree.Element:
        """The member parsed as XML; SkipFile when it is missing or broken."""
        try:
            return ElementTree.fromstring(self.read(name))
        except (KeyError, ElementTree.ParseError) as exc:
            raise SkipFile(f"not a readable {self.what} ({name} is missing or broken)") from exc


    def title(self, name: str) -> str | None:
        """The document's Title property, from its metadata member (None when it has none)."""
        try:
            root = self.xml(name)
        except SkipFile:
            return None
        return next(((el.text or "").strip() for el in root.iter()
                     if local(el.tag) == "title" and (el.text or "").strip()), None)


def local(tag: str) -> str:
    """An XML tag without its namespace."""
    return tag.rsplit("}", 1)[-1]


def opened(path: Path, what: str, read: Callable[[Inflated], T]) -> T:
    """Run `read` on the archive at `path`; a broken or oversized archive raises SkipFile."""
    try:
        with zipfile.ZipFile(path) as archive:
            if len(archive.infolist()) > MAX_ENTRIES:
                raise SkipFile(f"{what} holds more than {MAX_ENTRIES:,} files")
            return read(Inflated(archive, what))
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise SkipFile(f"not a readable {what} (a broken archive: {exc})") from exc
