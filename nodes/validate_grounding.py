"""validate_grounding: release a draft only if every sentence is cited and backed by its citations.

Checks, in the order their failure is reported (all are recorded in diagnostics):

1. citations (seed 004): every sentence cites at least one chunk given as evidence;
2. prohibited phrasing (seed 001) and system-prompt leakage;
3. hallucination markers (seed 003): numbers and names absent from the cited chunks;
4. support: a sentence is supported when max(lexical containment, cosine to the best cited
   sentence) reaches sentence_support_threshold; the grounding score, the share of supported
   sentences, must reach grounding_threshold (seed 004: 0.7);
5. answer coverage, when min_answer_coverage > 0: the answer's sentences and section titles must
   hold that IDF-weighted share of the question's words (else question_not_answered);
6. the asked attribute (textbound/attribute.py): when the question asks for an attribute the
   training data shows answers state ("Where was X born?", "What did X die of?"), the answer
   must state it or a derived synonym (else question_not_answered);
7. generation confidence (seed 002 gate 3), when the generator reports one.

No model is called; embeddings are computed only for sentences that lexical containment leaves
in doubt.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

import prompts
from graph.context import RunContext
from graph.state import ChunkDict, GroundingVerdict, RefusalReason, State, Verdict
from graph.state import verdict as make_verdict
from nodes._common import question_of, timed, weigher
from nodes.evidence import Weigher, coverage, question_terms, uniform
from textbound.attribute import states_attribute
from textbound.seams import Embedder
from textbound.store import Store
from textbound.text import content_words, key_tokens, normalize, split_sentences
from textbound.units import LEADING_KINDS, answer_units

__all__ = ["validate_grounding", "check_draft"]

_LEAK_LINES = [
    normalize(line) for line in prompts.system_prompt_template().splitlines()
    if len(line) > 30 and "{" not in line
]


def _lexical_support(sentence: str, cited_text: str) -> float:
    words = content_words(sentence)
    if not words:
        return 1.0
    have = set(content_words(cited_text))
    return sum(1 for w in words if w in have) / len(words)


def _unsupported_tokens(sentence: str, cited_text: str) -> list[str]:
    haystack = normalize(cited_text).replace(",", "")
    return sorted(t for t in key_tokens(sentence) if t not in haystack)


def _neighbours(sentences: list[dict[str, Any]], by_id: dict[str, ChunkDict]) -> str:
    """Return the units just before and after each quoted span, in its chunk.

    An attribute is often stated one sentence away from the fact quoted ("He was born in
    Ratzeburg. He studied zoology ..."), and a chat draft quotes no spans: then nothing is added.
    """
    out: list[str] = []
    for s in sentences:
        for cid, start, end in s.get("spans") or []:
            chunk = by_id.get(cid)
            if chunk is None:
                continue
            units = [u for u in answer_units(chunk["text"]) if u.kind in LEADING_KINDS]
            before = [u.text for u in units if u.end <= int(start)][-1:]
            after = [u.text for u in units if u.start >= int(end)][:1]
            out += before + after
    return " ".join(out)


def check_draft(draft: dict[str, Any], evidence: list[ChunkDict], tun: RunContext,
                embeddings: Embedder, question: str | None = None,
                weigh: Weigher = uniform) -> GroundingVerdict:
    """Return the grounding verdict for a draft (pure apart from embedding calls)."""
    rows_extra: dict[str, Any] = {}
    by_id = {c["chunk_id"]: c for c in evidence}
    passed: list[str] = []
    failed: list[str] = []
    reasons: list[RefusalReason] = []
    rows: list[dict[str, Any]] = []
    sentences = draft.get("sentences") or []

    def note(name: str, ok: bool, reason: RefusalReason) -> None:
        if ok:
            passed.append(name)
        else:
            failed.append(name)
            reasons.append(reason)

    if not sentences:
        note("non_empty", False, RefusalReason.UNGROUNDED_ANSWER)
        return {"passed": False, "reason": RefusalReason.UNGROUNDED_ANSWER,
                "grounding_score": 0.0, "sentences": [], "passed_checks": passed,
                "failed_checks": failed}

    missing = invalid = 0
    doubtful: list[int] = []
    for i, s in enumerate(sentences):
        text = str(s.get("text", ""))
        cites = [c for c in s.get("citations", []) if c]
        valid = [c for c in cites if c in by_id]
        missing += not cites
        invalid += len(cites) - len(valid)
        cited_text = "\n".join(by_id[c]["text"] for c in valid)
        lex = _lexical_support(text, cited_text) if valid else 0.0
        row = {"sentence": i, "citations": len(cites), "valid_citations": len(valid),
               "lexical": round(lex, 3), "cosine": None,
               "unsupported_tokens": _unsupported_tokens(text, cited_text) if valid else []}
        rows.append(row)
        if valid and lex < tun.sentence_support_threshold:
            doubtful.append(i)
    note("citations_present", missing == 0, RefusalReason.MISSING_CITATIONS)
    note("citations_valid", invalid == 0, RefusalReason.INVALID_CITATIONS)

    full = " ".join(str(s.get("text", "")) for s in sentences)
    lowered = normalize(full)
    # hedging is prohibited as the writer's own voice; a sentence quoting the book's own
    # "typically" is the book speaking, so a phrase its cited text contains is allowed
    bad = []
    for s in sentences:
        said = normalize(str(s.get("text", "")))
        cited = normalize(" ".join(by_id[c]["text"] for c in s.get("citations", []) if c in by_id))
        bad += [p for p in prompts.PROHIBITED_PHRASES
                if re.search(rf"\b{re.escape(p)}\b", said)
                and not re.search(rf"\b{re.escape(p)}\b", cited)]
    note("prohibited_phrasing", not bad, RefusalReason.PROHIBITED_PHRASING)
    leaked = any(line in lowered for line in _LEAK_LINES)
    note("no_prompt_leak", not leaked, RefusalReason.PROMPT_LEAK)
    invented = sorted({t for r in rows for t in r["unsupported_tokens"]})
    note("hallucination_markers", not invented, RefusalReason.HALLUCINATION_DETECTED)

    if doubtful:
        texts = [str(sentences[i]["text"]) for i in doubtful]
        cited_sents: list[list[str]] = []
        for i in doubtful:
            cited_texts = [by_id[c]["text"] for c in sentences[i]["citations"] if c in by_id]
            cited_sents.append(
                [t for txt in cited_texts for t in split_sentences(txt)] or cited_texts)
        flat = [t for group in cited_sents for t in group]
        vecs = np.asarray(embeddings.embed_documents(texts + flat), np.float32)
        norms = np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
        vecs = vecs / norms
        offset = len(texts)
        for k, i in enumerate(doubtful):
            group = vecs[offset:offset + len(cited_sents[k])]
            offset += len(cited_sents[k])
            rows[i]["cosine"] = round(float((group @ vecs[k]).max()), 3) if len(group) else 0.0
    supported = 0
    for r in rows:
        support = max(r["lexical"], r["cosine"] or 0.0) if r["valid_citations"] else 0.0
        r["support"] = round(support, 3)
        r["supported"] = bool(r["valid_citations"]) and support >= tun.sentence_support_threshold \
            and not r["unsupported_tokens"]
        supported += r["supported"]
    score = supported / len(rows)
    note("grounding_score", score >= tun.grounding_threshold, RefusalReason.UNGROUNDED_ANSWER)

    if question is not None and tun.min_answer_coverage > 0:
        heads = " ".join(" ".join(by_id[c]["metadata"].get("heading_path") or [])
                         for s in sentences for c in s.get("citations", []) if c in by_id)
        answered = coverage(question_terms(question), full + " " + heads, weigh)
        rows_extra["answer_coverage"] = round(answered, 3)
        note("answer_coverage", answered >= tun.min_answer_coverage,
             RefusalReason.QUESTION_NOT_ANSWERED)

    if question is not None:
        # a near-miss answer is about the subject but never states what was asked (seed 002's
        # "answers the question"): "Where was X born?" answered with X's works
        attribute = states_attribute(question, full + " " + _neighbours(sentences, by_id))
        if attribute.words:
            rows_extra["attribute"] = {"asked": list(attribute.words),
                                       "missing": list(attribute.missing)}
            note("asked_attribute", attribute.stated, RefusalReason.QUESTION_NOT_ANSWERED)

    conf = draft.get("confidence")
    if conf is None:
        passed.append("generation_confidence:not_reported")
    else:
        note("generation_confidence", float(conf) >= tun.confidence_threshold,
             RefusalReason.LOW_CONFIDENCE)
    return {
        "passed": not reasons,
        "reason": reasons[0] if reasons else None,
        "grounding_score": round(score, 3),
        **rows_extra,  # type: ignore[typeddict-item]
        "sentences": rows,
        "passed_checks": passed,
        "failed_checks": failed,
    }


@timed
def validate_grounding(state: State, runtime: Runtime[RunContext], *, store: Store,
                       embeddings: Embedder) -> dict[str, Any]:
    """Check the draft; with partial_answers, drop unsupported sentences when enough remain."""
    tun = runtime.context
    draft = state.get("draft") or {"sentences": [], "confidence": None, "generator": "none"}
    evidence = state.get("evidence") or []
    question = question_of(state)
    weigh = weigher(store)
    verdict = check_draft(dict(draft), evidence, tun, embeddings, question, weigh)
    if (not verdict["passed"] and tun.partial_answers
            and verdict["reason"] == RefusalReason.UNGROUNDED_ANSWER):
        keep = [s for s, r in zip(draft["sentences"], verdict["sentences"], strict=True)
                if r["supported"]]
        if keep and len(keep) / len(draft["sentences"]) >= 0.5:
            trimmed = {**draft, "sentences": keep}
            again = check_draft(trimmed, evidence, tun, embeddings, question, weigh)
            if again["passed"]:
                again["passed_checks"].append("partial_answer")
                return {"grounding": again, "draft": trimmed,
                        "verdicts": [_judged(again, tun)]}
    return {"grounding": verdict, "verdicts": [_judged(verdict, tun)]}


def _judged(found: GroundingVerdict, tun: RunContext) -> Verdict:
    """Return the grounding's findings as the gate's `Verdict`."""
    figures = {"grounding_score": found["grounding_score"]}
    if "answer_coverage" in found:
        figures["answer_coverage"] = found["answer_coverage"]  # type: ignore[typeddict-item]
    return make_verdict("validate_grounding", reason=None if found["passed"] else found["reason"],
                        figures=figures, threshold=tun.grounding_threshold,
                        passed_checks=found["passed_checks"],
                        failed_checks=found["failed_checks"])
