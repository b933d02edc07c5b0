"""Wire the graph: nodes, conditional edges, refusal terminals. Nothing else lives here."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph

import prompts
from graph.context import context_schema
from graph.routers import (
    GROUNDING_REFUSALS,
    route_after_check_answerable,
    route_after_check_question,
    route_after_generate,
    route_after_retrieve,
    route_after_scope_classify,
    route_after_select_passage,
    route_after_validate_grounding,
)
from graph.state import InputState, OutputState, RefusalReason, State
from nodes._common import Services
from nodes.check_answerable import check_answerable
from nodes.check_question import check_question
from nodes.generate import generate
from nodes.refuse import make_refusal_node
from nodes.release_answer import release_answer
from nodes.reply import describe_coverage, greet
from nodes.retrieve import retrieve
from nodes.scope_classify import scope_classify
from nodes.score_gate import score_gate
from nodes.select_passage import select_passage
from nodes.validate_grounding import validate_grounding
from textbound.answerability import Reader
from textbound.audit import AuditLog

if TYPE_CHECKING:
    from textbound.store import Store

__all__ = ["build_graph", "build_services"]


def build_services(
    *,
    settings: Any = None,
    chat_model: BaseChatModel | None = None,
    embeddings: Embeddings | None = None,
    store: Store | None = None,
    reader: Reader | None = None,
    profile: prompts.Profile | None = None,
) -> Services:
    """Create the services from settings, keeping any dependency passed in.

    With `settings.answerability` on and no reader passed, the answerability model is loaded
    here, once per process: a missing or corrupt model fails at start-up (SetupError naming the
    file and TEXTBOUND_ANSWERABILITY), never per request. Without `profile`, the collection's
    course profile is resolved on each use (textbound.profile); its file, if any, is checked
    here so a bad one fails at start-up (ProfileError naming the file).
    """
    from textbound.embeddings import build_embeddings
    from textbound.settings import get_settings
    from textbound.store import open_store

    settings = settings or get_settings()
    embeddings = embeddings or build_embeddings(settings)
    if store is None:
        store = open_store(settings, embeddings)
    if chat_model is None and settings.chat_model:
        from textbound.chat import build_chat_model

        chat_model = build_chat_model(settings)
    if chat_model is None and settings.generator == "chat":
        from textbound.errors import NO_CHAT_MODEL, ConfigError

        raise ConfigError(f"TEXTBOUND_GENERATOR=chat but {NO_CHAT_MODEL}")
    if reader is None and settings.answerability:
        from textbound.answerability import load_reader

        reader = load_reader(settings.answerability_model_dir)
    if profile is None:
        from textbound.profile import check_profile

        check_profile(settings, getattr(store, "collection", None))
    return Services(settings=settings, embeddings=embeddings, store=store,
                    chat_model=chat_model, audit=AuditLog(settings.audit_log), reader=reader,
                    profile=profile)


def build_graph(
    *,
    settings: Any = None,
    chat_model: BaseChatModel | None = None,
    embeddings: Embeddings | None = None,
    store: Store | None = None,
    reader: Reader | None = None,
    profile: prompts.Profile | None = None,
    services: Services | None = None,
) -> Any:
    """Compile the refusal-first graph; each outside dependency can be injected.

    `profile` fixes the course profile; without it each run uses the collection's.
    """
    services = services or build_services(settings=settings, chat_model=chat_model,
                                          embeddings=embeddings, store=store, reader=reader,
                                          profile=profile)

    def bind(fn: Any) -> Any:
        bound = functools.partial(fn, services=services)
        functools.update_wrapper(bound, fn)
        return bound

    g = StateGraph(State, context_schema=context_schema(services.settings),
                   input_schema=InputState, output_schema=OutputState)
    for fn in (check_question, retrieve, score_gate, scope_classify, select_passage,
               check_answerable, generate, validate_grounding, greet, describe_coverage,
               release_answer):
        g.add_node(fn.__name__, bind(fn))
    terminals = ["greet", "describe_coverage", "release_answer"]
    for reason in RefusalReason:
        node = make_refusal_node(reason)
        g.add_node(node.__name__, bind(node))
        terminals.append(node.__name__)

    g.add_edge(START, "check_question")
    g.add_conditional_edges("check_question", route_after_check_question)
    g.add_conditional_edges("retrieve", route_after_retrieve)
    g.add_edge("score_gate", "scope_classify")
    g.add_conditional_edges("scope_classify", route_after_scope_classify)
    g.add_conditional_edges("select_passage", route_after_select_passage)
    g.add_conditional_edges("check_answerable", route_after_check_answerable)
    g.add_conditional_edges("generate", route_after_generate)
    g.add_conditional_edges(
        "validate_grounding", route_after_validate_grounding,
        ["release_answer"] + [r.node for r in GROUNDING_REFUSALS],
    )
    for name in terminals:
        g.add_edge(name, END)
    return g.compile(name="textbound")
