"""The shipped in-memory store as a test fake: filled in one call, made to fail on demand."""

from __future__ import annotations

import pytest

from textbound.documents.store import TermStats
from textbound.errors import StoreUnavailableError
from textbound.fakes import HashEmbedder, MemoryStore
from textbound.seams import Store

PASSAGES = [
    ("a", "A topic is a named bus.", {"source": "book.md", "heading_path": ["Book", "Topics"]}),
    ("b", "A service answers once.", {"source": "book.md", "heading_path": ["Book", "Services"]}),
]


def test_holding_stores_the_passages_ready_to_search() -> None:
    """holding() embeds and writes the passages; the nearest to a passage's text is itself."""
    embeddings = HashEmbedder()
    store = MemoryStore.holding(embeddings, PASSAGES, collection="fake")
    assert isinstance(store, Store) and store.collection == "fake" and store.count() == 2
    hit = store.search(embeddings.embed_query("A service answers once."), 1)[0]
    assert (hit.chunk_id, hit.metadata["source"]) == ("b", "book.md")
    assert hit.score == pytest.approx(1.0, abs=1e-5)


def test_holding_nothing_makes_an_empty_collection() -> None:
    """With no passages the collection exists and holds no chunk."""
    store = MemoryStore.holding(HashEmbedder(), [])
    assert store.exists() and store.count() == 0


def test_fail_makes_one_method_raise_until_reset() -> None:
    """fail(method, error) raises that very error from that method only; None restores it."""
    store = MemoryStore.holding(HashEmbedder(), PASSAGES)
    error = StoreUnavailableError("connection refused")
    store.fail("search", error)
    with pytest.raises(StoreUnavailableError) as raised:
        store.search([1.0] * 16, 1)
    assert raised.value is error and store.exists()
    store.fail("search", None)
    assert len(store.search([1.0] * 16, 1)) == 1


def test_fail_names_only_public_methods() -> None:
    """A misspelt or private method name is an error, not a fault that never fires."""
    store = MemoryStore(HashEmbedder())
    for name in ("serach", "_nearest", "collection"):
        with pytest.raises(AttributeError):
            store.fail(name, StoreUnavailableError("x"))


def test_fixed_stats_stand_in_for_the_collections_own() -> None:
    """With `stats` given, term_stats() reports them; without, the collection's own."""
    empty = TermStats(0, {})
    assert MemoryStore.holding(HashEmbedder(), PASSAGES, stats=empty).term_stats() is empty
    own = MemoryStore.holding(HashEmbedder(), PASSAGES).term_stats()
    assert own.n_chunks == 2 and own.mentions("Services") and not own.mentions("France")
