"""The app factory: `create_app` wires the graph, handlers, routes and middleware together."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import importlib
import importlib.util
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException, Request

from graph.context import RUN_CONTEXT_KEY, RunContext, resolve_tunables
from textbound.errors import ConfigError, TextboundError
from textbound.records.courses import Course, courses_of
from textbound.records.keys import KeyStore, KeyStoreError, open_keys
from textbound.serving.server._contract import StoreUnavailableResponse
from textbound.serving.server._courses import CourseRouter
from textbound.serving.server._errors import add_error_handlers
from textbound.serving.server._feedback import mount_feedback
from textbound.serving.server._health import mount_health
from textbound.serving.server._middleware import BodyLimit, HeaderLimit
from textbound.serving.server._openapi import document_responses, mount_docs
from textbound.serving.server._overrides import OverrideError, request_context
from textbound.serving.server._roles import RoleAuth, caller_of
from textbound.serving.server._runnable import GuardedGraph
from textbound.serving.server._threads import check_owner, mount_threads, thread_of
from textbound.serving.server._turns import threads_down
from textbound.settings import Settings

if TYPE_CHECKING:
    from graph.services import Services


def _mount_reader(app: FastAPI, services: Services) -> None:
    """Let the reader web page add its routes, when that package is installed."""
    if importlib.util.find_spec("textbound.serving.reader") is not None:
        reader = importlib.import_module("textbound.serving.reader")
        reader.mount(app, services=services, settings=services.settings)


def serving_services(settings: Settings | None = None) -> Services:
    """Build the services a server runs on, from the settings (`TEXTBOUND_*` by default).

    The store opens lazily: one another process holds (or a Qdrant server that is down) makes
    the server answer 503 saying why, and it recovers once the store is back, unrestarted.
    """
    from graph.services import build_services
    from textbound.documents.store import open_store
    from textbound.providers.embeddings import build_embeddings
    from textbound.settings import get_settings

    settings = settings or get_settings()
    embeddings = build_embeddings(settings)
    store = open_store(settings, embeddings, lazy=True)
    return build_services(settings=settings, embeddings=embeddings, store=store)


def course_services(course: Course, served: Services) -> Services:
    """Build the services of another course beside the default course's `served` ones.

    The course has its own collection (opened lazily, like the default's), profile and audit
    log; the embedding model, the answerability reader and the chat client (so its limit on
    calls at once) are the server's, shared.
    """
    from graph.services import build_services
    from textbound.documents.store import open_store

    store = open_store(course.settings, served.embeddings, lazy=True)  # type: ignore[arg-type]
    try:
        made = build_services(settings=course.settings, embeddings=served.embeddings,
                              store=store, reader=served.reader, chat_model=served.chat_model)
    except BaseException:
        store.close()
        raise
    if served.chat is not None:
        made.chat = served.chat
    return made


def create_app(services: Services | None = None, *, graph: Any = None,
               settings: Settings | None = None,
               courses: Mapping[str, Services] | None = None) -> FastAPI:
    """Build the FastAPI app: `/chat` (LangServe), `/healthz`, docs, and the reader if present.

    Everything the app serves comes from `services`: the graph runs over them (unless `graph`,
    built over the same services, is given), `/healthz` checks them, the reader page and the
    upload routes use their store and course profile. Without `services`, they are built from
    `settings` (`serving_services`), and the app closes their store on shutdown.

    Those are the default course's, at `/` and `/c/<collection>/`. Each course the settings
    name in `courses` (TEXTBOUND_COURSES) gets the same routes at `/c/<course>/` over services
    of its own: those given in `courses` by name, else built beside these
    (`course_services`, closed on shutdown).
    """
    from graph.builder import build_graph

    owns_store = services is None
    if services is None:
        services = serving_services(settings)
    settings = services.settings
    keys = open_keys(settings)
    checkpointer = None
    if graph is None:
        from textbound.conversation.threads import open_checkpointer

        checkpointer = open_checkpointer(settings)
        graph = build_graph(services=services, checkpointer=checkpointer)
    closers: list[Callable[[], None]] = []  # what the other courses opened

    # graph steps run on the loop's default executor: give it room for every chat call that may
    # be waiting on a model plus the usual pool, so refusals never queue behind chat calls
    workers = int(settings.chat_max_concurrency) + min(32, (os.cpu_count() or 1) + 4)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="graph")
        asyncio.get_running_loop().set_default_executor(pool)
        try:
            yield
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            for close in reversed(closers):
                close()
            if owns_store:
                services.store.close()
            if checkpointer is not None and hasattr(checkpointer, "close"):
                checkpointer.close()
            keys.close()

    app = _course_app(services, graph, keys, default=settings.collection, lifespan=lifespan)
    try:
        others = _other_courses(services, keys, checkpointer, given=dict(courses or {}),
                                closers=closers)
    except BaseException:  # what this call opened is closed again: nothing serves it
        for close in reversed(closers):
            close()
        if checkpointer is not None and hasattr(checkpointer, "close"):
            checkpointer.close()
        keys.close()
        if owns_store:
            services.store.close()
        raise
    # outermost: /c/<course>/... reaches that course's app, with its own key check and limits
    app.add_middleware(CourseRouter, default=settings.collection, courses=others)
    # and the header limits before a course is chosen: an unknown course's address is a 431 too
    app.add_middleware(HeaderLimit)
    return app


def _other_courses(served: Services, keys: KeyStore, saver: Any, *,
                   given: dict[str, Services], closers: list[Callable[[], None]]
                   ) -> dict[str, FastAPI]:
    """Build the app of each course but the default, by name; record what to close."""
    from graph.builder import build_graph
    from textbound.conversation.threads import open_checkpointer

    courses = courses_of(served.settings)[1:]
    unknown = sorted(set(given) - {c.name for c in courses})
    if unknown:
        raise ConfigError(f"services given for {', '.join(unknown)}, which TEXTBOUND_COURSES "
                          "does not name")
    settings = served.settings
    if courses and settings.store == "local" and not settings.qdrant_url \
            and set(given) != {c.name for c in courses}:
        raise ConfigError("TEXTBOUND_COURSES needs the Edge store (TEXTBOUND_STORE=edge, the "
                          "default) or a Qdrant server (TEXTBOUND_QDRANT_URL): qdrant-client's "
                          "local mode lets a process open one collection of a folder")
    if courses and saver is None:  # the default graph was given: the courses share a saver
        saver = open_checkpointer(served.settings)
        if saver is not None and hasattr(saver, "close"):
            closers.append(saver.close)
    apps: dict[str, FastAPI] = {}
    for course in courses:
        services = given.get(course.name)
        if services is None:
            services = course_services(course, served)
            closers.append(services.store.close)
        graph = build_graph(services=services, checkpointer=course.threads(saver))
        apps[course.name] = _course_app(services, graph, course.keys(keys),
                                        default=served.settings.collection)
    return apps


def _course_app(services: Services, graph: Any, keys: KeyStore, *, default: str,
                lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]] | None = None
                ) -> FastAPI:
    """Build one course's app: its graph at `/chat`, its conversations, page, documents, docs.

    `default` names the server's default course, whose teacher key TEXTBOUND_API_KEY is.
    """
    from langserve import add_routes

    settings = services.settings

    app = FastAPI(
        title="textbound",
        version="0.1.0",
        description="Answers questions only from the ingested documents, citing a passage for "
        "every sentence, and refuses with a machine-readable reason otherwise. `POST "
        "/chat/invoke` with `{\"input\": {\"question\": \"...\"}}`; per-request tunables go in "
        "`config.configurable` and may only tighten the gates.",
        lifespan=lifespan,
        docs_url=None,  # served by mount_docs from local files instead of a CDN
        redoc_url=None,
    )

    @functools.cache
    def server_context() -> RunContext:
        return resolve_tunables(settings)

    async def guard_config(config: dict[str, Any], request: Request) -> dict[str, Any]:
        # the one resolution of this request's run context: the graph uses it as it is
        given = dict(config.get("configurable") or {})
        thread = thread_of(given.pop("thread_id", None))
        if thread:  # a conversation is its opener's: another student's is not found
            try:
                await check_owner(keys, caller_of(request), thread["thread_id"], claim=True)
            except KeyStoreError as exc:  # fail closed, as a turn whose thread is unreachable
                raise StoreUnavailableResponse(threads_down(exc)) from None
        try:
            run = request_context(settings, given, server=server_context)
        except OverrideError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from exc
        except TextboundError:  # the server's own settings are broken: the graph says so
            return {**config, "configurable": thread}
        cleaned: dict[str, Any] = {k: getattr(run, k) for k, v in given.items() if v is not None}
        return {**config, "configurable": {**cleaned, **thread, RUN_CONTEXT_KEY: run}}

    add_error_handlers(app)

    add_routes(
        app,
        GuardedGraph(graph, unavailable_raises=True,
                     batch_concurrency=settings.batch_concurrency),
        path="/chat",
        config_keys=("configurable",),
        per_req_config_modifier=guard_config,
        disabled_endpoints=["config_hashes"],
    )

    mount_health(app, services)
    mount_threads(app, graph, settings, keys)
    mount_feedback(app, services, graph, keys)
    _mount_reader(app, services)
    from textbound.serving.server._documents import mount as mount_documents

    mount_documents(app, store=services.store, settings=settings)
    mount_docs(app)

    # added last = outermost: CORS answers preflights and decorates 401/413 replies too
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes,
                       max_batch=settings.max_batch_size, streamed=("/api/documents/",))
    # every request's key and role, against the one table of routes
    # (textbound.serving.server._roles)
    app.add_middleware(RoleAuth, routes=app.router.routes, keys=keys, settings=settings,
                       default_course=default)
    app.add_middleware(HeaderLimit)  # outside the key check: an oversized key is a 431, not a 401
    if settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST", "PUT", "DELETE", "OPTIONS"],
                           allow_headers=["Content-Type", "X-API-Key", "Accept"])
    document_responses(app, read_timeout_s=settings.request_read_timeout_s)
    return app
