"""What a store returns, and the payload keys of its points.

The `Store` protocol these types are the vocabulary of is in `textbound.seams`, with every
other seam.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CONTENT_KEY", "METADATA_KEY", "SENTENCES_KEY", "VERSION_KEY", "Hidden",
           "RetrievedChunk", "SentenceVectors", "StoredChunk", "TermStats"]

CONTENT_KEY = "page_content"
METADATA_KEY = "metadata"
SENTENCES_KEY = "sentence_vectors"
"""Payload key (beside langchain-qdrant's two, which ignore it) holding a chunk's sentence
vectors: `{"spans": [[start, end], ...], "dim": d, "f32": base64 of the row-major float32s}`."""
VERSION_KEY = "version"
"""Metadata key of the document version a chunk belongs to (chunks stored before versions
existed have none). A replacement writes the new version's chunks, switches, then deletes the
old version's: `Hidden` keeps the half-done state out of searches meanwhile."""


@dataclass(frozen=True)
class Hidden:
    """Chunks of one source that searches must not see while its version is being replaced.

    `others` False: the chunks of `version` (written, not yet switched to); True: every chunk
    of the source *except* `version`'s (switched to, the old ones not yet deleted).
    """

    source: str
    version: str
    others: bool

    def hides(self, metadata: dict[str, Any]) -> bool:
        """Whether a chunk with this metadata is hidden."""
        if metadata.get("source") != self.source:
            return False
        return (metadata.get(VERSION_KEY) == self.version) != self.others


@dataclass(frozen=True)
class SentenceVectors:
    """The embeddings of a chunk's answer sentences, computed at ingestion."""

    spans: list[tuple[int, int]]
    vectors: np.ndarray  # (len(spans), dim) float32

    def row(self, start: int, end: int) -> np.ndarray | None:
        """Return the vector of the sentence at [start, end), or None if it was not stored."""
        try:
            found: np.ndarray = self.vectors[self.spans.index((start, end))]
        except ValueError:
            return None
        return found

    def encode(self) -> dict[str, Any]:
        """Return the payload form."""
        data = np.ascontiguousarray(self.vectors, dtype="<f4")
        return {"spans": [list(s) for s in self.spans], "dim": int(data.shape[1]) if data.size
                else 0, "f32": base64.b64encode(data.tobytes()).decode("ascii")}

    @classmethod
    def decode(cls, payload: dict[str, Any]) -> SentenceVectors | None:
        """Parse the payload form; None when it is malformed (the caller embeds instead)."""
        try:
            spans = [(int(a), int(b)) for a, b in payload["spans"]]
            raw = np.frombuffer(base64.b64decode(payload["f32"]), dtype="<f4")
            dim = int(payload["dim"])
            vectors = raw.reshape(len(spans), dim) if spans else raw.reshape(0, max(dim, 1))
        except (KeyError, TypeError, ValueError):
            return None
        return cls(spans, vectors.astype(np.float32))


@dataclass(frozen=True)
class RetrievedChunk:
    """One chunk returned by a search, with its raw cosine score."""

    chunk_id: str
    text: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)
    fused: float | None = None
    """Its reciprocal-rank-fusion score in a hybrid search (None in a dense one)."""

    @property
    def source(self) -> str:
        """The file or document the chunk came from."""
        return str(self.metadata.get("source", ""))

    @property
    def section(self) -> str:
        """The heading path of the chunk, joined with ' > '."""
        return str(self.metadata.get("section", ""))


@dataclass(frozen=True)
class StoredChunk:
    """One chunk read back by id: its text, metadata and stored sentence vectors."""

    chunk_id: str
    text: str
    metadata: dict[str, Any]
    sentences: SentenceVectors | None = None


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of a collection's content words, and the words it uses as written.

    The frequencies give IDF weights; the words tell a name the collection never mentions.
    """

    n_chunks: int
    df: dict[str, int]
    words: frozenset[str] = frozenset()
    """Every word of the collection, folded (accents, possessive 's) with its case kept."""
    words_lower: frozenset[str] = frozenset()
    counts: dict[str, int] = field(default_factory=dict)
    """Chunks using each folded lower-case word (textbound.answer.spelling's dictionary)."""
    names: frozenset[str] = frozenset()
    """Adjacent capitalised words as the collection writes them, lower-cased ("isaac sim")."""
    commands: dict[str, frozenset[str]] = field(default_factory=dict)
    """The collection's command heads (textbound/text/commands.py: the word opening most of its
    code blocks, "git") with every word that follows each anywhere in it ("log", "rebase")."""
    compounds: frozenset[str] = frozenset()
    """Its names joined to a number by a hyphen, lower-cased ("sha-1", "mpeg-4":
    textbound.text.compound_names)."""
    subcommand_heads: frozenset[str] | None = None
    """The command heads whose code blocks mostly go on with a word ("git log", not "time -v":
    textbound.text.commands.word_heads); None when not counted (every head then counts)."""

    def mentions(self, name: str) -> bool:
        """Whether the collection uses this capitalised word.

        As written, as its singular (Robots -> Robot), or in lower case: "Windows" in a book that
        only says "window" is not mentioned; "Soviets" beside "Soviet" is. A word written all in
        capitals (three letters or more: an acronym, a keyword of code) is mentioned only in
        capitals or as a name ("DATANET" where the text says "Datanet"), never by a lower-case
        word: "WHEN MATCHED" names SQL a tutorial never shows, however often it says "matched".
        """
        forms = {name, name[:-1] if name.endswith("s") else name,
                 name[:-2] if name.endswith("es") else name}
        if forms & self.words:
            return True
        if len(name) >= 3 and name.isalpha() and name.isupper():
            singular = {name, name[:-1] if name.endswith("S") else name}
            return bool((singular | {w.capitalize() for w in singular}) & self.words)
        return name.lower() in self.words_lower

    def idf(self, term: str) -> float:
        """Return a smoothed IDF; a term the collection never uses gets the largest weight."""
        return math.log((self.n_chunks + 1) / (self.df.get(term, 0) + 0.5))
