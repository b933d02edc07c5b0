"""Counts in questions and units: "What are the four causes?" and the unit that names four.

A unit enumerates what a question counts when it names that many things of the asked category
(not merely their number); a sentence announces a count ("... describes four modes ...") when the
things it counts follow it.
"""

from __future__ import annotations

import re

from textbound.text import prefix_key
from textbound.text.question import NUMBER_WORDS
from textbound.text.units import Unit

__all__ = ["announced_count", "enumerates"]


def _stem(word: str) -> str:
    """Return a word's prefix key once a plural "s" is cut: causes/cause, vices/vice."""
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    return prefix_key(word)


def enumerates(unit: Unit, count: tuple[int, str]) -> bool:
    """Whether a unit names N things of the asked category, not merely their number.

    "(material cause), (formal cause), (efficient cause), (final cause)" enumerates Aristotle's
    four causes; "his doctrine of the four causes" only announces them. A list unit whose lead-in
    names the category and holds at least N items enumerates too.
    """
    n, head = count
    key = _stem(head)
    said = [w for w in re.findall(r"[a-z]+", unit.text.lower()) if _stem(w) == key]
    if unit.kind == "list":
        lead, _, items = unit.text.partition(":")
        return bool(re.search(rf"\b{re.escape(key)}", lead.lower())) \
            and items.count(";") + 1 >= n
    return len(said) >= n


_ANNOUNCES = re.compile(r"\b(two|three|four|five|six)\s+(?:[a-z-]+\s+){0,2}?([a-z]+s)\b", re.I)


def announced_count(text: str, question: str) -> tuple[int, str] | None:
    """Return (N, category) when text announces N things of a category the question names.

    "ISO/TS 15066 describes four modes of collaborative operation." announces four modes to
    "Which collaborative operation modes are described?"; the four follow it.
    """
    asked = {_stem(w) for w in re.findall(r"[a-z]+", question.lower())}
    for m in _ANNOUNCES.finditer(text):
        noun = m.group(2).lower()
        if _stem(noun) in asked:
            return NUMBER_WORDS[m.group(1).lower()], noun
    return None
