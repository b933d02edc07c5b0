"""Compose an extractive draft: the evidence units that best answer the question, verbatim.

Every sentence of the draft is quoted from a chunk and cited to it by its span, so nothing can be
invented; no model is called and no key is needed. The candidates and the way each is read come
from textbound/answer/candidates.py, what may follow the lead from textbound/answer/followers.py.
The generate node (nodes/generate.py) calls `extractive_draft` with `answer_anchor`'s span.
"""

from __future__ import annotations

import re
from typing import Any

from textbound.answer.candidates import (
    DEFINES,
    Candidate,
    candidates,
    cosines,
    defined_subject,
    glossary_entry,
    names_better,
    naming,
)
from textbound.answer.evidence import (
    Weigher,
    asked_terms,
    compared_terms,
    coverage,
    defined_term,
    glossary_names,
    question_terms,
    spelled_out,
    term_owners,
    uniform,
)
from textbound.answer.followers import announced_items, antecedent, block_after, supports
from textbound.documents.store import SentenceVectors
from textbound.shapes import AnswerabilityVerdict, ChunkDict, Draft
from textbound.text import has_date, has_name, has_number, question_shape
from textbound.text.question import asked_count, wants_code, wants_list, wants_procedure
from textbound.text.units import Unit, enumerates

__all__ = ["ANCHOR_MIN_SCORE", "answer_anchor", "extractive_draft"]

EMBED_CANDIDATES = 10
"""Sentences (best by word overlap) that are scored by cosine too (embedded at ingestion, or
here for a collection ingested without sentence vectors)."""
BLOCK_BONUS = 0.2
"""Added to a `block` unit's score when the question asks how to do something or for code."""
ANCHOR_MIN_SCORE = 0.5
"""The reader's span leads the answer only when the reader is at least this sure of it."""
# "give me an example", "what is an example of X?": prefer a unit that gives one
_ASKS_EXAMPLE = re.compile(r"\b(?:an?|some|another|one)\s+examples?\b|\bexamples?\s+of\b|"
                           r"\bfor\s+instance\b", re.I)
_GIVES_EXAMPLE = re.compile(r"\b(?:for example|for instance|e\.g\.|such as|an example|"
                            r"examples? (?:is|are|include)|is an example)\b", re.I)
_FIGURE = re.compile(r"(?<![\w.,])\d+\.\d+(?![\w.]?\d)")
"""A decimal figure ("0.8", "3.5"): a question that states one asks about the unit stating it."""
# "What does NITROS stand for?": prefer the sentence that spells the acronym out
_STANDS_FOR = re.compile(r"\bstands?\s+for\b|\bacronym\b|\babbreviat\w*|\bshort\s+for\b", re.I)
_ACRONYM = re.compile(r"\b[A-Z][A-Z]{1,7}\b")


def answer_anchor(verdict: AnswerabilityVerdict | None, evidence: list[ChunkDict]
                  ) -> tuple[tuple[str, int, int], list[Any]] | None:
    """Return the sentence holding the reader's answer span and the span, in evidence terms.

    Both as (chunk_id, start, end) offsets into an evidence chunk's text: the reader's own chunk,
    or in selected-text mode the selection sentence that holds the span. None when the verdict
    did not pass with a span (skipped, refused, or no span found).
    """
    if not verdict or verdict.get("skipped") or not verdict.get("passed"):
        return None
    if float(verdict.get("score") or 0.0) < ANCHOR_MIN_SCORE:
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


def _one_per_side(cands: list[Candidate], scores: list[float],
                  sides: tuple[set[str], set[str]], weigh: Weigher,
                  glossed: dict[int, list[str]], phrases: list[str]) -> list[int]:
    """Pick the best unit about each side of a comparison: each half is half the answer.

    A unit that defines (best, the book's glossary entry for that side) is preferred.
    """
    chosen: list[int] = []
    for k, (terms, other) in enumerate((sides, sides[::-1])):
        own = terms - other
        phrase = phrases[k]  # asked_terms gives a comparison's two sides in this order
        ranked = sorted(range(len(cands)), key=lambda i: -(
            scores[i] + 0.5 * coverage(own or terms, cands[i].unit.text, weigh)
            + (0.2 if DEFINES.match(cands[i].unit.text) else 0.0)
            + (0.3 if i in glossed and glossary_names(glossed[i], phrase) else 0.0)))
        pick = next((i for i in ranked if i not in chosen), None)
        if pick is not None:
            chosen.append(pick)
    return chosen


def extractive_draft(question: str, evidence: list[ChunkDict], embeddings: Any,
                     max_sentences: int = 2, weigh: Weigher = uniform,
                     query_vector: list[float] | None = None,
                     stored: dict[str, SentenceVectors] | None = None,
                     anchor: tuple[tuple[str, int, int], list[Any]] | None = None,
                     analysis: Any = None) -> Draft:
    """Compose a draft from verbatim evidence units that best answer the question.

    The candidates are the answer units (textbound/text/units.py) of every evidence chunk: prose
    sentences, list items, a lead-in with its list, table rows with their header; captions and
    code only when the question asks for code or output. `query_vector` (the question's
    embedding from retrieve) and `stored` (unit vectors saved at ingestion, by chunk id) spare
    the embedding calls. `anchor` (from `answer_anchor`): the unit holding the answerability
    reader's span leads the answer, and the span is carried as the draft's `answer_span`. A
    second unit is added only when it scores close to the lead and supports the same answer.
    """
    terms = question_terms(question)
    shape = question_shape(question)
    enumerate_asked = wants_list(question)
    procedure = wants_procedure(question) or wants_code(question)
    asked_term, does = defined_term(question)
    owners = term_owners(question)
    cands = candidates(question, evidence)
    lead: int | None = None
    if anchor is not None:
        a_cid, a_s, a_e = anchor[0]
        found = [i for i, c in enumerate(cands)
                 if c.chunk["chunk_id"] == a_cid and (c.unit.start, c.unit.end) == (a_s, a_e)]
        lead = found[0] if found else None
    if not cands:
        return {"sentences": [], "confidence": None, "generator": "extractive"}
    lexical = []
    for c in cands:
        heading = " ".join(c.chunk["metadata"].get("heading_path") or [])
        lexical.append(max(coverage(terms, c.unit.text, weigh),
                           0.8 * coverage(terms, c.prev + " " + c.unit.text, weigh),
                           0.7 * coverage(terms, heading + " " + c.unit.text, weigh)))
    counted = asked_count(question)
    # only the lexically strongest candidates are scored by cosine too, and every unit that
    # enumerates what a "What are the four ...?" question asks for
    keep = sorted(range(len(cands)), key=lambda i: (-lexical[i], i))[:EMBED_CANDIDATES]
    if counted is not None:
        keep += [i for i, c in enumerate(cands) if i not in keep and enumerates(c.unit, counted)]
    acronyms = _STANDS_FOR.search(question) and _ACRONYM.findall(question)
    if acronyms:
        keep += [i for i, c in enumerate(cands) if i not in keep
                 and any(spelled_out(a, [c.unit.text]) for a in acronyms)]
    # "Can you explain the law of the excluded middle?": the book's glossary entry for it
    asked = asked_terms(question)
    entries = {i: e for i, e in ((i, glossary_entry(c, asked)) for i, c in enumerate(cands))
               if e is not None}
    keep += [i for i in entries if i not in keep]
    if lead is not None:
        if lead not in keep:
            keep[-1] = lead
        lead = keep.index(lead)
    cands = [cands[i] for i in keep]
    lexical = [lexical[i] for i in keep]
    glossed = {n: entries[i] for n, i in enumerate(keep) if i in entries}
    cos = cosines(question, cands, embeddings, query_vector, stored or {})
    scores: list[float] = []
    defines: dict[int, list[str]] = {}  # candidate -> the subject its definition names
    examples: list[int] = []
    enumerating: list[int] = []
    expanding: list[int] = []
    example_asked = bool(_ASKS_EXAMPLE.search(question))
    # "... natural frequency for a 0.8 m CoM height?": the unit with the question's own figure
    figures = set(_FIGURE.findall(question))
    for c, cs, lex in zip(cands, cos, lexical, strict=True):
        text = c.unit.text
        bonus = 0.0
        for wants, has in ((shape.wants_number, has_number), (shape.wants_date, has_date),
                           (shape.wants_name, has_name)):
            if wants:
                bonus += 0.12 if has(text) else -0.06
        if c.unit.kind == "list":
            bonus += 0.2 if enumerate_asked else -0.1
        elif c.unit.kind == "code":  # a candidate only when the question asks for code
            bonus += 0.2
        elif c.unit.kind == "block" and procedure:
            bonus += BLOCK_BONUS
        scores.append(0.55 * float(cs) + 0.45 * lex + 0.1 * c.chunk["score"] + bonus)
        subject = defined_subject(text, asked_term, does, c.unit.kind,
                                  bool(c.chunk.get("titled")), owners)
        if subject is not None:
            scores[-1] += 0.25
            defines[len(scores) - 1] = subject
        if figures and figures & set(_FIGURE.findall(text)):
            scores[-1] += 0.2
        if example_asked and _GIVES_EXAMPLE.search(text):
            scores[-1] += 0.2
            examples.append(len(scores) - 1)
        if counted is not None and enumerates(c.unit, counted):
            scores[-1] += 0.2
            enumerating.append(len(scores) - 1)
        if acronyms and any(spelled_out(a, [text]) for a in acronyms):
            expanding.append(len(scores) - 1)
    order = sorted(range(len(cands)), key=lambda i: -scores[i])
    sides = compared_terms(question)
    if sides is not None:
        chosen = _one_per_side(cands, scores, sides, weigh, glossed, asked)
    elif expanding and lead not in expanding:
        # "What does NITROS stand for?": the sentence that spells it out
        chosen = [max(expanding, key=lambda i: scores[i])]
    elif enumerating and lead not in enumerating:
        # "What are the four causes?": the unit that names all four leads, not the one that
        # announces them or the reader's single span
        chosen = [max(enumerating, key=lambda i: scores[i])]
    elif glossed and lead not in glossed:
        # "What is reflective equilibrium?": the book's own glossary entry leads, ahead of the
        # reader's span and of a looser definition in the text; the best-scored one if several
        chosen = [max(glossed, key=lambda i: scores[i])]
    elif defines and (lead not in defines or names_better(defines, lead, asked_term)):
        # "What is a topic?": the book's own definition leads, ahead of the reader's span
        # the definition whose subject names most of the asked term: "Moravec's paradox is
        # ...", not "The paradox is ..."; "ROS 2, the second generation ..., is ...", not "A
        # running ROS 2 system is ..." even when the reader's span is in the latter
        chosen = [max(defines, key=lambda i: (*naming(defines[i], asked_term), scores[i]))]
    elif examples and lead not in examples:
        # "Give me an example": a unit that gives one leads, ahead of a definition
        chosen = [max(examples, key=lambda i: scores[i])]
    else:
        chosen = [order[0] if lead is None else lead]
    first = chosen[0]
    following = announced_items(cands[first], question) if sides is None else None
    if following is not None:
        lead_unit, items = following
        return _draft([(cands[first].chunk, lead_unit), *((cands[first].chunk, u) for u in items)],
                      anchor)
    block = block_after(cands[first]) if procedure and sides is None else None
    if block is not None:
        # "How do I find the commit that introduced a regression?": the prose that leads to
        # the command is followed by the command, not by more prose
        units = [(cands[first].chunk, cands[first].unit), (cands[first].chunk, block)]
        return _draft(units, anchor)
    for i in order[:max_sentences + 3]:
        if len(chosen) >= max_sentences:
            break
        if i != first and scores[i] >= 0.85 * scores[order[0]] \
                and cands[i].unit.text != cands[first].unit.text \
                and supports(cands[i], cands[first], question):
            chosen.append(i)
    # the lead stays first; a supporting unit follows in reading order
    rank = {c["chunk_id"]: r for r, c in enumerate(sorted(evidence, key=lambda c: -c["score"]))}
    chosen = chosen[:1] + sorted(chosen[1:], key=lambda i: (rank[cands[i].chunk["chunk_id"]],
                                                            cands[i].unit.start))
    units = [(cands[i].chunk, cands[i].unit) for i in chosen]
    before = antecedent(cands[first])
    if before is not None:
        # "It is the successor to two earlier projects ...": the sentence naming "it" first
        units = [(cands[first].chunk, before), *(
            (c, u) for c, u in units
            if not (c["chunk_id"] == cands[first].chunk["chunk_id"] and u.start == before.start))]
    return _draft(units, anchor)


def _draft(units: list[tuple[ChunkDict, Unit]],
           anchor: tuple[tuple[str, int, int], list[Any]] | None) -> Draft:
    """Return the draft quoting these units, each cited to its chunk by its span."""
    draft: Draft = {
        "sentences": [{"text": u.text, "citations": [chunk["chunk_id"]],
                       "spans": [[chunk["chunk_id"], u.start, u.end]]} for chunk, u in units],
        "confidence": None,
        "generator": "extractive",
    }
    if anchor is not None:
        draft["answer_span"] = list(anchor[1])
    return draft
