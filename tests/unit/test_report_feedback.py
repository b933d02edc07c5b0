"""The report's "Answers students marked wrong": latest rating per run, grouped by chapter."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from textbound.quality import analytics as an
from textbound.records.feedback import FeedbackLog

SERVICES = {"chunk_id": "c-srv", "source": "02-ros2-fundamentals.md",
            "section": "Chapter 2: ROS 2 Fundamentals > Services", "page": None,
            "excerpt": "A service is defined by a .srv file."}
GAZEBO = {"chunk_id": "c-gz", "source": "03-simulation-digital-twins.md",
          "section": "Chapter 3: Simulation > Gazebo"}


def audit(path: Path) -> Path:
    line = {"event": "answer", "timestamp": "2026-11-25T01:00:00.000Z", "question": "q",
            "refusal_reason": None, "sources": []}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def rating(rating: str, *, run_id: str | None = None, ts: str = "2026-11-25T02:00:00.000Z",
           sources: list[dict[str, Any]] | None = None, refusal: str | None = None,
           **extra: Any) -> dict[str, Any]:
    return {"event": "feedback", "timestamp": ts, "run_id": run_id or str(uuid.uuid4()),
            "rating": rating, "comment": None, "thread_id": None, "asked_question": "asked?",
            "question": "asked?", "answer": None if refusal else "An answer [1].",
            "was_refusal": refusal is not None, "refusal_reason": refusal,
            "sources": sources or [], **extra}


def report(tmp_path: Path, *records: dict[str, Any]) -> tuple[an.ReportResult, str, str, dict]:
    log = audit(tmp_path / "audit.jsonl")
    fl = FeedbackLog(tmp_path / "feedback.jsonl")
    for r in records:
        fl.append(r)
    result = an.build_report(log, tmp_path / "out", locate=lambda t: [("x", 0.9)] * len(t))
    out = tmp_path / "out"
    return (result, (out / "report.md").read_text(encoding="utf-8"),
            (out / "report.html").read_text(encoding="utf-8"),
            json.loads((out / "summary.json").read_text(encoding="utf-8")))


def test_down_rated_answers_are_listed_by_chapter_with_question_answer_comment_and_passage(
        tmp_path: Path) -> None:
    """Each chapter gets its marked-wrong runs; refusals have a group of their own."""
    result, md, html, summary = report(
        tmp_path,
        rating("down", sources=[SERVICES], asked_question="What file defines its interface?",
               question="What file defines a ROS 2 service's interface?",
               answer="A message file (.msg) defines it [1].", comment="the book says .srv"),
        rating("down", sources=[SERVICES]),
        rating("down", sources=[GAZEBO]),
        rating("down", refusal="insufficient_context", asked_question="Why?",
               question="Why does Gazebo run at a real-time factor of 1.0?"),
        rating("up", sources=[GAZEBO]),
    )
    fb = result.feedback
    assert (fb.rated, fb.up, fb.down) == (5, 1, 4)
    assert [(c.chapter, len(c.runs)) for c in fb.chapters] == [
        ("Chapter 2: ROS 2 Fundamentals (02-ros2-fundamentals.md)", 2),
        ("Chapter 3: Simulation (03-simulation-digital-twins.md)", 1),
        ("refusals", 1)]
    assert "## Answers students marked wrong" in md
    assert "![answers marked wrong per chapter](marked_wrong.png)" in md
    assert (tmp_path / "out" / "marked_wrong.png").stat().st_size > 0
    assert "### Chapter 2: ROS 2 Fundamentals (02-ros2-fundamentals.md) — 2 marked wrong" in md
    row = next(line for line in md.splitlines() if "the book says .srv" in line)
    assert "What file defines its interface? (read as: What file defines a ROS 2 service's " \
           "interface?)" in row
    assert "A message file (.msg) defines it [1]." in row
    assert ("02-ros2-fundamentals.md — Chapter 2: ROS 2 Fundamentals > Services: "
            "“A service is defined by a .srv file.”") in row
    assert "refused (insufficient_context): (answer text not recorded)" in md
    assert "<h2>Answers students marked wrong</h2>" in html and "the book says .srv" in html
    marked = summary["marked_wrong"]
    assert (marked["rated"], marked["down"]) == (5, 4)
    assert [c["marked_wrong"] for c in marked["chapters"]] == [2, 1, 1]
    assert marked["chapters"][0]["runs"][1]["comment"] == "the book says .srv"


def test_only_the_latest_rating_of_a_run_counts(tmp_path: Path) -> None:
    """Down then up: not listed; up then down: listed once."""
    fixed, broken = str(uuid.uuid4()), str(uuid.uuid4())
    result, md, _, _ = report(
        tmp_path,
        rating("down", run_id=fixed, sources=[GAZEBO], comment="first thought"),
        rating("up", run_id=broken, sources=[SERVICES]),
        rating("up", run_id=fixed, sources=[GAZEBO]),
        rating("down", run_id=broken, sources=[SERVICES], comment="changed my mind"),
    )
    assert (result.feedback.rated, result.feedback.down) == (2, 1)
    assert "changed my mind" in md and "first thought" not in md


def test_without_feedback_the_section_says_there_are_no_ratings(tmp_path: Path) -> None:
    """No feedback log: the section is there and says how students rate."""
    result, md, html, summary = report(tmp_path)
    assert result.feedback.exists is False
    assert "## Answers students marked wrong" in md
    assert "No ratings yet" in md and "No ratings yet" in html
    assert not (tmp_path / "out" / "marked_wrong.png").exists()
    assert summary["marked_wrong"]["chapters"] == []


def test_with_only_good_ratings_the_section_says_none_were_marked_wrong(tmp_path: Path) -> None:
    """Up ratings only: nothing to fix, said in words."""
    _, md, _, _ = report(tmp_path, rating("up", sources=[GAZEBO]))
    assert "No answers were marked wrong in the period (1 rated, 1 up)." in md


def test_since_keeps_only_later_ratings(tmp_path: Path) -> None:
    """--since applies to when a rating was given."""
    log = audit(tmp_path / "audit.jsonl")
    fl = FeedbackLog(tmp_path / "feedback.jsonl")
    fl.append(rating("down", ts="2026-01-01T00:00:00Z", comment="old"))
    fl.append(rating("down", ts="2026-11-25T00:00:00Z", comment="new"))
    result = an.build_report(log, tmp_path / "out", since=an.parse_since("2026-06-01"),
                             locate=lambda t: [("x", 0.9)] * len(t))
    assert result.feedback.down == 1
    assert result.feedback.chapters[0].runs[0]["comment"] == "new"


def test_a_long_answer_is_shortened_and_table_cells_stay_cells(tmp_path: Path) -> None:
    """A long answer is cut with an ellipsis; a pipe in a comment does not split the row."""
    _, md, _, _ = report(tmp_path, rating("down", sources=[GAZEBO], answer="word " * 400,
                                          comment="a | b"))
    row = next(line for line in md.splitlines() if "a \\| b" in line)
    assert "…" in row and len(row) < 1200
