"""One turn at a time per thread, and the refusal a turn gets when the thread store is down.

Turns sent at once to one thread would each start from the same saved state and the last to
finish would keep only its own turn; `TurnLocks` makes them wait for one another (in this
process; on PostgreSQL the saver's `turn_lock` also holds an advisory lock, so processes
sharing one database wait for one another too). A turn whose conversation cannot be read or
saved fails closed: it is refused with `graph.reasons.THREADS_DOWN`, which the server answers
503 with Retry-After, never a traceback.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import (
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
)
from typing import Any

import prompts
from graph.reasons import THREADS_DOWN

__all__ = ["TurnLocks", "threads_down"]


class TurnLocks:
    """A lock per thread id, kept only while some turn holds or awaits it."""

    def __init__(self, saver: Any = None) -> None:
        self.saver = saver
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, thread_id: str | None) -> AsyncIterator[None]:
        """Run the block while no other turn of `thread_id` runs (no thread: at once)."""
        if not thread_id:
            yield
            return
        lock, users = self._locks.get(thread_id, (asyncio.Lock(), 0))
        self._locks[thread_id] = (lock, users + 1)
        try:
            async with lock:
                shared = getattr(self.saver, "turn_lock", None)
                if shared is None:
                    yield
                else:
                    held = shared(thread_id)
                    await _enter(held)
                    try:
                        yield
                    finally:
                        await asyncio.to_thread(held.__exit__, None, None, None)
        finally:
            lock, users = self._locks[thread_id]
            if users <= 1:
                del self._locks[thread_id]
            else:
                self._locks[thread_id] = (lock, users - 1)

    @contextmanager
    def hold_sync(self, thread_id: str | None) -> Iterator[None]:
        """The shared (cross-process) lock alone, for the sync path (tests, scripts)."""
        shared = getattr(self.saver, "turn_lock", None)
        with shared(thread_id) if (shared is not None and thread_id) else nullcontext():
            yield


async def _enter(held: AbstractContextManager[Any]) -> None:
    """Enter `held` in a worker thread; a turn cancelled meanwhile gives it back once entered.

    Without that, a client that hangs up while its turn waits for the thread would leave the
    lock taken after the wait ends, and every later turn of the thread would wait for ever.
    """
    entering = asyncio.ensure_future(asyncio.to_thread(held.__enter__))
    try:
        await asyncio.shield(entering)
    except asyncio.CancelledError:
        loop = asyncio.get_running_loop()

        def give_back(done: asyncio.Future[Any]) -> None:
            if not done.cancelled() and done.exception() is None:
                loop.run_in_executor(None, held.__exit__, None, None, None)

        entering.add_done_callback(give_back)
        raise


def threads_down(error: BaseException) -> dict[str, Any]:
    """Return the response contract of a turn refused because its conversation is unreachable."""
    return {
        "answer": prompts.refusal_template(THREADS_DOWN.value),
        "was_refusal": True,
        "refusal_reason": THREADS_DOWN.value,
        "sources": [],
        "confidence_level": "insufficient",
        "suggestions": [],
        "diagnostics": {"path": "threads_unavailable", "error": str(error),
                        "store": "conversations"},
        "run_id": str(uuid.uuid4()),
    }
