"""`textbound eval`: the command that runs an evaluation and writes its report and plots."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from textbound.errors import TextboundError
from textbound.quality.evaluation.conversations import is_conversation_file
from textbound.quality.evaluation.data import load_questions, sample_questions
from textbound.quality.evaluation.experiments import require_langsmith_key, run_langsmith_experiment
from textbound.quality.evaluation.plots import write_plots
from textbound.quality.evaluation.report import write_markdown
from textbound.quality.evaluation.runner import evaluate, prepared_graph
from textbound.quality.plotting import pyplot

if TYPE_CHECKING:
    from textbound.settings import Settings


def eval_settings(data_dir: Path | None, calibration: Path | None) -> Any:
    """Return settings for an evaluation run: no audit log, optional data dir and calibration."""
    from textbound.settings import load_settings

    values: dict[str, Any] = {"audit_log": ""}
    if data_dir is not None:
        values["data_dir"] = data_dir
    if calibration is not None:
        values["calibration_file"] = calibration
    return load_settings(**values)


def _generator(value: str | None) -> str | None:
    if value in (None, ""):
        return None
    if value not in ("extractive", "chat", "peer"):
        raise typer.BadParameter(f"{value!r} is not one of extractive, chat, peer")
    return value


def eval_command(
    corpus: Annotated[Path | None, typer.Option(
        help="Benchmark corpus (JSONL of {doc_id, title, text}) or a folder of documents. "
        "Default: the bundled textbook.")] = None,
    questions: Annotated[Path | None, typer.Option(
        help="Question file: one {id, question, expected, answers, kind} per line, or a "
        "conversation file: one {id, turns: [...]} per line, each run in its own thread "
        "(corpus/conversations.dev.jsonl). Default: the bundled textbook's "
        "corpus/questions.jsonl.")] = None,
    out: Annotated[Path, typer.Option(help="Folder for report.json, report.md and plots.")
                   ] = Path("eval-out"),
    policy: Annotated[list[str] | None, typer.Option(
        help="Gate policy to evaluate; repeat to compare (calibrated, seed_000, seed_002, "
        "seed_004).")] = None,
    limit: Annotated[int | None, typer.Option(
        help="Evaluate a deterministic sample of this many questions.")] = None,
    workers: Annotated[int, typer.Option(help="Threads running the graph.")] = 4,
    data_dir: Annotated[Path | None, typer.Option(
        help="Data folder for the evaluation collections (default: TEXTBOUND_DATA_DIR).")] = None,
    calibration: Annotated[Path | None, typer.Option(
        help="Calibration JSON for the calibrated policy (default: the shipped one).")] = None,
    records: Annotated[bool, typer.Option(
        help="Also write records.jsonl, one per question (per turn for conversations: asked, "
        "standalone, the gold standalone, answer, path).")] = False,
    langsmith: Annotated[bool, typer.Option(
        "--langsmith", help="Also upload the questions as a LangSmith dataset (idempotent) and "
        "run each policy as a LangSmith experiment. Needs LANGSMITH_API_KEY.")] = False,
    dataset: Annotated[str | None, typer.Option(
        help="LangSmith dataset name (default: textbound-<questions file stem>).")] = None,
    generator: Annotated[str | None, typer.Option(
        help="extractive or chat (default: TEXTBOUND_GENERATOR), or peer: the same retrieval "
        "and chat model in a plain LangChain RAG chain with no gates and no validator, the "
        "baseline to compare with. With chat or peer the run is "
        "resumable: one question at a time, each record with its draft appended to "
        "<out>/journal/<policy>.jsonl, and the same command run again skips what is there "
        "(the model: textbound model serve, then env $(textbound model env)).",
        callback=lambda v: _generator(v))] = None,
) -> None:
    """Run a labelled question set through the graph; report answer, refusal and leak rates.

    Example: textbound eval --corpus data/squad2/corpus.jsonl --questions
    data/squad2/questions.dev.jsonl --policy calibrated --policy seed_000 --out eval-squad

    Example (a local chat model): textbound model serve; env $(textbound model env)
    textbound eval --generator chat --out eval-chat
    """
    from rich.console import Console
    from rich.markup import escape

    console = Console(stderr=True)
    if questions is None:
        from textbound.settings import PACKAGE_ROOT

        questions = PACKAGE_ROOT / "corpus" / "questions.jsonl"
    if langsmith and is_conversation_file(questions):
        console.print("[bold red]error:[/] --langsmith runs single questions; "
                      f"{escape(str(questions))} holds conversations (lines with turns)",
                      soft_wrap=True)
        raise typer.Exit(code=2)
    if langsmith:
        try:
            require_langsmith_key()  # before any ingestion or evaluation
        except TextboundError as exc:
            console.print(f"[bold red]error:[/] {escape(str(exc))}")
            raise typer.Exit(code=2) from exc
    try:
        pyplot()  # the report's plots need the reports extra: fail before the run, not after it
        settings = eval_settings(data_dir, calibration)
        chat = (generator or settings.tunable_values().generator) in ("chat", "peer")
        result = evaluate(corpus, questions, settings, policies=policy or ["calibrated"],
                          limit=limit, workers=workers, quiet=not console.is_terminal,
                          generator=generator, journal=out / "journal" if chat else None)
    except TextboundError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(code=2) from exc
    out.mkdir(parents=True, exist_ok=True)
    report = result["report"]
    report["plots"] = write_plots(result, out, f"{questions.parent.name}/{questions.stem}")
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    write_markdown(report, out / "report.md")
    if records:
        with (out / "records.jsonl").open("w", encoding="utf-8") as fh:
            for pol, recs in result["records"].items():
                for r in recs:
                    fh.write(json.dumps({"policy": pol} | r) + "\n")
    console.print((out / "report.md").read_text(encoding="utf-8"))
    if langsmith:
        run_experiments(corpus, questions, settings, policy or ["calibrated"], limit,
                        dataset or f"textbound-{questions.stem}", console)


def run_experiments(corpus: Path | None, questions: Path, settings: Settings,
                    policies: Sequence[str], limit: int | None, dataset: str, console: Any) -> None:
    """Run each policy as a LangSmith experiment over the same (reused) collection."""
    rows = sample_questions(load_questions(questions), limit)
    with prepared_graph(corpus, settings) as (graph, _, _):
        for pol in policies:
            summary = run_langsmith_experiment(
                rows, functools.partial(_invoke_with_policy, graph, pol), dataset_name=dataset,
                experiment_prefix=f"textbound-{pol}", metadata={"policy": pol})
            console.print(f"LangSmith experiment ({pol}): {summary}")


def _invoke_with_policy(graph: Any, policy: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return dict(graph.invoke(inputs, context={"policy": policy}))
