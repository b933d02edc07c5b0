"""`build_report`: scan the log, group the most refused questions by topic, write the report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from textbound.analytics.counting import DEFAULT_CAPACITY
from textbound.analytics.locate import store_locator
from textbound.analytics.marked import FeedbackSummary, marked_wrong
from textbound.analytics.render import write_report
from textbound.analytics.scan import LogSummary, scan_log
from textbound.analytics.topics import (
    DEFAULT_CUTOFF,
    DEFAULT_MIN_COUNT,
    NOTHING_CLOSE,
    Locator,
    TopicGroup,
    group_by_topic,
)
from textbound.settings import Settings

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


def build_report(
    audit: Path,
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

    Topics come from `locate` if given, else from the settings' collection; when that cannot be
    opened (missing, locked by a running server, ...) questions are grouped by normalised text and
    the report says why. The answers students marked wrong come from `feedback`, by default the
    feedback log beside the audit log.
    """
    from textbound.errors import TextboundError
    from textbound.feedback import feedback_log_path
    from textbound.sanitize import hide_paths

    summary = scan_log(audit, since=since, capacity=capacity, progress=progress)
    questions = summary.questions.top(top)
    close: Callable[[], None] | None = None
    note = ""
    if locate is None and settings is not None and questions:
        try:
            locate, close = store_locator(settings)
        except TextboundError as exc:
            note = (f"The collection could not be searched ({hide_paths(str(exc), settings)}); "
                    "questions are grouped by their normalised text only.")
    try:
        if locate is not None:
            groups = group_by_topic(questions, locate, cutoff=cutoff, min_count=min_count)
            collection = getattr(settings, "collection", None)
            where = f" of collection `{collection}`" if collection else ""
            note = note or (f"Each of the {len(questions)} most refused questions was embedded and "
                            f"matched to its nearest chunk{where}; below cosine {cutoff:.2f} it "
                            f"counts as \"{NOTHING_CLOSE}\".")
        else:
            groups = group_by_topic(questions, None, min_count=min_count)
            note = note or "Questions are grouped by their normalised text only."
    finally:
        if close is not None:
            close()
    rated = marked_wrong(feedback or feedback_log_path(Path(audit)), since=since)
    files = write_report(out_dir, summary, groups, grouping_note=note, feedback=rated,
                         data_dir=Path(settings.data_dir) if settings is not None else None)
    return ReportResult(Path(out_dir), files, summary, groups, note, rated)
