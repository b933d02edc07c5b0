"""A literal with a sigil finds the entry a list writes without it.

GNU time's manual says "A resource specifier consists of a percent sign followed by another
character" and then lists them bare, "M: Maximum resident set size ...". "What does %M report?"
had nothing to read "%M" against, and was answered with a sentence about '%I' and '%O'.
"""

from __future__ import annotations

import pytest

from tests.conftest import page_evidence
from textbound.answer.candidates import quotes
from textbound.answer.compose import extractive_draft
from textbound.shapes import ChunkDict

PAGE = """<html><body><h2>The Format String</h2>
<p>A resource specifier consists of a percent sign followed by another character. Use %% to
output a literal percent sign. The meaning of the counts reported by %I and %O may be muddled on
diskless machines.</p>
<h3>Memory Resources</h3>
<dl>
<dt>M</dt><dd><p>Maximum resident set size of the rover's process, in Kilobytes.</p></dd>
<dt>m</dt><dd><p>Minimum free memory seen while the rover drove, in Kilobytes.</p></dd>
<dt>Z</dt><dd><p>The rover's page size, in bytes.</p></dd>
</dl></body></html>
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> list[ChunkDict]:
    return page_evidence(tmp_path_factory.mktemp("lit"), "time.html", PAGE)


def test_a_sigils_literal_counts_for_its_bare_entry_with_its_case() -> None:
    assert quotes("M: Maximum resident set size, in Kilobytes.", ["%M"]) == 1.0
    assert quotes("m: Minimum free memory seen, in Kilobytes.", ["%M"]) == 0.0
    assert quotes("Maximum resident set size is M kilobytes.", ["%M"]) == 0.0
    # an option keeps its dash: "-f" is no entry "f"
    assert quotes("f: the format.", ["-f"]) == 0.0


@pytest.mark.parametrize(("question", "opens"), [
    ("What does %M report?", "M: Maximum resident set size"),
    ("what does %Z show", "Z: The rover's page size"),
])
def test_the_entry_answers_the_literal(page, embeddings, question, opens) -> None:
    draft = extractive_draft(question, page, embeddings)
    quoted = [s["text"] for s in draft["sentences"]]
    assert quoted and quoted[0].startswith(opens), quoted
