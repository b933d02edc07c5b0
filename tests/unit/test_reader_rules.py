"""training/answerability/rules.py: a reader's scores per mining rule, positives vs negatives."""

from __future__ import annotations

import pytest

from textbound.answer.answerability import FakeReader
from training.answerability.rules import rule_scores


def _record(page: str, rule: str, n: int, context: str) -> dict:
    return {"id": f"docmining:man:pkg:{page}:-x:{rule}:{n}", "question": "what does -x do in prog",
            "context": context, "answers": [], "is_impossible": rule.startswith("neg-"),
            "title": f"{page}(1) / OPTIONS", "source": "test"}


def test_a_reader_that_keys_on_the_option_cannot_tell_a_mention_from_a_description() -> None:
    records = [_record(f"p{i}", "option", i, "-x\nprints the widgets") for i in range(6)]
    records += [_record(f"p{i}", "neg-mention", 10 + i, "SYNOPSIS\n\nprog [-x]") for i in range(6)]
    records += [_record(f"p{i}", "neg-neighbour", 20 + i, "-y\nsorts them") for i in range(6)]
    records += [_record("other", "option", 30, "-x\nprints")]  # a page no negative comes from

    def keyed(question: str, passage: str) -> float:  # present option: answerable
        return 0.9 if "-x" in passage else 0.1

    def reading(question: str, passage: str) -> float:  # a description: answerable
        return 0.9 if "prints" in passage else 0.1

    res = rule_scores({"keyed": FakeReader(keyed), "reading": FakeReader(reading)}, records,
                      "option", ["neg-mention", "neg-neighbour"], sample=10)
    assert res["keyed"]["option"]["n"] == 6  # drawn from the negatives' pages only
    assert res["keyed"]["neg-neighbour"]["auroc"] == 1.0
    assert res["keyed"]["neg-mention"]["auroc"] == 0.5
    assert res["keyed"]["neg-mention"]["over_half"] == 1.0
    assert res["reading"]["neg-mention"]["auroc"] == 1.0
    assert res["reading"]["neg-mention"]["mean"] == pytest.approx(0.1)
