"""benchmarks/retrieval_recall.py runs the real retrieve node in every mode it reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.pool import BOOKS
from benchmarks.retrieval_recall import MODES, SETS, measure
from tests.conftest import make_settings


def _book(folder: Path) -> tuple[Path, Path]:
    corpus = folder / "corpus"
    corpus.mkdir()
    (corpus / "tides.md").write_text(
        "# Tides\n\nThe tide rises twice a day because the Moon pulls the oceans toward it. "
        "Spring tides happen when the Sun and the Moon line up.\n", "utf-8")
    (corpus / "volcanoes.md").write_text(
        "# Volcanoes\n\nA volcano erupts when molten rock called magma reaches the surface. "
        "Basalt is the rock that cooled lava most often forms.\n", "utf-8")
    questions = folder / "questions.jsonl"
    rows = [
        {"id": "t1", "question": "What is molten rock called?", "expected": "answer",
         "kind": "answerable", "answers": ["magma"]},
        {"id": "t2", "question": "When do spring tides happen?", "expected": "answer",
         "kind": "answerable", "answers": ["the Sun and the Moon line up"]},
        {"id": "t4", "question": "What rock does lava form when it cools?",
         "expected": "answer", "kind": "answerable", "answers": ["obsidian"]},  # not in it
        {"id": "t3", "question": "Who painted the Mona Lisa?", "expected": "refuse",
         "kind": "out_of_corpus", "answers": []},
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return corpus, questions


def test_every_mode_recalls_the_passages_holding_an_answer(tmp_path: Path,
                                                           embeddings: Any) -> None:
    corpus, questions = _book(tmp_path)
    out = measure("tiny", corpus, questions, make_settings(tmp_path / "data"), embeddings,
                  limit=None, depth=4)
    assert out["questions"] == 3  # the out-of-corpus question has no gold to recall
    assert out["chunks"] >= 2
    # two answers are in the book, the third ("obsidian") nowhere
    assert out["recall"] == dict.fromkeys(MODES, 2 / 3)
    assert all(ms is not None and ms > 0 for ms in out["ms"].values())
    # cut-offs deeper than --depth are not reported
    assert out["depth"] == {1: 2 / 3, 3: 2 / 3, 4: 2 / 3}


def test_the_pool_books_are_sets_it_measures() -> None:
    for name in ("git-manual", "postgres-tutorial", "gnuplot-manual"):
        assert SETS[name] == BOOKS[name][1:]
