"""Evaluation metrics on hand-made answers and records."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from textbound.errors import SetupError
from textbound.quality.evaluation import (
    LONG_FORM_WORDS,
    MemoEmbeddings,
    answer_matches,
    corpus_fingerprint,
    load_questions,
    normalize_answer,
    percentile,
    refusal_label,
    sample_questions,
    summarize,
    tradeoff_curve,
)


def test_normalize_answer_drops_case_punctuation_and_articles() -> None:
    """SQuAD normalisation folds case, punctuation, articles and spaces."""
    assert normalize_answer("The  Black Death, (1346)!") == "black death 1346"


def test_short_gold_must_be_a_whole_word_substring() -> None:
    """A short gold answer matches inside a longer answer, but not inside another word."""
    answer = "The plague reached Europe in 1347, carried by the Genoese."
    assert answer_matches(answer, ["in 1347"])
    assert answer_matches(answer, ["nothing", "the Genoese"])
    assert not answer_matches(answer, ["134"])
    assert not answer_matches(answer, ["Venetians"])


def test_a_literal_gold_must_be_printed_as_written() -> None:
    """A gold holding a symbol or an option dash is a literal: folding it would match too much."""
    answer = "Write %d for an integer (see p. 12); run the tool with -v or --verbose."
    assert answer_matches(answer, ["%d"])
    assert not answer_matches(answer, ["%D"])  # another specifier, not this one
    assert not answer_matches(answer, ["%p"])  # not the page's "p."
    assert answer_matches(answer, ["-v"]) and answer_matches(answer, ["--verbose"])
    assert not answer_matches(answer, ["-verbose"])  # inside "--verbose" is not printed whole
    assert not answer_matches("the branch master -> master", ["+master"])
    assert answer_matches("it gives   -4 here", ["-4"]) and not answer_matches("-42", ["-4"])


def test_a_gold_of_symbols_only_must_be_printed_as_written() -> None:
    """"%%" folds to nothing: it is looked for as printed, and a lone "." (a few SQuAD golds)
    matches no answer."""
    assert answer_matches("Use ‘%%’ to output a literal percent sign.", ["%%"])
    assert not answer_matches("Use ‘%’ for a percent sign.", ["%%"])
    assert answer_matches("Write $$ around the body.", ["$$"])
    assert not answer_matches("It ends here.", ["."])


def test_a_gold_printed_whole_matches_where_folding_glues_it() -> None:
    """Folding drops punctuation and glues what it parted; the gold printed whole still counts."""
    code = "process.env.PATH.split(path.delimiter);"
    assert normalize_answer(code) == "processenvpathsplitpathdelimiter"
    assert answer_matches(code, ["path.delimiter"])
    assert answer_matches("Most of the Rhine's course was not yet formed.", ["Rhine"])
    assert answer_matches("misc/ninja_syntax.py ships with it", ["ninja_syntax.py"])
    # printed whole means not inside a longer word, as before
    assert not answer_matches(code, ["path.delim"])
    assert not answer_matches("the Rhineland", ["Rhine"])


def test_empty_gold_list_never_matches() -> None:
    """Without gold answers nothing is correct."""
    assert not answer_matches("anything at all", [])
    assert not answer_matches("anything at all", ["", "  "])


def test_long_gold_uses_content_word_recall() -> None:
    """A long gold answer matches when at least half of its content words are present."""
    gold = "The season premiered on Netflix in July with ten episodes directed by Smith"
    assert len(normalize_answer(gold).split()) > LONG_FORM_WORDS
    hit = "Netflix released the season in July; Smith directed all ten episodes."
    miss = "The show is a drama about a family."
    assert answer_matches(hit, [gold])
    assert not answer_matches(miss, [gold])


def test_percentile_interpolates() -> None:
    """Percentiles interpolate linearly and are None for no values."""
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile([5.0], 95) == 5.0
    assert percentile([], 50) is None


def _rec(kind: str, expected: str, refused: bool, reason: str | None = None,
         correct: bool | None = None, path: str = "release_answer",
         latency: float = 10.0, gate: float = 0.0) -> dict:
    return {"kind": kind, "expected": expected, "was_refusal": refused,
            "refusal_reason": reason, "correct": correct, "path": path,
            "latency_ms": latency, "features": {"gate_score": gate, "top1": gate}}


def test_summarize_counts_rates_per_kind() -> None:
    """Answer, correct and leak rates and refusal counts come out per kind."""
    records = [
        _rec("answerable", "answer", False, correct=True),
        _rec("answerable", "answer", False, correct=False),
        _rec("answerable", "answer", False, correct=True),
        _rec("answerable", "answer", True, "insufficient_context",
             path="refuse_insufficient_context"),
        _rec("near_miss", "refuse", False),
        _rec("near_miss", "refuse", True, "insufficient_context",
             path="refuse_insufficient_context"),
        _rec("out_of_corpus", "refuse", True, "empty_retrieval", path="refuse_empty_retrieval"),
    ]
    rep = summarize(records)
    a = rep["kinds"]["answerable"]
    assert (a["n"], a["answered"], a["correct"]) == (4, 3, 2)
    assert a["answer_rate"] == 0.75
    assert a["correct_rate"] == pytest.approx(0.6667)
    assert a["correct_of_all"] == 0.5
    assert a["refusals"] == {"insufficient_context": 1}
    assert rep["kinds"]["near_miss"]["leak_rate"] == 0.5
    assert rep["kinds"]["out_of_corpus"]["leak_rate"] == 0.0
    assert rep["kinds"]["out_of_corpus"]["refusals"] == {"empty_retrieval": 1}
    assert "correct_rate" not in rep["kinds"]["near_miss"]
    assert rep["n"] == 7 and rep["answered"] == 4
    assert rep["latency"]["release_answer"]["n"] == 4


def test_reader_refusals_are_counted_apart_from_the_gate() -> None:
    """A refusal whose failed checks name `answerable` is counted as the reader's, per kind."""
    reader = _rec("near_miss", "refuse", True, "insufficient_context")
    reader["failed_checks"] = ["answerable", "insufficient_context"]
    gate = _rec("near_miss", "refuse", True, "insufficient_context")
    gate["failed_checks"] = ["answer_threshold", "insufficient_context"]
    selection = _rec("near_miss", "refuse", True, "selected_text_insufficient")
    selection["failed_checks"] = ["answerable", "selected_text_insufficient"]
    assert refusal_label(reader) == "insufficient_context (answerable)"
    assert refusal_label(selection) == "selected_text_insufficient (answerable)"
    assert summarize([reader, gate, selection])["kinds"]["near_miss"]["refusals"] == {
        "insufficient_context": 1, "insufficient_context (answerable)": 1,
        "selected_text_insufficient (answerable)": 1}


def test_summarize_latency_percentiles_per_path() -> None:
    """Latency p50/p95 are computed per path."""
    records = [_rec("answerable", "answer", False, correct=True, latency=float(ms))
               for ms in range(1, 101)]
    lat = summarize(records)["latency"]["release_answer"]
    assert lat["p50_ms"] == pytest.approx(50.5)
    assert lat["p95_ms"] == pytest.approx(95.05, abs=0.1)


def test_tradeoff_curve_sweeps_answered_and_leaked() -> None:
    """The gate-only sweep starts at (all, all) and falls as the threshold rises."""
    records = [_rec("answerable", "answer", False, gate=g) for g in (0.9, 0.8, 0.4)]
    records += [_rec("near_miss", "refuse", False, gate=g) for g in (0.5, 0.3)]
    thresholds, answered, leaked = tradeoff_curve(records, "gate_score")
    assert answered[0] == 1.0 and leaked[0] == 1.0
    at = thresholds.index(0.8)
    assert answered[at] == pytest.approx(2 / 3) and leaked[at] == 0.0
    assert all(x >= y for x, y in zip(answered, answered[1:], strict=False))


def test_sample_questions_is_deterministic_and_limited() -> None:
    """A limited sample is the same subset every time, independent of file order."""
    qs = [{"id": str(i)} for i in range(50)]
    a = sample_questions(qs, 10)
    b = sample_questions(list(reversed(qs)), 10)
    assert a == b and len(a) == 10
    assert len(sample_questions(qs, None)) == 50


def test_load_questions_rejects_missing_fields(tmp_path: Path) -> None:
    """A question line without its kind is a setup error naming the line."""
    good = {"id": "1", "question": "q?", "expected": "answer", "kind": "answerable"}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": "2", "question": "x"}) + "\n")
    with pytest.raises(SetupError, match=r"q.jsonl:2"):
        load_questions(path)
    path.write_text(json.dumps(good) + "\n")
    assert load_questions(path)[0]["answers"] == []


def test_corpus_fingerprint_changes_with_content(tmp_path: Path) -> None:
    """A folder's fingerprint follows its documents and ignores question files."""
    (tmp_path / "a.md").write_text("# A\nalpha")
    first = corpus_fingerprint(tmp_path)
    (tmp_path / "questions.jsonl").write_text("{}\n")
    assert corpus_fingerprint(tmp_path) == first
    (tmp_path / "a.md").write_text("# A\nbeta")
    assert corpus_fingerprint(tmp_path) != first


class _Counting:
    model_name = "counting"
    dimension = 2

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.seen += texts
        return [[float(len(t)), 1.0] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.seen.append(text)
        return [float(len(text)), 0.0]


def test_memo_embeddings_embed_each_text_once() -> None:
    """Repeated texts are served from the memo with the model's own vectors."""
    inner = _Counting()
    memo = MemoEmbeddings(inner)  # type: ignore[arg-type]
    assert memo.embed_documents(["ab", "c", "ab"]) == [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    assert memo.embed_documents(["c", "dddd"]) == [[1.0, 1.0], [4.0, 1.0]]
    assert memo.embed_query("ab") == [2.0, 0.0]
    assert memo.embed_query("ab") == [2.0, 0.0]
    assert inner.seen == ["ab", "c", "dddd", "ab"]
    assert memo.dimension == 2 and memo.model_name == "counting"


def test_eval_langsmith_without_key_stops_before_any_work(monkeypatch, tmp_path):
    """`eval --langsmith` with no key says so and never ingests or evaluates."""
    from typer.testing import CliRunner

    import textbound.quality.evaluation.command as ev
    from textbound.serving.cli import app

    for var in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(var, raising=False)

    def boom(*args, **kwargs):
        raise AssertionError("evaluation ran without a LangSmith key")

    monkeypatch.setattr(ev, "evaluate", boom)
    result = CliRunner().invoke(app, ["eval", "--langsmith", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "LANGSMITH_API_KEY" in result.output


def test_eval_langsmith_runs_one_experiment_per_policy(monkeypatch, tmp_path):
    """With a key, each policy becomes an experiment over the labelled questions."""
    import textbound.quality.evaluation.command as ev

    calls = []

    class FakeGraph:
        def invoke(self, inputs, context=None):
            return {"answer": "x", "was_refusal": True, "policy": context["policy"]}

    class FakeStore:
        def close(self):
            calls.append("closed")

    @contextlib.contextmanager
    def fake_prepared(corpus, settings):
        store = FakeStore()
        try:
            yield FakeGraph(), store, {}
        finally:
            store.close()

    monkeypatch.setattr(ev, "prepared_graph", fake_prepared)

    def fake_experiment(rows, target, dataset_name, **kw):
        calls.append((dataset_name, kw["experiment_prefix"], len(rows),
                      target({"question": rows[0]["question"]})["policy"]))
        return "ok"

    monkeypatch.setattr(ev, "run_langsmith_experiment", fake_experiment)
    q = tmp_path / "q.jsonl"
    q.write_text('{"id": "1", "question": "What?", "expected": "refuse", "answers": [], '
                 '"kind": "near_miss"}\n')

    class Console:
        def print(self, *a):
            pass

    ev.run_experiments(None, q, object(), ["calibrated", "seed_000"], None, "ds", Console())
    assert calls == [("ds", "textbound-calibrated", 1, "calibrated"),
                     ("ds", "textbound-seed_000", 1, "seed_000"), "closed"]
