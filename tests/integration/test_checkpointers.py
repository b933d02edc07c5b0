"""Every conversation backend (memory, SQLite, a real PostgreSQL server) passes the same tests.

The PostgreSQL server is started for the session by tests/pg_server.py; where none can start
those cases are skipped with one message saying what to install.
"""

from __future__ import annotations

import asyncio
import operator
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

pytestmark = pytest.mark.integration

BACKENDS = ["memory", "sqlite", "postgres"]
PERSISTENT = ["sqlite", "postgres"]


@dataclass
class Backend:
    """One storage place; `open()` gives a new saver object on it (a process restarting)."""

    kind: str
    opener: Callable[[], Any]
    opened: list[Any] = field(default_factory=list)

    def open(self) -> Any:
        saver = self.opener()
        self.opened.append(saver)
        return saver


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    kind = request.param
    if kind == "memory":
        shared = InMemorySaver()  # lives as long as the process: every "open" is the same one
        b = Backend(kind, lambda: shared)
    elif kind == "sqlite":
        from textbound.threads import ThreadSqliteSaver

        b = Backend(kind, lambda: ThreadSqliteSaver.open(tmp_path / "threads.sqlite"))
    else:
        url = request.getfixturevalue("postgres_server").url
        from textbound.threads_postgres import open_postgres

        b = Backend(kind, lambda: open_postgres(url))
    yield b
    for saver in b.opened:
        if hasattr(saver, "close"):
            saver.close()


def tid() -> str:
    """A fresh thread id: the PostgreSQL database is shared by the whole session."""
    return f"t-{uuid.uuid4().hex[:12]}"


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


# --- the saver alone, under a two-node graph (the LangGraph checkpointer API) ----------------

class Talk(TypedDict, total=False):
    question: str
    turns: Annotated[list[str], operator.add]


def talk_graph(saver: Any) -> Any:
    """A graph that appends each question to the thread's `turns`."""
    g = StateGraph(Talk)
    g.add_node("hear", lambda s: {"turns": [s["question"]]})
    g.add_edge(START, "hear")
    g.add_edge("hear", END)
    return g.compile(checkpointer=saver)


def test_saver_keeps_a_threads_turns_sync(backend: Backend) -> None:
    """Three sync turns in one thread are all there, oldest first, with a checkpoint each."""
    graph, t = talk_graph(backend.open()), tid()
    for q in ("one", "two", "three"):
        out = graph.invoke({"question": q}, cfg(t))
    assert out["turns"] == ["one", "two", "three"]
    assert graph.get_state(cfg(t)).values["turns"] == ["one", "two", "three"]
    assert len(list(graph.get_state_history(cfg(t)))) >= 3


def test_saver_keeps_a_threads_turns_async(backend: Backend) -> None:
    """Three async turns (ainvoke, as the HTTP server runs them) are all there."""
    graph, t = talk_graph(backend.open()), tid()

    async def talk() -> tuple[dict[str, Any], Any, list[Any]]:
        for q in ("one", "two", "three"):
            out = await graph.ainvoke({"question": q}, cfg(t))
        history = [h async for h in graph.aget_state_history(cfg(t))]
        return out, await graph.aget_state(cfg(t)), history

    out, state, history = asyncio.run(talk())
    assert out["turns"] == state.values["turns"] == ["one", "two", "three"]
    assert len(history) >= 3


def test_sync_and_async_share_one_thread(backend: Backend) -> None:
    """The CLI (sync) and the server (async) continue each other's thread on one saver."""
    graph, t = talk_graph(backend.open()), tid()
    graph.invoke({"question": "cli"}, cfg(t))
    asyncio.run(graph.ainvoke({"question": "http"}, cfg(t)))
    # a second event loop: a saver bound to the first (AsyncPostgresSaver) would fail here
    asyncio.run(graph.ainvoke({"question": "http again"}, cfg(t)))
    out = graph.invoke({"question": "cli again"}, cfg(t))
    assert out["turns"] == ["cli", "http", "http again", "cli again"]


def test_threads_never_mix(backend: Backend) -> None:
    """Two threads interleaved on one saver each keep only their own turns."""
    graph, a, b = talk_graph(backend.open()), tid(), tid()
    for i in range(3):
        graph.invoke({"question": f"a{i}"}, cfg(a))
        graph.invoke({"question": f"b{i}"}, cfg(b))
    assert graph.get_state(cfg(a)).values["turns"] == ["a0", "a1", "a2"]
    assert graph.get_state(cfg(b)).values["turns"] == ["b0", "b1", "b2"]
    assert graph.get_state(cfg(tid())).values == {}


def test_concurrent_async_threads_never_mix(backend: Backend) -> None:
    """Eight threads talking at once through the async path each get exactly their turns."""
    graph = talk_graph(backend.open())
    threads = [tid() for _ in range(8)]

    async def talk(t: str) -> None:
        for i in range(3):
            await graph.ainvoke({"question": f"{t}/{i}"}, cfg(t))

    async def everyone() -> None:
        await asyncio.gather(*(talk(t) for t in threads))

    asyncio.run(everyone())
    for t in threads:
        assert graph.get_state(cfg(t)).values["turns"] == [f"{t}/{i}" for i in range(3)]


def test_delete_thread_removes_only_that_thread(backend: Backend) -> None:
    """delete_thread (sync) and adelete_thread (async) each drop one thread and keep the other."""
    saver = backend.open()
    graph, a, b, c = talk_graph(saver), tid(), tid(), tid()
    for t in (a, b, c):
        graph.invoke({"question": f"hello {t}"}, cfg(t))
    saver.delete_thread(a)
    asyncio.run(saver.adelete_thread(c))
    assert graph.get_state(cfg(a)).values == {}
    assert graph.get_state(cfg(c)).values == {}
    assert graph.get_state(cfg(b)).values["turns"] == [f"hello {b}"]
    assert list(saver.list(cfg(a))) == [] and list(saver.list(cfg(b)))
    out = graph.invoke({"question": "again"}, cfg(a))
    assert out["turns"] == ["again"], "a deleted thread starts afresh"


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_thread_survives_a_restart(backend: Backend) -> None:
    """A new saver on the same file or database (a restarted process) still has the thread."""
    first = backend.open()
    t = tid()
    talk_graph(first).invoke({"question": "before"}, cfg(t))
    first.close()
    graph = talk_graph(backend.open())
    assert graph.get_state(cfg(t)).values["turns"] == ["before"]
    out = asyncio.run(graph.ainvoke({"question": "after"}, cfg(t)))
    assert out["turns"] == ["before", "after"]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_two_processes_share_threads(backend: Backend) -> None:
    """Two savers open at once on one store (two server processes) see each other's turns."""
    one, two = talk_graph(backend.open()), talk_graph(backend.open())
    t = tid()
    one.invoke({"question": "from one"}, cfg(t))
    two.invoke({"question": "from two"}, cfg(t))
    assert one.get_state(cfg(t)).values["turns"] == ["from one", "from two"]


# --- PostgreSQL only: opening, errors --------------------------------------------------------

def test_postgres_setup_runs_once_when_servers_start_together(postgres_server: Any) -> None:
    """Four savers opened at once on a fresh database create the tables once, without error."""
    from textbound.threads_postgres import open_postgres

    url = postgres_server.create_database(f"fresh_{uuid.uuid4().hex[:8]}")
    savers: list[Any] = []
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            savers.append(open_postgres(url))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    workers = [threading.Thread(target=opener) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    try:
        assert not errors and len(savers) == 4
        t = tid()
        talk_graph(savers[0]).invoke({"question": "q"}, cfg(t))
        assert talk_graph(savers[3]).get_state(cfg(t)).values["turns"] == ["q"]
    finally:
        for s in savers:
            s.close()


def test_postgres_saver_reconnects_after_the_server_restarts(postgres_server: Any) -> None:
    """The pool replaces connections a restarted server dropped: the next turn just works."""
    from textbound.threads_postgres import open_postgres

    saver = open_postgres(postgres_server.url)
    try:
        graph, t = talk_graph(saver), tid()
        graph.invoke({"question": "before"}, cfg(t))
        postgres_server.restart()
        graph.invoke({"question": "after"}, cfg(t))
        out = asyncio.run(graph.ainvoke({"question": "async after"}, cfg(t)))
        assert out["turns"] == ["before", "after", "async after"]
    finally:
        saver.close()


def test_postgres_wrong_password_is_one_line_naming_the_setting(postgres_server: Any) -> None:
    """A password the server refuses: ConfigError naming TEXTBOUND_CHECKPOINT_URL, no password."""
    from textbound.errors import ConfigError
    from textbound.threads_postgres import open_postgres

    secret = "Not-The-Password-7f3a"
    url = postgres_server.url.replace(postgres_server.password, secret)
    with pytest.raises(ConfigError) as err:
        open_postgres(url)
    message = str(err.value)
    assert "TEXTBOUND_CHECKPOINT_URL" in message and "password authentication failed" in message
    assert secret not in message and "\n" not in message
    assert err.value.__cause__ is None and err.value.__suppress_context__


@pytest.mark.parametrize("url", [
    "postgresql://someone:Hunter2-secret@/textbound?host=/nonexistent-socket-dir&port=5432",
    "host=/nonexistent-socket-dir dbname=textbound user=someone password=Hunter2-secret",
    "postgresql://someone:Hunter2-secret@/textbound?host=/x&port=notaport",
    "host=/x user=someone password=Hunter2-secret dbname",
])
def test_postgres_unusable_url_is_one_line_without_the_password(
        postgres_server: Any, url: str) -> None:
    """No server there, or a malformed string: one line naming the setting, password hidden."""
    from textbound.errors import ConfigError
    from textbound.threads_postgres import open_postgres

    with pytest.raises(ConfigError) as err:
        open_postgres(url)
    message = str(err.value)
    assert "TEXTBOUND_CHECKPOINT_URL" in message and "\n" not in message
    assert "Hunter2" not in message
