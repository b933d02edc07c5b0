"""`textbound calibrate`: fit the calibrated score gate on labelled questions.

One permissive pass runs every question through the real graph with a gate that lets everything
through (floor -1, answer and selection thresholds -10), which records the gate's evidence features
(`diagnostics.gate.features`) and whether the rest of the graph (generation, grounding) would have
answered (`textbound.quality.calibrate.samples`). The gate is then fitted on those records
(`textbound.quality.calibrate.fit`, whose docstring gives the rules), and the command
(`textbound.quality.calibrate.command`) writes the calibration file with how the fit does.

A question is in the held-out part when sha256("holdout:" + id) falls in the lowest `holdout`
share; nothing about it is used for fitting, and the metrics are reported for both parts.
"""

from __future__ import annotations

from textbound.quality.calibrate.command import calibrate_command
from textbound.quality.calibrate.fit import (
    ANSWERABLE,
    ANSWERABLE_GRID,
    FEATURES,
    FLOOR_BUDGET,
    LEAK_TOLERANCE,
    READER_STEPS,
    WEIGHT_GRID,
    GateFit,
    Sample,
    fit_gate,
    fit_selection,
    fit_threshold,
    gate_metrics,
    is_holdout,
)
from textbound.quality.calibrate.samples import collect_samples, features_of

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
    "calibrate_command",
    "collect_samples",
    "features_of",
    "fit_gate",
    "fit_selection",
    "fit_threshold",
    "gate_metrics",
    "is_holdout",
]
