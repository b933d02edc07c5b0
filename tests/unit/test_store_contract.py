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

from textbound.documents.store import EdgeStore, QdrantStore, SentenceVectors, Store, open_store
from textbound.documents.store.memory import MemoryStore
from textbound.errors import EmbeddingMismatchError

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


# --- hybrid retrieval: BM25 beside the dense vector, fused by reciprocal rank fusion ---------

WORDS = ("robot joint sensor camera lidar torque motor planner gripper wheel battery servo "
         "encoder actuator kinematics odometry navigation mapping trajectory controller").split()


def _word_texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 12)))) for _ in range(n)]


def test_hybrid_search_keeps_raw_cosine_and_reports_the_fused_score(store: Store) -> None:
    """A hybrid hit's `score` is its raw cosine (what the gate is calibrated on); `fused` is
    its reciprocal-rank-fusion score, in fused order; a dense search has no fused score."""
    write(store, "a.md", _word_texts(40, 1))
    q = np.asarray(store.embeddings.embed_query("motor torque"))
    hits = store.search(q.tolist(), 10, text="motor torque", candidates=20)
    assert len(hits) == 10
    fused = [h.fused for h in hits]
    assert all(f is not None for f in fused) and fused == sorted(fused, reverse=True)  # type: ignore[type-var]
    for hit in hits:
        v = np.asarray(store.embeddings.embed_query(hit.text))
        assert hit.score == pytest.approx(float(q @ v / np.linalg.norm(q) / np.linalg.norm(v)),
                                          abs=1e-5)
    assert all(h.fused is None for h in store.search(q.tolist(), 3))


def test_bm25_finds_a_verbatim_keyword_dense_search_misses(store: Store) -> None:
    """A question naming an exact term (an environment variable) finds the one chunk stating
    it through BM25, though the dense vector alone ranks it outside the top 3."""
    texts = _word_texts(60, 2) + ["Set ROS_DOMAIN_ID before launching the nodes."]
    ids = write(store, "a.md", texts)
    question = "What does ROS_DOMAIN_ID do?"
    vector = store.embeddings.embed_query(question)  # a hash: unrelated to any chunk
    dense = [h.chunk_id for h in store.search(vector, 3)]
    assert ids[-1] not in dense
    hybrid = store.search(vector, 3, text=question, candidates=10)
    assert ids[-1] in [h.chunk_id for h in hybrid]


def test_the_engines_and_the_fake_fuse_alike(tmp_path: Path) -> None:
    """Edge, qdrant-client's local mode and the in-memory fake give the same fused scores and
    cosines, and the same ids (as sets where fused scores tie), on 400 chunks."""
    rng = np.random.default_rng(5)
    # chunk n has n + 5 words, so no two chunks tie on BM25 (engines order ties differently)
    texts = [" ".join(rng.choice(WORDS, size=n + 5)) for n in range(400)]
    vectors = rng.standard_normal((400, DIM)).astype(np.float32)
    ids = [chunk_id("h", n) for n in range(400)]
    metas = [{"source": "h", "section": f"Part {n % 7}"} for n in range(400)]
    questions = [" ".join(rng.choice(WORDS, size=3)) for _ in range(20)]
    qvecs = rng.standard_normal((20, DIM)).astype(np.float32)
    results = {}
    for kind in KINDS:
        s = open_kind(kind, tmp_path / kind)
        s.ensure_collection(DIM)
        s.upsert(ids, vectors.tolist(), texts, metas)
        s.optimize()
        results[kind] = [[(h.chunk_id, h.score, h.fused)
                          for h in s.search(v.tolist(), 15, text=q, candidates=30)]
                         for q, v in zip(questions, qvecs, strict=True)]
        s.close()

    def groups(hits: list[Any]) -> list[tuple[float, frozenset[str]]]:
        by: dict[float, set[str]] = {}
        for cid, _, fused in hits:
            by.setdefault(round(fused, 5), set()).add(cid)
        return sorted(((f, frozenset(g)) for f, g in by.items()), reverse=True)

    for kind in ("edge", "memory"):
        for got, want in zip(results[kind], results["local"], strict=True):
            assert np.allclose([f for *_, f in got], [f for *_, f in want], atol=1e-5)
            # the last tie group may be cut at the limit differently
            assert groups(got)[:-1] == groups(want)[:-1]
            cos = {cid: c for cid, c, _ in want}
            assert all(abs(c - cos[cid]) < 1e-4 for cid, c, _ in got if cid in cos)


@pytest.mark.parametrize("kind", KINDS)
def test_a_collection_made_before_hybrid_is_migrated_by_ingest(tmp_path: Path,
                                                               kind: str) -> None:
    """A collection without BM25 vectors refuses a hybrid search with a SetupError naming
    `textbound ingest`; ensure_collection (what ingest calls) adds them in place, keeping the
    dense vectors, and the keyword is then found."""
    from textbound.documents.store._sparse import SPARSE_VERSION
    from textbound.errors import SetupError

    s = open_kind(kind, tmp_path / "d")
    s.ensure_collection(DIM)
    ids = write(s, "a.md", _word_texts(30, 4) + ["Export ROS_DOMAIN_ID first."])
    with s._using("rewind") as h:  # what a collection made by the previous release looks like
        s._set_metadata(h, {"sparse": None})
    s._checked = s._hybrid = False
    vector = s.embeddings.embed_query("ROS_DOMAIN_ID?")
    with pytest.raises(SetupError, match="textbound ingest"):
        s.search(vector, 3, text="ROS_DOMAIN_ID?")
    assert [h.chunk_id for h in s.search(vector, 3)]  # dense search keeps working
    s.ensure_collection(DIM)
    assert s.info()["metadata"]["sparse"] == SPARSE_VERSION and s.count() == 31
    assert ids[-1] in [h.chunk_id for h in s.search(vector, 3, text="ROS_DOMAIN_ID?",
                                                     candidates=5)]
    s.close()


def _old_collection(kind: str, data: Path) -> Store:
    """Write a collection as the release before hybrid retrieval did: dense vectors only, no
    sparse slot, no BM25 version in the metadata; return the store opened over it."""
    texts = _word_texts(20, 6) + ["Export ROS_DOMAIN_ID first."]
    ids = [chunk_id("old", n) for n in range(len(texts))]
    emb = HashEmbeddings()
    vectors = emb.embed_documents(texts)
    payloads = [{"page_content": t, "metadata": {"source": "old.md"}} for t in texts]
    meta = {"embedding_model": "HashEmbeddings:hash-16", "dimension": DIM,
            "created_by": "textbound"}
    if kind == "edge":
        import qdrant_edge as qe

        from textbound.documents.store._edge import META_FILE

        folder = data / "qdrant" / "edge" / "textbook"
        folder.mkdir(parents=True)
        shard = qe.EdgeShard.create(str(folder), qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)))
        shard.update(qe.UpdateOperation.upsert_points(
            [qe.Point(i, v, p) for i, v, p in zip(ids, vectors, payloads, strict=True)]))
        shard.close()
        (folder / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    elif kind == "local":
        from qdrant_client import QdrantClient, models

        client = QdrantClient(path=str(data / "qdrant"))
        client.create_collection("textbook", vectors_config=models.VectorParams(
            size=DIM, distance=models.Distance.COSINE), metadata=meta)
        client.upsert("textbook", [models.PointStruct(id=i, vector=v, payload=p)
                                   for i, v, p in zip(ids, vectors, payloads, strict=True)])
        client.close()
    else:
        raise ValueError(kind)
    return open_kind(kind, data)


@pytest.mark.parametrize("kind", ["edge", "local"])
def test_a_real_pre_hybrid_collection_is_migrated_in_place(tmp_path: Path, kind: str) -> None:
    """A collection written by the previous release (no sparse vector at all): a hybrid search
    names `textbound ingest`; ensure_collection adds the BM25 slot and vectors in place, the
    dense vectors are untouched, the keyword is found, and it stays migrated when reopened."""
    from textbound.documents.store._sparse import SPARSE_VERSION
    from textbound.errors import SetupError

    s = _old_collection(kind, tmp_path / "d")
    vector = s.embeddings.embed_query("ROS_DOMAIN_ID?")
    before = [(h.chunk_id, h.score) for h in s.search(vector, 5)]
    with pytest.raises(SetupError, match="textbound ingest"):
        s.search(vector, 3, text="ROS_DOMAIN_ID?")
    s.ensure_collection(DIM)
    assert s.info()["metadata"]["sparse"] == SPARSE_VERSION and s.count() == 21
    after = [(h.chunk_id, h.score) for h in s.search(vector, 5)]
    assert [i for i, _ in after] == [i for i, _ in before]
    assert np.allclose([x for _, x in after], [x for _, x in before], atol=1e-6)
    keyword = chunk_id("old", 20)
    assert keyword in [h.chunk_id for h in s.search(vector, 3, text="ROS_DOMAIN_ID?",
                                                     candidates=5)]
    s.close()
    again = open_kind(kind, tmp_path / "d")
    assert keyword in [h.chunk_id for h in again.search(vector, 3, text="ROS_DOMAIN_ID?",
                                                         candidates=5)]
    write(again, "new.md", ["written after the migration"])
    assert again.count() == 22
    again.close()


def test_a_half_replaced_document_shows_one_version_to_searches(store: Any) -> None:
    """Hidden(version) keeps a new version out until the switch, Hidden(others) the old after."""
    from textbound.documents.store._types import Hidden

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


def test_a_pdf_chunks_printed_page_labels_round_trip(store: Store) -> None:
    """`page_label` and labelled `page_starts` come back as written, so citations name them."""
    from textbound.documents.ingest import page_label_at

    meta = {"source": "b.pdf", "section": "B", "start": 0, "end": 90, "page": 24,
            "page_label": "18", "page_starts": [[40, 25, "19"], [70, 26]]}
    cid = chunk_id("b.pdf", 0)
    store.upsert([cid], store.embeddings.embed_documents(["printed"]), ["printed"], [meta])
    (got,) = store.retrieve([cid])
    assert got.metadata["page_label"] == "18"
    assert got.metadata["page_starts"] == [[40, 25, "19"], [70, 26]]
    hit = store.search(store.embeddings.embed_query("printed"), 1)[0]
    assert [page_label_at(hit.metadata, at) for at in (None, 50, 80)] == ["18", "19", "26"]


def test_term_stats_know_the_commands_of_the_code(store: Store) -> None:
    """The word opening most code blocks is a command head; what follows it anywhere is known."""
    blocks = [f"To see the history, run:\n\n```\n$ git {cmd} --oneline\n```\n" for cmd in
              ("log", "show", "log", "diff", "status", "fetch")]
    write(store, "git.md", [*blocks, "Then git rebase moves your commits on top."])
    stats = store.term_stats()
    assert set(stats.commands) == {"git"}
    assert {"log", "show", "diff", "status", "fetch", "rebase"} <= stats.commands["git"]
    assert "blame" not in stats.commands["git"]
    write(store, "prose.md", ["Robots walk on two legs."])
    assert set(store.term_stats().commands) == {"git"}  # prose adds no head
