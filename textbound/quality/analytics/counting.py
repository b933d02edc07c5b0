"""Bounded counting of refused questions: normalised keys and a Space-Saving top-k table."""

from __future__ import annotations

import heapq
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MAX_KEY_CHARS = 300
"""Questions are compared (and kept) by their first MAX_KEY_CHARS normalised characters."""
DEFAULT_CAPACITY = 5000
MAX_ASKERS = 250
"""Most distinct asker ids kept per question, so memory stays bounded whatever the log holds."""

_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s?.!,;:]+$")


def normalise_question(question: Any) -> str:
    """Return the key refused questions are counted under: lower case, single spaces, no '?!.'."""
    if not isinstance(question, str):
        return "(no question)"
    q = _TRAILING.sub("", _SPACES.sub(" ", question).strip().lower())
    return q[:MAX_KEY_CHARS] or "(empty question)"


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
    gaps: int = 0
    """Refusals on topic that the book did not answer
    (`textbound.quality.analytics.gaps.is_gap`)."""
    nearest: tuple[str, str, float] | None = None
    """The latest recorded best retrieved passage: (source, section, raw cosine)."""
    askers: set[str] = field(default_factory=set)
    """Distinct sessions or conversations that asked it (at most MAX_ASKERS kept)."""
    anonymous: int = 0
    """Refusals with neither a session nor a conversation id: each counts as one asker."""

    @property
    def students(self) -> int:
        """How many students asked it: distinct sessions or conversations, plus anonymous asks."""
        return len(self.askers) + self.anonymous

    def students_text(self) -> str:
        """The number of students as text, `N+` when the set of ids reached its bound."""
        return f"{self.students}+" if len(self.askers) >= MAX_ASKERS else str(self.students)

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

    def add(self, key: str, sample: str, reason: str, selected: bool = False, *,
            gap: bool = False, nearest: tuple[str, str, float] | None = None,
            asker: str | None = None) -> None:
        """Count one refusal of the question `key`.

        `gap`: it was refused on topic for lack of an answer; `nearest`: where its best retrieved
        passage was (kept when given); `asker`: its session or conversation id.
        """
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
        entry.gaps += int(gap)
        if nearest is not None:
            entry.nearest = nearest
        if asker is None:
            entry.anonymous += 1
        elif len(entry.askers) < MAX_ASKERS:
            entry.askers.add(asker)

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
