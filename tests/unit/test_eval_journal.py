"""The resumable evaluation journal (`textbound eval --generator chat`): one question at a time,
each record with its draft appended, a second run skipping what the first finished."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from textbound.errors import SetupError
from textbound.quality.evaluation.journal import run_journaled
from textbound.quality.evaluation.runner import make_record

QUESTIONS = [
    {"id": f"q{n}", "question": f"What is thing {n}?", "expected": "answer", "kind": "answerable",
     "answers": [f"thing {n}"]} for n in range(4)
]


class StreamingGraph:
    """What `run_journaled` needs of a graph: stream() with updates and values; can crash."""

    def __init__(self, crash_on: str | None = None) -> None:
        self.asked: list[str] = []
        self.crash_on = crash_on

    def stream(self, payload: dict[str, Any], context: dict[str, Any],
               stream_mode: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        q = payload["question"]
        if self.crash_on and self.crash_on in q:
            raise KeyboardInterrupt  # the user stops the run mid-way
        self.asked.append(q)
        draft = {"sentences": [{"text": f"It is {q[8:-1]}.", "citations": ["c1"]}],
                 "confidence": 0.9, "generator": "chat"}
        yield "updates", {"generate": {"draft": draft, "generation_error": None}}
        yield "values", {"answer": f"It is {q[8:-1]}. [1]", "was_refusal": False,
                         "refusal_reason": None, "sources": [], "confidence_level": "high",
                         "suggestions": [], "diagnostics": {"path": "release_answer"}}


def test_records_keep_drafts_and_a_rerun_resumes(tmp_path: Path) -> None:
    """A run stopped at the third question keeps two records; the rerun asks only the rest."""
    path = tmp_path / "journal" / "calibrated.jsonl"
    context = {"policy": "calibrated", "generator": "chat"}
    with pytest.raises(KeyboardInterrupt):
        run_journaled(StreamingGraph(crash_on="thing 2"), QUESTIONS, context, path, make_record)
    first = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in first] == ["q0", "q1"]
    assert first[0]["draft"]["sentences"][0]["text"] == "It is thing 0."
    assert first[0]["correct"] is True and first[0]["seconds"] >= 0

    graph = StreamingGraph()
    ticks: list[int] = []
    records = run_journaled(graph, QUESTIONS, context, path, make_record,
                            on_done=lambda: ticks.append(1))
    assert graph.asked == ["What is thing 2?", "What is thing 3?"]
    assert [r["id"] for r in records] == ["q0", "q1", "q2", "q3"]
    assert len(ticks) == 4  # the progress bar counts the resumed questions too
    assert len(path.read_text().splitlines()) == 4


def test_cut_short_last_line_is_run_again(tmp_path: Path) -> None:
    """A record half-written when the run was killed is dropped, and its question re-asked."""
    path = tmp_path / "calibrated.jsonl"
    context = {"policy": "calibrated", "generator": "chat"}
    run_journaled(StreamingGraph(), QUESTIONS[:1], context, path, make_record)
    path.write_text(path.read_text() + '{"id": "q1", "kind": "answ')
    graph = StreamingGraph()
    records = run_journaled(graph, QUESTIONS[:2], context, path, make_record)
    assert graph.asked == ["What is thing 1?"] and [r["id"] for r in records] == ["q0", "q1"]


def test_journal_of_another_run_is_refused(tmp_path: Path) -> None:
    """Resuming with another generator or policy would mix two runs: refused with a reason."""
    path = tmp_path / "calibrated.jsonl"
    run_journaled(StreamingGraph(), QUESTIONS[:1], {"policy": "calibrated"}, path, make_record)
    with pytest.raises(SetupError, match="another --out folder"):
        run_journaled(StreamingGraph(), QUESTIONS, {"policy": "calibrated", "generator": "chat"},
                      path, make_record)
