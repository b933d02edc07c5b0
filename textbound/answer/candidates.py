"""The evidence's answer units a draft may quote, and how a unit is read against the question.

A candidate is one answer unit (textbound/text/units.py) of an evidence chunk that may lead or
support an extractive answer; this module finds them, scores their cosine with the question, and
recognises the ones that define the asked term (a definition's subject, a glossary entry).
textbound/answer/compose.py picks the answer from them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textbound.answer.evidence import glossary_names, glossary_term, is_listing
from textbound.documents.store import SentenceVectors
from textbound.shapes import ChunkDict
from textbound.text import content_words
from textbound.text.framing import own_words
from textbound.text.question import AUXILIARIES, WH_WORDS, prints, wants_code
from textbound.text.units import LEADING_KINDS, Unit, chunk_units

__all__ = ["DEFINES", "Candidate", "asks", "candidates", "cosines", "defined_subject", "frames",
           "glossary_entry", "introduced", "naming", "quotes", "row_answers", "row_cells"]

# sections that list or cite rather than teach: quoted as evidence, never an answer; a course's
# "Notes", "Questions", "Exercises", "Assessment" or "Sources" teach ("homework is due every
# Friday before noon") and may answer
_CITES = re.compile(
    r"^\W*(?:references|bibliography|works cited|further reading|endnotes|citations|credits)\W*$",
    re.I)
_ASKING = frozenset({"prose", "item", "row"})
"""Kinds of unit that may be a question the book asks (an FAQ's, a rhetorical one): never a
candidate; the unit after one reads it as its own (compose.py)."""
_ASKS = re.compile(r"^\W*(?:\d+(?:\.\d+)*\.?[;:]?\s+)?(?:(?:or|and|so|but)\s+)?(?:"
                   + "|".join([*WH_WORDS, *sorted(AUXILIARIES)]) + r")\b[^?]*\?\W*$", re.I)
"""A question: opened by a wh-word or an auxiliary (after an FAQ's number, or "Or"), ended by
its question mark. "The capture point ... answers a practical question: where must the robot
step?" states a fact, and stays a candidate."""


def asks(text: str) -> bool:
    """Whether a unit is a question the book asks ("Can you write my suppression for me?")."""
    return bool(_ASKS.match(text.strip()))
DEFINES = re.compile(r"^\W*(?P<term>(?:an?|the)?\s*[\w\s'’-]{1,50}?)"
                     r"(?:,\s+(?:an?|the)\s+[^,.;:()]{3,80},)?"  # "ROS 2, the second ..., is"
                     r"(?:\s+(?:(?:is|are)\s+"
                     r"(?!(?:related|similar|connected|linked|important|also|not|often|closely|named|called)\b)|"
                     r"refers to\s|means\s|states\s|holds\s)|\s*:\s)", re.I)
"""A definition's form: "X is ...", "X, the ..., is ...", "X states that ...", or a glossary's
"X: ..."."""


@dataclass(frozen=True)
class Candidate:
    """A candidate answer unit: where it is, what it shows, and the text before it."""

    chunk: ChunkDict
    unit: Unit
    prev: str
    order: int  # the unit's index among its chunk's units


def cosines(question: str, cands: list[Candidate], embeddings: Any,
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


def defined_subject(text: str, term: list[str], does: bool, kind: str = "prose"
                    ) -> list[str] | None:
    """Return the content words of the subject text defines, when it defines the asked term.

    A definition ("A topic is ...", "Executor: the object that ...") names the term's head and
    at least half its words in its subject ("Callback group: ..." does not define "a common
    beginner mistake with callbacks"); asked what X does, a sentence whose first words name X
    ("tf2 organizes frames ...") answers too. A definition's subject is the term by its head
    (`_headed`). None when text defines nothing asked.
    """
    if not term:
        return None

    def names(subject: list[str]) -> bool:
        # "A topic" names "a ROS 2 topic"; "Callback group" does not name "mistake with callbacks"
        return term[-1] in subject and (
            2 * len(set(term) & set(subject)) >= len(set(term)) or set(subject) <= set(term))

    m = DEFINES.match(text)
    if m is not None and m.group(0).rstrip().endswith(":") and kind != "item":
        m = None  # "Term: definition" is a glossary entry; "X does this:" leads into a list
    subject = content_words(m.group("term")) if m is not None else []
    if m is not None and names(subject) and _headed(m.group("term"), subject, term):
        return subject
    if does:
        first = content_words(" ".join(text.split()[:4]))
        if names(first):
            return first
    return None


_MODIFIED = re.compile(r"\s(?:in|of|on|for|with|at|from|to|by|that|which|who|whose|where)\s",
                       re.I)


def _headed(subject: str, words: list[str], term: list[str]) -> bool:
    """Whether a definition's subject is the asked term by its head, or names all its words.

    The head is the subject's last word before a phrase that modifies it: "The first schema in
    the search path that exists is ..." is said of a schema, not of the default search path,
    though it shares three of that term's four words; "The law of the excluded middle is ..."
    names every word of the term and defines it. `words`: the subject's content words.
    """
    head = content_words(_MODIFIED.split(" " + subject + " ", maxsplit=1)[0])
    return set(term) <= set(words) or (bool(head) and head[-1] == term[-1])


def frames(chunk: ChunkDict) -> bool:
    """Whether a chunk is in a section that frames or cites (references, further reading)."""
    path = chunk["metadata"].get("heading_path") or []
    return is_listing(path) or any(_CITES.match(h) for h in path)


def candidates(question: str, evidence: list[ChunkDict], *, code: bool | None = None,
               literals: Sequence[str] = ()) -> list[Candidate]:
    """The units of the evidence that may answer: never framing-only, code only when asked.

    Never a caption: a figure's or table's title names what it shows and answers nothing (when
    a question naming a figure or table could be led by one, switching that off changed no
    answer of the dev pool, where 19 questions name one, SQuAD 2.0 or ClapNQ). `code`: whether
    the question asks for code or output (the question analysis's reading; read from the
    question when not given). `literals`: the
    question's literal tokens ("HEAD~9", "--depth"): a code block printing one of them as it is
    may answer too ("What does HEAD~9 mean?" and "$ git show HEAD~9  # nine generations
    back"), though it never supports another unit unless code is asked for; one with a lead-in
    answers with it, as the block it is part of.
    """
    asks_code = wants_code(question) if code is None else code
    allowed = set(LEADING_KINDS)
    allowed |= {"code"} if asks_code else set()
    out: list[Candidate] = []
    for chunk in sorted(evidence, key=lambda c: -c["score"]):
        if frames(chunk):
            continue
        units = chunk_units(chunk)
        blocks = [b for b in units if b.kind == "block"]
        for n, u in enumerate(units):
            if u.kind not in allowed and not (
                    u.kind == "code" and quotes(u.text, list(literals))
                    and not any(b.start <= u.start and u.end <= b.end for b in blocks)):
                continue  # a literal's code block with a lead-in is a candidate as that block
            if not own_words(u.text, question, values=True):
                continue  # "Let's look at each of these in turn.": nothing of its own
            if u.kind in _ASKING and asks(u.text):
                continue  # the book's own question (an FAQ's): what follows it answers
            prev = next((units[k].text for k in range(n - 1, -1, -1)
                         if units[k].end <= u.start), "")
            out.append(Candidate(chunk, u, prev, n))
    return out


def glossary_entry(cand: Candidate, asked: list[str]) -> list[str] | None:
    """Return the term of the glossary entry a candidate is, when it is one for an asked term."""
    if not asked:
        return None
    entry = glossary_term(cand.chunk["text"][cand.unit.start:cand.unit.end])
    if entry is None or not any(glossary_names(entry, term) for term in asked):
        return None
    return entry


def naming(subject: list[str], term: list[str]) -> tuple[int, int]:
    """How exactly a definition's subject names the asked term: words shared, words extra."""
    return len(set(term) & set(subject)), -len(set(subject) - set(term))


def row_cells(text: str) -> list[tuple[str, str]]:
    """Return a table row unit's (header, cell) pairs, read back from its text.

    textbound/text/units.py writes a row with its header as "Name: integer; Range: -2147483648
    to +2147483647."; a row of a table without header cells gives none.
    """
    pairs = []
    for part in text.rstrip(".").split("; "):
        head, sep, cell = part.partition(": ")
        if not sep:
            return []  # a cell without its header: the table had no header row
        pairs.append((head.strip(), cell.strip()))
    return pairs


def row_answers(text: str, terms: set[str]) -> bool:
    """Whether a table row names one question word in a header cell and one in a cell."""
    cells = row_cells(text)
    if not cells:
        return False
    heads = set(content_words(" ".join(h for h, _ in cells)))
    values = set(content_words(" ".join(c for _, c in cells)))
    return bool(terms & heads) and bool(terms & values)


def keyed_by(unit: Unit, literals: list[str]) -> bool:
    """Whether a table row's first cell is one of the question's literals, as it is printed.

    "What nice value does PRIORITY_HIGH map to?" and "Constant: PRIORITY_HIGH; Description:
    ... a nice value of -14 ...": the table keeps that row for it, though the rows beside it
    name PRIORITY_HIGH in their descriptions too.
    """
    cells = row_cells(unit.text) if unit.kind == "row" and literals else []
    return bool(cells) and cells[0][1].strip("`'\" ") in literals


def quotes(text: str, literals: list[str]) -> float:
    """The share of a question's literals the text prints as they are, each standing alone.

    "^P" stands in "Key: ^P; Action: ..."; "--staged" does not in "--staged-only"
    (the literals are textbound/text/question.literals). A literal with a sigil counts for the
    definition entry of its bare form ("%M" for "M: Maximum resident set size ...").
    """
    if not literals:
        return 0.0
    found = sum(prints(text, t) or _entry_for(text, t) for t in literals)
    return found / len(literals)


def introduced(cand: Candidate, literals: list[str]) -> float:
    """The share of a question's literals the unit's passage names before it, as its subject.

    "For regular files, each read will process 512 KiB of data." follows "The fs.readFile()
    method asynchronously reads ..." in its passage (or a heading names it): the unit is about
    fs.readFile though it does not print it. A sibling row or item does not count: "^P" in
    another row of a key table is no subject of the row beside it.
    """
    if not literals:
        return 0.0
    before = [u.text for u in chunk_units(cand.chunk)
              if u.kind in ("prose", "lead") and u.end <= cand.unit.start]
    return quotes("\n".join([*(cand.chunk["metadata"].get("heading_path") or []), *before]),
                  literals)


_SIGIL = "%$@\\"
"""What a literal may open with that a list of such things leaves out: GNU time lists "%M" as
the entry "M: Maximum resident set size ...", under "A resource specifier consists of a
percent sign followed by another character"."""


def _entry_for(text: str, literal: str) -> bool:
    """Whether the text is the definition entry of the literal without its sigil.

    "M: Maximum ..." for "%M", its case kept ("m: ..." is another specifier).
    """
    bare = literal[1:] if literal[:1] in _SIGIL else ""
    return bool(bare) and re.match(rf"{re.escape(bare)}:\s", text) is not None
