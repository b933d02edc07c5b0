"""The best passage's neighbour in its section is evidence, under the gate's margin cut too.

A section longer than a chunk is cut into pieces, and the cut often falls between a sentence and
what it introduces: the lead-in and its command end one chunk, the explanation of what the
command did opens the next, and the question's words match the explanation better.
"""

from __future__ import annotations

from typing import Any

from graph.context import resolve_tunables
from nodes.score_gate import gate_chunks
from textbound.answer.evidence import adjoins

from ..conftest import make_settings

QUESTION = "How can I look at an old version without creating a new branch?"


def _chunk(cid: str, score: float, start: int, end: int, section: str = "Old versions",
           source: str = "manual.html") -> Any:
    return {"chunk_id": cid, "text": f"passage {cid} about an old version of the project",
            "score": score, "metadata": {"source": source, "section": section,
                                         "start": start, "end": end}}


def test_neighbours_share_a_section_and_touch() -> None:
    best = _chunk("best", 0.6, 1000, 1500)
    assert adjoins(_chunk("before", 0.4, 400, 998), best)  # two characters of white space
    assert adjoins(_chunk("after", 0.4, 1501, 2000), best)
    assert not adjoins(_chunk("far", 0.4, 1600, 2000), best)  # another part of the section
    assert not adjoins(_chunk("other", 0.4, 400, 998, section="New branches"), best)
    assert not adjoins(_chunk("file", 0.4, 400, 998, source="tutorial.html"), best)
    assert not adjoins({"chunk_id": "selected", "text": "x", "score": 0.4, "metadata": {}}, best)


def test_the_gate_keeps_the_best_chunks_neighbour_under_its_margin_cut(tmp_path: Any) -> None:
    tun = resolve_tunables(make_settings(tmp_path), {"answer_threshold": 0.0, "floor": 0.3})
    best = _chunk("best", 0.6, 1000, 1500)
    lead_in = _chunk("lead-in", 0.45, 400, 998)  # under the cut of 0.6 - margin
    far = _chunk("far", 0.45, 1600, 2000)
    elsewhere = _chunk("elsewhere", 0.58, 5000, 5400, section="Branches")
    assert 0.45 < 0.6 - tun.gate.chunk_margin
    _, found = gate_chunks(QUESTION, [best, elsewhere, lead_in, far], tun)
    assert found["evidence_ids"] == ["best", "elsewhere", "lead-in"]
    assert [e["chunk_id"] for e in found["excluded"]] == ["far"]
    # the neighbour of a chunk that is not the best one is held to the cut like any other
    _, found = gate_chunks(QUESTION, [best, elsewhere, _chunk("x", 0.45, 5402, 5800,
                                                                section="Branches")], tun)
    assert found["evidence_ids"] == ["best", "elsewhere"]
    # and under the floor nothing is evidence, neighbour or not
    _, found = gate_chunks(QUESTION, [best, _chunk("low", 0.2, 400, 998)], tun)
    assert found["evidence_ids"] == ["best"]
