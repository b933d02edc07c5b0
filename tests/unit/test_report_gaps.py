"""The report's coverage gaps: on-topic questions the book leaves unanswered, by chapter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph.builder import build_graph
from tests.conftest import book_store, make_settings
from textbound.errors import StoreInUseError
from textbound.quality import analytics as an

ISAAC = {"chunk_id": "c-isaac", "score": 0.61, "source": "04-nvidia-isaac-ecosystem.md",
         "section": "NVIDIA Isaac > Isaac Sim > Licensing"}
FAR = {"chunk_id": "c-topic", "score": 0.08, "source": "02-ros2-fundamentals.md",
       "section": "ROS 2 Fundamentals > Topics"}


def line(question: str, reason: str | None, *, session: str | None = "s1",
         ts: str = "2025-03-03T10:00:00.000Z", **extra: Any) -> str:
    data = {"event": "refusal" if reason else "answer", "timestamp": ts, "session_id": session,
            "thread_id": None, "question": question, "selected_text": False,
            "refusal_reason": reason, "chunks_retrieved": 3, "max_score": 0.4,
            "sources": [], "path": "x", "failed_checks": [reason] if reason else []} | extra
    return json.dumps(data)


@pytest.mark.parametrize(("record", "gap"), [
    ({"refusal_reason": "insufficient_context", "nearest": ISAAC}, True),
    ({"refusal_reason": "question_not_answered", "nearest": ISAAC}, True),
    ({"refusal_reason": "empty_retrieval", "nearest": FAR}, False),
    ({"refusal_reason": "out_of_scope", "nearest": ISAAC}, False),
    ({"refusal_reason": "question_not_answered", "nearest": ISAAC,
      "failed_checks": ["known_names"]}, False),
    ({"refusal_reason": "insufficient_context", "nearest": None}, False),
    ({"refusal_reason": "insufficient_context", "nearest": ISAAC, "selected_text": True}, False),
    ({"refusal_reason": "store_unavailable", "nearest": ISAAC}, False),
    ({"refusal_reason": "insufficient_context"}, True),  # an older line: the store places it
])
def test_which_refusals_are_gaps(record: dict[str, Any], gap: bool) -> None:
    """On-topic lack of context is a gap; off-topic, out-of-scope and operational are not."""
    assert an.is_gap(record) is gap


def _log(path: Path) -> Path:
    lines = [line("Is Isaac Sim free?", "insufficient_context", session=f"s{n}", nearest=ISAAC)
             for n in range(3)]
    lines += [line("is isaac sim free", "insufficient_context", session="s0", nearest=ISAAC)]
    lines += [line("Does Isaac Sim run on a laptop?", "question_not_answered", session=None,
                   nearest=ISAAC)] * 2
    lines += [line("What is the capital of France?", "empty_retrieval", session=f"f{n}",
                   nearest=FAR) for n in range(6)]
    lines += [line("How do I tune a PID controller?", "out_of_scope", nearest=ISAAC)] * 4
    lines += [line("What is a topic?", None, nearest=FAR)]
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def test_gaps_are_grouped_by_chapter_with_students_and_an_example(tmp_path: Path) -> None:
    """Isaac questions are the gaps; France (off topic) and PID (out of scope) are not."""
    settings = make_settings(tmp_path / "data", collection="never_ingested")
    result = an.build_report(_log(tmp_path / "audit.jsonl"), tmp_path / "out",
                             settings=settings)
    chapter = "NVIDIA Isaac (04-nvidia-isaac-ecosystem.md)"
    assert [(g.chapter, [(q.sample, q.students) for q in g.questions]) for g in result.gaps] == [
        (chapter, [("Is Isaac Sim free?", 3), ("Does Isaac Sim run on a laptop?", 2)])]
    assert result.summary.gaps == 6
    # every line recorded its nearest passage: the (missing) collection was never needed
    assert "could not be searched" not in result.grouping_note
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    gaps = md.split("## Coverage gaps by chapter")[1].split("## Most refused questions")[0]
    assert f"| {chapter} | 2 | 5 | Is Isaac Sim free? |" in gaps
    assert "capital of France" not in gaps and "PID" not in gaps
    assert "![coverage gaps per chapter](gaps.png)" in gaps
    assert (tmp_path / "out" / "gaps.png").stat().st_size > 0
    topics = {g.topic: g.verdict for g in result.groups}
    assert topics["nothing close in the collection"] == an.OFF_TOPIC_DEMAND
    data = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert data["gaps"][0]["chapter"] == chapter and data["gaps"][0]["students"] == 5


def test_a_store_held_by_a_server_is_one_line_without_its_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Older lines need the store; a server holding it is said in one line, no engine text."""
    from textbound.quality.analytics import report

    def held(*_: Any, **__: Any) -> Any:
        raise StoreInUseError("The embedded Qdrant store at /srv/data/qdrant/edge/textbook is "
                              "in use (Service internal error: Can't init WAL: WouldBlock)")

    monkeypatch.setattr(report, "store_locator", held)
    log = tmp_path / "audit.jsonl"
    log.write_text(line("Is Isaac Sim free?", "insufficient_context") + "\n", encoding="utf-8")
    result = an.build_report(log, tmp_path / "out",
                             settings=make_settings(tmp_path / "data", collection="textbook"))
    assert result.grouping_note == (
        "1 refused question from audit lines that do not record their nearest passage "
        "(written by an older textbound) are grouped by their text: the collection `textbook` "
        "could not be searched: a running `textbound serve` (or another textbound command) "
        "holds it.")
    for name in ("report.md", "report.html", "summary.json"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert "WouldBlock" not in text and "WAL" not in text and "/srv/" not in text
    assert [g.chapter for g in result.gaps] == [an.UNPLACED]


def test_every_audit_line_records_its_best_retrieved_passage(
        tmp_path: Path, embeddings: Any, exploding_chat: Any) -> None:
    """The graph logs the nearest passage's place, so the report needs no store to file gaps."""
    audit = tmp_path / "audit.jsonl"
    graph = build_graph(settings=make_settings(tmp_path, audit_log=audit),
                        embeddings=embeddings, store=book_store(embeddings),
                        chat_model=exploding_chat)
    graph.invoke({"question": "What is a topic?"}, context={"generator": "extractive"})
    graph.invoke({"question": "hello"}, context={"generator": "extractive"})
    answered, greeted = (json.loads(x) for x in audit.read_text().splitlines())
    assert answered["nearest"]["source"] == "book.md"
    assert answered["nearest"]["section"] == "Book > Topics"
    assert answered["nearest"]["score"] == answered["max_score"]
    assert greeted["nearest"] is None  # nothing retrieved for a greeting
