"""The audit log: one JSON line per response, answer or refusal (seed 000's fields and more).

Each line is written with a single `write()` on a file opened with O_APPEND, under a lock, so
concurrent requests (threads or processes) never interleave or lose lines. Appends share the
log's lock file (`<log>.lock`, flock); deleting a conversation (`drop_thread_lines`) takes it
alone while it rewrites the log without that thread's lines, so no append is lost meanwhile.
A log that cannot be written is reported once (through `logging` when it is configured, else on
stderr), counted for `/healthz`, and never turns an answer into a crash. Text that is not valid
Unicode (a lone surrogate, from a JSON escape or an undecodable command-line byte) is written as
U+FFFD, so the line is always valid UTF-8 JSON.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textbound.text import valid_unicode

__all__ = ["AuditLog", "append_json_line", "drop_thread_lines", "utc_timestamp"]

log = logging.getLogger("textbound.records.audit")
_MAX_QUESTION_CHARS = 4000


def bounded_record(record: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of an audit line whose question is cut to 4,000 characters (length kept)."""
    rec = dict(record)
    q = rec.get("question")
    if isinstance(q, str) and len(q) > _MAX_QUESTION_CHARS:
        rec["question"] = q[:_MAX_QUESTION_CHARS]
        rec["question_truncated_from"] = len(q)
    return rec


def utc_timestamp() -> str:
    """Return the current time as ISO 8601 UTC with a Z suffix."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@contextmanager
def _log_lock(path: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold the log's lock file: shared while appending, exclusive while rewriting the log."""
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # releases the lock


def append_json_line(path: Path, record: dict[str, Any], lock: threading.Lock) -> None:
    """Append `record` to `path` as one JSON line, in a single O_APPEND write under `lock`.

    Text that is not valid Unicode is written as U+FFFD, so the line is always valid UTF-8 JSON.
    Raises OSError (a short write too), ValueError or TypeError when it cannot be written.
    """
    text = json.dumps(record, ensure_ascii=False, default=str)
    line = (valid_unicode(text) + "\n").encode("utf-8")
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _log_lock(path, exclusive=False):
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                written = os.write(fd, line)
            finally:
                os.close(fd)
    if written != len(line):
        raise OSError(f"short write ({written} of {len(line)} bytes)")


def _of_thread(raw: bytes, thread_id: str) -> bool:
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return isinstance(rec, dict) and rec.get("thread_id") == thread_id


def drop_thread_lines(path: Path | None, thread_id: str) -> int:
    """Rewrite a JSON-lines log without the lines of conversation `thread_id`; return how many.

    What a deleted conversation asked and was answered leaves the log with it. The log is
    replaced atomically (a copy in its folder, then a rename) while its lock file is held
    alone, so concurrent appends wait and none is lost. No line of the thread: left untouched.
    """
    if path is None or not Path(path).is_file():
        return 0
    path = Path(path)
    # a cheap test before parsing: ids are letters, digits and _ - . : (threads.THREAD_ID_RULE)
    needle = re.compile(rb'"thread_id"\s*:\s*"' + re.escape(thread_id.encode()) + rb'"')
    copy = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    dropped = 0
    with _log_lock(path, exclusive=True):
        try:
            with path.open("rb") as src, copy.open("wb") as out:
                for raw in src:
                    if needle.search(raw) and _of_thread(raw, thread_id):
                        dropped += 1
                        continue
                    out.write(raw)
                out.flush()
                os.fsync(out.fileno())
            if dropped:
                os.chmod(copy, path.stat().st_mode & 0o777)
                os.replace(copy, path)
        finally:
            copy.unlink(missing_ok=True)
    return dropped


class AuditLog:
    """Append-only JSON-lines audit log."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.failures = 0
        self.last_error: str | None = None
        """Why the latest write failed; None once a write succeeds again."""

    def write(self, record: dict[str, Any]) -> bool:
        """Append one record; return False (after reporting it) if it could not be written."""
        if self.path is None:
            return True
        rec = bounded_record(record)
        try:
            append_json_line(self.path, rec, self._lock)
        except (OSError, ValueError, TypeError) as exc:
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            msg = f"textbound: AUDIT LOG NOT WRITTEN ({self.path}): {exc}"
            # once: logging's last-resort handler would print it a second time
            if log.hasHandlers():
                log.error(msg)
            else:
                print(msg, file=sys.stderr)
            return False
        self.last_error = None
        return True

    def check(self) -> dict[str, object]:
        """Report whether the log can be written now: for `/healthz`, without writing a line."""
        if self.path is None:
            return {"ok": True, "enabled": False}
        target = self.path if self.path.exists() else self.path.parent
        while not target.exists() and target != target.parent:
            target = target.parent
        writable = target.is_dir() == (target != self.path) and os.access(target, os.W_OK)
        problem = self.last_error or (None if writable else "the audit log is not writable")
        report: dict[str, object] = {"ok": problem is None, "enabled": True,
                                     "failures": self.failures}
        if problem:
            report["error"] = problem
        return report
