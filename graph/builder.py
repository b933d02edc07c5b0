"""Wire the graph: nodes, conditional edges, refusal terminals. Nothing else lives here."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from graph.context import context_schema, enter_run
from graph.reasons import RefusalReason, fired_by
from graph.routers import (
    NEXT_BY_KIND,
    route_after_check_question,
    route_after_score_gate,
    then,
)
from graph.services import Services, build_services
from graph.state import FIRST_NODE, InputState, OutputState, State
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
from textbound.conversation.threads import STATE_TYPES
from textbound.conversation.threads_only import ThreadsOnly
from textbound.records.turn_audit import HeldAudit
from textbound.seams import AnswerReader, ChatModel, Embedder
from textbound.settings import Settings

if TYPE_CHECKING:
    from textbound.documents.store import Store

__all__ = ["Services", "build_graph", "build_services"]


def _in_run(node: Callable[..., dict[str, Any]], settings: Settings, *, entry: bool = False
            ) -> Callable[..., dict[str, Any]]:
    """Return `node` as the graph runs it: its `runtime.context` is the run's `RunContext`.

    The entry node (`entry=True`, the first of every run) resolves the run's context once, from
    the caller's `context=` and `config["configurable"]` (`graph.context.enter_run`), and
    writes it to `State.run`; every other node reads it from there. Both through LangGraph's
    public API: the wrapper asks for `runtime` and `config`, and hands the node
    `runtime.override(context=...)`.
    """
    takes_runtime = "runtime" in inspect.signature(node).parameters

    def run(state: State, runtime: Runtime[Any], config: RunnableConfig) -> dict[str, Any]:
        if entry:
            info = runtime.execution_info
            ctx = enter_run(settings, runtime.context, config,
                            run_id=info.run_id if info is not None else None)
        else:
            ctx = state["run"]
        out = node(state, runtime.override(context=ctx)) if takes_runtime else node(state)
        return {**out, "run": ctx} if entry else out

    run.__name__ = run.__qualname__ = node.__name__
    run.__doc__ = node.__doc__
    return run


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
    thread (textbound/conversation/threads.py); without one, runs stand alone.
    """
    s = services or build_services(settings=settings, chat_model=chat_model,
                                   embeddings=embeddings, store=store, reader=reader,
                                   profile=profile)
    # in a thread, a turn's audit line waits for the thread to keep the turn (turn_audit.py)
    held = HeldAudit(s.audit) if checkpointer is not None else None
    reply = Reply(held or s.audit, s.store.collection)

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
        _with(validate_grounding, store=s.store, embeddings=s.embeddings, readers=s.readers),
        _with(greet, profiles=s.profiles, reply=reply),
        _with(describe_coverage, store=s.store, profiles=s.profiles, reply=reply),
        _with(release_answer, reply=reply),
    ]
    nodes += [_with(make_refusal_node(reason), profiles=s.profiles, reply=reply)
              for reason in RefusalReason]
    for node in nodes:
        g.add_node(node.__name__, _in_run(node, s.settings, entry=node.__name__ == FIRST_NODE))
    terminals = ["greet", "describe_coverage", "release_answer"] + [r.node for r in RefusalReason]

    def gate(name: str, router: Callable[[State], str], *ahead: str) -> None:
        """Route `name` on its verdict: ahead, or to the terminals of the reasons it fires."""
        ends = [r.node for r in fired_by(name)]
        g.add_conditional_edges(name, router, [*ahead, *ends])

    g.add_edge(START, FIRST_NODE)
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
    if checkpointer is None:
        return g.compile(name="textbound")
    # the verdicts' reasons come back from a thread's checkpoint; a run without a thread stands
    # alone (ThreadsOnly keeps nothing for it), and says so with its default thread id, None
    saver = ThreadsOnly(checkpointer.with_allowlist(STATE_TYPES), held)
    return g.compile(name="textbound", checkpointer=saver).with_config(
        configurable={"thread_id": None})
