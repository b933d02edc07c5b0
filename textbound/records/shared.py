"""The settings' record store: files in the data folder, or PostgreSQL tables several share.

With `TEXTBOUND_CHECKPOINTER=postgres` a course's audit lines and ratings are kept in the
database of `TEXTBOUND_CHECKPOINT_URL`, beside its conversations and keys
(`textbound.records.records_postgres`), so every server process answers a rating of a run
another gave, forgets a deleted thread's records wherever they were written, and `textbound
report` counts every process's questions. Otherwise (SQLite, memory, off) they are the files
they always were: the audit log `TEXTBOUND_AUDIT_LOG` and `feedback.jsonl` beside it
(`FileRecords`). An empty `TEXTBOUND_AUDIT_LOG` turns both off, whatever the backend.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textbound.records.audit import AuditLog
from textbound.records.feedback import FeedbackLog, feedback_log_path, forget_thread_records
from textbound.records.rated_runs import find_run
from textbound.records.record_store import RecordStore

if TYPE_CHECKING:
    from textbound.settings import Settings

__all__ = ["FileRecords", "records_of"]


class FileRecords:
    """A course's records as JSON-lines files: the audit log and `feedback.jsonl` beside it."""

    def __init__(self, audit_log: Path | None) -> None:
        self.path = Path(audit_log) if audit_log is not None else None
        self.where = str(self.path) if self.path is not None else "(off)"
        self.enabled = self.path is not None
        self.audit = AuditLog(self.path)
        self.feedback = FeedbackLog(feedback_log_path(self.path))

    def exists(self) -> bool:
        """Whether the audit log file exists."""
        return self.path is not None and self.path.is_file()

    def audit_lines(self) -> Iterator[bytes]:
        """Yield the audit log's lines as written."""
        if not self.exists():
            return
        assert self.path is not None
        with self.path.open("rb") as f:
            yield from f

    def find_run(self, run_id: str) -> dict[str, Any] | None:
        """Return the run's audit line, read from the end of the log."""
        return None if self.path is None else find_run(self.path, run_id)

    def forget(self, thread_id: str) -> int:
        """Rewrite both logs without the thread's lines."""
        return forget_thread_records(self.path, thread_id)


_shared: dict[tuple[str, str], RecordStore] = {}
_lock = threading.Lock()


def records_of(settings: Settings) -> RecordStore:
    """Return the records of the course `settings` are of (`textbound.records.courses`).

    On PostgreSQL the store is opened once per process and course (its tables are created by
    the first process, one at a time) and kept open; raises ConfigError (one line naming
    TEXTBOUND_CHECKPOINT_URL, password hidden) when the database cannot be reached then.
    """
    if settings.checkpointer != "postgres" or settings.audit_log is None:
        return FileRecords(settings.audit_log)
    from textbound.records.courses import course_for
    from textbound.records.records_postgres import PostgresRecords

    url = settings.checkpoint_url.get_secret_value() if settings.checkpoint_url else ""
    key = (url, course_for(settings).name)
    with _lock:
        found = _shared.get(key)
        if found is None:
            found = _shared[key] = PostgresRecords.open(url, key[1])
    return found
