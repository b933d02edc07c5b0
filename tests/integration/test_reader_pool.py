"""benchmarks/reader_pool.py: the reader's per-book AUROC from stored passages."""

from __future__ import annotations

from pathlib import Path

from benchmarks.reader_pool import paired_interval, score

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "answerability"


def _q(kind: str, question: str, text: str) -> dict:
    return {"id": question, "kind": kind, "question": question, "source": "score_gate",
            "passages": [{"chunk_id": "c1", "score": 0.9, "text": text},
                         {"chunk_id": "c2", "score": 0.5, "text": "Unrelated words about tea."}]}


def test_score_ranks_stored_passages_and_bootstraps_a_paired_difference():
    entry = {"questions": [
        _q("answerable", "What does -v do in grep?",
           "-v, --invert-match  Invert the sense of matching, to select non-matching lines."),
        _q("answerable", "What is the default port of the server?",
           "The server listens on port 5432 by default."),
        _q("near_miss", "What does -z do in grep?",
           "-v, --invert-match  Invert the sense of matching, to select non-matching lines."),
        _q("near_miss", "Who founded the server project?",
           "The server listens on port 5432 by default.")]}
    res = score(entry, SHIPPED, passages=2)
    assert (res["answerable"], res["near_miss"]) == (2, 2)
    assert 0.0 <= res["auroc"] <= 1.0
    assert len(res["scores"]["answerable"]) == 2
    assert res["scores"] == score(entry, SHIPPED, passages=2)["scores"]
    # the same scores twice differ by nothing; a model that ranks every pair right gains
    assert paired_interval(res, res) == (0.0, 0.0)
    perfect = {"scores": {"answerable": [0.9, 0.8], "near_miss": [0.1, 0.2]}}
    worst = {"scores": {"answerable": [0.1, 0.2], "near_miss": [0.9, 0.8]}}
    lo, hi = paired_interval(worst, perfect, rounds=200)
    assert lo > 0 and hi == 1.0
