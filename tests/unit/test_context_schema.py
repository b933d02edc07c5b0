"""Studio's settings form shows the values in force, not null."""

from graph.builder import build_graph
from graph.context import resolve_tunables

from ..conftest import make_settings


def test_the_context_schema_shows_the_settings_in_force(tmp_path, embeddings, fake_store):
    """Each field's default is the server's value (environment and calibration included)."""
    settings = make_settings(tmp_path, top_k=7, policy="seed_002")
    graph = build_graph(settings=settings, embeddings=embeddings, store=fake_store)
    props = graph.get_context_jsonschema()["properties"]
    assert props["top_k"]["default"] == 7
    assert props["policy"]["default"] == "seed_002"
    assert props["floor"]["default"] == resolve_tunables(settings).floor  # from the calibration
    assert all(p["default"] is not None for p in props.values())
    assert all(p.get("description") for p in props.values())


def test_a_run_that_leaves_a_field_out_keeps_the_servers_value(tmp_path, embeddings, fake_store):
    """The real defaults live in the schema only: an omitted field still means the setting."""
    graph = build_graph(settings=make_settings(tmp_path, top_k=2), embeddings=embeddings,
                        store=fake_store)
    out = graph.invoke({"question": "What is a topic?"}, context={"min_chunks": 1})
    assert out["diagnostics"]["thresholds"]["top_k"] == 2
    out = graph.invoke({"question": "What is a topic?"}, context={"top_k": 3})
    assert out["diagnostics"]["thresholds"]["top_k"] == 3
