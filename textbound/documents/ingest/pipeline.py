"""The ingestion run: discover files, chunk them, embed what is new, delete what is stale."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from textbound.documents.ingest.chunking import chunk_document
from textbound.documents.ingest.documents import SUPPORTED_SUFFIXES, Chunk, IngestSummary, SkipFile
from textbound.documents.ingest.loaders import TOO_SLOW, iter_jsonl_documents, load_file
from textbound.documents.store import SentenceVectors, Store
from textbound.documents.store._types import VERSION_KEY, Hidden
from textbound.text.units import answer_units

if TYPE_CHECKING:
    from textbound.documents.journal import Journal

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


class _TooSlow(Exception):
    """A document's embedding ran past its deadline."""


def _embed_and_write(store: Store, chunks: list[Chunk], summary: IngestSummary,
                     batch: int, progress: Progress | None, done: list[int], total: int,
                     sentence_vectors: bool, deadline: float | None = None) -> None:
    for i in range(0, len(chunks), batch):
        if deadline is not None and time.monotonic() > deadline:
            raise _TooSlow
        part = chunks[i:i + batch]
        t0 = time.perf_counter()
        vectors = store.embeddings.embed_documents([c.embedding_text() for c in part])
        sentences: list[SentenceVectors | None] | None = None
        if sentence_vectors:
            # the answer sentences too, so answering a question needs no embedding but its own
            units = [answer_units(c.text, c.metadata.get("table_header"),
                                  bool(c.metadata.get("in_code"))) for c in part]
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


_UNVERSIONED = ("chunk_id", "path", "file_hash", "jsonl", VERSION_KEY)
"""Metadata that does not make a new version: where the file was found, and its bytes' hash
(the chunks are what counts)."""
_ID_NAMESPACE = uuid.UUID("2b0c6d55-2a57-4f4e-8f6e-7465787462f2")


def _version(source: str, chunks: list[Chunk]) -> str:
    """Return a document's version tag: a hash of its chunks, their text and metadata."""
    digest = hashlib.sha256(source.encode("utf-8", "surrogatepass"))
    for c in chunks:
        meta = {k: v for k, v in c.metadata.items() if k not in _UNVERSIONED}
        digest.update(json.dumps([c.chunk_id, c.text, meta], sort_keys=True,
                                 ensure_ascii=True).encode())
    return digest.hexdigest()[:16]


def _unchanged(stored: dict[str | None, set[str]], version: str, chunks: list[Chunk]) -> bool:
    """Whether a document's stored chunks are this version, complete and alone.

    Chunks stored before versions existed carry none: they are this version when their ids
    are exactly the chunks' ids (the rule of those releases), so an upgrade re-embeds nothing.
    """
    if list(stored) == [version]:
        return len(stored[version]) == len(chunks)
    if list(stored) == [None]:
        return stored[None] == {c.chunk_id for c in chunks}
    return False


@dataclass
class _Plan:
    """One document's replacement: its new version's chunks, and what goes with the old."""

    source: str
    version: str
    chunks: list[Chunk]
    """Every chunk of the new version not stored yet (ids and metadata for this version)."""
    embed: list[Chunk]
    """Those chunks that need embedding (the others reuse an old chunk's vectors: `_reuse`)."""
    reused: dict[str, tuple[list[float], SentenceVectors | None]]
    old: list[str]
    """The ids of every other version's chunks: deleted once the new version is switched to."""
    ids: list[str]
    """The ids of every chunk of the new version (what a roll-back deletes)."""


def _plan(source: str, version: str, chunks: list[Chunk],
          stored: dict[str | None, set[str]]) -> _Plan:
    """Give a new version's chunks their ids (the vectors to reuse are found by `_reuse`).

    A chunk keeps its content id unless an old version holds that id already: then it gets an
    id of its own version, so no write ever touches a chunk the old version still answers from.
    """
    old = sorted(i for v, ids in stored.items() if v != version for i in ids)
    have = stored.get(version, set())  # written by a run that stopped without a journal
    taken = set(old)
    todo = []
    for c in chunks:
        if c.chunk_id in taken:
            c.chunk_id = str(uuid.uuid5(_ID_NAMESPACE, f"{c.chunk_id}\x1f{version}"))
        c.metadata["chunk_id"] = c.chunk_id
        c.metadata[VERSION_KEY] = version
        if c.chunk_id not in have:
            todo.append(c)
    return _Plan(source, version, todo, todo, {}, old, [c.chunk_id for c in chunks])


def _reuse(store: Store, plan: _Plan, sentence_vectors: bool) -> None:
    """Copy the vectors of unchanged passages from the old version instead of embedding them.

    Done per document just before it is written, so a run that changes many documents never
    holds more than one old version's payloads.
    """
    if not plan.old or not plan.chunks:
        return

    def key(text: str, metadata: dict[str, object]) -> tuple[str, str]:
        return text, json.dumps(metadata.get("heading_path") or [])

    # an unchanged passage under the same headings embeds to the same vectors
    previous = {key(sc.text, sc.metadata): (sc.chunk_id, sc.sentences)
                for sc in store.retrieve(plan.old)}
    matches = {}
    for c in plan.chunks:
        found = previous.get(key(c.text, c.metadata))
        if found is not None and (found[1] is not None or not sentence_vectors):
            matches[c.chunk_id] = found
    vectors = store.vectors([old_id for old_id, _ in matches.values()])
    plan.reused = {cid: (vectors[old_id], sv if sentence_vectors else None)
                   for cid, (old_id, sv) in matches.items() if old_id in vectors}
    plan.embed = [c for c in plan.chunks if c.chunk_id not in plan.reused]


def _replace(store: Store, plan: _Plan, summary: IngestSummary, batch: int,
             progress: Progress | None, done: list[int], total: int, sentence_vectors: bool,
             journal: Journal | None, job: str | None, on_switch: Callable[[str], None] | None,
             deadline: float | None = None) -> None:
    """Write a document's new version hidden, switch to it in one step, delete the old one."""
    tx = job or f"ingest-{uuid.uuid4().hex[:16]}"
    if journal is not None:
        journal.record(tx, "begin", source=plan.source, version=plan.version)
    store.hide(Hidden(plan.source, plan.version, others=False))
    try:
        _reuse(store, plan, sentence_vectors)
        if plan.reused:
            kept = [c for c in plan.chunks if c.chunk_id in plan.reused]
            store.upsert([c.chunk_id for c in kept], [plan.reused[c.chunk_id][0] for c in kept],
                         [c.text for c in kept], [c.metadata for c in kept],
                         [plan.reused[c.chunk_id][1] for c in kept])
            done[0] += len(kept)
            if progress:
                progress("embed", done[0], total)
        _embed_and_write(store, plan.embed, summary, batch, progress, done, total,
                         sentence_vectors, deadline)
    except BaseException:
        _roll_back(store, plan, journal, tx)
        raise
    summary.chunks_unchanged += len(plan.reused)
    # the commit point: from this line on, a restart finishes the job instead of undoing it
    if journal is not None:
        journal.record(tx, "switch", durable=bool(plan.old))
    if progress:
        progress("switch", done[0], total)
    if on_switch is not None:
        on_switch(plan.source)
    store.hide(Hidden(plan.source, plan.version, others=True))
    if progress:
        progress("delete", done[0], total)
    store.delete(plan.old)  # on failure stays hidden and journalled: the next start finishes it
    summary.chunks_removed += len(plan.old) - len(plan.reused)
    store.unhide(plan.source)
    if journal is not None:
        journal.record(tx, "end", status="done")


def _roll_back(store: Store, plan: _Plan, journal: Journal | None, tx: str) -> None:
    """Undo a replacement that failed before its switch: delete what it wrote."""
    try:
        store.delete(plan.ids)
    except Exception:  # noqa: BLE001 - the journal still says "unfinished": the next start undoes it
        return
    store.unhide(plan.source)
    if journal is not None:
        journal.record(tx, "end", status="failed", error="rolled back")


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
    journal: Journal | None = None,
    job: str | None = None,
    on_switch: Callable[[str], None] | None = None,
    origins: Mapping[Path, Path] | None = None,
    time_limit_s: float | None = None,
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

    A changed document is replaced atomically: its new version's chunks are written under a
    version tag of their own, hidden from searches, then switched to in one step, then the old
    version's chunks are deleted (unchanged passages reuse their old vectors). With `journal`,
    each step is recorded first (`textbound.documents.journal`), so a run killed anywhere is
    finished or
    rolled back by `textbound.documents.journal.recover` at the next start; `job` names the
    journal's job
    (one document only), `on_switch(source)` runs at the switch (an upload moves its file into
    place there), and `origins` gives the path to record for a file read from elsewhere.

    With `time_limit_s`, a document that takes longer to read, or to embed, is skipped with
    that reason (one being replaced keeps its previous version).
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
            started = time.monotonic()
            file_hash = hashlib.sha256(item.read_bytes()).hexdigest()[:16]
            doc = load_file(item, source, started + time_limit_s if time_limit_s else None)
            if origins and item in origins:
                doc.path = str(origins[item])
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
    versions: dict[str, dict[str | None, set[str]]] = {}
    origin: dict[str, str] = {}
    for chunk_id, meta in store.scroll(("source", "path", "jsonl", VERSION_KEY),
                                       every_version=True):
        source = str(meta.get("source", ""))
        existing.setdefault(source, set()).add(chunk_id)
        versions.setdefault(source, {}).setdefault(meta.get(VERSION_KEY), set()).add(chunk_id)
        where = meta.get("path") or meta.get("jsonl")
        if where:
            origin[source] = str(where)

    plans: list[_Plan] = []
    for source, chunks in by_source.items():
        version = _version(source, chunks)
        stored = versions.get(source, {})
        if _unchanged(stored, version, chunks):
            summary.files_unchanged += 1
            summary.chunks_unchanged += len(chunks)
            continue
        summary.files_changed += 1
        plans.append(_plan(source, version, chunks, stored))

    total = sum(len(p.chunks) for p in plans)
    done = [0]
    if progress:
        progress("embed", 0, total)
    for plan in plans:
        deadline = time.monotonic() + time_limit_s if time_limit_s else None
        try:
            _replace(store, plan, summary, batch_size, progress, done, total, sentence_vectors,
                     journal, job, on_switch, deadline)
        except _TooSlow:
            summary.files_changed -= 1
            summary.skipped.append((plan.source, f"{TOO_SLOW}: embedding it took more than "
                                    f"{time_limit_s:g} s; its previous version stays"))

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
