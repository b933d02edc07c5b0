"""The evaluation report as Markdown: per policy and kind, answered, correct and refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textbound.evaluation.failures import FAILURE_KINDS


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def write_markdown(report: dict[str, Any], path: Path) -> None:
    """Write a readable summary of the report."""
    lines = [
        f"# Evaluation: {Path(report['questions']['path']).name}",
        "",
        f"- corpus: `{report['corpus']['corpus']}` ({report['corpus']['chunks']} chunks, "
        f"collection `{report['corpus']['collection']}`, ingest "
        f"{report['corpus']['ingest_seconds']} s)",
        f"- questions: {report['questions']['n']}"
        + (f" (deterministic sample, limit {report['questions']['limit']})"
           if report["questions"]["limit"] else ""),
        f"- total time: {report['seconds_total']} s with {report['workers']} worker threads",
        f"- scoring: {report['scoring']['short_gold']}; long answers: "
        f"{report['scoring']['long_gold']}",
        "",
        "Refusals by reason; \"(answerable)\": refused by the answerability reader (failed "
        "check `answerable`) rather than the score gate.",
        "",
        "| policy | kind | n | answered | correct (of answered) | correct (of all) | refusals |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for policy, rep in report["policies"].items():
        for kind, k in rep["kinds"].items():
            refusals = ", ".join(f"{r}: {c}" for r, c in k["refusals"].items()) or "–"
            answer = k["expected"] == "answer"
            correct = _pct(k.get("correct_rate")) if answer else ""
            of_all = _pct(k.get("correct_of_all")) if answer else ""
            lines.append(f"| {policy} | {kind} | {k['n']} | {_pct(k['answer_rate'])} | "
                         f"{correct} | {of_all} | {refusals} |")
    lines += ["", "Failures per kind (`--records` writes each question's answer, citations, "
              "reader span and failure):", "",
              "| policy | " + " | ".join(FAILURE_KINDS) + " | detail |",
              "| --- | " + " | ".join("---:" for _ in FAILURE_KINDS) + " | --- |"]
    for policy, rep in report["policies"].items():
        fails = rep.get("failures") or {}
        detail = "; ".join(f"{k}: " + ", ".join(f"{r} {c}" for r, c in v.items())
                           for k, v in (fails.get("detail") or {}).items()) or "–"
        lines.append(f"| {policy} | "
                     + " | ".join(str((fails.get("failures") or {}).get(k, 0))
                                  for k in FAILURE_KINDS) + f" | {detail} |")
    lines += ["", "Latency per path (ms):", "", "| policy | path | n | p50 | p95 |",
              "| --- | --- | ---: | ---: | ---: |"]
    for policy, rep in report["policies"].items():
        for p, lat in rep["latency"].items():
            lines.append(f"| {policy} | {p} | {lat['n']} | {lat['p50_ms']} | {lat['p95_ms']} |")
    lines += ["", "Gate in force:", ""]
    for policy, rep in report["policies"].items():
        c = rep["calibration"]
        reader = (f", answerable_threshold {rep['tunables']['answerable_threshold']}"
                  if rep.get("tunables", {}).get("answerability") else ", answerability off")
        lines.append(f"- {policy}: floor {c['floor']}, answer_threshold "
                     f"{c['answer_threshold']}, weights {c['weights']}"
                     + (f", mean_threshold {c['mean_threshold']}" if c.get("mean_threshold")
                        is not None else "") + reader)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
