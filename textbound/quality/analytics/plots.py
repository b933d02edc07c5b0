"""The report's PNG plots: responses over time, refusals per reason, gaps, topics, marked wrong."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from textbound.quality.analytics.gaps import ChapterGaps
from textbound.quality.analytics.marked import REFUSALS, FeedbackSummary
from textbound.quality.analytics.scan import LogSummary
from textbound.quality.analytics.topics import (
    CATEGORY_OF_REASON,
    COVERAGE_GAP,
    LACK_OF_CONTEXT,
    NO_NEARBY_SECTION,
    OFF_TOPIC_DEMAND,
    OUT_OF_SCOPE,
    OUT_OF_SCOPE_DEMAND,
    RARE_GAP,
    TopicGroup,
)
from textbound.quality.plotting import pyplot


def short(text: str, n: int) -> str:
    """Cut text to n characters, ending in an ellipsis when cut."""
    return text if len(text) <= n else text[: n - 1] + "…"


_VERDICT_COLOURS = {COVERAGE_GAP: "#d62728", RARE_GAP: "#ff9896", OUT_OF_SCOPE_DEMAND: "#1f77b4",
                    OFF_TOPIC_DEMAND: "#aec7e8", NO_NEARBY_SECTION: "#7f7f7f"}
_CATEGORY_COLOURS = {LACK_OF_CONTEXT: "#d62728", OUT_OF_SCOPE: "#1f77b4", "selection": "#9467bd",
                     "input": "#7f7f7f", "operational": "#8c564b",
                     "generation quality": "#ff7f0e"}


def _timeline(summary: LogSummary) -> tuple[str, list[tuple[datetime, int, int]]]:
    """Aggregate the hourly counts to hours, days or weeks depending on the span."""
    if not summary.per_hour:
        return "day", []
    hours = sorted(summary.per_hour)
    span = hours[-1] - hours[0]
    if span <= timedelta(days=3):
        unit, key = "hour", (lambda h: h)
    elif span <= timedelta(days=180):
        unit, key = "day", (lambda h: h.replace(hour=0))
    else:
        unit, key = "week", (lambda h: h.replace(hour=0) - timedelta(days=h.weekday()))
    agg: dict[datetime, list[int]] = {}
    for h in hours:
        a, r = summary.per_hour[h]
        b = agg.setdefault(key(h), [0, 0])
        b[0] += a
        b[1] += r
    return unit, [(k, v[0], v[1]) for k, v in sorted(agg.items())]


def write_plots(out: Path, summary: LogSummary, groups: list[TopicGroup],
                feedback: FeedbackSummary | None = None,
                gaps: list[ChapterGaps] | None = None) -> dict[str, Path]:
    """Write the plots there is data for into out; return them by name.

    Raises SetupError naming the `reports` extra when matplotlib is not installed.
    """
    plt = pyplot()
    import matplotlib.dates as mdates

    files: dict[str, Path] = {}
    unit, series = _timeline(summary)
    if series:
        fig, ax = plt.subplots(figsize=(9, 3.6), dpi=110)
        xs = mdates.date2num([s[0] for s in series])
        width = {"hour": 1 / 24, "day": 1.0, "week": 7.0}[unit] * 0.85
        ax.bar(xs, [s[1] for s in series], width=width, color="#2ca02c", label="answers")
        ax.bar(xs, [s[2] for s in series], width=width, bottom=[s[1] for s in series],
               color="#d62728", label="refusals")
        ax.set_ylabel(f"responses per {unit}")
        ax.set_title("Answers and refusals over time (UTC)")
        ax2 = ax.twinx()
        ax2.plot(xs, [s[2] / max(1, s[1] + s[2]) for s in series], color="black", lw=1,
                 marker="." if len(xs) < 60 else None, label="refusal rate")
        ax2.set_ylim(0, 1)
        ax2.set_ylabel("refusal rate")
        ax.xaxis_date()
        handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
        ax.set_ylim(0, max(s[1] + s[2] for s in series) * 1.3)
        ax.legend(handles=handles, loc="upper left", fontsize=8, ncol=3)
        fig.autofmt_xdate()
        fig.tight_layout()
        files["timeline"] = out / "timeline.png"
        fig.savefig(files["timeline"])
        plt.close(fig)
    if summary.reasons:
        items = summary.reasons.most_common()[::-1]
        files["reasons"] = _bars(
            plt, out / "reasons.png", [r for r, _ in items], [k for _, k in items],
            [_CATEGORY_COLOURS.get(CATEGORY_OF_REASON.get(r, ""), "#bcbd22") for r, _ in items],
            "Refusals per reason\nred: lack of context · blue: out of scope · "
            "other colours: input, selection, generation, operational", width=8, pad=1.2)
    by_chapter = (gaps or [])[:15][::-1]
    if by_chapter:
        files["gaps"] = _bars(
            plt, out / "gaps.png", [short(c.chapter, 60) for c in by_chapter],
            [c.students for c in by_chapter], ["#d62728"] * len(by_chapter),
            "Coverage gaps per chapter\nstudents who asked what the chapter raises and the "
            "book does not answer", width=9, pad=1.2, xlabel="students asking")
    shown = groups[:15][::-1]
    if shown:
        files["topics"] = _bars(
            plt, out / "topics.png", [short(g.topic, 60) for g in shown],
            [g.count for g in shown],
            [_VERDICT_COLOURS.get(g.verdict, "#7f7f7f") for g in shown],
            "Most refused topics\nred: coverage gap · pink: possible gap · "
            "blue: out of scope · light blue: off topic · grey: other", width=9, pad=1.4)
    chapters = (feedback.chapters if feedback else [])[:15][::-1]
    if chapters:
        files["marked_wrong"] = _bars(
            plt, out / "marked_wrong.png", [short(c.chapter, 60) for c in chapters],
            [len(c.runs) for c in chapters],
            ["#ff7f0e" if c.chapter != REFUSALS else "#7f7f7f" for c in chapters],
            "Answers students marked wrong, per chapter\ngrey: refusals", width=9, pad=1.2,
            xlabel="responses rated down")
    return files


def _bars(plt: Any, path: Path, labels: list[str], counts: list[int], colours: list[str],
          title: str, *, width: float, pad: float, xlabel: str = "refusals") -> Path:
    """Write one horizontal bar chart of counts (a bar per label) to `path`."""
    fig, ax = plt.subplots(figsize=(width, 0.4 * len(labels) + pad), dpi=110)
    ax.barh(labels, counts, color=colours)
    ax.xaxis.get_major_locator().set_params(integer=True)  # counts: no 0.25 ticks
    ax.set_xlabel(xlabel)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
