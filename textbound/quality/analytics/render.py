"""The report's documents: report.md, report.html and summary.json, written beside the plots."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textbound.quality.analytics.gaps import ChapterGaps
from textbound.quality.analytics.marked import MAX_PER_CHAPTER, FeedbackSummary, passage_place
from textbound.quality.analytics.plots import short, write_plots
from textbound.quality.analytics.scan import LogSummary
from textbound.quality.analytics.topics import (
    CATEGORY_OF_REASON,
    COVERAGE_GAP,
    OUT_OF_SCOPE_DEMAND,
    TopicGroup,
)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


_MD_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", "\\": "\\\\", "|": "\\|", "\n": " ",
                             "\r": " "})
_LINK_TAIL = re.compile(r"\](?=[(\[])")


def _md_cell(text: str) -> str:
    """Return text (a student's, a document's, a log's) as inert Markdown on one line.

    `<` and `&` become entities, so no tag, autolink or entity a student typed is HTML once
    rendered, even by a renderer that passes raw HTML; a `]` that would close a link or image
    (`[x](url)`, `[x][ref]`) is escaped, while citations such as `[1]` read as they are; `|`
    keeps a table cell a cell.
    """
    return _LINK_TAIL.sub(r"]\\", text.translate(_MD_ESCAPES))


def _md_text(text: str) -> str:
    """Return the report's own prose (its code spans kept) with no HTML left in it."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _fmt_time(dt: datetime | None) -> str:
    return dt.strftime("%Y-%m-%d %H:%M UTC") if dt else "–"


def _top_reasons(reasons: Counter[str], n: int = 3) -> str:
    return ", ".join(f"{r} ({k})" for r, k in reasons.most_common(n)) or "–"


def _overview(summary: LogSummary, data_dir: Path | None) -> list[tuple[str, str]]:
    s = summary
    rows = [
        ("audit log", s.shown(data_dir)),
        ("size read", f"{s.bytes_read:,} bytes in {s.lines:,} lines"),
        ("period", f"{_fmt_time(s.first)} to {_fmt_time(s.last)}"),
        ("responses", f"{s.records:,}"),
        ("answers", f"{s.answers:,} ({_pct(s.answers, s.records)})"),
        ("refusals", f"{s.refusals:,} ({_pct(s.refusals, s.records)})"),
        ("malformed lines skipped", f"{s.malformed_total:,}" + (
            " (" + ", ".join(f"{k}: {v}" for k, v in s.malformed.most_common()) + ")"
            if s.malformed else "")),
    ]
    if s.since is not None:
        rows.insert(3, ("since", f"{_fmt_time(s.since)} ({s.before_since:,} earlier responses "
                                 "left out)"))
    return rows


def _exactness(summary: LogSummary) -> str:
    q = summary.questions
    if q.exact:
        return (f"All counts are exact: the {len(q):,} distinct refused questions fit in the "
                f"question table (capacity {q.capacity:,}).")
    return (f"Line, answer, refusal and per-reason counts are exact. {q.total:,} refusals of more "
            f"distinct questions than the question table holds ({q.capacity:,}) were counted "
            "with the Space-Saving algorithm: a count shown as `a–b` lies between a and b, and "
            f"every question refused more than {q.guaranteed_above():,} times is listed.")


def write_report(
    out_dir: Path,
    summary: LogSummary,
    groups: list[TopicGroup],
    *,
    grouping_note: str,
    feedback: FeedbackSummary | None = None,
    data_dir: Path | None = None,
    gaps: list[ChapterGaps] | None = None,
) -> list[Path]:
    """Write report.md, report.html, summary.json and the PNG plots into out_dir.

    Files are named relative to `data_dir` (the server's data folder), else by name alone.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fb = feedback or FeedbackSummary(path=None)
    gaps = gaps or []
    plots = write_plots(out, summary, groups, fb, gaps)
    return [*plots.values(),
            _write_markdown(out, summary, groups, plots, grouping_note, fb, data_dir, gaps),
            _write_html(out, summary, groups, plots, grouping_note, fb, data_dir, gaps),
            _write_json(out, summary, groups, grouping_note, fb, data_dir, gaps)]


# --- coverage gaps -------------------------------------------------------------------------------
MAX_GAPS_PER_CHAPTER = 25
"""Most gap questions listed per chapter (the most asked); the rest are counted."""
GAPS_INTRO = (
    "Questions the book's chapters raise and the book does not answer: retrieval found a "
    "passage on topic, and the answer was refused for lack of context (`insufficient_context`, "
    "`question_not_answered`, ...). Each is filed under the chapter of its best retrieved "
    "passage. Off-topic questions (nothing close retrieved, names the book never uses) and "
    "out-of-scope ones are not gaps. Students: distinct sessions or conversations that asked; "
    "a question asked with neither counts once per ask.")


def _gaps_intro(summary: LogSummary, gaps: list[ChapterGaps]) -> str:
    if not gaps:
        return ("No coverage gaps in the period: no question on the book's topics was refused "
                "for lack of an answer.")
    n = sum(len(ch.questions) for ch in gaps)
    return (f"{n:,} question{'s' if n != 1 else ''} in {len(gaps):,} "
            f"chapter{'s' if len(gaps) != 1 else ''} ({summary.gaps:,} of the "
            f"{summary.refusals:,} refusals). " + GAPS_INTRO)


def _gap_more(ch: ChapterGaps) -> str:
    extra = len(ch.questions) - MAX_GAPS_PER_CHAPTER
    return f"and {extra:,} more question{'s' if extra != 1 else ''}" if extra > 0 else ""


def _gaps_markdown(summary: LogSummary, gaps: list[ChapterGaps],
                   plots: dict[str, Path]) -> list[str]:
    lines = ["", "## Coverage gaps by chapter", "", _md_text(_gaps_intro(summary, gaps))]
    if "gaps" in plots:
        lines += ["", f"![coverage gaps per chapter]({plots['gaps'].name})"]
    if gaps:
        lines += ["", "| chapter | gap questions | students asking | example question |",
                  "|---|---:|---:|---|"]
        lines += [f"| {_md_cell(ch.chapter)} | {len(ch.questions):,} | {ch.students:,} | "
                  f"{_md_cell(short(ch.questions[0].sample or ch.questions[0].key, 160))} |"
                  for ch in gaps]
    for ch in gaps:
        lines += ["", f"### {_md_cell(ch.chapter)} — {len(ch.questions):,} gap "
                      f"question{'s' if len(ch.questions) != 1 else ''}", "",
                  "| students | question (example as asked) | refused |", "|---:|---|---:|"]
        lines += [f"| {q.students_text()} | {_md_cell(short(q.sample or q.key, 160))} | "
                  f"{q.span()} |" for q in ch.questions[:MAX_GAPS_PER_CHAPTER]]
        if _gap_more(ch):
            lines += ["", _gap_more(ch) + "."]
    return lines


# --- answers students marked wrong ---------------------------------------------------------------
ANSWER_CHARS = 280


def _feedback_intro(fb: FeedbackSummary, data_dir: Path | None) -> str:
    if not fb.exists:
        return ("No ratings yet: students rate answers with the reader page's buttons, "
                "`textbound feedback RUN_ID up|down` or `/up` and `/down` in `textbound chat`"
                + (f" (kept in {fb.shown(data_dir)})." if fb.path or fb.where else "."))
    if not fb.down:
        return (f"No answers were marked wrong in the period ({fb.rated:,} rated, "
                f"{fb.up:,} up).")
    return (f"{fb.down:,} of the {fb.rated:,} rated responses were marked wrong (the latest "
            "rating of each counts), grouped by the chapter of the first cited passage; "
            "refusals cite none. Log: " + fb.shown(data_dir) + ".")


def _question(rec: dict[str, Any]) -> str:
    asked = str(rec.get("asked_question") or rec.get("question") or "")
    standalone = str(rec.get("question") or "")
    return asked + (f" (read as: {standalone})" if standalone and standalone != asked else "")


def _answer(rec: dict[str, Any]) -> str:
    prefix = f"refused ({rec.get('refusal_reason')}): " if rec.get("was_refusal") else ""
    answer = rec.get("answer")
    return prefix + (short(" ".join(str(answer).split()), ANSWER_CHARS) if answer
                     else "(answer text not recorded)")


def _passages(rec: dict[str, Any]) -> list[str]:
    return [passage_place(s) + (f": “{s['excerpt']}”" if s.get("excerpt") else "")
            for s in rec.get("sources") or []]


def _more(n: int) -> str:
    return f"and {n - MAX_PER_CHAPTER:,} earlier ones" if n > MAX_PER_CHAPTER else ""


def _feedback_markdown(fb: FeedbackSummary, plots: dict[str, Path],
                       data_dir: Path | None) -> list[str]:
    lines = ["", "## Answers students marked wrong", "", _md_text(_feedback_intro(fb, data_dir))]
    if "marked_wrong" in plots:
        lines += ["", f"![answers marked wrong per chapter]({plots['marked_wrong'].name})"]
    for ch in fb.chapters:
        lines += ["", f"### {_md_cell(ch.chapter)} — {len(ch.runs):,} marked wrong", "",
                  "| rated | question | answer | comment | cited passage |",
                  "|---|---|---|---|---|"]
        for rec in ch.shown:
            lines.append(" | ".join([
                f"| {_md_cell(str(rec.get('timestamp', ''))[:16].replace('T', ' '))}",
                _md_cell(_question(rec)), _md_cell(_answer(rec)),
                _md_cell(str(rec.get("comment") or "–")),
                _md_cell("; ".join(_passages(rec)) or "–")]) + " |")
        if _more(len(ch.runs)):
            lines += ["", _more(len(ch.runs)) + "."]
    return lines


def _feedback_json(fb: FeedbackSummary, data_dir: Path | None) -> dict[str, Any]:
    return {"log": fb.shown(data_dir) if fb.path or fb.where else None, "rated": fb.rated,
            "up": fb.up, "down": fb.down,
            "chapters": [{"chapter": ch.chapter, "marked_wrong": len(ch.runs), "runs": [
                {k: rec.get(k) for k in ("run_id", "timestamp", "thread_id", "asked_question",
                                         "question", "answer", "was_refusal", "refusal_reason",
                                         "comment", "sources")}
                for rec in ch.shown]} for ch in fb.chapters]}


def _write_markdown(out: Path, s: LogSummary, groups: list[TopicGroup], plots: dict[str, Path],
                    note: str, fb: FeedbackSummary, data_dir: Path | None,
                    gaps: list[ChapterGaps]) -> Path:
    lines = ["# Refusal report", "",
             f"Generated {_fmt_time(datetime.now(UTC))} by `textbound report`.", "",
             "| | |", "|---|---|"]
    lines += [f"| {k} | {_md_cell(v)} |" for k, v in _overview(s, data_dir)]
    if s.malformed_examples:
        lines += ["", "First malformed lines: " + ", ".join(
            f"line {n} ({kind})" for n, kind in s.malformed_examples) + "."]
    lines += ["", "## Answers and refusals over time", ""]
    lines += [f"![answers and refusals over time]({plots['timeline'].name})" if "timeline" in plots
              else "No responses in the period."]
    lines += ["", "## Refusals per reason", ""]
    if "reasons" in plots:
        lines += [f"![refusals per reason]({plots['reasons'].name})", "",
                  "| reason | what it suggests | refusals | share |", "|---|---|---:|---:|"]
        lines += [f"| {f'`{r}`' if r.isidentifier() else _md_cell(r)} | "
                  f"{CATEGORY_OF_REASON.get(r, 'other')} | {k:,} | "
                  f"{_pct(k, s.refusals)} |" for r, k in s.reasons.most_common()]
    else:
        lines += ["No refusals in the period."]
    lines += _gaps_markdown(s, gaps, plots)
    lines += ["", "## Most refused questions by topic", "", _md_text(note), "",
              "A **coverage gap** is a topic asked about often and refused for lack of context "
              "on topic (`insufficient_context`, `ungrounded_answer`, ...): the documents could "
              "be extended there. An **off-topic** question found nothing close "
              "(`empty_retrieval`); an **out-of-scope demand** is refused as `out_of_scope`: "
              "users want something the assistant is not for.", ""]
    if "topics" in plots:
        lines += [f"![most refused topics]({plots['topics'].name})", ""]
    lines += ["| topic | verdict | refusals | questions | nearest cosine | top reasons |",
              "|---|---|---:|---:|---:|---|"]
    for g in groups:
        score = f"{g.score:.2f}" if g.score is not None else "–"
        lines.append(f"| {_md_cell(g.topic)} | **{g.verdict}** | {g.span()} | "
                     f"{len(g.questions)} | {score} | {_md_cell(_top_reasons(g.reasons()))} |")
    for g in groups:
        lines += ["", f"### {_md_cell(g.topic)} — {g.verdict}", "",
                  "| refused | question | reasons | verdict |", "|---:|---|---|---|"]
        for q in g.questions:
            sel = " (about a selection)" if q.selected else ""
            lines.append(f"| {q.span()} | {_md_cell(short(q.sample or q.key, 160))}{sel} | "
                         f"{_md_cell(_top_reasons(q.reasons))} | {q.verdict} |")
    lines += _feedback_markdown(fb, plots, data_dir)
    lines += ["", "## How exact is this", "", _exactness(s), ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _write_html(out: Path, s: LogSummary, groups: list[TopicGroup], plots: dict[str, Path],
                note: str, fb: FeedbackSummary, data_dir: Path | None,
                gaps: list[ChapterGaps]) -> Path:
    e = html.escape

    def table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
        h = "".join(f"<th>{e(c)}</th>" for c in head)
        b = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows)
        return f"<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>"

    def img(key: str, alt: str) -> str:
        return f'<p><img src="{e(plots[key].name)}" alt="{e(alt)}"></p>' if key in plots else ""

    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Refusal report</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;"
        "padding:0 1em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
        "padding:.25em .5em;text-align:left;vertical-align:top}img{max-width:100%}"
        ".gap{color:#d62728}.oos{color:#1f77b4}</style></head><body>",
        "<h1>Refusal report</h1>",
        table(["", ""], _overview(s, data_dir)),
        "<h2>Answers and refusals over time</h2>", img("timeline", "answers and refusals"),
        "<h2>Refusals per reason</h2>", img("reasons", "refusals per reason"),
        table(["reason", "what it suggests", "refusals", "share"],
              [(r, CATEGORY_OF_REASON.get(r, "other"), f"{k:,}", _pct(k, s.refusals))
               for r, k in s.reasons.most_common()]),
        "<h2>Coverage gaps by chapter</h2>", f"<p>{e(_gaps_intro(s, gaps))}</p>",
        img("gaps", "coverage gaps per chapter"),
        table(["chapter", "gap questions", "students asking", "example question"],
              [(ch.chapter, f"{len(ch.questions):,}", f"{ch.students:,}",
                ch.questions[0].sample or ch.questions[0].key) for ch in gaps]) if gaps else "",
    ]
    for gap in gaps:
        parts.append(f"<h3>{e(gap.chapter)} — {len(gap.questions):,} gap questions</h3>")
        parts.append(table(["students", "question (example as asked)", "refused"],
                           [(q.students_text(), q.sample or q.key, q.span())
                            for q in gap.questions[:MAX_GAPS_PER_CHAPTER]]))
        if _gap_more(gap):
            parts.append(f"<p>{e(_gap_more(gap))}.</p>")
    parts += [
        "<h2>Most refused questions by topic</h2>", f"<p>{e(note)}</p>",
        img("topics", "most refused topics"),
    ]
    for g in groups:
        cls = {COVERAGE_GAP: "gap", OUT_OF_SCOPE_DEMAND: "oos"}.get(g.verdict, "")
        score = f", nearest cosine {g.score:.2f}" if g.score is not None else ""
        parts.append(f"<h3>{e(g.topic)} — <span class='{cls}'>{e(g.verdict)}</span> "
                     f"({e(g.span())} refusals{score})</h3>")
        parts.append(table(["refused", "question", "reasons", "verdict"],
                           [(q.span(), q.sample or q.key, _top_reasons(q.reasons), q.verdict)
                            for q in g.questions]))
    parts += ["<h2>Answers students marked wrong</h2>",
              f"<p>{e(_feedback_intro(fb, data_dir))}</p>",
              img("marked_wrong", "answers marked wrong per chapter")]
    for ch in fb.chapters:
        parts.append(f"<h3>{e(ch.chapter)} — {len(ch.runs):,} marked wrong</h3>")
        parts.append(table(["rated", "question", "answer", "comment", "cited passage"], [
            (str(rec.get("timestamp", ""))[:16].replace("T", " "), _question(rec), _answer(rec),
             str(rec.get("comment") or "–"), "; ".join(_passages(rec)) or "–")
            for rec in ch.shown]))
        if _more(len(ch.runs)):
            parts.append(f"<p>{e(_more(len(ch.runs)))}.</p>")
    parts += ["<h2>How exact is this</h2>", f"<p>{e(_exactness(s))}</p>", "</body></html>"]
    path = out / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _write_json(out: Path, s: LogSummary, groups: list[TopicGroup], note: str,
                fb: FeedbackSummary, data_dir: Path | None, gaps: list[ChapterGaps]) -> Path:
    def when(dt: datetime | None) -> str | None:
        return dt.isoformat().replace("+00:00", "Z") if dt else None

    data = {
        "audit_log": s.shown(data_dir), "bytes_read": s.bytes_read, "lines": s.lines,
        "since": when(s.since), "before_since": s.before_since,
        "malformed": dict(s.malformed), "malformed_examples": s.malformed_examples,
        "first": when(s.first), "last": when(s.last),
        "answers": s.answers, "refusals": s.refusals, "reasons": dict(s.reasons.most_common()),
        "questions_exact": s.questions.exact, "question_table_capacity": s.questions.capacity,
        "grouping": note,
        "gap_refusals": s.gaps,
        "gaps": [{"chapter": ch.chapter, "students": ch.students, "refusals": ch.refusals,
                  "questions": [{"question": q.sample or q.key, "students": q.students,
                                 "students_capped": q.students_text().endswith("+"),
                                 "refusals": q.count, "gap_refusals": q.gaps,
                                 "reasons": dict(q.reasons)}
                                for q in ch.questions[:MAX_GAPS_PER_CHAPTER]],
                  "more_questions": max(0, len(ch.questions) - MAX_GAPS_PER_CHAPTER)}
                 for ch in gaps],
        "topics": [{"topic": g.topic, "verdict": g.verdict, "refusals": g.count,
                    "refusals_low": g.low, "nearest_cosine": g.score,
                    "reasons": dict(g.reasons()),
                    "questions": [{"question": q.sample or q.key, "refusals": q.count,
                                   "refusals_low": q.low, "reasons": dict(q.reasons),
                                   "verdict": q.verdict}
                                  for q in g.questions]} for g in groups],
        "marked_wrong": _feedback_json(fb, data_dir),
    }
    path = out / "summary.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return path
