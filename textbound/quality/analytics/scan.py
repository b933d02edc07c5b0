"""The streaming scan: one pass over the audit log, counting in memory that does not grow."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textbound.quality.analytics.counting import DEFAULT_CAPACITY, TopQuestions, normalise_question
from textbound.quality.analytics.gaps import asker_of, is_gap, nearest_of

if TYPE_CHECKING:
    from textbound.records.record_store import RecordStore

MAX_LINE_BYTES = 1 << 20
"""Longer lines are counted as malformed and skipped without being held in memory."""
MAX_REASONS = 64
MAX_MALFORMED_EXAMPLES = 10


def parse_since(value: str | None) -> datetime | None:
    """Parse `--since`: a date (midnight UTC) or an ISO 8601 time; naive times are UTC."""
    if value is None or not value.strip():
        return None
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise ValueError(f"--since must be a date like 2025-01-31 or an ISO 8601 time, "
                         f"not {value!r}") from exc
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def shown_path(path: Path | str | None, data_dir: Path | None) -> str:
    """Return a path as the report prints it: relative to the data folder, else its name alone.

    The report is handed around; it says which file without showing the server's disk.
    """
    if path is None:
        return "–"
    path = Path(path)
    if data_dir is not None:
        try:
            return path.resolve().relative_to(Path(data_dir).resolve()).as_posix()
        except (OSError, ValueError):
            pass
    return path.name


@dataclass
class LogSummary:
    """What one pass over the audit log counted."""

    path: Path | None
    """The log's file (None: a record store's table, named by `where`)."""
    where: str | None = None
    bytes_total: int = 0
    bytes_read: int = 0
    lines: int = 0
    malformed: Counter[str] = field(default_factory=Counter)
    malformed_examples: list[tuple[int, str]] = field(default_factory=list)
    before_since: int = 0
    since: datetime | None = None
    answers: int = 0
    refusals: int = 0
    gaps: int = 0
    """Refusals on topic that the book did not answer
    (`textbound.quality.analytics.gaps.is_gap`)."""
    reasons: Counter[str] = field(default_factory=Counter)
    per_hour: dict[datetime, list[int]] = field(default_factory=dict)
    first: datetime | None = None
    last: datetime | None = None
    questions: TopQuestions = field(default_factory=TopQuestions)

    def shown(self, data_dir: Path | None) -> str:
        """Where the lines were read, as the report names it (`shown_path`)."""
        return self.where or shown_path(self.path, data_dir)

    @property
    def records(self) -> int:
        """Responses counted (answers + refusals)."""
        return self.answers + self.refusals

    @property
    def malformed_total(self) -> int:
        """Lines skipped as malformed."""
        return sum(self.malformed.values())


def _bad(summary: LogSummary, lineno: int, kind: str) -> None:
    summary.malformed[kind] += 1
    if len(summary.malformed_examples) < MAX_MALFORMED_EXAMPLES:
        summary.malformed_examples.append((lineno, kind))


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _file_lines(path: Path, summary: LogSummary) -> Iterator[bytes | None]:
    """Yield the file's lines; a line past MAX_LINE_BYTES is skipped unread, as None."""
    with path.open("rb") as f:
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                summary.bytes_read += len(raw)
                while (rest := f.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    summary.bytes_read += len(rest)
                summary.bytes_read += len(rest)
                yield None
                continue
            yield raw


def scan_log(
    path: Path | RecordStore,
    *,
    since: datetime | None = None,
    capacity: int = DEFAULT_CAPACITY,
    progress: Callable[[int, int], None] | None = None,
    progress_every: int = 1 << 20,
) -> LogSummary:
    """Read the audit log once and count it; malformed lines are counted and skipped.

    `path` is the log's file, or a course's record store (`textbound.records.shared.records_of`:
    PostgreSQL's table, which every server process writes), read line by line as written.
    `progress(bytes_read, bytes_total)` is called about every `progress_every` bytes and at the
    end (a store's total is known only then). Raises FileNotFoundError when a file does not
    exist.
    """
    if isinstance(path, str | Path):
        summary = LogSummary(path=Path(path), since=since, questions=TopQuestions(capacity))
        summary.bytes_total = Path(path).stat().st_size
        lines: Iterator[bytes | None] = _file_lines(Path(path), summary)
    else:
        summary = LogSummary(path=None, where=path.where, since=since,
                             questions=TopQuestions(capacity))
        lines = iter(path.audit_lines())
    hours = summary.per_hour
    reasons = summary.reasons
    next_report = progress_every
    for raw in lines:
        summary.lines += 1
        lineno = summary.lines
        if raw is None:
            _bad(summary, lineno, "line too long")
            continue
        summary.bytes_read += len(raw)
        summary.bytes_total = max(summary.bytes_total, summary.bytes_read)
        if progress is not None and summary.bytes_read >= next_report:
            progress(summary.bytes_read, summary.bytes_total)
            next_report = summary.bytes_read + progress_every
        if not raw.strip():
            _bad(summary, lineno, "empty line")
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError):
            _bad(summary, lineno, "not valid JSON")
            continue
        if not isinstance(rec, dict):
            _bad(summary, lineno, "not a JSON object")
            continue
        event = rec.get("event")
        if event not in ("answer", "refusal"):
            _bad(summary, lineno, "unknown event")
            continue
        ts = _timestamp(rec.get("timestamp"))
        if ts is None:
            _bad(summary, lineno, "missing or bad timestamp")
            continue
        if since is not None and ts < since:
            summary.before_since += 1
            continue
        if summary.first is None or ts < summary.first:
            summary.first = ts
        if summary.last is None or ts > summary.last:
            summary.last = ts
        hour = ts.replace(minute=0, second=0, microsecond=0)
        bucket = hours.get(hour)
        if bucket is None:
            bucket = hours[hour] = [0, 0]
        if event == "answer":
            summary.answers += 1
            bucket[0] += 1
            continue
        summary.refusals += 1
        bucket[1] += 1
        reason = rec.get("refusal_reason")
        reason = reason if isinstance(reason, str) and reason else "(none given)"
        if reason not in reasons and len(reasons) >= MAX_REASONS:
            reason = "(other)"
        reasons[reason] += 1
        question = rec.get("question")
        gap = is_gap(rec)
        summary.gaps += int(gap)
        summary.questions.add(normalise_question(question),
                              question if isinstance(question, str) else "",
                              reason, bool(rec.get("selected_text")), gap=gap,
                              nearest=nearest_of(rec), asker=asker_of(rec))
    if progress is not None:
        progress(summary.bytes_read, summary.bytes_total)
    return summary
