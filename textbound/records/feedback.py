"""Students' ratings of answers: a JSON-lines log beside the audit log, and LangSmith feedback.

A rating names a response by its `run_id` and says `up` or `down`, with an optional comment.
What a teacher needs to see beside it (the question as asked and as every gate read it, the
answer, whether and why it was refused, the cited passages) is taken from the server's own
records, never from the client: the run's audit line (found by its run id: an unknown id is
`UnknownRunError`), then, for what that line does not hold, the thread's history and the store.
So nobody can rate a response that was never given, or put words into one.

The log is `feedback.jsonl` in the audit log's folder, written like the audit log (one `write()`
on a file opened with O_APPEND, under a lock, valid UTF-8). Rating a run again appends a new line;
readers keep the **latest** line per run (`FeedbackLog.latest`), so a student who changes their
mind changes the report. Without an audit log (`TEXTBOUND_AUDIT_LOG=""`) there is nothing to look
runs up in, and feedback is off (`FeedbackDisabledError`).
With `TEXTBOUND_CHECKPOINTER=postgres` the audit lines and ratings are rows of the database
instead (`textbound.records.records_postgres`); `rate_run` and `forget_thread_records` take the
course's record store (`textbound.records.shared.records_of`) as well as a log's path.

When LangSmith tracing is on (its own `LANGSMITH_TRACING`, as `textbound.records.tracing` reads
it), the rating is also sent as LangSmith feedback on the run (key `student_rating`, score 1 or
0): the response's run id is the id of the traced graph run. A LangSmith failure is logged once
and never fails the rating, which the local log already holds.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from textbound.errors import TextboundError
from textbound.records.audit import append_json_line, drop_thread_lines, utc_timestamp
from textbound.records.rated_runs import (
    PassageLookup,
    TurnLookup,
    describe_run,
    find_run,
    store_passages,
)
from textbound.text import clean_text, valid_unicode

if TYPE_CHECKING:
    from textbound.records.record_store import FeedbackStore, RecordStore

__all__ = [
    "FEEDBACK_FILE",
    "LANGSMITH_KEY",
    "MAX_COMMENT_CHARS",
    "RATINGS",
    "FeedbackDisabledError",
    "FeedbackError",
    "FeedbackLog",
    "InvalidFeedbackError",
    "PassageLookup",
    "Rating",
    "TurnLookup",
    "UnknownRunError",
    "chapter_of",
    "check_comment",
    "check_rating",
    "check_run_id",
    "normal_rating",
    "rating_record",
    "describe_run",
    "feedback_log_path",
    "forget_thread_records",
    "find_run",
    "rate_run",
    "send_to_langsmith",
    "store_passages",
    "summary_of",
]

log = logging.getLogger("textbound.records.feedback")

Rating = Literal["up", "down"]
RATINGS: tuple[Rating, ...] = get_args(Rating)
"""The ratings, the one list: the CLI, `textbound chat` and `POST /feedback` accept each in any
case (`normal_rating`), and store it in lower case."""
MAX_COMMENT_CHARS = 1000
"""Longest comment kept, in characters after cleaning; a longer one is refused, not cut."""
FEEDBACK_FILE = "feedback.jsonl"
LANGSMITH_KEY = "student_rating"
"""The LangSmith feedback key: score 1 for up, 0 for down."""
_warned = False



class FeedbackError(TextboundError):
    """A rating could not be recorded; the message says why and what to do."""


class InvalidFeedbackError(FeedbackError, ValueError):
    """The rating, run id or comment is not acceptable (HTTP 422)."""


class UnknownRunError(FeedbackError, LookupError):
    """No response with this run id is in the audit log (HTTP 404)."""


class FeedbackDisabledError(FeedbackError):
    """The audit log is off, so runs cannot be looked up and ratings are not kept."""


# --- checks --------------------------------------------------------------------------------------
def check_run_id(value: object) -> str:
    """Return the run id in its canonical UUID form, or raise InvalidFeedbackError."""
    try:
        return str(uuid.UUID(str(value).strip()))
    except ValueError:
        shown = valid_unicode(str(value)[:60])
        raise InvalidFeedbackError(
            f"run_id {shown!r} is not a run id: give the `run_id` of the response you rate "
            "(a UUID such as 1f0c9a3e-5b7d-4c1e-9a2b-3c4d5e6f7a8b)") from None


def normal_rating(value: object) -> object:
    """Return a rating as stored (trimmed, lower case); anything not text, unchanged."""
    return value.strip().lower() if isinstance(value, str) else value


def check_rating(value: object) -> Rating:
    """Return `up` or `down` (any case), or raise InvalidFeedbackError."""
    rating = normal_rating(str(value))
    if rating not in RATINGS:
        raise InvalidFeedbackError(
            f"rating must be {' or '.join(map(repr, RATINGS))} (any case), not "
            f"{valid_unicode(str(value)[:40])!r}")
    return cast(Rating, rating)


def check_comment(value: str | None) -> str | None:
    """Return the comment cleaned of invisible characters (None if blank), or raise if too long."""
    if value is None:
        return None
    text = clean_text(valid_unicode(str(value))).strip()
    if len(text) > MAX_COMMENT_CHARS:
        raise InvalidFeedbackError(f"the comment is {len(text):,} characters long; at most "
                                   f"{MAX_COMMENT_CHARS:,} are kept: shorten it")
    return text or None


def feedback_log_path(audit_log: Path | None) -> Path | None:
    """Return where ratings are kept: `feedback.jsonl` beside the audit log (None: it is off)."""
    return None if audit_log is None else Path(audit_log).parent / FEEDBACK_FILE


def forget_thread_records(audit_log: Path | RecordStore | None, thread_id: str) -> int:
    """Remove conversation `thread_id`'s lines from the audit log and the feedback log beside it.

    Deleting a conversation removes its turns (the checkpointer's `delete_thread`) and, with
    this, every record of its questions, answers and ratings; the teacher's report then counts
    none of them. Returns how many lines were removed. Given a record store
    (`textbound.records.shared.records_of`: PostgreSQL's tables, say), its `forget` does it.
    LangSmith traces, when tracing is on, are LangSmith's to delete.
    """
    if audit_log is not None and not isinstance(audit_log, str | Path):
        return audit_log.forget(thread_id)
    return (drop_thread_lines(audit_log, thread_id)
            + drop_thread_lines(feedback_log_path(audit_log), thread_id))


def chapter_of(source: Mapping[str, Any]) -> str:
    """Return the chapter a cited passage belongs to: its document and top-level heading."""
    doc = str(source.get("source") or "").strip()
    top = str(source.get("section") or "").split(" > ")[0].strip()
    if doc and top:
        return f"{top} ({doc})"
    return top or doc or "(unknown document)"


# --- the log -------------------------------------------------------------------------------------
def rating_record(raw: str | bytes) -> dict[str, Any] | None:
    """Return a kept line as a rating (event feedback, a known rating, a run id), else None."""
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(rec, dict) and rec.get("event") == "feedback" \
            and rec.get("rating") in RATINGS and isinstance(rec.get("run_id"), str):
        return rec
    return None


class FeedbackLog:
    """Append-only JSON-lines log of ratings; the latest line per run is the one that counts."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record as a single O_APPEND write; raise FeedbackError if it failed."""
        if self.path is None:
            raise FeedbackDisabledError(_DISABLED)
        try:
            append_json_line(self.path, dict(record), self._lock)
        except OSError as exc:
            log.error("feedback not written (%s): %s", self.path, exc)
            raise FeedbackError(f"the rating could not be stored in {self.path}: {exc}") from exc

    def records(self) -> Iterator[dict[str, Any]]:
        """Yield the log's ratings in the order written; lines that are not ratings are skipped."""
        if self.path is None or not self.path.is_file():
            return
        with self.path.open("rb") as f:
            for raw in f:
                rec = rating_record(raw)
                if rec is not None:
                    yield rec

    def latest(self) -> dict[str, dict[str, Any]]:
        """Return each rated run's latest rating, by run id, in the order they were last rated."""
        out: dict[str, dict[str, Any]] = {}
        for rec in self.records():
            out.pop(rec["run_id"], None)
            out[rec["run_id"]] = rec
        return out

    def rated_before(self, run_id: str) -> bool:
        """Whether the log already holds a rating of this run."""
        return any(rec["run_id"] == run_id for rec in self.records())


_DISABLED = ("feedback is off because the audit log is (TEXTBOUND_AUDIT_LOG is empty): ratings "
             "are checked against it and kept beside it; set TEXTBOUND_AUDIT_LOG to a file")


# --- LangSmith -----------------------------------------------------------------------------------
def langsmith_tracing() -> bool:
    """Whether LangSmith tracing is on (LANGSMITH_TRACING, or a `tracing_context` that says so)."""
    try:
        from langsmith.utils import tracing_is_enabled
    except ImportError:  # pragma: no cover - langsmith ships with langchain-core
        return False
    return bool(tracing_is_enabled())


_client: Any = None


def _default_client() -> Any:
    global _client
    if _client is None:
        from langsmith import Client

        _client = Client()
    return _client


def send_to_langsmith(record: Mapping[str, Any], *, client: Any = None,
                      tracing: Callable[[], bool] = langsmith_tracing) -> bool:
    """Send a rating as LangSmith feedback on its run when tracing is on; return whether sent.

    `trace_id` is the run id too: a response's run is the root of its trace, and with it the
    client uploads in the background instead of making the rating wait. Never raises: a failure
    is logged once (a warning) and the rating stands in the local log.
    """
    global _warned
    if not tracing():
        return False
    try:
        (client or _default_client()).create_feedback(
            record["run_id"], key=LANGSMITH_KEY, score=1 if record["rating"] == "up" else 0,
            value=record["rating"], comment=record.get("comment"), trace_id=record["run_id"])
        return True
    except Exception as exc:  # noqa: BLE001 - see docstring: LangSmith is best effort here
        if not _warned:
            _warned = True
            log.warning("could not send the rating to LangSmith (kept in the feedback log): %r",
                        exc)
        return False


# --- rating a run --------------------------------------------------------------------------------
def rate_run(
    audit_log: Path | RecordStore | None,
    run_id: object,
    rating: object,
    comment: str | None = None,
    *,
    turns: TurnLookup | None = None,
    passages: PassageLookup | None = None,
    response: Mapping[str, Any] | None = None,
    langsmith_client: Any = None,
    tracing: Callable[[], bool] = langsmith_tracing,
) -> dict[str, Any]:
    """Check a rating, look its run up, append it to the feedback log; return the stored record.

    The record carries `replaces_earlier` when the run was rated before (the latest rating wins).
    Raises InvalidFeedbackError (bad id, rating or comment), FeedbackDisabledError (no audit
    log), UnknownRunError (no such run) or FeedbackError (the log cannot be written).
    """
    rid = check_run_id(run_id)
    verdict = check_rating(rating)
    note = check_comment(comment)
    if audit_log is None or not getattr(audit_log, "enabled", True):
        raise FeedbackDisabledError(_DISABLED)
    target: FeedbackStore
    if isinstance(audit_log, str | Path):
        line = find_run(Path(audit_log), rid)
        target = FeedbackLog(feedback_log_path(Path(audit_log)))
    else:  # a record store (PostgreSQL's tables, shared by every server process)
        line = audit_log.find_run(rid)
        target = audit_log.feedback
    if line is None:
        raise UnknownRunError(
            f"no response with run_id {rid} in the audit log: rate a response this server "
            "gave, by the `run_id` in it")
    record = {"event": "feedback", "timestamp": utc_timestamp(), "run_id": rid,
              "rating": verdict, "comment": note,
              **{k: v for k, v in describe_run(line, turns=turns, passages=passages,
                                               response=response).items() if k != "run_id"}}
    earlier = target.rated_before(rid)
    target.append(record)
    send_to_langsmith(record, client=langsmith_client, tracing=tracing)
    return {**record, "replaces_earlier": earlier}


def summary_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """Return what a client is told about a stored rating (the answer's text is not echoed)."""
    return {
        "run_id": record["run_id"], "rating": record["rating"], "comment": record.get("comment"),
        "timestamp": record["timestamp"], "thread_id": record.get("thread_id"),
        "question": record.get("asked_question") or record.get("question"),
        "was_refusal": record.get("was_refusal"), "refusal_reason": record.get("refusal_reason"),
        "sources": [{k: s.get(k) for k in ("chunk_id", "source", "section")}
                    for s in record.get("sources") or []],
        "replaces_earlier": bool(record.get("replaces_earlier")),
    }
