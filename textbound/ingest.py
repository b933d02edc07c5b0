"""Ingestion: load Markdown, text, HTML, PDF and benchmark JSONL; chunk by headings; upsert.

PDFs are read by `textbound.pdf` into Markdown (headings from the outline or the type, no running
headers, footers or page numbers, hyphenation joined) with the offset where each page starts; a
chunk records its first page and the pages that start inside it, and `page_at` gives the page of
any offset in it, so a citation names the page of the sentence it quotes.

Re-ingesting is idempotent. Chunk ids are derived from source and content, so a file whose chunks
are all stored already costs no embedding; a changed file gets its new chunks written first and its
stale chunks deleted after, so a run killed at any point leaves every chunk of the last good state
or the new one, and the next run completes the change. `prune` deletes chunks of sources that are
gone, and only those that were ingested from under a path of this run: a collection's other
documents (a teacher's own PDF beside the bundled textbook) are never touched.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from textbound.store import SentenceVectors, Store
from textbound.text import answer_sentence_spans, sentence_spans

__all__ = [
    "Chunk",
    "Document",
    "IngestSummary",
    "chunk_document",
    "ingest",
    "iter_jsonl_documents",
    "load_file",
    "page_at",
    "SUPPORTED_SUFFIXES",
]

SUPPORTED_SUFFIXES = {".md", ".markdown", ".txt", ".text", ".html", ".htm", ".pdf"}
_ID_NAMESPACE = uuid.UUID("6f1c3e0a-4b7e-5d2a-9c1f-7465787462f1")
TARGET_CHARS = 700
MAX_CHARS = 1100
MAX_FILE_BYTES = 50_000_000


class SkipFile(Exception):
    """A file that cannot be ingested; the message says why."""


@dataclass
class Document:
    """One loaded source: its text (Markdown where headings are known) and pages for PDFs."""

    source: str
    title: str
    text: str
    path: str | None = None
    kind: str = "markdown"
    pages: list[tuple[int, int, int]] = field(default_factory=list)
    """(1-based page, start, end) for PDFs: the text of each page, in order, end exclusive."""


@dataclass
class Chunk:
    """A passage to embed, with where it came from."""

    chunk_id: str
    text: str
    metadata: dict[str, Any]

    def embedding_text(self) -> str:
        """Text given to the embedding model: the heading path, then the passage."""
        path = self.metadata.get("heading_path") or []
        heading = " > ".join(path[1:] if len(path) > 1 else path)
        return f"{heading}\n{self.text}" if heading else self.text


@dataclass
class IngestSummary:
    """What an ingestion run did."""

    files_seen: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    chunks_added: int = 0
    chunks_unchanged: int = 0
    chunks_removed: int = 0
    pruned: list[tuple[str, int]] = field(default_factory=list)
    """(source, chunks) removed by `prune` because its file is gone from an ingested path."""
    seconds: float = 0.0
    embed_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        return {
            "files_seen": self.files_seen,
            "files_changed": self.files_changed,
            "files_unchanged": self.files_unchanged,
            "files_skipped": [{"file": f, "reason": r} for f, r in self.skipped],
            "chunks_added": self.chunks_added,
            "chunks_unchanged": self.chunks_unchanged,
            "chunks_removed": self.chunks_removed,
            "sources_pruned": [{"source": s, "chunks": n} for s, n in self.pruned],
            "seconds": round(self.seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
        }


# --- loading ---------------------------------------------------------------------------------

def _read_text(path: Path) -> str:
    size = path.stat().st_size
    if size == 0:
        raise SkipFile("empty file")
    if size > MAX_FILE_BYTES:
        raise SkipFile(f"too large ({size:,} bytes; the limit is {MAX_FILE_BYTES:,})")
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise SkipFile("binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkipFile(f"not valid UTF-8 (byte {exc.start}); re-save it as UTF-8") from exc
    if not text.strip():
        raise SkipFile("no text (only whitespace)")
    return text.replace("\r\n", "\n").replace("\r", "\n")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)


def _hidden(tag: Any) -> bool:
    """Whether an element is not shown: `hidden`, `aria-hidden="true"` or a hiding style."""
    attrs = getattr(tag, "attrs", None) or {}
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).strip().lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(str(attrs.get("style", ""))))


def _html_to_markdown(html: str) -> tuple[str, str | None]:
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(html, "html.parser")
    # a reader never sees comments, scripts, styles or hidden elements, so neither may an answer
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    for tag in soup(["script", "style", "nav", "footer", "noscript", "template"]):
        tag.decompose()
    for tag in soup.find_all(_hidden):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    lines: list[str] = []
    body = soup.body or soup
    for el in body.find_all(["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "td",
                             "blockquote"]):
        if el.find_parent(["p", "li", "pre", "td", "blockquote"]) is not None:
            continue
        text = el.get_text("\n" if el.name == "pre" else " ", strip=el.name != "pre")
        if not text.strip():
            continue
        if el.name and el.name[0] == "h" and el.name[1:].isdigit():
            lines.append("#" * int(el.name[1:]) + " " + " ".join(text.split()))
        elif el.name == "pre":
            lines.append("```\n" + text.strip("\n") + "\n```")
        elif el.name == "li":
            lines.append("- " + " ".join(text.split()))
        else:
            lines.append(" ".join(text.split()))
    return "\n\n".join(lines) + "\n", title


def _load_pdf(path: Path) -> Document:
    from textbound.pdf import PdfError, read_pdf

    try:
        parsed = read_pdf(path)
    except PdfError as exc:
        raise SkipFile(str(exc)) from exc
    ends = [start for _, start in parsed.page_starts[1:]] + [len(parsed.text)]
    pages = [(page, start, end)
             for (page, start), end in zip(parsed.page_starts, ends, strict=True)]
    return Document(source="", title=parsed.title or path.stem, text=parsed.text, kind="pdf",
                    pages=pages)


def load_file(path: Path, source: str) -> Document:
    """Load one file as a Document, or raise SkipFile saying why it cannot be used."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise SkipFile(f"unsupported file type {suffix or '(none)'}")
    if suffix == ".pdf":
        if path.stat().st_size == 0:
            raise SkipFile("empty file")
        doc = _load_pdf(path)
    elif suffix in (".html", ".htm"):
        md, title = _html_to_markdown(_read_text(path))
        if not md.strip():
            raise SkipFile("HTML has no text")
        doc = Document(source="", title=title or path.stem, text=md, kind="html")
    else:
        text = _read_text(path)
        doc = Document(source="", title=path.stem, text=text,
                       kind="markdown" if suffix in (".md", ".markdown") else "text")
        heading = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.M)
        if heading and doc.kind == "markdown":
            doc.title = heading.group(1)
    doc.source = source
    doc.path = str(path.resolve())
    return doc


def iter_jsonl_documents(path: Path) -> Iterator[Document | tuple[str, str]]:
    """Yield Documents from a benchmark corpus (`{doc_id, title, text}` per line).

    A malformed line (invalid JSON, bytes that are not UTF-8, text that is not valid Unicode)
    yields (location, reason) instead, so the caller can report it and go on with the rest.
    """
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            where = f"{path.name}:{number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield where, f"not valid UTF-8 (byte {exc.start}); re-save it as UTF-8"
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield where, f"invalid JSON ({exc.msg})"
                continue
            if not isinstance(row, dict):
                yield where, "not a JSON object"
                continue
            doc_id, text = row.get("doc_id"), row.get("text")
            if not isinstance(doc_id, str) or not doc_id.strip():
                yield where, "missing doc_id"
                continue
            if not isinstance(text, str) or not text.strip():
                yield where, f"{doc_id}: missing or empty text"
                continue
            raw_title = row.get("title")
            title = raw_title if isinstance(raw_title, str) else doc_id
            if any(_LONE_SURROGATE.search(v) for v in (doc_id, title, text)):
                yield where, f"{doc_id!a}: text that is not valid Unicode (a lone surrogate escape)"
                continue
            yield Document(source=doc_id, title=title, text=text, kind="jsonl")


# --- chunking --------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_FENCE = re.compile(r"^(```|~~~)", re.M)


def _sections(doc: Document) -> list[tuple[list[str], int, int]]:
    """Split a document into (heading path, body start, body end), following ATX headings."""
    if doc.kind not in ("markdown", "html", "pdf"):
        return [([doc.title], 0, len(doc.text))]
    fences = [m.start() for m in _FENCE.finditer(doc.text)]

    def in_code(pos: int) -> bool:
        return sum(1 for f in fences if f < pos) % 2 == 1

    headings = [m for m in _HEADING.finditer(doc.text) if not in_code(m.start())]
    out: list[tuple[list[str], int, int]] = []
    path: list[tuple[int, str]] = []
    cursor, current = 0, [doc.title]
    for m in headings:
        if m.start() > cursor:
            out.append((current, cursor, m.start()))
        level, title = len(m.group(1)), m.group(2).strip()
        path = [p for p in path if p[0] < level] + [(level, title)]
        current = [p[1] for p in path]
        if path[0][0] != 1:
            current = [doc.title] + current
        cursor = m.end()
    out.append((current, cursor, len(doc.text)))
    return out


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut text[start:end] into passages of about TARGET_CHARS on paragraph/sentence bounds."""
    blocks: list[tuple[int, int]] = []
    pos = start
    body = text[start:end]
    in_fence = False
    block_start = None
    for line in re.finditer(r"[^\n]*\n?", body):
        if not line.group(0):
            break
        s = start + line.start()
        stripped = line.group(0).strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        if not stripped and not in_fence:
            if block_start is not None:
                blocks.append((block_start, s))
                block_start = None
        elif block_start is None:
            block_start = s
        pos = start + line.end()
    if block_start is not None:
        blocks.append((block_start, pos))
    # split over-long blocks by sentences (or by lines for code)
    units: list[tuple[int, int]] = []
    for b_start, b_end in blocks:
        if b_end - b_start <= MAX_CHARS:
            units.append((b_start, b_end))
            continue
        spans = sentence_spans(text, b_start, b_end) or [(b_start, b_end)]
        for s, e in spans:
            while e - s > MAX_CHARS:  # a "sentence" longer than a chunk: cut at a space
                cut = text.rfind(" ", s, s + MAX_CHARS)
                cut = cut if cut > s else s + MAX_CHARS
                units.append((s, cut))
                s = cut + 1 if text[cut:cut + 1] == " " else cut
            if e > s:
                units.append((s, e))
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for u in units:
        if cur is None:
            cur = u
        elif u[1] - cur[0] <= TARGET_CHARS or (cur[1] - cur[0] < TARGET_CHARS // 3
                                                and u[1] - cur[0] <= MAX_CHARS):
            cur = (cur[0], u[1])
        else:
            out.append(cur)
            cur = u
    if cur is not None:
        out.append(cur)
    return [(s, e) for s, e in out if text[s:e].strip()]


def _page_of(doc: Document, pos: int) -> int | None:
    page = None
    for number, start, _end in doc.pages:
        if start > pos:
            break
        page = number
    return page


def page_at(metadata: dict[str, Any], offset: int | None) -> int | None:
    """Return the page of a source offset inside a chunk, from the chunk's metadata.

    A chunk records the page it starts on (`page`) and, when it runs onto later pages, where
    each of them starts (`page_starts`, [[offset, page], ...]), so a citation can name the page
    of the sentence it quotes rather than the chunk's first page.
    """
    page = metadata.get("page")
    if offset is None:
        return page
    for start, number in metadata.get("page_starts") or ():
        if start <= offset:
            page = number
    return page


def chunk_document(doc: Document, file_hash: str | None = None) -> list[Chunk]:
    """Split a document into chunks with source, heading path, page and character offsets."""
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for path, start, end in _sections(doc):
        for s, e in _pieces(doc.text, start, end):
            # trim surrounding whitespace so offsets point at the passage itself
            raw = doc.text[s:e]
            s += len(raw) - len(raw.lstrip())
            e = s + len(raw.strip())
            text = doc.text[s:e]
            occurrence = seen.get(text, 0)
            seen[text] = occurrence + 1
            chunk_id = str(uuid.uuid5(_ID_NAMESPACE, f"{doc.source}\x1f{occurrence}\x1f{text}"))
            meta: dict[str, Any] = {
                "chunk_id": chunk_id,
                "source": doc.source,
                "title": doc.title,
                "heading_path": path,
                "section": " > ".join(path),
                "start": s,
                "end": e,
                "kind": doc.kind,
            }
            if doc.path:
                meta["path"] = doc.path
            if file_hash:
                meta["file_hash"] = file_hash
            page = _page_of(doc, s) if doc.pages else None
            if page is not None:
                meta["page"] = page
                later = [[start, number] for number, start, _ in doc.pages if s < start < e]
                if later:
                    meta["page_starts"] = later
            chunks.append(Chunk(chunk_id, text, meta))
    return chunks


# --- the pipeline ----------------------------------------------------------------------------

Progress = Callable[[str, int, int], None]
"""Called as progress(stage, done, total)."""


def discover(paths: Iterable[Path], names: Mapping[Path, str] | None = None,
             ) -> Iterator[tuple[Path, str] | tuple[str, str]]:
    """Yield (file, source name) per readable file under paths, or (what, reason) per skip.

    A path is skipped when it is missing or of a type ingestion does not read; hidden files and
    folders are left out.
    """
    for root in paths:
        if not root.exists():
            yield str(root), "no such file or folder"
            continue
        if root.is_file():
            yield root, (names or {}).get(root, root.name)
            continue
        for p in sorted(root.rglob("*")):
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts):
                if p.suffix.lower() in SUPPORTED_SUFFIXES:
                    yield p, f"{root.name}/{p.relative_to(root).as_posix()}"
                elif p.suffix.lower() != ".jsonl":
                    yield str(p), f"unsupported file type {p.suffix or '(none)'}"


def _embed_and_write(store: Store, chunks: list[Chunk], summary: IngestSummary,
                     batch: int, progress: Progress | None, done: list[int], total: int,
                     sentence_vectors: bool) -> None:
    for i in range(0, len(chunks), batch):
        part = chunks[i:i + batch]
        t0 = time.perf_counter()
        vectors = store.embeddings.embed_documents([c.embedding_text() for c in part])
        sentences: list[SentenceVectors | None] | None = None
        if sentence_vectors:
            # the answer sentences too, so answering a question needs no embedding but its own
            spans = [answer_sentence_spans(c.text) for c in part]
            flat = [c.text[s:e] for c, sp in zip(part, spans, strict=True) for s, e in sp]
            vecs = np.asarray(store.embeddings.embed_documents(flat), np.float32) if flat else None
            sentences, at = [], 0
            for sp in spans:
                rows = vecs[at:at + len(sp)] if vecs is not None and sp else None
                sentences.append(SentenceVectors(sp, rows) if rows is not None else None)
                at += len(sp)
        summary.embed_seconds += time.perf_counter() - t0
        store.upsert([c.chunk_id for c in part], vectors, [c.text for c in part],
                     [c.metadata for c in part], sentences)
        summary.chunks_added += len(part)
        done[0] += len(part)
        if progress:
            progress("embed", done[0], total)


def _prune_roots(paths: Iterable[Path], jsonl: Iterable[Path]) -> list[tuple[Path, bool]]:
    """Return (resolved path, is a folder) for each ingested path that exists."""
    out = []
    for p in [*paths, *jsonl]:
        if p.exists():
            out.append((p.resolve(), p.is_dir()))
    return out


def _under(where: str, roots: list[tuple[Path, bool]]) -> bool:
    """Whether a stored file path is one of the roots or inside one of the root folders."""
    path = Path(where)
    return any(path == root or (folder and path.is_relative_to(root)) for root, folder in roots)


def ingest(
    store: Store,
    paths: Iterable[Path] = (),
    *,
    jsonl: Iterable[Path] = (),
    prune: bool = False,
    batch_size: int = 64,
    progress: Progress | None = None,
    sentence_vectors: bool = True,
    names: Mapping[Path, str] | None = None,
) -> IngestSummary:
    """Ingest files, folders and JSONL corpora into the store; see the module docstring.

    A file is stored under its name (a file found in a folder: `folder/relative/path`) unless
    `names` gives the source for that path, which lets a document be ingested again under the
    source it already has, wherever it was first found.

    With `prune`, a stored source that this run did not find is removed only when it was
    ingested from one of `paths` (a file, or a file under a folder) or from one of the `jsonl`
    files; `summary.pruned` names each one removed.

    With `sentence_vectors`, each chunk's answer sentences are embedded too and stored in its
    payload, which about doubles the embedding work here and saves it on every answer.
    """
    t_start = time.perf_counter()
    paths, jsonl = list(paths), list(jsonl)
    summary = IngestSummary()
    docs: list[tuple[str, list[Chunk]]] = []

    for item, source in discover(paths, names):
        summary.files_seen += 1
        if isinstance(item, str):
            summary.skipped.append((item, source))
            continue
        try:
            file_hash = hashlib.sha256(item.read_bytes()).hexdigest()[:16]
            doc = load_file(item, source)
            chunks = chunk_document(doc, file_hash)
            if not chunks:
                raise SkipFile("no text after parsing")
            docs.append((source, chunks))
        except SkipFile as exc:
            summary.skipped.append((str(item), str(exc)))
        except OSError as exc:
            summary.skipped.append((str(item), f"cannot read ({exc.strerror or exc})"))
    for path in jsonl:
        try:
            for entry in iter_jsonl_documents(path):
                if isinstance(entry, tuple):
                    summary.skipped.append(entry)
                    continue
                summary.files_seen += 1
                chunks = chunk_document(entry)
                for c in chunks:  # lets --prune tell this file's documents from others
                    c.metadata["jsonl"] = str(path.resolve())
                docs.append((entry.source, chunks))
        except (OSError, UnicodeDecodeError) as exc:
            summary.skipped.append((str(path), f"cannot read JSONL ({exc})"))

    # a source listed twice (same doc_id in a JSONL) keeps its last version
    by_source: dict[str, list[Chunk]] = {}
    for source, chunks in docs:
        by_source[source] = chunks

    if not by_source and not prune:
        summary.seconds = time.perf_counter() - t_start
        return summary

    dim = getattr(store.embeddings, "dimension", None)
    if dim is None:
        dim = len(store.embeddings.embed_query("dimension probe"))
    store.ensure_collection(dim)
    existing: dict[str, set[str]] = {}
    origin: dict[str, str] = {}
    for chunk_id, meta in store.scroll(("source", "path", "jsonl")):
        source = str(meta.get("source", ""))
        existing.setdefault(source, set()).add(chunk_id)
        where = meta.get("path") or meta.get("jsonl")
        if where:
            origin[source] = str(where)

    to_embed: list[tuple[str, list[Chunk], set[str]]] = []
    total = 0
    for source, chunks in by_source.items():
        have = existing.get(source, set())
        new = [c for c in chunks if c.chunk_id not in have]
        stale = have - {c.chunk_id for c in chunks}
        summary.chunks_unchanged += len(chunks) - len(new)
        if not new and not stale:
            summary.files_unchanged += 1
            continue
        summary.files_changed += 1
        to_embed.append((source, new, stale))
        total += len(new)

    done = [0]
    if progress:
        progress("embed", 0, total)
    for _source, new, stale in to_embed:
        _embed_and_write(store, new, summary, batch_size, progress, done, total,
                         sentence_vectors)
        store.delete(sorted(stale))  # only after the new chunks are safely written
        summary.chunks_removed += len(stale)

    if prune:
        roots = _prune_roots(paths, jsonl)
        gone = [s for s in existing
                if s not in by_source and s in origin and _under(origin[s], roots)]
        for source in gone:
            summary.pruned.append((source, len(existing[source])))
            store.delete(sorted(existing[source]))
            summary.chunks_removed += len(existing[source])
    if summary.chunks_added or summary.chunks_removed:
        store.optimize()  # Edge builds its HNSW index here; a server indexes by itself
    summary.seconds = time.perf_counter() - t_start
    return summary
