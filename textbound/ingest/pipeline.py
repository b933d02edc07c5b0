"""The ingestion run: discover files, chunk them, embed what is new, delete what is stale."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from textbound.ingest.chunking import chunk_document
from textbound.ingest.documents import SUPPORTED_SUFFIXES, Chunk, IngestSummary, SkipFile
from textbound.ingest.loaders import iter_jsonl_documents, load_file
from textbound.store import SentenceVectors, Store
from textbound.units import answer_units

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
            units = [answer_units(c.text) for c in part]
            spans = [[(u.start, u.end) for u in us] for us in units]
            flat = [u.text for us in units for u in us]
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
