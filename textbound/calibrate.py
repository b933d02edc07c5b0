"""Fit the calibrated score gate (floor, feature weights, answer threshold) on labelled questions.

One permissive pass runs every question through the real graph with a gate that lets everything
through (floor -1, answer and selection thresholds -10), which records the gate's evidence features
(`diagnostics.gate.features`) and whether the rest of the graph (generation, grounding) would have
answered. The gate is then fitted on those records:

* `floor`: the top-1 cosine below which at most `FLOOR_BUDGET` of each group's answerable questions
  fall (they are refused as empty_retrieval);
* `weights` and `answer_threshold`: for every weight vector of a small grid, the highest threshold
  that keeps end-to-end false refusals of answerable questions at or under the target *in every
  group* (a group is one question file: one benchmark or the textbook); the weight vector with the
  fewest leaks, averaged over the refuse-expected (group, kind) cells, wins.
* `answerable_threshold` (the answerability reader's probability, `ANSWERABLE`): fitted jointly
  with the weights: every (reader threshold, weight vector) pair of the grids is tried, a question
  answering only when the reader also passes it, so the two gates share the false-refusal budget;
  the pair with the fewest leaks wins, except that refusal comes first: the highest reader
  threshold whose best leak objective is within `LEAK_TOLERANCE` of the lowest is chosen. The
  reader's best score is collected like the gate features (`diagnostics.answerability.score`,
  read with the permissive threshold 0). When the reader is off no question has the score and
  the previous threshold is kept.
* the reader's vote in the gate score (`weights["reader"]`, `READER_STEPS`): the grid also weighs
  the reader's clipped log-odds (`textbound.calibration.reader_logit`) into the gate score, so a
  strong retrieval match with a weak reader vote, or the reverse, is judged on the sum rather than
  on two separate cut-offs. The grid holds the no-reader vectors too, so the fit keeps the vote
  only where it lowers the leaks; samples without reader scores get the no-reader grid alone.
* `selection_threshold` (selected-text mode): with the chosen weights and reader threshold, the
  highest threshold that keeps false refusals at or under the target on answerable questions
  given their own gold paragraph as the selection; near-miss questions with their paragraph
  measure the leaks.

A question is in the held-out part when sha256("holdout:" + id) falls in the lowest `holdout`
share; nothing about it is used for fitting, and the metrics are reported for both parts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import math
import shlex
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from textbound.calibration import READER, reader_logit
from textbound.errors import SetupError, TextboundError

__all__ = [
    "ANSWERABLE",
    "ANSWERABLE_GRID",
    "FEATURES",
    "FLOOR_BUDGET",
    "LEAK_TOLERANCE",
    "WEIGHT_GRID",
    "GateFit",
    "Sample",
    "calibrate_command",
    "fit_gate",
    "fit_threshold",
    "gate_metrics",
    "is_holdout",
]

FEATURES = ("top1", "mean", "coverage", "best_sentence", READER)
FLOOR_BUDGET = 0.01
"""Share of each group's answerable questions the floor may refuse (inside the target)."""
_STEPS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5)
READER_STEPS = (0.0, 0.02, 0.05, 0.1, 0.2)
"""Candidate weights of the reader's log-odds (only tried when the samples have reader scores)."""
WEIGHT_GRID: tuple[dict[str, float], ...] = tuple(
    {"top1": 1.0, "mean": m, "coverage": c, "best_sentence": b}
    | ({READER: r} if r else {})
    for r, m, c, b in itertools.product(READER_STEPS, (0.0, -0.5, 0.5), _STEPS, _STEPS)
)
"""Candidate weights; top1 is fixed at 1 (the threshold absorbs the scale)."""
ANSWERABLE = "answerable"
"""The sample feature holding the answerability reader's best score (absent: reader off)."""
ANSWERABLE_GRID = tuple(round(0.05 * i, 2) for i in range(20))
"""Candidate answerable_threshold values; 0 lets every question through the reader."""
LEAK_TOLERANCE = 0.01
"""Refusal first: the highest answerable_threshold whose best leak objective is within this of the
lowest wins, so a reader that is sure no passage answers refuses on its own where that costs (on
the dev sets) under a point of averaged leaks."""


@dataclass(frozen=True)
class Sample:
    """One question's gate features from the permissive pass."""

    id: str
    group: str
    kind: str
    expected: str
    features: dict[str, float]
    downstream_ok: bool
    """The graph answered when the gate let it through (generation and grounding passed)."""
    holdout: bool = False
    correct: bool | None = None


@dataclass
class GateFit:
    """A fitted gate and how it does."""

    floor: float
    answer_threshold: float
    weights: dict[str, float]
    objective: float
    metrics: dict[str, Any] = field(default_factory=dict)
    answerable_threshold: float | None = None
    """None when no sample had a reader score (the reader was off)."""


def is_holdout(question_id: str, share: float) -> bool:
    """Whether a question belongs to the held-out part (deterministic in its id)."""
    h = int(hashlib.sha256(f"holdout:{question_id}".encode()).hexdigest(), 16)
    return h / 2**256 < share


def _feature(sample: Sample, name: str) -> float:
    if name == READER:  # the reader's probability, as the log-odds the gate weighs
        return reader_logit(sample.features[ANSWERABLE]) if ANSWERABLE in sample.features \
            else 0.0
    return sample.features.get(name, 0.0)


def _matrix(samples: Sequence[Sample]) -> np.ndarray:
    return np.array([[_feature(s, f) for f in FEATURES] for s in samples],
                    dtype=np.float64).reshape(len(samples), len(FEATURES))


def _w(weights: dict[str, float]) -> np.ndarray:
    return np.array([weights.get(f, 0.0) for f in FEATURES], dtype=np.float64)


def _floor_down(x: float, step: float = 0.001) -> float:
    return math.floor(x / step) * step


def fit_threshold(scores: np.ndarray, ok: np.ndarray, target: float) -> float:
    """Return the highest threshold answering at least (1 - target) of the questions.

    A question is answered when its score reaches the threshold and `ok` (the rest of the graph
    would answer it). Questions that are not ok are refused whatever the threshold and count
    against the target first. Returns -inf when even no gate misses the target.
    """
    n = len(scores)
    if n == 0:
        return math.inf
    allowed = math.floor(target * n + 1e-9) - int((~ok).sum())
    if allowed < 0:
        return -math.inf
    passing = np.sort(scores[ok])
    if allowed >= len(passing):
        return math.inf
    # refusing exactly the `allowed` lowest; ties at the cut stay answered
    return float(passing[allowed])


def _reader_passes(samples: Sequence[Sample], threshold: float | None) -> np.ndarray:
    """Whether the reader lets each sample through (all of them without a reader threshold)."""
    if threshold is None:
        return np.ones(len(samples), dtype=bool)
    scores = np.array([s.features.get(ANSWERABLE, 0.0) for s in samples], dtype=np.float64)
    return scores >= threshold - 1e-12


def gate_metrics(samples: Sequence[Sample], floor: float, threshold: float,
                 weights: dict[str, float], answerable_threshold: float | None = None
                 ) -> dict[str, dict[str, Any]]:
    """Per group and kind: n and the share answered end to end by this gate (and reader)."""
    out: dict[str, dict[str, Any]] = {}
    if not samples:
        return out
    x = _matrix(samples)
    score = x @ _w(weights)
    top1 = x[:, FEATURES.index("top1")]
    answered = (top1 >= floor) & (score >= threshold - 1e-12) & np.array(
        [s.downstream_ok for s in samples]) & _reader_passes(samples, answerable_threshold)
    for i, s in enumerate(samples):
        cell = out.setdefault(s.group, {}).setdefault(s.kind, {"n": 0, "answered": 0})
        cell["n"] += 1
        cell["answered"] += int(answered[i])
    for kinds in out.values():
        for cell in kinds.values():
            cell["answer_rate"] = round(cell["answered"] / cell["n"], 4)
    return out


def _leak_cells(samples: Sequence[Sample]) -> list[np.ndarray]:
    """One mask per refuse-expected (group, kind) cell: the cells the leak objective averages."""
    cells = sorted({(s.group, s.kind) for s in samples if s.expected != "answer"})
    return [np.array([(s.group, s.kind) == c for s in samples]) for c in cells]


def _leak_objective(answered: np.ndarray, cells: Sequence[np.ndarray]) -> float:
    """The mean, over refuse-expected cells, of the share answered (leaked)."""
    rates = [float(answered[m].mean()) for m in cells]
    return float(np.mean(rates)) if rates else 0.0


def fit_gate(samples: Sequence[Sample], target: float = 0.10,
             grid: Sequence[dict[str, float]] = WEIGHT_GRID,
             floor_budget: float = FLOOR_BUDGET,
             answerable_grid: Sequence[float] = ANSWERABLE_GRID,
             leak_tolerance: float = LEAK_TOLERANCE) -> GateFit:
    """Fit floor, weights, answer and answerable thresholds on the non-held-out samples.

    See the module doc. `answerable_grid` is only searched when the samples carry the reader's
    score; otherwise the fit is the score gate's alone and `answerable_threshold` is None.
    """
    fit = [s for s in samples if not s.holdout]
    held = [s for s in samples if s.holdout]
    groups = sorted({s.group for s in fit if s.expected == "answer"})
    if not groups:
        raise SetupError("no answerable questions to calibrate on")
    x = _matrix(fit)
    ok = np.array([s.downstream_ok for s in fit])
    top1 = x[:, FEATURES.index("top1")]
    masks = {g: np.array([s.group == g and s.expected == "answer" for s in fit]) for g in groups}

    floor = 1.0
    for g in groups:
        t1 = np.sort(top1[masks[g]])
        k = math.floor(floor_budget * len(t1) + 1e-9)
        floor = min(floor, float(t1[min(k, len(t1) - 1)]))
    floor = _floor_down(floor, 0.01)
    above = top1 >= floor
    cells = _leak_cells(fit)
    read = any(ANSWERABLE in s.features for s in fit)
    readers: Sequence[float | None] = tuple(answerable_grid) if read else (None,)
    if not read:  # without reader scores its weight cannot be fitted
        grid = [w for w in grid if not w.get(READER)]

    by_reader: dict[float | None, GateFit] = {}  # the best weights for each reader threshold
    for answerable in readers:
        passes = ok & above & _reader_passes(fit, answerable)
        for weights in grid:
            score = x @ _w(weights)
            threshold = min(fit_threshold(score[masks[g]], passes[masks[g]], target)
                            for g in groups)
            if not math.isfinite(threshold):
                continue
            threshold = _floor_down(threshold)  # round down: never refuse more than fitted
            answered = passes & (score >= round(threshold, 3) - 1e-12)
            objective = _leak_objective(answered, cells)
            held_best = by_reader.get(answerable)
            if held_best is None or objective < held_best.objective - 1e-12:
                by_reader[answerable] = GateFit(floor, round(threshold, 3), dict(weights),
                                                objective, answerable_threshold=answerable)
    if not by_reader:
        raise SetupError(
            f"no gate reaches a false-refusal rate of {target:.0%}: the rest of the graph "
            "already refuses more answerable questions than that"
        )
    # refusal first: the strictest reader threshold whose leaks are within tolerance of the best
    lowest = min(f.objective for f in by_reader.values())
    best = max((f for f in by_reader.values() if f.objective <= lowest + leak_tolerance + 1e-12),
               key=lambda f: (f.answerable_threshold or 0.0, -f.objective))
    best.metrics = {
        "fit": gate_metrics(fit, best.floor, best.answer_threshold, best.weights,
                            best.answerable_threshold),
        "holdout": gate_metrics(held, best.floor, best.answer_threshold, best.weights,
                                best.answerable_threshold),
        "n_fit": len(fit),
        "n_holdout": len(held),
        "leak_objective_fit": round(best.objective, 4),
        "leak_objective_by_answerable_threshold": {
            str(a): round(f.objective, 4) for a, f in sorted(
                by_reader.items(), key=lambda kv: -1.0 if kv[0] is None else kv[0])},
        "leak_tolerance": leak_tolerance,
    }
    return best


def fit_selection(samples: Sequence[Sample], weights: dict[str, float], target: float,
                  answerable_threshold: float | None = None) -> tuple[float, dict[str, Any]]:
    """Fit selection_threshold with fixed weights (and reader threshold); return it and metrics."""
    fit = [s for s in samples if not s.holdout and s.expected == "answer"]
    if not fit:
        raise SetupError("no answerable selections to calibrate on")
    score = _matrix(fit) @ _w(weights)
    ok = np.array([s.downstream_ok for s in fit]) & _reader_passes(fit, answerable_threshold)
    threshold = fit_threshold(score, ok, target)
    if not math.isfinite(threshold):
        raise SetupError(
            "no selection threshold meets the target"
            + (f" (the reader alone, at answerable_threshold {answerable_threshold}, refuses "
               "more answerable selections than that)" if answerable_threshold else ""))
    threshold = round(_floor_down(threshold), 3)
    metrics = {
        part: gate_metrics([s for s in samples if s.holdout == (part == "holdout")], -1.0,
                           threshold, weights, answerable_threshold)
        for part in ("fit", "holdout")
    }
    return threshold, metrics


# --- the permissive pass ----------------------------------------------------------------------

def _permissive_calibration(base: Path | None, folder: Path) -> tuple[Path, float]:
    """Write a calibration that lets every question through; return it and the chunk margin."""
    margin = 0.12
    if base is not None and Path(base).is_file():
        try:
            margin = float(json.loads(Path(base).read_text(encoding="utf-8")).get(
                "chunk_margin", margin))
        except (ValueError, json.JSONDecodeError):
            pass
    path = folder / "permissive.json"
    path.write_text(json.dumps({"floor": -1.0, "answer_threshold": -10.0,
                                "weights": {"top1": 1.0}, "chunk_margin": margin,
                                "selection_threshold": -10.0, "answerable_threshold": 0.0}),
                    encoding="utf-8")
    return path, margin


def _doc_texts(corpus: Path | None) -> dict[str, str]:
    if corpus is None or not Path(corpus).is_file():
        return {}
    out = {}
    with Path(corpus).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[row["doc_id"]] = row["text"]
    return out


def features_of(out: dict[str, Any]) -> dict[str, float]:
    """Return a response's gate features, with the reader's best score as `answerable`.

    The score is there only when the reader read the question (not skipped, not refused before).
    """
    diag = out.get("diagnostics") or {}
    features = dict((diag.get("gate") or {}).get("features") or {})
    verdict = diag.get("answerability") or {}
    if features and not verdict.get("skipped", True) and verdict.get("score") is not None:
        features[ANSWERABLE] = float(verdict["score"])
    return features


def collect_samples(questions_path: Path, corpus: Path | None, settings: Any, *,
                    holdout: float, limit: int | None, selection_limit: int, workers: int,
                    quiet: bool) -> tuple[list[Sample], list[Sample], dict[str, Any]]:
    """Run the permissive pass for one question file; return gate and selection samples."""
    from textbound.evaluation import (
        answer_matches,
        file_sha256,
        load_questions,
        prepare_graph,
        progress_bar,
        run_questions,
        sample_questions,
    )

    group = Path(questions_path).parent.name
    questions = sample_questions(load_questions(questions_path), limit)
    docs = _doc_texts(corpus)
    candidates = [q for q in load_questions(questions_path)
                  if q.get("doc_id") in docs and q["kind"] in ("answerable", "near_miss")]
    per_kind: dict[str, int] = {}
    chosen = []
    # in hash order, the first selection_limit of each kind
    for q in sample_questions(candidates, None):
        if per_kind.get(q["kind"], 0) < selection_limit:
            per_kind[q["kind"]] = per_kind.get(q["kind"], 0) + 1
            chosen.append(q)
    graph, store, info = prepare_graph(corpus, settings)
    gate_samples: list[Sample] = []
    sel_samples: list[Sample] = []
    skipped: Counter[str] = Counter()
    try:
        with progress_bar(quiet) as bar:
            task = bar.add_task(f"features {group}", total=len(questions) + len(chosen))
            outs = run_questions(graph, [{"question": q["question"]} for q in questions], {},
                                 workers=workers, on_done=lambda: bar.advance(task))
            sel_outs = run_questions(
                graph, [{"question": q["question"], "selected_text": docs[q["doc_id"]]}
                        for q in chosen], {}, workers=workers, on_done=lambda: bar.advance(task))
    finally:
        store.close()
    for q, out in zip(questions, outs, strict=True):
        diag = out.get("diagnostics") or {}
        features = features_of(out)
        if not features or diag.get("path") in ("refuse_out_of_scope", "refuse_invalid_question"):
            skipped[str(diag.get("path"))] += 1  # decided before or beside the gate
            continue
        correct = (answer_matches(out["answer"], q.get("answers") or [])
                   if q["expected"] == "answer" and not out["was_refusal"] else None)
        gate_samples.append(Sample(str(q["id"]), group, q["kind"], q["expected"], features,
                                   not out["was_refusal"], is_holdout(str(q["id"]), holdout),
                                   correct))
    for q, out in zip(chosen, sel_outs, strict=True):
        features = features_of(out)
        if features:
            sel_samples.append(Sample(str(q["id"]), group, q["kind"], q["expected"], features,
                                      not out["was_refusal"],
                                      is_holdout(str(q["id"]), holdout)))
    data = {"questions": str(questions_path), "questions_sha256": file_sha256(questions_path),
            "corpus": info["corpus"], "corpus_sha256": info["sha256"], "n": len(questions),
            "selections": len(chosen), "skipped_by_path": dict(skipped)}
    return gate_samples, sel_samples, data


def calibrate_command(
    questions: Annotated[list[Path], typer.Option(
        help="Labelled question file; repeat for several (each is one group).")],
    corpus: Annotated[list[Path] | None, typer.Option(
        help="Corpus for the question file at the same position (JSONL or folder); missing "
        "ones default to the bundled textbook.")] = None,
    target_false_refusal: Annotated[float, typer.Option(
        help="Largest share of answerable questions refused, in every group.")] = 0.10,
    holdout: Annotated[float, typer.Option(help="Share of questions held out of the fit.")
                       ] = 0.3,
    out: Annotated[Path, typer.Option(help="Calibration JSON to write.")] = Path(
        "calibration/all-MiniLM-L6-v2.json"),
    limit: Annotated[int | None, typer.Option(help="Questions per file (deterministic sample).")
                     ] = None,
    selection_limit: Annotated[int, typer.Option(
        help="Selected-text examples per kind and file (0: keep selection_threshold).")] = 300,
    workers: Annotated[int, typer.Option(help="Threads running the graph.")] = 4,
    data_dir: Annotated[Path | None, typer.Option(help="Data folder for the collections.")
                        ] = None,
) -> None:
    """Fit the calibrated gate on labelled questions and write the calibration JSON.

    Example: textbound calibrate --questions data/squad2/questions.dev.jsonl --corpus
    data/squad2/corpus.jsonl --questions corpus/questions.jsonl --corpus corpus
    """
    from rich.console import Console

    from textbound.evaluation import eval_settings

    console = Console(stderr=True)
    if not 0 < target_false_refusal < 1 or not 0 <= holdout < 1:
        console.print("[bold red]error:[/] target in (0, 1) and holdout in [0, 1) please")
        raise typer.Exit(code=2)
    corpora: list[Path | None] = list(corpus or [])
    corpora += [None] * (len(questions) - len(corpora))
    base = eval_settings(data_dir, None)
    previous = Path(base.calibration_file) if base.calibration_file else None
    gate_samples: list[Sample] = []
    sel_samples: list[Sample] = []
    data = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            permissive, margin = _permissive_calibration(previous, Path(tmp))
            settings = base.model_copy(update={"calibration_file": permissive,
                                               "policy": "calibrated"})
            for qpath, cpath in zip(questions, corpora, strict=True):
                g, s, d = collect_samples(qpath, cpath, settings, holdout=holdout, limit=limit,
                                          selection_limit=selection_limit, workers=workers,
                                          quiet=not console.is_terminal)
                gate_samples += g
                sel_samples += s
                data.append(d)
        gate = fit_gate(gate_samples, target_false_refusal)
        selection_threshold = None
        selection_metrics: dict[str, Any] = {}
        if selection_limit > 0 and sel_samples:
            selection_threshold, selection_metrics = fit_selection(
                sel_samples, gate.weights, target_false_refusal, gate.answerable_threshold)
    except TextboundError as exc:
        console.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(code=2) from exc
    old = json.loads(previous.read_text(encoding="utf-8")) if previous and \
        previous.is_file() else {}
    if selection_threshold is None:
        selection_threshold = float(old.get("selection_threshold", 0.5))
    # the reader was off for this run: keep the threshold fitted with it before
    answerable_threshold = gate.answerable_threshold if gate.answerable_threshold is not None \
        else float(old.get("answerable_threshold", 0.5))
    correct = [s.correct for s in gate_samples if s.expected == "answer" and s.correct is not None]
    result = {
        "floor": gate.floor,
        "answer_threshold": gate.answer_threshold,
        "weights": gate.weights,
        "chunk_margin": margin,
        "selection_threshold": selection_threshold,
        "answerable_threshold": answerable_threshold,
        "description": f"Fitted by `textbound calibrate` for {base.embedding_model}: at most "
                       f"{target_false_refusal:.0%} false refusals of answerable questions in "
                       "every group, then fewest leaks.",
        "provenance": {
            "command": "textbound calibrate " + shlex.join(sys.argv[2:])
            if len(sys.argv) > 2 and sys.argv[1] == "calibrate" else shlex.join(sys.argv),
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "embedding_model": base.embedding_model,
            "target_false_refusal": target_false_refusal,
            "holdout": holdout,
            "holdout_rule": "sha256('holdout:' + id) / 2**256 < holdout",
            "floor_budget": FLOOR_BUDGET,
            "weight_grid_size": len(WEIGHT_GRID),
            "answerable_threshold_fitted": gate.answerable_threshold is not None,
            "answerable_grid": list(ANSWERABLE_GRID) if gate.answerable_threshold is not None
            else None,
            "data": data,
            "permissive_pass_answer_correct_rate": round(sum(correct) / len(correct), 4)
            if correct else None,
            "gate": gate.metrics,
            "selection": selection_metrics,
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    console.print(json.dumps({k: result[k] for k in ("floor", "answer_threshold", "weights",
                                                       "selection_threshold",
                                                       "answerable_threshold")}))
    console.print(f"wrote {out}")
