"""`build_report`: scan the log, find the coverage gaps and the most refused topics, report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from textbound.quality.analytics.counting import DEFAULT_CAPACITY
from textbound.quality.analytics.gaps import ChapterGaps, gaps_by_chapter
from textbound.quality.analytics.locate import store_locator
from textbound.quality.analytics.marked import FeedbackSummary, marked_wrong
from textbound.quality.analytics.render import write_report
from textbound.quality.analytics.scan import LogSummary, scan_log
from textbound.quality.analytics.topics import (
    DEFAULT_CUTOFF,
    DEFAULT_MIN_COUNT,
    NOTHING_CLOSE,
    Locator,
    TopicGroup,
    group_by_topic,
)
from textbound.settings import Settings

if TYPE_CHECKING:
    from textbound.records.record_store import RecordStore

DEFAULT_TOP = 50


@dataclass
class ReportResult:
    """What `build_report` wrote and what it found."""

    out_dir: Path
    files: list[Path]
    summary: LogSummary
    groups: list[TopicGroup]
    grouping_note: str
    feedback: FeedbackSummary
    gaps: list[ChapterGaps] = field(default_factory=list)


def why_unsearchable(exc: Exception, collection: str) -> str:
    """Say in one line, for a teacher, why the collection could not be searched.

    The store's own message (paths, engine errors such as a write-ahead log's lock) stays out
    of the report: it says what could not be read and why, nothing internal.
    """
    from textbound.errors import NotIngestedError, SetupError, StoreInUseError

    if isinstance(exc, StoreInUseError):
        why = "a running `textbound serve` (or another textbound command) holds it"
    elif isinstance(exc, NotIngestedError) or (isinstance(exc, SetupError)
                                                and "does not exist" in str(exc)):
        why = "it does not exist yet (nothing was ingested into it)"
    else:
        why = "the store could not be opened (`textbound stats` says why)"
    return f"the collection `{collection}` could not be searched: {why}"


def build_report(
    audit: Path | RecordStore,
    out_dir: Path,
    *,
    since: datetime | None = None,
    settings: Settings | None = None,
    locate: Locator | None = None,
    top: int = DEFAULT_TOP,
    cutoff: float = DEFAULT_CUTOFF,
    min_count: int = DEFAULT_MIN_COUNT,
    capacity: int = DEFAULT_CAPACITY,
    progress: Callable[[int, int], None] | None = None,
    feedback: Path | None = None,
) -> ReportResult:
    """Scan the log, group the top refused questions by topic, and write the report.

    A question's topic and chapter come from its audit lines (the best retrieved passage each
    records); only questions from older lines, which lack it, are looked up with `locate` if
    given, else in the settings' collection. When that cannot be searched (missing, held by a
    running server, ...) those questions are grouped by their text and the report says why in
    one line. The answers students marked wrong come from `feedback`, by default the feedback
    log beside the audit log. `audit` is the log's file, or a course's record store
    (`textbound.records.shared.records_of`: on PostgreSQL, every server process's lines and
    ratings).
    """
    from textbound.errors import TextboundError
    from textbound.records.feedback import feedback_log_path

    summary = scan_log(audit, since=since, capacity=capacity, progress=progress)
    questions = summary.questions.top(top)
    every = summary.questions.top()
    close: Callable[[], None] | None = None
    note = ""
    unplaced = [q for q in questions if q.nearest is None]
    unplaced_gaps = [q for q in every if q.nearest is None and q.gaps]
    if locate is None and settings is not None and (unplaced or unplaced_gaps):
        try:
            locate, close = store_locator(settings)
        except TextboundError as exc:
            older = len({q.key for q in [*unplaced, *unplaced_gaps]})
            note = (f"{older} refused question{'s' if older != 1 else ''} from audit lines "
                    "that do not record their nearest passage (written by an older textbound) "
                    f"are grouped by their text: {why_unsearchable(exc, settings.collection)}.")
    try:
        collection = getattr(settings, "collection", None)
        where = f" of collection `{collection}`" if collection else ""
        groups = group_by_topic(questions, locate, cutoff=cutoff, min_count=min_count)
        gaps = gaps_by_chapter(every, locate, cutoff=cutoff)
        note = note or (f"Each of the {len(questions)} most refused questions is placed at its "
                        f"best retrieved passage{where}, as its audit lines record it (older "
                        "lines: looked up in the collection, or grouped by their text); below "
                        f"cosine {cutoff:.2f} it counts as \"{NOTHING_CLOSE}\".")
    finally:
        if close is not None:
            close()
    rated = marked_wrong(feedback or (feedback_log_path(Path(audit))
                                      if isinstance(audit, str | Path) else audit), since=since)
    files = write_report(out_dir, summary, groups, grouping_note=note, feedback=rated,
                         data_dir=Path(settings.data_dir) if settings is not None else None,
                         gaps=gaps)
    return ReportResult(Path(out_dir), files, summary, groups, note, rated, gaps)
