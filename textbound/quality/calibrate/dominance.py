"""A refit that costs no group anything: the gate that beats the calibration in force everywhere.

`fit_gate` answers "the fewest leaks at a false-refusal target". A calibration already shipped
has been checked book by book, and a refit that answers one book better by costing another is
what the project does not keep (docs/pool.md). So `fit_no_worse` searches the same grid (weight
vectors, reader thresholds, and every answer threshold the samples' scores offer) for a gate
that, against the reference calibration, answers no fewer questions rightly and lets through no
more leaks in any group (per refuse-expected kind), on the fitted part and on the held-out part
each, and gains somewhere. The counts are compared, not the questions: a group may trade one
right answer for another. Of those it returns the one that gains most over all samples (right
answers gained plus leaks refused); None when no gate beats the reference.

Right answers are those the permissive pass found correct (`Sample.correct`: the released
answer holds a gold phrase), so a gate that answers more questions wrongly gains nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from textbound.quality.calibrate.fit import (
    ANSWERABLE,
    ANSWERABLE_GRID,
    FEATURES,
    WEIGHT_GRID,
    GateFit,
    Sample,
    answered_by,
    feature_matrix,
    part_metrics,
    reader_passes,
    weight_vector,
)

__all__ = ["fit_no_worse", "outcome_counts", "selection_no_worse"]

_EPS = 1e-12


def _cells(samples: Sequence[Sample]) -> tuple[list[tuple[str, str]], np.ndarray]:
    """The (group, measure) cells compared, and one mask per cell (rows) over the samples.

    A group's answerable questions count their right answers ("correct"), or, where the pass
    did not judge answers (selected-text samples), the answerable questions answered
    ("answered"); each refuse-expected kind of a group counts its leaks (the kind's name).
    """
    names: list[tuple[str, str]] = []
    masks: list[list[bool]] = []
    for group in sorted({s.group for s in samples}):
        kinds = sorted({s.kind for s in samples if s.group == group and s.expected != "answer"})
        judged = any(s.correct is not None for s in samples if s.group == group)
        names.append((group, "correct" if judged else "answered"))
        masks.append([s.group == group and s.expected == "answer"
                      and (bool(s.correct) or not judged) for s in samples])
        for kind in kinds:
            names.append((group, kind))
            masks.append([s.group == group and s.kind == kind for s in samples])
    return names, np.array(masks, dtype=bool).reshape(len(names), len(samples))


def _answered_counts(score: np.ndarray, passes: np.ndarray, masks: np.ndarray,
                     thresholds: np.ndarray) -> np.ndarray:
    """(cells x thresholds): how many of each cell's samples a threshold answers."""
    out = np.empty((len(masks), len(thresholds)), dtype=np.int64)
    for i, mask in enumerate(masks):
        values = np.sort(score[passes & mask])
        out[i] = len(values) - np.searchsorted(values, thresholds - _EPS, side="left")
    return out


def outcome_counts(samples: Sequence[Sample], floor: float, threshold: float,
                   weights: Mapping[str, float], answerable_threshold: float | None
                   ) -> dict[tuple[str, str], int]:
    """Per (group, measure) cell: right answers, or leaks of a refuse-expected kind."""
    names, masks = _cells(samples)
    answered = answered_by(samples, floor, threshold, dict(weights), answerable_threshold)
    return {name: int((answered & mask).sum()) for name, mask in zip(names, masks, strict=True)}


def selection_no_worse(samples: Sequence[Sample], weights: dict[str, float],
                       answerable_threshold: float | None, reference: Mapping[str, Any]
                       ) -> float | None:
    """Selected-text mode: the threshold, for the chosen weights, no worse than the reference's.

    The same rule as `fit_no_worse`, with the weights and the reader threshold fixed: the
    selection threshold that answers no fewer answerable selections and leaks no more in any
    group, gaining most (or, failing that, the highest that only matches); None when none does.
    Judged on all the selections together: a group has a few hundred of them, so its held-out
    part moves by one selection either way at any threshold.
    """
    fit = fit_no_worse(samples, {"floor": -1.0, "weights": reference["weights"],
                                 "answer_threshold": reference["selection_threshold"],
                                 "answerable_threshold": reference.get("answerable_threshold")},
                       grid=[weights], answerable_grid=[answerable_threshold]
                       if answerable_threshold is not None else [], even=True, by_part=False)
    return None if fit is None else fit.answer_threshold


def fit_no_worse(samples: Sequence[Sample], reference: Mapping[str, Any],
                 grid: Sequence[dict[str, float]] = WEIGHT_GRID,
                 answerable_grid: Sequence[float] = ANSWERABLE_GRID,
                 even: bool = False, by_part: bool = True) -> GateFit | None:
    """The gate that beats `reference` in every cell on both parts and gains most; else None.

    `reference` is a calibration's fields (floor, answer_threshold, weights,
    answerable_threshold); its floor is kept. `even`: a gate that only matches the reference
    (gains nothing) counts too, the highest threshold of those (used for the selection
    threshold, whose weights are given). `by_part` False: judged on all samples together.
    """
    if not samples:
        return None
    floor = float(reference["floor"])
    names, masks = _cells(samples)
    gains_when_more = np.array([measure in ("correct", "answered") for _, measure in names])
    parts = [np.array([s.holdout == held for s in samples]) for held in (False, True)] \
        if by_part else [np.ones(len(samples), dtype=bool)]
    answered = answered_by(samples, floor, float(reference["answer_threshold"]),
                           dict(reference["weights"]), reference.get("answerable_threshold"))
    base = (masks & answered).sum(axis=1)
    ref_parts = [(masks & answered & part).sum(axis=1) for part in parts]
    x = feature_matrix(samples)
    above = (x[:, FEATURES.index("top1")] >= floor) & np.array(
        [s.downstream_ok for s in samples], dtype=bool)
    read = any(ANSWERABLE in s.features for s in samples)
    readers: Sequence[float | None] = tuple(answerable_grid) if answerable_grid and read \
        else (None,)
    reader = {a: reader_passes(samples, a) for a in readers}  # once, not per weight vector
    sign = np.where(gains_when_more, 1, -1)
    best: tuple[float, float, float] | None = None
    chosen: GateFit | None = None
    for weights in grid:
        score = x @ weight_vector(weights)
        for answerable in readers:
            passes = above & reader[answerable]
            thresholds = np.unique(np.round(score[passes], 3))
            if not len(thresholds):
                continue
            beats = np.ones(len(thresholds), dtype=bool)
            for part, ref_part in zip(parts, ref_parts, strict=True):
                counts = _answered_counts(score, passes & part, masks, thresholds)
                beats &= ((counts - ref_part[:, None]) * sign[:, None] >= 0).all(axis=0)
            if not beats.any():
                continue
            counts = _answered_counts(score, passes, masks, thresholds[beats])
            gain = ((counts - base[:, None]) * sign[:, None]).sum(axis=0)
            j = len(gain) - 1 - int(np.argmax(gain[::-1]))  # the highest threshold of the best
            key = (float(gain[j]), answerable or 0.0, float(thresholds[beats][j]))
            if (gain[j] > 0 or even) and (best is None or key > best):
                best = key
                chosen = GateFit(floor, round(float(thresholds[beats][j]), 3), dict(weights),
                                 -float(gain[j]), answerable_threshold=answerable)
    if chosen is None:
        return None
    after = (masks & answered_by(samples, floor, chosen.answer_threshold, chosen.weights,
                                 chosen.answerable_threshold)).sum(axis=1)
    chosen.metrics = {
        "rule": "no worse than the reference in any group, on the fitted and held-out parts",
        "gain": int(-chosen.objective),
        "change_by_cell": {f"{g}/{m}": int(a - b) for (g, m), a, b in
                           zip(names, after, base, strict=True) if a != b},
        **part_metrics(samples, floor, chosen.answer_threshold, chosen.weights,
                       chosen.answerable_threshold),
    }
    return chosen
