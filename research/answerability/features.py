"""Answerability features: does the retrieved evidence actually answer the question?

Pure functions, no I/O. The inputs are the question, the texts of the top-3 evidence chunks (best
first), the collection's `TermStats` (document frequencies and the words it uses as written) and,
optionally, the extractive draft (its sentences and the cosine between the question and its first
sentence). Terms are `textbound.text.content_words`, the same terms the score gate's coverage uses.
Term weights are IDF scaled to [0, 1] (1 = the collection never uses the term), so that they are
comparable across collections.

The idea: a SQuAD 2.0 near-miss question is written against the right paragraph and shares most of
its words. What gives it away is the one thing the evidence lacks: a rare question term missing
from the sentence that matches the rest of the question, a name or number the evidence never
states, a negation, or an answer type (a year for "when", a number for "how many") that the
matching sentences do not contain.

Cost: about 1.3 ms a question (pure Python over three chunks). `draft_cos` is free inside the
graph (textbound.answer.compose already computes the cosine of every candidate sentence).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from textbound.answer.evidence import unknown_names
from textbound.documents.store import TermStats
from textbound.text import (
    capitalised_words,
    content_words,
    sentence_spans,
    surface_words,
    term_set,
    words,
)

__all__ = [
    "FEATURE_NAMES",
    "FINAL_MODEL",
    "LinearModel",
    "answerability_features",
    "answerability_score",
    "make_stats",
    "nidf",
]

FEATURE_NAMES: tuple[str, ...] = (
    "cov1",  # IDF coverage of the question terms by the best sentence
    "cov2",  # ... by the best two-sentence window
    "miss_max",  # largest nidf of a question term missing from the best window
    "miss_sum",  # nidf sum of the question terms missing from the best window
    "miss_top3",  # nidf sum of the question terms missing from all top-3 chunks
    "miss_top1",  # nidf sum of the question terms missing from the top chunk
    "oov_sum",  # nidf sum of the question terms the collection never uses (df 0)
    "oov_any",  # 1 when some question term has df 0
    "cap_miss",  # capitalised question words (not sentence-initial) absent from the top-3
    "num_miss",  # numbers in the question absent from the top-3
    "type_miss",  # the wanted answer type (date, number, name, place) is not in the best windows
    "wants_type",  # the question asks for a typed answer
    "neg_mismatch",  # the question has a negation the best window lacks
    "n_terms",  # log(1 + number of question terms)
    "in_window_else",  # nidf sum of terms missing from the best window but present in the top-3
    "draft_cos",  # cosine(question, first extractive answer sentence)
    "q_neg",  # the question contains a negation (not, never, no, n't, ...)
    "cap_oov",  # capitalised question words the collection never uses ("Windows" in a ROS book)
    "word_oov",  # nidf sum of question words whose exact form the collection never uses
    "draft_cov",  # IDF coverage of the question terms by the extractive answer sentences
    "draft_type_miss",  # the wanted answer type is not in the extractive answer sentences
    "draft_novel",  # share of the answer sentences' terms the question lacks (not in the model)
)
"""The feature names, in the order the fit uses them (the coordinate search depends on it)."""

_NEG = re.compile(r"\b(?:not|no|never|none|nor|without|except|cannot|neither)\b|n't\b", re.I)
_NUM = re.compile(r"\b\d+(?:[.,]\d+)*\b")
_YEAR = re.compile(r"\b(?:1\d{3}|20\d\d)s?\b")
_DATE_WORD = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|"
                        r"October|November|December|century|centuries|decade|BC|AD|BCE)\b", re.I)
_NUM_WORD = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                       r"twenty|thirty|forty|fifty|hundred|thousand|million|billion|half|dozen|"
                       r"percent|several)\b", re.I)
# The measured version counted a pronoun "I" that does not start a sentence as a name (unlike
# capitalised_words); kept so that the numbers in README.md reproduce exactly.
_PRONOUN_I = re.compile(r"[^\s.!?:;\"'(\[*#>`-]\s*\bI(?:['\u2019][sS])?(?![\w'\u2019])")
_WANTS = (
    ("number", re.compile(
        r"\bhow (many|much|long|far|fast|big|large|old|often|tall|heavy|wide|high|deep|hot|cold)"
        r"\b|\bwhat (percentage|percent|number|fraction|proportion|amount|size|population)\b")),
    ("date", re.compile(
        r"^\s*when\b|\bwhen (did|was|were|is|does|do|had|has|will)\b|"
        r"\b(what|which) (year|years|date|month|day|century|decade|time period|era)\b|"
        r"\bin what (year|century|decade)\b")),
    ("name", re.compile(r"^\s*(who|whom|whose)\b|\b(who|whom|whose) (is|was|were|are|did|does)\b")),
    ("place", re.compile(
        r"^\s*where\b|\bwhere (is|was|were|are|did|does|do)\b|"
        r"\bin what (city|country|state|region|place)\b|"
        r"\bwhat (city|country|state|region|place)\b")),
)


def nidf(stats: TermStats, term: str) -> float:
    """Return the term's IDF scaled to [0, 1]: 1 when the collection never uses it."""
    top = math.log((stats.n_chunks + 1) / 0.5)
    return max(0.0, stats.idf(term)) / top if top > 0 else 0.0


def make_stats(df: Mapping[str, int], n_chunks: int, texts: Iterable[str] = ()) -> TermStats:
    """Build a TermStats from saved document frequencies and the collection's texts.

    The texts give the words the collection uses as written (for `cap_oov` and `word_oov`); the
    store builds the same sets from its chunk payloads in `VectorStore.term_stats`.
    """
    seen: set[str] = set()
    for text in texts:
        seen.update(surface_words(text, lower=False))
    return TermStats(n_chunks, dict(df), frozenset(seen), frozenset(w.lower() for w in seen))


def wanted_type(question: str) -> str | None:
    """Return the answer type a question asks for: number, date, name, place, or None."""
    q = " ".join(question.lower().split())
    for kind, pattern in _WANTS:
        if pattern.search(q):
            return kind
    return None


def _has_type(kind: str, text: str, q_words: set[str]) -> bool:
    """Whether text holds a token of the wanted type that the question itself does not."""
    if kind == "number":
        found = {m.group(0) for m in _NUM.finditer(text)}
        found |= {m.group(0).lower() for m in _NUM_WORD.finditer(text)}
    elif kind == "date":
        found = {m.group(0) for m in _YEAR.finditer(text)}
        found |= {m.group(0).lower() for m in _DATE_WORD.finditer(text)}
    else:  # a name or a place: a capitalised word
        found = {w.lower() for w in capitalised_words(text)}
        if _PRONOUN_I.search(text):
            found.add("i")
    return any(t.lower() not in q_words for t in found)


def _weighted(terms: Iterable[str], weight: Mapping[str, float]) -> float:
    """Sum the weights of terms exactly (independent of set order, so runs are reproducible)."""
    return math.fsum(weight[t] for t in terms)


def answerability_features(
    question: str,
    chunk_texts: Sequence[str],
    stats: TermStats,
    *,
    draft_cosine: float | None = None,
    draft: Sequence[str] = (),
) -> dict[str, float]:
    """Return FEATURE_NAMES -> value for one question and its evidence (top-3 chunks used).

    Args:
        question: The question as asked.
        chunk_texts: The retrieved chunk texts, best first.
        stats: The collection's term statistics; without `words`, cap_oov and word_oov are 0.
        draft_cosine: Cosine between the question and the first extractive answer sentence.
        draft: The extractive answer's sentences.
    """
    texts = list(chunk_texts[:3])
    qterms = set(content_words(question))
    weight = {t: nidf(stats, t) for t in qterms}
    total = _weighted(qterms, weight) or 1.0
    q_words = set(words(question))

    # candidate windows: every sentence, and every sentence with its predecessor
    best1: tuple[float, frozenset[str], str] = (-1.0, frozenset(), "")
    best2: tuple[float, frozenset[str], str] = (-1.0, frozenset(), "")
    for text in texts:
        prev_terms: frozenset[str] = frozenset()
        prev_text = ""
        for s, e in sentence_spans(text):
            sentence = text[s:e]
            terms = term_set(sentence)
            c1 = _weighted(qterms & terms, weight) / total
            if c1 > best1[0]:
                best1 = (c1, terms, sentence)
            both = terms | prev_terms
            c2 = _weighted(qterms & both, weight) / total
            if c2 > best2[0]:
                best2 = (c2, both, prev_text + " " + sentence)
            prev_terms, prev_text = terms, sentence

    missing = qterms - best2[1]
    all_terms = frozenset().union(*(term_set(t) for t in texts))
    top1_terms = term_set(texts[0]) if texts else frozenset()
    oov = [t for t in qterms if stats.df.get(t, 0) == 0]
    evidence = "\n".join(texts)
    evidence_words = surface_words(evidence)
    q_caps = {w.lower() for w in capitalised_words(question)}
    kind = wanted_type(question)
    type_miss = 0.0
    if kind is not None and not (_has_type(kind, best1[2], q_words)
                                 or _has_type(kind, best2[2], q_words)):
        type_miss = 1.0
    q_neg = bool(_NEG.search(question))
    word_oov = 0.0
    if stats.words:
        word_oov = math.fsum(nidf(stats, t) for w in surface_words(question)
                             if w not in stats.words_lower for t in content_words(w))
    draft_text = " ".join(draft)
    draft_terms = term_set(draft_text) if draft_text else frozenset()
    return {
        "cov1": max(best1[0], 0.0),
        "cov2": max(best2[0], 0.0),
        "miss_max": max((weight[t] for t in missing), default=0.0),
        "miss_sum": _weighted(missing, weight),
        "miss_top3": _weighted(qterms - all_terms, weight),
        "miss_top1": _weighted(qterms - top1_terms, weight),
        "oov_sum": _weighted(oov, weight),
        "oov_any": 1.0 if oov else 0.0,
        "cap_miss": float(sum(1 for c in q_caps if c not in evidence_words)),
        "num_miss": float(sum(1 for m in _NUM.finditer(question)
                              if m.group(0) not in evidence.lower())),
        "type_miss": type_miss,
        "wants_type": 1.0 if kind else 0.0,
        "neg_mismatch": 1.0 if q_neg and not _NEG.search(best2[2]) else 0.0,
        "n_terms": math.log1p(len(qterms)),
        "in_window_else": _weighted(missing & all_terms, weight),
        "draft_cos": float(draft_cosine) if draft_cosine is not None else 0.0,
        "q_neg": 1.0 if q_neg else 0.0,
        "cap_oov": float(len(unknown_names(question, stats))),
        "word_oov": word_oov,
        "draft_cov": _weighted(qterms & draft_terms, weight) / total if qterms else 1.0,
        "draft_type_miss": 1.0 if kind is not None and not _has_type(kind, draft_text, q_words)
        else 0.0,
        "draft_novel": len(draft_terms - qterms) / len(draft_terms) if draft_terms else 0.0,
    }


@dataclass(frozen=True)
class LinearModel:
    """A logistic answerability score: answer iff not vetoed and bias + w.x >= threshold."""

    bias: float
    weights: dict[str, float]
    threshold: float
    veto: str | None = "cap_oov"
    """A feature that refuses the question whenever it is >= 1, whatever the score."""
    notes: dict[str, str] = field(default_factory=dict)

    def logit(self, features: Mapping[str, float]) -> float:
        """Return the model's logit, or -inf when the veto feature fires."""
        if self.veto and features.get(self.veto, 0.0) >= 1:
            return -math.inf
        return self.bias + sum(w * features[k] for k, w in self.weights.items())

    def answers(self, features: Mapping[str, float]) -> bool:
        """Whether the model lets the question through (the rest of the graph still decides)."""
        return self.logit(features) >= self.threshold


FINAL_MODEL = LinearModel(
    bias=-5.841758793011326,
    weights={
        "top1": 5.86689176084987,  # the score gate's feature: the best chunk's raw cosine
        "cov2": 1.6799204724771275,
        "miss_sum": -0.3392908948045929,
        "cap_miss": -0.7359808044899375,
        "num_miss": -5.017935717722807,
        "type_miss": -0.5186056435888533,
        "wants_type": -0.3221785732800544,
        "neg_mismatch": -3.6030687451623216,
        "n_terms": -0.056077509642035124,
        "in_window_else": -0.17856583502088352,
        "draft_cos": 5.324415987378701,
        "q_neg": -1.879818712787122,
        "word_oov": -0.5735871865059041,
        "draft_type_miss": -0.002334453990459482,
    },
    threshold=-0.7083931339686296,
    veto="cap_oov",
    notes={"fitted": "2026-11-22, pooled 70% part of SQuAD 2.0 dev, ClapNQ dev and the textbook "
                     "questions; see README.md. Features not listed have weight 0."},
)
"""The searched model of the README (sign-constrained logistic fit, then coordinate search)."""


def answerability_score(features: Mapping[str, float], model: LinearModel = FINAL_MODEL) -> float:
    """Return the model's logit for one question's features (they must include `top1`)."""
    return model.logit(features)
