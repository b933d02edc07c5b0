"""Compose an extractive draft: the evidence units that best answer the question, verbatim.

Every sentence of the draft is quoted from a chunk and cited to it by its span, so nothing can be
invented; no model is called and no key is needed. The candidates and the way each is read come
from textbound/answer/candidates.py, what may follow the lead from textbound/answer/followers.py.
The generate node (nodes/generate.py) calls `extractive_draft` with `answer_anchor`'s span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from textbound.answer import reading
from textbound.answer.answerability import UNSURE
from textbound.answer.attribute import states_action
from textbound.answer.candidates import (
    Candidate,
    asks,
    candidates,
    cosines,
    defined_subject,
    glossary_entry,
    introduced,
    keyed_by,
    naming,
    quotes,
    row_answers,
)
from textbound.answer.comparison import one_per_side
from textbound.answer.evidence import (
    Weigher,
    coverage,
    spelled_out,
    uniform,
)
from textbound.answer.followers import (
    announced_items,
    antecedent,
    block_after,
    entry_head,
    explanation,
    option_after,
    span_rest,
    supports,
)
from textbound.answer.lead import lead_score
from textbound.answer.named_section import named
from textbound.answer.reading import QuestionAnalysis, analyse
from textbound.documents.store import SentenceVectors
from textbound.shapes import AnswerabilityVerdict, ChunkDict, Draft, DraftSentence
from textbound.text import content_words
from textbound.text.commands import asked_commands
from textbound.text.counting import enumerates
from textbound.text.units import Unit

__all__ = ["ANCHOR_MIN_SCORE", "Ranking", "answer_anchor", "extractive_draft", "lead_options",
           "rank_units"]

EMBED_CANDIDATES = 10
"""Sentences (best by word overlap) that are scored by cosine too (embedded at ingestion, or
here for a collection ingested without sentence vectors)."""
BLOCK_BONUS = 0.2
"""Added to a `block` unit's relevance when the question asks how to do something or for code."""
CODE_BONUS = 0.2
"""Added to a code unit's relevance (a candidate only when the question asks for code)."""
RETRIEVAL_WEIGHT = 0.1
"""The weight of the unit's chunk's retrieval score in the unit's relevance."""
SUBJECT_BONUS = 0.25
"""Added to the relevance of a unit that defines the asked term ("X is ...")."""
EXAMPLE_BONUS = 0.2
"""Added to the relevance of a unit giving an example, for a question asking for one."""
ENUMERATES_BONUS = 0.2
"""Added to the relevance of a unit naming as many things as the question asks for."""
PREV_DISCOUNT = 0.8
"""A unit's word overlap read with the sentence before it counts at this share."""
HEADING_DISCOUNT = 0.7
"""A unit's word overlap read with its section titles counts at this share."""
SUPPORT_SHARE = 0.85
"""A second unit is added only when its relevance is at least this share of the best unit's."""
ANCHOR_MIN_SCORE = UNSURE
"""The reader's span leads the answer only when the reader is at least this sure of it."""
# a unit that gives an example, for "give me an example" (reading.asks_example)
_GIVES_EXAMPLE = re.compile(r"\b(?:for example|for instance|e\.g\.|such as|an example|"
                            r"examples? (?:is|are|include)|is an example)\b", re.I)


def answer_anchor(verdict: AnswerabilityVerdict | None, evidence: list[ChunkDict]
                  ) -> tuple[tuple[str, int, int], list[Any]] | None:
    """Return the sentence holding the reader's answer span and the span, in evidence terms.

    Both as (chunk_id, start, end) offsets into an evidence chunk's text: the reader's own chunk,
    or in selected-text mode the selection sentence that holds the span. None when the verdict
    did not pass with a span (skipped, refused, or no span found).
    """
    if not verdict or verdict.get("skipped") or not verdict.get("passed"):
        return None
    if float(verdict.get("span_score", verdict.get("score")) or 0.0) < ANCHOR_MIN_SCORE:
        return None  # an unsure reader's span is a hint for the gate, not the answer to lead with
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


SINGLES_OUT = 2
"""A question's literal counts for a unit (`quotes_literal`) when at most this many candidate
units print it: "^P" names one row of a key table; a product's name is printed by every unit
about the product."""


@dataclass
class Ranking:
    """The candidates of one question, ranked: what a lead is chosen from and followed by."""

    question: str
    evidence: list[ChunkDict]
    anchor: tuple[tuple[str, int, int], list[Any]] | None
    cands: list[Candidate]
    scores: list[float]
    """Relevance: what a supporting unit and each side of a comparison are ranked by."""
    signals: list[dict[str, float]]
    """Each candidate's lead signals (textbound/answer/lead.py)."""
    sides: tuple[set[str], set[str]] | None
    procedure: bool
    code: bool
    """Whether the question asks for code or output (a code block may then support a lead)."""
    glossed: dict[int, list[str]]
    asked: list[str]
    weigh: Weigher
    max_sentences: int


def rank_units(question: str, evidence: list[ChunkDict], embeddings: Any,
               max_sentences: int = 2, weigh: Weigher = uniform,
               query_vector: list[float] | None = None,
               stored: dict[str, SentenceVectors] | None = None,
               anchor: tuple[tuple[str, int, int], list[Any]] | None = None,
               analysis: QuestionAnalysis | None = None,
               heads: frozenset[str] = frozenset()) -> Ranking | None:
    """The candidate units of the evidence, each with its relevance and its lead signals.

    None when the evidence has no candidate unit. See `extractive_draft` for the arguments.
    """
    a = analysis if analysis is not None and analysis["question"] == question else analyse(question)
    terms = reading.terms(a)
    procedure = a["wants_procedure"] or a["wants_code"]
    asked_term, does = a["defined_term"], a["asks_what_it_does"]
    cands = candidates(question, evidence, code=a["wants_code"], literals=a["literals"])
    lead: int | None = None
    if anchor is not None:
        a_cid, a_s, a_e = anchor[0]
        found = [i for i, c in enumerate(cands)
                 if c.chunk["chunk_id"] == a_cid and (c.unit.start, c.unit.end) == (a_s, a_e)]
        lead = found[0] if found else None
    if not cands:
        return None
    own = [coverage(terms, c.unit.text, weigh) for c in cands]  # the unit's words alone
    lexical = []
    for c, alone in zip(cands, own, strict=True):
        heading = " ".join(c.chunk["metadata"].get("heading_path") or [])
        lexical.append(max(alone,
                           (1.0 if asks(c.prev) else PREV_DISCOUNT)
                           * coverage(terms, c.prev + " " + c.unit.text, weigh),
                           HEADING_DISCOUNT * coverage(terms, heading + " " + c.unit.text,
                                                       weigh)))
    counted = reading.count(a)
    # only the lexically strongest candidates are scored by cosine too, and every unit that
    # enumerates what a "What are the four ...?" question asks for
    keep = sorted(range(len(cands)), key=lambda i: (-lexical[i], i))[:EMBED_CANDIDATES]
    if counted is not None:
        keep += [i for i, c in enumerate(cands) if i not in keep and enumerates(c.unit, counted)]
    acronyms = a["acronyms"]
    if acronyms:
        keep += [i for i, c in enumerate(cands) if i not in keep
                 and any(spelled_out(a, [c.unit.text]) for a in acronyms)]
    # "What does ^P do?": every unit that prints a token of the question as it is
    # (a literal that many units print, such as the name the passage is about, singles out none)
    quoted = [t for t in a["literals"]
              if 0 < sum(quotes(c.unit.text, [t]) > 0 for c in cands) <= SINGLES_OUT]
    if quoted:
        keep += [i for i, c in enumerate(cands) if i not in keep and quotes(c.unit.text, quoted)]
    # "What nice value does PRIORITY_HIGH map to?": the table row whose first cell it is
    keyed = {i for i, c in enumerate(cands) if keyed_by(c.unit, a["literals"])}
    keep += [i for i in sorted(keyed) if i not in keep]
    # "Can you explain the law of the excluded middle?": the book's glossary entry for it
    asked = a["asked_terms"]
    entries = {i: e for i, e in ((i, glossary_entry(c, asked)) for i, c in enumerate(cands))
               if e is not None}
    keep += [i for i in entries if i not in keep]
    if lead is not None:
        if lead not in keep:
            keep[-1] = lead
        lead = keep.index(lead)
    cands = [cands[i] for i in keep]
    lexical, own = [lexical[i] for i in keep], [own[i] for i in keep]
    glossed = {n: entries[i] for n, i in enumerate(keep) if i in entries}
    cos = cosines(question, cands, embeddings, query_vector, stored or {})
    scores: list[float] = []  # relevance: what a supporting unit and each side's unit are ranked by
    signals: list[dict[str, float]] = []  # what the lead is chosen by (textbound/answer/lead.py)
    example_asked = a["asks_example"]
    action = a["asked_action"]
    for n, (c, cs, lex) in enumerate(zip(cands, cos, lexical, strict=True)):
        text = c.unit.text
        kind = c.unit.kind
        subject = defined_subject(text, asked_term, does, kind)
        shared, extra = (naming(subject, asked_term) if subject is not None and asked_term
                         else (0, 0))
        if extra and shared < len(set(asked_term)):
            shared = 0  # a sibling: "The maximum input base is 16." for the maximum output base
        signals.append({
            "cosine": float(cs), "overlap": lex,
            "block_how": float(kind == "block" and procedure),
            "names_term": shared / len(set(asked_term)) if shared else 0.0,
            "names_extra": float(min(-extra, 6)),
            "example": float(example_asked and bool(_GIVES_EXAMPLE.search(text))),
            "enumerates": float(counted is not None and enumerates(c.unit, counted)),
            "expands": float(any(spelled_out(ac, [text]) for ac in acronyms)),
            "glossary": float(n in glossed), "reader": float(n == lead),
            "restates": max(float(cs), 0.0) if own[n] >= 0.99 else 0.0,
            "states_action": float(action is not None and states_action(action, text)),
            "row_header": float(kind == "row" and row_answers(text, terms)),
            "quotes_literal": 1.0 if keep[n] in keyed else max(  # the reader's: its subject too
                quotes(text, quoted), introduced(c, quoted) if n == lead else 0.0),
            "names_command": float(procedure and kind in ("prose", "item") and any(
                set(content_words(w)) & terms for _, w in asked_commands(text, heads))),
        })
        sig = signals[-1]
        # relevance: how near the unit is to the question, what a supporting unit and each
        # side of a comparison are ranked by
        scores.append(0.55 * float(cs) + 0.45 * lex + RETRIEVAL_WEIGHT * c.chunk["score"]
                      + BLOCK_BONUS * sig["block_how"] + SUBJECT_BONUS * (subject is not None)
                      + CODE_BONUS * (kind == "code") + EXAMPLE_BONUS * sig["example"]
                      + ENUMERATES_BONUS * sig["enumerates"])
    return Ranking(question, evidence, anchor, cands, scores, signals,
                   reading.compared(a), procedure, a["wants_code"], glossed, asked, weigh,
                   max_sentences)


def lead_options(question: str, evidence: list[ChunkDict], embeddings: Any,
                 **kwargs: Any) -> list[tuple[dict[str, float], Draft]]:
    """Each candidate's signals and the draft it would give as the lead (for fitting weights).

    Empty for a comparison (each side's unit is chosen by `_one_per_side`, not by weights) and
    when there is no candidate. Takes extractive_draft's keyword arguments.
    """
    r = rank_units(question, evidence, embeddings, **kwargs)
    if r is None or r.sides is not None:
        return []
    return [(r.signals[i], _finish(r, [i])) for i in range(len(r.cands))]


def extractive_draft(question: str, evidence: list[ChunkDict], embeddings: Any,
                     max_sentences: int = 2, weigh: Weigher = uniform,
                     query_vector: list[float] | None = None,
                     stored: dict[str, SentenceVectors] | None = None,
                     anchor: tuple[tuple[str, int, int], list[Any]] | None = None,
                     weights: dict[str, float] | None = None,
                     analysis: QuestionAnalysis | None = None,
                     heads: frozenset[str] = frozenset()) -> Draft:
    """Compose a draft from verbatim evidence units that best answer the question.

    The candidates are the answer units (textbound/text/units.py) of every evidence chunk: prose
    sentences, list items, a lead-in with its list, table rows with their header; code only when
    the question asks for code or output (and a code block printing one of the question's
    literal tokens, which may lead but supports nothing); never a caption. `query_vector` (the
    question's embedding from retrieve) and `stored` (unit vectors saved at ingestion, by chunk
    id) spare the embedding calls. `anchor` (from `answer_anchor`): the unit holding the
    answerability reader's span, one of the lead's signals; the span is carried as the draft's
    `answer_span`. The lead is the candidate with the highest weighted signals
    (textbound/answer/lead.py; `weights`, the shipped ones by default); a comparison's lead is
    the best unit about each side. A second unit is added only when it scores close to the lead
    and supports the same answer. `heads`: the collection's command heads (the words its code
    blocks open with, TermStats.commands), read by the `names_command` signal.
    """
    r = rank_units(question, evidence, embeddings, max_sentences=max_sentences, weigh=weigh,
                   query_vector=query_vector, stored=stored, anchor=anchor,
                   analysis=analysis, heads=heads)
    if r is None:
        return {"sentences": [], "confidence": None, "generator": "extractive"}
    if r.sides is not None:
        return _finish(r, one_per_side(r.cands, r.scores, r.asked, r.glossed))
    best = max(range(len(r.cands)), key=lambda i: (lead_score(r.signals[i], weights), -i))
    return _finish(r, [best])


def _finish(r: Ranking, chosen: list[int]) -> Draft:
    """The draft led by `chosen` (one lead, or one unit per side): what follows it, in order."""
    cands, scores, question, anchor = r.cands, r.scores, r.question, r.anchor
    chosen = list(chosen)
    sides, procedure, max_sentences, evidence = r.sides, r.procedure, r.max_sentences, r.evidence
    order = sorted(range(len(cands)), key=lambda i: -scores[i])
    first = chosen[0]
    lead = cands[first]
    following = announced_items(lead, question) if sides is None else None
    if following is not None:
        lead_unit, items = following
        return _draft(_named_first(lead, [(lead.chunk, lead_unit),
                                          *((lead.chunk, u) for u in items)]), anchor)
    rest = span_rest(lead, anchor) if sides is None else []
    if rest:
        # the reader's span runs on past the lead's sentence: the answer is the whole span
        return _draft(_named_first(lead, [(lead.chunk, lead.unit),
                                          *((lead.chunk, u) for u in rest)]), anchor)
    block = block_after(lead) if procedure and sides is None else None
    if block is not None:
        # "How do I find the commit that introduced a regression?": the prose that leads to
        # the command is followed by the command, not by more prose; a sentence between them
        # that names the option to give ("Give Valgrind the option --log-socket=...") comes too
        said = option_after(lead, question)
        between = [(lead.chunk, said)] if said is not None and said.end <= block.start else []
        return _draft(_named_first(lead, [(lead.chunk, lead.unit), *between,
                                          (lead.chunk, block)]), anchor)
    option = option_after(lead, question) if procedure and sides is None else None
    if option is not None:
        # the lead says what goes wrong, the sentence after it which option puts it right
        return _draft(_named_first(lead, [(lead.chunk, lead.unit), (lead.chunk, option)]),
                      anchor)
    note = explanation(lead) if sides is None else None
    if note is not None:
        # "... ends on another prompt: vault#": the sentence after the block says what it means
        return _draft(_named_first(lead, [(lead.chunk, lead.unit), (lead.chunk, note)]), anchor)
    for i in order[:max_sentences + 3]:
        if len(chosen) >= max_sentences:
            break
        if i != first and scores[i] >= SUPPORT_SHARE * scores[order[0]] \
                and (cands[i].unit.kind != "code" or r.code) \
                and cands[i].unit.text != cands[first].unit.text \
                and supports(cands[i], cands[first], question):
            chosen.append(i)
    # the lead stays first; a supporting unit follows in reading order
    rank = {c["chunk_id"]: r for r, c in enumerate(sorted(evidence, key=lambda c: -c["score"]))}
    chosen = chosen[:1] + sorted(chosen[1:], key=lambda i: (rank[cands[i].chunk["chunk_id"]],
                                                            cands[i].unit.start))
    units = [(cands[i].chunk, cands[i].unit) for i in chosen]
    for i in chosen[1:]:
        # a supporting "This example creates a broken axis." points back at its code block:
        # the block comes with it, just before it
        block = antecedent(cands[i])
        if block is not None and block.kind in ("block", "code") and not any(
                c["chunk_id"] == cands[i].chunk["chunk_id"]
                and u.start < block.end and block.start < u.end for c, u in units):
            units.insert(units.index((cands[i].chunk, cands[i].unit)), (cands[i].chunk, block))
    return _draft(_named_first(lead, units), anchor)


def _named_first(lead: Candidate, units: list[tuple[ChunkDict, Unit]]
                 ) -> list[tuple[ChunkDict, Unit]]:
    """The answer's units, led by what a lead opening "It ..." or "This ..." points back to.

    "It is the successor to two earlier projects ...": the sentence naming "it" comes first
    (followers.antecedent), whatever follows the lead (its items, the rest of the reader's
    span, the command it leads to, a supporting unit). Only when the lead is the first unit.
    A later sentence of a definition entry is led by the entry's head, which names the term
    it describes (followers.entry_head).
    """
    before = entry_head(lead) or antecedent(lead)  # a description's "It" is its entry's term
    if before is None or units[0][1] != lead.unit:
        return units
    return [(lead.chunk, before), *(
        (c, u) for c, u in units
        if not (c["chunk_id"] == lead.chunk["chunk_id"] and u.start == before.start))]


def _draft(units: list[tuple[ChunkDict, Unit]],
           anchor: tuple[tuple[str, int, int], list[Any]] | None) -> Draft:
    """Return the draft quoting these units, each cited to its chunk by its span.

    The first sentence quoted from a reference entry is led by the entry's code title when it
    leaves the name unsaid ("`os.homedir()`: Returns the string path of ...", named_section).
    """
    quoted: set[str] = set()  # a chunk's code title leads only the first sentence from it
    sentences: list[DraftSentence] = []
    for chunk, u in units:
        cid = chunk["chunk_id"]
        sentences.append({"text": u.text if cid in quoted else named(chunk, u.text),
                          "citations": [cid], "spans": [[cid, u.start, u.end]]})
        quoted.add(cid)
    draft: Draft = {
        "sentences": sentences,
        "confidence": None,
        "generator": "extractive",
    }
    if anchor is not None:
        draft["answer_span"] = list(anchor[1])
    return draft
