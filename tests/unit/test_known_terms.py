"""`known`: how much of a question the collection speaks of at all, a feature the gate weighs.

A near-miss question often names what the book never mentions ("git worktree" to a manual
without it) while its other words retrieve well. The share of the question's words (IDF-weighted)
that the collection uses is a gate feature; its weight is fitted by `textbound calibrate`.
"""

from __future__ import annotations

import math

from textbound.answer.evidence import known_share, question_terms
from textbound.answer.gate_calibration import Calibration
from textbound.documents.store._types import TermStats
from textbound.quality.calibrate.fit import FEATURES, WEIGHT_GRID, Sample, feature_matrix


def _stats() -> TermStats:
    df = {"branch": 40, "check": 30, "two": 50, "time": 60, "git": 90, "use": 70, "same": 45}
    return TermStats(100, df)


def test_every_word_known_is_one_and_a_missing_rare_word_lowers_it() -> None:
    """All words used: 1.0; the unknown word weighs its (largest) IDF."""
    stats = _stats()
    assert known_share(question_terms("check out two branches at the same time"), stats) == 1.0
    share = known_share(question_terms("use git worktree to check out two branches"), stats)
    terms = question_terms("use git worktree to check out two branches")
    idf = {t: stats.idf(t) for t in terms}
    assert math.isclose(share, 1 - idf["worktree"] / sum(idf.values()))
    assert share < 0.8


def test_nothing_known_of_the_collection_counts_every_word_known() -> None:
    """A fake or empty store gives no statistics: the feature is neutral (1.0)."""
    assert known_share({"worktree"}, None) == 1.0
    assert known_share({"worktree"}, TermStats(0, {})) == 1.0


def test_a_response_without_the_feature_scores_as_if_every_word_were_known() -> None:
    """Selections and records made before the feature carry no `known`: it counts 1, not 0."""
    cal = Calibration(name="t", floor=0.2, answer_threshold=1.0,
                      weights={"top1": 1.0, "known": 0.5})
    assert cal.gate_score({"top1": 0.6}) == cal.gate_score({"top1": 0.6, "known": 1.0}) == 1.1
    sample = Sample("q", "g", "answerable", "answer", {"top1": 0.6}, True)
    assert feature_matrix([sample])[0][FEATURES.index("known")] == 1.0


def test_the_fit_may_weigh_known() -> None:
    """The weight grid tries `known` at several weights, and without it."""
    weights = {w.get("known", 0.0) for w in WEIGHT_GRID}
    assert weights == {0.0, 0.25, 0.5, 1.0}


def test_the_replay_refuses_only_released_answers_whose_words_the_book_lacks() -> None:
    """With known weighed at w and the threshold raised by w, a fully known answer stays."""
    from benchmarks.known_weight import released
    known = {"was_refusal": False, "answerable_score": None,
             "features": {"gate_score": 1.1, "known": 1.0}}
    lacking = {"was_refusal": False, "answerable_score": None,
               "features": {"gate_score": 1.1, "known": 0.6}}
    refused = {"was_refusal": True, "features": {"gate_score": 2.0, "known": 1.0}}
    assert released(known, 0.25, 1.05, 0.0) and released(lacking, 0.1, 1.05, 0.0)
    assert not released(lacking, 0.25, 1.05, 0.0)  # 1.1 - 0.25 * 0.4 = 1.0 < 1.05
    assert not released(refused, 0.0, 1.05, 0.0)
