"""What refusals say about the documents: reasons by category, verdicts, grouping by section."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graph.reasons import RefusalReason
from textbound.quality.analytics.counting import QuestionCount

DEFAULT_CUTOFF = 0.35
"""Raw cosine below which the nearest chunk is "nothing close" (all-MiniLM-L6-v2)."""
DEFAULT_MIN_COUNT = 3
NOTHING_CLOSE = "nothing close in the collection"

# What each refusal reason says about the documents.
LACK_OF_CONTEXT = "lack of context"
OUT_OF_SCOPE = "out of scope"
CATEGORY_OF_REASON: dict[str, str] = {r: r.spec.group for r in RefusalReason}
"""Every `RefusalReason`, keyed by member (equal to its string, as the audit log records it),
with its group from graph/reasons.py; a reason missing here would be counted under "other"."""

OFF_TOPIC = "off topic"
"""Where `classify` counts `empty_retrieval`: nothing close was retrieved, so the question says
nothing about what the documents lack (its reason's group stays "lack of context" elsewhere)."""
OFF_TOPIC_REASONS = frozenset({RefusalReason.EMPTY_RETRIEVAL.value})

COVERAGE_GAP = "coverage gap"
RARE_GAP = "possible gap (asked rarely)"
OUT_OF_SCOPE_DEMAND = "out-of-scope demand"
OFF_TOPIC_DEMAND = "off-topic (nothing close in the documents)"
NO_NEARBY_SECTION = "nothing close (off-topic, or a topic missing entirely)"

Locator = Callable[[list[str]], list[tuple[str, float]]]
"""Maps questions to (nearest section, raw cosine) pairs, one per question."""


def classify(reasons: Counter[str], count: int, min_count: int = DEFAULT_MIN_COUNT) -> str:
    """Say what a refused question (or group) suggests about the documents.

    Out of scope when most refusals were `out_of_scope`; off topic when most were
    `empty_retrieval` (nothing close was found: "What is the capital of France?"); a coverage gap
    when most were for lack of context on topic and it was refused at least `min_count` times
    (a possible gap below that); otherwise the dominant reason's category, e.g. "operational".
    """
    n = sum(reasons.values())
    if n == 0:
        return "unknown"
    by_cat: Counter[str] = Counter()
    for reason, k in reasons.items():
        by_cat[OFF_TOPIC if reason in OFF_TOPIC_REASONS
               else CATEGORY_OF_REASON.get(reason, "other")] += k
    if by_cat[OUT_OF_SCOPE] * 2 >= n and by_cat[OUT_OF_SCOPE] >= by_cat[LACK_OF_CONTEXT]:
        return OUT_OF_SCOPE_DEMAND
    if (by_cat[OFF_TOPIC] + by_cat[OUT_OF_SCOPE]) * 2 >= n \
            and by_cat[OFF_TOPIC] + by_cat[OUT_OF_SCOPE] >= by_cat[LACK_OF_CONTEXT]:
        return OFF_TOPIC_DEMAND
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
    """Group questions by nearest section (or, with no locator, by normalised text alone).

    A question's nearest section is its audit lines' recorded best passage (`QuestionCount.
    nearest`); only questions without one (older logs) are looked up with `locate`.
    """
    groups: dict[str, TopicGroup] = {}
    unplaced = [q for q in questions if q.nearest is None]
    found: dict[int, tuple[str, float | None]] = {}
    if locate is not None and unplaced:
        found = {id(q): (t if s >= cutoff else NOTHING_CLOSE, s)
                 for q, (t, s) in zip(unplaced, locate([q.sample or q.key for q in unplaced]),
                                      strict=True)}
    located: list[tuple[str, float | None]] = [
        recorded_topic(q.nearest, cutoff) if q.nearest is not None
        else found.get(id(q), (q.key, None)) for q in questions]
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


def recorded_topic(nearest: tuple[str, str, float], cutoff: float) -> tuple[str, float]:
    """Name a recorded best passage's section as the store locator does (its first two headings)."""
    source, section, score = nearest
    name = " > ".join(p.strip() for p in section.split(" > ")[:2] if p.strip()) or source
    return (name or "(untitled)") if score >= cutoff else NOTHING_CLOSE, score


def verdict_for(topic: str, reasons: Counter[str], count: int, min_count: int) -> str:
    """Classify, except that lack of context far from every section is not a gap *in* one."""
    verdict = classify(reasons, count, min_count)
    if topic == NOTHING_CLOSE and verdict in (COVERAGE_GAP, RARE_GAP):
        return NO_NEARBY_SECTION
    return verdict
