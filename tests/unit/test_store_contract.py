"""The Store contract, one suite run against every implementation: Edge, qdrant-client's local
mode and the shipped in-memory fake. Vectors come from a tiny deterministic embedder, so the
suite needs no model and no network."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from textbound.errors import EmbeddingMismatchError
from textbound.store import EdgeStore, QdrantStore, SentenceVectors, Store, open_store
from textbound.store.memory import MemoryStore

from ..conftest import make_settings

DIM = 16
KINDS = ["edge", "local", "memory"]


class HashEmbeddings:
    """Deterministic 16-d vectors from a text's hash (a stand-in model for the contract)."""

    model_name = "hash-16"
    dimension = DIM

    def embed_query(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


def open_kind(kind: str, data: Path, embeddings: Any = None) -> Store:
    embeddings = embeddings or HashEmbeddings()
    if kind == "memory":
        return MemoryStore(embeddings)
    return open_store(make_settings(data, store=kind), embeddings)


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    s = open_kind(request.param, tmp_path / "data")
    s.ensure_collection(DIM)
    yield s
    s.close()


def chunk_id(source: str, n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{source}/{n}"))


def write(store: Store, source: str, texts: list[str], with_sentences: bool = False) -> list[str]:
    ids = [chunk_id(source, n) for n in range(len(texts))]
    metas = [{"source": source, "title": source.upper(), "heading_path": [source, f"S{n}"],
              "start": n * 10, "page": None, "section": f"{source} > S{n}"}
             for n in range(len(texts))]
    sentences = None
    if with_sentences:
        sentences = [SentenceVectors([(0, 3), (4, len(t))],
                                     np.arange(2 * DIM, dtype=np.float32).reshape(2, DIM) / 9)
                     for t in texts]
    store.upsert(ids, store.embeddings.embed_documents(texts), texts, metas, sentences)
    return ids


def test_every_implementation_satisfies_the_protocol(store: Any) -> None:
    """Each store is a `Store` by the runtime-checkable protocol."""
    assert isinstance(store, Store)


def test_upsert_then_count_and_search(store: Store) -> None:
    """Written chunks are counted and the nearest one to its own vector scores cosine 1."""
    write(store, "a.md", ["one alpha", "two beta", "three gamma"])
    assert store.count() == 3
    hits = store.search(store.embeddings.embed_query("two beta"), 2)
    assert hits[0].text == "two beta" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[0].source == "a.md" and hits[0].section == "a.md > S1"
    assert len(hits) == 2 and hits[0].score >= hits[1].score


def test_scores_are_raw_cosine(store: Store) -> None:
    """A search score is the cosine of the query and the stored vector, in [-1, 1]."""
    write(store, "a.md", ["x", "y", "z", "w"])
    q = np.asarray(store.embeddings.embed_query("query"))
    for hit in store.search(q.tolist(), 4):
        v = np.asarray(store.embeddings.embed_query(hit.text))
        assert hit.score == pytest.approx(float(q @ v / np.linalg.norm(q) / np.linalg.norm(v)),
                                          abs=1e-5)


def test_upsert_is_idempotent(store: Store) -> None:
    """Writing the same ids twice keeps one point per id."""
    write(store, "a.md", ["one", "two"])
    write(store, "a.md", ["one", "two"])
    assert store.count() == 2


def test_delete_by_id_and_by_source(store: Store) -> None:
    """Deleted chunks are gone from counts, scrolls and searches; other sources stay."""
    a = write(store, "a.md", ["a0", "a1", "a2"])
    write(store, "b.md", ["b0", "b1"])
    store.delete([a[0]])
    assert store.count() == 4
    assert all(h.chunk_id != a[0] for h in store.search(store.embeddings.embed_query("a0"), 5))
    assert store.delete_source("b.md") == 2
    assert {m["source"] for _, m in store.scroll()} == {"a.md"}


def test_scroll_yields_every_id_once_with_the_fields_asked(store: Store) -> None:
    """Scroll pages through every point (more than one page) with only the selected fields."""
    texts = [f"t{n}" for n in range(1500)]
    ids = write(store, "big.md", texts)
    seen = list(store.scroll(("source", "start")))
    assert sorted(i for i, _ in seen) == sorted(ids)
    assert all(set(m) == {"source", "start"} for _, m in seen)


def test_retrieve_round_trips_the_payload(store: Store) -> None:
    """Text, metadata (lists, None, nested) and sentence vectors come back as written."""
    (cid,) = write(store, "a.md", ["hello world"], with_sentences=True)
    (got,) = store.retrieve([cid, chunk_id("nowhere", 0)])
    assert got.chunk_id == cid and got.text == "hello world"
    assert got.metadata["heading_path"] == ["a.md", "S0"] and got.metadata["page"] is None
    assert got.sentences is not None and got.sentences.spans == [(0, 3), (4, 11)]
    assert np.array_equal(got.sentences.vectors,
                          np.arange(2 * DIM, dtype=np.float32).reshape(2, DIM) / 9)
    assert set(store.sentence_vectors([cid])) == {cid}
    hit = store.search(store.embeddings.embed_query("hello world"), 1)[0]
    assert "sentence_vectors" not in hit.metadata


def test_info_records_the_embedding_model(store: Store) -> None:
    """info() names the model and dimension that built the collection, and the point count."""
    write(store, "a.md", ["p", "q"])
    info = store.info()
    assert info["metadata"]["embedding_model"] == "HashEmbeddings:hash-16"
    assert info["dimension"] == DIM and info["points"] == 2


def test_another_model_is_refused(store: Store) -> None:
    """A collection built by one model cannot be searched with another's vectors."""
    class Other(HashEmbeddings):
        model_name = "other"

    store.embeddings = Other()
    with pytest.raises(EmbeddingMismatchError, match="built with"):
        store.check_compatible(DIM)


def test_table_of_contents_and_term_stats(store: Store) -> None:
    """The TOC lists documents and sections in order; term stats count chunks and words."""
    write(store, "a.md", ["Robots walk", "Robots run"])
    toc = store.table_of_contents()
    assert toc == [{"source": "a.md", "title": "A.MD", "sections": ["S0", "S1"]}]
    stats = store.term_stats()
    assert stats.n_chunks == 2 and stats.mentions("Robots")
    write(store, "b.md", ["Dogs bark"])
    assert store.term_stats().n_chunks == 3  # a write invalidates the cache


def test_as_langchain_searches_the_same_data(store: Store) -> None:
    """as_langchain() is a LangChain VectorStore over the same points, raw cosine scores."""
    write(store, "a.md", ["one alpha", "two beta"])
    lc = store.as_langchain()
    doc, score = lc.similarity_search_with_score("two beta", k=1)[0]
    assert doc.page_content == "two beta" and doc.metadata["source"] == "a.md"
    assert score == pytest.approx(1.0, abs=1e-5)
    retriever = lc.as_retriever(search_kwargs={"k": 2})
    assert len(retriever.invoke("one alpha")) == 2


def test_drop_removes_the_collection(store: Store) -> None:
    """After drop the collection no longer exists and counts zero."""
    write(store, "a.md", ["x"])
    store.drop()
    assert not store.exists() and store.count() == 0


@pytest.mark.parametrize("kind", ["edge", "local"])
def test_data_survives_reopening(tmp_path: Path, kind: str) -> None:
    """An on-disk store closed and opened again has the same points."""
    s = open_kind(kind, tmp_path / "d")
    s.ensure_collection(DIM)
    ids = write(s, "a.md", ["keep me", "and me"])
    s.close()
    again = open_kind(kind, tmp_path / "d")
    assert sorted(i for i, _ in again.scroll()) == sorted(ids) and again.exists()
    again.close()


def test_edge_collections_keep_payloads_cached(tmp_path: Path) -> None:
    """A new Edge shard keeps payloads in memory (Edge's cold default made search slow at scale),
    and reopening keeps that setting."""
    s = open_kind("edge", tmp_path / "d")
    s.ensure_collection(DIM)
    write(s, "a.md", ["one", "two"])
    s.close()
    again = open_kind("edge", tmp_path / "d")
    assert again.count() == 2
    again.close()
    config = json.loads((Path(again.location) / "edge_config.json").read_text(encoding="utf-8"))
    assert config["payload_memory"] == "cached"


def test_same_vectors_give_the_same_top_k_and_scores_everywhere(tmp_path: Path) -> None:
    """2,000 random chunks: Edge, local mode and the fake agree on top 25 ids and scores
    to 1e-4 (the calibration fitted on local-mode scores holds for Edge unchanged)."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((2000, DIM)).astype(np.float32)
    ids = [chunk_id("r", n) for n in range(2000)]
    metas = [{"source": "r", "n": n} for n in range(2000)]
    queries = rng.standard_normal((30, DIM)).astype(np.float32)
    results = {}
    for kind in KINDS:
        s = open_kind(kind, tmp_path / kind)
        s.ensure_collection(DIM)
        s.upsert(ids, vectors.tolist(), [f"c{n}" for n in range(2000)], metas)
        s.optimize()
        results[kind] = [[(h.chunk_id, h.score) for h in s.search(q.tolist(), 25)]
                         for q in queries]
        s.close()
    for kind in ("edge", "memory"):
        for got, want in zip(results[kind], results["local"], strict=True):
            assert [i for i, _ in got] == [i for i, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-4)


def test_the_embedded_default_is_edge(tmp_path: Path) -> None:
    """With no URL and no TEXTBOUND_STORE, the store is Qdrant Edge under <qdrant_path>/edge."""
    settings = make_settings(tmp_path / "d")
    assert settings.store == "edge"
    s = open_store(settings, HashEmbeddings())
    assert isinstance(s, EdgeStore)
    assert s.location == str(tmp_path / "d" / "qdrant" / "edge" / "textbook")
    s.close()
    local = open_store(make_settings(tmp_path / "e", store="local"), HashEmbeddings())
    assert isinstance(local, QdrantStore)
    local.close()


def test_a_half_replaced_document_shows_one_version_to_searches(store: Any) -> None:
    """Hidden(version) keeps a new version out until the switch, Hidden(others) the old after."""
    from textbound.store._types import Hidden

    texts = ["alpha servo", "beta servo", "gamma servo"]
    old = [chunk_id("doc", n) for n in range(3)]
    new = [chunk_id("doc", n + 10) for n in range(3)]
    vectors = store.embeddings.embed_documents(texts)
    store.upsert(old, vectors, texts, [{"source": "doc"} for _ in old])  # before versions
    store.upsert(new, vectors, texts, [{"source": "doc", "version": "v2"} for _ in new])
    store.upsert([chunk_id("other", 0)], vectors[:1], texts[:1],
                 [{"source": "other", "version": "v2"}])

    def seen() -> set[str]:
        hits = {h.chunk_id for h in store.search(vectors[0], 20)}
        assert {cid for cid, _ in store.scroll(("source",))} == hits  # scrolls agree
        return hits

    store.hide(Hidden("doc", "v2", others=False))
    assert seen() == set(old) | {chunk_id("other", 0)}
    store.hide(Hidden("doc", "v2", others=True))
    assert seen() == set(new) | {chunk_id("other", 0)}
    assert len(list(store.scroll(every_version=True))) == 7
    store.unhide("doc")
    assert seen() == set(old) | set(new) | {chunk_id("other", 0)}
