import pytest

from textbound.errors import EmbeddingMismatchError, StoreUnavailableError
from textbound.ingest import ingest
from textbound.store import VectorStore

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
    """A second process-like open of the same embedded folder gets an actionable message."""
    settings = make_settings(tmp_path / "d")
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
