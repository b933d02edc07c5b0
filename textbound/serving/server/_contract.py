"""What `/chat` takes and returns: the input model, the response contract, and the 503 carrier."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from textbound.serving.server._sanitize import scrub

ValidText = Annotated[str, AfterValidator(scrub)]
"""Text with each lone surrogate (a `\\ud800` JSON escape) replaced by U+FFFD on arrival.

Cleaned here, before anything runs, so no stream can fail halfway: `/chat/stream_events` echoes
the input in its events, and a lone surrogate cannot be encoded as UTF-8 once the 200 is sent.
"""

CONTRACT_KEYS = ("answer", "was_refusal", "refusal_reason", "sources", "confidence_level",
                 "suggestions", "diagnostics", "run_id")


class ChatInput(BaseModel):
    """A question, optionally about a selected passage."""

    model_config = ConfigDict(extra="forbid")

    question: ValidText = Field(description="The question, in natural language.")
    selected_text: ValidText | None = Field(
        default=None,
        description="A passage the reader selected; when set, the answer comes only from it.",
    )
    session_id: str | None = Field(
        default=None, max_length=256, description="An id that groups requests in the audit log."
    )


class Source(BaseModel):
    """A cited passage."""

    chunk_id: str
    score: float = Field(description="Raw cosine similarity in [-1, 1].")
    source: str
    section: str
    citation: int = Field(description="The n of the [n] marker in the answer.")
    start: int | None = None
    end: int | None = None
    page: int | None = Field(default=None, description="The PDF file's 1-based page.")
    page_label: str | None = Field(
        default=None, description="The page as the book prints it (its page label or printed "
        "number: \"18\", \"xiv\"), else the file's page; what a citation should show.")


class ChatOutput(BaseModel):
    """The response contract: an answer with its sources, or a refusal with its reason."""

    answer: str
    was_refusal: bool
    refusal_reason: str | None = None
    sources: list[Source] = Field(default_factory=list)
    confidence_level: Literal["high", "medium", "low", "insufficient"]
    suggestions: list[str] = Field(default_factory=list)
    diagnostics: dict[str, Any] = Field(default_factory=dict)
    run_id: str = Field(description="This run's id: name it to rate the answer "
                        "(POST /feedback); LangSmith traces carry the same id.")


class StoreUnavailableResponse(Exception):  # noqa: N818 - it is a response, raised to the app
    """The graph refused with store_unavailable; the server answers 503 with this contract."""

    def __init__(self, contract: dict[str, Any]) -> None:
        self.contract = contract
        diagnostics = contract.get("diagnostics") or {}
        super().__init__(str(diagnostics.get("error") or "the vector store is unavailable"))


def payload_of(input: Any) -> dict[str, Any]:
    data = input.model_dump() if isinstance(input, BaseModel) else dict(input)
    return {k: scrub(data.get(k)) for k in ("question", "selected_text", "session_id")}


def contract_of(values: Mapping[str, Any]) -> dict[str, Any]:
    missing = [k for k in CONTRACT_KEYS if k not in values]
    if missing:
        raise RuntimeError(f"the graph ended without a response (missing {', '.join(missing)})")
    return {k: values[k] for k in CONTRACT_KEYS}

