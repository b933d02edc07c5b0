"""The permissive pass: every question through the real graph with a gate that lets all through.

The calibration it runs under lets every question past the score gate and the answerability reader
(floor -1, answer and selection thresholds -10, reader threshold 0), so each response carries the
gate's evidence features and the reader's score, and whether generation and grounding answered.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from graph.reasons import judges_evidence
from textbound.quality.calibrate.fit import ANSWERABLE, Sample, is_holdout
from textbound.settings import Settings

__all__ = ["collect_samples", "features_of", "permissive_calibration"]


def permissive_calibration(base: Path | None, folder: Path) -> tuple[Path, float]:
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


def collect_samples(questions_path: Path, corpus: Path | None, settings: Settings, *,
                    holdout: float, limit: int | None, selection_limit: int, workers: int,
                    quiet: bool) -> tuple[list[Sample], list[Sample], dict[str, Any]]:
    """Run the permissive pass for one question file; return gate and selection samples."""
    from textbound.quality.evaluation import (
        answer_matches,
        file_sha256,
        load_questions,
        prepared_graph,
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
    gate_samples: list[Sample] = []
    sel_samples: list[Sample] = []
    skipped: Counter[str] = Counter()
    with prepared_graph(corpus, settings) as (graph, _, info), progress_bar(quiet) as bar:
        task = bar.add_task(f"features {group}", total=len(questions) + len(chosen))
        outs = run_questions(graph, [{"question": q["question"]} for q in questions], {},
                             workers=workers, on_done=lambda: bar.advance(task))
        sel_outs = run_questions(
            graph, [{"question": q["question"], "selected_text": docs[q["doc_id"]]}
                    for q in chosen], {}, workers=workers, on_done=lambda: bar.advance(task))
    for q, out in zip(questions, outs, strict=True):
        diag = out.get("diagnostics") or {}
        features = features_of(out)
        if not features or not judges_evidence(diag.get("path")):
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
