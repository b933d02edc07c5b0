"""Wire the graph: nodes, conditional edges, refusal terminals. Nothing else lives here."""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph.context import context_schema, run_context
from graph.reasons import RefusalReason, fired_by
from graph.routers import (
    NEXT_BY_KIND,
    route_after_check_question,
    route_after_score_gate,
    then,
)
from graph.services import Services, build_services
from graph.state import InputState, OutputState, State
from nodes._common import Reply
from nodes.check_answerable import check_answerable
from nodes.check_question import check_question
from nodes.contextualize import contextualize
from nodes.generate import generate
from nodes.refuse import make_refusal_node
from nodes.release_answer import release_answer
from nodes.reply import describe_coverage, greet
from nodes.retrieve import retrieve
from nodes.scope_classify import scope_classify
from nodes.score_gate import score_gate
from nodes.select_passage import select_passage
from nodes.validate_grounding import validate_grounding
from textbound import course
from textbound.seams import AnswerReader, ChatModel, Embedder
from textbound.settings import Settings
from textbound.threads import STATE_TYPES, validate_thread_id

if TYPE_CHECKING:
    from textbound.store import Store

__all__ = ["Services", "TextboundGraph", "build_graph", "build_services"]


class TextboundGraph(CompiledStateGraph):  # type: ignore[type-arg]
    """The compiled graph, resolving each run's context once at its entry.

    Every way in (invoke, stream, their async forms, Studio's astream_events) passes through
    `stream` or `astream`; there the run's `RunContext` is resolved from the server's settings and
    the caller's `context=` / `configurable` (`graph.context.run_context`), and every node reads
    it as `runtime.context`. A `RunContext` the caller already resolved is used as it is.
    """

    def __init__(self, *, settings: Settings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings  # kept in __dict__, so Pregel.copy() passes it on

    def _entry(self, input: Any, context: Any, config: RunnableConfig | None
               ) -> tuple[Any, Any, RunnableConfig]:
        """Return the run's input, its resolved context and its config, checked once here.

        The run gets its id (the config's `run_id`, or a new one that the config then carries,
        so a LangSmith trace has the response's id) and its thread (`configurable.thread_id`,
        validated: ThreadIdError names the rule). Input keys a caller leaves out are sent as
        None, so a thread's next question never inherits the last one's selection.
        """
        schema: Any = self.context_schema
        if isinstance(context, dict) and schema is not None:
            # as LangGraph itself would: an unknown key is the caller's TypeError, naming it
            context = schema(**context)
        conf: dict[str, Any] = dict(config or {})
        configurable = conf.get("configurable") or {}
        thread_id = configurable.get("thread_id")
        if thread_id is not None:
            validate_thread_id(thread_id)
        elif isinstance(self.checkpointer, BaseCheckpointSaver):
            # a question without a thread stands alone: no checkpoint, no thread id needed
            conf["configurable"] = {**configurable, CONFIG_KEY_CHECKPOINTER: None}
        ctx = run_context(self.settings, context, configurable)
        run_id = str(ctx.run_id or conf.get("run_id") or uuid.uuid4())
        conf["run_id"] = uuid.UUID(run_id) if _is_uuid(run_id) else conf.get("run_id")
        ctx = replace(ctx, run_id=run_id, thread_id=thread_id)
        if isinstance(input, dict) and "question" in input:
            input = {**{k: None for k in InputState.__annotations__}, **input}
        return input, ctx, cast(RunnableConfig, conf)

    def stream(self, input: Any, config: RunnableConfig | None = None, *, context: Any = None,
               **kwargs: Any) -> Iterator[Any]:
        """Run the graph with this run's resolved context (see `Pregel.stream`)."""
        input, ctx, config = self._entry(input, context, config)
        if ctx.thread_id is not None and self.checkpointer:  # one checkpoint per turn, at its end
            kwargs.setdefault("durability", "exit")
        return super().stream(input, config, context=ctx, **kwargs)

    async def astream(self, input: Any, config: RunnableConfig | None = None, *,
                      context: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        """Run the graph with this run's resolved context (see `Pregel.astream`)."""
        input, ctx, config = self._entry(input, context, config)
        if ctx.thread_id is not None and self.checkpointer:
            kwargs.setdefault("durability", "exit")
        async for chunk in super().astream(input, config, context=ctx, **kwargs):
            yield chunk


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _with(fn: Callable[..., Any], **dependencies: Any) -> Callable[..., Any]:
    """Return node `fn` with its dependencies bound by name, keeping its name and signature.

    LangGraph reads the remaining parameters (state, runtime, config) from the signature.
    """
    bound = functools.partial(fn, **dependencies)
    functools.update_wrapper(bound, fn)
    return bound


def build_graph(
    *,
    settings: Settings | None = None,
    chat_model: ChatModel | None = None,
    embeddings: Embedder | None = None,
    store: Store | None = None,
    reader: AnswerReader | None = None,
    profile: course.Profile | None = None,
    services: Services | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> Any:
    """Compile the refusal-first graph; each outside dependency can be injected.

    `profile` fixes the course profile; without it each run uses the collection's.
    `checkpointer` keeps conversations: a run with `configurable.thread_id` continues that
    thread (textbound/threads.py); without one, runs stand alone.
    """
    s = services or build_services(settings=settings, chat_model=chat_model,
                                   embeddings=embeddings, store=store, reader=reader,
                                   profile=profile)
    reply = Reply(s.audit, s.store.collection)

    g = StateGraph(State, context_schema=context_schema(s.settings),
                   input_schema=InputState, output_schema=OutputState)
    # each node gets exactly the dependencies its signature names, and nothing else
    nodes = [
        _with(check_question, profiles=s.profiles),
        _with(contextualize, chat=s.chat),
        _with(retrieve, store=s.store, embeddings=s.embeddings),
        _with(scope_classify, profiles=s.profiles),
        _with(score_gate, store=s.store),
        _with(select_passage, store=s.store, embeddings=s.embeddings),
        _with(check_answerable, readers=s.readers),
        _with(generate, store=s.store, embeddings=s.embeddings, chat=s.chat,
              profiles=s.profiles),
        _with(validate_grounding, store=s.store, embeddings=s.embeddings),
        _with(greet, profiles=s.profiles, reply=reply),
        _with(describe_coverage, store=s.store, profiles=s.profiles, reply=reply),
        _with(release_answer, reply=reply),
    ]
    nodes += [_with(make_refusal_node(reason), profiles=s.profiles, reply=reply)
              for reason in RefusalReason]
    for node in nodes:
        g.add_node(node.__name__, node)
    terminals = ["greet", "describe_coverage", "release_answer"] + [r.node for r in RefusalReason]

    def gate(name: str, router: Callable[[State], str], *ahead: str) -> None:
        """Route `name` on its verdict: ahead, or to the terminals of the reasons it fires."""
        ends = [r.node for r in fired_by(name)]
        g.add_conditional_edges(name, router, [*ahead, *ends])

    g.add_edge(START, "check_question")
    gate("check_question", route_after_check_question, *NEXT_BY_KIND.values())
    g.add_edge("contextualize", "retrieve")
    # the course's excluded topics are judged before the evidence: an excluded topic is the
    # more specific reason, whatever the scores say
    gate("retrieve", then("scope_classify"), "scope_classify")
    gate("scope_classify", then("score_gate"), "score_gate")
    gate("score_gate", route_after_score_gate, "check_answerable")
    gate("select_passage", then("check_answerable"), "check_answerable")
    gate("check_answerable", then("generate"), "generate")
    gate("generate", then("validate_grounding"), "validate_grounding")
    gate("validate_grounding", then("release_answer"), "release_answer")
    for name in terminals:
        g.add_edge(name, END)
    if checkpointer is not None:  # the verdicts' reasons come back from a thread's checkpoint
        checkpointer = checkpointer.with_allowlist(STATE_TYPES)
    compiled = g.compile(name="textbound", checkpointer=checkpointer)
    attrs = {k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"}
    return TextboundGraph(settings=s.settings, **attrs)
