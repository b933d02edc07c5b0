"""A book's own questions (an FAQ's) are never an answer: what follows one answers it.

A small FAQ page in the layout DocBook gives a question-and-answer set (a table of question and
answer rows, as Valgrind's FAQ is written) is loaded with the app's loaders and answered by the
extractive composer with the real embedding model. Before this rule the book's question, the
unit nearest the student's, led the answer ("Can I attach ...?" answered "Is it possible to
attach ...?"). Each question of such a set heads its answer as a section title does, one level
below the heading above it, so a question the book words as a statement ("Programs run OK on
Valgrind, but at exit produce a bunch of errors ...") is no answer either.
"""

from __future__ import annotations

import pytest

from tests.conftest import page_evidence
from textbound.answer.candidates import asks, candidates
from textbound.answer.compose import extractive_draft
from textbound.shapes import ChunkDict
from textbound.text import sentence_spans

FAQ = """<html><head><title>Rover FAQ</title></head><body>
<table width="100%" summary="Q and A Div">
<tr class="qandadiv"><td colspan="2"><h3 class="title">1. Driving</h3></td></tr>
<tr class="question"><td><b>1.1.</b></td>
<td><b>Is it possible to drive the rover up a flight of stairs?</b></td></tr>
<tr class="answer"><td></td><td>
<p>No. Its six wheels cannot lift the chassis over a step, so the rover stays on the floor it
starts on and a ramp is needed between floors.</p>
</td></tr>
<tr class="question"><td><b>1.2.</b></td>
<td><b>How long does the rover drive on one charge of its battery?</b></td></tr>
<tr class="answer"><td></td><td>
<p>About four hours at walking pace, eg. eight laps of the test track, and half that when it
tows the trailer.</p>
</td></tr>
<tr class="question"><td><b>1.3.</b></td>
<td><b>The rover stops dead after a minute on a gravel path and its front light blinks red.</b>
</td></tr>
<tr class="answer"><td></td><td>
<p>Its wheel guard is jammed by a stone. Lift the guard with the release lever and shake the
stone out, then press the reset button once.</p>
</td></tr>
</table></body></html>
"""


@pytest.fixture(scope="module")
def faq(tmp_path_factory: pytest.TempPathFactory) -> list[ChunkDict]:
    return page_evidence(tmp_path_factory.mktemp("faq"), "faq.html", FAQ)


def test_the_books_question_heads_its_answer_and_is_never_a_candidate(faq) -> None:
    text = "\n".join(c["text"] for c in faq)
    # one-paragraph answers in a table: read as the FAQ's blocks, never as a table
    assert "|" not in text
    # each question is the section title of its answer, below the set's own heading
    sections = {c["metadata"]["section"].split(" > ")[-1]: c for c in faq}
    stairs = sections["1.1. Is it possible to drive the rover up a flight of stairs?"]
    assert stairs["metadata"]["section"].split(" > ")[-2] == "1. Driving"
    assert stairs["text"].startswith("No. Its six wheels")
    assert "flight of stairs" not in text and "gravel path" not in text
    units = [c.unit.text for c in candidates("can my rover go up stairs?", faq)]
    assert units and not any(u.rstrip().endswith("?") for u in units)
    assert any(u.startswith("No. Its six wheels") for u in units)


@pytest.mark.parametrize(("question", "opens"), [
    ("can my rover go up stairs?", "No. Its six wheels cannot lift the chassis"),
    ("how many hours does a full battery last", "About four hours at walking pace"),
    ("my rover stops on gravel and the light blinks red, what do i do",
     "Its wheel guard is jammed by a stone"),
])
def test_the_answer_after_the_books_question_leads(faq, embeddings, question, opens) -> None:
    draft = extractive_draft(question, faq, embeddings)
    quoted = [s["text"] for s in draft["sentences"]]
    assert quoted and quoted[0].startswith(opens), quoted
    assert not any(q.rstrip().endswith("?") for q in quoted)


def test_ie_and_eg_do_not_end_a_sentence() -> None:
    text = ('The "grind" rhymes with a short i, ie. "grinned" rather than "grined". '
            "Charge it often, eg. after every run. Done.")
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        'The "grind" rhymes with a short i, ie. "grinned" rather than "grined".',
        "Charge it often, eg. after every run.", "Done."]


@pytest.mark.parametrize(("text", "question"), [
    ('How do you pronounce "Rovar"?', True),
    ("1.2. Can you write my configuration for me?", True),
    ("1.1.; Is it possible to drive the rover up a flight of stairs?", True),  # a table row
    ("What is justice?", True),
    # a statement that ends on the question it answers is a statement, and may answer
    ("The capture point, introduced in 2006, answers a practical question: where must the "
     "robot step to stop?", False),
    ("No. It cannot climb a step.", False),
])
def test_a_question_is_opened_by_a_wh_word_or_an_auxiliary(text, question) -> None:
    assert asks(text) is question
