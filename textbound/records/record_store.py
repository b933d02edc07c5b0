"""Where a course keeps its records (audit lines and ratings), whatever keeps them.

`RecordStore` is what the server, the CLI and the teacher's report use of them: the sink turns
write to (`audit`), the audit lines read back in the order written (`audit_lines`, each one JSON
line as bytes, what `textbound.quality.analytics.scan` counts), a run's line by its id
(`find_run`, for a rating), the ratings (`feedback`, a `FeedbackLog`) and forgetting a deleted
conversation (`forget`). Two kinds: files in the data folder (`textbound.records.shared`
`FileRecords`, the default) and tables in the conversations' PostgreSQL database
(`textbound.records.records_postgres`), which several server processes share.
`textbound.records.shared.records_of` returns the settings' one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from textbound.seams import AuditSink

__all__ = ["FeedbackStore", "RecordStore"]


@runtime_checkable
class FeedbackStore(Protocol):
    """The ratings: `textbound.records.feedback.FeedbackLog` and its PostgreSQL kin."""

    def append(self, record: dict[str, Any]) -> None:
        """Keep one rating; raise FeedbackError when it cannot be kept."""
        ...

    def records(self) -> Iterator[dict[str, Any]]:
        """Yield the ratings in the order kept."""
        ...

    def latest(self) -> dict[str, dict[str, Any]]:
        """Return each rated run's latest rating, by run id."""
        ...

    def rated_before(self, run_id: str) -> bool:
        """Whether a rating of this run is kept already."""
        ...


@runtime_checkable
class RecordStore(Protocol):
    """A course's audit lines and ratings (see the module docstring)."""

    @property
    def where(self) -> str:
        """What the records are, for messages and the report (a file's path, or the tables)."""
        ...

    @property
    def enabled(self) -> bool:
        """False when the audit log is off (`TEXTBOUND_AUDIT_LOG=""`): nothing kept or rated."""
        ...

    @property
    def audit(self) -> AuditSink:
        """Where turns write their audit lines."""
        ...

    @property
    def feedback(self) -> FeedbackStore:
        """The ratings."""
        ...

    def exists(self) -> bool:
        """Whether there is an audit log to read (a file that exists; tables, always)."""
        ...

    def audit_lines(self) -> Iterator[bytes]:
        """Yield the audit lines in the order written (each one JSON object, as bytes)."""
        ...

    def find_run(self, run_id: str) -> dict[str, Any] | None:
        """Return the audit line of the response with this run id (the latest), or None."""
        ...

    def forget(self, thread_id: str) -> int:
        """Remove conversation `thread_id`'s audit lines and ratings; return how many."""
        ...
