"""benchmarks/ablate.py switches a rule off wherever the graph bound it."""

from __future__ import annotations

import re
import sys
import types

import pytest

from benchmarks.ablate import conversation_figures, switch_off


def test_a_rule_is_switched_off_in_its_module_and_where_it_was_imported(monkeypatch) -> None:
    home = types.ModuleType("tb_ablate_home")

    def rule(text: str) -> bool:
        return "yes" in text

    home.rule = rule  # type: ignore[attr-defined]
    user = types.ModuleType("tb_ablate_user")
    user.rule = rule  # type: ignore[attr-defined]  # as `from tb_ablate_home import rule` binds it
    monkeypatch.setitem(sys.modules, "tb_ablate_home", home)
    monkeypatch.setitem(sys.modules, "tb_ablate_user", user)
    assert switch_off("tb_ablate_home:rule=False") == 2
    assert home.rule("yes") is False and user.rule("yes") is False
    assert switch_off("tb_ablate_home:rule=set()") == 2  # switched again: both follow
    assert home.rule("yes") == set() and user.rule("yes") == set()


def test_a_numeric_constant_is_set_in_its_module_and_where_it_was_imported(monkeypatch) -> None:
    home = types.ModuleType("tb_ablate_home")
    home.BONUS = 0.2  # type: ignore[attr-defined]
    home.LIMIT = 3  # type: ignore[attr-defined]
    user = types.ModuleType("tb_ablate_user")
    user.BONUS = home.BONUS  # type: ignore[attr-defined]  # `from tb_ablate_home import BONUS`
    monkeypatch.setitem(sys.modules, "tb_ablate_home", home)
    monkeypatch.setitem(sys.modules, "tb_ablate_user", user)
    assert switch_off("tb_ablate_home:BONUS=0") == 2
    assert home.BONUS == 0.0 and user.BONUS == 0.0 and isinstance(user.BONUS, float)
    assert switch_off("tb_ablate_home:LIMIT=5") == 1
    assert home.LIMIT == 5 and isinstance(home.LIMIT, int)


def test_conversation_figures_read_the_calibrated_policy() -> None:
    part = {"answerable": {"n": 105, "correct": 82}, "near_miss": {"n": 27, "answered": 2},
            "out_of_corpus": {"n": 4, "answered": 0}}
    report = {"conversations": {"calibrated": {
        "follow_ups": part, "first_turns": {**part, "answerable": {"n": 56, "correct": 43}},
        "rewrite": {"ok": 93, "n": 116}}}}
    line = conversation_figures(report)
    assert line.startswith("follow-ups answered rightly 82 of 105, near-miss follow-ups "
                           "answered 2 of 27")
    assert "first turns right 43 of 56" in line and line.endswith("rewrites right 93 of 116")


def test_a_pattern_is_replaced_by_one_that_matches_nothing(monkeypatch) -> None:
    home = types.ModuleType("tb_ablate_home")
    home.WHY = re.compile(r"^why\b")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tb_ablate_home", home)
    assert home.WHY.match("why not?")
    assert switch_off("tb_ablate_home:WHY=never") == 1
    assert not home.WHY.match("why not?") and home.WHY.sub("-", "why") == "why"
    assert home.WHY.split("why not") == ["why not"]


@pytest.mark.parametrize("spec", ["tb_ablate_nowhere", "os:path=None", "json:dumps=maybe",
                                  "json:dumps=0", "os:sep=1", "json:dumps=never", "os:sep=never"])
def test_a_bad_spec_says_how_to_write_one(spec: str) -> None:
    with pytest.raises(SystemExit, match="MODULE:FUNCTION=VALUE|has no function"):
        switch_off(spec)
