"""One course's conversations in a store several courses share (`textbound.records.courses`).

`CourseThreads` wraps the server's checkpointer for a course other than the default: every
thread id the course's graph reads, writes, lists or deletes is kept as `<course>/<id>` and
handed back as `<id>`. A valid thread id never holds a `/`, so no id of the default course (kept
as given) and no id of another course can name the same conversation, and the same id asked in
two courses is two conversations. Everything else is the wrapped saver's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

__all__ = ["CourseThreads"]


class CourseThreads(BaseCheckpointSaver[Any]):
    """A checkpointer that keeps one course's threads under its prefix in a shared saver."""

    def __init__(self, saver: BaseCheckpointSaver[Any], prefix: str) -> None:
        super().__init__(serde=saver.serde)
        self.saver, self.prefix = saver, prefix

    # --- the ids, both ways ------------------------------------------------------------------
    def _in(self, config: RunnableConfig) -> RunnableConfig:
        conf = dict(config.get("configurable") or {})
        if conf.get("thread_id") is not None:
            conf["thread_id"] = self.prefix + str(conf["thread_id"])
        return {**config, "configurable": conf}

    def _out(self, config: RunnableConfig | None) -> Any:
        if config is None:
            return None
        conf = dict(config.get("configurable") or {})
        thread = conf.get("thread_id")
        if isinstance(thread, str) and thread.startswith(self.prefix):
            conf["thread_id"] = thread[len(self.prefix):]
        return {**config, "configurable": conf}

    def _mine(self, found: CheckpointTuple) -> bool:
        thread = (found.config.get("configurable") or {}).get("thread_id")
        return isinstance(thread, str) and thread.startswith(self.prefix)

    def _back(self, found: CheckpointTuple | None) -> CheckpointTuple | None:
        if found is None:
            return None
        return found._replace(config=self._out(found.config),
                              parent_config=self._out(found.parent_config))

    # --- LangGraph's saver interface -----------------------------------------------------------
    @property
    def config_specs(self) -> list[Any]:
        """The saver's own configurable fields."""
        return self.saver.config_specs

    def with_allowlist(self, extra_allowlist: Any) -> CourseThreads:
        """Return this around the saver with LangGraph's msgpack allowlist applied."""
        return CourseThreads(self.saver.with_allowlist(extra_allowlist), self.prefix)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """Number a channel's next version as the saver does."""
        return self.saver.get_next_version(current, channel)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the course's thread's checkpoint."""
        return self._back(self.saver.get_tuple(self._in(config)))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the course's thread's checkpoint."""
        return self._back(await self.saver.aget_tuple(self._in(config)))

    def list(self, config: RunnableConfig | None, **kwargs: Any) -> Iterator[CheckpointTuple]:
        """List the course's checkpoints (with no config: all of the course's threads)."""
        if kwargs.get("before") is not None:
            kwargs["before"] = self._in(kwargs["before"])
        for found in self.saver.list(None if config is None else self._in(config), **kwargs):
            if self._mine(found):
                yield self._back(found)  # type: ignore[misc]

    async def alist(self, config: RunnableConfig | None, **kwargs: Any
                    ) -> AsyncIterator[CheckpointTuple]:
        """List the course's checkpoints (with no config: all of the course's threads)."""
        if kwargs.get("before") is not None:
            kwargs["before"] = self._in(kwargs["before"])
        async for found in self.saver.alist(None if config is None else self._in(config),
                                            **kwargs):
            if self._mine(found):
                yield self._back(found)  # type: ignore[misc]

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Keep the course's thread's checkpoint."""
        return self._out(self.saver.put(self._in(config), checkpoint, metadata, new_versions))

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata, new_versions: ChannelVersions
                   ) -> RunnableConfig:
        """Keep the course's thread's checkpoint."""
        return self._out(await self.saver.aput(self._in(config), checkpoint, metadata,
                                               new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                   task_id: str, task_path: str = "") -> None:
        """Keep the course's thread's pending writes."""
        self.saver.put_writes(self._in(config), writes, task_id, task_path)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        """Keep the course's thread's pending writes."""
        await self.saver.aput_writes(self._in(config), writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Delete the course's thread."""
        self.saver.delete_thread(self.prefix + thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the course's thread."""
        await self.saver.adelete_thread(self.prefix + thread_id)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy one of the course's threads to another of its ids."""
        self.saver.copy_thread(self.prefix + source_thread_id, self.prefix + target_thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy one of the course's threads to another of its ids."""
        await self.saver.acopy_thread(self.prefix + source_thread_id,
                                      self.prefix + target_thread_id)

    def prune(self, thread_ids: Sequence[str], **kwargs: Any) -> None:
        """Prune the course's threads."""
        self.saver.prune([self.prefix + t for t in thread_ids], **kwargs)

    async def aprune(self, thread_ids: Sequence[str], **kwargs: Any) -> None:
        """Prune the course's threads."""
        await self.saver.aprune([self.prefix + t for t in thread_ids], **kwargs)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete runs' checkpoints (run ids are unique across courses)."""
        self.saver.delete_for_runs(run_ids)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete runs' checkpoints (run ids are unique across courses)."""
        await self.saver.adelete_for_runs(run_ids)

    def __getattr__(self, name: str) -> Any:
        if name == "saver":  # not set yet: no recursion
            raise AttributeError(name)
        found = getattr(self.saver, name)
        if name == "turn_lock":  # the cross-process lock of one turn, by (prefixed) thread
            return lambda thread_id: found(self.prefix + thread_id)
        # what LangGraph's interface leaves to each saver (close, the connection) is the saver's
        return found
