"""Refusal analytics: read the audit log as a stream and show where the documents fall short.

`textbound report` reads the audit log (one JSON line per response, see `textbound/audit.py`) once,
front to back, and writes a Markdown and an HTML report with PNG plots: answers and refusals over
time, refusals per reason, and the most often refused questions grouped by the nearest section of
the collection, each group marked as a likely **coverage gap** (asked often, refused for lack of
context) or an **out-of-scope demand**.

Memory does not grow with the number of lines. What is exact and what is estimated:

* exact: lines, bytes, malformed lines (by kind), records before `--since`, answers, refusals,
  refusals per reason (up to `MAX_REASONS` distinct values; further ones are added up under
  `(other)`), and the per-hour counts behind the timeline (one entry per hour the log spans, so
  that table grows with the log's time span, never with its line count);
* estimated: how often each *question* was refused. Refused questions (normalised: case, spaces
  and trailing punctuation) are counted in a `TopQuestions` table of fixed capacity using the
  Space-Saving algorithm. While fewer distinct questions than its capacity have been refused the
  counts are exact; after that each count is an interval `[count - error, count]` that contains the
  true count, and every question refused more than `total / capacity` times is guaranteed to be in
  the table. The report prints the interval whenever it is not a single number.
"""

from __future__ import annotations

import heapq
import html
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graph.state import RefusalReason

__all__ = [
    "CATEGORY_OF_REASON",
    "LogSummary",
    "Locator",
    "QuestionCount",
    "ReportResult",
    "TopQuestions",
    "TopicGroup",
    "build_report",
    "classify",
    "group_by_topic",
    "normalise_question",
    "verdict_for",
    "parse_since",
    "scan_log",
    "store_locator",
    "write_report",
]

MAX_LINE_BYTES = 1 << 20
"""Longer lines are counted as malformed and skipped without being held in memory."""
MAX_REASONS = 64
MAX_KEY_CHARS = 300
"""Questions are compared (and kept) by their first MAX_KEY_CHARS normalised characters."""
MAX_MALFORMED_EXAMPLES = 10
DEFAULT_CAPACITY = 5000
DEFAULT_TOP = 50
DEFAULT_CUTOFF = 0.35
"""Raw cosine below which the nearest chunk is "nothing close" (all-MiniLM-L6-v2)."""
DEFAULT_MIN_COUNT = 3
NOTHING_CLOSE = "nothing close in the collection"

# What each refusal reason says about the documents.
LACK_OF_CONTEXT = "lack of context"
OUT_OF_SCOPE = "out of scope"
_R = RefusalReason
CATEGORY_OF_REASON: dict[str, str] = {
    _R.EMPTY_RETRIEVAL: LACK_OF_CONTEXT,
    _R.INSUFFICIENT_CONTEXT: LACK_OF_CONTEXT,
    _R.UNGROUNDED_ANSWER: LACK_OF_CONTEXT,
    _R.LOW_CONFIDENCE: LACK_OF_CONTEXT,
    _R.HALLUCINATION_DETECTED: LACK_OF_CONTEXT,
    _R.QUESTION_NOT_ANSWERED: LACK_OF_CONTEXT,
    _R.OUT_OF_SCOPE: OUT_OF_SCOPE,
    _R.SELECTED_TEXT_INSUFFICIENT: "selection",
    _R.INVALID_QUESTION: "input",
    _R.STORE_UNAVAILABLE: "operational",
    _R.GENERATION_ERROR: "operational",
    _R.MISSING_CITATIONS: "generation quality",
    _R.INVALID_CITATIONS: "generation quality",
    _R.PROHIBITED_PHRASING: "generation quality",
    _R.PROMPT_LEAK: "generation quality",
}
"""Every `RefusalReason`, keyed by member (equal to its string, as the audit log records it);
a reason missing here would be counted under "other" (tests/unit/test_reason_lists.py)."""

COVERAGE_GAP = "coverage gap"
RARE_GAP = "possible gap (asked rarely)"
OUT_OF_SCOPE_DEMAND = "out-of-scope demand"
NO_NEARBY_SECTION = "nothing close (off-topic, or a topic missing entirely)"

_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s?.!,;:]+$")


def normalise_question(question: Any) -> str:
    """Return the key refused questions are counted under: lower case, single spaces, no '?!.'."""
    if not isinstance(question, str):
        return "(no question)"
    q = _TRAILING.sub("", _SPACES.sub(" ", question).strip().lower())
    return q[:MAX_KEY_CHARS] or "(empty question)"


def parse_since(value: str | None) -> datetime | None:
    """Parse `--since`: a date (midnight UTC) or an ISO 8601 time; naive times are UTC."""
    if value is None or not value.strip():
        return None
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise ValueError(f"--since must be a date like 2025-01-31 or an ISO 8601 time, "
                         f"not {value!r}") from exc
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


# --- bounded counting of refused questions ------------------------------------------------------
@dataclass
class QuestionCount:
    """A refused question in the TopQuestions table.

    `count - error <= true count <= count`. `reasons` and `selected` are exact counts of the
    occurrences seen since the question (last) entered the table; they add up to `count - error`.
    """

    key: str
    sample: str
    count: int = 0
    error: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    selected: int = 0
    verdict: str = ""
    """Set by group_by_topic."""

    @property
    def low(self) -> int:
        """A lower bound of the true count."""
        return self.count - self.error

    def span(self) -> str:
        """The count as text: exact, or the interval that contains it."""
        return str(self.count) if self.error == 0 else f"{self.low}–{self.count}"


class TopQuestions:
    """Space-Saving top-k counter (Metwally et al., 2005) with a lazy min-heap.

    Holds at most `capacity` questions. A new question arriving when the table is full replaces
    the one with the smallest count c and starts at c + 1 with error c. Each key has exactly one
    heap entry whose count may be stale (too low); popping re-pushes stale entries, so finding the
    minimum costs O(log capacity) amortised.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.total = 0
        self.evictions = 0
        self._entries: dict[str, QuestionCount] = {}
        self._heap: list[tuple[int, str]] = []

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def exact(self) -> bool:
        """Whether every count in the table is exact (nothing was ever evicted)."""
        return self.evictions == 0

    def add(self, key: str, sample: str, reason: str, selected: bool = False) -> None:
        """Count one refusal of the question `key`."""
        self.total += 1
        entry = self._entries.get(key)
        if entry is None:
            floor = 0
            if len(self._entries) >= self.capacity:
                floor = self._evict_min()
            entry = QuestionCount(key, sample[:MAX_KEY_CHARS], count=floor, error=floor)
            self._entries[key] = entry
            heapq.heappush(self._heap, (floor + 1, key))
        entry.count += 1
        entry.reasons[reason] += 1
        entry.selected += int(selected)

    def _evict_min(self) -> int:
        while True:
            count, key = heapq.heappop(self._heap)
            actual = self._entries[key].count
            if count == actual:
                del self._entries[key]
                self.evictions += 1
                return actual
            heapq.heappush(self._heap, (actual, key))

    def top(self, n: int | None = None) -> list[QuestionCount]:
        """Return the n questions with the highest counts, highest first."""
        ranked = sorted(self._entries.values(), key=lambda e: (-e.count, -e.low, e.key))
        return ranked if n is None else ranked[:n]

    def guaranteed_above(self) -> int:
        """Every question refused more often than this is in the table."""
        return 0 if self.exact else self.total // self.capacity


# --- the streaming scan --------------------------------------------------------------------------
@dataclass
class LogSummary:
    """What one pass over the audit log counted."""

    path: Path
    bytes_total: int = 0
    bytes_read: int = 0
    lines: int = 0
    malformed: Counter[str] = field(default_factory=Counter)
    malformed_examples: list[tuple[int, str]] = field(default_factory=list)
    before_since: int = 0
    since: datetime | None = None
    answers: int = 0
    refusals: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    per_hour: dict[datetime, list[int]] = field(default_factory=dict)
    first: datetime | None = None
    last: datetime | None = None
    questions: TopQuestions = field(default_factory=TopQuestions)

    @property
    def records(self) -> int:
        """Responses counted (answers + refusals)."""
        return self.answers + self.refusals

    @property
    def malformed_total(self) -> int:
        """Lines skipped as malformed."""
        return sum(self.malformed.values())


def _bad(summary: LogSummary, lineno: int, kind: str) -> None:
    summary.malformed[kind] += 1
    if len(summary.malformed_examples) < MAX_MALFORMED_EXAMPLES:
        summary.malformed_examples.append((lineno, kind))


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def scan_log(
    path: Path,
    *,
    since: datetime | None = None,
    capacity: int = DEFAULT_CAPACITY,
    progress: Callable[[int, int], None] | None = None,
    progress_every: int = 1 << 20,
) -> LogSummary:
    """Read the audit log once and count it; malformed lines are counted and skipped.

    `progress(bytes_read, bytes_total)` is called about every `progress_every` bytes and at the
    end. Raises FileNotFoundError when the log does not exist.
    """
    path = Path(path)
    summary = LogSummary(path=path, since=since, questions=TopQuestions(capacity))
    summary.bytes_total = path.stat().st_size
    hours = summary.per_hour
    reasons = summary.reasons
    next_report = progress_every
    with path.open("rb") as f:
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            summary.lines += 1
            summary.bytes_read += len(raw)
            lineno = summary.lines
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while (rest := f.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    summary.bytes_read += len(rest)
                summary.bytes_read += len(rest)
                _bad(summary, lineno, "line too long")
                continue
            if progress is not None and summary.bytes_read >= next_report:
                progress(summary.bytes_read, summary.bytes_total)
                next_report = summary.bytes_read + progress_every
            if not raw.strip():
                _bad(summary, lineno, "empty line")
                continue
            try:
                rec = json.loads(raw)
            except (ValueError, RecursionError):
                _bad(summary, lineno, "not valid JSON")
                continue
            if not isinstance(rec, dict):
                _bad(summary, lineno, "not a JSON object")
                continue
            event = rec.get("event")
            if event not in ("answer", "refusal"):
                _bad(summary, lineno, "unknown event")
                continue
            ts = _timestamp(rec.get("timestamp"))
            if ts is None:
                _bad(summary, lineno, "missing or bad timestamp")
                continue
            if since is not None and ts < since:
                summary.before_since += 1
                continue
            if summary.first is None or ts < summary.first:
                summary.first = ts
            if summary.last is None or ts > summary.last:
                summary.last = ts
            hour = ts.replace(minute=0, second=0, microsecond=0)
            bucket = hours.get(hour)
            if bucket is None:
                bucket = hours[hour] = [0, 0]
            if event == "answer":
                summary.answers += 1
                bucket[0] += 1
                continue
            summary.refusals += 1
            bucket[1] += 1
            reason = rec.get("refusal_reason")
            reason = reason if isinstance(reason, str) and reason else "(none given)"
            if reason not in reasons and len(reasons) >= MAX_REASONS:
                reason = "(other)"
            reasons[reason] += 1
            question = rec.get("question")
            summary.questions.add(normalise_question(question),
                                  question if isinstance(question, str) else "",
                                  reason, bool(rec.get("selected_text")))
    if progress is not None:
        progress(summary.bytes_read, summary.bytes_total)
    return summary


# --- grouping by topic ---------------------------------------------------------------------------
Locator = Callable[[list[str]], list[tuple[str, float]]]
"""Maps questions to (nearest section, raw cosine) pairs, one per question."""


def classify(reasons: Counter[str], count: int, min_count: int = DEFAULT_MIN_COUNT) -> str:
    """Say what a refused question (or group) suggests about the documents.

    Out of scope when most refusals were `out_of_scope`; a coverage gap when most were for lack
    of context and it was refused at least `min_count` times (a possible gap below that);
    otherwise the dominant reason's category, e.g. "operational".
    """
    n = sum(reasons.values())
    if n == 0:
        return "unknown"
    by_cat: Counter[str] = Counter()
    for reason, k in reasons.items():
        by_cat[CATEGORY_OF_REASON.get(reason, "other")] += k
    if by_cat[OUT_OF_SCOPE] * 2 >= n and by_cat[OUT_OF_SCOPE] >= by_cat[LACK_OF_CONTEXT]:
        return OUT_OF_SCOPE_DEMAND
    if by_cat[LACK_OF_CONTEXT] * 2 >= n:
        return COVERAGE_GAP if count >= min_count else RARE_GAP
    return by_cat.most_common(1)[0][0]


@dataclass
class TopicGroup:
    """Refused questions whose nearest section is the same."""

    topic: str
    score: float | None
    questions: list[QuestionCount]
    verdict: str = ""

    @property
    def count(self) -> int:
        """Refusals of the group's questions (upper bound when any count is an estimate)."""
        return sum(q.count for q in self.questions)

    @property
    def low(self) -> int:
        """A lower bound of the group's refusals."""
        return sum(q.low for q in self.questions)

    def reasons(self) -> Counter[str]:
        """Refusal reasons of the group's questions, added up."""
        total: Counter[str] = Counter()
        for q in self.questions:
            total.update(q.reasons)
        return total

    def span(self) -> str:
        """The group's count as text: exact, or an interval."""
        return str(self.count) if self.low == self.count else f"{self.low}–{self.count}"


def group_by_topic(
    questions: Sequence[QuestionCount],
    locate: Locator | None,
    *,
    cutoff: float = DEFAULT_CUTOFF,
    min_count: int = DEFAULT_MIN_COUNT,
) -> list[TopicGroup]:
    """Group questions by nearest section (or, with no locator, by normalised text alone)."""
    groups: dict[str, TopicGroup] = {}
    if locate is None:
        located: list[tuple[str, float | None]] = [(q.key, None) for q in questions]
    else:
        located = [(t if s >= cutoff else NOTHING_CLOSE, s)
                   for t, s in locate([q.sample or q.key for q in questions])]
    for q, (topic, score) in zip(questions, located, strict=True):
        q.verdict = verdict_for(topic, q.reasons, q.low, min_count)
        g = groups.setdefault(topic, TopicGroup(topic, score, []))
        g.questions.append(q)
        if score is not None and (g.score is None or score > g.score):
            g.score = score
    out = sorted(groups.values(), key=lambda g: (-g.count, g.topic))
    for g in out:
        g.verdict = verdict_for(g.topic, g.reasons(), g.low, min_count)
    return out


def verdict_for(topic: str, reasons: Counter[str], count: int, min_count: int) -> str:
    """Classify, except that lack of context far from every section is not a gap *in* one."""
    verdict = classify(reasons, count, min_count)
    if topic == NOTHING_CLOSE and verdict in (COVERAGE_GAP, RARE_GAP):
        return NO_NEARBY_SECTION
    return verdict


def store_locator(settings: Any, embeddings: Any = None) -> tuple[Locator, Callable[[], None]]:
    """Return a locator over the settings' collection and a function that closes the store.

    `embeddings` defaults to the settings' own. Raises TextboundError when the store cannot be
    opened or the collection does not exist.
    """
    from textbound.embeddings import build_embeddings
    from textbound.store import open_store, require_collection

    # Probe first: loading the embedding model costs hundreds of MB, wasted on a missing collection.
    # exists() needs no embeddings
    probe = open_store(settings, None)  # type: ignore[arg-type]
    try:
        require_collection(probe)
    finally:
        probe.close()
    embeddings = embeddings or build_embeddings(settings)
    store = open_store(settings, embeddings)

    def locate(texts: list[str]) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        for vector in embeddings.embed_documents(texts):
            hits = store.search(vector, 1)
            if not hits:
                out.append((NOTHING_CLOSE, -1.0))
                continue
            meta = hits[0].metadata
            path = [str(p) for p in meta.get("heading_path") or [] if p]
            name = " > ".join(path[:2]) or hits[0].section or hits[0].source or "(untitled)"
            out.append((name, hits[0].score))
        return out

    return locate, store.close


# --- rendering -----------------------------------------------------------------------------------
@dataclass
class ReportResult:
    """What `build_report` wrote and what it found."""

    out_dir: Path
    files: list[Path]
    summary: LogSummary
    groups: list[TopicGroup]
    grouping_note: str


_VERDICT_COLOURS = {COVERAGE_GAP: "#d62728", RARE_GAP: "#ff9896", OUT_OF_SCOPE_DEMAND: "#1f77b4",
                    NO_NEARBY_SECTION: "#7f7f7f"}
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


def _plots(out: Path, summary: LogSummary, groups: list[TopicGroup]) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

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
        fig, ax = plt.subplots(figsize=(8, 0.4 * len(items) + 1.2), dpi=110)
        ax.barh([r for r, _ in items], [k for _, k in items],
                color=[_CATEGORY_COLOURS.get(CATEGORY_OF_REASON.get(r, ""), "#bcbd22")
                       for r, _ in items])
        ax.set_xlabel("refusals")
        fig.suptitle("Refusals per reason\nred: lack of context · blue: out of scope · "
                     "other colours: input, selection, generation, operational", fontsize=10)
        fig.tight_layout()
        files["reasons"] = out / "reasons.png"
        fig.savefig(files["reasons"])
        plt.close(fig)
    shown = groups[:15][::-1]
    if shown:
        fig, ax = plt.subplots(figsize=(9, 0.4 * len(shown) + 1.4), dpi=110)
        ax.barh([_short(g.topic, 60) for g in shown], [g.count for g in shown],
                color=[_VERDICT_COLOURS.get(g.verdict, "#7f7f7f") for g in shown])
        ax.set_xlabel("refusals")
        fig.suptitle("Most refused topics\nred: coverage gap · pink: possible gap · "
                     "blue: out of scope · grey: other", fontsize=10)
        fig.tight_layout()
        files["topics"] = out / "topics.png"
        fig.savefig(files["topics"])
        plt.close(fig)
    return files


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fmt_time(dt: datetime | None) -> str:
    return dt.strftime("%Y-%m-%d %H:%M UTC") if dt else "–"


def _top_reasons(reasons: Counter[str], n: int = 3) -> str:
    return ", ".join(f"{r} ({k})" for r, k in reasons.most_common(n)) or "–"


def _overview(summary: LogSummary) -> list[tuple[str, str]]:
    s = summary
    rows = [
        ("audit log", str(s.path)),
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
) -> list[Path]:
    """Write report.md, report.html, summary.json and the PNG plots into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(out, summary, groups)
    return [*plots.values(), _write_markdown(out, summary, groups, plots, grouping_note),
            _write_html(out, summary, groups, plots, grouping_note),
            _write_json(out, summary, groups, grouping_note)]


def _write_markdown(out: Path, s: LogSummary, groups: list[TopicGroup], plots: dict[str, Path],
                    note: str) -> Path:
    lines = ["# Refusal report", "",
             f"Generated {_fmt_time(datetime.now(UTC))} by `textbound report`.", "",
             "| | |", "|---|---|"]
    lines += [f"| {k} | {_md_cell(v)} |" for k, v in _overview(s)]
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
        lines += [f"| `{r}` | {CATEGORY_OF_REASON.get(r, 'other')} | {k:,} | "
                  f"{_pct(k, s.refusals)} |" for r, k in s.reasons.most_common()]
    else:
        lines += ["No refusals in the period."]
    lines += ["", "## Most refused questions by topic", "", note, "",
              "A **coverage gap** is a topic asked about often and refused for lack of context "
              "(`empty_retrieval`, `insufficient_context`, `ungrounded_answer`, ...): the "
              "documents could be extended there. An **out-of-scope demand** is refused as "
              "`out_of_scope`: users want something the assistant is not for.", ""]
    if "topics" in plots:
        lines += [f"![most refused topics]({plots['topics'].name})", ""]
    lines += ["| topic | verdict | refusals | questions | nearest cosine | top reasons |",
              "|---|---|---:|---:|---:|---|"]
    for g in groups:
        score = f"{g.score:.2f}" if g.score is not None else "–"
        lines.append(f"| {_md_cell(g.topic)} | **{g.verdict}** | {g.span()} | "
                     f"{len(g.questions)} | {score} | {_top_reasons(g.reasons())} |")
    for g in groups:
        lines += ["", f"### {_md_cell(g.topic)} — {g.verdict}", "",
                  "| refused | question | reasons | verdict |", "|---:|---|---|---|"]
        for q in g.questions:
            sel = " (about a selection)" if q.selected else ""
            lines.append(f"| {q.span()} | {_md_cell(_short(q.sample or q.key, 160))}{sel} | "
                         f"{_top_reasons(q.reasons)} | {q.verdict} |")
    lines += ["", "## How exact is this", "", _exactness(s), ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _write_html(out: Path, s: LogSummary, groups: list[TopicGroup], plots: dict[str, Path],
                note: str) -> Path:
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
        table(["", ""], _overview(s)),
        "<h2>Answers and refusals over time</h2>", img("timeline", "answers and refusals"),
        "<h2>Refusals per reason</h2>", img("reasons", "refusals per reason"),
        table(["reason", "what it suggests", "refusals", "share"],
              [(r, CATEGORY_OF_REASON.get(r, "other"), f"{k:,}", _pct(k, s.refusals))
               for r, k in s.reasons.most_common()]),
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
    parts += ["<h2>How exact is this</h2>", f"<p>{e(_exactness(s))}</p>", "</body></html>"]
    path = out / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _write_json(out: Path, s: LogSummary, groups: list[TopicGroup], note: str) -> Path:
    def when(dt: datetime | None) -> str | None:
        return dt.isoformat().replace("+00:00", "Z") if dt else None

    data = {
        "audit_log": str(s.path), "bytes_read": s.bytes_read, "lines": s.lines,
        "since": when(s.since), "before_since": s.before_since,
        "malformed": dict(s.malformed), "malformed_examples": s.malformed_examples,
        "first": when(s.first), "last": when(s.last),
        "answers": s.answers, "refusals": s.refusals, "reasons": dict(s.reasons.most_common()),
        "questions_exact": s.questions.exact, "question_table_capacity": s.questions.capacity,
        "grouping": note,
        "topics": [{"topic": g.topic, "verdict": g.verdict, "refusals": g.count,
                    "refusals_low": g.low, "nearest_cosine": g.score,
                    "reasons": dict(g.reasons()),
                    "questions": [{"question": q.sample or q.key, "refusals": q.count,
                                   "refusals_low": q.low, "reasons": dict(q.reasons),
                                   "verdict": q.verdict}
                                  for q in g.questions]} for g in groups],
    }
    path = out / "summary.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def build_report(
    audit: Path,
    out_dir: Path,
    *,
    since: datetime | None = None,
    settings: Any = None,
    locate: Locator | None = None,
    top: int = DEFAULT_TOP,
    cutoff: float = DEFAULT_CUTOFF,
    min_count: int = DEFAULT_MIN_COUNT,
    capacity: int = DEFAULT_CAPACITY,
    progress: Callable[[int, int], None] | None = None,
) -> ReportResult:
    """Scan the log, group the top refused questions by topic, and write the report.

    Topics come from `locate` if given, else from the settings' collection; when that cannot be
    opened (missing, locked by a running server, ...) questions are grouped by normalised text and
    the report says why.
    """
    from textbound.errors import TextboundError

    summary = scan_log(audit, since=since, capacity=capacity, progress=progress)
    questions = summary.questions.top(top)
    close: Callable[[], None] | None = None
    note = ""
    if locate is None and settings is not None and questions:
        try:
            locate, close = store_locator(settings)
        except TextboundError as exc:
            note = (f"The collection could not be searched ({exc}); questions are grouped by "
                    "their normalised text only.")
    try:
        if locate is not None:
            groups = group_by_topic(questions, locate, cutoff=cutoff, min_count=min_count)
            collection = getattr(settings, "collection", None)
            where = f" of collection `{collection}`" if collection else ""
            note = note or (f"Each of the {len(questions)} most refused questions was embedded and "
                            f"matched to its nearest chunk{where}; below cosine {cutoff:.2f} it "
                            f"counts as \"{NOTHING_CLOSE}\".")
        else:
            groups = group_by_topic(questions, None, min_count=min_count)
            note = note or "Questions are grouped by their normalised text only."
    finally:
        if close is not None:
            close()
    files = write_report(out_dir, summary, groups, grouping_note=note)
    return ReportResult(Path(out_dir), files, summary, groups, note)

