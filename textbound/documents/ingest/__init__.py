"""Ingestion: load Markdown, text, HTML, PDF and benchmark JSONL; chunk by headings; upsert.

PDFs are read by `textbound.documents.pdf` into Markdown (headings from the outline or the type, no
running headers, footers or page numbers, hyphenation joined) with the offset where each page
starts and the page number the book prints on each page (its label); a chunk records its first
page and the pages that start inside it, with their printed labels, and `page_at` gives the page
of any offset in it (`page_label_at` the printed label, else the file's page), so a citation
names the page of the sentence it quotes as the book prints it.

Re-ingesting is idempotent. Chunk ids are derived from source and content, and a document's
version is a hash of its chunks, so a file whose version is stored already costs no embedding. A
changed file is replaced atomically: its new version's chunks are written under their version tag
(hidden from searches), the switch is one journalled step, then the old version's chunks are
deleted; a run killed at any point is finished or rolled back by
`textbound.documents.journal.recover` at
the next start. `prune` deletes chunks of sources that are
gone, and only those that were ingested from under a path of this run: a collection's other
documents (a teacher's own PDF beside the bundled textbook) are never touched.

The package, one job per module: `documents` (Document, Chunk, IngestSummary, the limits),
`loaders` (a file or a JSONL corpus as Documents), `chunking` (a Document as Chunks, and
`page_at`, `page_label_at`), `pipeline` (discover, embed what is new, delete what is stale).
"""

from __future__ import annotations

from textbound.documents.ingest.chunking import (
    MAX_CHARS,
    TARGET_CHARS,
    chunk_document,
    page_at,
    page_label_at,
)
from textbound.documents.ingest.documents import (
    MAX_FILE_BYTES,
    SUPPORTED_SUFFIXES,
    Chunk,
    Document,
    IngestSummary,
    SkipFile,
)
from textbound.documents.ingest.loaders import iter_jsonl_documents, load_file
from textbound.documents.ingest.pipeline import Progress, discover, ingest

__all__ = [
    "Chunk",
    "Document",
    "IngestSummary",
    "MAX_CHARS",
    "MAX_FILE_BYTES",
    "Progress",
    "SUPPORTED_SUFFIXES",
    "SkipFile",
    "TARGET_CHARS",
    "chunk_document",
    "discover",
    "ingest",
    "iter_jsonl_documents",
    "load_file",
    "page_at",
    "page_label_at",
]
