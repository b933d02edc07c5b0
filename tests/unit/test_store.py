import numpy as np
import pytest

from graph.builder import build_graph
from textbound.answer.compose import extractive_draft
from textbound.documents.ingest import ingest
from textbound.documents.store import SentenceVectors, VectorStore
from textbound.errors import EmbeddingMismatchError, StoreUnavailableError
from textbound.text.units import answer_spans, answer_units

from ..conftest import make_settings


class OtherEmbeddings:
    """A different 'model' with the same dimension."""

    model_name = "some-other-model"
    dimension = 384

    def embed_query(self, text):
        return [1.0] + [0.0] * 383

    def embed_documents(self, texts):
        return [self.embed_query(t) for t in texts]


def test_collection_records_its_embedding_model(tmp_path, embeddings):
    """The collection metadata names the model and dimension that built it."""
    (tmp_path / "a.md").write_text("# A\n\nRobots walk.\n")
    store = VectorStore.from_settings(make_settings(tmp_path / "d"), embeddings)
    ingest(store, [tmp_path / "a.md"])
    info = store.info()
    assert info["metadata"]["embedding_model"].endswith("all-MiniLM-L6-v2")
    assert info["dimension"] == 384
    store.close()


def test_querying_with_another_model_is_a_clear_error(tmp_path, embeddings):
    """Searching a collection with different embeddings raises instead of returning scores."""
    settings = make_settings(tmp_path / "d")
    (tmp_path / "a.md").write_text("# A\n\nRobots walk.\n")
    store = VectorStore.from_settings(settings, embeddings)
    ingest(store, [tmp_path / "a.md"])
    store.close()
    other = VectorStore.from_settings(settings, OtherEmbeddings())
    with pytest.raises(EmbeddingMismatchError, match="built with .*all-MiniLM-L6-v2"):
        other.search(OtherEmbeddings().embed_query("x"), 3)
    other.close()


def test_scores_are_raw_cosine(tmp_path, embeddings):
    """A chunk searched with its own embedding text scores cosine ~1.0, not (1+1)/2 rescaled."""
    (tmp_path / "a.md").write_text("Robots walk on two legs.\n")
    store = VectorStore.from_settings(make_settings(tmp_path / "d"), embeddings)
    ingest(store, [tmp_path / "a.md"])
    far = store.search(embeddings.embed_query("zzzz qqqq"), 1)[0].score
    exact = store.search(embeddings.embed_query("a\nRobots walk on two legs."), 1)[0].score
    assert exact > 0.99 and far < 0.5
    store.close()


def test_locked_embedded_store_names_the_fix(tmp_path, embeddings):
    """A second open of a collection another handle holds gets an actionable message."""
    settings = make_settings(tmp_path / "d")
    (tmp_path / "a.md").write_text("# A\n\nRobots walk.\n")
    first = VectorStore.from_settings(settings, embeddings)
    ingest(first, [tmp_path / "a.md"])
    try:
        with pytest.raises(StoreUnavailableError, match="TEXTBOUND_QDRANT_URL") as caught:
            VectorStore.from_settings(settings, embeddings)
        assert "in use by another textbound process" in str(caught.value)
    finally:
        first.close()


def test_locked_local_mode_store_names_the_fix(tmp_path, embeddings):
    """qdrant-client's local mode (TEXTBOUND_STORE=local) locks its whole folder, clearly too."""
    settings = make_settings(tmp_path / "d", store="local")
    first = VectorStore.from_settings(settings, embeddings)
    try:
        with pytest.raises(StoreUnavailableError, match="TEXTBOUND_QDRANT_URL"):
            VectorStore.from_settings(settings, embeddings)
    finally:
        first.close()


def test_unreachable_server_is_store_unavailable(tmp_path, embeddings):
    """A Qdrant URL nobody listens on fails as StoreUnavailableError, not a raw traceback."""
    import pytest_socket

    pytest_socket.enable_socket()
    settings = make_settings(tmp_path, qdrant_url="http://127.0.0.1:9", qdrant_timeout_s=1)
    store = VectorStore.from_settings(settings, embeddings)
    with pytest.raises(StoreUnavailableError, match="unavailable"):
        store.exists()


class CountingEmbeddings:
    """Wraps the real embeddings and counts the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner = inner
        self.model_name = inner.model_name
        self.dimension = inner.dimension
        self.texts = 0

    def embed_query(self, text):
        self.texts += 1
        return self.inner.embed_query(text)

    def embed_documents(self, texts):
        self.texts += len(texts)
        return self.inner.embed_documents(texts)


BOOK = ("# Motors\n\nA servo motor holds a commanded angle using feedback from a sensor. "
        "A stepper motor moves in fixed steps without any feedback at all.\n\n"
        "```\nthis code line is not prose\n```\n\nBrushless motors need an electronic "
        "controller to switch their coils.\n")


def test_sentence_vectors_round_trip_and_reject_malformed_payloads():
    """The payload form decodes to the same spans and float32 vectors; junk decodes to None."""
    vecs = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    sv = SentenceVectors([(0, 5), (6, 9), (10, 20)], vecs)
    back = SentenceVectors.decode(sv.encode())
    assert back is not None and back.spans == sv.spans
    assert np.array_equal(back.vectors, vecs)
    assert SentenceVectors.decode({"spans": [[0, 1]], "dim": 4, "f32": "AAAA"}) is None
    assert SentenceVectors.decode({"spans": "x"}) is None


def test_ingest_stores_the_answer_sentences_vectors(tmp_path, embeddings):
    """Each chunk carries its answer sentences' embeddings; searches do not return them."""
    (tmp_path / "a.md").write_text(BOOK)
    store = VectorStore.from_settings(make_settings(tmp_path / "d"), embeddings)
    ingest(store, [tmp_path / "a.md"])
    hit = store.search(embeddings.embed_query("servo motor feedback"), 1)[0]
    assert "sentence_vectors" not in hit.metadata
    stored = store.sentence_vectors([hit.chunk_id])[hit.chunk_id]
    units = answer_units(hit.text)
    assert stored.spans == answer_spans(hit.text)
    # the sentence before the code block is its lead-in: the two make one `block` unit, the
    # sentence alone a `lead`; every unit is embedded, the code alone too
    assert [u.kind for u in units] == ["prose", "block", "lead", "code", "prose"]
    expect = np.asarray(embeddings.embed_documents([u.text for u in units]))
    assert np.allclose(stored.vectors, expect, atol=1e-5)
    store.close()


def test_the_rows_of_a_long_tables_later_chunk_are_embedded_with_its_header(tmp_path, embeddings):
    """A chunk that opens inside a long table embeds its rows as they read: with the header
    cells the chunk carries (metadata `table_header`), not as bare cells."""
    rows = "".join(f"| joint {n} | {n * 10} degrees | servo model {n} |\n" for n in range(60))
    (tmp_path / "t.md").write_text(f"# Joints\n\n| Joint | Range | Servo |\n|---|---|---|\n{rows}")
    store = VectorStore.from_settings(make_settings(tmp_path / "d"), embeddings)
    ingest(store, [tmp_path / "t.md"])
    later = [c for c in store.retrieve([cid for cid, _ in store.scroll()])
             if "table_header" in c.metadata]
    assert later
    stored = store.sentence_vectors([later[0].chunk_id])[later[0].chunk_id]
    named = answer_units(later[0].text, later[0].metadata["table_header"])
    assert named[0].text.startswith("Joint: joint ")
    expect = np.asarray(embeddings.embed_documents([u.text for u in named]))
    assert np.allclose(stored.vectors, expect, atol=1e-5)
    store.close()


def test_ingest_without_sentence_vectors_stores_none(tmp_path, embeddings):
    """With sentence_vectors off, only the chunk is embedded (and nothing is stored)."""
    (tmp_path / "a.md").write_text(BOOK)
    counting = CountingEmbeddings(embeddings)
    store = VectorStore.from_settings(make_settings(tmp_path / "d"), counting)
    summary = ingest(store, [tmp_path / "a.md"], sentence_vectors=False)
    assert summary.chunks_added == 1 and counting.texts == 1
    hit = store.search(embeddings.embed_query("servo"), 1)[0]
    assert store.sentence_vectors([hit.chunk_id]) == {}
    store.close()


def test_an_answer_embeds_nothing_when_sentences_are_stored(tmp_path, embeddings):
    """With stored sentence vectors, the only text embedded per answer is the question, once;
    the draft is the same as when every sentence is embedded on the spot."""
    (tmp_path / "a.md").write_text(BOOK)
    counting = CountingEmbeddings(embeddings)
    settings = make_settings(tmp_path / "d")
    store = VectorStore.from_settings(settings, counting)
    ingest(store, [tmp_path / "a.md"])
    graph = build_graph(settings=settings, embeddings=counting, store=store)
    counting.texts = 0
    out = graph.invoke({"question": "How does a servo motor hold its angle?"})
    assert not out["was_refusal"], out["refusal_reason"]
    assert counting.texts == 1
    assert "servo motor holds a commanded angle" in out["answer"]
    chunks = [{"chunk_id": h.chunk_id, "text": h.text, "score": h.score, "metadata": h.metadata}
              for h in store.search(embeddings.embed_query("servo"), 1)]
    q = "How does a servo motor hold its angle?"
    fresh = extractive_draft(q, chunks, embeddings)
    stored = extractive_draft(q, chunks, embeddings, query_vector=embeddings.embed_query(q),
                              stored=store.sentence_vectors([chunks[0]["chunk_id"]]))
    assert [s["text"] for s in fresh["sentences"]] == [s["text"] for s in stored["sentences"]]
    store.close()


def test_search_reads_each_payload_once_and_forgets_deleted_chunks(tmp_path, embeddings):
    """Payloads are fetched by id once and kept; a re-ingested file's old chunks are not
    returned from memory after they are deleted."""
    doc = tmp_path / "a.md"
    doc.write_text("# Motors\n\nA servo motor holds a commanded angle using feedback.\n")
    store = VectorStore.from_settings(make_settings(tmp_path / "d"), embeddings)
    ingest(store, [doc])
    q = embeddings.embed_query("servo motor angle")
    first = store.search(q, 3)
    calls = []
    real = store._payloads
    store._payloads = lambda *a, **k: calls.append(k) or real(*a, **k)  # type: ignore[method-assign]
    assert store.search(q, 3) == first and calls == []  # served from memory
    store._payloads = real  # type: ignore[method-assign]
    doc.write_text("# Motors\n\nA stepper motor moves in fixed steps without feedback.\n")
    ingest(store, [doc])
    again = store.search(q, 3)
    assert [h.chunk_id for h in again] != [h.chunk_id for h in first]
    assert all("servo" not in h.text for h in again)
    store.close()


def test_opened_store_releases_the_folder_when_the_block_fails(tmp_path, embeddings):
    """A command that fails half-way must not leave the embedded store locked."""
    from textbound.documents.store import opened_store

    settings = make_settings(tmp_path / "d")
    with pytest.raises(RuntimeError), opened_store(settings, embeddings) as store:
        store.ensure_collection(embeddings.dimension)
        raise RuntimeError("ingest failed half-way")
    with opened_store(settings, embeddings) as again:  # would raise StoreInUseError if locked
        assert again.exists()


def test_langchain_from_texts_without_a_store_fills_an_in_memory_one() -> None:
    """StoreVectorStore.from_texts (LangChain's constructor) defaults to a MemoryStore."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from textbound.documents.store._langchain import StoreVectorStore
    from textbound.documents.store.memory import MemoryStore

    vs = StoreVectorStore.from_texts(["tide pools", "kelp forests"],
                                     DeterministicFakeEmbedding(size=8))
    assert isinstance(vs.store, MemoryStore)
    [(doc, score)] = vs.similarity_search_with_score("kelp forests", k=1)
    assert doc.page_content == "kelp forests" and score == pytest.approx(1.0)
