"""Find the documents a collection was built from, and their text, for the reader page.

Citations carry a `source` and character offsets into the text that ingestion chunked. The page
can only highlight the cited passage if it renders that very text, so a chapter's text is loaded
with `textbound.documents.ingest.load_file` (the loader ingestion used) from the path stored in the
chunk metadata, and the file's hash is compared with the one recorded at ingestion: a file edited
since
then is still shown, but flagged as stale because its offsets may have moved.

Only sources present in the collection (or, with no store, the Markdown files of the corpus
folder) are served; a request never names a file path.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from textbound.documents.ingest import SUPPORTED_SUFFIXES, SkipFile, load_file
from textbound.documents.profile import is_contents_heading

__all__ = ["ChapterText", "DocumentEntry", "Library", "UnavailableText", "mostly_links"]

_HTML_SUFFIXES = (".html", ".htm", ".xhtml")


class _LinkText(HTMLParser):
    """Count a page's visible characters, and those inside links."""

    _SKIP = frozenset({"script", "style", "head", "template", "noscript"})

    def __init__(self) -> None:
        super().__init__()
        self.total = self.linked = self.links = 0
        self._in_link = self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._in_link += 1
            self.links += 1
        elif tag in self._SKIP:
            self._skipping += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._in_link = max(0, self._in_link - 1)
        elif tag in self._SKIP:
            self._skipping = max(0, self._skipping - 1)

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        size = len("".join(data.split()))
        self.total += size
        if self._in_link:
            self.linked += size


def mostly_links(html: str, *, share: float = 0.6, least: int = 3) -> bool:
    """Whether an HTML page is a list of links (a book's contents page) rather than text.

    At least `least` links, holding at least `share` of the page's visible characters.
    """
    counter = _LinkText()
    counter.feed(html)
    counter.close()
    return (counter.links >= least and counter.total > 0
            and counter.linked >= share * counter.total)


def _is_contents_page(path: str | None) -> bool:
    if not path or not path.lower().endswith(_HTML_SUFFIXES):
        return False
    try:
        return mostly_links(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


class UnavailableText(Exception):
    """A known document whose text cannot be shown; the message says why."""


@dataclass
class DocumentEntry:
    """One document of the collection, as the table of contents lists it."""

    source: str
    title: str
    path: str | None = None
    kind: str | None = None
    file_hash: str | None = None
    sections: dict[str, int] = field(default_factory=dict)  # top-level section -> first offset
    contents: bool = False
    """The book's own table of contents (an HTML page of links): readable, not a chapter."""

    def summary(self) -> dict[str, Any]:
        """Return the JSON the table of contents endpoint sends, in the document's order."""
        return {
            "source": self.source,
            "title": self.title,
            "sections": [t for t, _ in sorted(self.sections.items(), key=lambda kv: kv[1])
                         if not is_contents_heading(t)],
            "readable": self.path is not None,
            "contents": self.contents,
        }


@dataclass(frozen=True)
class ChapterText:
    """A document's text exactly as ingestion chunked it."""

    source: str
    title: str
    kind: str
    text: str
    stale: bool
    pages: tuple[tuple[int, int, str | None], ...] = ()
    """(page, offset where it starts in `text`, the page number the book prints there or None)
    for a PDF, so the page can mark page breaks with the printed number."""

    def as_json(self) -> dict[str, Any]:
        """Return the JSON the chapter endpoint sends."""
        return {"source": self.source, "title": self.title, "kind": self.kind,
                "text": self.text, "stale": self.stale,
                "pages": [list(p) for p in self.pages]}


def _file_hash(path: Path) -> str:
    # the same digest ingestion records in each chunk's `file_hash`
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


class Library:
    """The readable documents: from the collection's chunk metadata, else the corpus folder."""

    def __init__(self, store: Any, corpus_dir: Path | None) -> None:
        self.store = store
        self.corpus_dir = corpus_dir
        self._lock = threading.Lock()
        self._entries: dict[str, DocumentEntry] | None = None
        self._count: int | None = None

    # --- the table of contents ---------------------------------------------------------------
    def entries(self) -> dict[str, DocumentEntry]:
        """Return the documents by source, rebuilt whenever the collection's size changes."""
        with self._lock:
            count = self._chunk_count()
            if self._entries is None or count != self._count:
                self._entries = self._from_store() if self._has_store() else self._from_corpus()
                for entry in self._entries.values():
                    entry.contents = _is_contents_page(entry.path)
                self._count = count
            return self._entries

    def table_of_contents(self) -> list[dict[str, Any]]:
        """Return every document's source, title and top-level sections, sorted by source.

        The book's order is `textbound.documents.profile.book_order`'s to give: it needs the
        profile.
        """
        return [e.summary() for e in sorted(self.entries().values(), key=lambda e: e.source)]

    def _has_store(self) -> bool:
        return self.store is not None and hasattr(self.store, "scroll")

    def _chunk_count(self) -> int | None:
        if not self._has_store():
            return None
        return int(self.store.count()) if hasattr(self.store, "count") else None

    def _from_store(self) -> dict[str, DocumentEntry]:
        if hasattr(self.store, "exists") and not self.store.exists():
            return {}
        docs: dict[str, DocumentEntry] = {}
        fields = ("source", "title", "path", "kind", "file_hash", "heading_path", "start")
        for _, meta in self.store.scroll(fields):
            source = str(meta.get("source", ""))
            if not source:
                continue
            entry = docs.get(source)
            if entry is None:
                entry = docs[source] = DocumentEntry(
                    source=source, title=str(meta.get("title") or source),
                    path=meta.get("path"), kind=meta.get("kind"),
                    file_hash=meta.get("file_hash"))
            heading = meta.get("heading_path") or []
            if len(heading) > 1:
                start = int(meta.get("start") or 0)
                entry.sections[heading[1]] = min(entry.sections.get(heading[1], start), start)
        return docs

    def _from_corpus(self) -> dict[str, DocumentEntry]:
        docs: dict[str, DocumentEntry] = {}
        root = self.corpus_dir
        if root is None or not root.is_dir():
            return docs
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if (not path.is_file() or path.suffix.lower() not in SUPPORTED_SUFFIXES
                    or any(part.startswith(".") for part in rel.parts)):
                continue
            # the source name `textbound ingest` gives a file found under a folder it was given
            source = f"{root.name}/{rel.as_posix()}"
            try:
                doc = load_file(path, source)
            except (SkipFile, OSError):
                continue
            docs[source] = DocumentEntry(source=source, title=doc.title, path=str(path),
                                         kind=doc.kind)
        return docs

    # --- one chapter -------------------------------------------------------------------------
    def chapter(self, source: str) -> ChapterText:
        """Return a document's text, or raise KeyError (unknown) or UnavailableText."""
        entry = self.entries()[source]
        if not entry.path:
            raise UnavailableText(
                f"{source!r} was ingested from a JSONL corpus, not a file, so its full text is "
                "not kept; its passages still appear in answers.")
        path = Path(entry.path)
        try:
            doc = load_file(path, source)
            stale = entry.file_hash is not None and _file_hash(path) != entry.file_hash
        except FileNotFoundError as exc:
            raise UnavailableText(
                f"{source!r} was ingested from {path}, which no longer exists. Re-run "
                "`textbound ingest` on the documents you want to read.") from exc
        except (SkipFile, OSError) as exc:
            raise UnavailableText(f"{source!r} cannot be read from {path}: {exc}") from exc
        return ChapterText(source=source, title=entry.title or doc.title, kind=doc.kind,
                           text=doc.text, stale=stale,
                           pages=tuple((page, start, doc.page_labels.get(page))
                                       for page, start, _ in doc.pages))
