"""The chat generator's call: messages from seed 001's prompt, structured output, one deadline.

A LangChain chat model answers with `GroundedAnswer` (sentences with the ids of the passages they
use, and a confidence). The call runs on its own thread holding one of the chat client's slots
until it really ends; LangChain's `with_retry` retries it (never after a timeout), each try
bounded by the client's own timeout, and the question gives up at the client's deadline, which
also cancels the request (the answer is streamed; closing the stream closes the connection).
Every failure comes back as an error category, never an exception. The generate node
(nodes/generate.py) calls `chat_draft`.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda, RunnableSequence
from pydantic import BaseModel, Field, ValidationError

import prompts
from textbound.errors import NO_CHAT_MODEL
from textbound.providers.chat import ChatClient
from textbound.shapes import ChunkDict, Draft, DraftSentence

__all__ = ["CitedSentence", "GroundedAnswer", "chat_draft", "chat_messages"]

log = logging.getLogger("textbound.generate")


class CitedSentence(BaseModel):
    """One answer sentence and the context passages it relies on."""

    text: str = Field(description="One sentence of the answer, stated as the context states it.")
    chunk_ids: list[str] = Field(description="Ids of the context passages (e.g. C1) it uses.")


class GroundedAnswer(BaseModel):
    """An answer built only from the context, every sentence cited."""

    sentences: list[CitedSentence] = Field(
        description="The answer, one sentence per item; empty if the context does not answer."
    )
    confidence: float = Field(
        ge=0.0, le=1.0, description="How fully the context supports the answer, 0 to 1."
    )


def _context_block(evidence: list[ChunkDict]) -> tuple[str, dict[str, str]]:
    ids: dict[str, str] = {}
    parts = []
    for n, c in enumerate(evidence, start=1):
        short = f"C{n}"
        ids[short] = c["chunk_id"]
        where = c["metadata"].get("section") or c["metadata"].get("source") or ""
        parts.append(f"[{short}] ({where})\n{c['text']}")
    return "\n\n".join(parts), ids


def chat_messages(question: str, evidence: list[ChunkDict], course_title: str
                  ) -> tuple[list[Any], dict[str, str]]:
    """Return the messages for the chat model and the map from short ids to chunk ids."""
    from langchain_core.messages import HumanMessage, SystemMessage

    context, ids = _context_block(evidence)
    system = prompts.system_prompt_template().format(
        course_title=course_title, retrieved_chunks=context, user_question=question
    )
    # the request names what each kind of question wants: Qwen 1.5B otherwise answered "What
    # are some examples of X?" with X's definition, and "How many layers?" without the number
    human = prompts.answer_request_template().format(question=question)
    return [SystemMessage(system), HumanMessage(human)], ids


class _Timeout(Exception):
    """A try that timed out: never retried (the server would only compute the answer again)."""


class _Retryable(Exception):
    """A try that failed otherwise (provider error, malformed output): retried."""


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__


def _streamed(structured: Runnable[Any, Any], messages: list[Any], cancel: threading.Event,
              config: RunnableConfig | None) -> Any:
    """Run the structured call streaming, stopping when `cancel` is set.

    The model's chunks are gathered and the parser runs once on the whole message. Stopping
    closes the stream, which closes the HTTP connection: an OpenAI-compatible server (llama.cpp's
    included) stops generating for a client that went away, so an abandoned answer does not
    delay the next question. A structured runnable that is not model | parser is just invoked.
    """
    if not isinstance(structured, RunnableSequence) or len(structured.steps) != 2:
        return structured.invoke(messages, config)
    model, parser = structured.steps
    stream = model.stream(messages, config)
    full: Any = None
    named: set[Any] = set()
    try:
        for chunk in stream:
            if cancel.is_set():
                raise _Timeout("deadline passed; the request was cancelled")
            chunk = _name_once(chunk, named)
            full = chunk if full is None else full + chunk
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    if full is None:
        raise ValueError("the model streamed nothing")
    return parser.invoke(full, config)


def _name_once(chunk: Any, named: set[Any]) -> Any:
    """Drop a tool name a server repeats in every streamed chunk (llama-cpp-python does).

    LangChain joins the chunks' names, so "GroundedAnswer" sent 40 times would name an unknown
    tool; OpenAI sends the name in the first chunk only, which this leaves as it is.
    """
    parts = getattr(chunk, "tool_call_chunks", None)
    if not parts:
        return chunk
    fixed = []
    for part in parts:
        key = part.get("index")
        if part.get("name") and key in named:
            part = {**part, "name": None}
        elif part.get("name"):
            named.add(key)
        fixed.append(part)
    extra = dict(chunk.additional_kwargs)
    call = extra.get("function_call")
    if isinstance(call, dict) and call.get("name") and len(named) and fixed != parts:
        extra["function_call"] = {**call, "name": ""}
    return type(chunk)(content=chunk.content, additional_kwargs=extra,
                       response_metadata=chunk.response_metadata, id=chunk.id,
                       tool_call_chunks=fixed)


def _chat_chain(chat: ChatClient, attempts: list[int], cancel: threading.Event
                ) -> Runnable[Any, GroundedAnswer]:
    """Return the structured chat call with LangChain's retry; attempts[0] counts the tries.

    A malformed answer raises inside the chain, so it is retried like a provider error; a
    timeout is not retried. Each try is bounded by the client's own timeout
    (`textbound.providers.chat.attempt_timeout`) and stops when `cancel` is set (the question's
    deadline).
    """
    method = chat.structured_method
    kwargs: dict[str, Any] = {"method": method} if method else {}
    structured = chat.model.with_structured_output(GroundedAnswer, **kwargs)

    def one_try(messages: list[Any], config: RunnableConfig) -> GroundedAnswer:
        attempts[0] += 1
        try:
            out = (_streamed(structured, messages, cancel, config) if chat.stream
                   else structured.invoke(messages, config))
            if isinstance(out, dict):
                out = GroundedAnswer.model_validate(out)
            if not isinstance(out, GroundedAnswer):
                raise ValueError(f"structured output of unexpected type {type(out).__name__}")
        except _Timeout:
            raise
        except Exception as exc:  # noqa: BLE001 - sorted into retried or not
            raise (_Timeout(str(exc)) if _is_timeout(exc) else _Retryable(str(exc))) from exc
        return out

    return RunnableLambda(one_try).with_retry(
        retry_if_exception_type=(_Retryable,), wait_exponential_jitter=False,
        stop_after_attempt=1 + chat.max_retries)


def _failure(exc: BaseException) -> str:
    if isinstance(exc, _Timeout | _Retryable) and exc.__cause__ is not None:
        exc = exc.__cause__
    elif isinstance(exc, _Timeout):
        return "timeout"
    name = type(exc).__name__
    if _is_timeout(exc):
        return "timeout"
    if isinstance(exc, ValidationError | ValueError | TypeError | KeyError):
        return f"malformed output ({name})"
    return f"model error ({name})"


def chat_draft(question: str, evidence: list[ChunkDict], chat: ChatClient | None,
               course_title: str) -> tuple[Draft | None, str | None, int]:
    """Ask the chat model for a cited answer; return (draft, error category, attempts).

    The call runs on its own thread holding one of the `chat_max_concurrency` slots until it
    really ends; the question gives up at the deadline. With no free slot the question is
    refused at once, so a hung model can neither pile up threads nor delay other questions.
    """
    if chat is None:
        return None, NO_CHAT_MODEL, 0
    guard = chat.guard
    if not guard.acquire():
        return None, (f"chat model busy ({guard.limit} calls in flight, "
                      "TEXTBOUND_CHAT_MAX_CONCURRENCY)"), 0
    messages, ids = chat_messages(question, evidence, course_title)
    attempts = [0]
    outcome: dict[str, Any] = {}
    done = threading.Event()
    cancel = threading.Event()

    def call(chain: Runnable[Any, GroundedAnswer]) -> None:
        try:
            outcome["answer"] = chain.invoke(messages)
        except Exception as exc:  # noqa: BLE001 - any provider failure fails closed
            outcome["error"] = exc
        finally:
            guard.release()
            done.set()

    context = contextvars.copy_context()  # keeps the run's tracing parent on the call thread
    threading.Thread(target=context.run, args=(call, _chat_chain(chat, attempts, cancel)),
                     name="chat-call", daemon=True).start()
    if not done.wait(chat.deadline_s):
        cancel.set()  # the call thread closes its stream at the next chunk
        guard.record("timeout")
        return None, "timeout", attempts[0]
    if "error" in outcome:
        error = _failure(outcome["error"])
        if error.startswith("model error"):
            log.warning("chat model call failed: %s", type(outcome["error"]).__name__)
        guard.record(error)
        return None, error, attempts[0]
    guard.record(None)
    answer: GroundedAnswer = outcome["answer"]
    sentences: list[DraftSentence] = []
    for s in answer.sentences:
        cites = [ids.get(c.strip().strip("[]"), f"unknown:{c}") for c in s.chunk_ids]
        sentences.append({"text": s.text.strip(), "citations": cites})
    draft: Draft = {"sentences": sentences, "confidence": float(answer.confidence),
                    "generator": "chat"}
    return draft, None, attempts[0]
