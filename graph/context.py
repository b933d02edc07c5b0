"""Per-run tunables: a `Context` Studio renders, resolved over the settings in one helper.

Both `Context` and `Tunables` are built from the declarations in `textbound.tunables`.
Precedence, lowest first: built-in defaults < `.env` < environment (`TEXTBOUND_*`, both through
`Settings`) < per-run values. Per-run values come from `context=` (LangGraph >= 0.6, Studio) or,
because LangServe only sends `config["configurable"]`, from there; `context=` wins when both set
the same field. A field left `None` means "use the server's setting"; a threshold the server
leaves unset too (floor, answer_threshold, answerable_threshold) is the calibration's value for the
policy in force.
"""

from __future__ import annotations

from dataclasses import field, make_dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from textbound.calibration import Calibration, load_calibration
from textbound.errors import TextboundError
from textbound.tunables import POLICY_NAMES, TUNABLE_NAMES, TUNABLES, Tunable

__all__ = ["Context", "Tunables", "context_schema", "resolve_tunables", "TunableError",
           "TUNABLE_NAMES"]

_CONTEXT_DOC = ("Per-run settings; None keeps the server's value. Thresholds are raw cosine in "
                "[-1, 1].")


def _context_field(t: Tunable, annotation: Any = None) -> tuple[str, Any, Any]:
    return (t.name, annotation if annotation is not None else t.type | None,
            field(default=None, metadata={"description": t.description}))


# Context and Tunables are built from textbound.tunables.TUNABLES, so mypy cannot see their
# fields: it gets a view whose tunable attributes are Any.
if TYPE_CHECKING:
    class Context:
        """Per-run settings; None keeps the server's value."""

        def __init__(self, **values: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...
else:
    Context = make_dataclass("Context", [_context_field(t) for t in TUNABLES], kw_only=True)
    Context.__module__ = __name__
    Context.__doc__ = _CONTEXT_DOC


class TunableError(ValueError):
    """A per-run value is of the wrong type or out of bounds."""


class _TunablesBase(BaseModel):
    """The values in force for one run, after precedence and bounds checks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...

    def gate(self) -> Calibration:
        """Return the gate policy with this run's floor and thresholds applied."""
        c = dict(self.calibration)
        c["floor"], c["answer_threshold"] = self.floor, self.answer_threshold
        c["answerable_threshold"] = self.answerable_threshold
        return Calibration(**c)


if TYPE_CHECKING:
    Tunables = _TunablesBase
else:
    Tunables = create_model(
        "Tunables", __base__=_TunablesBase, __module__=__name__,
        **{t.name: (t.type, Field(ge=t.ge, le=t.le)) for t in TUNABLES},
        max_question_chars=(int, ...),
        max_selected_text_chars=(int, ...),
        calibration=(dict[str, Any], ...),
    )
    Tunables.__doc__ = _TunablesBase.__doc__


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
    if policy not in POLICY_NAMES:
        raise TunableError(f"policy must be {', '.join(POLICY_NAMES[:-1])} or "
                           f"{POLICY_NAMES[-1]}, not {policy!r}")
    gate: Calibration = load_calibration(settings.calibration_file, policy)
    values: dict[str, Any] = {}
    for t in TUNABLES:
        value = policy if t.name == "policy" else getattr(settings, t.name)
        if value is None and t.from_calibration:  # unset: the policy's own value
            value = getattr(gate, t.name)
        values[t.name] = value
    values["max_question_chars"] = settings.max_question_chars
    values["max_selected_text_chars"] = settings.max_selected_text_chars
    values["calibration"] = gate.rule_dict()
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
    specs = [
        _context_field(t, Annotated[t.type | None,
                                    Field(json_schema_extra={"default": getattr(values, t.name)})])
        for t in TUNABLES
    ]
    schema = make_dataclass("Context", specs, bases=(Context,), kw_only=True)
    schema.__doc__ = Context.__doc__
    schema.__module__ = __name__
    return schema
