"""The evaluation report as Markdown: per policy and kind, answered, correct and refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textbound.quality.evaluation.failures import FAILURE_KINDS


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
    lines += _conversation_lines(report)
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


def _count(part: dict[str, Any], key: str) -> str:
    return f"{part[key]}/{part['n']}" if part["n"] else "–"


def _conversation_lines(report: dict[str, Any]) -> list[str]:
    """The conversations section: first turns and follow-ups apart, then the rewrites."""
    convs = report.get("conversations")
    if not convs:
        return []
    lines = ["", f"Conversations: {report['questions'].get('conversations')} conversations, "
             f"{report['questions']['n']} turns, each conversation in its own thread, turns in "
             "order. Answerable: answered with a gold answer / refused, of all answerable turns; "
             "near-miss and out-of-corpus: answered (leaked).", "",
             "| policy | turns | n | answerable correct | answerable refused | "
             "near-miss answered | out-of-corpus answered |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for policy, c in convs.items():
        for label, part in (("first", c["first_turns"]), ("follow-up", c["follow_ups"])):
            a = part["answerable"]
            lines.append(
                f"| {policy} | {label} | {part['n']} | {_count(a, 'correct')} "
                f"({_pct(a['correct_rate'])}) | {_count(a, 'refused')} | "
                f"{_count(part['near_miss'], 'answered')} | "
                f"{_count(part['out_of_corpus'], 'answered')} |")
    lines += ["", f"Standalone rewrites ({next(iter(convs.values()))['rewrite']['rule']}):", "",
              "| policy | follow-ups needing context | rewrite right | mean F1 | stand-alone "
              "follow-ups rewritten | first turns rewritten |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for policy, c in convs.items():
        r = c["rewrite"]
        lines.append(f"| {policy} | {r['n']} | {r['ok']} ({_pct(r['accuracy'])}) | "
                     f"{r['f1_mean']} | {r['standalone_rewritten']}/{r['standalone_n']} | "
                     f"{c['first_turns']['rewritten']}/{c['first_turns']['n']} |")
    lines += ["", "Per follow-up kind:", "",
              "| policy | follow-up | n | answerable correct | refuse-expected answered | "
              "rewritten | rewrite right |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for policy, c in convs.items():
        for name, k in c["follow_ups"]["by_follow_up"].items():
            lines.append(f"| {policy} | {name} | {k['n']} | {k['correct']}/{k['answerable']} | "
                         f"{k['leaked']}/{k['refuse_expected']} | {k['rewritten']} | "
                         f"{k['rewrite_ok']} |")
    return lines
