"""A refit kept only where it beats the calibration in force on every question file."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from textbound.quality.calibrate import Sample
from textbound.quality.calibrate.dominance import (
    fit_no_worse,
    outcome_counts,
    selection_no_worse,
)

GRID = [{"top1": 1.0}, {"top1": 1.0, "coverage": 1.0}]
REFERENCE = {"floor": 0.0, "answer_threshold": 0.5, "weights": {"top1": 1.0},
             "answerable_threshold": None, "selection_threshold": 0.5}


def _s(qid: str, group: str, top1: float, coverage: float, answerable: bool = True,
       correct: bool | None = True, holdout: bool = False) -> Sample:
    return Sample(qid, group, "answerable" if answerable else "near_miss",
                  "answer" if answerable else "refuse", {"top1": top1, "coverage": coverage},
                  True, holdout, correct if answerable else None)


def test_a_gate_that_refuses_the_leaks_of_both_files_and_loses_nothing_is_chosen() -> None:
    """The reference answers everything; weighing coverage refuses both near-misses (one of
    them held out) and keeps every right answer, on each part."""
    samples = [_s("a1", "g1", 0.6, 0.9), _s("a2", "g1", 0.5, 0.8, holdout=True),
               _s("n1", "g1", 0.7, 0.1, answerable=False), _s("b1", "g2", 0.6, 0.9),
               _s("m1", "g2", 0.55, 0.2, answerable=False, holdout=True)]
    fit = fit_no_worse(samples, REFERENCE, grid=GRID, answerable_grid=[])
    assert fit is not None and fit.weights == {"top1": 1.0, "coverage": 1.0}
    assert 0.8 < fit.answer_threshold <= 1.3
    assert fit.metrics["gain"] == 2
    assert fit.metrics["change_by_cell"] == {"g1/near_miss": -1, "g2/near_miss": -1}
    after = outcome_counts(samples, 0.0, fit.answer_threshold, fit.weights, None)
    assert after[("g1", "correct")] == 2 and after[("g2", "correct")] == 1


def test_no_gate_is_chosen_when_refusing_one_files_leak_costs_another_a_right_answer() -> None:
    """g1's near-miss scores above g2's answerable question on every weight vector."""
    samples = [_s("a1", "g1", 0.6, 0.9), _s("n1", "g1", 0.7, 0.1, answerable=False),
               _s("b1", "g2", 0.6, 0.05)]
    assert fit_no_worse(samples, REFERENCE, grid=GRID, answerable_grid=[]) is None


def test_answering_a_question_wrongly_is_no_gain() -> None:
    """A lower threshold answers a3, whose answer the pass found wrong: nothing is gained."""
    reference = dict(REFERENCE, answer_threshold=0.65)
    samples = [_s("a1", "g1", 0.7, 0.9), _s("a3", "g1", 0.6, 0.1, correct=False)]
    assert fit_no_worse(samples, reference, grid=GRID[:1], answerable_grid=[]) is None


def test_a_refit_that_wins_only_on_the_fitted_part_is_not_chosen() -> None:
    """Weighing coverage refuses the two fitted near-misses but lets the held-out one through
    (it scores above the right answer): over all samples one leak fewer, so the same samples
    all fitted would take it; split, the held-out part loses, and it is not."""
    samples = [_s("a1", "g1", 0.6, 0.7), _s("n1", "g1", 0.6, 0.1, answerable=False),
               _s("n2", "g1", 0.6, 0.1, answerable=False),
               _s("m1", "g1", 0.45, 0.9, answerable=False, holdout=True)]
    assert fit_no_worse(samples, REFERENCE, grid=GRID, answerable_grid=[]) is None
    merged = [Sample(s.id, s.group, s.kind, s.expected, s.features, s.downstream_ok, False,
                     s.correct) for s in samples]
    fit = fit_no_worse(merged, REFERENCE, grid=GRID, answerable_grid=[])
    assert fit is not None and fit.weights == {"top1": 1.0, "coverage": 1.0}


def test_the_selection_threshold_keeps_at_least_what_the_reference_answered() -> None:
    """Selected-text samples are not judged for correctness: answered answerable selections
    count, and the highest threshold that answers them all and refuses the near-miss wins."""
    samples = [_s("a1", "g1", 0.6, 0.9, correct=None), _s("a2", "g1", 0.5, 0.8, correct=None),
               _s("n1", "g1", 0.7, 0.1, answerable=False, correct=None)]
    threshold = selection_no_worse(samples, {"top1": 1.0, "coverage": 1.0}, None, REFERENCE)
    assert threshold == 1.3
    assert selection_no_worse(samples[:2], {"top1": 1.0}, None, REFERENCE) == 0.5


def test_the_command_refuses_a_reference_that_is_not_a_calibration(tmp_path) -> None:
    """A clear error, exit 2, before any question is run."""
    from textbound.serving.cli import app

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"floor": 0.3}))
    questions = tmp_path / "q.jsonl"
    questions.write_text("")
    result = CliRunner().invoke(app, ["calibrate", "--questions", str(questions),
                                      "--no-worse-than", str(bad), "--data-dir",
                                      str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "not a calibration file" in result.output and "answer_threshold" in result.output


def _run_with(monkeypatch, tmp_path, samples, reference):
    """The command end to end, its permissive pass replaced by the given samples."""
    import textbound.quality.calibrate.command as command
    from textbound.serving.cli import app

    def collect(*_args, **_kw):
        return samples, [], {"questions": "q.jsonl", "n": len(samples)}

    monkeypatch.setattr(command, "collect_samples", collect)
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps(reference))
    out = tmp_path / "new.json"
    questions = tmp_path / "q.jsonl"
    questions.write_text("")
    result = CliRunner().invoke(app, [
        "calibrate", "--questions", str(questions), "--no-worse-than", str(ref), "--out",
        str(out), "--selection-limit", "0", "--data-dir", str(tmp_path / "data")])
    return result, out, ref


def test_the_command_writes_the_gate_that_beats_the_reference(monkeypatch, tmp_path) -> None:
    """The written file holds the better gate, what it changed, and the reference it beat."""
    import hashlib

    samples = [_s("a1", "g1", 0.6, 0.9), _s("n1", "g1", 0.7, 0.1, answerable=False)]
    result, out, ref = _run_with(monkeypatch, tmp_path, samples, REFERENCE)
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["weights"]["coverage"] > 0 and written["answer_threshold"] > 0.8
    assert written["provenance"]["gate"]["change_by_cell"] == {"g1/near_miss": -1}
    reference = written["provenance"]["reference"]
    assert reference["sha256"] == hashlib.sha256(ref.read_bytes()).hexdigest()
    assert reference["answer_threshold"] == 0.5 and "no fewer" in written["description"]


def test_the_command_writes_nothing_when_no_gate_beats_the_reference(monkeypatch,
                                                                      tmp_path) -> None:
    samples = [_s("a1", "g1", 0.6, 0.9), _s("n1", "g1", 0.7, 0.1, answerable=False),
               _s("b1", "g2", 0.6, 0.05)]
    result, out, _ = _run_with(monkeypatch, tmp_path, samples, REFERENCE)
    assert result.exit_code == 1 and not out.exists()
    assert "nothing written" in result.output
