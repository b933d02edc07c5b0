"""Coverage gaps: questions the book's chapters raise and the book does not answer, by chapter.

A refusal is a **gap** when retrieval found the book on topic and the book still fell short:
its reason says the evidence was thin or did not answer (`insufficient_context`,
`question_not_answered`, `ungrounded_answer`, ...: the "lack of context" group of
graph/reasons.py) and its best retrieved passage is recorded (`nearest` in the audit line).
It is **off-topic**, never a gap, when nothing close was retrieved (`empty_retrieval`), the
question names things the collection never mentions (the gate's `known_names` check), or the
course excludes the topic (`out_of_scope`): "What is the capital of France?" says nothing about
what the book lacks. A question about a selected passage is about that passage, not the book.

Each gap is filed under the chapter of its best retrieved passage (the document and the top
heading of its heading path, as `textbound.records.feedback.chapter_of` names chapters for the
answers marked wrong). Audit lines written before `nearest` was recorded are placed by a store
look-up
when the collection can be searched, else under `UNPLACED`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graph.reasons import RefusalReason
from textbound.quality.analytics.counting import QuestionCount
from textbound.quality.analytics.topics import DEFAULT_CUTOFF, OFF_TOPIC_REASONS, Locator
from textbound.records.feedback import chapter_of

GAP_REASONS = frozenset(r.value for r in RefusalReason
                        if r.spec.group == "lack of context"
                        and r.value not in OFF_TOPIC_REASONS)
"""Refusals that judged retrieved evidence on topic and found it short."""
OFF_TOPIC_CHECKS = frozenset({"known_names"})
"""Failed gate checks that mark a question as about something the collection never mentions."""
UNPLACED = "(chapter not recorded)"
"""Where gaps of older audit lines go when the collection cannot be searched to place them."""


def nearest_of(record: Mapping[str, Any]) -> tuple[str, str, float] | None:
    """Return an audit line's best retrieved passage as (source, section, cosine), if recorded."""
    near = record.get("nearest")
    if not isinstance(near, Mapping):
        return None
    score = near.get("score")
    return (str(near.get("source") or ""), str(near.get("section") or ""),
            float(score) if isinstance(score, int | float) else 0.0)


def is_gap(record: Mapping[str, Any]) -> bool:
    """Whether a refusal's audit line says the book is on topic and did not answer."""
    if record.get("refusal_reason") not in GAP_REASONS or record.get("selected_text"):
        return False
    failed = record.get("failed_checks")
    if isinstance(failed, list) and OFF_TOPIC_CHECKS & {str(c) for c in failed}:
        return False
    if "nearest" in record:  # recorded: None means nothing was retrieved
        return nearest_of(record) is not None
    return True  # an older line: placed (or not) by the store's nearest section


def asker_of(record: Mapping[str, Any]) -> str | None:
    """Return who asked, as far as the log tells: the session id, else the conversation's."""
    for key in ("session_id", "thread_id"):
        value = record.get(key)
        if isinstance(value, str) and value:
            return f"{key}:{value}"
    return None


@dataclass
class ChapterGaps:
    """The gap questions filed under one chapter, most students first."""

    chapter: str
    questions: list[QuestionCount] = field(default_factory=list)

    @property
    def students(self) -> int:
        """Students asking, added up over the chapter's questions (one may ask several)."""
        return sum(q.students for q in self.questions)

    @property
    def refusals(self) -> int:
        """Gap refusals of the chapter's questions."""
        return sum(q.gaps for q in self.questions)


def _is_gap_question(q: QuestionCount) -> bool:
    return q.gaps > 0 and q.gaps * 2 >= q.low


def gaps_by_chapter(questions: Sequence[QuestionCount], locate: Locator | None = None, *,
                    cutoff: float = DEFAULT_CUTOFF) -> list[ChapterGaps]:
    """Group the questions mostly refused as gaps by chapter, the most asked chapter first.

    Questions whose audit lines recorded no nearest passage (older logs) are placed by `locate`
    (dropped when nothing is within `cutoff`); without it they go under UNPLACED.
    """
    gaps = [q for q in questions if _is_gap_question(q)]
    unplaced = [q for q in gaps if q.nearest is None]
    where: dict[int, str | None] = {}
    if unplaced and locate is not None:
        for q, (topic, score) in zip(unplaced, locate([q.sample or q.key for q in unplaced]),
                                     strict=True):
            where[id(q)] = topic.split(" > ")[0] if score >= cutoff else None
    chapters: dict[str, ChapterGaps] = {}
    for q in gaps:
        if q.nearest is not None:
            source, section, _ = q.nearest
            chapter: str | None = chapter_of({"source": source, "section": section})
        else:
            chapter = where.get(id(q), UNPLACED) if locate is not None else UNPLACED
        if chapter is None:
            continue  # nothing close in the collection: not a gap in any chapter
        chapters.setdefault(chapter, ChapterGaps(chapter)).questions.append(q)
    for ch in chapters.values():
        ch.questions.sort(key=lambda q: (-q.students, -q.gaps, q.key))
    return sorted(chapters.values(), key=lambda c: (c.chapter == UNPLACED, -c.students,
                                                    -c.refusals, c.chapter))
