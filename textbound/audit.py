"""The audit log: one JSON line per response, answer or refusal (seed 000's fields and more).

Each line is written with a single `write()` on a file opened with O_APPEND, under a lock, so
concurrent requests (threads or processes) never interleave or lose lines. A log that cannot be
written is reported loudly on stderr and through the `logging` module, and never turns an answer
into a crash.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["AuditLog", "utc_timestamp"]

log = logging.getLogger("textbound.audit")
_MAX_QUESTION_CHARS = 4000


def utc_timestamp() -> str:
    """Return the current time as ISO 8601 UTC with a Z suffix."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class AuditLog:
    """Append-only JSON-lines audit log."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.failures = 0

    def write(self, record: dict[str, Any]) -> bool:
        """Append one record; return False (after reporting it) if it could not be written."""
        if self.path is None:
            return True
        rec = dict(record)
        q = rec.get("question")
        if isinstance(q, str) and len(q) > _MAX_QUESTION_CHARS:
            rec["question"] = q[:_MAX_QUESTION_CHARS]
            rec["question_truncated_from"] = len(q)
        line = (json.dumps(rec, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        try:
            with self._lock:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    written = os.write(fd, line)
                finally:
                    os.close(fd)
            if written != len(line):
                raise OSError(f"short write ({written} of {len(line)} bytes)")
            return True
        except OSError as exc:
            self.failures += 1
            msg = f"textbound: AUDIT LOG NOT WRITTEN ({self.path}): {exc}"
            log.error(msg)
            print(msg, file=sys.stderr)
            return False
