"""Conversations over HTTP: `GET`/`DELETE /threads/{id}`, and whose conversation a thread is.

A thread belongs to the key that opened it (its first question claims it, `textbound.records.keys`):
another student is told there is no such conversation (404) whether they read it, continue it
or rate its answers; the teacher reads every conversation of the course. On a server with no
keys there is no owner to check, as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response

from textbound.records.keys import Caller, KeyStore
from textbound.serving.server._roles import caller_of
from textbound.settings import Settings

__all__ = ["check_owner", "mount_threads", "thread_of"]


def thread_of(thread_id: Any) -> dict[str, Any]:
    """Return the configurable entry for a request's thread, or raise 422 saying the rule."""
    if thread_id is None:
        return {}
    from textbound.conversation.threads import ThreadIdError, validate_thread_id

    try:
        return {"thread_id": validate_thread_id(thread_id)}
    except ThreadIdError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from exc


def _not_found(thread_id: str) -> HTTPException:
    return HTTPException(404, f"no conversation {thread_id!r} of yours on this server")


async def check_owner(keys: KeyStore, caller: Caller | None, thread_id: str, *,
                      claim: bool = False, used: bool = True) -> None:
    """Raise 404 unless `caller` may use thread `thread_id`: its owner, or the teacher.

    With `claim`, a thread nobody opened yet becomes the caller's. `used` says whether an
    unclaimed thread holds turns (one kept before owners were recorded): only the teacher may
    read those.
    """
    if caller is None or caller.key_id is None:
        return  # a server with no keys: no owners
    key_id = caller.key_id
    owner = await asyncio.to_thread(
        keys.claim if claim else keys.owner, *((thread_id, key_id) if claim else (thread_id,)))
    if caller.teacher or owner == key_id or (owner is None and not used):
        return
    raise _not_found(thread_id)


def mount_threads(app: FastAPI, graph: Any, settings: Settings, keys: KeyStore) -> None:
    """`GET /threads/{id}`: a conversation's turns; `DELETE /threads/{id}`: forget it."""
    from textbound.conversation.threads import athread_turns, delete_thread
    from textbound.records.feedback import forget_thread_records
    from textbound.records.shared import records_of

    def usable(thread_id: str) -> None:
        thread_of(thread_id)
        if getattr(graph, "checkpointer", None) is None:
            raise HTTPException(status_code=404, detail="this server keeps no conversations "
                                "(TEXTBOUND_CHECKPOINTER=off)")

    @app.get("/threads/{thread_id}", tags=["conversations"],
             summary="A conversation's turns, oldest first ([] for a thread never used)",
             responses={404: {"description": "No such conversation of the caller's (a "
                                             "student reads only their own)."}})
    async def get_thread(thread_id: str, request: Request) -> dict[str, Any]:
        """Return a conversation's turns: a student's own, or any of the course's for a teacher."""
        usable(thread_id)
        turns = await athread_turns(graph, thread_id)
        await check_owner(keys, caller_of(request), thread_id, used=bool(turns))
        return {"thread_id": thread_id, "turns": turns}

    @app.delete("/threads/{thread_id}", status_code=204, response_model=None,
                tags=["conversations"],
                summary="Forget a conversation: its turns, and its lines in the audit and "
                        "feedback logs",
                responses={404: {"description": "No such conversation of the caller's."}})
    async def forget_thread(thread_id: str, request: Request) -> Response:
        """Delete a conversation: its turns, and its audit and feedback log lines.

        Every turn the conversation kept goes, and so does every line of it in the audit log
        and the feedback log (its questions, answers and ratings): the teacher's report then
        counts none of them. A student may delete only their own; the teacher, any. 204 also
        for a thread never used. LangSmith traces, when tracing is on, stay in LangSmith.
        """
        usable(thread_id)
        turns = await athread_turns(graph, thread_id)
        await check_owner(keys, caller_of(request), thread_id, used=bool(turns))
        await asyncio.to_thread(delete_thread, graph, thread_id)
        await asyncio.to_thread(forget_thread_records, records_of(settings), thread_id)
        await asyncio.to_thread(keys.forget, thread_id)
        return Response(status_code=204)
