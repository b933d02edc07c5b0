"""A reference entry's code title is the subject its sentences leave unsaid.

A small API reference page in Markdown (as Node.js writes its `api/*.md`) is loaded with the
app's loaders and answered by the extractive composer with the real embedding model. Before
this, "how do I get the current user's home directory" was answered "Returns the string path of
the current user's home directory.": right, and without the name of the function.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.conftest import page_evidence
from textbound.answer.compose import extractive_draft
from textbound.answer.grounding import draft_findings
from textbound.answer.named_section import code_title, named
from textbound.answer.support import cited_text
from textbound.documents.ingest.html import html_to_markdown
from textbound.shapes import ChunkDict

PAGE = """# Rover

The `rover` module provides rover-related utility methods and properties.

## `rover.homeDock()`

* Returns: {string}

Returns the string path of the dock the rover drives back to when its battery runs low.

## `rover.wheelCount()`

* Returns: {integer}

The rover.wheelCount() method returns how many wheels the rover has, six on every model.

## Driving the rover safely

Returns to the dock are slow on gravel, so plan the route before a long drive.
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> list[ChunkDict]:
    return page_evidence(tmp_path_factory.mktemp("api"), "rover.md", PAGE)


def _section(page: list[ChunkDict], title: str) -> ChunkDict:
    return next(c for c in page if c["metadata"]["section"].endswith(title))


def test_a_code_title_names_what_its_sentences_leave_unsaid(page) -> None:
    home = _section(page, "`rover.homeDock()`")
    assert code_title(home) == "`rover.homeDock()`"
    sentence = "Returns the string path of the dock the rover drives back to."
    assert named(home, sentence) == f"`rover.homeDock()`: {sentence}"
    # a sentence printing the name is left as it is; prose titles lend nothing
    wheels = _section(page, "`rover.wheelCount()`")
    said = "The rover.wheelCount() method returns how many wheels the rover has."
    assert named(wheels, said) == said
    prose = _section(page, "Driving the rover safely")
    assert code_title(prose) is None
    assert named(prose, "Returns to the dock are slow.") == "Returns to the dock are slow."


def test_the_answer_names_the_entry_and_stays_grounded(page, embeddings) -> None:
    draft = extractive_draft("how do i get the path of the rover's dock", page, embeddings)
    quoted = [s["text"] for s in draft["sentences"]]
    assert quoted and quoted[0].startswith("`rover.homeDock()`: Returns the string path"), quoted
    home = _section(page, "`rover.homeDock()`")
    assert cited_text(home).startswith("`rover.homeDock()`\n")
    limits = SimpleNamespace(sentence_support_threshold=0.7, grounding_threshold=1.0,
                             min_answer_coverage=0.0, confidence_threshold=0.0)
    found = draft_findings(draft, page, limits, embeddings)
    assert found["passed"] and all(s["supported"] for s in found["sentences"]), found


def test_an_html_heading_that_is_one_code_name_is_written_in_backquotes() -> None:
    page = ("<html><body><h2>Rover</h2>"
            "<h3><code>rover.homeDock()</code><span><a class=\"mark\" href=\"#d\">#</a></span></h3>"
            "<p>Returns the string path of the dock.</p>"
            "<h3><code>LIMIT</code> and <code>OFFSET</code></h3><p>Both cut the rows.</p>"
            "<h3>Driving <code>rover</code></h3><p>Plan the route.</p></body></html>")
    md, _ = html_to_markdown(page)
    headings = [line for line in md.splitlines() if line.startswith("#")]
    assert headings == ["## Rover", "### `rover.homeDock()`", "### LIMIT and OFFSET",
                        "### Driving rover"]
