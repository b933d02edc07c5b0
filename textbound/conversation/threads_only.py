"""`ThreadsOnly`: the saver graph.builder compiles the graph with, around the one it is given.

A run that names a thread is checkpointed by that saver; a run without one stands alone. The
saver's failures to reach its store become `ThreadStoreError` (a `store_unavailable` refusal).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from textbound.conversation.threads import (
    STORE_ERRORS,
    unreachable,
    validate_thread_id,
)

__all__ = ["ThreadsOnly", "TurnSaves"]


class TurnSaves(Protocol):
    """Told of each thread save: `textbound.records.turn_audit.HeldAudit` writes lines then."""

    def saved(self, thread_id: str, run_id: object) -> bool:
        """The thread's checkpoint holding run `run_id` is saved."""
        ...

    def lost(self, thread_id: str) -> None:
        """The thread's save failed."""
        ...


class ThreadsOnly(BaseCheckpointSaver[Any]):
    """A saver that keeps a run's checkpoints only when the run names a thread.

    graph.builder compiles the graph with this around the saver it is given: a run with
    `configurable.thread_id` (validated here, before anything is read or written:
    ThreadIdError names the rule) is checkpointed by that saver; a run without one stands
    alone, reading and writing nothing. Everything else is the saver's own. `saves`, when
    given, is told after each thread checkpoint is saved (with the run id it holds) or fails.
    """

    def __init__(self, saver: BaseCheckpointSaver[Any], saves: TurnSaves | None = None) -> None:
        super().__init__(serde=saver.serde)
        self.saver = saver
        self.saves = saves

    def _told(self, config: RunnableConfig, checkpoint: Checkpoint | None) -> None:
        """Tell `saves` the thread's checkpoint is saved (None: its save failed)."""
        if self.saves is None:
            return
        thread = str((config.get("configurable") or {}).get("thread_id"))
        if checkpoint is None:
            self.saves.lost(thread)
        else:
            self.saves.saved(thread, (checkpoint.get("channel_values") or {}).get("run_id"))

    @staticmethod
    def _threaded(config: RunnableConfig | None) -> bool:
        thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
        return thread_id is not None and bool(validate_thread_id(thread_id))

    @staticmethod
    def _alone(config: RunnableConfig, checkpoint: Checkpoint) -> RunnableConfig:
        return {"configurable": {**(config.get("configurable") or {}),
                                 "checkpoint_id": checkpoint["id"]}}

    @property
    def config_specs(self) -> list[Any]:
        """The saver's own configurable fields."""
        return self.saver.config_specs

    def with_allowlist(self, extra_allowlist: Any) -> ThreadsOnly:
        """Return this around the saver with LangGraph's msgpack allowlist applied."""
        return ThreadsOnly(self.saver.with_allowlist(extra_allowlist), self.saves)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """Number a channel's next version as the saver does."""
        return self.saver.get_next_version(current, channel)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the thread's checkpoint; a run without a thread has none."""
        if not self._threaded(config):
            return None
        try:
            return self.saver.get_tuple(config)
        except STORE_ERRORS as exc:
            raise unreachable(exc) from exc

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the thread's checkpoint; a run without a thread has none."""
        if not self._threaded(config):
            return None
        try:
            return await self.saver.aget_tuple(config)
        except STORE_ERRORS as exc:
            raise unreachable(exc) from exc

    def list(self, config: RunnableConfig | None, **kwargs: Any) -> Iterator[CheckpointTuple]:
        """List the saver's checkpoints (a config without a thread lists none)."""
        if config is None or self._threaded(config):
            yield from self.saver.list(config, **kwargs)

    async def alist(self, config: RunnableConfig | None, **kwargs: Any
                    ) -> AsyncIterator[CheckpointTuple]:
        """List the saver's checkpoints (a config without a thread lists none)."""
        if config is None or self._threaded(config):
            async for item in self.saver.alist(config, **kwargs):
                yield item

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Keep a thread's checkpoint; a run without a thread keeps nothing."""
        if not self._threaded(config):
            return self._alone(config, checkpoint)
        try:
            saved = self.saver.put(config, checkpoint, metadata, new_versions)
        except BaseException as exc:
            self._told(config, None)
            if isinstance(exc, STORE_ERRORS):
                raise unreachable(exc) from exc
            raise
        self._told(config, checkpoint)
        return saved

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata, new_versions: ChannelVersions
                   ) -> RunnableConfig:
        """Keep a thread's checkpoint; a run without a thread keeps nothing."""
        if not self._threaded(config):
            return self._alone(config, checkpoint)
        try:
            saved = await self.saver.aput(config, checkpoint, metadata, new_versions)
        except BaseException as exc:
            self._told(config, None)
            if isinstance(exc, STORE_ERRORS):
                raise unreachable(exc) from exc
            raise
        self._told(config, checkpoint)
        return saved

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                   task_id: str, task_path: str = "") -> None:
        """Keep a thread's pending writes; a run without a thread keeps nothing."""
        if self._threaded(config):
            try:
                self.saver.put_writes(config, writes, task_id, task_path)
            except STORE_ERRORS as exc:
                raise unreachable(exc) from exc

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        """Keep a thread's pending writes; a run without a thread keeps nothing."""
        if self._threaded(config):
            try:
                await self.saver.aput_writes(config, writes, task_id, task_path)
            except STORE_ERRORS as exc:
                raise unreachable(exc) from exc

    @property
    def turn_lock(self) -> Callable[[str], AbstractContextManager[None]] | None:
        """The saver's lock on one thread across processes (PostgreSQL's), or None.

        Entering it raises ThreadStoreError when the store cannot be reached.
        """
        inner = getattr(self.saver, "turn_lock", None)
        if inner is None:
            return None

        @contextmanager
        def held(thread_id: str) -> Iterator[None]:
            lock = inner(validate_thread_id(thread_id))
            try:
                lock.__enter__()
            except STORE_ERRORS as exc:
                raise unreachable(exc) from exc
            try:
                yield
            finally:
                lock.__exit__(None, None, None)

        return held

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints from the saver."""
        self.saver.delete_thread(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints from the saver."""
        await self.saver.adelete_thread(thread_id)

    def delete_for_runs(self, *args: Any, **kwargs: Any) -> None:
        """Delete runs' checkpoints from the saver."""
        self.saver.delete_for_runs(*args, **kwargs)

    async def adelete_for_runs(self, *args: Any, **kwargs: Any) -> None:
        """Delete runs' checkpoints from the saver."""
        await self.saver.adelete_for_runs(*args, **kwargs)

    def copy_thread(self, *args: Any, **kwargs: Any) -> None:
        """Copy a thread within the saver."""
        self.saver.copy_thread(*args, **kwargs)

    async def acopy_thread(self, *args: Any, **kwargs: Any) -> None:
        """Copy a thread within the saver."""
        await self.saver.acopy_thread(*args, **kwargs)

    def prune(self, *args: Any, **kwargs: Any) -> None:
        """Prune threads' checkpoints in the saver."""
        self.saver.prune(*args, **kwargs)

    async def aprune(self, *args: Any, **kwargs: Any) -> None:
        """Prune threads' checkpoints in the saver."""
        await self.saver.aprune(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # what LangGraph's interface leaves to each saver (close, the connection) is the saver's
        if name == "saver":  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.saver, name)
