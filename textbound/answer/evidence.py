"""Evidence features shared by retrieve, score_gate and select_passage (pure, no I/O).

Coverage is IDF-weighted: a question word the collection rarely or never uses ("Windows" in a
robotics book) weighs much more than one on every page ("ROS"), so a passage that matches only
the common words of a question does not look like an answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from textbound.answer.spelling import unknown_words
from textbound.text import (
    capitalised_words,
    compound_names,
    content_words,
    prefix_key,
    sentence_spans,
    term_set,
)
from textbound.text.commands import asked_commands

__all__ = ["coverage", "best_sentence_coverage", "question_terms", "unknown_names", "spelled_out",
           "unknown_commands", "unknown_terms", "known_share", "is_listing",
           "defined_term", "Weigher", "uniform", "compared_terms",
           "compared_sides", "asked_terms", "glossary_entries", "glossary_term", "glossary_names",
           "glossary_defines", "retrieval_features", "adjoins"]

Weigher = Callable[[str], float]


# "what is a topic?" asks for a definition: prefer a sentence of the form "A topic is ..."
_WHAT_IS = re.compile(
    r"^\s*(?:(?:what|who)\s+(?:is|are)|what'?s|(?:can|could) you\s+(?:explain|define)|explain|"
    r"define|what is meant by)\s+(?!(?:an?\s+|some\s+)?examples?\b)(?:an?\s+|the\s+)?"
    r"(.{1,60}?)\s*\??\s*$|"
    # "what does tf2 do", "what does an executor do in ROS 2", "what does X mean"
    r"^\s*what\s+(?:does|do)\s+(?:an?\s+|the\s+)?(.{1,60}?)\s+(?:do|mean)"
    r"(?:\s+(?:in|for|on|with)\s+.{1,40}?)?\s*\??\s*$|"
    # "what does Mill mean by higher pleasures": the term is what follows "by"
    r"^\s*what\s+(?:does|do)\s+.{1,40}?\s+mean\s+by\s+(?:an?\s+|the\s+)?(.{1,60}?)\s*\??\s*$",
    re.I)


def defined_term(question: str) -> tuple[list[str], bool]:
    """Return the content words of the term a definition question asks about.

    With it, whether it asks what the term does ("What does a ROS 2 service do?"); ([], False)
    for a question that asks for no definition.
    """
    m = _WHAT_IS.match(question)
    if m is None:
        return [], False
    return content_words(_phrase(m)), bool(m.group(2))


def _phrase(m: re.Match[str]) -> str:
    """The defined term as written, from whichever of _WHAT_IS's forms matched."""
    return m.group(1) or m.group(2) or m.group(3)


# "what is the difference between X and Y", "X vs. Y", "compare X and Y"; after "between" only
# "and" (or "vs") parts the sides: "a joint with a brake and a free joint"
_COMPARE = re.compile(
    r"(?:difference|differences|distinction|differ|compare|comparison|contrast)\w*\s+"
    r"(?:between\s+(?P<a>.+?)\s+(?:and|vs\.?|versus)\s+(?P<b>.+?)|"
    r"(?P<g>.+?)\s+(?:and|from|with|vs\.?|versus)\s+(?P<h>.+?))\s*[?.]?$|"
    r"(?P<c>[\w' -]+?)\s+(?:vs\.?|versus)\s+(?P<d>[\w' -]+?)\s*\??$|"
    r"how (?:is|are|does|do)\s+(?P<e>.+?)\s+differ\w*\s+from\s+(?P<f>.+?)\s*\??$",
    re.I)
# a place or purpose said of both sides: "PUSH and PULL sockets in a message queue", "warm and
# cold starts for a robot controller"
_SHARED = re.compile(r"\s+(?:in|for|from|on|at|within|inside)\s+", re.I)


def compared_sides(question: str) -> tuple[str, str] | None:
    """Return the two sides of a comparison question as written ("homeostasis", "allostasis").

    A complement that closes the question is said of both sides when the first side has none:
    "the difference between PUSH and PULL sockets in a message queue" compares "PUSH" and "PULL
    sockets".
    """
    m = _COMPARE.search(question)
    if m is None:
        return None
    a = m.group("a") or m.group("g") or m.group("c") or m.group("e")
    b = m.group("b") or m.group("h") or m.group("d") or m.group("f")
    if not _SHARED.search(a) and not _COMPLEMENT.search(a):
        own = _SHARED.split(b, maxsplit=1)[0]
        if content_words(own):
            b = own
    return a, b


def compared_terms(question: str) -> tuple[set[str], set[str]] | None:
    """Return the two sides' terms of a comparison question ("difference between X and Y")."""
    sides = compared_sides(question)
    if sides is None:
        return None
    ta, tb = question_terms(sides[0]), question_terms(sides[1])
    return (ta, tb) if ta and tb and ta != tb else None


def asked_terms(question: str) -> list[str]:
    """The terms a question asks the book to define, as written.

    Each side of a comparison ("What's the difference between homeostasis and allostasis?"
    asks for two definitions), or the one term ("Can you explain the law of the excluded
    middle?"); none for other questions.
    """
    sides = compared_sides(question)
    if sides is not None and compared_terms(question) is not None:
        return list(sides)
    m = _WHAT_IS.match(question)
    return [_phrase(m)] if m is not None and content_words(_phrase(m)) else []


# "- **Term**: definition" or "**Term:** definition": the book's own glossary entry for Term
_GLOSSARY = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)(?P<term>[^*_\n:]{1,80}?)"
                       r"(?::(?:\*\*|__)|(?:\*\*|__)[ \t]*:)", re.M)
_COMPLEMENT = re.compile(r"\s+(of|in|for|when|with|on|at|to|by|from|about|during|after|before|"
                         r"between|among|according)\s+", re.I)


def glossary_entries(text: str) -> list[tuple[int, list[str]]]:
    """Return the glossary entries of a passage's raw text: each line's start, its term's words."""
    return [(m.start(), content_words(m.group("term"))) for m in _GLOSSARY.finditer(text)]


def glossary_term(raw: str) -> list[str] | None:
    """Return the words of the term a raw unit defines as a glossary entry, if it is one."""
    m = _GLOSSARY.match(raw)
    return content_words(m.group("term")) if m is not None else None


def glossary_names(entry: list[str], asked: str) -> bool:
    """Whether a glossary entry's term is the asked term.

    All the entry's words are asked, it names the asked term's head (the last word before a
    complement: "law" in "the law of the excluded middle"), a word of its "of" complement if
    it has one, and at least half its words: "Principle of charity" is "the principle of
    charity when reading a text"; "Capital" is not "the capital of France", nor "ROS 2" "a ROS
    2 service".
    """
    parsed = _asked_parts(asked)
    if not entry or parsed is None:
        return False
    want, head, of = parsed
    have = {prefix_key(w) for w in entry}
    return (have <= want and head in have and 2 * len(have) >= len(want)
            and (not of or bool(have & of)))


@lru_cache(maxsize=256)
def _asked_parts(asked: str) -> tuple[frozenset[str], str, frozenset[str]] | None:
    """Return an asked term's stemmed words, its head and its "of" complement's words.

    Parsed once: every glossary entry of every candidate passage is compared with the term.
    """
    words = content_words(asked)
    parts = _COMPLEMENT.split(asked, maxsplit=2)  # [head, preposition, rest, ...]
    head = content_words(parts[0])
    if not words or not head:
        return None
    of: frozenset[str] = frozenset()
    if len(parts) > 2 and parts[1].lower() == "of":  # "capital of France": France's capital
        complement = _COMPLEMENT.split(parts[2], maxsplit=1)[0]
        of = frozenset(prefix_key(w) for w in content_words(complement))
    return frozenset(prefix_key(w) for w in words), prefix_key(head[-1]), of


def glossary_defines(text: str, asked: list[str]) -> bool:
    """Whether a passage's raw text holds a glossary entry for one of the asked terms."""
    return any(glossary_names(words, term) for _, words in glossary_entries(text)
               for term in asked)


def uniform(term: str) -> float:
    """Weigh every term the same (no collection statistics available)."""
    return 1.0


def question_terms(question: str) -> set[str]:
    """Return the question's distinct content words (stemmed)."""
    return set(content_words(question))


_LISTING = re.compile(r"^\W*(?:contents|table of contents|index)\W*$", re.I)


def is_listing(heading_path: Sequence[str]) -> bool:
    """Whether a passage is in a book's contents or index: it lists topics, it says nothing."""
    return any(_LISTING.match(str(h)) for h in heading_path)


_ADJOINING_GAP = 3
"""Characters of white space at most between two neighbouring chunks of one section."""


def adjoins(chunk: Any, other: Any) -> bool:
    """Whether two passages are neighbours in one section of one document.

    A section longer than a chunk is cut into pieces, and the cut often falls between a sentence
    and what it introduces: "... you can check out the commit referenced by a tag:" with its
    command ends one chunk, "The HEAD then refers to ..." opens the next, and the question's words
    may match the second better. `chunk` and `other` are retrieved chunks (their `metadata`
    holds source, section and character offsets); one must end where the other starts.
    """
    a, b = chunk.get("metadata") or {}, other.get("metadata") or {}
    if a.get("source") != b.get("source") or a.get("section") != b.get("section"):
        return False
    try:
        return (0 <= int(a["start"]) - int(b["end"]) <= _ADJOINING_GAP
                or 0 <= int(b["start"]) - int(a["end"]) <= _ADJOINING_GAP)
    except (KeyError, TypeError, ValueError):
        return False  # a passage without offsets (a selection, an old collection)


def known_share(terms: set[str], stats: Any) -> float:
    """Return the IDF-weighted share of the question's words that the collection uses at all.

    "How do I use git worktree to ...?" put to a manual that never says "worktree": the rarest
    word of the question, the one that names what is asked, is nowhere in the book, however
    well "branches checked out" retrieves. 1.0 when every word is used (or nothing is known of
    the collection: a fake store, an empty one); the gate weighs it with a calibrated weight.
    """
    if not terms or stats is None or not getattr(stats, "n_chunks", 0):
        return 1.0
    weights = {t: stats.idf(t) for t in terms}
    total = sum(weights.values())
    known = sum(w for t, w in weights.items() if stats.df.get(t, 0) > 0)
    return known / total if total > 0 else 1.0


def _share(terms: set[str], have: frozenset[str] | set[str], weigh: Weigher) -> float:
    total = sum(weigh(t) for t in terms)
    if total <= 0:
        return 1.0
    return sum(weigh(t) for t in terms & have) / total


def coverage(terms: set[str], text: str, weigh: Weigher = uniform) -> float:
    """Return the (weighted) share of terms occurring in text; 1.0 when there are no terms."""
    if not terms:
        return 1.0
    return _share(terms, term_set(text), weigh)


def best_sentence_coverage(terms: set[str], texts: Sequence[str],
                           weigh: Weigher = uniform) -> float:
    """Return the best (weighted) coverage of terms by one sentence (or it and its predecessor)."""
    if not terms:
        return 1.0
    best = 0.0
    for text in texts:
        prev: frozenset[str] = frozenset()
        for s, e in sentence_spans(text):
            words = term_set(text[s:e])
            best = max(best, _share(terms, words, weigh),
                       0.9 * _share(terms, words | prev, weigh))
            prev = words
    return best


def retrieval_features(terms: set[str], scores: Sequence[float], top_texts: Sequence[str],
                       weigh: Weigher, known: float) -> dict[str, float]:
    """Return the retrieval features a gate calibration weighs (score_gate's figures).

    The top-1 and mean cosine of the retrieved chunks (`scores`), the best coverage of the
    question's `terms` by one of the top passages and by one of their sentences, and the share
    of the question's words the collection knows (`known`, from `known_share`).
    """
    return {
        "top1": round(max(scores), 4),
        "mean": round(sum(scores) / len(scores), 4),
        "coverage": round(max(coverage(terms, t, weigh) for t in top_texts), 4),
        "best_sentence": round(best_sentence_coverage(terms, top_texts, weigh), 4),
        "known": round(known, 4),
    }


def unknown_names(question: str, stats: Any, texts: Sequence[str] = (),
                  names: Sequence[str] | None = None) -> list[str]:
    """Return the capitalised words of the question that the collection never uses.

    A question about "Windows" put to a robotics book that never says it cannot be answered from
    it, however well the rest of the question ("use ROS 2") retrieves. `stats` is the store's
    TermStats; without a word list (a fake store, an old client) nothing is reported. An
    acronym that `texts` (the retrieved passages) spell out is known: a student writes "WWII"
    where the book says "World War II". `names` are the question's capitalised words when they
    were read already (the question's analysis). A name joined to a number by a hyphen
    ("SHA-256", text.compound_names) is known only as the collection prints it: a book that
    says "SHA-1" throughout says nothing of SHA-256.
    """
    if stats is None or not getattr(stats, "words", None):
        return []
    found = [w for w in (capitalised_words(question) if names is None else names)
             if not stats.mentions(w) and not spelled_out(w, texts)]
    printed: frozenset[str] = getattr(stats, "compounds", frozenset())
    return found + sorted(c for c in compound_names(question) if c.lower() not in printed)


def unknown_terms(question: str, stats: Any, texts: Sequence[str] = (),
                  names: Sequence[str] | None = None) -> list[str]:
    """Return what the question names that the collection never says.

    Capitalised names (`unknown_names`), lower-case names (spelling.unknown_words) and commands
    (`unknown_commands`), in that order.
    """
    return (unknown_names(question, stats, texts, names) + unknown_words(question, stats)
            + unknown_commands(question, stats))


def unknown_commands(question: str, stats: Any) -> list[str]:
    """Return the commands the question names that the collection never says.

    "how do I find who changed each line with git blame?" put to a Git manual that never says
    "git blame": the command is the question's subject, whatever else of it retrieves.
    Commands are a command head of the collection's code followed by a word
    (textbound/text/commands.py); a collection without code has no heads and no commands, and
    only a head that takes subcommands in the book's code counts ("time keeps overwriting my
    log" is no command where the book's blocks run "time -v ...").
    """
    heads = getattr(stats, "commands", None)
    if not heads:
        return []
    taking = getattr(stats, "subcommand_heads", None)
    asked = frozenset(h for h in heads if taking is None or h in taking)
    return [f"{h} {w}" for h, w in asked_commands(question, asked) if w.lower() not in heads[h]]


_NAME_RUN = re.compile(
    r"[A-Z][\w'’-]*(?:\s+(?:(?:of|for|and|the|on|in|de|du|von)\s+)*[A-Z][\w'’-]*)*")
_ROMAN = re.compile(r"^[IVX]+$")


def spelled_out(acronym: str, texts: Sequence[str]) -> bool:
    """Whether texts hold a run of capitalised words whose initials spell the acronym.

    "World War II" spells WWII (a Roman numeral counts whole), "Institute for Social Research"
    spells ISR (the small words of a name are skipped), "NVIDIA Isaac Transport for ROS" spells
    NITROS (an all-capitals word may count whole). Only an all-capitals word of two to eight
    letters is an acronym, and a text that merely uses it does not spell it out.
    """
    if not (2 <= len(acronym) <= 8 and acronym.isalpha() and acronym.isupper()):
        return False
    for text in texts:
        for m in _NAME_RUN.finditer(text):
            words = [w.strip("'’-") for w in m.group(0).split() if w[:1].isupper()]
            if len(words) < 2:
                continue
            for i in range(len(words)):
                if words[i] != acronym and _spells(acronym, words[i:]):
                    return True
    return False


def _spells(acronym: str, words: list[str]) -> bool:
    """Whether the next words spell the rest of the acronym by their initials.

    A Roman numeral counts whole; an all-capitals word may count whole or by its initial.
    """
    if not acronym:
        return True
    if not words:
        return False
    word, rest = words[0], words[1:]
    if _ROMAN.match(word):
        options = [word]
    elif word.isalpha() and word.isupper() and len(word) > 1:
        options = [word, word[0]]
    else:
        options = [word[0].upper()]
    return any(acronym.startswith(o) and _spells(acronym[len(o):], rest) for o in options)
