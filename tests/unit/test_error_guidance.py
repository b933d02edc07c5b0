"""Errors and refusals that a fresh install meets say what to do, not "try again"."""

from __future__ import annotations

import pytest

from graph.builder import build_graph, build_services
from textbound.documents.store import VectorStore
from textbound.errors import ConfigError
from textbound.settings import load_settings

from ..conftest import make_settings


def test_an_empty_collection_refusal_names_the_ingest_command(tmp_path, embeddings):
    """Nothing ingested: the refusal says `textbound ingest PATH`, and diagnostics mark it."""
    settings = make_settings(tmp_path, collection="empty")
    store = VectorStore.from_settings(settings, embeddings)
    try:
        out = build_graph(settings=settings, embeddings=embeddings, store=store).invoke(
            {"question": "What is a glider?"})
    finally:
        store.close()
    assert out["refusal_reason"] == "store_unavailable"
    assert "textbound ingest PATH" in out["answer"] and "'empty'" in out["answer"]
    assert "try again" not in out["answer"].lower()
    assert out["diagnostics"]["error_kind"] == "not_ingested"


def test_asking_for_the_chat_generator_without_a_model_says_how_to_set_one(
        tmp_path, embeddings, fake_store):
    """A per-run generator=chat with no model: the refusal names TEXTBOUND_CHAT_MODEL."""
    graph = build_graph(settings=make_settings(tmp_path), embeddings=embeddings,
                        store=fake_store)
    out = graph.invoke({"question": "What is a topic?"}, context={"generator": "chat"})
    assert out["refusal_reason"] == "generation_error"
    assert "TEXTBOUND_CHAT_MODEL" in out["answer"] and "try again" not in out["answer"].lower()


def test_a_chat_generator_setting_without_a_model_fails_at_start(tmp_path, embeddings,
                                                                  fake_store):
    """TEXTBOUND_GENERATOR=chat with no TEXTBOUND_CHAT_MODEL is a configuration error."""
    with pytest.raises(ConfigError, match="TEXTBOUND_CHAT_MODEL"):
        build_services(settings=make_settings(tmp_path, generator="chat"),
                       embeddings=embeddings, store=fake_store)


def test_a_bad_value_names_the_variable_and_what_it_allows(monkeypatch):
    """Every bad value in one line: variable, value, allowed values; no pydantic dump."""
    monkeypatch.setenv("TEXTBOUND_TOP_K", "abc")
    monkeypatch.setenv("TEXTBOUND_REFUSAL_STYLE", "loud")
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    message = str(caught.value)
    assert "\n" not in message
    assert "TEXTBOUND_TOP_K=abc: expected an integer from 1 to 50" in message
    assert "TEXTBOUND_REFUSAL_STYLE=loud: expected one of 'detailed', 'standard'" in message
