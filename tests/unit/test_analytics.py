"""Refusal analytics: streaming scan, bounded question counting, grouping, verdicts, the command."""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import make_settings
from textbound.quality import analytics as an


def rec(event: str = "refusal", ts: str = "2025-03-03T10:00:00.000Z", question: str = "q?",
        reason: str | None = "insufficient_context", **extra: Any) -> str:
    data = {"event": event, "timestamp": ts, "session_id": "s", "question": question,
            "selected_text": False, "refusal_reason": reason if event == "refusal" else None,
            "chunks_retrieved": 3, "max_score": 0.4, "confidence_level": "insufficient",
            "sources": [], "path": "x", "failed_checks": [], "policy": "calibrated",
            "generator": "extractive", "latency_ms": 3.0} | extra
    return json.dumps(data)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_malformed_lines_are_counted_by_kind_and_skipped(tmp_path: Path) -> None:
    """Broken lines never stop the scan; each kind is counted and the first line numbers kept."""
    log = write(tmp_path / "a.jsonl", [
        rec("answer"),
        '{"event": "refusal", "timestamp": "2025-0',  # truncated by a crash
        "[1, 2]",
        rec("maybe"),
        rec(ts="yesterday"),
        "",
        rec(),
    ])
    with log.open("ab") as f:
        f.write(b"\xff\xfe not utf-8\n")
    s = an.scan_log(log)
    assert (s.lines, s.answers, s.refusals) == (8, 1, 1)
    assert s.malformed == Counter({"not valid JSON": 2, "not a JSON object": 1,
                                   "unknown event": 1, "missing or bad timestamp": 1,
                                   "empty line": 1})
    assert [n for n, _ in s.malformed_examples] == [2, 3, 4, 5, 6, 8]
    assert s.bytes_read == log.stat().st_size


def test_an_overlong_line_is_skipped_without_losing_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line longer than the limit is consumed in pieces and counted once."""
    monkeypatch.setattr(an.scan, "MAX_LINE_BYTES", 1000)
    short = rec("answer", question="short")
    assert len(short) < 1000
    log = write(tmp_path / "a.jsonl", ["x" * 4500, short])
    s = an.scan_log(log)
    assert s.malformed == Counter({"line too long": 1})
    assert (s.lines, s.answers) == (2, 1)


def test_since_keeps_only_later_responses(tmp_path: Path) -> None:
    """--since drops earlier responses from every count and reports how many it dropped."""
    log = write(tmp_path / "a.jsonl", [
        rec("answer", ts="2025-03-01T23:59:59.999Z"),
        rec(ts="2025-03-01T12:00:00Z", question="old"),
        rec("answer", ts="2025-03-02T00:00:00.000Z"),
        rec(ts="2025-03-05T08:30:00+02:00", question="new"),
    ])
    s = an.scan_log(log, since=an.parse_since("2025-03-02"))
    assert (s.answers, s.refusals, s.before_since) == (1, 1, 2)
    assert [q.key for q in s.questions.top()] == ["new"]
    assert s.first == datetime(2025, 3, 2, tzinfo=UTC)
    assert s.last == datetime(2025, 3, 5, 6, 30, tzinfo=UTC)


def test_parse_since_reads_dates_times_and_rejects_nonsense() -> None:
    """Dates mean midnight UTC, naive times are UTC, offsets are converted, junk is an error."""
    assert an.parse_since("2025-01-31") == datetime(2025, 1, 31, tzinfo=UTC)
    assert an.parse_since("2025-01-31T10:00+01:00") == datetime(2025, 1, 31, 9, tzinfo=UTC)
    assert an.parse_since(None) is None
    with pytest.raises(ValueError, match="--since"):
        an.parse_since("last tuesday")


def test_questions_are_counted_under_a_normalised_key() -> None:
    """Case, spacing and trailing punctuation do not split a question's count."""
    assert an.normalise_question("  What IS a   Topic?? ") == "what is a topic"
    assert an.normalise_question(None) == "(no question)"
    assert len(an.normalise_question("x" * 5000)) == an.MAX_KEY_CHARS


def test_top_questions_is_exact_while_it_has_room() -> None:
    """Fewer distinct questions than the capacity: counts and reasons are exact."""
    top = an.TopQuestions(capacity=10)
    for i, key in enumerate("aabacaaab"):
        top.add(key, key, "out_of_scope" if i % 2 else "empty_retrieval")
    assert top.exact and top.guaranteed_above() == 0
    assert [(q.key, q.count, q.error) for q in top.top()] == [("a", 6, 0), ("b", 2, 0),
                                                              ("c", 1, 0)]
    assert sum(top.top()[0].reasons.values()) == 6


def test_top_questions_stays_bounded_and_brackets_true_counts() -> None:
    """Past its capacity every count interval holds the true count and heavy hitters stay."""
    rng = random.Random(3)
    keys = [f"q{i}" for i in range(2000)]
    stream = rng.choices(keys, weights=[1 / (i + 1) for i in range(2000)], k=30_000)
    truth = Counter(stream)
    top = an.TopQuestions(capacity=100)
    for k in stream:
        top.add(k, k, "empty_retrieval")
        assert len(top) <= 100
    assert not top.exact and top.total == len(stream)
    for q in top.top():
        assert q.low <= truth[q.key] <= q.count
        assert sum(q.reasons.values()) == q.low
    tracked = {q.key for q in top.top()}
    heavy = {k for k, n in truth.items() if n > top.guaranteed_above()}
    assert heavy and heavy <= tracked
    assert [q.key for q in top.top(5)] == [k for k, _ in truth.most_common(5)]


@pytest.mark.parametrize(("reasons", "count", "verdict"), [
    ({"empty_retrieval": 3, "insufficient_context": 2}, 5, an.OFF_TOPIC_DEMAND),
    ({"insufficient_context": 3, "empty_retrieval": 1}, 4, an.COVERAGE_GAP),
    ({"ungrounded_answer": 1}, 1, an.RARE_GAP),
    ({"out_of_scope": 4, "insufficient_context": 1}, 5, an.OUT_OF_SCOPE_DEMAND),
    ({"out_of_scope": 2, "empty_retrieval": 2}, 4, an.OUT_OF_SCOPE_DEMAND),
    ({"store_unavailable": 5, "empty_retrieval": 1}, 6, "operational"),
    ({}, 0, "unknown"),
])
def test_classify(reasons: dict[str, int], count: int, verdict: str) -> None:
    """Lack of context on topic asked often is a gap; nothing close retrieved is off topic."""
    assert an.classify(Counter(reasons), count, min_count=3) == verdict


def _counts(*rows: tuple[str, int, str]) -> list[an.QuestionCount]:
    return [an.QuestionCount(k, k.capitalize() + "?", count=n, reasons=Counter({r: n}))
            for k, n, r in rows]


def test_group_by_topic_uses_the_nearest_section_and_a_cutoff() -> None:
    """Questions near the same section share a group; far ones go to 'nothing close'."""
    qs = _counts(("isaac sim licence", 5, "insufficient_context"),
                 ("isaac sim gpu", 2, "question_not_answered"),
                 ("capital of france", 4, "empty_retrieval"),
                 ("ros 1 vs ros 2", 3, "out_of_scope"))
    where = {"Isaac sim licence?": ("Isaac > Isaac Sim", 0.62),
             "Isaac sim gpu?": ("Isaac > Isaac Sim", 0.55),
             "Capital of france?": ("ROS 2 > Topics", 0.12),
             "Ros 1 vs ros 2?": ("ROS 2 > What Is ROS 2?", 0.7)}
    seen: list[list[str]] = []

    def locate(texts: list[str]) -> list[tuple[str, float]]:
        seen.append(texts)
        return [where[t] for t in texts]

    groups = an.group_by_topic(qs, locate, cutoff=0.35, min_count=3)
    assert seen == [[q.sample for q in qs]]
    by = {g.topic: g for g in groups}
    assert [g.topic for g in groups] == ["Isaac > Isaac Sim", an.NOTHING_CLOSE,
                                         "ROS 2 > What Is ROS 2?"]
    assert by["Isaac > Isaac Sim"].count == 7 and by["Isaac > Isaac Sim"].score == 0.62
    assert by["Isaac > Isaac Sim"].verdict == an.COVERAGE_GAP
    assert by["ROS 2 > What Is ROS 2?"].verdict == an.OUT_OF_SCOPE_DEMAND
    assert by[an.NOTHING_CLOSE].verdict == an.OFF_TOPIC_DEMAND
    assert [q.verdict for q in by["Isaac > Isaac Sim"].questions] == [an.COVERAGE_GAP,
                                                                      an.RARE_GAP]


def test_group_by_topic_without_a_store_groups_by_text() -> None:
    """No locator: one group per normalised question, still classified."""
    groups = an.group_by_topic(_counts(("a", 4, "out_of_scope"), ("b", 1, "empty_retrieval")),
                               None)
    assert [(g.topic, g.score, g.verdict) for g in groups] == [
        ("a", None, an.OUT_OF_SCOPE_DEMAND), ("b", None, an.OFF_TOPIC_DEMAND)]


def _traffic(path: Path) -> Path:
    lines = []
    for day in range(1, 6):
        ts = f"2025-03-0{day}T09:00:00.000Z"
        lines += [rec("answer", ts=ts, question="What is a topic?")] * 3
        lines += [rec(ts=ts, question="Is Isaac Sim free?", reason="insufficient_context")] * 2
        lines += [rec(ts=ts, question="Capital of France?", reason="out_of_scope")]
    lines.append("not json")
    return write(path, lines)


def test_build_report_writes_markdown_html_json_and_plots(tmp_path: Path) -> None:
    """The report files exist and say what the log holds."""
    def locate(texts: list[str]) -> list[tuple[str, float]]:
        return [("Isaac > Isaac Sim", 0.6) if "Isaac" in t else ("ROS 2 > Topics", 0.1)
                for t in texts]

    progress: list[tuple[int, int]] = []
    result = an.build_report(_traffic(tmp_path / "audit.jsonl"), tmp_path / "out", locate=locate,
                             progress=lambda done, total: progress.append((done, total)))
    names = {p.name for p in result.files}
    assert names == {"report.md", "report.html", "summary.json", "timeline.png", "reasons.png",
                     "gaps.png", "topics.png"}
    for p in result.files:
        assert p.stat().st_size > 0
    assert progress[-1][0] == progress[-1][1] == (tmp_path / "audit.jsonl").stat().st_size
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["answers"], summary["refusals"]) == (15, 15)
    assert summary["malformed"] == {"not valid JSON": 1}
    assert [(t["topic"], t["verdict"], t["refusals"]) for t in summary["topics"]] == [
        ("Isaac > Isaac Sim", an.COVERAGE_GAP, 10), (an.NOTHING_CLOSE, an.OUT_OF_SCOPE_DEMAND, 5)]
    assert [(g["chapter"], [q["question"] for q in g["questions"]]) for g in summary["gaps"]] == [
        ("Isaac", ["Is Isaac Sim free?"])]
    md = (tmp_path / "out" / "report.md").read_text()
    assert "![answers and refusals over time](timeline.png)" in md
    assert "| malformed lines skipped | 1 (not valid JSON: 1) |" in md
    assert "Is Isaac Sim free?" in md and "All counts are exact" in md
    assert "<h3>Isaac &gt; Isaac Sim" in (tmp_path / "out" / "report.html").read_text()


def test_build_report_falls_back_to_text_when_the_collection_is_missing(tmp_path: Path) -> None:
    """No collection: the report still works and says why topics are plain question texts."""
    settings = make_settings(tmp_path / "data", collection="nothing_here")
    result = an.build_report(_traffic(tmp_path / "audit.jsonl"), tmp_path / "out",
                             settings=settings)
    assert "could not be searched" in result.grouping_note
    assert "nothing_here" in result.grouping_note
    assert [g.topic for g in result.groups] == ["is isaac sim free", "capital of france"]
    assert "could not be searched" in (tmp_path / "out" / "report.md").read_text()


def test_store_locator_names_the_nearest_section(tmp_path: Path, embeddings: Any) -> None:
    """A real collection: a question lands on its section; an unrelated one falls below cutoff."""
    from textbound.documents.ingest import ingest
    from textbound.documents.store import VectorStore

    doc = tmp_path / "book.md"
    doc.write_text(
        "# Robots\n\n## Topics\n\nA topic is a named bus over which ROS 2 nodes exchange "
        "messages with publishers and subscribers.\n\n## Gazebo\n\nGazebo simulates rigid-body "
        "physics, sensors and actuators so robot software can be tested before hardware.\n",
        encoding="utf-8")
    settings = make_settings(tmp_path / "data", collection="tiny")
    store = VectorStore.from_settings(settings, embeddings)
    ingest(store, [doc])
    store.close()
    locate, close = an.store_locator(settings, embeddings)
    try:
        found = locate(["How do ROS 2 nodes exchange messages on a topic?",
                        "What is a good recipe for sourdough bread?"])
    finally:
        close()
    assert found[0][0] == "Robots > Topics" and found[0][1] >= an.DEFAULT_CUTOFF
    assert found[1][1] < an.DEFAULT_CUTOFF


def test_report_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`textbound report --audit --since --out` writes the report; a bad --since exits 2."""
    from textbound.serving.cli import app

    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "data"))
    log = _traffic(tmp_path / "audit.jsonl")
    runner = CliRunner()
    res = runner.invoke(app, ["report", "--audit", str(log), "--since", "2025-03-04",
                              "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "12 responses: 6 answers, 6 refusals; 1 malformed lines skipped, 18 before" in (
        " ".join(res.output.split()))
    assert (tmp_path / "out" / "report.md").is_file()
    bad = runner.invoke(app, ["report", "--audit", str(log), "--since", "soon"])
    assert bad.exit_code == 2
    missing = runner.invoke(app, ["report", "--audit", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2
