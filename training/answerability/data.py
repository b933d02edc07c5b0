"""Training pairs for the answerability reader: positives with spans, and built negatives.

Almost every training question is answerable, so negatives are made here, deterministically
from a seed. Each kind imitates a way a question can miss the documents:

* ``other``: the question against another passage of its article that holds no gold answer
  (a topical miss, like ClapNQ's unanswerable questions).
* ``removed``: the question against its own passage with every answer-bearing sentence cut out
  (covered topic, missing fact, like a textbook near-miss).
* ``swap``: the question with a name or number it shares with its passage swapped for another
  from the same article, against its own passage (SQuAD 2.0's adversarial style).
* ``negate``: the question with "not" after a passive or progressive auxiliary ("was founded"),
  against its own passage, which says what happened, not what did not (SQuAD 2.0's negation).
* ``real``: human-written unanswerable questions: the 347 of the SQuAD 2.0 train part, and with
  ``files=ALL_FILES`` also DoQA's 1,666 and CondaQA's 478 (`EXTRA_FILES`).

Positives are the question against its whole passage and, for half the questions, against a
window of the answer sentence and up to two neighbours each side (the shape the runtime reads
when a chunk is long). SelQA contributes sentence answers. DoQA's and CondaQA's answerable
questions are positives too, so that neither source is all negatives (a reader could then learn
the source, Stack Exchange prose or a negated passage, instead of whether the answer is there).
DoQA's "article" (what `other` and `swap` draw from) is its domain (cooking, movies, travel);
its held-out slice is drawn by thread, since no domain falls in the 4%.

A slice of articles (by a hash of the title) is held out for model selection; the evaluation
sets in ../shared/data/{squad2,clapnq} are never read here.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from textbound.answer.answerability import sentence_offsets

__all__ = ["Pair", "NEGATIVE_KINDS", "TRAIN_FILES", "EXTRA_FILES", "ALL_FILES", "build_pairs",
           "load_questions", "is_holdout"]

NEGATIVE_KINDS = ("other", "removed", "swap", "negate", "real")
TRAIN_FILES = ("squad11-train.jsonl", "squad11-dev-extra.jsonl", "squad2-train-part.jsonl",
               "selqa-ass-devtest.jsonl")
# more real unanswerable questions (DoQA: Stack Exchange threads, mostly dialogue follow-ups;
# CondaQA: negated Wikipedia statements), with their answerable questions
EXTRA_FILES = ("doqa-devtest.jsonl", "condaqa-devtest.jsonl")
ALL_FILES = TRAIN_FILES + EXTRA_FILES
# files whose `title` is "<domain> / <thread>": held out by thread, not by domain
_SPLIT_BY_TITLE = ("doqa-devtest.jsonl",)
# a name not opening a sentence ("King Edward Point", "University of California"), or a number
_ENTITY = re.compile(r"(?<![.!?] )(?<![.!?]\n)\b(?:[A-Z][a-z][\w'-]*(?:\s+(?:of\s+|the\s+)?"
                     r"[A-Z][\w'-]*)*|\d[\d,]*(?:\.\d+)?\b)")
_NUMBER = re.compile(r"^\d[\d,]*(?:\.\d+)?$")


@dataclass(frozen=True)
class Pair:
    """One training pair; `start`/`end`: the answer's character offsets in `text` (-1: none).

    `span`: whether the answer's offsets are trained (the span head); False for a source whose
    positives teach only that the passage answers (`train.py --mix-no-span`).
    """

    question: str
    text: str
    start: int
    end: int
    kind: str
    title: str
    span: bool = True

    @property
    def answerable(self) -> bool:
        """Whether the pair's passage answers its question."""
        return self.start >= 0


def is_holdout(title: str, share: float = 0.04) -> bool:
    """Whether an article belongs to the held-out slice (stable across runs and machines)."""
    h = int(hashlib.sha1(title.encode("utf-8")).hexdigest()[:8], 16)
    return h / 0xFFFFFFFF < share


def load_questions(folder: Path, limit: int | None = None,
                   files: Iterable[str] = TRAIN_FILES) -> list[dict]:
    """Read the training files' question records (all of them, or a seeded sample of `limit`).

    Each record gets `article` (what `other` and `swap` draw from) and `split` (what decides
    the held-out slice; the article, except in DoQA, where it is the thread).
    """
    rows: list[dict] = []
    for name in files:
        path = folder / name
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: the training data lives in "
                                    "../shared/data/train (see its README)")
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                rec["article"] = rec["title"].split(" / ")[0]
                rec["split"] = rec["title"] if name in _SPLIT_BY_TITLE else rec["article"]
                rows.append(rec)
    if limit is not None:
        rng = random.Random(0)
        rng.shuffle(rows)
        rows = rows[:limit]
    return rows


def _window(text: str, s: int, e: int, rng: random.Random) -> tuple[int, int]:
    """The sentences holding [s, e) plus 0-2 neighbours on each side, as (start, end)."""
    sents = sentence_offsets(text) or [(0, len(text))]
    first = next((i for i, (a, b) in enumerate(sents) if b > s), len(sents) - 1)
    last = next((i for i, (a, b) in enumerate(sents) if b >= e), len(sents) - 1)
    lo = max(0, first - rng.randint(0, 2))
    hi = min(len(sents) - 1, last + rng.randint(0, 2))
    return sents[lo][0], sents[hi][1]


def _contains_any(text: str, answers: Iterable[str]) -> bool:
    low = text.lower()
    return any(a.strip() and a.strip().lower() in low for a in answers)


def _removed(text: str, answers: list[str], rng: random.Random) -> str | None:
    """The passage without the sentences that hold an answer, or None if nothing sound is left."""
    sents = sentence_offsets(text)
    keep = [(a, b) for a, b in sents if not _contains_any(text[a:b], answers)]
    if not keep or len(keep) == len(sents):
        return None
    if rng.random() < 0.5:  # a near window: the neighbours of the cut sentence only
        cut = next(i for i, (a, b) in enumerate(sents) if _contains_any(text[a:b], answers))
        near = [se for se in sents[max(0, cut - 2): cut + 3] if se in keep]
        keep = near or keep
    out = " ".join(text[a:b] for a, b in keep)
    return None if _contains_any(out, answers) else out


def _entities(text: str) -> set[str]:
    return {m.group(0) for m in _ENTITY.finditer(text) if m.start() > 0}


def _swap(question: str, context: str, pool: list[str], rng: random.Random) -> str | None:
    """Swap a name or number the question shares with its passage for another of the article."""
    found = [m for m in _ENTITY.finditer(question)
             if m.start() > 0 and m.group(0) in context]
    if not found:
        return None
    m = rng.choice(found)
    old = m.group(0)
    numeric = bool(_NUMBER.match(old))
    cands = [p for p in pool if p != old and p.lower() not in context.lower()
             and bool(_NUMBER.match(p)) == numeric and (not numeric or len(p) == len(old))]
    if not cands:
        return None
    new = rng.choice(sorted(cands))
    return question[:m.start()] + new + question[m.start() + len(old):]


def _negate(question: str) -> str | None:
    """Insert "not" after a passive auxiliary ("was founded" -> "was not founded")."""
    if re.search(r"\b(not|never|n't)\b", question, re.I):
        return None
    m = re.search(r"\b(is|was|are|were)\s+([a-z]+(?:ed|en|ing))\b", question)
    if not m or m.group(2) in ("used", "called", "named", "known"):
        return None
    return f"{question[:m.end(1)]} not{question[m.end(1):]}"


def build_pairs(rows: list[dict], *, seed: int, holdout: bool,
                negatives: Iterable[str] = NEGATIVE_KINDS,
                rates: dict[str, float] | None = None) -> list[Pair]:
    """Turn question records into pairs: positives plus the chosen kinds of negatives.

    `holdout` picks the held-out articles (True) or the training ones (False). The same rows,
    seed and options always give the same pairs in the same order.
    """
    negatives = set(negatives)
    unknown = negatives - set(NEGATIVE_KINDS)
    if unknown:
        raise ValueError(f"unknown negative kinds {sorted(unknown)}; choose from {NEGATIVE_KINDS}")
    rates = {"other": 0.35, "removed": 0.35, "swap": 0.45, "negate": 0.5, **(rates or {})}
    rng = random.Random(seed)
    rows = [r for r in rows if is_holdout(r.get("split", r["article"])) == holdout]
    by_article: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        by_article[r["article"]].append(r["context"])
    contexts = {a: sorted(set(cs)) for a, cs in by_article.items()}
    pools = {a: sorted(set().union(*(_entities(c) for c in cs))) for a, cs in contexts.items()}
    pairs: list[Pair] = []
    for r in rows:
        q, ctx, art = r["question"].strip(), r["context"], r["article"]
        answers = [a["text"] for a in r["answers"]]
        if not q or not ctx.strip():
            continue
        if r["is_impossible"]:
            if "real" in negatives:
                pairs.append(Pair(q, ctx, -1, -1, "real", art))
            continue
        a0 = r["answers"][0]
        s, e = a0["start"], a0["start"] + len(a0["text"])
        span = bool(r.get("span", True))
        pairs.append(Pair(q, ctx, s, e, "pos_passage", art, span))
        if rng.random() < 0.5:
            ws, we = _window(ctx, s, e, rng)
            if ws <= s and e <= we:
                pairs.append(Pair(q, ctx[ws:we], s - ws, e - ws, "pos_window", art, span))
        if "other" in negatives and rng.random() < rates["other"]:
            others = [c for c in contexts[art] if c != ctx and not _contains_any(c, answers)]
            if others:
                pairs.append(Pair(q, rng.choice(others), -1, -1, "other", art))
        if "removed" in negatives and rng.random() < rates["removed"]:
            cut = _removed(ctx, answers, rng)
            if cut:
                pairs.append(Pair(q, cut, -1, -1, "removed", art))
        if "swap" in negatives and rng.random() < rates["swap"]:
            swapped = _swap(q, ctx, pools[art], rng)
            if swapped:
                text = ctx
                if rng.random() < 0.5:
                    ws, we = _window(ctx, s, e, rng)
                    text = ctx[ws:we]
                pairs.append(Pair(swapped, text, -1, -1, "swap", art))
        if "negate" in negatives and rng.random() < rates["negate"]:
            negated = _negate(q)
            if negated:
                pairs.append(Pair(negated, ctx, -1, -1, "negate", art))
    return pairs


def iter_kinds(pairs: list[Pair]) -> Iterator[tuple[str, int]]:
    """Yield (kind, count) in a stable order, for reports."""
    counts: dict[str, int] = defaultdict(int)
    for p in pairs:
        counts[p.kind] += 1
    yield from sorted(counts.items())
