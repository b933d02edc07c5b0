"""Each tunable is declared once (textbound/tunables.py); everything that lists them agrees."""

from dataclasses import fields
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from annotated_types import Ge, Le

from graph.context import Context, RunContext, resolve_tunables
from textbound.answer.gate_calibration import load_calibration
from textbound.errors import ConfigError
from textbound.serving.server import FIXED_BECAUSE, OVERRIDE_RULES
from textbound.settings import Settings, load_settings
from textbound.tunables import TUNABLE_NAMES, TUNABLES, Tunable

from ..conftest import make_settings

IDS = [t.name for t in TUNABLES]


@pytest.mark.parametrize("t", TUNABLES, ids=IDS)
def test_the_settings_field_matches_the_declaration(t: Tunable) -> None:
    """Settings writes each tunable's annotation by hand; it must be the declared type."""
    info = Settings.model_fields[t.name]
    assert info.annotation == t.settings_annotation
    assert info.default == (None if t.from_calibration else t.default)
    assert info.description == t.description
    assert [m.ge for m in info.metadata if isinstance(m, Ge)] == ([t.ge] if t.ge is not None
                                                                   else [])
    assert [m.le for m in info.metadata if isinstance(m, Le)] == ([t.le] if t.le is not None
                                                                   else [])


def test_context_tunables_and_override_rules_list_every_tunable() -> None:
    """Studio's Context, the RunContext and the HTTP rules hold exactly the declared names."""
    assert tuple(f.name for f in fields(Context)) == TUNABLE_NAMES
    assert tuple(f.name for f in fields(RunContext))[:len(TUNABLE_NAMES)] == TUNABLE_NAMES
    assert set(OVERRIDE_RULES) == set(TUNABLE_NAMES)
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
