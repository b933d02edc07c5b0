"""`GuardedGraph`: the compiled graph as a Runnable that shows only input, progress and contract."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager, CallbackManager
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import get_config_list, var_child_runnable_config
from langchain_core.runnables.utils import ConfigurableFieldSpec
from langchain_core.tracers.langchain import LangChainTracer
from pydantic import BaseModel, ConfigDict, Field, create_model

from graph.context import RUN_CONTEXT_KEY, TUNABLE_NAMES
from graph.reasons import retry_later
from textbound.conversation.threads import ThreadStoreError, turn_options
from textbound.serving.server._contract import (
    ChatInput,
    ChatOutput,
    StoreUnavailableResponse,
    contract_of,
    payload_of,
)
from textbound.serving.server._turns import TurnLocks, threads_down
from textbound.tunables import TUNABLES


def _context_specs() -> list[ConfigurableFieldSpec]:
    return [
        ConfigurableFieldSpec(id=t.name, annotation=t.type | None, name=t.name, default=None,
                              description=t.description)
        for t in TUNABLES
    ] + [ConfigurableFieldSpec(
        id="thread_id", annotation=str | None, name="thread_id", default=None,
        description="The conversation this question belongs to: follow-ups are read with its "
        "earlier turns (1-128 letters, digits, '_', '-', '.', ':'). Unset: it stands alone.")]


def _detach() -> None:
    """Stop the inner graph from inheriting the caller's config (and callbacks) implicitly.

    LangGraph merges the ambient `var_child_runnable_config` into every run's config, callbacks
    included, so passing `callbacks=None` is not enough to keep node events out of
    `astream_events`. The `_call_with_config` helpers run each call in a copied context, so
    clearing the variable there affects this run only.
    """
    var_child_runnable_config.set(None)


class GuardedGraph(Runnable[Any, Any]):
    """Serve a compiled textbound graph, exposing only its input, progress and the contract.

    The inner graph runs without the caller's callbacks (so `astream_events` and `astream_log`
    see this runnable's chunks only, never a node's state), except LangSmith tracers, which
    keep the operator's traces nested.
    """

    name = "textbound"

    def __init__(self, graph: Any, *, unavailable_raises: bool = False,
                 batch_concurrency: int | None = None) -> None:
        self.graph = graph
        # invoke/batch raise StoreUnavailableResponse on a store_unavailable refusal, so the HTTP
        # server answers 503 (streams have sent their 200 already and end with the contract)
        self.unavailable_raises = unavailable_raises
        self.batch_concurrency = batch_concurrency
        # one turn at a time per thread, so turns sent at once are all kept
        self.turns = TurnLocks(getattr(graph, "checkpointer", None))
        self._once = turn_options(graph)  # a turn is saved when it ends, not at every step
        self._batch_slots: tuple[Any, asyncio.Semaphore] | None = None

    def _slots(self) -> asyncio.Semaphore | None:
        """The batch-input slots shared by every batch on the running event loop."""
        if self.batch_concurrency is None:
            return None
        loop = asyncio.get_running_loop()
        if self._batch_slots is None or self._batch_slots[0] is not loop:
            self._batch_slots = (loop, asyncio.Semaphore(self.batch_concurrency))
        return self._batch_slots[1]

    async def abatch(self, inputs: list[Any], config: RunnableConfig | list[RunnableConfig] | None
                     = None, *, return_exceptions: bool = False, **kwargs: Any) -> list[Any]:
        """Answer each input, at most `batch_concurrency` at once across all batches."""
        slots = self._slots()
        if slots is None:
            return await super().abatch(inputs, config, return_exceptions=return_exceptions,
                                        **kwargs)
        configs = get_config_list(config, len(inputs))

        async def one(input: Any, cfg: RunnableConfig) -> Any:
            async with slots:
                try:
                    return await self.ainvoke(input, cfg, **kwargs)
                except Exception as exc:
                    if return_exceptions:
                        return exc
                    raise

        return list(await asyncio.gather(*(one(i, c) for i, c in zip(inputs, configs,
                                                                      strict=True))))

    def _checked(self, contract: dict[str, Any]) -> dict[str, Any]:
        if self.unavailable_raises and retry_later(contract["refusal_reason"]):
            raise StoreUnavailableResponse(contract)
        return contract

    @property
    def InputType(self) -> type[ChatInput]:  # noqa: N802 - Runnable's API
        """The request body's `input`."""
        return ChatInput

    @property
    def OutputType(self) -> type[ChatOutput]:  # noqa: N802
        """The response contract."""
        return ChatOutput

    def get_input_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        """Return the input model (question, selected_text, session_id)."""
        return ChatInput

    def get_output_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        """Return the response contract model."""
        return ChatOutput

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        """Return the per-request tunables: the fields of `graph.context.Context`."""
        return _context_specs()

    def config_schema(self, *, include: Any = None) -> type[BaseModel]:
        """Return the config model; unknown `configurable` keys are rejected, not dropped."""
        fields = {s.id: (s.annotation, Field(default=None, description=s.description))
                  for s in self.config_specs}
        configurable = create_model(  # type: ignore[call-overload]
            "Configurable", __config__=ConfigDict(extra="forbid"), **fields)
        return create_model(  # type: ignore[call-overload, no-any-return]
            "TextboundConfig", configurable=(configurable | None, None))

    # --- running -----------------------------------------------------------------------------
    @staticmethod
    def _inner_config(config: RunnableConfig | None, run_manager: Any) -> RunnableConfig:
        config = config or {}
        configurable = config.get("configurable") or {}
        inner: RunnableConfig = {
            # the run context the HTTP guard resolved travels on, so the graph does not resolve
            # it again
            "configurable": {k: v for k, v in configurable.items()
                             if (k in TUNABLE_NAMES or k in (RUN_CONTEXT_KEY, "thread_id"))
                             and v is not None},
            "tags": list(config.get("tags") or []),
            "metadata": dict(config.get("metadata") or {}),
            "callbacks": None,
        }
        if run_manager is not None:
            child = run_manager.get_child()
            tracers: list[BaseCallbackHandler] = [
                h for h in child.handlers if isinstance(h, LangChainTracer)]
            if tracers:
                manager: BaseCallbackManager = CallbackManager(
                    handlers=tracers, inheritable_handlers=tracers,
                    parent_run_id=run_manager.run_id)
                inner["callbacks"] = manager
        return inner

    @staticmethod
    def _thread(config: RunnableConfig) -> str | None:
        found = (config.get("configurable") or {}).get("thread_id")
        return str(found) if found else None

    def _run(self, input: Any, run_manager: Any, config: RunnableConfig) -> dict[str, Any]:
        _detach()
        inner = self._inner_config(config, run_manager)
        try:
            with self.turns.hold_sync(self._thread(inner)):
                out = self.graph.invoke(payload_of(input), inner, **self._once)
        except ThreadStoreError as exc:
            return self._checked(threads_down(exc))
        return self._checked(contract_of(out))

    async def _arun(self, input: Any, run_manager: Any, config: RunnableConfig) -> dict[str, Any]:
        _detach()
        inner = self._inner_config(config, run_manager)
        try:
            async with self.turns.hold(self._thread(inner)):
                out = await self.graph.ainvoke(payload_of(input), inner, **self._once)
        except ThreadStoreError as exc:
            return self._checked(threads_down(exc))
        return self._checked(contract_of(out))

    def invoke(self, input: Any, config: RunnableConfig | None = None,
               **kwargs: Any) -> dict[str, Any]:
        """Answer or refuse one question; returns the response contract."""
        return self._call_with_config(self._run, input, config, run_type="chain")

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None,
                      **kwargs: Any) -> dict[str, Any]:
        """Answer or refuse one question; returns the response contract."""
        return await self._acall_with_config(self._arun, input, config, run_type="chain")

    def _progress(self, inputs: Iterator[Any], run_manager: Any,
                  config: RunnableConfig) -> Iterator[dict[str, Any]]:
        _detach()
        final: Mapping[str, Any] = {}
        inner = self._inner_config(config, run_manager)
        try:
            with self.turns.hold_sync(self._thread(inner)):
                for input in inputs:
                    step = 0
                    for mode, chunk in self.graph.stream(payload_of(input), inner,
                                                         stream_mode=["updates", "values"],
                                                         **self._once):
                        if mode == "updates":
                            for node in chunk:
                                step += 1
                                yield {"progress": {"node": node, "step": step}}
                        else:
                            final = chunk
        except ThreadStoreError as exc:
            yield threads_down(exc)
            return
        yield contract_of(final)

    async def _aprogress(self, inputs: AsyncIterator[Any], run_manager: Any,
                         config: RunnableConfig) -> AsyncIterator[dict[str, Any]]:
        _detach()
        final: Mapping[str, Any] = {}
        inner = self._inner_config(config, run_manager)
        try:
            async with self.turns.hold(self._thread(inner)):
                async for input in inputs:
                    step = 0
                    async for mode, chunk in self.graph.astream(
                            payload_of(input), inner, stream_mode=["updates", "values"],
                            **self._once):
                        if mode == "updates":
                            for node in chunk:
                                step += 1
                                yield {"progress": {"node": node, "step": step}}
                        else:
                            final = chunk
        except ThreadStoreError as exc:
            yield threads_down(exc)
            return
        yield contract_of(final)

    def stream(self, input: Any, config: RunnableConfig | None = None,
               **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Yield `{"progress": ...}` per finished node, then the response contract."""
        yield from self._transform_stream_with_config(iter([input]), self._progress, config,
                                                      run_type="chain")

    async def astream(self, input: Any, config: RunnableConfig | None = None,
                      **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Yield `{"progress": ...}` per finished node, then the response contract."""

        async def one() -> AsyncIterator[Any]:
            yield input

        async for chunk in self._atransform_stream_with_config(one(), self._aprogress, config,
                                                               run_type="chain"):
            yield chunk

