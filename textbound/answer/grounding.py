"""The grounding checks: is every sentence of a draft cited, and backed by what it cites?

validate_grounding (nodes/validate_grounding.py) releases a draft only when every check passes;
it names the refusal reason of the first check that failed.

Before checking, a chat draft is prepared (textbound/answer/chat_claims.py; tuned on drafts of
Qwen2.5-Coder-1.5B, recorded in tests/fixtures/chat_drafts.json):

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
refused (textbound/answer/support.py). No model is called; embeddings are computed only for
sentences that lexical containment leaves in doubt. The checks read the run's thresholds through
`GroundingLimits` (the run context has them all).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import prompts
from textbound.answer import reading
from textbound.answer.answer_type import span_has_type
from textbound.answer.attribute import states_attribute
from textbound.answer.chat_claims import echoes_question, prepare_chat_draft
from textbound.answer.evidence import Weigher, coverage, uniform
from textbound.answer.support import assess, cited_text, fill_cosines, is_supported, recite
from textbound.seams import Embedder
from textbound.shapes import ChunkDict
from textbound.text import normalize
from textbound.text.units import LEADING_KINDS, chunk_units

__all__ = ["GroundingLimits", "draft_findings"]


class GroundingLimits(Protocol):
    """The run's thresholds the checks read (`graph.context.RunContext` has them all)."""

    @property
    def sentence_support_threshold(self) -> float:
        """The support a sentence needs (lexical containment, or cosine where allowed)."""

    @property
    def grounding_threshold(self) -> float:
        """The share of supported sentences a draft needs."""

    @property
    def min_answer_coverage(self) -> float:
        """The IDF-weighted share of the question's words the answer must hold (0: off)."""

    @property
    def confidence_threshold(self) -> float:
        """The generation confidence an extractive draft that reports one needs."""


_LEAK_LINES = [
    normalize(line) for line in prompts.system_prompt_template().splitlines()
    if len(line) > 30 and "{" not in line
]


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
            units = [u for u in chunk_units(chunk) if u.kind in LEADING_KINDS]
            before = [u.text for u in units if u.end <= int(start)][-1:]
            after = [u.text for u in units if u.start >= int(end)][:1]
            out += before + after
    return " ".join(out)


def draft_findings(draft: dict[str, Any], evidence: list[ChunkDict], tun: GroundingLimits,
                   embeddings: Embedder, question: str | None = None,
                   weigh: Weigher = uniform, analysis: reading.QuestionAnalysis | None = None
                   ) -> dict[str, Any]:
    """Return the grounding checks' findings on a draft (pure apart from embedding calls).

    The question's checks read `analysis` (textbound/answer/reading.py), the question's reading
    kept in the run's state; without it the question is read here.

    `passed` and the named checks that passed and failed, in the order above (the first failed
    check decides the refusal), the grounding score and a row per sentence. A chat draft is
    prepared first (`prepare_chat_draft`); the findings' `draft` holds the sentences as checked
    (split, and re-cited where another passage supports them).
    """
    rows_extra: dict[str, Any] = {}
    if analysis is None and question is not None:
        analysis = reading.analyse(question)
    by_id = {c["chunk_id"]: c for c in evidence}
    passed: list[str] = []
    failed: list[str] = []
    rows: list[dict[str, Any]] = []
    chat = draft.get("generator") == "chat"
    if chat:
        draft, prepared = prepare_chat_draft(draft)
        rows_extra["prepared"] = prepared
    sentences = [dict(s) for s in draft.get("sentences") or []]

    def note(name: str, ok: bool) -> None:
        (passed if ok else failed).append(name)

    if not sentences:
        abstained = chat  # the model returned nothing, or said only that the context is silent
        note("model_abstained" if abstained else "non_empty", False)
        return {"passed": False, "grounding_score": 0.0, "sentences": [], "passed_checks": passed,
                "failed_checks": failed, **rows_extra}

    missing = invalid = 0
    for i, s in enumerate(sentences):
        text = str(s.get("text", ""))
        cites = [c for c in s.get("citations", []) if c]
        valid = [c for c in cites if c in by_id]
        missing += not cites
        invalid += len(cites) - len(valid)
        cited = "\n".join(cited_text(by_id[c]) for c in valid)
        row: dict[str, Any] = {"sentence": i, "citations": len(cites),
                               "valid_citations": len(valid)}
        row.update(assess(text, cited, weigh, chat) if valid else
                   {"lexical": 0.0, "cosine": None, "unsupported_tokens": [],
                    "cosine_allowed": False})
        rows.append(row)
    note("citations_present", missing == 0)
    note("citations_valid", invalid == 0)

    threshold = tun.sentence_support_threshold
    fill_cosines(rows, sentences, by_id, threshold, embeddings)
    recited = recite(rows, sentences, evidence, threshold, weigh, embeddings) if chat else 0
    if recited:
        passed.append(f"recited:{recited}")

    full = " ".join(str(s.get("text", "")) for s in sentences)
    lowered = normalize(full)
    # hedging is prohibited as the writer's own voice; a sentence quoting the book's own
    # "typically" is the book speaking, so a phrase its cited text contains is allowed
    bad = []
    for s in sentences:
        said = normalize(str(s.get("text", "")))
        cited = normalize(" ".join(cited_text(by_id[c]) for c in s.get("citations", [])
                                   if c in by_id))
        bad += [p for p in prompts.PROHIBITED_PHRASES
                if re.search(rf"\b{re.escape(p)}\b", said)
                and not re.search(rf"\b{re.escape(p)}\b", cited)]
    note("prohibited_phrasing", not bad)
    leaked = any(line in lowered for line in _LEAK_LINES)
    note("no_prompt_leak", not leaked)
    invented = sorted({t for r in rows for t in r["unsupported_tokens"]})
    note("hallucination_markers", not invented)

    if chat and question is not None and analysis is not None:
        asked = reading.terms(analysis)
        echoes = [i for i, s in enumerate(sentences)
                  if echoes_question(str(s.get("text", "")), question, terms=asked)]
        for i in echoes:
            rows[i]["echo"] = True
        note("no_question_echo", not echoes)

    supported = 0
    for r in rows:
        support, ok = is_supported(r, threshold) if r["valid_citations"] else (0.0, False)
        ok = ok and not r.get("echo")
        r["support"] = round(support, 3)
        r["supported"] = ok
        supported += ok
    score = supported / len(rows)
    note("grounding_score", score >= tun.grounding_threshold)

    if analysis is not None and tun.min_answer_coverage > 0:
        heads = " ".join(" ".join(by_id[c]["metadata"].get("heading_path") or [])
                         for s in sentences for c in s.get("citations", []) if c in by_id)
        answered = coverage(reading.terms(analysis), full + " " + heads, weigh)
        rows_extra["answer_coverage"] = round(answered, 3)
        note("answer_coverage", answered >= tun.min_answer_coverage)

    kind = reading.answer_type(analysis) if chat and analysis is not None else None
    if kind is not None:
        # "How many threads does the MultiThreadedExecutor create?" answered with "a pool of
        # threads": a chat draft asked for a count, a year, a price ... must state one (its
        # numbers are held to the cited passages by the hallucination markers above)
        rows_extra["answer_type"] = kind.name
        note("answer_type", span_has_type(kind, full, 0, len(full)))

    if question is not None and analysis is not None:
        # a near-miss answer is about the subject but never states what was asked (seed 002's
        # "answers the question"): "Where was X born?" answered with X's works
        # a chat draft's own words do not count: the model writes the asked attribute into its
        # claim ("The first country to legalize euthanasia was Switzerland.", cited to passages
        # that never say "first"); its cited passages must state it
        said = "" if chat else full
        attribute = states_attribute(question, said + " " + _neighbours(sentences, by_id),
                                     forms=analysis["asked_attribute"])
        if attribute.words:
            rows_extra["attribute"] = {"asked": list(attribute.words),
                                       "missing": list(attribute.missing)}
            note("asked_attribute", attribute.stated)

    conf = draft.get("confidence")
    if conf is None:
        passed.append("generation_confidence:not_reported")
    elif chat:
        passed.append("generation_confidence:ignored")  # self-reported, carries no signal
    else:
        note("generation_confidence", float(conf) >= tun.confidence_threshold)
    return {
        "passed": not failed,
        "grounding_score": round(score, 3),
        **rows_extra,
        "sentences": rows,
        "passed_checks": passed,
        "failed_checks": failed,
        "draft": {**draft, "sentences": sentences},
    }
