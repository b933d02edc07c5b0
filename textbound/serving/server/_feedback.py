"""`POST /feedback`: a student rates a response (up or down, with an optional comment).

The body names the response by its `run_id`; everything else the rating is stored with comes
from the server's own records (`textbound.records.feedback.rate_run`). 201 with the stored rating's
summary; 404 for a run id the audit log does not hold; 422 for a bad rating, run id or comment;
503 when the rating cannot be stored (the audit log is off, or its folder is not writable).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import FastAPI, HTTPException, Request
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from textbound.records.feedback import (
    MAX_COMMENT_CHARS,
    RATINGS,
    FeedbackDisabledError,
    FeedbackError,
    InvalidFeedbackError,
    Rating,
    TurnLookup,
    UnknownRunError,
    check_run_id,
    normal_rating,
    rate_run,
    store_passages,
    summary_of,
)
from textbound.records.keys import KeyStore
from textbound.records.shared import records_of
from textbound.serving.server._roles import caller_of
from textbound.serving.server._sanitize import hide_paths
from textbound.serving.server._threads import check_owner

if TYPE_CHECKING:
    from graph.services import Services

ROUTE = "/feedback"
_PROBLEM = {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


class FeedbackRequest(BaseModel):
    """A rating of one response, named by the `run_id` the response carries."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(max_length=64, description="The `run_id` of the rated response.")
    rating: Annotated[Rating, BeforeValidator(normal_rating)] = Field(
        description=f"{' or '.join(f'`{r}`' for r in RATINGS)} in any case (`UP` is `up`): "
                    "`up`, right and useful; `down`, wrong.")
    comment: str | None = Field(
        default=None, max_length=4 * MAX_COMMENT_CHARS,
        description=f"What is wrong or missing; at most {MAX_COMMENT_CHARS} characters once "
                    "invisible characters are dropped.")


class CitedPlace(BaseModel):
    """Where a cited passage is."""

    chunk_id: str
    source: str | None = None
    section: str | None = None


class FeedbackStored(BaseModel):
    """The stored rating, as the teacher's report will read it."""

    run_id: str
    rating: Rating
    comment: str | None = None
    timestamp: str = Field(description="When the rating was stored (UTC).")
    thread_id: str | None = None
    question: str = Field(description="The question as the student asked it.")
    was_refusal: bool
    refusal_reason: str | None = None
    sources: list[CitedPlace] = Field(default_factory=list)
    replaces_earlier: bool = Field(description="The run was rated before; this rating, the "
                                               "latest, is the one that counts.")


def _thread_turns(graph: Any) -> TurnLookup | None:
    """Return the thread history lookup over the served graph (None: it keeps no threads)."""
    from textbound.conversation.threads import thread_turns

    if getattr(graph, "checkpointer", None) in (None, False):
        return None
    return lambda thread_id: thread_turns(graph, thread_id)


def mount_feedback(app: FastAPI, services: Services, graph: Any, keys: KeyStore) -> None:
    """Add `POST /feedback` to the app."""
    settings = services.settings
    # the course's audit lines and ratings: files, or PostgreSQL's tables every process shares
    records = records_of(settings) if settings.audit_log is not None else None
    turns = _thread_turns(graph)
    passages = store_passages(services.store)

    @app.post(ROUTE, tags=["feedback"], status_code=201, response_model=FeedbackStored,
              summary="Rate a response (up or down, with a comment)",
              responses={404: {"description": "No response with this run_id in the audit log.",
                               "content": _PROBLEM},
                         503: {"description": "The rating cannot be stored: the audit log is "
                                              "off or its folder is not writable.",
                               "content": _PROBLEM}})
    async def feedback(body: FeedbackRequest, request: Request) -> dict[str, Any]:
        """Store a student's rating of the response with this `run_id`; latest rating wins.

        The question, answer, refusal reason and cited passages are taken from the server's
        records of that run, never from the request. Rating the same run again stores the new
        rating, and `textbound report` counts only the latest. A student rates only answers of
        their own conversations: another's is a run this server does not know (404).
        """
        await _check_rater(body.run_id, request)
        return await asyncio.to_thread(_rate, body)

    async def _check_rater(run_id: str, request: Request) -> None:
        if records is None:
            return  # rate_run says why nothing can be rated
        try:
            line = await asyncio.to_thread(records.find_run, check_run_id(run_id))
        except InvalidFeedbackError as exc:
            raise HTTPException(422, str(exc)) from exc
        thread_id = (line or {}).get("thread_id")
        if isinstance(thread_id, str):
            try:
                await check_owner(keys, caller_of(request), thread_id)
            except HTTPException:
                raise HTTPException(404, f"no response with run_id {run_id} in the audit log: "
                                    "rate a response this server gave you") from None

    def _rate(body: FeedbackRequest) -> dict[str, Any]:
        try:
            record = rate_run(records, body.run_id, body.rating, body.comment,
                              turns=turns, passages=passages)
        except InvalidFeedbackError as exc:
            raise HTTPException(422, str(exc)) from exc
        except UnknownRunError as exc:
            raise HTTPException(404, str(exc)) from exc
        except (FeedbackDisabledError, FeedbackError) as exc:
            raise HTTPException(503, hide_paths(str(exc), settings)) from exc
        return summary_of(record)
