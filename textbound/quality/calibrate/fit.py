"""Fit the score gate on the permissive pass's records (pure: numpy on the samples' features).

* `floor`: the top-1 cosine below which at most `FLOOR_BUDGET` of each group's answerable questions
  fall (they are refused as empty_retrieval);
* `weights` and `answer_threshold`: for every weight vector of a small grid, the highest threshold
  that keeps end-to-end false refusals of answerable questions at or under the target *in every
  group* (a group is one question file: one benchmark or the textbook); the weight vector with the
  fewest leaks, averaged over the refuse-expected (group, kind) cells, wins.
* `answerable_threshold` (the answerability reader's probability, `ANSWERABLE`): fitted jointly
  with the weights: every (reader threshold, weight vector) pair of the grids is tried, a question
  answering only when the reader also passes it, so the two gates share the false-refusal budget;
  the pair with the fewest leaks wins, except that refusal comes first: the highest reader
  threshold whose best leak objective is within `LEAK_TOLERANCE` of the lowest is chosen. The
  reader's best score is collected like the gate features (`diagnostics.answerability.score`,
  read with the permissive threshold 0). When the reader is off no question has the score and
  the previous threshold is kept.
* the reader's vote in the gate score (`weights["reader"]`, `READER_STEPS`): the grid also weighs
  the reader's clipped log-odds (`textbound.answer.gate_calibration.reader_logit`) into the gate
  score, so a strong retrieval match with a weak reader vote, or the reverse, is judged on the sum
  rather than
  on two separate cut-offs. The grid holds the no-reader vectors too, so the fit keeps the vote
  only where it lowers the leaks; samples without reader scores get the no-reader grid alone.
* `selection_threshold` (selected-text mode): with the chosen weights and reader threshold, the
  highest threshold that keeps false refusals at or under the target on answerable questions
  given their own gold paragraph as the selection; near-miss questions with their paragraph
  measure the leaks.

A question is in the held-out part when sha256("holdout:" + id) falls in the lowest `holdout`
share; nothing about it is used for fitting, and the metrics are reported for both parts.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textbound.answer.gate_calibration import READER, reader_logit
from textbound.errors import SetupError

__all__ = [
    "ANSWERABLE",
    "ANSWERABLE_GRID",
    "FEATURES",
    "FLOOR_BUDGET",
    "LEAK_TOLERANCE",
    "READER_STEPS",
    "WEIGHT_GRID",
    "GateFit",
    "Sample",
    "answered_by",
    "feature_matrix",
    "fit_gate",
    "fit_selection",
    "fit_threshold",
    "gate_metrics",
    "is_holdout",
    "part_metrics",
    "reader_passes",
    "weight_vector",
]

FEATURES = ("top1", "mean", "coverage", "best_sentence", "known", READER)
FLOOR_BUDGET = 0.01
"""Share of each group's answerable questions the floor may refuse (inside the target)."""
_STEPS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5)
READER_STEPS = (0.0, 0.02, 0.05, 0.1, 0.2)
"""Candidate weights of the reader's log-odds (only tried when the samples have reader scores)."""
KNOWN_STEPS = (0.0, 0.25, 0.5, 1.0)
"""Candidate weights of `known`, the share of the question's words the collection uses at all."""
WEIGHT_GRID: tuple[dict[str, float], ...] = tuple(
    {"top1": 1.0, "mean": m, "coverage": c, "best_sentence": b}
    | ({READER: r} if r else {}) | ({"known": k} if k else {})
    for k, r, m, c, b in itertools.product(KNOWN_STEPS, READER_STEPS, (0.0, -0.5, 0.5), _STEPS,
                                           _STEPS)
)
"""Candidate weights; top1 is fixed at 1 (the threshold absorbs the scale)."""
ANSWERABLE = "answerable"
"""The sample feature holding the answerability reader's best score (absent: reader off)."""
ANSWERABLE_GRID = tuple(round(0.05 * i, 2) for i in range(20))
"""Candidate answerable_threshold values; 0 lets every question through the reader."""
LEAK_TOLERANCE = 0.01
"""Refusal first: the highest answerable_threshold whose best leak objective is within this of the
lowest wins, so a reader that is sure no passage answers refuses on its own where that costs (on
the dev sets) under a point of averaged leaks."""


@dataclass(frozen=True)
class Sample:
    """One question's gate features from the permissive pass."""

    id: str
    group: str
    kind: str
    expected: str
    features: dict[str, float]
    downstream_ok: bool
    """The graph answered when the gate let it through (generation and grounding passed)."""
    holdout: bool = False
    correct: bool | None = None


@dataclass
class GateFit:
    """A fitted gate and how it does."""

    floor: float
    answer_threshold: float
    weights: dict[str, float]
    objective: float
    metrics: dict[str, Any] = field(default_factory=dict)
    answerable_threshold: float | None = None
    """None when no sample had a reader score (the reader was off)."""


def is_holdout(question_id: str, share: float) -> bool:
    """Whether a question belongs to the held-out part (deterministic in its id)."""
    h = int(hashlib.sha256(f"holdout:{question_id}".encode()).hexdigest(), 16)
    return h / 2**256 < share


def _feature(sample: Sample, name: str) -> float:
    if name == "known":  # absent from samples recorded before the feature: every word known
        return sample.features.get(name, 1.0)
    if name == READER:  # the reader's probability, as the log-odds the gate weighs
        return reader_logit(sample.features[ANSWERABLE]) if ANSWERABLE in sample.features \
            else 0.0
    return sample.features.get(name, 0.0)


def feature_matrix(samples: Sequence[Sample]) -> np.ndarray:
    """The samples' gate features, one row a sample, in FEATURES' order."""
    return np.array([[_feature(s, f) for f in FEATURES] for s in samples],
                    dtype=np.float64).reshape(len(samples), len(FEATURES))


def weight_vector(weights: dict[str, float]) -> np.ndarray:
    """A gate's weights in FEATURES' order (0 for a feature it does not weigh)."""
    return np.array([weights.get(f, 0.0) for f in FEATURES], dtype=np.float64)


def _floor_down(x: float, step: float = 0.001) -> float:
    return math.floor(x / step) * step


def fit_threshold(scores: np.ndarray, ok: np.ndarray, target: float) -> float:
    """Return the highest threshold answering at least (1 - target) of the questions.

    A question is answered when its score reaches the threshold and `ok` (the rest of the graph
    would answer it). Questions that are not ok are refused whatever the threshold and count
    against the target first. Returns -inf when even no gate misses the target.
    """
    n = len(scores)
    if n == 0:
        return math.inf
    allowed = math.floor(target * n + 1e-9) - int((~ok).sum())
    if allowed < 0:
        return -math.inf
    passing = np.sort(scores[ok])
    if allowed >= len(passing):
        return math.inf
    # refusing exactly the `allowed` lowest; ties at the cut stay answered
    return float(passing[allowed])


def reader_passes(samples: Sequence[Sample], threshold: float | None) -> np.ndarray:
    """Whether the reader lets each sample through (all of them without a reader threshold)."""
    if threshold is None:
        return np.ones(len(samples), dtype=bool)
    scores = np.array([s.features.get(ANSWERABLE, 0.0) for s in samples], dtype=np.float64)
    return scores >= threshold - 1e-12


def answered_by(samples: Sequence[Sample], floor: float, threshold: float,
                weights: dict[str, float], answerable_threshold: float | None = None
                ) -> np.ndarray:
    """Whether this gate (and reader) answers each sample end to end."""
    x = feature_matrix(samples)
    score = x @ weight_vector(weights)
    top1 = x[:, FEATURES.index("top1")]
    return (top1 >= floor) & (score >= threshold - 1e-12) & np.array(
        [s.downstream_ok for s in samples], dtype=bool) & reader_passes(samples,
                                                                         answerable_threshold)


def gate_metrics(samples: Sequence[Sample], floor: float, threshold: float,
                 weights: dict[str, float], answerable_threshold: float | None = None
                 ) -> dict[str, dict[str, Any]]:
    """Per group and kind: n and the share answered end to end by this gate (and reader)."""
    out: dict[str, dict[str, Any]] = {}
    if not samples:
        return out
    answered = answered_by(samples, floor, threshold, weights, answerable_threshold)
    for i, s in enumerate(samples):
        cell = out.setdefault(s.group, {}).setdefault(s.kind, {"n": 0, "answered": 0})
        cell["n"] += 1
        cell["answered"] += int(answered[i])
    for kinds in out.values():
        for cell in kinds.values():
            cell["answer_rate"] = round(cell["answered"] / cell["n"], 4)
    return out


def _leak_cells(samples: Sequence[Sample]) -> list[np.ndarray]:
    """One mask per refuse-expected (group, kind) cell: the cells the leak objective averages."""
    cells = sorted({(s.group, s.kind) for s in samples if s.expected != "answer"})
    return [np.array([(s.group, s.kind) == c for s in samples]) for c in cells]


def _leak_objective(answered: np.ndarray, cells: Sequence[np.ndarray]) -> float:
    """The mean, over refuse-expected cells, of the share answered (leaked)."""
    rates = [float(answered[m].mean()) for m in cells]
    return float(np.mean(rates)) if rates else 0.0


def fit_gate(samples: Sequence[Sample], target: float = 0.10,
             grid: Sequence[dict[str, float]] = WEIGHT_GRID,
             floor_budget: float = FLOOR_BUDGET,
             answerable_grid: Sequence[float] = ANSWERABLE_GRID,
             leak_tolerance: float = LEAK_TOLERANCE) -> GateFit:
    """Fit floor, weights, answer and answerable thresholds on the non-held-out samples.

    See the module doc. `answerable_grid` is only searched when the samples carry the reader's
    score; otherwise the fit is the score gate's alone and `answerable_threshold` is None.
    """
    fit = [s for s in samples if not s.holdout]
    held = [s for s in samples if s.holdout]
    groups = sorted({s.group for s in fit if s.expected == "answer"})
    if not groups:
        raise SetupError("no answerable questions to calibrate on")
    x = feature_matrix(fit)
    ok = np.array([s.downstream_ok for s in fit])
    top1 = x[:, FEATURES.index("top1")]
    masks = {g: np.array([s.group == g and s.expected == "answer" for s in fit]) for g in groups}

    floor = 1.0
    for g in groups:
        t1 = np.sort(top1[masks[g]])
        k = math.floor(floor_budget * len(t1) + 1e-9)
        floor = min(floor, float(t1[min(k, len(t1) - 1)]))
    floor = _floor_down(floor, 0.01)
    above = top1 >= floor
    cells = _leak_cells(fit)
    read = any(ANSWERABLE in s.features for s in fit)
    readers: Sequence[float | None] = tuple(answerable_grid) if read else (None,)
    if not read:  # without reader scores its weight cannot be fitted
        grid = [w for w in grid if not w.get(READER)]

    by_reader: dict[float | None, GateFit] = {}  # the best weights for each reader threshold
    for answerable in readers:
        passes = ok & above & reader_passes(fit, answerable)
        for weights in grid:
            score = x @ weight_vector(weights)
            threshold = min(fit_threshold(score[masks[g]], passes[masks[g]], target)
                            for g in groups)
            if not math.isfinite(threshold):
                continue
            threshold = _floor_down(threshold)  # round down: never refuse more than fitted
            answered = passes & (score >= round(threshold, 3) - 1e-12)
            objective = _leak_objective(answered, cells)
            held_best = by_reader.get(answerable)
            if held_best is None or objective < held_best.objective - 1e-12:
                by_reader[answerable] = GateFit(floor, round(threshold, 3), dict(weights),
                                                objective, answerable_threshold=answerable)
    if not by_reader:
        raise SetupError(
            f"no gate reaches a false-refusal rate of {target:.0%}: the rest of the graph "
            "already refuses more answerable questions than that"
        )
    # refusal first: the strictest reader threshold whose leaks are within tolerance of the best
    lowest = min(f.objective for f in by_reader.values())
    best = max((f for f in by_reader.values() if f.objective <= lowest + leak_tolerance + 1e-12),
               key=lambda f: (f.answerable_threshold or 0.0, -f.objective))
    best.metrics = {
        "fit": gate_metrics(fit, best.floor, best.answer_threshold, best.weights,
                            best.answerable_threshold),
        "holdout": gate_metrics(held, best.floor, best.answer_threshold, best.weights,
                                best.answerable_threshold),
        "n_fit": len(fit),
        "n_holdout": len(held),
        "leak_objective_fit": round(best.objective, 4),
        "leak_objective_by_answerable_threshold": {
            str(a): round(f.objective, 4) for a, f in sorted(
                by_reader.items(), key=lambda kv: -1.0 if kv[0] is None else kv[0])},
        "leak_tolerance": leak_tolerance,
    }
    return best


def fit_selection(samples: Sequence[Sample], weights: dict[str, float], target: float,
                  answerable_threshold: float | None = None) -> tuple[float, dict[str, Any]]:
    """Fit selection_threshold with fixed weights (and reader threshold); return it and metrics."""
    fit = [s for s in samples if not s.holdout and s.expected == "answer"]
    if not fit:
        raise SetupError("no answerable selections to calibrate on")
    score = feature_matrix(fit) @ weight_vector(weights)
    ok = np.array([s.downstream_ok for s in fit]) & reader_passes(fit, answerable_threshold)
    threshold = fit_threshold(score, ok, target)
    if not math.isfinite(threshold):
        raise SetupError(
            "no selection threshold meets the target"
            + (f" (the reader alone, at answerable_threshold {answerable_threshold}, refuses "
               "more answerable selections than that)" if answerable_threshold else ""))
    threshold = round(_floor_down(threshold), 3)
    return threshold, part_metrics(samples, -1.0, threshold, weights, answerable_threshold)


def part_metrics(samples: Sequence[Sample], floor: float, threshold: float,
                 weights: dict[str, float], answerable_threshold: float | None = None
                 ) -> dict[str, dict[str, dict[str, Any]]]:
    """`gate_metrics` of the fitted part and of the held-out part."""
    return {part: gate_metrics([s for s in samples if s.holdout == (part == "holdout")], floor,
                               threshold, weights, answerable_threshold)
            for part in ("fit", "holdout")}
