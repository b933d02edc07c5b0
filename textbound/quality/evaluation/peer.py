"""The peer a user would otherwise pick: a plain LangChain RAG chain, for `eval --generator peer`.

Same retriever (the graph's own retrieve node: spelling, hybrid search, re-ranking, top_k), same
chat model (the settings' one, as the chat generator builds it), a standard "answer from the
context" prompt (prompts/peer_rag.txt) in an LCEL chain (prompt | model | string parser); no
gates, no reader, no validator. Its reply is released as written; it counts as a refusal only
when the model itself says the context lacks the answer (`abstains`), or when the call fails.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate

from prompts import peer_prompt_template
from textbound.answer.chat_claims import is_abstention

__all__ = ["PEER_PATH", "abstains", "peer_answer", "peer_chain"]

PEER_PATH = "peer_rag"
# what the peer's prompt invites beyond the validator's own abstentions (is_abstention): "say
# that you don't know", and "not mentioned in the given context"
_ALSO_ABSTAINS = re.compile(
    r"\bi (?:do not|don't) know\b|\b(?:not|never) (?:mentioned|provided|stated|given|found) in "
    r"the (?:given|provided) (?:context|text|passages?)\b", re.I)


def abstains(reply: str) -> bool:
    """Whether the model's reply says the context does not answer ("I don't know", ...)."""
    reply = reply.replace("’", "'")
    return is_abstention(reply) or bool(_ALSO_ABSTAINS.search(reply))


def peer_chain(model: Any) -> Any:
    """Return prompt | model | string parser: the textbook RAG chain of LangChain's tutorials."""
    prompt = ChatPromptTemplate.from_messages([("human", peer_prompt_template())])
    return prompt | model | StrOutputParser()


def _context(chunks: list[dict[str, Any]]) -> str:
    return "\n\n".join(f"[{n}] {c['text']}" for n, c in enumerate(chunks, start=1))


def retrieved(graph: Any, question: str, context: dict[str, Any]) -> list[dict[str, Any]]:
    """Run the graph up to its retrieve node and return the chunks it found.

    An input the graph turns away before retrieval gives the peer no chunks, so no context.
    """
    for update in graph.stream({"question": question}, context=context, stream_mode="updates"):
        for node, values in update.items():
            if node == "retrieve":
                return list((values or {}).get("chunks") or [])
    return []


def peer_answer(graph: Any, chain: Any, payload: dict[str, Any], context: dict[str, Any]
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Answer one question with the peer; return (response, what it saw).

    The same pair as the journal's `answer_with_draft`, so one record and report serve both.
    """
    question = payload["question"]
    chunks = retrieved(graph, question, context)
    error = None
    try:
        reply = str(chain.invoke({"context": _context(chunks), "question": question})).strip()
    except Exception as exc:  # noqa: BLE001 - a failed call is recorded, as the graph does
        reply, error = "", f"{type(exc).__name__}: {exc}"
    refused = error is not None or not reply or abstains(reply)
    reason = "call_failed" if error is not None else ("abstained" if refused else None)
    response = {
        "answer": reply, "was_refusal": refused, "refusal_reason": reason,
        "sources": [{"chunk_id": c["chunk_id"], "score": c["score"],
                     "section": c["metadata"].get("section")} for c in chunks],
        "confidence_level": None, "suggestions": [],
        "diagnostics": {"path": PEER_PATH if not refused else f"{PEER_PATH}_{reason}"},
        "chunks": chunks,
    }
    seen = {"draft": None, "error": error,
            "evidence": [{"chunk_id": c["chunk_id"], "text": c["text"], "score": c["score"]}
                         for c in chunks]}
    return response, seen
