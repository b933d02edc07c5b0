"""Refusal analytics: read the audit log as a stream and show where the documents fall short.

`textbound report` reads the audit log (one JSON line per response, see
`textbound/records/audit.py`) once, front to back, and writes a Markdown and an HTML report with PNG
plots: answers and refusals over
time, refusals per reason, the **coverage gaps** by chapter (`gaps.py`: questions the book's
topics raise and the book does not answer, each with how many students asked and an example;
off-topic and out-of-scope questions are never gaps), the most often refused questions grouped
by the nearest section, each group marked as a likely coverage gap, an off-topic question or an
**out-of-scope demand**; and the answers students marked wrong (`marked.py`: the down-rated runs
of the feedback log beside the audit log, grouped by chapter).

Every audit line records its best retrieved passage (`nearest`), so the report reads the logs
only and never needs the store, which a running server holds; lines written before that field
existed are placed by a store look-up when it can be opened, and by their text otherwise, with
one line saying why.

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

from textbound.quality.analytics.counting import (
    DEFAULT_CAPACITY,
    MAX_ASKERS,
    MAX_KEY_CHARS,
    QuestionCount,
    TopQuestions,
    normalise_question,
)
from textbound.quality.analytics.gaps import (
    GAP_REASONS,
    UNPLACED,
    ChapterGaps,
    gaps_by_chapter,
    is_gap,
)
from textbound.quality.analytics.locate import store_locator
from textbound.quality.analytics.marked import ChapterFeedback, FeedbackSummary, marked_wrong
from textbound.quality.analytics.render import write_report
from textbound.quality.analytics.report import (
    DEFAULT_TOP,
    ReportResult,
    build_report,
    why_unsearchable,
)
from textbound.quality.analytics.scan import (
    MAX_LINE_BYTES,
    MAX_MALFORMED_EXAMPLES,
    MAX_REASONS,
    LogSummary,
    parse_since,
    scan_log,
)
from textbound.quality.analytics.topics import (
    CATEGORY_OF_REASON,
    COVERAGE_GAP,
    DEFAULT_CUTOFF,
    DEFAULT_MIN_COUNT,
    LACK_OF_CONTEXT,
    NO_NEARBY_SECTION,
    NOTHING_CLOSE,
    OFF_TOPIC,
    OFF_TOPIC_DEMAND,
    OUT_OF_SCOPE,
    OUT_OF_SCOPE_DEMAND,
    RARE_GAP,
    Locator,
    TopicGroup,
    classify,
    group_by_topic,
    verdict_for,
)

__all__ = [
    "CATEGORY_OF_REASON",
    "ChapterFeedback",
    "ChapterGaps",
    "GAP_REASONS",
    "MAX_ASKERS",
    "OFF_TOPIC",
    "OFF_TOPIC_DEMAND",
    "UNPLACED",
    "gaps_by_chapter",
    "is_gap",
    "why_unsearchable",
    "COVERAGE_GAP",
    "DEFAULT_CAPACITY",
    "DEFAULT_CUTOFF",
    "DEFAULT_MIN_COUNT",
    "DEFAULT_TOP",
    "FeedbackSummary",
    "LACK_OF_CONTEXT",
    "MAX_KEY_CHARS",
    "MAX_LINE_BYTES",
    "MAX_MALFORMED_EXAMPLES",
    "MAX_REASONS",
    "NOTHING_CLOSE",
    "NO_NEARBY_SECTION",
    "OUT_OF_SCOPE",
    "OUT_OF_SCOPE_DEMAND",
    "RARE_GAP",
    "LogSummary",
    "Locator",
    "QuestionCount",
    "ReportResult",
    "TopQuestions",
    "TopicGroup",
    "build_report",
    "classify",
    "group_by_topic",
    "marked_wrong",
    "normalise_question",
    "parse_since",
    "scan_log",
    "store_locator",
    "verdict_for",
    "write_report",
]
