"""generate: write a draft answer from the evidence, with a citation for every sentence.

Two generators behind one seam, chosen by the `generator` tunable:

* extractive (default): picks the evidence sentences that best answer the question; every
  sentence is verbatim from a chunk, so nothing can be invented. No model, no key.
* chat: a LangChain chat model with structured output (sentences with chunk ids, and a
  confidence), seed 001's system prompt, temperature 0, LangChain's `with_retry`, one deadline for
  all attempts and a bounded number of calls in flight. Any failure becomes `generation_error`;
  the user never sees an exception.

The draft goes to validate_grounding; nothing of it reaches a caller before that passes it.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import AnswerabilityVerdict, ChunkDict, Draft, RefusalReason, State
from graph.state import verdict as make_verdict
from nodes._chat_draft import CitedSentence, GroundedAnswer, chat_draft
from nodes._common import question_of, timed, weigher
from nodes.evidence import Weigher, coverage, question_terms, uniform
from textbound.chat import ChatClient
from textbound.errors import NO_CHAT_MODEL
from textbound.seams import Embedder, ProfileSource
from textbound.store import SentenceVectors, Store
from textbound.text import (
    answer_sentence_spans,
    content_words,
    has_date,
    has_name,
    has_number,
    question_shape,
)

__all__ = ["generate", "extractive_draft", "answer_anchor", "GroundedAnswer", "CitedSentence"]
# the chat call lives in nodes/_chat_draft.py; its schema stays importable from here

log = logging.getLogger("textbound.generate")
EMBED_CANDIDATES = 10
"""Sentences (best by word overlap) that are scored by cosine too (embedded at ingestion, or
here for a collection ingested without sentence vectors)."""
# "what is a topic?" asks for a definition: prefer a sentence of the form "A topic is ..."
_WHAT_IS = re.compile(
    r"^\s*(?:what|who)\s+(?:is|are)\s+(?:an?\s+|the\s+)?(.{1,60}?)\s*\??\s*$", re.I)
_DEFINES = re.compile(r"^\W*(?:an?|the)?\s*[\w\s-]{1,50}?\s+(?:is|are|refers to|means)\s", re.I)


def _cosines(question: str, cands: list[tuple[ChunkDict, int, int, str, str]],
             embeddings: Any, query_vector: list[float] | None,
             stored: dict[str, SentenceVectors]) -> np.ndarray:
    """Cosine of each candidate sentence with the question, embedding only what is not stored."""
    rows: list[np.ndarray | None] = []
    for chunk, s, e, _sent, _prev in cands:
        found = stored.get(chunk["chunk_id"])
        rows.append(found.row(s, e) if found is not None else None)
    missing = [i for i, r in enumerate(rows) if r is None]
    texts = [cands[i][3] for i in missing]
    if query_vector is None:
        texts.insert(0, question)
    fresh = list(np.asarray(embeddings.embed_documents(texts), np.float32)) if texts else []
    q = np.asarray(query_vector, np.float32) if query_vector is not None else fresh.pop(0)
    for i, vec in zip(missing, fresh, strict=True):
        rows[i] = vec
    sv = np.stack([r for r in rows if r is not None])
    return np.asarray(sv @ q / np.maximum(np.linalg.norm(sv, axis=1) * np.linalg.norm(q), 1e-9))


def answer_anchor(verdict: AnswerabilityVerdict | None, evidence: list[ChunkDict]
                  ) -> tuple[tuple[str, int, int], list[Any]] | None:
    """Return the sentence holding the reader's answer span and the span, in evidence terms.

    Both as (chunk_id, start, end) offsets into an evidence chunk's text: the reader's own chunk,
    or in selected-text mode the selection sentence that holds the span. None when the verdict
    did not pass with a span (skipped, refused, or no span found).
    """
    if not verdict or verdict.get("skipped") or not verdict.get("passed"):
        return None
    span, sentence, cid = verdict.get("span"), verdict.get("sentence"), verdict.get("chunk_id")
    if span is None or sentence is None or cid is None:
        return None
    for chunk in evidence:
        if chunk["chunk_id"] == cid:
            return (cid, sentence[0], sentence[1]), [cid, span[0], span[1]]
    # selected-text mode: the reader read the whole selection; evidence is its sentences
    for chunk in evidence:
        m = chunk["metadata"]
        if m.get("source") != "selection" or m.get("start") is None or m.get("end") is None:
            continue
        start, end = int(m["start"]), int(m["end"])
        if start <= span[0] < end:
            cut = min(span[1], end)
            return ((chunk["chunk_id"], 0, len(chunk["text"])),
                    [chunk["chunk_id"], span[0] - start, cut - start])
    return None


def extractive_draft(question: str, evidence: list[ChunkDict], embeddings: Any,
                     max_sentences: int = 2, weigh: Weigher = uniform,
                     query_vector: list[float] | None = None,
                     stored: dict[str, SentenceVectors] | None = None,
                     anchor: tuple[tuple[str, int, int], list[Any]] | None = None) -> Draft:
    """Compose a draft from verbatim evidence sentences that best answer the question.

    `query_vector` (the question's embedding from retrieve) and `stored` (sentence vectors saved
    at ingestion, by chunk id) spare the embedding calls; anything missing is embedded here.
    `anchor` (from `answer_anchor`): the sentence holding the answerability reader's span leads
    the answer, and the span is carried as the draft's `answer_span`.
    """
    terms = question_terms(question)
    shape = question_shape(question)
    m = _WHAT_IS.match(question)
    # the head noun of "what is a ROS 2 topic" is "topic"
    head = content_words(m.group(1))[-1:] if m else []
    cands: list[tuple[ChunkDict, int, int, str, str]] = []
    for chunk in sorted(evidence, key=lambda c: -c["score"])[:3]:
        spans = answer_sentence_spans(chunk["text"])
        for i, (s, e) in enumerate(spans):
            prev = chunk["text"][spans[i - 1][0]:spans[i - 1][1]] if i else ""
            cands.append((chunk, s, e, chunk["text"][s:e], prev))
    lead: int | None = None
    if anchor is not None:
        (a_cid, a_s, a_e), _span = anchor
        found = [i for i, c in enumerate(cands) if (c[0]["chunk_id"], c[1], c[2]) == anchor[0]]
        if found:
            lead = found[0]
        else:  # a chunk below the top 3, or a sentence too short to be a candidate otherwise
            chunk = next(c for c in evidence if c["chunk_id"] == a_cid)
            cands.append((chunk, a_s, a_e, chunk["text"][a_s:a_e], ""))
            lead = len(cands) - 1
    if not cands:
        return {"sentences": [], "confidence": None, "generator": "extractive"}
    lexical = []
    for chunk, _s, _e, sent, prev in cands:
        heading = " ".join(chunk["metadata"].get("heading_path") or [])
        lexical.append(max(coverage(terms, sent, weigh),
                           0.8 * coverage(terms, prev + " " + sent, weigh),
                           0.7 * coverage(terms, heading + " " + sent, weigh)))
    # only the lexically strongest candidates are scored by cosine too
    keep = sorted(range(len(cands)), key=lambda i: (-lexical[i], i))[:EMBED_CANDIDATES]
    if lead is not None:
        if lead not in keep:
            keep[-1] = lead
        lead = keep.index(lead)
    cands = [cands[i] for i in keep]
    lexical = [lexical[i] for i in keep]
    cos = _cosines(question, cands, embeddings, query_vector, stored or {})
    scores = []
    for (chunk, _s, _e, sent, _prev), c, lex in zip(cands, cos, lexical, strict=True):
        bonus = 0.0
        for wants, has in ((shape.wants_number, has_number), (shape.wants_date, has_date),
                           (shape.wants_name, has_name)):
            if wants:
                bonus += 0.12 if has(sent) else -0.06
        scores.append(0.55 * float(c) + 0.45 * lex + 0.1 * chunk["score"] + bonus)
        if head and _DEFINES.match(sent) and head[0] in content_words(sent[:40]):
            scores[-1] += 0.25
    order = sorted(range(len(cands)), key=lambda i: -scores[i])
    chosen = [order[0] if lead is None else lead]
    for i in order[:max_sentences + 3]:
        if len(chosen) >= max_sentences:
            break
        if scores[i] >= 0.85 * scores[order[0]] and cands[i][3] != cands[chosen[0]][3]:
            chosen.append(i)
    # present in reading order: by chunk rank, then position in the chunk; the sentence holding
    # the reader's answer stays first
    rank = {c["chunk_id"]: r for r, c in enumerate(sorted(evidence, key=lambda c: -c["score"]))}
    first = chosen[:1] if lead is not None else []
    chosen = first + sorted(chosen[len(first):],
                            key=lambda i: (rank[cands[i][0]["chunk_id"]], cands[i][1]))
    draft: Draft = {
        "sentences": [{"text": cands[i][3], "citations": [cands[i][0]["chunk_id"]],
                       "spans": [[cands[i][0]["chunk_id"], cands[i][1], cands[i][2]]]}
                      for i in chosen],
        "confidence": None,
        "generator": "extractive",
    }
    if anchor is not None:
        draft["answer_span"] = list(anchor[1])
    return draft


@timed
def generate(state: State, runtime: Runtime[RunContext], *, store: Store, embeddings: Embedder,
             chat: ChatClient | None, profiles: ProfileSource) -> dict[str, Any]:
    """Write the draft with the configured generator; a failure is recorded, not raised."""
    tun = runtime.context
    question = question_of(state)
    evidence = state.get("evidence") or []
    if tun.generator == "chat":
        draft, error, attempts = chat_draft(question, evidence, chat,
                                             profiles.current().course_title)
        if draft is None:
            failure = f"{error} after {attempts} attempt(s)"
            # no chat model at all: trying again would not help, and the refusal says what would
            message = "no_chat_model" if str(error).startswith(NO_CHAT_MODEL) else None
            return {"draft": None, "generation_error": failure, "verdicts": [make_verdict(
                "generate", reason=RefusalReason.GENERATION_ERROR, detail=failure,
                message=message)]}
        return {"draft": draft, "generation_error": None, "verdicts": [make_verdict("generate")]}
    weigh = weigher(store)
    stored: dict[str, SentenceVectors] = {}
    verdict = state.get("input_verdict")
    selected = verdict is not None and verdict["kind"] == "selected"
    if not selected:  # a selection's sentences are not in the store
        top = sorted(evidence, key=lambda c: -c["score"])[:3]
        try:
            stored = store.sentence_vectors([c["chunk_id"] for c in top])
        except Exception as exc:  # noqa: BLE001 - the sentences are embedded here instead
            log.warning("stored sentence vectors unavailable (%s)", type(exc).__name__)
    draft = extractive_draft(question, evidence, embeddings, weigh=weigh,
                             query_vector=state.get("query_vector"), stored=stored,
                             anchor=answer_anchor(state.get("answerability"), evidence))
    return {"draft": draft, "generation_error": None, "verdicts": [make_verdict("generate")]}
