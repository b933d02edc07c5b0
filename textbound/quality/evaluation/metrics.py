"""Evaluation metrics, pure functions of answers and per-question records.

Correctness rule (`answer_matches`): answer and gold are normalised SQuAD-style (lower case,
punctuation and the articles a/an/the dropped, whitespace collapsed). A short gold answer (at most
`LONG_FORM_WORDS` normalised words) must occur in the answer as a whole-word substring, or as it
is written (case kept, whitespace collapsed, not inside a longer word): folding glues what
punctuation parts ("split(path.delimiter)" folds to "splitpathdelimiter", "Rhine's" to
"rhines"), and the gold printed whole is there. One that holds a symbol or an option dash (a
literal: "%P", "-4", "+master", "--stage") must occur as it is written, since folding would find
"%P" in "(p. 141)"; so must one of symbols only ("%%", "$$"), which folding would empty. A longer,
abstractive gold answer (ClapNQ) counts as matched when at least `RECALL_CUTOFF` of its distinct
content words (stop words dropped, lightly stemmed) occur in the answer.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from graph.reasons import fired_by, judges_evidence
from textbound.text import content_words

LONG_FORM_WORDS = 8
"""Gold answers longer than this (normalised words) are scored by content-word recall."""
RECALL_CUTOFF = 0.5
"""Share of a long gold answer's content words the answer must contain to count as correct."""

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’–—`´")


def normalize_answer(text: str) -> str:
    """Fold text SQuAD-style: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


_LITERAL = re.compile(r"[%$#~^*=<>\\|@&{}\[\]+]|(?:^|\s)--?\w")
"""A symbol or an option dash that makes a gold answer a literal ("%P", "-4", "+master",
"--stage"): folded away, "%P" would be found in "(p. 141)" and "+master" in "master"."""


_MARKS = frozenset(".,;:!?")
"""A gold that is one of these alone is a labelling slip, not an answer to look for."""


def _printed(gold: str, answer: str) -> bool:
    """Whether the answer prints the gold as written (case kept, spaces collapsed), whole."""
    want = re.escape(" ".join(gold.split())).replace("\\ ", r"\s+")
    return re.search(rf"(?<![\w-]){want}(?![\w-])", answer) is not None


def answer_matches(answer: str, golds: Sequence[str]) -> bool:
    """Whether the answer contains any gold answer (see the module docstring for the rule)."""
    norm = f" {normalize_answer(answer)} "
    have: set[str] | None = None
    for gold in golds:
        g = normalize_answer(gold)
        if not g:
            # symbols only ("%%", "$$", "#"): printed as written; a lone sentence mark (a few
            # SQuAD golds are ".") answers nothing
            if gold.strip() not in _MARKS and _printed(gold.strip(), answer):
                return True
            continue
        if len(g.split()) <= LONG_FORM_WORDS:
            if _printed(gold, answer) or not _LITERAL.search(gold) and f" {g} " in norm:
                return True
            continue
        want = set(content_words(gold))
        if not want:
            continue
        if have is None:
            have = set(content_words(answer))
        if len(want & have) / len(want) >= RECALL_CUTOFF:
            return True
    return False


def percentile(values: Sequence[float], q: float) -> float | None:
    """Return the q-th percentile (0-100, linear interpolation) or None for no values."""
    if not values:
        return None
    return float(np.percentile(values, q, method="linear"))


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


_READER_REFUSALS = tuple(fired_by("check_answerable"))


def refusal_label(record: dict[str, Any]) -> str:
    """Return the refusal reason, marked " (answerable)" when the answerability reader refused.

    The reader refuses with the same reasons as the score gate (insufficient_context, or
    selected_text_insufficient for a selection); its failed check `answerable` tells them apart.
    """
    reason = str(record.get("refusal_reason"))
    if reason in _READER_REFUSALS and "answerable" in (record.get("failed_checks") or []):
        return f"{reason} (answerable)"
    return reason


def summarize(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate per-question records of one policy into per-kind rates and latencies.

    Each record has `kind`, `expected`, `was_refusal`, `refusal_reason`, `path`, `latency_ms`,
    optionally `failed_checks`, and, for answerable questions, `correct` (None when refused).
    Refusals are counted per `refusal_label`, so the reader's are told apart from the gate's.
    """
    kinds: dict[str, dict[str, Any]] = {}
    latency: dict[str, list[float]] = defaultdict(list)
    total = answered_all = 0
    for r in records:
        total += 1
        k = kinds.setdefault(r["kind"], {"n": 0, "answered": 0, "refusals": Counter(),
                                         "correct": 0, "expected": r["expected"]})
        k["n"] += 1
        if r["was_refusal"]:
            k["refusals"][refusal_label(r)] += 1
        else:
            k["answered"] += 1
            answered_all += 1
            k["correct"] += bool(r.get("correct"))
        if r.get("latency_ms") is not None:
            latency[r["path"]].append(float(r["latency_ms"]))
    out_kinds: dict[str, Any] = {}
    for name in sorted(kinds):
        k = kinds[name]
        row: dict[str, Any] = {
            "n": k["n"],
            "expected": k["expected"],
            "answered": k["answered"],
            "answer_rate": _rate(k["answered"], k["n"]),
            "refusals": dict(sorted(k["refusals"].items())),
        }
        if k["expected"] == "answer":
            row["correct"] = k["correct"]
            row["correct_rate"] = _rate(k["correct"], k["answered"])
            row["correct_of_all"] = _rate(k["correct"], k["n"])
        else:
            row["leak_rate"] = row["answer_rate"]
        out_kinds[name] = row
    lat = {
        path: {"n": len(xs), "p50_ms": round(percentile(xs, 50) or 0.0, 1),
               "p95_ms": round(percentile(xs, 95) or 0.0, 1)}
        for path, xs in sorted(latency.items())
    }
    return {"n": total, "answered": answered_all, "kinds": out_kinds, "latency": lat}


def tradeoff_curve(records: Sequence[dict[str, Any]], feature: str
                   ) -> tuple[list[float], list[float], list[float]]:
    """Sweep a threshold over one gate feature: (thresholds, answered share, leaked share).

    Gate-only: a question counts as answered when its feature reaches the threshold, ignoring
    later checks. Answered is over answerable questions, leaked over refuse-expected ones;
    questions refused before the gate could decide (out of scope, invalid) are left out.
    """
    records = [r for r in records if judges_evidence(r.get("path"))]
    pos = [r["features"].get(feature, -math.inf) for r in records if r["expected"] == "answer"]
    neg = [r["features"].get(feature, -math.inf) for r in records if r["expected"] != "answer"]
    finite = sorted({v for v in pos + neg if v != -math.inf})
    thresholds = [finite[0] - 1e-6] + finite if finite else []
    answered = [sum(v >= t for v in pos) / max(len(pos), 1) for t in thresholds]
    leaked = [sum(v >= t for v in neg) / max(len(neg), 1) for t in thresholds]
    return thresholds, answered, leaked
