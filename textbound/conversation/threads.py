"""Conversations: where threads are kept (the checkpointer), thread ids, and a thread's turns.

A conversation is a run of the graph with `config={"configurable": {"thread_id": ...}}` on a
graph compiled with a checkpointer; the graph keeps the thread's turns in its `history` state
key (bounded by `history_turns` and `history_chars`). Without a thread id every question stands
alone. LangGraph Studio (`langgraph dev`) keeps threads in its own checkpointer.

The HTTP server runs the graph's async methods and the CLI its sync ones, so the savers here
serve both: LangGraph's sync savers raise on async calls and its async ones are bound to one
event loop, so each async method runs its sync twin in a worker thread
(`textbound.conversation.threaded_saver.ThreadedAsync`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from textbound.conversation.threaded_saver import ThreadedAsync
from textbound.errors import ConfigError, TextboundError

if TYPE_CHECKING:

    from textbound.settings import Settings

__all__ = ["MAX_THREAD_ID_CHARS", "ThreadIdError", "ThreadSqliteSaver", "ThreadStoreError",
           "delete_thread",
           "memory_saver", "open_checkpointer", "opened_checkpointer", "saved_turns",
           "serializer", "thread_config", "thread_turns", "turn_guard",
           "athread_turns", "turn_options", "validate_thread_id"]

MAX_THREAD_ID_CHARS = 128
_THREAD_ID = re.compile(rf"[A-Za-z0-9_.:-]{{1,{MAX_THREAD_ID_CHARS}}}")
THREAD_ID_RULE = (f"1 to {MAX_THREAD_ID_CHARS} characters, each a letter, digit, '_', '-', '.' "
                  "or ':'")


STATE_TYPES = [("graph.reasons", "RefusalReason")]
"""The classes a thread's checkpoint holds beside plain data (a verdict's reason)."""


def serializer() -> JsonPlusSerializer:
    """Return the checkpoint serializer that reads back exactly the state's own types."""
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def memory_saver() -> InMemorySaver:
    """Return an in-memory checkpointer (tests, evaluation, TEXTBOUND_CHECKPOINTER=memory)."""
    return InMemorySaver(serde=serializer())


class ThreadIdError(ValueError):
    """A thread id that breaks the rule (length, characters)."""


class ThreadStoreError(TextboundError):
    """The conversation store (SQLite or PostgreSQL) cannot be read or written just now."""


STORE_WAIT_S = 1.5
"""Longest a turn waits for the conversation store (a locked SQLite file, a pool's free
connection) before it is refused: a store that is down fails a question within 2 s."""


WAL_LIMIT_BYTES = 1 << 20
"""Most bytes SQLite's write-ahead log keeps once folded into threads.sqlite."""


def _store_errors() -> tuple[type[BaseException], ...]:
    """The errors that mean the store is unreachable: the databases' own, and the disk's."""
    errors: list[type[BaseException]] = [sqlite3.Error, OSError]
    try:
        import psycopg
    except ImportError:
        pass
    else:
        errors.append(psycopg.Error)
    return tuple(errors)


STORE_ERRORS = _store_errors()


def unreachable(exc: BaseException) -> ThreadStoreError:
    return ThreadStoreError(f"the conversation store cannot be reached: "
                            f"{type(exc).__name__}")


def validate_thread_id(thread_id: Any) -> str:
    """Return `thread_id` when it is a valid thread id; raise ThreadIdError saying the rule."""
    if not isinstance(thread_id, str):
        raise ThreadIdError(f"thread_id must be text ({THREAD_ID_RULE}), not "
                            f"{type(thread_id).__name__}")
    if _THREAD_ID.fullmatch(thread_id) is None:
        shown = thread_id if len(thread_id) <= 40 else thread_id[:40] + "..."
        raise ThreadIdError(f"thread_id {shown!r} is not valid: use {THREAD_ID_RULE}")
    return thread_id


def thread_config(thread_id: str) -> dict[str, Any]:
    """Return the run config that puts a run in thread `thread_id` (validated)."""
    return {"configurable": {"thread_id": validate_thread_id(thread_id)}}


class ThreadSqliteSaver(ThreadedAsync, SqliteSaver):
    """LangGraph's SQLite saver, callable from the CLI (sync) and the server (async).

    A thread keeps only its latest checkpoint (the history and what a follow-up's rewrite reads
    are in it), so its storage does not grow with its turns; deleting a thread gives its space
    back to the disk.
    """

    @classmethod
    def open(cls, path: Path) -> ThreadSqliteSaver:
        """Open (creating) the threads database at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        # the saver serialises its own access with a lock; requests arrive on many threads
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=STORE_WAIT_S)
        conn.execute("PRAGMA journal_mode=WAL")
        # the log is folded into the file every 1 MB and cut back to 1 MB, so a busy thread's
        # turns do not pile up in threads.sqlite-wal (SQLite's default lets it reach 4 MB+)
        conn.execute("PRAGMA wal_autocheckpoint=256")
        conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
        saver = cls(conn, serde=serializer())
        saver.setup()
        return saver

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Save the checkpoint, then drop the thread's older ones and their pending writes."""
        saved = super().put(config, checkpoint, metadata, new_versions)
        conf = saved["configurable"]
        key = (str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")),
               str(conf["checkpoint_id"]))
        with self.cursor() as cur:
            for table in ("checkpoints", "writes"):
                cur.execute(f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? "
                            "AND checkpoint_id <> ?", key)
        return saved

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and give the space they took back to the disk."""
        super().delete_thread(thread_id)
        with self.lock:
            self.conn.execute("VACUUM")
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def open_checkpointer(settings: Settings) -> BaseCheckpointSaver[Any] | None:
    """Return the checkpointer `settings.checkpointer` names (None for 'off').

    The settings of a course served beside another (`textbound.records.courses`) see only that
    course's threads. Raises ConfigError (one line naming the setting) when it cannot be opened.
    """
    from textbound.records.courses import course_for

    return course_for(settings).threads(_open_saver(settings))


def _open_saver(settings: Settings) -> BaseCheckpointSaver[Any] | None:
    kind = settings.checkpointer
    if kind == "off":
        return None
    if kind == "memory":
        return memory_saver()
    if kind == "postgres":
        url = settings.checkpoint_url.get_secret_value() if settings.checkpoint_url else ""
        if not url:
            raise ConfigError("TEXTBOUND_CHECKPOINTER=postgres needs TEXTBOUND_CHECKPOINT_URL "
                              "(postgresql://user:password@host:5432/database)")
        try:
            from textbound.conversation.threads_postgres import open_postgres
        except ImportError as exc:
            raise ConfigError("TEXTBOUND_CHECKPOINTER=postgres needs the postgres extra: "
                              "pip install -e '.[postgres]'") from exc
        return open_postgres(url, serde=serializer())
    path = Path(settings.data_dir) / "threads.sqlite"
    try:
        return ThreadSqliteSaver.open(path)
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"cannot open the conversations database {path} "
                          f"(TEXTBOUND_DATA_DIR, or TEXTBOUND_CHECKPOINTER=off): {exc}") from exc


@contextmanager
def opened_checkpointer(settings: Settings) -> Iterator[BaseCheckpointSaver[Any] | None]:
    """Open the settings' checkpointer for a few reads or deletes (None for 'off'), then close it.

    No graph, no store, no model: a command that only reads or forgets a thread needs none,
    and SQLite and PostgreSQL let a running server keep writing meanwhile.
    """
    saver = open_checkpointer(settings)
    try:
        yield saver
    finally:
        close = getattr(saver, "close", None)
        if callable(close):
            close()


def saved_turns(saver: BaseCheckpointSaver[Any], thread_id: str) -> list[dict[str, Any]]:
    """Return thread `thread_id`'s turns as `saver` last saved them ([] for an unknown one)."""
    found = saver.get_tuple(thread_config(thread_id))  # type: ignore[arg-type]
    values = found.checkpoint.get("channel_values", {}) if found else {}
    return list(values.get("history") or [])


def _no_threads(graph: Any) -> None:
    if getattr(graph, "checkpointer", None) in (None, False):
        raise ConfigError("this graph keeps no conversations (TEXTBOUND_CHECKPOINTER=off)")


def thread_turns(graph: Any, thread_id: str) -> list[dict[str, Any]]:
    """Return thread `thread_id`'s turns, oldest first ([] for a thread never used)."""
    _no_threads(graph)
    snapshot = graph.get_state(thread_config(thread_id))
    return list((snapshot.values or {}).get("history") or [])


async def athread_turns(graph: Any, thread_id: str) -> list[dict[str, Any]]:
    """Async `thread_turns`."""
    _no_threads(graph)
    snapshot = await graph.aget_state(thread_config(thread_id))
    return list((snapshot.values or {}).get("history") or [])


def turn_options(graph: Any) -> dict[str, Any]:
    """Return the keyword arguments that run one turn of `graph`: save once, when it ends.

    LangGraph saves a checkpoint after every step unless told otherwise; a turn is kept whole
    or not at all. A graph without a checkpointer takes none (LangGraph warns).
    """
    return {"durability": "exit"} if getattr(graph, "checkpointer", None) else {}


def turn_guard(graph: Any, thread_id: str | None) -> AbstractContextManager[None]:
    """Return what holds thread `thread_id` for one turn across processes (PostgreSQL's lock).

    Nothing to hold without a thread or on a saver that has no such lock (SQLite, memory).
    """
    lock = getattr(getattr(graph, "checkpointer", None), "turn_lock", None)
    return lock(thread_id) if (lock is not None and thread_id) else nullcontext()


def delete_thread(graph: Any, thread_id: str) -> None:
    """Delete every checkpoint of thread `thread_id` (nothing happens for an unknown one)."""
    _no_threads(graph)
    graph.checkpointer.delete_thread(validate_thread_id(thread_id))
