"""The lists of refusal reasons and steps kept outside graph/ cover every reason and node."""

import re

from graph.builder import build_graph
from graph.state import RefusalReason
from textbound.analytics import CATEGORY_OF_REASON
from textbound.settings import PACKAGE_ROOT

from ..conftest import make_settings

READER_JS = (PACKAGE_ROOT / "textbound" / "reader" / "static" / "reader.js").read_text()


def _js_keys(name: str) -> set[str]:
    block = re.search(rf"const {name} = \{{(.*?)\n\}};", READER_JS, re.S)
    assert block is not None, name
    return set(re.findall(r"^\s*(\w+):", block.group(1), re.M))


def test_every_refusal_reason_has_an_analytics_category():
    """The refusal report files every reason under a category, none under "other"."""
    assert {r.value for r in RefusalReason} <= set(CATEGORY_OF_REASON)


def test_every_refusal_reason_has_words_on_the_reader_page():
    """The reader page explains every refusal reason in plain words."""
    assert {r.value for r in RefusalReason} <= _js_keys("REFUSAL_REASONS")


def test_every_step_has_a_progress_label_on_the_reader_page(tmp_path, embeddings, fake_store):
    """Every non-refusal node, check_answerable included, has a progress label."""
    graph = build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=fake_store)
    steps = {n for n in graph.get_graph().nodes
             if not n.startswith(("refuse_", "__"))}
    assert "check_answerable" in steps and steps <= _js_keys("STEP_LABELS")
