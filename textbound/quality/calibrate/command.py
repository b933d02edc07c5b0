"""The `textbound calibrate` command: run the permissive pass, fit, write the calibration file."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from textbound.errors import TextboundError
from textbound.quality.calibrate.dominance import fit_no_worse, selection_no_worse
from textbound.quality.calibrate.fit import (
    ANSWERABLE_GRID,
    FLOOR_BUDGET,
    WEIGHT_GRID,
    Sample,
    fit_gate,
    fit_selection,
    part_metrics,
)
from textbound.quality.calibrate.samples import collect_samples, permissive_calibration

__all__ = ["calibrate_command"]

_REFERENCE_FIELDS = ("floor", "answer_threshold", "weights", "selection_threshold")


def _reference(path: Path, console: Any) -> dict[str, Any]:
    """Read the calibration a refit must beat; a clear error (exit 2) when it is not one.

    Returns its fields, with the file's name and sha256 under "file" and "sha256".
    """
    try:
        raw = path.read_bytes()
        found = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as exc:
        console.print(f"[bold red]error:[/] --no-worse-than {escape(str(path))}: "
                      f"{escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(code=2) from exc
    missing = [k for k in _REFERENCE_FIELDS if k not in found] if isinstance(found, dict) \
        else list(_REFERENCE_FIELDS)
    if missing:
        console.print(f"[bold red]error:[/] --no-worse-than {escape(str(path))} is not a "
                      f"calibration file (no {', '.join(missing)}); give the JSON that "
                      "`textbound calibrate` writes", soft_wrap=True)
        raise typer.Exit(code=2)
    return {**found, "file": str(path), "sha256": hashlib.sha256(raw).hexdigest()}


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
    no_worse_than: Annotated[Path | None, typer.Option(
        help="A calibration to beat: choose the gate that, against it, answers no fewer "
        "questions rightly and lets through no more leaks in any question file (fitted and "
        "held-out parts each), gaining most; nothing is written when none does.")] = None,
) -> None:
    """Fit the calibrated gate on labelled questions and write the calibration JSON.

    Example: textbound calibrate --questions data/squad2/questions.dev.jsonl --corpus
    data/squad2/corpus.jsonl --questions corpus/questions.jsonl --corpus corpus

    With --no-worse-than calibration/all-MiniLM-L6-v2.json the refit is kept only where it beats
    that calibration on every question file (docs/pool.md, "A refit that costs no book").
    """
    from rich.console import Console

    from textbound.quality.evaluation import eval_settings

    console = Console(stderr=True)
    if not 0 < target_false_refusal < 1 or not 0 <= holdout < 1:
        console.print("[bold red]error:[/] target in (0, 1) and holdout in [0, 1) please")
        raise typer.Exit(code=2)
    corpora: list[Path | None] = list(corpus or [])
    corpora += [None] * (len(questions) - len(corpora))
    try:
        base = eval_settings(data_dir, None)
    except TextboundError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(code=2) from exc
    previous = Path(base.calibration_file) if base.calibration_file else None
    gate_samples: list[Sample] = []
    sel_samples: list[Sample] = []
    data = []
    reference: dict[str, Any] | None = None
    if no_worse_than is not None:
        reference = _reference(no_worse_than, console)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            permissive, margin = permissive_calibration(previous, Path(tmp))
            settings = base.model_copy(update={"calibration_file": permissive,
                                               "policy": "calibrated"})
            for qpath, cpath in zip(questions, corpora, strict=True):
                g, s, d = collect_samples(qpath, cpath, settings, holdout=holdout, limit=limit,
                                          selection_limit=selection_limit, workers=workers,
                                          quiet=not console.is_terminal)
                gate_samples += g
                sel_samples += s
                data.append(d)
        selection_threshold = None
        selection_metrics: dict[str, Any] = {}
        if reference is not None:
            better = fit_no_worse(gate_samples, reference)
            if better is None:
                console.print(f"no gate of the grid beats {escape(str(no_worse_than))} on every "
                              "question file; nothing written")
                raise typer.Exit(code=1)
            gate = better
            if selection_limit > 0 and sel_samples:
                selection_threshold = selection_no_worse(
                    sel_samples, gate.weights, gate.answerable_threshold, reference)
                if selection_threshold is None:
                    console.print("no selection threshold with the new weights is as good as "
                                  f"{escape(str(no_worse_than))}'s; nothing written")
                    raise typer.Exit(code=1)
                selection_metrics = part_metrics(sel_samples, -1.0, selection_threshold,
                                                 gate.weights, gate.answerable_threshold)
        else:
            gate = fit_gate(gate_samples, target_false_refusal)
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
                       "every group, then fewest leaks." if reference is None else
                       f"Fitted by `textbound calibrate` for {base.embedding_model}: the gate "
                       f"that, against {no_worse_than}, answers no fewer questions rightly and "
                       "lets no more leaks through in any question file (fitted and held-out "
                       "parts each), gaining most.",
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
            "reference": None if reference is None else {
                k: reference.get(k)
                for k in ("file", "sha256", *_REFERENCE_FIELDS, "answerable_threshold")},
            "selection": selection_metrics,
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    console.print(json.dumps({k: result[k] for k in ("floor", "answer_threshold", "weights",
                                                       "selection_threshold",
                                                       "answerable_threshold")}))
    console.print(f"wrote {out}")
