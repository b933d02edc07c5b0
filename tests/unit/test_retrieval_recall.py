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
        {"id": "t3", "question": "Who painted the Mona Lisa?", "expected": "refuse",
         "kind": "out_of_corpus", "answers": []},
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return corpus, questions


def test_every_mode_recalls_the_passage_holding_the_answer(tmp_path: Path,
                                                           embeddings: Any) -> None:
    corpus, questions = _book(tmp_path)
    out = measure("tiny", corpus, questions, make_settings(tmp_path / "data"), embeddings,
                  limit=None)
    assert out["questions"] == 2  # the out-of-corpus question has no gold to recall
    assert out["chunks"] >= 2
    assert out["recall"] == dict.fromkeys(MODES, 1.0)
    assert all(ms is not None and ms > 0 for ms in out["ms"].values())


def test_the_pool_books_are_sets_it_measures() -> None:
    for name in ("git-manual", "postgres-tutorial", "gnuplot-manual"):
        assert SETS[name] == BOOKS[name][1:]
