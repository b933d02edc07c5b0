"""validate_grounding: release a draft only if every sentence is cited and backed by its citations.

Before checking, a chat draft is prepared (tuned on drafts of Qwen2.5-Coder-1.5B, recorded in
tests/fixtures/chat_drafts.json):

* the model's own abstention ("the context does not say ...", no sentences at all) ends as
  question_not_answered (the book does not answer it), not as an ungrounded answer;
* an item packing several sentences is split, and each sentence is checked on its own.

Checks, in the order their failure is reported (all are recorded in diagnostics):

1. citations (seed 004): every sentence cites at least one chunk given as evidence;
2. prohibited phrasing (seed 001) and system-prompt leakage; a phrase the cited text itself
   uses (the book's own "typically") is the book speaking, not the writer hedging;
3. hallucination markers (seed 003): numbers and names absent from the cited chunks, and names
   or numbers changed against the cited sentence they come from ("RT-1 built on RT-1" where the
   book says "RT-2 built on RT-1");
4. support: a sentence is supported when its lexical containment in the cited text reaches
   sentence_support_threshold, or, only when the cited text holds the sentence's key (rarest)
   terms and half its words, its cosine to the best cited sentence does; the grounding score,
   the share of supported sentences, must reach grounding_threshold (seed 004: 0.7);
5. answer coverage, when min_answer_coverage > 0: the answer's sentences and section titles must
   hold that IDF-weighted share of the question's words (else question_not_answered);
6. the asked attribute (textbound/answer/attribute.py): when the question asks for an attribute the
   training data shows answers state ("Where was X born?", "What did X die of?"), the answer
   must state it or a derived synonym (else question_not_answered); a chat draft's cited
   passages must, since the model writes the asked word into its own claim;
7. a chat sentence that only echoes the question ("Yes, you can just copy your TensorRT engines
   ..." for "Can I just copy my TensorRT engines ...?") is unsupported whatever its overlap: the
   yes or no is the model's, and the passages hold its words only because the question does;
8. the answer type, for a chat draft: a question that plainly asks for a count, a year, a price,
   a rate or a size (textbound/answer/answer_type.py) must be answered with a value of that kind
   (else question_not_answered);
9. generation confidence (seed 002 gate 3), when the generator reports one; a chat model's
   self-reported confidence is ignored (Qwen reported 0.9-1.0 on every draft, invented ones
   included).

A sentence that fails against the passages it cites but passes every check against another
evidence passage is re-cited to that passage (recorded as `recited` in its row) instead of
refused. No model is called; embeddings are computed only for sentences that lexical containment
leaves in doubt.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

import prompts
from graph.context import RunContext
from graph.state import ChunkDict, GroundingVerdict, RefusalReason, State, Verdict
from graph.state import verdict as make_verdict
from nodes._common import question_of, timed, weigher
from textbound.answer.answer_type import expected_answer_type, span_has_type
from textbound.answer.attribute import states_attribute
from textbound.answer.evidence import Weigher, coverage, question_terms, uniform
from textbound.documents.store import Store
from textbound.seams import Embedder
from textbound.text import content_words, key_tokens, normalize, split_sentences
from textbound.text.units import LEADING_KINDS, answer_units

__all__ = ["validate_grounding", "check_draft", "is_abstention", "entity_mismatches",
           "prepare_chat_draft", "echoes_question"]

_LEAK_LINES = [
    normalize(line) for line in prompts.system_prompt_template().splitlines()
    if len(line) > 30 and "{" not in line
]
KEY_TERMS = 3
"""The claim's rarest content words that its cited text must hold before cosine may count."""
COSINE_MIN_LEXICAL = 0.5
"""Cosine support counts only for a sentence at least this contained in its cited text."""

# The model's own "the context does not answer this" (seed 001's rule 2, and its paraphrases).
_ABSTAIN = re.compile(
    r"\b(?:i can only answer questions from the (?:textbook|book) content"
    r"|(?:context|textbook|book|passages?|text|provided information)\s+(?:does|do|did)\s+not\s+"
    r"(?:contain|provide|mention|say|state|answer|include|specify|cover|describe|give|discuss)"
    r"|(?:context|textbook|book|passages?|text)\s+(?:doesn't|don't)\s+\w+"
    r"|(?:is|are)\s+not\s+(?:mentioned|provided|covered|stated|specified|described|discussed|"
    r"given|found)\s+in\s+the\s+(?:context|textbook|book|passages?|text|provided)"
    r"|no (?:information|mention|details?) (?:about|on|of|regarding)"
    r"|(?:cannot|can't|can not) (?:be )?(?:answer|determine|find|found|answered|determined))",
    re.I)
# a name with a number ("ROS 2", "RT-2", "H100") or a number
_ENTITY = re.compile(r"\b(?:[A-Z][A-Za-z]*\s\d+(?:\.\d+)?(?![\w.])|[A-Za-z]+[-/]?\d[\w.-]*"
                     r"|\d+(?:[.,]\d+)*)\b")


def is_abstention(text: str) -> bool:
    """Return whether a draft sentence says the context does not answer (no claim of its own)."""
    return bool(_ABSTAIN.search(text))


def _entities(text: str) -> Counter[str]:
    """Count the names with digits (RT-2, ROS2, H100) and the numbers in text."""
    return Counter(m.group(0).lower().rstrip(".").replace(",", "")
                   for m in _ENTITY.finditer(text))


def _family(token: str) -> str:
    return re.sub(r"\d+(?:\.\d+)*", "#", token)


def entity_mismatches(claim: str, cited_text: str) -> list[str]:
    """Return the claim's names and numbers that its cited sentences contradict.

    Two ways: the claim repeats a token more often than any one cited sentence holds it ("RT-1
    built on RT-1" against "RT-2 built on RT-1"), or the claim's token is absent from the cited
    sentence it follows most closely while that sentence holds a token of the same shape the
    claim lacks ("7 DoF" against "6 DoF"). A token absent from every cited sentence is left to
    the hallucination markers.
    """
    said = _entities(claim)
    if not said:
        return []
    sentences = split_sentences(cited_text) or [cited_text]
    counts = [_entities(s) for s in sentences]
    words = set(content_words(claim))
    overlap = [len(words & set(content_words(s))) for s in sentences]
    aligned = counts[max(range(len(sentences)), key=lambda i: (overlap[i], -i))]
    wrong: set[str] = set()
    for token, n in said.items():
        best = max((c[token] for c in counts), default=0)
        if 0 < best < n:
            wrong.add(token)
        if token not in aligned:
            family = _family(token)
            if any(_family(t) == family and t not in said for t in aligned):
                wrong.add(token)
    return sorted(wrong)


_POLARITY = {"yes", "no"}


def echoes_question(sentence: str, question: str) -> bool:
    """Return whether a sentence says nothing but the question's own words (and a yes or no).

    "Yes, you can just copy your TensorRT engines from the workstation to the robot." for "Can I
    just copy my TensorRT engines ...?": every word is in its cited passage, because the question
    was about that passage, yet the passage never says yes (it says the engines are rebuilt on the
    robot). Such a sentence is the model's own verdict, so no passage can support it.
    """
    said = set(content_words(sentence)) - _POLARITY
    return bool(said) and said <= set(content_words(question))


def prepare_chat_draft(draft: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a chat draft's items into sentences and drop its abstaining sentences.

    Returns the prepared draft and a record of what was done (`split`: items that held several
    sentences, `abstained`: the abstaining sentences dropped, `abstention`: whether nothing but
    abstention was left).
    """
    items = list(draft.get("sentences") or [])
    out: list[dict[str, Any]] = []
    split = dropped = 0
    for item in items:
        parts = [p.strip() for p in split_sentences(str(item.get("text", ""))) if p.strip()]
        parts = parts or [str(item.get("text", "")).strip()]
        split += len(parts) > 1
        for part in parts:
            if is_abstention(part):
                dropped += 1
                continue
            out.append({**item, "text": part, "citations": list(item.get("citations") or [])})
    note = {"split": split, "abstained": dropped, "abstention": not out}
    return {**draft, "sentences": out}, note


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
    Ratzeburg. He studied zoology ..."). A chat draft's sentence quotes no span: its cited
    passages stand in (the passage must then state the attribute).
    """
    out: list[str] = []
    for s in sentences:
        if not s.get("spans"):
            out += [by_id[c]["text"] for c in s.get("citations") or [] if c in by_id]
        for cid, start, end in s.get("spans") or []:
            chunk = by_id.get(cid)
            if chunk is None:
                continue
            units = [u for u in answer_units(chunk["text"]) if u.kind in LEADING_KINDS]
            before = [u.text for u in units if u.end <= int(start)][-1:]
            after = [u.text for u in units if u.start >= int(end)][:1]
            out += before + after
    return " ".join(out)


def _key_terms_present(sentence: str, cited_text: str, weigh: Weigher) -> bool:
    """Return whether the cited text holds the sentence's KEY_TERMS rarest content words."""
    words = set(content_words(sentence))
    if not words:
        return True
    key = sorted(words, key=lambda w: (-weigh(w), -len(w), w))[:KEY_TERMS]
    have = set(content_words(cited_text))
    return all(w in have for w in key)


def _assess(text: str, cited_text: str, tun: RunContext, weigh: Weigher, chat: bool
            ) -> dict[str, Any]:
    """Score one sentence against one cited text, before any cosine.

    Names and numbers are compared with the cited sentences only for a chat draft: an extractive
    sentence is verbatim from its chunk, and may span what the splitter calls two sentences.
    """
    lex = _lexical_support(text, cited_text)
    changed = entity_mismatches(text, cited_text) if chat else []
    return {"lexical": round(lex, 3), "cosine": None,
            "unsupported_tokens": sorted(set(_unsupported_tokens(text, cited_text))
                                         | set(changed)),
            "cosine_allowed": lex >= COSINE_MIN_LEXICAL
            and _key_terms_present(text, cited_text, weigh)}


def _cosine_rows(rows: list[dict[str, Any]], texts: list[str], cited: list[list[str]],
                 embeddings: Any) -> None:
    """Fill rows' cosine: each sentence against the best sentence of its cited text."""
    if not rows:
        return
    groups = [[t for txt in c for t in split_sentences(txt)] or c for c in cited]
    flat = [t for g in groups for t in g]
    vecs = np.asarray(embeddings.embed_documents(texts + flat), np.float32)
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
    offset = len(texts)
    for k, row in enumerate(rows):
        group = vecs[offset:offset + len(groups[k])]
        offset += len(groups[k])
        row["cosine"] = round(float((group @ vecs[k]).max()), 3) if len(group) else 0.0


def _supported(row: dict[str, Any], tun: RunContext) -> tuple[float, bool]:
    cosine = row["cosine"] if row.get("cosine_allowed") else None
    support = max(row["lexical"], cosine or 0.0)
    ok = support >= tun.sentence_support_threshold and not row["unsupported_tokens"]
    return support, ok


def check_draft(draft: dict[str, Any], evidence: list[ChunkDict], tun: RunContext,
                embeddings: Embedder, question: str | None = None,
                weigh: Weigher = uniform) -> GroundingVerdict:
    """Return the grounding verdict for a draft (pure apart from embedding calls).

    A chat draft is prepared first (`prepare_chat_draft`); the verdict's `draft` holds the
    sentences as checked (split, and re-cited where another passage supports them).
    """
    rows_extra: dict[str, Any] = {}
    by_id = {c["chunk_id"]: c for c in evidence}
    passed: list[str] = []
    failed: list[str] = []
    reasons: list[RefusalReason] = []
    rows: list[dict[str, Any]] = []
    chat = draft.get("generator") == "chat"
    if chat:
        draft, prepared = prepare_chat_draft(draft)
        rows_extra["prepared"] = prepared
    sentences = [dict(s) for s in draft.get("sentences") or []]

    def note(name: str, ok: bool, reason: RefusalReason) -> None:
        if ok:
            passed.append(name)
        else:
            failed.append(name)
            reasons.append(reason)

    if not sentences:
        abstained = chat  # the model returned nothing, or said only that the context is silent
        name, reason = (("model_abstained", RefusalReason.QUESTION_NOT_ANSWERED) if abstained
                        else ("non_empty", RefusalReason.UNGROUNDED_ANSWER))
        note(name, False, reason)
        return {"passed": False, "reason": reason,
                "grounding_score": 0.0, "sentences": [], "passed_checks": passed,
                "failed_checks": failed, **rows_extra}  # type: ignore[typeddict-item]

    missing = invalid = 0
    for i, s in enumerate(sentences):
        text = str(s.get("text", ""))
        cites = [c for c in s.get("citations", []) if c]
        valid = [c for c in cites if c in by_id]
        missing += not cites
        invalid += len(cites) - len(valid)
        cited_text = "\n".join(by_id[c]["text"] for c in valid)
        row: dict[str, Any] = {"sentence": i, "citations": len(cites),
                               "valid_citations": len(valid)}
        row.update(_assess(text, cited_text, tun, weigh, chat) if valid else
                   {"lexical": 0.0, "cosine": None, "unsupported_tokens": [],
                    "cosine_allowed": False})
        rows.append(row)
    note("citations_present", missing == 0, RefusalReason.MISSING_CITATIONS)
    note("citations_valid", invalid == 0, RefusalReason.INVALID_CITATIONS)

    _fill_cosines(rows, sentences, by_id, tun, embeddings)
    recited = _recite(rows, sentences, evidence, tun, weigh, embeddings) if chat else 0
    if recited:
        passed.append(f"recited:{recited}")

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

    if chat and question is not None:
        echoes = [i for i, s in enumerate(sentences)
                  if echoes_question(str(s.get("text", "")), question)]
        for i in echoes:
            rows[i]["echo"] = True
        note("no_question_echo", not echoes, RefusalReason.UNGROUNDED_ANSWER)

    supported = 0
    for r in rows:
        support, ok = _supported(r, tun) if r["valid_citations"] else (0.0, False)
        ok = ok and not r.get("echo")
        r["support"] = round(support, 3)
        r["supported"] = ok
        supported += ok
    score = supported / len(rows)
    note("grounding_score", score >= tun.grounding_threshold, RefusalReason.UNGROUNDED_ANSWER)

    if question is not None and tun.min_answer_coverage > 0:
        heads = " ".join(" ".join(by_id[c]["metadata"].get("heading_path") or [])
                         for s in sentences for c in s.get("citations", []) if c in by_id)
        answered = coverage(question_terms(question), full + " " + heads, weigh)
        rows_extra["answer_coverage"] = round(answered, 3)
        note("answer_coverage", answered >= tun.min_answer_coverage,
             RefusalReason.QUESTION_NOT_ANSWERED)

    kind = expected_answer_type(question) if chat and question is not None else None
    if kind is not None:
        # "How many threads does the MultiThreadedExecutor create?" answered with "a pool of
        # threads": a chat draft asked for a count, a year, a price ... must state one (its
        # numbers are held to the cited passages by the hallucination markers above)
        rows_extra["answer_type"] = kind.name
        note("answer_type", span_has_type(kind, full, 0, len(full)),
             RefusalReason.QUESTION_NOT_ANSWERED)

    if question is not None:
        # a near-miss answer is about the subject but never states what was asked (seed 002's
        # "answers the question"): "Where was X born?" answered with X's works
        # a chat draft's own words do not count: the model writes the asked attribute into its
        # claim ("The first country to legalize euthanasia was Switzerland.", cited to passages
        # that never say "first"); its cited passages must state it
        said = "" if chat else full
        attribute = states_attribute(question, said + " " + _neighbours(sentences, by_id))
        if attribute.words:
            rows_extra["attribute"] = {"asked": list(attribute.words),
                                       "missing": list(attribute.missing)}
            note("asked_attribute", attribute.stated, RefusalReason.QUESTION_NOT_ANSWERED)

    conf = draft.get("confidence")
    if conf is None:
        passed.append("generation_confidence:not_reported")
    elif chat:
        passed.append("generation_confidence:ignored")  # self-reported, carries no signal
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
        "draft": {**draft, "sentences": sentences},
    }


def _fill_cosines(rows: list[dict[str, Any]], sentences: list[dict[str, Any]],
                  by_id: dict[str, ChunkDict], tun: RunContext, embeddings: Any) -> None:
    """Compute cosine support for the sentences lexical containment leaves in doubt."""
    doubtful = [i for i, r in enumerate(rows) if r["valid_citations"]
                and r["lexical"] < tun.sentence_support_threshold and r["cosine_allowed"]]
    _cosine_rows([rows[i] for i in doubtful], [str(sentences[i]["text"]) for i in doubtful],
                 [[by_id[c]["text"] for c in sentences[i]["citations"] if c in by_id]
                  for i in doubtful], embeddings)


def _recite(rows: list[dict[str, Any]], sentences: list[dict[str, Any]],
            evidence: list[ChunkDict], tun: RunContext, weigh: Weigher, embeddings: Any) -> int:
    """Re-cite each failing sentence to an evidence passage that supports it; return how many.

    Only sentences that cite something valid are tried (a missing or unknown citation stays a
    refusal), and only passages that pass every check on their own; the best one wins.
    """
    n = 0
    for i, row in enumerate(rows):
        if not row["valid_citations"] or row["citations"] != row["valid_citations"]:
            continue
        if _supported(row, tun)[1]:
            continue
        text = str(sentences[i]["text"])
        best: tuple[float, str, dict[str, Any]] | None = None
        for chunk in evidence:
            if chunk["chunk_id"] in sentences[i]["citations"]:
                continue
            trial = _assess(text, chunk["text"], tun, weigh, True)
            if trial["unsupported_tokens"]:
                continue
            if trial["lexical"] < tun.sentence_support_threshold and trial["cosine_allowed"]:
                _cosine_rows([trial], [text], [[chunk["text"]]], embeddings)
            support, ok = _supported(trial, tun)
            if ok and (best is None or support > best[0]):
                best = (support, chunk["chunk_id"], trial)
        if best is None:
            continue
        _support, cid, trial = best
        row.update(trial)
        row["recited"] = {"from": list(sentences[i]["citations"]), "to": [cid]}
        sentences[i]["citations"] = [cid]
        n += 1
    return n


@timed
def validate_grounding(state: State, runtime: Runtime[RunContext], *, store: Store,
                       embeddings: Embedder) -> dict[str, Any]:
    """Check the draft; with partial_answers, drop unsupported sentences when enough remain."""
    tun = runtime.context
    draft = state.get("draft") or {"sentences": [], "confidence": None, "generator": "none"}
    evidence = state.get("evidence") or []
    question = question_of(state)
    weigh = weigher(store)
    verdict: dict[str, Any] = dict(
        check_draft(dict(draft), evidence, tun, embeddings, question, weigh))
    checked = verdict.pop("draft", None) or draft  # split and re-cited, as validated
    if (not verdict["passed"] and tun.partial_answers
            and verdict["reason"] == RefusalReason.UNGROUNDED_ANSWER):
        keep = [s for s, r in zip(checked["sentences"], verdict["sentences"], strict=True)
                if r["supported"]]
        if keep and len(keep) / len(checked["sentences"]) >= 0.5:
            trimmed = {**checked, "sentences": keep}
            again: dict[str, Any] = dict(
                check_draft(trimmed, evidence, tun, embeddings, question, weigh))
            trimmed = again.pop("draft", None) or trimmed
            if again["passed"]:
                again["passed_checks"].append("partial_answer")
                return {"grounding": again, "draft": trimmed,
                        "verdicts": [_judged(again, tun)]}
    if checked.get("sentences") != draft.get("sentences"):  # split or re-cited
        return {"grounding": verdict, "draft": checked, "verdicts": [_judged(verdict, tun)]}
    return {"grounding": verdict, "verdicts": [_judged(verdict, tun)]}


def _judged(found: dict[str, Any], tun: RunContext) -> Verdict:
    """Return the grounding's findings as the gate's `Verdict`."""
    figures = {"grounding_score": found["grounding_score"]}
    if "answer_coverage" in found:
        figures["answer_coverage"] = found["answer_coverage"]
    return make_verdict("validate_grounding", reason=None if found["passed"] else found["reason"],
                        figures=figures, threshold=tun.grounding_threshold,
                        passed_checks=found["passed_checks"],
                        failed_checks=found["failed_checks"])
