"""The pool benchmark reads each book's eval report into one table, before beside after."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.pool import BOOKS, answer_chars, figures, goals_line, lengths, meets, plot, table


def _report(correct_of_all: float, answer_rate: float, near_miss: float) -> dict:
    return {"policies": {"calibrated": {"kinds": {
        "answerable": {"n": 40, "correct_of_all": correct_of_all, "answer_rate": answer_rate},
        "near_miss": {"n": 20, "answer_rate": near_miss},
        "out_of_corpus": {"n": 10, "answer_rate": 0.0}}}}}


def test_figures_are_read_from_the_calibrated_policy() -> None:
    """Correct of all answerable, answerable refused, and each refuse-kind's answered share."""
    fig = figures(_report(0.45, 0.9, 0.25))
    assert fig == {"answerable": 40, "correct_of_all": 0.45, "refused_answerable": 0.1,
                   "near_miss": 20, "near_miss_answered": 0.25, "out_of_corpus": 10,
                   "out_of_corpus_answered": 0.0}


def test_table_shows_each_book_with_the_earlier_figure_beside_it() -> None:
    """A row per book; with --before each cell says what it was."""
    now = {"git-manual": figures(_report(0.45, 0.9, 0.25))}
    old = {"git-manual": figures(_report(0.214, 0.833, 0.5))}
    text = table(now, old)
    row = next(line for line in text.splitlines() if line.startswith("| git-manual"))
    assert "| HTML |" in row
    assert "45.0% (was 21.4%)" in row and "25.0% (was 50.0%)" in row


def test_a_missing_book_is_reported_not_fatal() -> None:
    """A book whose data is absent gets a row of dashes and its reason."""
    text = table({"gnuplot-manual": {"error": "data not found"}})
    assert "| gnuplot-manual | PDF | - |" in text and "data not found" in text


def test_answer_length_is_the_median_of_released_answers_to_answerable_questions(
        tmp_path: Path) -> None:
    """Refusals, near-miss answers and other policies do not count; no answer gives None."""
    def row(kind: str, refused: bool, answer: str, policy: str = "calibrated") -> dict:
        return {"policy": policy, "kind": kind, "was_refusal": refused, "answer": answer}

    rows = [row("answerable", False, "a" * n) for n in (10, 30, 20)]
    rows += [row("answerable", True, "r" * 500), row("near_miss", False, "n" * 900),
             row("answerable", False, "s" * 900, policy="strict")]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert answer_chars(path) == 20
    path.write_text(json.dumps(rows[3]) + "\n")
    assert answer_chars(path) is None
    assert answer_chars(tmp_path / "missing.jsonl") is None


def test_lengths_line_shows_the_earlier_run_beside_each_book() -> None:
    line = lengths({"git-manual": {"answer_chars": 240}, "openstax": {"answer_chars": None}},
                   {"git-manual": {"answer_chars": 200}})
    assert line == "Released answers, median characters: git-manual 240 (was 200)\n"
    assert lengths({"openstax": {"error": "data not found"}}) == ""


def test_the_pool_is_five_books_in_three_formats() -> None:
    """Every change is judged on all five books: HTML, PDF and Markdown."""
    assert len(BOOKS) == 5
    assert {fmt for fmt, _, _ in BOOKS.values()} == {"HTML", "PDF", "Markdown"}


def test_goals_line_names_the_books_meeting_every_goal_and_what_the_others_miss() -> None:
    good = figures(_report(0.85, 0.95, 0.10))
    bad = figures(_report(0.62, 0.93, 0.28))
    line = goals_line({"openstax": good, "git-manual": bad, "gnuplot-manual": {"error": "x"}})
    assert line.startswith("Every goal met: openstax. Missed: git-manual (")
    assert "answerable answered correctly 62.0%" in line and "near-miss answered 28.0%" in line
    assert "refused" not in line  # 7% refused meets its 8% goal
    assert "gnuplot" not in line  # a book that did not run is reported by the table
    assert meets("out_of_corpus_answered", 0.0) and not meets("out_of_corpus_answered", 0.01)
    assert meets("correct_of_all", None) is None


def test_plot_draws_one_panel_per_goal(tmp_path: Path) -> None:
    now = {"git-manual": figures(_report(0.62, 0.93, 0.28)),
           "openstax": figures(_report(0.89, 1.0, 0.09)), "textbook": {"error": "x"}}
    old = {"git-manual": figures(_report(0.55, 0.9, 0.33))}
    for before, name in ((None, "a.png"), (old, "b.png")):
        assert plot(now, tmp_path / name, before)
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
