"""Gate calibrations: thresholds and feature weights for the score gate, and the seeds' presets.

All scores are raw cosine in [-1, 1]. The calibrated gate combines evidence features linearly:

    gate_score = w_top1 * top1 + w_coverage * coverage + w_best_sentence * best_sentence
                 + w_mean * mean + w_known * known

and passes when gate_score >= answer_threshold. `top1` is the best chunk's cosine, `coverage` the
share of the question's content words found in the best chunk, `best_sentence` the best single
sentence's lexical coverage, `mean` the mean cosine of the retrieved chunks, `known` the
IDF-weighted share of the question's words that the collection uses at all (a question naming
what the book never mentions, "git worktree" to a manual without it, scores lower).
`textbound calibrate` fits the weights and threshold, and with them `answerable_threshold`, the
answerability reader's probability needed to answer.

A calibration may also weigh the answerability reader's verdict (`weights["reader"]`, on the
reader's clipped log-odds, `reader_logit`): the score gate then checks the retrieval features
with the best bonus the reader could add (`reader_bonus`), and check_answerable completes the
sum once the reader has read. With the reader off the term is 0 (log-odds of 1/2).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from textbound.errors import SetupError

__all__ = ["Calibration", "CalibrationFile", "FLOOR_WORDS", "POLICIES", "READER",
           "READER_LOGIT_CLIP", "load_calibration", "reader_logit"]

FLOOR_WORDS = 0.9
"""The calibrated policy's `floor_words`: on the dev sets it answered 4 more conversation turns
and one more SQuAD question, with no out-of-corpus question answered (docs/changelog.md,
2026-11-26)."""
READER = "reader"
"""The gate feature holding the answerability reader's clipped log-odds."""
READER_LOGIT_CLIP = 6.0
"""|log-odds| cap: probabilities beyond about 0.0025 / 0.9975 count as those."""


def reader_logit(probability: float) -> float:
    """Return the reader's log-odds, clipped to [-READER_LOGIT_CLIP, READER_LOGIT_CLIP]."""
    p = min(max(float(probability), 1e-9), 1 - 1e-9)
    return max(-READER_LOGIT_CLIP, min(READER_LOGIT_CLIP, math.log(p / (1 - p))))


FEATURE_DEFAULTS = {"known": 1.0}
"""The value of a feature a response does not carry, where it is not 0."""


@dataclass(frozen=True)
class Calibration:
    """One score-gate policy."""

    name: str
    floor: float
    """Below this top-1 cosine nothing is evidence: refuse with empty_retrieval."""
    answer_threshold: float
    """The gate score needed to answer (insufficient_context below it)."""
    weights: dict[str, float] = field(default_factory=lambda: {"top1": 1.0})
    chunk_threshold: float | None = None
    """Chunks at or above this cosine are evidence; None means top1 - chunk_margin."""
    chunk_margin: float = 0.1
    mean_threshold: float | None = None
    """Seed 004: the mean of the top-k cosines must reach this."""
    selection_threshold: float = 0.5
    """Selected-text mode: the gate score the best selected sentences must reach."""
    answerable_threshold: float = 0.5
    """The answerability reader's probability that the best passage answers the question, needed
    to answer (insufficient_context, or selected_text_insufficient for a selection, below it)."""
    floor_words: float | None = FLOOR_WORDS
    """Under the floor, the question's words may still pass it: when a retrieved passage, and one
    of its sentences, hold at least this share of the question's (IDF-weighted) words, the
    floor passes and the gate score decides. A short question on a rare term ("Who published
    saycan?") embeds far from the passage that answers it. None: the floor alone decides (the
    seeds' presets)."""
    description: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)

    def gate_score(self, features: dict[str, float]) -> float:
        """Combine evidence features into the score compared with answer_threshold.

        A feature missing from `features` counts 0 (for READER: the reader has not read, or is
        off), except `known`, which counts 1 (every word known: a selection, an old record).
        """
        return sum(w * features.get(k, FEATURE_DEFAULTS.get(k, 0.0))
                   for k, w in self.weights.items())

    @property
    def reader_weight(self) -> float:
        """The weight of the reader's log-odds in the gate score (0: the reader only vetoes)."""
        return max(0.0, self.weights.get(READER, 0.0))

    @property
    def reader_bonus(self) -> float:
        """The most the reader can add to the gate score (its weight times the clip)."""
        return self.reader_weight * READER_LOGIT_CLIP

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        return asdict(self)

    def rule_dict(self) -> dict[str, Any]:
        """Return the fields that decide, without the provenance (cheap: read per request)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "provenance"}
        out["weights"] = dict(self.weights)
        return out


POLICIES: dict[str, Calibration] = {
    "seed_000": Calibration(
        name="seed_000",
        floor_words=None,
        floor=0.5,
        answer_threshold=0.7,
        chunk_threshold=0.7,
        description="Seeds 000/001: nothing >= 0.5 -> empty_retrieval; nothing >= 0.7 -> "
        "insufficient_context; chunks in [0.5, 0.7) logged and left out.",
    ),
    "seed_002": Calibration(
        name="seed_002",
        floor_words=None,
        floor=-1.0,
        answer_threshold=0.7,
        chunk_threshold=None,
        chunk_margin=1.0,
        description="Seed 002 (ADR gate 1): top-1 cosine must exceed 0.7.",
    ),
    "seed_004": Calibration(
        name="seed_004",
        floor_words=None,
        floor=0.3,
        answer_threshold=0.3,
        mean_threshold=0.6,
        chunk_threshold=None,
        chunk_margin=1.0,
        description="Seed 004: best score >= 0.3 (else off-topic) and average >= 0.6.",
    ),
}


def load_calibration(path: Path | None, policy: str = "calibrated") -> Calibration:
    """Return the named preset, or the calibrated policy read from path."""
    if policy != "calibrated":
        if policy not in POLICIES:
            raise SetupError(f"Unknown policy {policy!r}; choose calibrated or {sorted(POLICIES)}.")
        return POLICIES[policy]
    if path is None or not Path(path).is_file():
        raise SetupError(
            f"Calibration file {path} not found. Run `textbound calibrate` to make one, or set "
            "TEXTBOUND_POLICY to a fixed policy (seed_000, seed_002, seed_004)."
        )
    stat = Path(path).stat()
    return _read_calibration(str(path), stat.st_mtime_ns, stat.st_size)


class CalibrationFile(BaseModel):
    """The calibration JSON's format, as `textbound calibrate` writes it.

    Keys it does not name are ignored; an optional key left out takes Calibration's default.
    """

    floor: float
    answer_threshold: float
    weights: dict[str, float]
    chunk_threshold: float | None = Calibration.chunk_threshold
    chunk_margin: float = Calibration.chunk_margin
    mean_threshold: float | None = Calibration.mean_threshold
    selection_threshold: float = Calibration.selection_threshold
    answerable_threshold: float = Calibration.answerable_threshold
    """Files written before the answerability reader existed keep the default."""
    floor_words: float | None = Calibration.floor_words
    description: str = Calibration.description
    provenance: dict[str, Any] = Field(default_factory=dict)

    @field_validator("weights")
    @classmethod
    def _reader_weight_not_negative(cls, weights: dict[str, float]) -> dict[str, float]:
        if weights.get(READER, 0.0) < 0:
            raise ValueError(f"weights.{READER} must be >= 0")
        return weights

    def calibration(self) -> Calibration:
        """Return the calibrated policy this file describes."""
        return Calibration(name="calibrated", **self.model_dump())


def _problems(exc: ValidationError) -> str:
    """One line per problem: `field.path: message`."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors())


@lru_cache(maxsize=8)
def _read_calibration(path: str, mtime_ns: int, size: int) -> Calibration:
    """Parse a calibration file; cached per (path, mtime, size), so a rewrite is picked up."""
    try:
        return CalibrationFile.model_validate_json(Path(path).read_bytes()).calibration()
    except ValidationError as exc:
        raise SetupError(
            f"Calibration file {path} is malformed ({_problems(exc)}); re-run calibrate."
        ) from exc
