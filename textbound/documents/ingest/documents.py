"""What ingestion reads and writes: documents, chunks, the run's summary, and the limits."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from textbound.text.units import answer_units

SUPPORTED_SUFFIXES = {".md", ".markdown", ".rmd", ".qmd", ".txt", ".text", ".html", ".htm",
                      ".pdf", ".epub", ".docx", ".odt"}
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
    page_labels: dict[int, str] = field(default_factory=dict)
    """{1-based page: the page number printed there ("18", "xiv")} for PDFs that print them."""


@dataclass
class Chunk:
    """A passage to embed, with where it came from."""

    chunk_id: str
    text: str
    metadata: dict[str, Any]

    def embedding_text(self) -> str:
        """Text given to the embedding model: the heading path, then the passage.

        A table is given row by row with its header cells ("Name: integer; Range: -2147483648
        to +2147483647"), as a reader reads it, not as pipes and dashes; the rows a passage
        opens on take the header of the table they belong to (metadata `table_header`).
        """
        path = self.metadata.get("heading_path") or []
        heading = " > ".join(path[1:] if len(path) > 1 else path)
        text = (_tables_read(self.text, self.metadata.get("table_header"))
                if "|" in self.text else self.text)
        return f"{heading}\n{text}" if heading else text


_TABLE = re.compile(r"(?:^[ \t]*\|.*(?:\n|$))+", re.M)


def _tables_read(text: str, header: str | None = None) -> str:
    """Return text with each Markdown table written as its rows, each with the header's names.

    `header`: the header of the table the text opens inside, for the rows it opens on.
    """

    def rows(m: re.Match[str]) -> str:
        own = header if m.start() == 0 else None
        read = [u.text for u in answer_units(m.group(0), own) if u.kind == "row"]
        return "\n".join(read) + "\n" if read else m.group(0)

    return _TABLE.sub(rows, text)


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

