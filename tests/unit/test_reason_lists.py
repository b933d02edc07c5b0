"""RefusalReason is the one list of refusal reasons; every consumer reads it, none keeps a copy."""

import json
import re
from collections import Counter

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import prompts
from graph.builder import build_graph
from graph.reasons import REASONS as TABLE
from graph.state import RefusalReason
from textbound.quality import analytics
from textbound.serving.reader import mount
from textbound.settings import PACKAGE_ROOT

from ..conftest import make_settings

READER_JS = (PACKAGE_ROOT / "textbound" / "serving" / "reader" / "static" / "reader.js").read_text()
REASONS = [r.value for r in RefusalReason]


def _js_keys(name: str) -> set[str]:
    block = re.search(rf"const {name} = \{{(.*?)\n\}};", READER_JS, re.S)
    assert block is not None, name
    return set(re.findall(r"^\s*(\w+):", block.group(1), re.M))


@pytest.fixture
def reader_info(tmp_path, embeddings, fake_store):
    app = FastAPI()
    mount(app, settings=make_settings(tmp_path, collection="fake"), store=fake_store)
    with TestClient(app) as client:
        yield client.get("/api/reader").json(), client.get("/openapi.json").json()


@pytest.fixture(scope="module")
def graph_nodes(tmp_path_factory, embeddings):
    from tests.conftest import book_store

    graph = build_graph(settings=make_settings(tmp_path_factory.mktemp("g")),
                        embeddings=embeddings, store=book_store(embeddings))
    return set(graph.get_graph().nodes)


def test_reasons_are_plain_strings_in_json():
    """A member equals its value and serialises as it, so the response contract is unchanged."""
    assert RefusalReason.QUESTION_NOT_ANSWERED == "question_not_answered"
    assert json.dumps({"r": RefusalReason.STORE_UNAVAILABLE}) == '{"r": "store_unavailable"}'
    assert RefusalReason.OUT_OF_SCOPE.node == "refuse_out_of_scope"


@pytest.mark.parametrize("reason", list(RefusalReason), ids=REASONS)
def test_every_reason_is_known_to_every_consumer(reason, graph_nodes):
    """Each reason has a terminal node, a message, a heading and an analytics category."""
    assert reason.node in graph_nodes
    assert prompts.refusal_template(reason).strip()
    assert prompts.refusal_label(reason).strip()
    assert reason in analytics.CATEGORY_OF_REASON


def test_graph_has_one_terminal_per_reason(graph_nodes):
    """The graph's refuse_* nodes are exactly the reasons' nodes."""
    assert {n for n in graph_nodes if n.startswith("refuse_")} == {r.node for r in RefusalReason}


def test_the_table_declares_every_reason_once_in_the_enums_order():
    """graph/reasons.py's table has one entry per reason, in the order everything lists them."""
    assert list(TABLE) == list(RefusalReason)
    assert all(spec.gates for spec in TABLE.values())


def test_analytics_counts_every_reason_under_its_category(tmp_path):
    """An audit log with one refusal per reason counts each, and none falls under "other"."""
    log = tmp_path / "audit.jsonl"
    log.write_text("".join(json.dumps({
        "event": "refusal", "timestamp": "2025-03-03T10:00:00.000Z", "question": f"q {r}?",
        "refusal_reason": r, "selected_text": False}) + "\n" for r in REASONS))
    summary = analytics.scan_log(log)
    assert summary.reasons == Counter(REASONS)
    assert set(analytics.CATEGORY_OF_REASON) == set(RefusalReason)
    for r in RefusalReason:
        assert analytics.classify(Counter({r.value: 1}), 1, min_count=1) != "other", r


def test_reader_info_serves_exactly_the_reasons_in_order(reader_info):
    """GET /api/reader serves every reason, in the enum's order, and OpenAPI describes the field."""
    info, openapi = reader_info
    assert list(info["refusal_reasons"]) == REASONS
    assert info["refusal_reasons"] == {r: prompts.refusal_label(r) for r in REASONS}
    schema = openapi["components"]["schemas"]["ReaderInfo"]["properties"]["refusal_reasons"]
    assert "refusal_reason" in schema["description"]


def test_reader_page_keeps_no_copy_of_the_reasons():
    """reader.js reads the reasons from /api/reader; no reason is spelled out in the script."""
    assert "refusal_reasons" in READER_JS
    assert [r for r in REASONS if r in READER_JS] == []


def test_every_step_has_a_progress_label_on_the_reader_page(graph_nodes):
    """Every non-refusal node, check_answerable included, has a progress label."""
    steps = {n for n in graph_nodes if not n.startswith(("refuse_", "__"))}
    assert "check_answerable" in steps and steps <= _js_keys("STEP_LABELS")
