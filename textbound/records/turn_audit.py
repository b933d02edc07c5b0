"""A conversation turn's audit line, written once its thread has kept the turn.

A turn of a thread is kept when the graph's checkpointer saves it (once, as the turn ends:
`textbound.conversation.threads.turn_options`). The reply node makes the audit line before
that save; written then, a process killed, a turn cancelled (a client that hangs up) or a save
that fails in between would leave a line for a turn the thread never kept, and the teacher's
report would count a question the student's conversation does not hold.

`HeldAudit` stands between the reply and the audit sink: the line of a run with no thread is
written at once, as before; a thread's line is held until the saver reports the checkpoint that
holds that run saved (`saved`, called by `ThreadsOnly` after the save returns), and dropped when
the save fails (`lost`) or when the thread's next turn replaces it. So every line of a thread's
turn is of a turn the thread kept. The one window left is a process killed after the save and
before the line's single append: the turn is then in the conversation and not in the report
(the client was never sent that response either: the server answers after the save).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from textbound.seams import AuditSink

__all__ = ["HeldAudit"]

MAX_HELD = 10_000
"""Most lines held at once (one per thread with a turn in flight); past it, the oldest go."""


class HeldAudit:
    """An `AuditSink` that writes a thread's audit line only once the thread has saved its run."""

    def __init__(self, sink: AuditSink, *, limit: int = MAX_HELD) -> None:
        self.sink = sink
        self.limit = limit
        self._held: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> bool:
        """Write a line without a thread now; hold a thread's line until its turn is saved."""
        thread = record.get("thread_id")
        if not thread:
            return self.sink.write(record)
        with self._lock:
            # a line still held is of a turn that was never saved (cancelled): it is not kept
            self._held.pop(thread, None)
            self._held[thread] = dict(record)
            while len(self._held) > self.limit:
                self._held.popitem(last=False)
        return True

    def saved(self, thread_id: str, run_id: object) -> bool:
        """The thread's checkpoint holding run `run_id` is saved: write its line; say if any."""
        with self._lock:
            record = self._held.get(thread_id)
            if record is None or run_id is None or record.get("run_id") != run_id:
                return False
            del self._held[thread_id]
        return self.sink.write(record)

    def lost(self, thread_id: str) -> None:
        """The thread's save failed: its turn is not kept, and neither is its line."""
        with self._lock:
            self._held.pop(thread_id, None)

    def held(self) -> list[dict[str, Any]]:
        """Return the lines held now, oldest first (for tests and `/healthz` readers)."""
        with self._lock:
            return [dict(r) for r in self._held.values()]

    def check(self) -> dict[str, object]:
        """Report the sink's health (`AuditSink.check`)."""
        return self.sink.check()

    def __getattr__(self, name: str) -> Any:
        # the sink's own attributes (a log's path, its failure count) read through
        if name == "sink":
            raise AttributeError(name)
        return getattr(self.sink, name)
