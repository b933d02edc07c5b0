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
from dataclasses import dataclass
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import AnswerabilityVerdict, ChunkDict, Draft, RefusalReason, State
from graph.state import verdict as make_verdict
from nodes._chat_draft import CitedSentence, GroundedAnswer, chat_draft
from nodes._common import question_of, timed, weigher
from textbound.answer.evidence import (
    Weigher,
    asked_terms,
    compared_terms,
    coverage,
    defined_term,
    glossary_names,
    glossary_term,
    is_listing,
    question_terms,
    spelled_out,
    term_owners,
    uniform,
)
from textbound.documents.store import SentenceVectors, Store
from textbound.errors import NO_CHAT_MODEL
from textbound.providers.chat import ChatClient
from textbound.seams import Embedder, ProfileSource
from textbound.text import (
    content_words,
    has_date,
    has_name,
    has_number,
    question_shape,
)
from textbound.text.question import (
    asked_count,
    wants_caption,
    wants_code,
    wants_list,
    wants_procedure,
)
from textbound.text.units import (
    LEADING_KINDS,
    Unit,
    announced_count,
    answer_units,
    enumerates,
    own_words,
)

__all__ = ["generate", "extractive_draft", "answer_anchor", "GroundedAnswer", "CitedSentence"]
# the chat call lives in nodes/_chat_draft.py; its schema stays importable from here

log = logging.getLogger("textbound.generate")
EMBED_CANDIDATES = 10
"""Sentences (best by word overlap) that are scored by cosine too (embedded at ingestion, or
here for a collection ingested without sentence vectors)."""
REPEATS = 0.8
"""A second unit whose content words are at least this share the lead's says it again."""
BLOCK_BONUS = 0.2
"""Added to a `block` unit's score when the question asks how to do something or for code."""
BLOCK_REACH = 3
"""A procedure question's prose lead is followed by a block at most this many units after it."""
ANCHOR_MIN_SCORE = 0.5
"""The reader's span leads the answer only when the reader is at least this sure of it."""
# sections that list or cite rather than teach: quoted as evidence, never an answer; a course's
# "Notes", "Questions", "Exercises", "Assessment" or "Sources" teach ("homework is due every
# Friday before noon") and may answer
_CITES = re.compile(
    r"^\W*(?:references|bibliography|works cited|further reading|endnotes|citations|credits)\W*$",
    re.I)
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
_DEFINES = re.compile(r"^\W*(?P<term>(?:an?|the)?\s*[\w\s'’-]{1,50}?)"
                      r"(?:,\s+(?:an?|the)\s+[^,.;:()]{3,80},)?"  # "ROS 2, the second ..., is"
                      r"(?:\s+(?:(?:is|are)\s+"
                      r"(?!(?:related|similar|connected|linked|important|also|not|often|closely|named|called)\b)|"
                      r"refers to\s|means\s|states\s|holds\s)|\s*:\s)", re.I)
"""A definition's form: "X is ...", "X, the ..., is ...", "X states that ...", or a glossary's
"X: ..."."""


@dataclass(frozen=True)
class _Cand:
    """A candidate answer unit: where it is, what it shows, and the text before it."""

    chunk: ChunkDict
    unit: Unit
    prev: str
    order: int  # the unit's index among its chunk's units


def _cosines(question: str, cands: list[_Cand], embeddings: Any,
             query_vector: list[float] | None, stored: dict[str, SentenceVectors]) -> np.ndarray:
    """Cosine of each candidate unit with the question, embedding only what is not stored."""
    rows: list[np.ndarray | None] = []
    for c in cands:
        found = stored.get(c.chunk["chunk_id"])
        rows.append(found.row(c.unit.start, c.unit.end) if found is not None else None)
    missing = [i for i, r in enumerate(rows) if r is None]
    texts = [cands[i].unit.text for i in missing]
    if query_vector is None:
        texts.insert(0, question)
    fresh = list(np.asarray(embeddings.embed_documents(texts), np.float32)) if texts else []
    q = np.asarray(query_vector, np.float32) if query_vector is not None else fresh.pop(0)
    for i, vec in zip(missing, fresh, strict=True):
        rows[i] = vec
    sv = np.stack([r for r in rows if r is not None])
    return np.asarray(sv @ q / np.maximum(np.linalg.norm(sv, axis=1) * np.linalg.norm(q), 1e-9))


def _subject_of(text: str, term: list[str], does: bool, kind: str = "prose",
                titled: bool = False, owners: set[str] | None = None) -> list[str] | None:
    """Return the content words of the subject text defines, when it defines the asked term.

    A definition ("A topic is ...", "Executor: the object that ...") names the term's head and
    at least half its words in its subject ("Callback group: ..." does not define "a common
    beginner mistake with callbacks"); asked what X does, a sentence whose first words name X
    ("tf2 organizes frames ...") answers too. In the section titled by the term (`titled`,
    "Services" for "a ROS 2 service") its head word is enough: "A service implements ...".
    Elsewhere the `owners` the term names (evidence.term_owners) are named too: "The step size
    is ..." does not define "MuJoCo's default step size". None when text defines nothing asked.
    """
    if not term:
        return None

    def names(subject: list[str]) -> bool:
        # "A topic" names "a ROS 2 topic"; "Callback group" does not name "mistake with callbacks"
        return term[-1] in subject and (titled or (
            (2 * len(set(term) & set(subject)) >= len(set(term)) or set(subject) <= set(term))
            and (owners or set()) <= set(subject)))

    m = _DEFINES.match(text)
    if m is not None and m.group(0).rstrip().endswith(":") and kind != "item":
        m = None  # "Term: definition" is a glossary entry; "X does this:" leads into a list
    if m is not None and names(content_words(m.group("term"))):
        return content_words(m.group("term"))
    if does:
        first = content_words(" ".join(text.split()[:4]))
        if names(first):
            return first
    return None


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


def _frames(chunk: ChunkDict) -> bool:
    """Whether a chunk is in a section that frames or cites (references, further reading)."""
    path = chunk["metadata"].get("heading_path") or []
    return is_listing(path) or any(_CITES.match(h) for h in path)


def _candidates(question: str, evidence: list[ChunkDict]) -> list[_Cand]:
    """The units of the evidence that may answer: never framing-only, code only when asked."""
    allowed = set(LEADING_KINDS)
    allowed |= {"code"} if wants_code(question) else set()
    allowed |= {"caption"} if wants_caption(question) else set()
    out: list[_Cand] = []
    for chunk in sorted(evidence, key=lambda c: -c["score"]):
        if _frames(chunk):
            continue
        units = answer_units(chunk["text"])
        for n, u in enumerate(units):
            if u.kind not in allowed:
                continue
            if not own_words(u.text, question):
                continue  # "Let's look at each of these in turn.": nothing of its own
            prev = next((units[k].text for k in range(n - 1, -1, -1)
                         if units[k].end <= u.start), "")
            out.append(_Cand(chunk, u, prev, n))
    return out


def _one_per_side(cands: list[_Cand], scores: list[float],
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
            + (0.2 if _DEFINES.match(cands[i].unit.text) else 0.0)
            + (0.3 if i in glossed and glossary_names(glossed[i], phrase) else 0.0)))
        pick = next((i for i in ranked if i not in chosen), None)
        if pick is not None:
            chosen.append(pick)
    return chosen


def _glossary_entry(cand: _Cand, asked: list[str]) -> list[str] | None:
    """Return the term of the glossary entry a candidate is, when it is one for an asked term."""
    if not asked:
        return None
    entry = glossary_term(cand.chunk["text"][cand.unit.start:cand.unit.end])
    if entry is None or not any(glossary_names(entry, term) for term in asked):
        return None
    return entry


def _naming(subject: list[str], term: list[str]) -> tuple[int, int]:
    """How exactly a definition's subject names the asked term: words shared, words extra."""
    return len(set(term) & set(subject)), -len(set(subject) - set(term))


def _names_better(defines: dict[int, list[str]], lead: int | None, term: list[str]) -> bool:
    """Whether another definition names the asked term more exactly than the lead's does."""
    if lead is None or lead not in defines:
        return True
    own = _naming(defines[lead], term)
    return any(_naming(subject, term) > own for subject in defines.values())


def _supports(second: _Cand, lead: _Cand, question: str) -> bool:
    """Whether a second unit supports the lead's answer: next to it, or sharing its facts.

    Not when it says the lead again: the text's own "The law of the excluded middle states
    that ..." after the glossary's "Law of the excluded middle: ... states that ...".
    """
    said = set(content_words(lead.unit.text))
    words = set(content_words(second.unit.text))
    if words and len(words & said) >= REPEATS * len(words):
        return False
    if second.chunk["chunk_id"] == lead.chunk["chunk_id"]:
        if second.unit.start < lead.unit.end and lead.unit.start < second.unit.end:
            return False  # overlapping units (a list and its own items) say it twice
        if abs(second.order - lead.order) <= 1:
            return True
    return bool(own_words(second.unit.text, question) & own_words(lead.unit.text, question))


def extractive_draft(question: str, evidence: list[ChunkDict], embeddings: Any,
                     max_sentences: int = 2, weigh: Weigher = uniform,
                     query_vector: list[float] | None = None,
                     stored: dict[str, SentenceVectors] | None = None,
                     anchor: tuple[tuple[str, int, int], list[Any]] | None = None) -> Draft:
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
    cands = _candidates(question, evidence)
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
    entries = {i: e for i, e in ((i, _glossary_entry(c, asked)) for i, c in enumerate(cands))
               if e is not None}
    keep += [i for i in entries if i not in keep]
    if lead is not None:
        if lead not in keep:
            keep[-1] = lead
        lead = keep.index(lead)
    cands = [cands[i] for i in keep]
    lexical = [lexical[i] for i in keep]
    glossed = {n: entries[i] for n, i in enumerate(keep) if i in entries}
    cos = _cosines(question, cands, embeddings, query_vector, stored or {})
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
        subject = _subject_of(text, asked_term, does, c.unit.kind, bool(c.chunk.get("titled")),
                              owners)
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
    elif defines and (lead not in defines or _names_better(defines, lead, asked_term)):
        # "What is a topic?": the book's own definition leads, ahead of the reader's span
        # the definition whose subject names most of the asked term: "Moravec's paradox is
        # ...", not "The paradox is ..."; "ROS 2, the second generation ..., is ...", not "A
        # running ROS 2 system is ..." even when the reader's span is in the latter
        chosen = [max(defines, key=lambda i: (*_naming(defines[i], asked_term), scores[i]))]
    elif examples and lead not in examples:
        # "Give me an example": a unit that gives one leads, ahead of a definition
        chosen = [max(examples, key=lambda i: scores[i])]
    else:
        chosen = [order[0] if lead is None else lead]
    first = chosen[0]
    following = _announced_items(cands[first], question) if sides is None else None
    if following is not None:
        lead_unit, items = following
        return _draft([(cands[first].chunk, lead_unit), *((cands[first].chunk, u) for u in items)],
                      anchor)
    block = _block_after(cands[first]) if procedure and sides is None else None
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
                and _supports(cands[i], cands[first], question):
            chosen.append(i)
    # the lead stays first; a supporting unit follows in reading order
    rank = {c["chunk_id"]: r for r, c in enumerate(sorted(evidence, key=lambda c: -c["score"]))}
    chosen = chosen[:1] + sorted(chosen[1:], key=lambda i: (rank[cands[i].chunk["chunk_id"]],
                                                            cands[i].unit.start))
    units = [(cands[i].chunk, cands[i].unit) for i in chosen]
    before = _antecedent(cands[first])
    if before is not None:
        # "It is the successor to two earlier projects ...": the sentence naming "it" first
        units = [(cands[first].chunk, before), *(
            (c, u) for c, u in units
            if not (c["chunk_id"] == cands[first].chunk["chunk_id"] and u.start == before.start))]
    return _draft(units, anchor)


def _block_after(lead: _Cand) -> Unit | None:
    """Return the block a prose lead leads to: the first code block just after it, if any.

    Only in the lead's own chunk, at most `BLOCK_REACH` units on, and only when the lead holds
    no code of its own.
    """
    if lead.unit.kind in ("block", "code"):
        return None
    after = [u for u in answer_units(lead.chunk["text"])
             if u.start >= lead.unit.end and u.kind not in ("lead", "tail", "code")]
    for u in after[:BLOCK_REACH]:
        if u.kind == "block":
            return u
    return None


_REFERS_BACK = re.compile(r"^(?:it|its|this|these|those|they|their|he|his|she|her)\b", re.I)


def _antecedent(lead: _Cand) -> Unit | None:
    """Return the sentence just before a lead that opens by pointing back ("It", "This", "He").

    Only the sentence right before it in the same paragraph, where "it" is named, or the code
    block right before it ("This is useful for fixing typos ..." after `git commit --amend`).
    """
    if lead.unit.kind != "prose" or not _REFERS_BACK.match(lead.unit.text):
        return None
    text = lead.chunk["text"]
    before = [u for u in answer_units(text) if u.kind in ("prose", "block", "tail")
              and u.end <= lead.unit.start]
    if not before:
        return None
    last = max(before, key=lambda u: (u.end, u.end - u.start))
    if last.kind == "tail":  # the clause after a code block: "this" points at the whole block
        last = max((u for u in before if u.kind == "block" and u.end == last.end),
                   key=lambda u: u.end - u.start, default=last)
    gap = text[last.end:lead.unit.start]
    if last.kind == "block":  # a block ends its paragraph: "This is useful for ..." follows it
        return last if not gap.strip(" \t\n`~") else None
    return last if last.kind == "prose" and not gap.strip() and "\n\n" not in gap else None


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


MAX_ANNOUNCED = 6
"""The most items an announcing lead ("... describes four modes ...") is followed by."""


def _announced_items(lead: _Cand, question: str) -> tuple[Unit, list[Unit]] | None:
    """Return the lead and the units that enumerate what it announces, when it announces some.

    "ISO/TS 15066 describes four modes of collaborative operation." answers "Which modes ...?"
    only with the four that follow it: the list it leads in, the next unit that names all four,
    or the next four units. None when the lead announces nothing or names the items itself.
    """
    ann = announced_count(lead.unit.text, question)
    if ann is None or ann[0] > MAX_ANNOUNCED or enumerates(lead.unit, ann):
        return None
    units = [u for u in answer_units(lead.chunk["text"]) if u.kind in LEADING_KINDS]
    led = [u for u in units if u.kind == "list" and u.start <= lead.unit.start < u.end]
    if led:
        return led[0], []
    after = [u for u in units if u.start >= lead.unit.end and u.kind != "list"]
    named = next((u for u in after[:2] if enumerates(u, ann)), None)
    if named is not None:
        return lead.unit, [named]
    if len(after) >= ann[0]:
        return lead.unit, after[:ann[0]]
    return None


@timed
def generate(state: State, runtime: Runtime[RunContext], *, store: Store, embeddings: Embedder,
             chat: ChatClient | None, profiles: ProfileSource) -> dict[str, Any]:
    """Write the draft with the configured generator; a failure is recorded, not raised."""
    tun = runtime.context
    question = question_of(state)
    evidence = state.get("evidence") or []
    if tun.generator == "chat":
        # a reading list or a references section is quoted to nobody: the model never sees it
        # ("The Analects came from the Self-published, IUScholarWorks collection.")
        teaching = [c for c in evidence if not _frames(c)] or evidence
        draft, error, attempts = chat_draft(question, teaching, chat,
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
        top = sorted(evidence, key=lambda c: -c["score"])
        try:
            stored = store.sentence_vectors([c["chunk_id"] for c in top])
        except Exception as exc:  # noqa: BLE001 - the sentences are embedded here instead
            log.warning("stored sentence vectors unavailable (%s)", type(exc).__name__)
    draft = extractive_draft(question, evidence, embeddings, weigh=weigh,
                             query_vector=state.get("query_vector"), stored=stored,
                             anchor=answer_anchor(state.get("answerability"), evidence))
    return {"draft": draft, "generation_error": None, "verdicts": [make_verdict("generate")]}
