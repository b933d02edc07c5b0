"""A no-answer head fitted on the reader's own features: does this window answer the question?

The shipped reader (models/answerability) scores a window with a head trained on Wikipedia-style
data, and on technical books it lets near-misses through (issue 38). Retraining the whole reader
moved its spans too, and every retrained reader lost right answers the lead had been built
around. This head leaves the encoder and the span head exactly as they are and reads, from the
same forward pass, what the encoder already computes for each window:

* `pooled` (384): the pooled [CLS] vector the shipped head reads;
* `cls` (384): the last layer's [CLS] state;
* `passage` (384) and `question` (384): the last layer's mean state over the passage's tokens
  and over the question's;
* `span` (7): the best span's start + end logit (within `max_answer_tokens`), the largest start
  and end logits, the [CLS] position's start + end, best minus that, and the log-sum-exp of the
  start and of the end logits.

A logistic regression over those (standardised) gives the window's log-odds; an affine map puts
it on the shipped head's scale, so every threshold fitted on the reader's scores keeps its
meaning. `head.json` beside the model holds the regression, the map, the graph outputs it reads
and where its training questions came from (training/answerability/head.py writes it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from textbound.errors import SetupError

__all__ = ["FEATURE_BLOCKS", "HEAD_FILE", "HEAD_FORMAT", "ReaderHead", "graph_with_outputs",
           "span_features", "window_features"]

HEAD_FILE = "head.json"
HEAD_FORMAT = "textbound-reader-head/1"
FEATURE_BLOCKS: tuple[tuple[str, int], ...] = (
    ("pooled", 384), ("cls", 384), ("passage", 384), ("question", 384), ("span", 7))
"""The feature blocks in order, with their widths (1,543 features in all)."""


def span_features(start: np.ndarray, end: np.ndarray, null: float, max_len: int) -> np.ndarray:
    """The seven span features of one window (`start`/`end`: the passage tokens' logits)."""
    if start.size == 0:
        return np.zeros(7, np.float64)
    s, e = start.astype(np.float64), end.astype(np.float64)
    pair = s[:, None] + e[None, :]
    i, j = np.indices(pair.shape)
    best = float(np.where((j >= i) & (j - i < max_len), pair, -np.inf).max())

    def lse(x: np.ndarray) -> float:
        m = float(x.max())
        return m + float(np.log(np.exp(x - m).sum()))

    return np.array([best, float(s.max()), float(e.max()), null, best - null, lse(s), lse(e)])


def window_features(pooled: np.ndarray, hidden: np.ndarray, start: np.ndarray, end: np.ndarray,
                    ctx_from: int, ctx_len: int, max_len: int) -> np.ndarray:
    """All features of one window: [CLS] q1..qn [SEP] p1..pm [SEP], ctx_from = n + 2, m = ctx_len.

    `hidden` [seq, 384] is the last layer's output; `start`/`end` [seq] the span logits.
    """
    passage = slice(ctx_from, ctx_from + ctx_len)
    question = hidden[1:ctx_from - 1]
    return np.concatenate([
        pooled.astype(np.float64), hidden[0].astype(np.float64),
        hidden[passage].mean(0) if ctx_len else np.zeros(hidden.shape[1]),
        question.mean(0) if len(question) else np.zeros(hidden.shape[1]),
        span_features(start[passage], end[passage], float(start[0] + end[0]), max_len)])


@dataclass(frozen=True)
class ReaderHead:
    """A fitted head: standardise, weigh, then map onto the shipped head's log-odds scale."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    affine: tuple[float, float]
    outputs: dict[str, str]
    """Graph outputs it reads: {"pooled": name, "hidden": name} (names in the exported graph)."""
    blend: float = 1.0
    """The verdict's log-odds: `blend` x this head's + (1 - blend) x the shipped head's."""

    def logit(self, features: np.ndarray, shipped: np.ndarray | None = None) -> np.ndarray:
        """Log-odds for features [n, 1543], blended with the shipped head's log-odds [n]."""
        z = (np.atleast_2d(features) - self.mean) / self.scale @ self.weights + self.bias
        z = self.affine[0] * z + self.affine[1]
        return z if shipped is None else self.blend * z + (1.0 - self.blend) * shipped

    def to_json(self, **provenance: Any) -> dict[str, Any]:
        """The head as head.json holds it, with its provenance."""
        return {"format": HEAD_FORMAT, "features": [list(b) for b in FEATURE_BLOCKS],
                "outputs": self.outputs, "mean": self.mean.tolist(),
                "scale": self.scale.tolist(), "weights": self.weights.tolist(),
                "bias": self.bias, "affine": list(self.affine), "blend": self.blend,
                **provenance}

    @classmethod
    def load(cls, path: Path) -> ReaderHead:
        """Read head.json; raise SetupError saying what is wrong, never half-read it."""
        width = sum(w for _, w in FEATURE_BLOCKS)
        try:
            data = json.loads(path.read_text("utf-8"))
            if data.get("format") != HEAD_FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {HEAD_FORMAT!r}")
            if [list(b) for b in FEATURE_BLOCKS] != data["features"]:
                raise ValueError("its feature blocks are not this code's")
            head = cls(mean=np.asarray(data["mean"], np.float64),
                       scale=np.asarray(data["scale"], np.float64),
                       weights=np.asarray(data["weights"], np.float64),
                       bias=float(data["bias"]),
                       affine=(float(data["affine"][0]), float(data["affine"][1])),
                       outputs={"pooled": str(data["outputs"]["pooled"]),
                                "hidden": str(data["outputs"]["hidden"])},
                       blend=float(data.get("blend", 1.0)))
            if not (head.mean.shape == head.scale.shape == head.weights.shape == (width,)):
                raise ValueError(f"expected {width} means, scales and weights")
            if not np.all(np.isfinite(head.weights)) or np.any(head.scale <= 0):
                raise ValueError("non-finite weights or non-positive scales")
            if not 0.0 <= head.blend <= 1.0:
                raise ValueError(f"blend {head.blend} outside [0, 1]")
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise SetupError(
                f"The reader head {path} cannot be read ({exc}). Restore it (git checkout -- "
                "models/answerability), rebuild it with `make train-reader-head`, or delete it "
                "to read with the shipped head alone.") from exc
        return head


def graph_with_outputs(path: Path, names: Sequence[str]) -> bytes:
    """The model graph with these values added as outputs (a SetupError if it lacks one)."""
    import onnx

    model = onnx.load(str(path))
    values = {o for n in model.graph.node for o in n.output}
    have = {o.name for o in model.graph.output}
    for name in names:
        if name not in values:
            raise SetupError(f"The reader head reads {name!r}, which {path} does not compute; "
                             "rebuild the head for this model (make train-reader-head) or "
                             "delete its head.json.")
        if name not in have:
            model.graph.output.append(onnx.helper.make_tensor_value_info(
                name, onnx.TensorProto.FLOAT, None))
    return model.SerializeToString()
