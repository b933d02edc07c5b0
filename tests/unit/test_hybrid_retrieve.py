"""The retrieve node over hybrid retrieval: keyword questions found by BM25, scores still cosine."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from langgraph.runtime import Runtime

from graph.context import resolve_tunables
from nodes.retrieve import retrieve
from textbound.documents.store.memory import MemoryStore
from textbound.errors import SetupError
from textbound.fakes import HashEmbedder

from ..conftest import make_settings

FILLER = ("robot joint sensor camera lidar torque motor planner gripper wheel battery servo "
          "encoder actuator kinematics odometry navigation mapping trajectory controller").split()
KEYWORDS = {
    "What does ROS_DOMAIN_ID do?": "Set ROS_DOMAIN_ID so that nodes only see their own domain.",
    "When do I pass --symlink-install?": "The --symlink-install flag links Python files instead "
                                         "of copying them, so edits apply without a rebuild.",
    "What is tegrastats for?": "Run tegrastats on the Jetson to watch memory and power draw.",
}


@pytest.fixture
def store() -> MemoryStore:
    """1,000 filler chunks and one chunk stating each keyword verbatim.

    The vectors are 1024-d hashes (cosines near 0, as unrelated texts get from a real model), so
    a question's dense vector is unrelated to every chunk and only its words can find the passage.
    """
    rng = np.random.default_rng(11)
    texts = [" ".join(rng.choice(FILLER, size=12)) for _ in range(1000)] + list(KEYWORDS.values())
    s = MemoryStore(HashEmbedder(1024))
    s.ensure_collection(1024)
    ids = [f"00000000-0000-4000-8000-{n:012d}" for n in range(len(texts))]
    s.upsert(ids, s.embeddings.embed_documents(texts), texts,
             [{"source": "book.md", "section": "Book > Part"} for _ in texts])
    return s


def _run(store: MemoryStore, question: str, tmp_path: Any, **update: Any) -> dict[str, Any]:
    settings = make_settings(tmp_path).model_copy(update=update)
    state: Any = {"clean_question": question}
    return retrieve(state, Runtime(context=resolve_tunables(settings)), store=store,
                    embeddings=store.embeddings)


@pytest.mark.parametrize("question", list(KEYWORDS))
def test_a_keyword_stated_verbatim_is_found_by_bm25_where_dense_misses(
        store: MemoryStore, question: str, tmp_path: Any) -> None:
    """An environment variable, a flag and a command: dense retrieval (and its re-ranking)
    misses the one chunk stating it; hybrid retrieval returns it among the top_k."""
    passage = KEYWORDS[question]
    dense = _run(store, question, tmp_path, retrieval="dense")
    assert passage not in [c["text"] for c in dense["chunks"]]
    hybrid = _run(store, question, tmp_path)
    assert passage in [c["text"] for c in hybrid["chunks"]]


def test_hybrid_chunks_keep_raw_cosine_with_the_fused_score_beside(
        store: MemoryStore, tmp_path: Any) -> None:
    """The gate reads `score`, the raw cosine, whatever the retrieval; `fused` is reported."""
    out = _run(store, "What does ROS_DOMAIN_ID do?", tmp_path)
    q = np.asarray(store.embeddings.embed_query("What does ROS_DOMAIN_ID do?"))
    for c in out["chunks"]:
        v = np.asarray(store.embeddings.embed_query(c["text"]))
        assert c["score"] == pytest.approx(float(q @ v), abs=1e-5)
        assert c["fused"] > 0
    assert all("fused" not in c for c in _run(store, "What does ROS_DOMAIN_ID do?", tmp_path,
                                               retrieval="dense")["chunks"])


def test_an_old_collection_is_a_retrieval_error_naming_the_command(tmp_path: Any) -> None:
    """A collection made before hybrid retrieval: the node records the SetupError (it names
    `textbound ingest`) instead of raising; retrieval=dense still serves it."""
    s = MemoryStore(HashEmbedder(16))
    s.ensure_collection(16)
    s.upsert(["00000000-0000-4000-8000-000000000001"], [s.embeddings.embed_query("x")],
             ["Set ROS_DOMAIN_ID first."], [{"source": "a.md"}])
    with s._using("rewind") as h:
        s._set_metadata(h, {"sparse": None})
    s._checked = s._hybrid = False
    out = _run(s, "What does ROS_DOMAIN_ID do?", tmp_path)
    assert out["chunks"] == [] and "textbound ingest" in out["retrieval_error"]
    assert _run(s, "What does ROS_DOMAIN_ID do?", tmp_path, retrieval="dense")["chunks"]
    with pytest.raises(SetupError):
        s.search(s.embeddings.embed_query("q"), 1, text="ROS_DOMAIN_ID")
