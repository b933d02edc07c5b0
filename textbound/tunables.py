"""The per-run tunables, each declared once: type, bounds, default, description, HTTP rule.

`TunableValues` is the declaration: one typed field per tunable, its `tunable(...)` saying the
rest. Everything else that lists the tunables is derived from it: the table `TUNABLES`, the
`Settings` fields (`TEXTBOUND_<NAME>`, textbound/settings.py), the `Context` Studio renders and
the `RunContext` a run uses (a `TunableValues[float]`, graph/context.py), the HTTP server's
override rules (`OVERRIDE_RULES`, `FIXED_BECAUSE`) and the thresholds the diagnostics report.
Adding a knob is one field here and the code that reads it.

Precedence, lowest first: the default declared here < `.env` < the environment < per-run values.
A `Calibrated` tunable has no built-in default: unset, it is the value in the calibration of the
policy in force.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import NoneType
from typing import Any, Generic, Literal, TypeVar, get_args, get_type_hints

__all__ = ["Calibrated", "OVERRIDE_RULES", "FIXED_BECAUSE", "POLICY_NAMES", "Rule", "TUNABLES",
           "TUNABLE_NAMES", "Tunable", "TunableValues", "tunable"]

Rule = Literal["raise_only", "fixed", "off_only", "free", "stricter_policy"]
"""How an HTTP client may change a tunable when the server does not set allow_gate_override.

raise_only: a higher value (or True) is always stricter, so it may only go up. fixed: it may not
change (the declaration says why). off_only: turning it on lets through answers the server
would refuse. free: presentation or warnings only. stricter_policy: a preset that answers no
more than the server's (`textbound.serving.server.STRICTER_POLICIES`).
"""

PolicyName = Literal["calibrated", "seed_000", "seed_002", "seed_004"]
POLICY_NAMES: tuple[str, ...] = get_args(PolicyName)


@dataclass(frozen=True)
class Tunable:
    """One per-run setting: what it is, what it may be, and who may change it."""

    name: str
    type: Any
    """The value's type (int, float, bool or a Literal); settings and runs may also leave it
    None (unset)."""
    description: str
    """What the setting does, in the words users read: Settings, Studio, the README."""
    override: Rule
    default: Any = None
    from_calibration: bool = False
    """No built-in default (declared `Calibrated`): unset, the calibration of the policy in force
    supplies it."""
    ge: float | None = None
    le: float | None = None
    fixed_because: str | None = None
    """For a fixed tunable, why a client may not change it (told to the client that tries)."""
    diagnostics: bool = False
    """Reported among the response's diagnostics["thresholds"]."""

    def __post_init__(self) -> None:
        if (self.override == "fixed") != (self.fixed_because is not None):
            raise ValueError(f"{self.name}: a fixed tunable, and only one, says why it is fixed")

    @property
    def env(self) -> str:
        """Return the environment variable that sets it."""
        return f"TEXTBOUND_{self.name.upper()}"

    @property
    def settings_annotation(self) -> Any:
        """Return the type its `Settings` field has (optional when the calibration supplies it)."""
        return self.type | None if self.from_calibration else self.type


Calibrated = TypeVar("Calibrated", bound=float | None)
"""A threshold the calibration supplies: None (unset: the policy's value) in the settings and in
Studio's form, always a number in a run."""

_SPEC = "tunable"


def tunable(*, description: str, override: Rule, default: Any = None, ge: float | None = None,
            le: float | None = None, fixed_because: str | None = None,
            diagnostics: bool = False) -> Any:
    """Declare a `TunableValues` field: everything `Tunable` says but its name and type.

    The field has no default in `TunableValues` (a run always holds every value); `default` is
    the setting's built-in default. mypy reads the call as a default, so it does not flag a
    `RunContext` built without a tunable: the one constructor, `resolve_tunables`, passes all.
    """
    spec = {"description": description, "override": override, "default": default, "ge": ge,
            "le": le, "fixed_because": fixed_because, "diagnostics": diagnostics}
    return field(metadata={_SPEC: spec, "description": description})


@dataclass(frozen=True, slots=True, kw_only=True)
class TunableValues(Generic[Calibrated]):
    """Every per-run tunable, in the order Studio shows them: the one declaration.

    Each field's type is the value a run reads (mypy checks every read of a `RunContext`);
    `tunable(...)` gives its default, bounds, description and HTTP rule. `Calibrated` fields are
    numbers in a run (`TunableValues[float]`) and may be None in the settings
    (`Settings.tunable_values()`, a `TunableValues[float | None]`).
    """

    policy: PolicyName = tunable(
        default="calibrated", override="stricter_policy", diagnostics=True,
        description="Score-gate policy: 'calibrated' (thresholds and weights fitted for the "
        "embedding model, from calibration_file) or a fixed raw-cosine preset: 'seed_000' (a "
        "chunk must reach 0.7; none at 0.5 means off-topic), 'seed_002' (the best chunk must "
        "exceed 0.7), 'seed_004' (best at least 0.3 and mean at least 0.6).",
    )
    top_k: int = tunable(
        default=5, ge=1, le=50, override="fixed", diagnostics=True,
        fixed_because="fewer chunks raise the mean score the gate reads and more chunks meet "
        "min_chunks sooner, so neither a smaller nor a larger top_k is always stricter",
        description="Chunks retrieved per question.",
    )
    floor: Calibrated = tunable(
        ge=-1.0, le=1.0, override="raise_only", diagnostics=True,
        description="Top-1 cosine below which nothing counts as evidence (refusal: "
        "empty_retrieval). Unset: the value of the policy in force.",
    )
    # a calibrated gate score is a weighted sum of features, not a cosine: wider bounds
    answer_threshold: Calibrated = tunable(
        ge=-10.0, le=10.0, override="raise_only", diagnostics=True,
        description="Gate score needed to answer (refusal below it: insufficient_context). "
        "Unset: the value of the policy in force.",
    )
    lexical_weight: float = tunable(
        default=0.3, ge=0, le=5, override="fixed",
        fixed_because="it reorders the evidence rather than raising a bar",
        description="Re-ranking: cosine + this x IDF-weighted share of question words in a "
        "chunk (0 = cosine only).",
    )
    retrieval: Literal["hybrid", "dense"] = tunable(
        default="hybrid", override="fixed",
        fixed_because="it changes which passages are evidence rather than raising a bar",
        description="'hybrid': candidates by the question's vector and by BM25 over its words, "
        "fused by Qdrant (reciprocal rank fusion), so an exact command, flag or term the book "
        "states verbatim is found; 'dense': by the vector alone.",
    )
    # may be turned off, not on: a corrected question can be answered where the typo is not
    spelling: bool = tunable(
        default=True, override="off_only",
        description="Correct misspelt question words against the collection's own words "
        "before retrieval ('Isaak Sym' -> 'Isaac Sim'; one edit a word, never a word the "
        "collection uses, never towards a word it lacks; textbound/answer/spelling.py). The gates "
        "and the reader read the corrected question; diagnostics show it.",
    )
    # provenance: seed 003 asks for 2
    min_chunks: int = tunable(
        default=1, ge=1, le=50, override="raise_only", diagnostics=True,
        description="Chunks that must clear the answer threshold; 2 or more refuses "
        "(insufficient_context) a question only one passage matches.",
    )
    # provenance: seed 004's check 2
    min_context_chars: int = tunable(
        default=100, ge=0, le=100_000, override="raise_only",
        diagnostics=True,
        description="Refuse (insufficient_context) when the evidence holds fewer characters.",
    )
    # may be turned on, not off
    answerability: bool = tunable(
        default=True, override="raise_only", diagnostics=True,
        description="Read the best evidence with the answerability reader "
        "(models/answerability) and refuse (insufficient_context, check 'answerable') when no "
        "passage answers the question; the model is loaded once at start-up. false turns the "
        "check off.",
    )
    answerable_threshold: Calibrated = tunable(
        ge=0.0, le=1.0, override="raise_only", diagnostics=True,
        description="Reader probability (0-1) that the best passage answers, needed to answer. "
        "Unset: the value of the policy in force.",
    )
    answerability_passages: int = tunable(
        default=3, ge=1, le=20, override="fixed", diagnostics=True,
        fixed_because="more passages can only find a better answer, fewer change which "
        "passage is read",
        description="Top evidence chunks (by score) the answerability reader reads per "
        "question.",
    )
    answer_read_threshold: float = tunable(
        default=0.015, ge=0, le=1, override="raise_only", diagnostics=True,
        description="When the reader was unsure of the passages (under 0.5), it reads the "
        "answer itself: below this probability that the answer's own text answers the "
        "question, refuse (question_not_answered, check 'answer_read'). 0 = off; the value is "
        "one step (0.005) below 0.02, the largest that refused no right answer on the dev pool, "
        "SQuAD 2.0 or ClapNQ (docs/pool.md).",
    )
    # may be turned on, not off
    refuse_unknown_names: bool = tunable(
        default=True, override="raise_only",
        description="Refuse (empty_retrieval) a question naming something the collection never "
        "mentions: a capitalised word it uses in no form ('Windows' in a book that only says "
        "'window'), however well the rest of the question retrieves.",
    )
    # provenance: seed 002's gate 2
    keyword_coverage_warn: float = tunable(
        default=0.5, ge=0, le=1, override="free",
        description="Below this share of the question's keywords in the evidence, a warning is "
        "recorded (never a refusal).",
    )
    grounding_threshold: float = tunable(
        default=0.7, ge=0, le=1, override="raise_only",
        diagnostics=True,
        description="Share of answer sentences that must be supported.",
    )
    sentence_support_threshold: float = tunable(
        default=0.6, ge=0, le=1, override="raise_only",
        diagnostics=True,
        description="A sentence counts as supported when its support score (max of lexical "
        "containment and cosine to a cited sentence) reaches this.",
    )
    # provenance: seed 002's gate 3
    confidence_threshold: float = tunable(
        default=0.6, ge=0, le=1, override="raise_only",
        diagnostics=True,
        description="Refuse (low_confidence) when the chat model reports less confidence in its "
        "answer (the extractive generator reports none).",
    )
    generator: Literal["extractive", "chat"] = tunable(
        default="extractive", override="fixed",
        fixed_because="the chat generator answers in its own words where the extractive one "
        "quotes",
        description="'extractive': answer with verbatim evidence sentences (no model, no key). "
        "'chat': a LangChain chat model named by chat_model.",
    )
    chat_evidence: Literal["passages", "units"] = tunable(
        default="units", override="free",
        description="What the chat generator is handed: 'passages', the retrieved chunks whole; "
        "'units', their most relevant answer units (a sentence, a table row with its header, a "
        "lead-in with its code block), each cited under its chunk (textbound/answer/"
        "chat_units.py).",
    )
    min_answer_coverage: float = tunable(
        default=0.0, ge=0, le=1, override="raise_only",
        description="Refuse (question_not_answered) when the answer's sentences and section "
        "titles hold less than this IDF-weighted share of the question's words. 0 = off; 0.5 "
        "trades false refusals for far fewer near-miss leaks (docs/evaluation.md).",
    )
    partial_answers: bool = tunable(
        default=False, override="off_only",
        description="Keep only supported sentences when enough remain instead of refusing.",
    )
    # provenance: the detailed messages follow seed 000's templates, the standard one 002's
    refusal_style: Literal["detailed", "standard"] = tunable(
        default="detailed", override="free",
        description="'detailed': a message for each reason saying why it refused; 'standard': "
        "one message for every refusal ('This information cannot be verified from the book "
        "content.').",
    )


def _declared() -> tuple[Tunable, ...]:
    """Read `TunableValues` into the table: each field's name, type and `tunable(...)`."""
    hints = get_type_hints(TunableValues)
    number = next(a for a in get_args(Calibrated.__bound__) if a is not NoneType)
    return tuple(
        Tunable(f.name, number if hints[f.name] is Calibrated else hints[f.name],
                from_calibration=hints[f.name] is Calibrated, **f.metadata[_SPEC])
        for f in fields(TunableValues)
    )


TUNABLES: tuple[Tunable, ...] = _declared()
"""Every per-run tunable, in the order Studio shows them (read from `TunableValues`)."""

TUNABLE_NAMES: tuple[str, ...] = tuple(t.name for t in TUNABLES)

OVERRIDE_RULES: dict[str, Rule] = {t.name: t.override for t in TUNABLES}
"""How an HTTP client may change each tunable without `allow_gate_override`."""

FIXED_BECAUSE: dict[str, str] = {t.name: t.fixed_because for t in TUNABLES
                                 if t.fixed_because is not None}
"""Why a fixed tunable cannot be changed per request, told to the client that tries."""
