"""Async checkpointer methods that run a LangGraph saver's sync ones in a worker thread.

The HTTP server runs the graph's async methods and the CLI its sync ones, so one saver must
serve both: LangGraph's sync savers raise on async calls and its async ones are bound to the
event loop that made them. Mixed in before a sync saver (`class S(ThreadedAsync, SqliteSaver)`),
`ThreadedAsync` gives it async methods that work from any event loop, over the same connection
(textbound/conversation/threads.py for SQLite, textbound/conversation/threads_postgres.py for
PostgreSQL).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ["ThreadedAsync"]


class ThreadedAsync:
    """Async checkpointer methods that run the sync ones in a worker thread.

    Also `list`, read in full before the first checkpoint is given (LangGraph's savers yield
    while holding their lock and connection, so a caller that stops early would keep them), and
    `close`, which closes the saver's connection (or pool).
    """

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None
             ) -> Iterator[CheckpointTuple]:
        """List checkpoints newest first (see the saver's own `list`), read before yielding."""
        found = super().list(config, filter=filter, before=before,  # type: ignore[misc]
                             limit=limit)
        return iter(list(found))

    def close(self) -> None:
        """Close the saver's connection (a pool, for PostgreSQL)."""
        self.conn.close()  # type: ignore[attr-defined]

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Run `get_tuple` in a worker thread."""
        return await asyncio.to_thread(self.get_tuple, config)  # type: ignore[attr-defined]

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None
                    ) -> AsyncIterator[CheckpointTuple]:
        """Run `list` in a worker thread, then yield what it read."""
        items = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before,  # type: ignore[attr-defined]
                                   limit=limit)))
        for item in items:
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata, new_versions: ChannelVersions) -> RunnableConfig:
        """Run `put` in a worker thread."""
        return await asyncio.to_thread(self.put, config, checkpoint,  # type: ignore[attr-defined]
                                       metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        """Run `put_writes` in a worker thread."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id,  # type: ignore[attr-defined]
                                task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Run `delete_thread` in a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)  # type: ignore[attr-defined]
