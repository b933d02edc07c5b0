"""`textbound eval` end to end on small slices of the SQuAD 2.0 and ClapNQ benchmarks.

The full corpora take minutes to embed, so each test ingests the gold paragraphs of its sampled
questions plus fixed distractor paragraphs; the questions, graph and scoring are the real ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textbound.quality.evaluation import load_questions, sample_questions
from textbound.serving.cli import app

pytestmark = pytest.mark.integration

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LIMIT = 40
DISTRACTORS = 40


def _slice_corpus(bench: str, tmp_path: Path) -> tuple[Path, Path]:
    folder = SHARED_DATA / bench
    if not (folder / "corpus.jsonl").is_file():
        pytest.skip(f"benchmark data not found in {folder}")
    questions = folder / "questions.dev.jsonl"
    wanted = {q["doc_id"] for q in sample_questions(load_questions(questions), LIMIT)}
    lines = (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    keep = [r for r in rows if r["doc_id"] in wanted] + [
        r for r in rows[::max(len(rows) // DISTRACTORS, 1)] if r["doc_id"] not in wanted]
    corpus = tmp_path / f"{bench}-slice.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in keep), encoding="utf-8")
    return corpus, questions


def _eval(corpus: Path, questions: Path, out: Path, data_dir: Path, *policies: str) -> dict:
    args = ["eval", "--corpus", str(corpus), "--questions", str(questions), "--out", str(out),
            "--limit", str(LIMIT), "--data-dir", str(data_dir), "--workers", "2"]
    for p in policies:
        args += ["--policy", p]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def _check_report(report: dict, policies: tuple[str, ...], out: Path) -> None:
    assert list(report["policies"]) == list(policies)
    assert report["questions"]["n"] == LIMIT
    for rep in report["policies"].values():
        kinds = rep["kinds"]
        assert sum(k["n"] for k in kinds.values()) == LIMIT
        for k in kinds.values():
            assert k["answered"] + sum(k["refusals"].values()) == k["n"]
        ans = kinds["answerable"]
        if ans["answered"]:
            assert 0.0 <= ans["correct_rate"] <= 1.0
        assert rep["latency"], "latency per path is reported"
    for name in ("report.md", "top1_by_kind.png", "tradeoff.png"):
        assert (out / name).stat().st_size > 0
    assert "| calibrated | answerable |" in (out / "report.md").read_text(encoding="utf-8")


def test_eval_squad_slice_compares_policies(tmp_path: Path) -> None:
    """SQuAD: both policies are reported, and answerable questions are answered more often."""
    corpus, questions = _slice_corpus("squad2", tmp_path)
    out = tmp_path / "out"
    report = _eval(corpus, questions, out, tmp_path / "data", "calibrated", "seed_002")
    _check_report(report, ("calibrated", "seed_002"), out)
    kinds = report["policies"]["calibrated"]["kinds"]
    assert kinds["answerable"]["answer_rate"] > kinds["out_of_corpus"]["answer_rate"]
    assert report["policies"]["calibrated"]["calibration"]["name"] == "calibrated"
    assert report["policies"]["seed_002"]["calibration"]["answer_threshold"] == 0.7


def test_eval_clapnq_slice_reuses_its_collection(tmp_path: Path) -> None:
    """ClapNQ: a second run on the unchanged corpus embeds nothing and gives the same report."""
    corpus, questions = _slice_corpus("clapnq", tmp_path)
    first = _eval(corpus, questions, tmp_path / "a", tmp_path / "data", "calibrated")
    _check_report(first, ("calibrated",), tmp_path / "a")
    assert first["corpus"]["chunks_added"] > 0
    second = _eval(corpus, questions, tmp_path / "b", tmp_path / "data", "calibrated")
    assert second["corpus"]["chunks_added"] == 0
    assert second["corpus"]["collection"] == first["corpus"]["collection"]
    assert second["policies"]["calibrated"]["kinds"] == first["policies"]["calibrated"]["kinds"]
