"""Answers students marked wrong: the down-rated runs of the feedback log, grouped by chapter.

The feedback log (`textbound.records.feedback`) keeps every rating; only each run's **latest**
counts, so a rating changed from down to up leaves the report. A run is filed under the chapter of
its
first cited passage (`textbound.records.feedback.chapter_of`: the document and its top-level
heading); a refusal cites nothing and is filed under "refusals", an answer without a passage (a
greeting, the
coverage summary) under "no passage cited". Unlike the audit log's scan, this reads the ratings
into memory: one entry per rated run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textbound.quality.analytics.scan import shown_path
from textbound.records.feedback import FeedbackLog, chapter_of

if TYPE_CHECKING:
    from textbound.records.record_store import RecordStore

REFUSALS = "refusals"
NO_PASSAGE = "no passage cited"
MAX_PER_CHAPTER = 25
"""Most marked-wrong runs listed per chapter (the latest ones); the rest are counted."""


@dataclass
class ChapterFeedback:
    """The runs marked wrong in one chapter, latest rating first."""

    chapter: str
    runs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def shown(self) -> list[dict[str, Any]]:
        """The runs the report lists."""
        return self.runs[:MAX_PER_CHAPTER]


@dataclass
class FeedbackSummary:
    """What the feedback log says, latest rating per run."""

    path: Path | None
    exists: bool = False
    where: str | None = None
    """Where the ratings are when not a file (PostgreSQL's table)."""

    def shown(self, data_dir: Path | None) -> str:
        """Where the ratings are, as the report names it (`shown_path`)."""
        return self.where or shown_path(self.path, data_dir)
    rated: int = 0
    up: int = 0
    down: int = 0
    chapters: list[ChapterFeedback] = field(default_factory=list)


def _when(value: Any) -> datetime | None:
    try:
        dt = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def group_of(record: dict[str, Any]) -> str:
    """Return the chapter a down-rated run is filed under."""
    sources = record.get("sources") or []
    if sources:
        return chapter_of(sources[0])
    return REFUSALS if record.get("was_refusal") else NO_PASSAGE


def marked_wrong(path: Path | RecordStore | None, *, since: datetime | None = None
                 ) -> FeedbackSummary:
    """Read the feedback log and group its down-rated runs by chapter (most marked first).

    `path` is the log's file, or a course's record store (its `feedback`: PostgreSQL's table).
    `since` keeps the ratings given at or after it. A missing log is an empty summary.
    """
    if path is None or isinstance(path, str | Path):
        summary = FeedbackSummary(path=path and Path(path),
                                  exists=bool(path and Path(path).is_file()))
        latest = FeedbackLog(Path(path) if path else None).latest()
    else:
        latest = path.feedback.latest()
        summary = FeedbackSummary(path=None, exists=bool(latest), where=path.where)
    groups: dict[str, ChapterFeedback] = {}
    for rec in reversed(list(latest.values())):  # latest rating first
        when = _when(rec.get("timestamp"))
        if since is not None and (when is None or when < since):
            continue
        summary.rated += 1
        if rec["rating"] == "up":
            summary.up += 1
            continue
        summary.down += 1
        name = group_of(rec)
        groups.setdefault(name, ChapterFeedback(name)).runs.append(rec)
    summary.chapters = sorted(groups.values(), key=lambda g: (
        g.chapter in (REFUSALS, NO_PASSAGE), -len(g.runs), g.chapter))
    return summary


def passage_place(source: dict[str, Any]) -> str:
    """Return where a cited passage is: document, section and page."""
    where = " — ".join(str(source[k]) for k in ("source", "section") if source.get(k))
    page = source.get("page_label") or source.get("page")  # as printed, else the file's page
    if page:
        where += f", page {page}"
    return where or f"chunk {source.get('chunk_id')}"
