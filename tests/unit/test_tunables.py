"""Each tunable is declared once (textbound/tunables.py); every form of it is derived from that."""

from dataclasses import fields
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest
from annotated_types import Ge, Le

from graph.context import Context, RunContext, TunableError, resolve_tunables
from textbound.answer.gate_calibration import load_calibration
from textbound.errors import ConfigError
from textbound.serving.server import FIXED_BECAUSE, OVERRIDE_RULES
from textbound.settings import Settings, load_settings
from textbound.tunables import TUNABLE_NAMES, TUNABLES, Calibrated, Tunable, TunableValues

from ..conftest import make_settings

IDS = [t.name for t in TUNABLES]


def _bounds(info: Any) -> tuple[Any, Any]:
    ge = [m.ge for m in info.metadata if isinstance(m, Ge)]
    le = [m.le for m in info.metadata if isinstance(m, Le)]
    return (ge[0] if ge else None), (le[0] if le else None)


def _out_of_bounds(t: Tunable) -> Any:
    """Return a value of the right kind that the declaration rules out, or None if none is."""
    if get_origin(t.type) is Literal:
        return "no-such-choice"
    if t.le is not None:
        return t.type(t.le) + 1
    return None


@pytest.mark.parametrize("t", TUNABLES, ids=IDS)
def test_the_settings_field_is_derived_from_the_declaration(t: Tunable, tmp_path: Path) -> None:
    """TEXTBOUND_<NAME> has the declared type, default, bounds and description; it enforces them."""
    info = Settings.model_fields[t.name]
    assert info.annotation == (t.type | None if t.from_calibration else t.type)
    assert info.default == (None if t.from_calibration else t.default)
    assert info.description == t.description
    assert _bounds(info) == (t.ge, t.le)
    bad = _out_of_bounds(t)
    if bad is not None:
        with pytest.raises(ConfigError, match=t.env):
            load_settings(_env_file=None, data_dir=tmp_path, **{t.name: bad})


@pytest.mark.parametrize("t", TUNABLES, ids=IDS)
def test_the_run_and_studio_forms_are_derived_from_the_declaration(t: Tunable,
                                                                   tmp_path: Path) -> None:
    """RunContext holds the value as typed (a number where the calibration supplies it), Studio's
    Context the same type or None with the description, and a run rejects what the bounds do."""
    run_type = get_type_hints(RunContext)[t.name]
    if t.from_calibration:  # Calibrated, which RunContext binds to the number
        assert run_type is Calibrated and get_args(RunContext.__orig_bases__[0]) == (t.type,)
    else:
        assert run_type == t.type
    studio = {f.name: f for f in fields(Context)}[t.name]
    assert get_type_hints(Context)[t.name] == t.type | None
    assert studio.default is None and studio.metadata["description"] == t.description
    bad = _out_of_bounds(t)
    if bad is not None:
        with pytest.raises(TunableError, match=t.name):
            resolve_tunables(make_settings(tmp_path), {t.name: bad})


def test_every_form_lists_the_tunables_in_the_declared_order() -> None:
    """Settings, Studio's Context, the RunContext and the HTTP rules hold exactly the declared
    names, in TunableValues' order (the order Studio shows)."""
    declared = tuple(f.name for f in fields(TunableValues))
    assert TUNABLE_NAMES == declared
    assert tuple(n for n in Settings.model_fields if n in declared) == declared
    assert tuple(f.name for f in fields(Context)) == declared
    assert tuple(f.name for f in fields(RunContext))[:len(declared)] == declared
    assert tuple(OVERRIDE_RULES) == declared
    assert set(FIXED_BECAUSE) == {n for n, rule in OVERRIDE_RULES.items() if rule == "fixed"}


def test_a_fixed_tunable_must_say_why() -> None:
    """Declaring a fixed tunable without the reason clients are told fails at import."""
    with pytest.raises(ValueError, match="says why"):
        Tunable("knob", int, description="A knob.", override="fixed", default=1)


def test_the_calibrated_thresholds_have_environment_variables(tmp_path: Path,
                                                               monkeypatch) -> None:
    """TEXTBOUND_FLOOR etc. win over the calibration; unset, the policy's value is used."""
    settings = make_settings(tmp_path, policy="seed_000")
    assert resolve_tunables(settings).floor == 0.5
    monkeypatch.setenv("TEXTBOUND_FLOOR", "0.55")
    tun = resolve_tunables(make_settings(tmp_path, policy="seed_000"))
    assert tun.floor == 0.55 and tun.gate.floor == 0.55


def test_a_bad_threshold_variable_says_what_it_allows(tmp_path: Path, monkeypatch) -> None:
    """An optional threshold out of bounds is reported with its range, like any number."""
    monkeypatch.setenv("TEXTBOUND_FLOOR", "3")
    with pytest.raises(ConfigError, match=r"TEXTBOUND_FLOOR=3: expected a number from -1.0 to 1.0"):
        load_settings(_env_file=None, data_dir=tmp_path)


def _distinct_values(t: Tunable, start: Any, count: int) -> list[Any]:
    """Return `count` valid values of t, each different from the one before (start first)."""
    if t.type is bool:
        choices: list[Any] = [True, False]
    elif get_origin(t.type) is Literal:
        choices = list(get_args(t.type))
    elif t.type is int:
        choices = [int(t.ge or 0) + i for i in range(3)]
    else:
        low, high = float(t.ge if t.ge is not None else 0), float(t.le if t.le is not None else 1)
        choices = [round(low + (high - low) * f, 4) for f in (0.15, 0.35, 0.55)]
    out, previous = [], start
    for i in range(count):
        previous = next(c for c in choices[i % len(choices):] + choices if c != previous)
        out.append(previous)
    return out


def _as_env(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("t", TUNABLES, ids=IDS)
def test_precedence_default_dotenv_environment_per_run(t: Tunable, tmp_path: Path,
                                                       monkeypatch) -> None:
    """Built-in default < .env < environment < configurable < context=, for every tunable."""
    monkeypatch.delenv(t.env, raising=False)
    dotenv = tmp_path / ".env"
    dotenv.write_text("")

    def resolved(context: Any = None, configurable: dict[str, Any] | None = None) -> Any:
        settings = Settings(_env_file=dotenv, data_dir=tmp_path)  # type: ignore[call-arg]
        return getattr(resolve_tunables(settings, context, configurable), t.name)

    default = t.default
    if t.from_calibration:
        default = getattr(load_calibration(make_settings(tmp_path).calibration_file), t.name)
    assert resolved() == default

    from_dotenv, from_env, from_configurable, from_context = _distinct_values(t, default, 4)
    dotenv.write_text(f"{t.env}={_as_env(from_dotenv)}\n")
    assert resolved() == from_dotenv
    monkeypatch.setenv(t.env, _as_env(from_env))
    assert resolved() == from_env
    assert resolved(configurable={t.name: from_configurable}) == from_configurable
    assert resolved(Context(**{t.name: from_context}),
                    {t.name: from_configurable}) == from_context
