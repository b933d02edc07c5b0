"""Why a question went wrong: one failure kind per question, from its record.

Every evaluated question gets one `failure` label (None when it went right):

* `retrieval_miss`: an answerable question none of whose retrieved chunks holds a gold answer,
  so no later step could have answered it.
* `refused_answerable`: a gold answer was retrieved, yet the question was refused (the reason
  and the failed check say which step refused).
* `composition`: answered, a gold answer was in a retrieved chunk, but not in the answer: the
  extractive composition (or the chat model) picked the wrong sentences.
* `wrong_answer`: answered, but no retrieved chunk held a gold answer either (a wrong passage
  was answered from).
* `leaked`: a near-miss, out-of-corpus or out-of-scope question was answered; `let_through`
  names the check with the smallest margin over its threshold, the one that nearly held.

The gold test is the same normalised substring rule as `answer_matches`, applied to chunk texts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from textbound.quality.evaluation.metrics import answer_matches

__all__ = ["FAILURE_KINDS", "classify", "breakdown", "gold_in_chunks", "let_through"]

FAILURE_KINDS = ("retrieval_miss", "refused_answerable", "composition", "wrong_answer", "leaked")


def gold_in_chunks(chunks: Sequence[dict[str, Any]], golds: Sequence[str]) -> list[int]:
    """Return the ranks (0-based) of the retrieved chunks that hold a gold answer."""
    return [i for i, c in enumerate(chunks) if golds and answer_matches(c.get("text", ""), golds)]


def let_through(diagnostics: dict[str, Any]) -> str | None:
    """Name the passed check whose score was nearest its threshold (what let a leak through)."""
    margins: dict[str, float] = {}
    reader = diagnostics.get("answerability") or {}
    if reader.get("score") is not None and reader.get("threshold") is not None \
            and not reader.get("skipped"):
        margins["answerable"] = float(reader["score"]) - float(reader["threshold"])
    if reader.get("gate_score") is not None and reader.get("gate_threshold") is not None:
        margins["gate"] = float(reader["gate_score"]) - float(reader["gate_threshold"])
    grounding = diagnostics.get("grounding") or {}
    thresholds = diagnostics.get("thresholds") or {}
    for figure, limit in (("answer_coverage", "min_answer_coverage"),
                          ("answer_read", "answer_read_threshold")):
        if grounding.get(figure) is not None and thresholds.get(limit) is not None:
            margins[figure] = float(grounding[figure]) - float(thresholds[limit])
    if not margins:
        passed = diagnostics.get("passed_checks") or []
        return passed[-1] if passed else None
    return min(margins, key=lambda k: margins[k])


def classify(record: dict[str, Any]) -> str | None:
    """Return the record's failure kind, or None when the question went right."""
    answered = not record["was_refusal"]
    if record["expected"] != "answer":
        return "leaked" if answered else None
    if answered and record.get("correct"):
        return None
    retrieved = bool(record.get("gold_chunks"))
    if not retrieved:
        return "wrong_answer" if answered else "retrieval_miss"
    return "composition" if answered else "refused_answerable"


def breakdown(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Count failures per kind, with refusal reasons and leak checks broken out."""
    counts: Counter[str] = Counter()
    by_reason: dict[str, Counter[str]] = defaultdict(Counter)
    questions = 0
    for r in records:
        questions += 1
        kind = r.get("failure")
        if kind is None:
            continue
        counts[kind] += 1
        if kind == "refused_answerable":
            by_reason[kind][str(r.get("refusal_reason"))] += 1
        elif kind == "leaked":
            by_reason[kind][f"{r['kind']}: {r.get('let_through')}"] += 1
    return {"questions": questions,
            "failures": {k: counts[k] for k in FAILURE_KINDS},
            "detail": {k: dict(v.most_common()) for k, v in by_reason.items()}}
