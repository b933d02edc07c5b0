"""The answer to "What's the difference between X and Y?": a unit about each side.

Each side's unit is the best-ranked candidate that is about that side: it names the side's own
words (those the other side lacks, matched by the one prefix stemmer, so "grippers" names "a
gripper"), or, where one side is written inside the other ("launch" and "launch all"), it
prints that side's phrase where it is not part of the other's. A unit that names both sides
says the same of both ("Grippers and suction nozzles are both mounted on the wrist") and
counts for half, unless it sets them against each other ("Unlike grippers, suction nozzles need
a flat surface"): then it is about both.
"""

from __future__ import annotations

import re

from textbound.answer.candidates import DEFINES, Candidate
from textbound.answer.evidence import glossary_names
from textbound.text import content_words, prefix_key, words

__all__ = ["ABOUT", "CONTRAST", "SAYS_BOTH", "about", "one_per_side"]

CONTRAST = re.compile(r"\b(?:whereas|unlike|while|instead|rather than|in contrast|unless|except|"
                      r"differs?|different|difference|distinguishe[sd]|as opposed to|but)\b", re.I)
"""Words that set two things against each other: "Unlike X, Y ...", "X ..., whereas Y ..."."""
SAYS_BOTH = 0.5
"""What naming one side counts for in a unit that names the other too, without a contrast."""
ABOUT = 1.0
"""What being about a side adds to a unit's relevance when each side's unit is chosen (a sweep
of 0.5, 1 and 2 on the dev pool: 1 and 2 lead the same, 0.5 one right answer fewer)."""


def _phrase(side: list[str]) -> re.Pattern[str]:
    return re.compile(r"\b" + r"\W+".join(map(re.escape, side)) + r"\b", re.I)


def _keys(text: str) -> set[str]:
    """A text's content words as the one prefix stemmer keys them ("cups", "cup": "cup")."""
    return {prefix_key(w) for w in content_words(text)}


def _inside(short: list[str], long: list[str]) -> bool:
    """Whether one side's words run, in order, inside the other's ("launch" in "launch all")."""
    n = len(short)
    return 0 < n < len(long) and any(long[i:i + n] == short for i in range(len(long) - n + 1))


def about(text: str, side: str, other: str) -> float:
    """How much a unit is about `side` of a comparison with `other`: 0 to 1.

    The share of the side's own words the unit names; where the side is written inside the
    other ("launch" and "launch all"), whether the unit prints it outside the other's phrase.
    """
    mine, theirs = words(side), words(other)
    if _inside(mine, theirs):
        return float(len(_phrase(mine).findall(text)) > len(_phrase(theirs).findall(text)))
    if _inside(theirs, mine):
        return float(bool(_phrase(mine).search(text)))
    own = _keys(side) - _keys(other)
    if not own:
        return 0.0
    have = _keys(text)
    return len(own & have) / len(own)


def one_per_side(cands: list[Candidate], scores: list[float], phrases: list[str],
                 glossed: dict[int, list[str]]) -> list[int]:
    """Pick the best unit about each side of a comparison: each half is half the answer.

    A unit that defines (best, the book's glossary entry for that side) is preferred.
    """
    chosen: list[int] = []
    texts = [c.unit.text for c in cands]
    for k in (0, 1):
        side, other = phrases[k], phrases[1 - k]

        def rank(i: int, side: str = side, other: str = other) -> float:
            mine = about(texts[i], side, other)
            if mine and about(texts[i], other, side) and not CONTRAST.search(texts[i]):
                mine *= SAYS_BOTH
            return (scores[i] + ABOUT * mine + (0.2 if DEFINES.match(texts[i]) else 0.0)
                    + (0.3 if i in glossed and glossary_names(glossed[i], side) else 0.0))

        pick = next((i for i in sorted(range(len(cands)), key=lambda i: -rank(i))
                     if i not in chosen), None)
        if pick is not None:
            chosen.append(pick)
    return chosen
