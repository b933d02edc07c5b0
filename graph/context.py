"""Per-run tunables: a `Context` Studio renders, resolved over the settings in one helper.

Precedence, lowest first: built-in defaults < `.env` < environment (`TEXTBOUND_*`, both through
`Settings`) < per-run values. Per-run values come from `context=` (LangGraph >= 0.6, Studio) or,
because LangServe only sends `config["configurable"]`, from there; `context=` wins when both set
the same field. A field left `None` means "use the server's setting".
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, make_dataclass
from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from textbound.calibration import Calibration, load_calibration
from textbound.errors import TextboundError

__all__ = ["Context", "Tunables", "context_schema", "resolve_tunables", "TunableError",
           "TUNABLE_NAMES"]


def _f(description: str) -> Any:
    return field(default=None, metadata={"description": description})


@dataclass(kw_only=True)
class Context:
    """Per-run settings; None keeps the server's value. Thresholds are raw cosine in [-1, 1]."""

    policy: Literal["calibrated", "seed_000", "seed_002", "seed_004"] | None = _f(
        "Score-gate policy: 'calibrated' (thresholds fitted for the embedding model) or a fixed "
        "raw-cosine preset: 'seed_000' (a chunk must reach 0.7, none at 0.5 means off-topic), "
        "'seed_002' (the best chunk must exceed 0.7), 'seed_004' (best at least 0.3 and mean "
        "at least 0.6)."
    )
    top_k: int | None = _f("Chunks retrieved per question (1-50).")
    floor: float | None = _f(
        "Top-1 cosine below which nothing counts as evidence (refusal: empty_retrieval)."
    )
    answer_threshold: float | None = _f(
        "Gate score needed to answer (refusal below it: insufficient_context)."
    )
    lexical_weight: float | None = _f(
        "Weight of IDF-weighted word overlap when re-ranking retrieved chunks (0 = cosine only)."
    )
    # provenance: seed 003 asks for 2 chunks, seed 004 for 100 characters
    min_chunks: int | None = _f(
        "Chunks that must clear the answer threshold; 2 or more refuses what only one passage "
        "matches (refusal: insufficient_context)."
    )
    min_context_chars: int | None = _f(
        "Characters of evidence required (refusal below it: insufficient_context)."
    )
    answerability: bool | None = _f(
        "Refuse unless the answerability reader finds a passage that answers the question "
        "(refusal: insufficient_context, check 'answerable')."
    )
    answerable_threshold: float | None = _f(
        "Reader probability (0-1) that the best passage answers, needed to answer."
    )
    answerability_passages: int | None = _f(
        "Top evidence chunks (by score) the answerability reader reads (1-20)."
    )
    refuse_unknown_names: bool | None = _f(
        "Refuse a question naming something the collection never mentions (e.g. 'Windows')."
    )
    keyword_coverage_warn: float | None = _f(
        "Warn (never refuse) when less than this share of the question's keywords is in the "
        "evidence."
    )
    grounding_threshold: float | None = _f("Share of answer sentences that must be supported.")
    sentence_support_threshold: float | None = _f("Support score a sentence needs (0-1).")
    confidence_threshold: float | None = _f(
        "Confidence a chat model must report for its answer (refusal below it: low_confidence)."
    )
    generator: Literal["extractive", "chat"] | None = _f(
        "'extractive' (verbatim evidence sentences) or 'chat' (the configured chat model)."
    )
    min_answer_coverage: float | None = _f(
        "Share of the question's (IDF-weighted) words the answer must contain; 0 turns it off."
    )
    partial_answers: bool | None = _f("Keep only supported sentences instead of refusing.")
    refusal_style: Literal["detailed", "standard"] | None = _f(
        "'detailed': a message for each reason saying why it refused; 'standard': one message "
        "for every refusal."
    )


TUNABLE_NAMES = tuple(f.name for f in fields(Context))


class TunableError(ValueError):
    """A per-run value is of the wrong type or out of bounds."""


class Tunables(BaseModel):
    """The values in force for one run, after precedence and bounds checks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: Literal["calibrated", "seed_000", "seed_002", "seed_004"]
    top_k: int = Field(ge=1, le=50)
    floor: float = Field(ge=-1.0, le=1.0)
    answer_threshold: float = Field(ge=-10.0, le=10.0)
    lexical_weight: float = Field(ge=0.0, le=5.0)
    min_chunks: int = Field(ge=1, le=50)
    min_context_chars: int = Field(ge=0, le=100_000)
    refuse_unknown_names: bool
    answerability: bool
    answerable_threshold: float = Field(ge=0.0, le=1.0)
    answerability_passages: int = Field(ge=1, le=20)
    keyword_coverage_warn: float = Field(ge=0.0, le=1.0)
    grounding_threshold: float = Field(ge=0.0, le=1.0)
    sentence_support_threshold: float = Field(ge=0.0, le=1.0)
    confidence_threshold: float = Field(ge=0.0, le=1.0)
    generator: Literal["extractive", "chat"]
    min_answer_coverage: float = Field(ge=0.0, le=1.0)
    partial_answers: bool
    refusal_style: Literal["detailed", "standard"]
    max_question_chars: int
    max_selected_text_chars: int
    calibration: dict[str, Any]

    def gate(self) -> Calibration:
        """Return the gate policy with this run's floor and answer threshold applied."""
        c = dict(self.calibration)
        c["floor"], c["answer_threshold"] = self.floor, self.answer_threshold
        c["answerable_threshold"] = self.answerable_threshold
        return Calibration(**c)


def _overrides(context: Any, configurable: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in TUNABLE_NAMES:
        if configurable and configurable.get(name) is not None:
            out[name] = configurable[name]
    if context is not None:
        items = context.items() if isinstance(context, dict) else (
            (n, getattr(context, n, None)) for n in TUNABLE_NAMES)
        for name, value in items:
            if name in TUNABLE_NAMES and value is not None:
                out[name] = value
    return out


def resolve_tunables(settings: Any, context: Any = None,
                     configurable: dict[str, Any] | None = None) -> Tunables:
    """Resolve defaults < environment < per-run values into Tunables, or raise TunableError."""
    over = _overrides(context, configurable)
    policy = over.get("policy", settings.policy)
    if policy not in ("calibrated", "seed_000", "seed_002", "seed_004"):
        raise TunableError(
            f"policy must be calibrated, seed_000, seed_002 or seed_004, not {policy!r}")
    gate: Calibration = load_calibration(settings.calibration_file, policy)
    values: dict[str, Any] = {
        "policy": policy,
        "top_k": settings.top_k,
        "floor": gate.floor,
        "answer_threshold": gate.answer_threshold,
        "lexical_weight": settings.lexical_weight,
        "min_chunks": settings.min_chunks,
        "min_context_chars": settings.min_context_chars,
        "refuse_unknown_names": settings.refuse_unknown_names,
        "answerability": settings.answerability,
        "answerable_threshold": gate.answerable_threshold,
        "answerability_passages": settings.answerability_passages,
        "keyword_coverage_warn": settings.keyword_coverage_warn,
        "grounding_threshold": settings.grounding_threshold,
        "sentence_support_threshold": settings.sentence_support_threshold,
        "confidence_threshold": settings.confidence_threshold,
        "generator": settings.generator,
        "min_answer_coverage": settings.min_answer_coverage,
        "partial_answers": settings.partial_answers,
        "refusal_style": getattr(settings, "refusal_style", "detailed"),
        "max_question_chars": settings.max_question_chars,
        "max_selected_text_chars": settings.max_selected_text_chars,
        "calibration": gate.rule_dict(),
    }
    values.update({k: v for k, v in over.items() if k != "policy"})
    try:
        return Tunables(**values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise TunableError(f"invalid setting ({problems})") from exc


def context_schema(settings: Any) -> type[Context]:
    """Return `Context` with the values in force as its JSON-schema defaults, for Studio.

    The fields still default to None ("keep the server's value"), so a run that leaves one out
    keeps the environment's setting; only the schema Studio renders shows the real value (the
    policy, top_k, the calibration's thresholds) instead of null. Studio sending those values
    back changes nothing. Falls back to plain `Context` when the settings cannot be resolved.
    """
    try:
        values = resolve_tunables(settings)
    except (TunableError, TextboundError):
        return Context
    hints = get_type_hints(Context)
    specs = [
        (f.name, Annotated[hints[f.name], Field(json_schema_extra={"default": getattr(values,
                                                                                      f.name)})],
         field(default=None, metadata=f.metadata))
        for f in fields(Context)
    ]
    schema = make_dataclass("Context", specs, bases=(Context,), kw_only=True)
    schema.__doc__ = Context.__doc__
    schema.__module__ = __name__
    return schema
