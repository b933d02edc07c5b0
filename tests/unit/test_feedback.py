"""Students' ratings: looked up by run id in the audit log, kept beside it, sent to LangSmith."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from textbound.records import feedback as fb

RUN = "0b7e4a52-3f1c-4d2a-9e61-1c2d3e4f5a6b"


def audit_line(run_id: str = RUN, *, event: str = "answer", question: str = "What file "
               "defines a ROS 2 service's interface?", asked: str | None = "What file defines "
               "its interface?", thread_id: str | None = "tab-1", reason: str | None = None,
               sources: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """One audit line as the graph writes it, with the conversation contract's fields."""
    if sources is None:
        sources = [] if event == "refusal" else [{"chunk_id": "c-srv", "score": 0.71}]
    return {"event": event, "timestamp": "2026-11-25T01:00:00.000Z", "session_id": "s",
            "run_id": run_id, "thread_id": thread_id, "asked_question": asked,
            "question": question, "selected_text": False,
            "refusal_reason": reason if event == "refusal" else None, "sources": sources,
            "path": "release_answer" if event == "answer" else "refuse_x", **extra}


def write_audit(path: Path, *lines: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return path


@pytest.fixture
def audit(tmp_path: Path) -> Path:
    """An audit log with two other runs around the rated one."""
    return write_audit(tmp_path / "data" / "audit.jsonl",
                       audit_line(str(uuid.uuid4()), question="earlier"),
                       audit_line(),
                       audit_line(str(uuid.uuid4()), event="refusal", question="later",
                                  reason="out_of_scope"))


def stored(audit: Path) -> list[dict[str, Any]]:
    path = audit.parent / "feedback.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


class FakeLangSmith:
    """Records create_feedback calls; raises `fail` when set, as a client offline would."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.fail = fail

    def create_feedback(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append((args, kwargs))
        if self.fail is not None:
            raise self.fail


def test_a_rating_is_stored_beside_the_audit_log_with_what_the_run_said(audit: Path) -> None:
    """The record holds the rating and the run's questions, outcome and cited passage."""
    record = fb.rate_run(audit, RUN, "down", "It is a .srv file", tracing=lambda: False)
    [line] = stored(audit)
    assert line == {k: v for k, v in record.items() if k != "replaces_earlier"}
    assert line["event"] == "feedback" and line["rating"] == "down"
    assert line["run_id"] == RUN and line["thread_id"] == "tab-1"
    assert line["asked_question"] == "What file defines its interface?"
    assert line["question"] == "What file defines a ROS 2 service's interface?"
    assert line["was_refusal"] is False and line["refusal_reason"] is None
    assert line["sources"] == [{"chunk_id": "c-srv"}]
    assert line["comment"] == "It is a .srv file"
    assert line["timestamp"].endswith("Z")


def test_the_run_is_found_by_its_id_not_by_text_that_mentions_it(tmp_path: Path) -> None:
    """A line that only quotes the id (in a question) is not the run; the latest true line is."""
    audit = write_audit(tmp_path / "audit.jsonl",
                        audit_line(question="first"),
                        audit_line(str(uuid.uuid4()), question=f"what is {RUN}?"))
    assert fb.find_run(audit, RUN)["question"] == "first"  # type: ignore[index]
    assert fb.find_run(audit, str(uuid.uuid4())) is None


def test_lookup_reads_a_log_larger_than_one_block(tmp_path: Path) -> None:
    """The backwards reader joins lines cut by its block boundaries."""
    lines = [audit_line(str(uuid.uuid4()), question="x" * 3000) for _ in range(60)]
    wanted = lines[7]["run_id"]
    audit = write_audit(tmp_path / "audit.jsonl", *lines)
    assert audit.stat().st_size > 3 * (1 << 16)
    assert fb.find_run(audit, wanted) == lines[7]


def test_an_unknown_run_is_an_error_and_nothing_is_stored(audit: Path) -> None:
    """A run id the audit log does not hold cannot be rated."""
    with pytest.raises(fb.UnknownRunError, match="no response with run_id"):
        fb.rate_run(audit, str(uuid.uuid4()), "up", tracing=lambda: False)
    assert not (audit.parent / "feedback.jsonl").exists()


@pytest.mark.parametrize("rating", ["sideways", "", "5", "👍"])
def test_a_rating_other_than_up_or_down_is_refused(audit: Path, rating: str) -> None:
    """Only up and down are ratings."""
    with pytest.raises(fb.InvalidFeedbackError, match="rating must be 'up' or 'down'"):
        fb.rate_run(audit, RUN, rating, tracing=lambda: False)


def test_a_run_id_that_is_not_a_uuid_is_refused(audit: Path) -> None:
    """A run id is a UUID; anything else is a usage error, not a lookup."""
    with pytest.raises(fb.InvalidFeedbackError, match="not a run id"):
        fb.rate_run(audit, "../../etc/passwd", "up", tracing=lambda: False)


def test_ratings_and_run_ids_are_read_in_any_case(audit: Path) -> None:
    """UP and an upper-case run id name the same rating and run."""
    record = fb.rate_run(audit, RUN.upper(), "UP", tracing=lambda: False)
    assert (record["run_id"], record["rating"]) == (RUN, "up")


def test_comments_are_cleaned_of_invisible_characters(audit: Path) -> None:
    """Zero-width, bidi and control characters go; a blank comment is no comment."""
    record = fb.rate_run(audit, RUN, "down", "  wr\u200bong\u202e \x07page\ud800 ",
                         tracing=lambda: False)
    assert record["comment"] == "wrong page\ufffd"
    assert fb.check_comment(" \u200b\n ") is None
    assert stored(audit)[0]["comment"] == "wrong page\ufffd"  # valid UTF-8 on disk


def test_a_comment_over_the_limit_is_refused(audit: Path) -> None:
    """A comment longer than MAX_COMMENT_CHARS is refused, not silently cut."""
    with pytest.raises(fb.InvalidFeedbackError, match="at most 1,000"):
        fb.rate_run(audit, RUN, "down", "x" * (fb.MAX_COMMENT_CHARS + 1), tracing=lambda: False)
    assert fb.check_comment("x" * fb.MAX_COMMENT_CHARS + "\u200b" * 50) == \
        "x" * fb.MAX_COMMENT_CHARS


def test_rating_a_run_again_keeps_both_lines_and_the_latest_wins(audit: Path) -> None:
    """The log is append-only; `latest` (what the report reads) holds the newer rating."""
    first = fb.rate_run(audit, RUN, "down", "wrong", tracing=lambda: False)
    second = fb.rate_run(audit, RUN, "up", tracing=lambda: False)
    assert (first["replaces_earlier"], second["replaces_earlier"]) == (False, True)
    assert [r["rating"] for r in stored(audit)] == ["down", "up"]
    latest = fb.FeedbackLog(audit.parent / "feedback.jsonl").latest()
    assert list(latest) == [RUN] and latest[RUN]["rating"] == "up"


def test_without_an_audit_log_feedback_is_off(tmp_path: Path) -> None:
    """TEXTBOUND_AUDIT_LOG="" leaves nothing to check a run against: a clear error."""
    with pytest.raises(fb.FeedbackDisabledError, match="TEXTBOUND_AUDIT_LOG"):
        fb.rate_run(None, RUN, "up", tracing=lambda: False)


def test_a_log_that_cannot_be_written_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """A feedback folder under a regular file raises FeedbackError naming the file."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    log = fb.FeedbackLog(blocker / "feedback.jsonl")
    with pytest.raises(fb.FeedbackError, match="could not be stored"):
        log.append({"event": "feedback"})


def test_concurrent_ratings_never_interleave(tmp_path: Path) -> None:
    """16 threads x 40 ratings with long comments: every line whole, none lost."""
    log = fb.FeedbackLog(tmp_path / "feedback.jsonl")

    def worker(n: int) -> None:
        for i in range(40):
            log.append({"event": "feedback", "rating": "down", "run_id": f"{n}-{i}",
                        "comment": "c" * 900})

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(log.latest()) == 16 * 40


def test_the_thread_history_and_the_store_fill_in_what_the_audit_line_lacks(
        tmp_path: Path) -> None:
    """The answer and the passage's place come from the thread's turn, its text from the store."""
    audit = write_audit(tmp_path / "audit.jsonl", audit_line())
    turns = [{"run_id": str(uuid.uuid4()), "answer": "another turn"},
             {"run_id": RUN, "answer": "A service is defined in a .msg file [1].",
              "sources": [{"chunk_id": "c-srv", "source": "02-ros2.md",
                           "section": "Chapter 2 > Services"}]}]
    asked: list[str] = []

    def history(thread_id: str) -> list[dict[str, Any]]:
        asked.append(thread_id)
        return turns

    record = fb.rate_run(audit, RUN, "down", turns=history,
                         passages=lambda ids: {"c-srv": {"text": "A .srv file  defines it.",
                                                         "page": 12}},
                         tracing=lambda: False)
    assert asked == ["tab-1"]
    assert record["answer"] == "A service is defined in a .msg file [1]."
    assert record["sources"] == [{"chunk_id": "c-srv", "source": "02-ros2.md",
                                  "section": "Chapter 2 > Services", "page": 12,
                                  "excerpt": "A .srv file defines it."}]


def test_fields_the_audit_line_holds_win_over_any_other_record(tmp_path: Path) -> None:
    """A response passed in cannot change the answer or place the audit line records."""
    line = audit_line(answer="the audit's answer",
                      sources=[{"chunk_id": "c-srv", "source": "a.md", "section": "A > B"}])
    audit = write_audit(tmp_path / "audit.jsonl", line)
    forged = {"run_id": RUN, "answer": "forged",
              "sources": [{"chunk_id": "c-srv", "source": "z.md", "section": "Z"}]}
    record = fb.rate_run(audit, RUN, "down", response=forged, tracing=lambda: False)
    assert record["answer"] == "the audit's answer"
    assert record["sources"] == [{"chunk_id": "c-srv", "source": "a.md", "section": "A > B"}]


def test_a_response_of_another_run_is_not_used(tmp_path: Path) -> None:
    """Only a response carrying the rated run's id may fill in its answer."""
    audit = write_audit(tmp_path / "audit.jsonl", audit_line())
    record = fb.rate_run(audit, RUN, "down", response={"run_id": "other", "answer": "no"},
                         tracing=lambda: False)
    assert record["answer"] is None


def test_failing_lookups_leave_the_rating_with_what_the_audit_line_has(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A history or store that raises is logged; the rating is still stored."""
    audit = write_audit(tmp_path / "audit.jsonl", audit_line())

    def broken(_: Any) -> Any:
        raise RuntimeError("store locked")

    with caplog.at_level(logging.WARNING, logger="textbound.records.feedback"):
        record = fb.rate_run(audit, RUN, "down", turns=broken, passages=broken,
                             tracing=lambda: False)
    assert record["sources"] == [{"chunk_id": "c-srv"}] and record["answer"] is None
    assert sum("store locked" in r.getMessage() for r in caplog.records) == 2
    assert len(stored(audit)) == 1


def test_a_refusal_is_rated_with_its_reason(tmp_path: Path) -> None:
    """A refused run keeps its reason and cites nothing."""
    audit = write_audit(tmp_path / "audit.jsonl",
                        audit_line(event="refusal", reason="insufficient_context"))
    record = fb.rate_run(audit, RUN, "down", tracing=lambda: False)
    assert record["was_refusal"] is True and record["refusal_reason"] == "insufficient_context"
    assert record["sources"] == []


def test_an_audit_line_without_the_conversation_fields_still_rates(tmp_path: Path) -> None:
    """A run outside a thread: the question as asked is the one the gates read."""
    line = audit_line(thread_id=None)
    del line["asked_question"]
    audit = write_audit(tmp_path / "audit.jsonl", line)
    record = fb.rate_run(audit, RUN, "up", tracing=lambda: False)
    assert record["thread_id"] is None and record["asked_question"] == record["question"]


# --- LangSmith ---------------------------------------------------------------------------------
def test_no_langsmith_call_while_tracing_is_off(audit: Path) -> None:
    """Tracing off: the client is never touched."""
    client = FakeLangSmith()
    fb.rate_run(audit, RUN, "down", "wrong", langsmith_client=client, tracing=lambda: False)
    assert client.calls == []


def test_with_tracing_on_the_rating_becomes_langsmith_feedback_on_the_run(audit: Path) -> None:
    """Key student_rating, score 0 for down (1 for up), the comment, and the run as its trace."""
    client = FakeLangSmith()
    fb.rate_run(audit, RUN, "down", "wrong", langsmith_client=client, tracing=lambda: True)
    fb.rate_run(audit, RUN, "up", langsmith_client=client, tracing=lambda: True)
    assert client.calls == [
        ((RUN,), {"key": "student_rating", "score": 0, "value": "down", "comment": "wrong",
                  "trace_id": RUN}),
        ((RUN,), {"key": "student_rating", "score": 1, "value": "up", "comment": None,
                  "trace_id": RUN}),
    ]


def test_a_langsmith_failure_is_logged_once_and_the_rating_stands(
        audit: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unreachable LangSmith never fails a rating; the warning is not repeated."""
    monkeypatch.setattr(fb, "_warned", False)
    client = FakeLangSmith(fail=ConnectionError("api.smith.langchain.com unreachable"))
    with caplog.at_level(logging.WARNING, logger="textbound.records.feedback"):
        for rating in ("down", "up", "down"):
            fb.rate_run(audit, RUN, rating, langsmith_client=client, tracing=lambda: True)
    assert len(client.calls) == 3 and len(stored(audit)) == 3
    assert sum("LangSmith" in r.getMessage() for r in caplog.records) == 1


def test_tracing_is_detected_by_langsmiths_own_switch() -> None:
    """Off in the test environment; on inside LangSmith's tracing_context(enabled=True)."""
    from langsmith.run_helpers import tracing_context

    assert fb.langsmith_tracing() is False
    with tracing_context(enabled=True):
        assert fb.langsmith_tracing() is True


def test_chapter_of_names_the_document_and_its_top_heading() -> None:
    """The chapter is the section path's first heading, with the document it is in."""
    assert fb.chapter_of({"source": "02-ros2.md", "section": "Chapter 2: ROS 2 > Services"}) \
        == "Chapter 2: ROS 2 (02-ros2.md)"
    assert fb.chapter_of({"source": "notes.txt", "section": ""}) == "notes.txt"
    assert fb.chapter_of({"chunk_id": "c"}) == "(unknown document)"
