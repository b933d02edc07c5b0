"""A data folder made by the old embedded store (qdrant-client local mode) is detected, never
ignored or overwritten, and `textbound migrate-store` converts it to Edge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textbound.documents.store import EdgeStore, open_store
from textbound.documents.store._migrate import legacy_collections, migrate
from textbound.errors import SetupError

from ..conftest import make_settings
from .test_store_contract import DIM, HashEmbeddings, write


@pytest.fixture
def old_folder(tmp_path: Path) -> Path:
    """A data folder whose 'textbook' collection was written by qdrant-client's local mode."""
    data = tmp_path / "d"
    s = open_store(make_settings(data, store="local"), HashEmbeddings())
    s.ensure_collection(DIM)
    write(s, "a.md", ["alpha one", "beta two", "gamma three"], with_sentences=True)
    s.close()
    return data


def test_the_old_layout_is_reported_with_the_command_that_converts_it(old_folder: Path) -> None:
    """The Edge store does not treat the old collection as missing: it names migrate-store."""
    s = open_store(make_settings(old_folder), HashEmbeddings())
    for use in (s.exists, s.count, lambda: s.search([0.1] * DIM, 3),
                lambda: s.ensure_collection(DIM)):
        with pytest.raises(SetupError, match="textbound migrate-store"):
            use()
    s.close()
    assert legacy_collections(make_settings(old_folder)) == ["textbook"]


def test_migrate_copies_points_payloads_and_model_record(old_folder: Path) -> None:
    """After migrating, Edge holds the same ids, payloads and scores; the old folder is kept."""
    settings = make_settings(old_folder)
    old = open_store(make_settings(old_folder, store="local"), HashEmbeddings())
    q = old.embeddings.embed_query("beta two")
    want = [(h.chunk_id, h.score, h.text, h.metadata) for h in old.search(q, 3)]
    want_sv = old.sentence_vectors([want[0][0]])
    old.close()
    (done,) = migrate(settings)
    assert (done.collection, done.points, done.status) == ("textbook", 3, "converted")
    new = open_store(settings, HashEmbeddings())
    assert isinstance(new, EdgeStore) and new.count() == 3
    got = [(h.chunk_id, h.score, h.text, h.metadata) for h in new.search(q, 3)]
    assert [g[0] for g in got] == [w[0] for w in want]
    assert all(abs(g[1] - w[1]) < 1e-5 and g[2:] == w[2:] for g, w in zip(got, want, strict=True))
    got_sv = new.sentence_vectors([want[0][0]])[want[0][0]]
    assert got_sv.spans == want_sv[want[0][0]].spans
    assert new.info()["metadata"]["embedding_model"] == "HashEmbeddings:hash-16"
    new.close()
    assert (old_folder / "qdrant" / "collection" / "textbook" / "storage.sqlite").exists()
    (again,) = migrate(settings)
    assert again.status == "already converted" and again.points == 3


def test_the_cli_command_converts_and_prints_json(old_folder: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`textbound migrate-store --json` converts every old collection."""
    from textbound.serving.cli import app

    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(old_folder))
    result = CliRunner().invoke(app, ["migrate-store", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["status"] == "converted"
