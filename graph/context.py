"""The run context: per-run tunables resolved once, at the graph's entry, into a `RunContext`.

`Context` (what Studio renders and a caller may send) is built from the declarations in
`textbound.tunables`; `RunContext` inherits the same fields with their types from
`TunableValues`, so every read is checked. `resolve_tunables` is the one resolver; the graph's
first node calls it (through `enter_run`, which graph.builder puts in front of that node) once
per run, unless the entry point already did (the HTTP server resolves once per request to check
the client's overrides, and hands the result on); every later node reads the result from the
state (`State.run`, never checkpointed) as its `runtime.context`.
Precedence, lowest first: built-in defaults < `.env` < environment (`TEXTBOUND_*`, both through
`Settings`) < per-run values. Per-run values come from `context=` (LangGraph >= 0.6, Studio) or,
because LangServe only sends `config["configurable"]`, from there; `context=` wins when both set
the same field. A field left `None` means "use the server's setting"; a threshold the server
leaves unset too (floor, answer_threshold, answerable_threshold) is the calibration's value for the
policy in force.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, make_dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field, ValidationError, create_model

from textbound.answer.gate_calibration import Calibration, load_calibration
from textbound.errors import TextboundError
from textbound.settings import Settings
from textbound.tunables import POLICY_NAMES, TUNABLE_NAMES, TUNABLES, Tunable, TunableValues

__all__ = ["Context", "RUN_CONTEXT_KEY", "RunContext", "context_schema", "enter_run",
           "resolve_tunables", "run_context", "TunableError", "TUNABLE_NAMES"]

_CONTEXT_DOC = ("Per-run settings; None keeps the server's value. Thresholds are raw cosine in "
                "[-1, 1].")


def _context_field(t: Tunable, annotation: Any = None) -> tuple[str, Any, Any]:
    return (t.name, annotation if annotation is not None else t.type | None,
            field(default=None, metadata={"description": t.description}))


# Context is built from textbound.tunables.TUNABLES, so mypy cannot see its fields: it gets a
# view whose attributes are Any. Only the resolver reads it; nodes read RunContext.
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


@dataclass(frozen=True, slots=True, kw_only=True)
class RunContext(TunableValues[float]):
    """The values in force for one run: resolved once at the graph's entry, then only read.

    Every node receives it as `runtime.context` (LangGraph's runtime context); nothing rebuilds
    it during a run. Its tunable fields, first, are `textbound.tunables.TunableValues`'s, typed
    there so mypy checks each read; the calibrated thresholds are numbers here, never None.
    """

    max_question_chars: int
    max_selected_text_chars: int
    history_turns: int
    history_chars: int
    gate: Calibration
    """The gate policy in force, with this run's floor and thresholds applied."""
    problem: str | None = None
    """Why this run's own settings were rejected; the run then uses the server's and
    check_question refuses it (invalid_question) saying so."""
    run_id: str = ""
    """This run's id, filled in at the graph's entry (the response's `run_id`)."""
    thread_id: str | None = None
    """The conversation this run belongs to (`configurable.thread_id`), None when it stands
    alone."""

    def tunables(self) -> dict[str, Any]:
        """Return the tunables' values by name (diagnostics, traces, evaluation reports)."""
        return {name: getattr(self, name) for name in TUNABLE_NAMES}


RUN_CONTEXT_KEY = "textbound_run_context"
"""The `configurable` key an entry point that already resolved the run (the HTTP server) uses to
hand its `RunContext` to the graph, which then does not resolve it again."""


# bounds and types are checked by a model built from the declarations, so each tunable's bounds
# are written once (textbound.tunables) and the error messages name the field
_Checked: Any = create_model(  # type: ignore[call-overload]
    "_Checked", __config__=ConfigDict(extra="forbid"),
    **{t.name: (t.type, Field(ge=t.ge, le=t.le)) for t in TUNABLES},
)


def _overrides(context: Any, configurable: Mapping[str, Any] | None) -> dict[str, Any]:
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


def resolve_tunables(settings: Settings, context: Any = None,
                     configurable: Mapping[str, Any] | None = None) -> RunContext:
    """Resolve defaults < .env < environment < per-run values into a RunContext.

    Raises TunableError for a per-run value of the wrong type or out of bounds (and
    `TextboundError` when the calibration cannot be read).
    """
    over = _overrides(context, configurable)
    base = settings.tunable_values()
    policy = over.get("policy", base.policy)
    if policy not in POLICY_NAMES:
        raise TunableError(f"policy must be {', '.join(POLICY_NAMES[:-1])} or "
                           f"{POLICY_NAMES[-1]}, not {policy!r}")
    gate: Calibration = load_calibration(settings.calibration_file, policy)
    values: dict[str, Any] = {}
    for t in TUNABLES:
        value = policy if t.name == "policy" else getattr(base, t.name)
        if value is None and t.from_calibration:  # unset: the policy's own value
            value = getattr(gate, t.name)
        values[t.name] = value
    values.update({k: v for k, v in over.items() if k != "policy"})
    try:
        checked = _Checked(**values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise TunableError(f"invalid setting ({problems})") from exc
    tun = {t.name: getattr(checked, t.name) for t in TUNABLES}
    return RunContext(
        **tun,
        max_question_chars=settings.max_question_chars,
        max_selected_text_chars=settings.max_selected_text_chars,
        history_turns=settings.history_turns,
        history_chars=settings.history_chars,
        # a floor set for the run (the environment, a client tightening it) is a hard floor:
        # the question's words pass only the calibration's own
        gate=replace(gate, floor=tun["floor"], answer_threshold=tun["answer_threshold"],
                     answerable_threshold=tun["answerable_threshold"],
                     floor_words=gate.floor_words if tun["floor"] == gate.floor else None),
    )


def run_context(settings: Settings, context: Any = None,
                configurable: Mapping[str, Any] | None = None) -> RunContext:
    """Return the run's context for the graph's entry: never raises for a bad per-run value.

    A `RunContext` passed in (by `context=` or under `RUN_CONTEXT_KEY`) is used as it is. A
    per-run value that is rejected gives the server's own values with `problem` set, so the run
    refuses (invalid_question) with a well-formed response.
    """
    if isinstance(context, RunContext):
        return context
    given = (configurable or {}).get(RUN_CONTEXT_KEY)
    if isinstance(given, RunContext):
        return given
    try:
        return resolve_tunables(settings, context, configurable)
    except (TunableError, TextboundError) as exc:
        return replace(resolve_tunables(settings), problem=str(exc))


def enter_run(settings: Settings, context: Any, config: Mapping[str, Any],
              run_id: str | None = None) -> RunContext:
    """Return the context of the run that starts now: the one helper the graph's entry calls.

    `context` is what the caller passed as `context=` (LangGraph has already made a dict of it
    a `Context`, raising TypeError for an unknown key), `config` the run's config: per-run values
    may come from either (`run_context`). The run's thread is `configurable.thread_id`
    (validated: ThreadIdError names the rule) and its id is `run_id` (the config's, as
    LangGraph's runtime reports it), else the id the trace gives the graph's run
    (`textbound.records.tracing.graph_run_id`), else a new one.
    """
    from textbound.conversation.threads import validate_thread_id
    from textbound.records.tracing import graph_run_id

    configurable = config.get("configurable") or {}
    ctx = run_context(settings, context, configurable)
    thread_id = configurable.get("thread_id")
    if thread_id is not None:
        validate_thread_id(thread_id)
    found = ctx.run_id or run_id or graph_run_id(config) or str(uuid.uuid4())
    return replace(ctx, run_id=found, thread_id=thread_id)


def context_schema(settings: Settings) -> type[Context]:
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
