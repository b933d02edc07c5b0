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
    """The saver `open_checkpointer` gives for TEXTBOUND_CHECKPOINTER=memory|sqlite|postgres."""
    from textbound.conversation.threads import open_checkpointer

    from ..conftest import make_settings

    kind = request.param
    url = request.getfixturevalue("postgres_server").url if kind == "postgres" else None
    settings = make_settings(tmp_path, checkpointer=kind, checkpoint_url=url)
    if kind == "memory":
        shared = open_checkpointer(settings)  # lives as long as the process: "open" is reuse
        b = Backend(kind, lambda: shared)
    else:
        b = Backend(kind, lambda: open_checkpointer(settings))
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
    """Three sync turns in one thread are all there, oldest first, in its latest checkpoint.

    SQLite and PostgreSQL keep only a thread's latest checkpoint (its storage stays bounded:
    the turns are in the state); memory keeps one a turn.
    """
    graph, t = talk_graph(backend.open()), tid()
    for q in ("one", "two", "three"):
        out = graph.invoke({"question": q}, cfg(t))
    assert out["turns"] == ["one", "two", "three"]
    assert graph.get_state(cfg(t)).values["turns"] == ["one", "two", "three"]
    history = list(graph.get_state_history(cfg(t)))
    assert len(history) == 1 if backend.kind in PERSISTENT else len(history) >= 3


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
    assert len(history) == 1 if backend.kind in PERSISTENT else len(history) >= 3


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


class Reasoned(TypedDict, total=False):
    question: str
    verdicts: list[dict[str, Any]]


def test_state_types_come_back_as_themselves(backend: Backend,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """A verdict's RefusalReason is read back as the enum, with no unregistered-type warning."""
    from graph.reasons import RefusalReason

    # in a verdict, as the state holds it: PostgresSaver keeps a channel whose value is a bare
    # str (a StrEnum is one) inline as JSON text, so there it would come back as plain text
    g = StateGraph(Reasoned)
    g.add_node("judge", lambda s: {"verdicts": [{"gate": "scope_classify",
                                                 "reason": RefusalReason.OUT_OF_SCOPE}]})
    g.add_edge(START, "judge")
    g.add_edge("judge", END)
    graph, t = g.compile(checkpointer=backend.open()), tid()
    with caplog.at_level("WARNING", logger="langgraph"):
        graph.invoke({"question": "q"}, cfg(t))
        state = g.compile(checkpointer=backend.open()).get_state(cfg(t))
    reason = state.values["verdicts"][0]["reason"]
    assert reason is RefusalReason.OUT_OF_SCOPE
    assert not [r for r in caplog.records if "msgpack" in r.getMessage()
                or "unregistered" in r.getMessage()]


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
    from textbound.conversation.threads_postgres import open_postgres

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
    from textbound.conversation.threads_postgres import open_postgres

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
    from textbound.conversation.threads_postgres import open_postgres
    from textbound.errors import ConfigError

    secret = "Not-The-Password-7f3a"
    url = postgres_server.url.replace(postgres_server.password, secret)
    with pytest.raises(ConfigError) as err:
        open_postgres(url)
    message = str(err.value)
    assert "TEXTBOUND_CHECKPOINT_URL" in message and "password authentication failed" in message
    assert secret not in message and "\n" not in message
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_postgres_missing_database_is_one_line_naming_it(postgres_server: Any) -> None:
    """A database that does not exist: the line says so, and names the setting."""
    from textbound.conversation.threads_postgres import open_postgres
    from textbound.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        open_postgres(postgres_server.url_for("no_such_db"))
    message = str(err.value)
    assert 'database "no_such_db" does not exist' in message
    assert "TEXTBOUND_CHECKPOINT_URL" in message and postgres_server.password not in message


@pytest.mark.parametrize("url", [
    "postgresql://someone:Hunter2-secret@/textbound?host=/nonexistent-socket-dir&port=5432",
    "host=/nonexistent-socket-dir dbname=textbound user=someone password=Hunter2-secret",
    "postgresql://someone:Hunter2-secret@/textbound?host=/x&port=notaport",
    "host=/x user=someone password=Hunter2-secret dbname",
])
def test_postgres_unusable_url_is_one_line_without_the_password(
        postgres_server: Any, url: str) -> None:
    """No server there, or a malformed string: one line naming the setting, password hidden."""
    from textbound.conversation.threads_postgres import open_postgres
    from textbound.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        open_postgres(url)
    message = str(err.value)
    assert "TEXTBOUND_CHECKPOINT_URL" in message and "\n" not in message
    assert "Hunter2" not in message


# --- the textbound graph: a conversation through a real compiled graph -----------------------

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"
CONVERSATION = ["What is a ROS 2 service?", "What does it return?", "Give me an example."]


@pytest.fixture
def textbound_graph(tmp_path: Path, embeddings: Any, fake_store: Any,
                    exploding_chat: Any) -> Callable[[Any], Any]:
    """Build the textbound graph (extractive, four-chunk store) over a given saver."""
    from graph.builder import build_graph
    from textbound import course

    from ..conftest import make_settings

    settings = make_settings(tmp_path / "data", audit_log=tmp_path / "audit.jsonl",
                             calibration_file=CALIBRATION)

    def build(saver: Any) -> Any:
        return build_graph(settings=settings, embeddings=embeddings, store=fake_store,
                           chat_model=exploding_chat, profile=course.load_profile(),
                           checkpointer=saver)

    return build


def ask(graph: Any, question: str, thread_id: str) -> dict[str, Any]:
    return graph.invoke({"question": question}, cfg(thread_id))


def test_graph_conversation_is_saved_and_restored(backend: Backend,
                                                  textbound_graph: Any) -> None:
    """Three turns through the graph: each response numbers its turn; the thread keeps all three."""
    from textbound.conversation.threads import thread_turns

    graph, t = textbound_graph(backend.open()), tid()
    outs = [ask(graph, q, t) for q in CONVERSATION]
    assert [o["diagnostics"]["conversation"]["turn"] for o in outs] == [1, 2, 3]
    assert all(o["diagnostics"]["conversation"]["thread_id"] == t for o in outs)
    turns = thread_turns(graph, t)
    assert [turn["question"] for turn in turns] == CONVERSATION
    assert [turn["run_id"] for turn in turns] == [o["run_id"] for o in outs]
    assert [turn["answer"] for turn in turns] == [o["answer"] for o in outs]


def test_graph_async_path_keeps_the_thread(backend: Backend, textbound_graph: Any) -> None:
    """ainvoke (the HTTP server's path) continues a thread the sync path started, and back."""
    from textbound.conversation.threads import athread_turns, thread_turns

    graph, t = textbound_graph(backend.open()), tid()
    first = ask(graph, CONVERSATION[0], t)

    async def follow_up() -> tuple[dict[str, Any], list[Any]]:
        out = await graph.ainvoke({"question": CONVERSATION[1]}, cfg(t))
        return out, await athread_turns(graph, t)

    second, turns = asyncio.run(follow_up())
    third = ask(graph, CONVERSATION[2], t)
    assert second["diagnostics"]["conversation"]["turn"] == 2
    assert third["diagnostics"]["conversation"]["turn"] == 3
    assert [turn["run_id"] for turn in turns] == [first["run_id"], second["run_id"]]
    assert len(thread_turns(graph, t)) == 3


def test_graph_threads_never_mix(backend: Backend, textbound_graph: Any) -> None:
    """Two interleaved conversations: each thread holds only its own questions and turn count."""
    from textbound.conversation.threads import thread_turns

    graph, a, b = textbound_graph(backend.open()), tid(), tid()
    ask(graph, "What is a ROS 2 service?", a)
    ask(graph, "What does Gazebo simulate?", b)
    out_a = ask(graph, "What does it return?", a)
    out_b = ask(graph, "What is its default real-time factor?", b)
    assert out_a["diagnostics"]["conversation"]["turn"] == 2
    assert out_b["diagnostics"]["conversation"]["turn"] == 2
    assert "Gazebo" not in out_a["diagnostics"]["conversation"]["standalone"]
    assert "service" not in out_b["diagnostics"]["conversation"]["standalone"]
    assert [x["question"] for x in thread_turns(graph, a)] == [
        "What is a ROS 2 service?", "What does it return?"]
    assert [x["question"] for x in thread_turns(graph, b)] == [
        "What does Gazebo simulate?", "What is its default real-time factor?"]


def test_graph_delete_thread_removes_one_thread(backend: Backend, textbound_graph: Any) -> None:
    """delete_thread empties one conversation and leaves the other; the next turn is turn 1."""
    from textbound.conversation.threads import delete_thread, thread_turns

    graph, a, b = textbound_graph(backend.open()), tid(), tid()
    for t in (a, b):
        ask(graph, CONVERSATION[0], t)
        ask(graph, CONVERSATION[1], t)
    delete_thread(graph, a)
    assert thread_turns(graph, a) == []
    assert len(thread_turns(graph, b)) == 2
    assert ask(graph, CONVERSATION[0], a)["diagnostics"]["conversation"]["turn"] == 1


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
def test_graph_thread_survives_a_restart(backend: Backend, textbound_graph: Any) -> None:
    """A new saver and graph on the same file or database continue the thread at turn 3."""
    from textbound.conversation.threads import thread_turns

    first = backend.open()
    graph, t = textbound_graph(first), tid()
    asked = [ask(graph, q, t) for q in CONVERSATION[:2]]
    first.close()
    graph = textbound_graph(backend.open())
    assert [x["run_id"] for x in thread_turns(graph, t)] == [o["run_id"] for o in asked]
    assert ask(graph, CONVERSATION[2], t)["diagnostics"]["conversation"]["turn"] == 3
