"""A unit's own words: what it says beyond the question's words and words that frame it.

"In this section we look at the three laws." states nothing; "The first law says ..." does. The
candidates and the units that follow a lead (textbound/answer/candidates.py, followers.py) weigh
a unit by what it says of its own.
"""

from __future__ import annotations

import re

from textbound.text import content_words

__all__ = ["FRAMING_WORDS", "own_words"]

FRAMING_WORDS = frozenset(content_words(
    """look looks looking turn turns follow following follows section sections chapter chapters
    discuss discussed discussion consider considered examine examined explore explored learn
    learning able end below above next previous first second third last now here see seen
    identify distinguish understand describe explain introduce introduced cover covered covers
    take takes let topic topics begin begins start starts rule rules detail details overview
    summary summarize objective objectives goal goals review reviewed shown show shows figure
    table listing example examples"""))
"""Words that frame a passage rather than state something ("In this section we look at ...")."""


_QUANTITY = re.compile(r"(?<![\w.-])(?<!chapter )(?<!section )(?<!figure )(?<!table )"
                       r"(?<!listing )(?<!step )(?<!part )(?<!unit )\d[\d,.]*\s*(?:%|[a-z]+\b)",
                       re.I)
"""A number stated as a quantity ("0.002 seconds", "40 TOPS", "7 billion"), not a reference
("Chapter 3", "Listing 6-9")."""
_VALUE = re.compile(r"\b(?:is|are|was|were|be|equals|to)\s+-?\d[\d,.]*(?=[.;,)]?\s*$|[;,)]\s)",
                    re.I)
"""A number a sentence gives as a value, the complement it ends on: "The default value of
scale is 0.", "... set to 16;"."""


def own_words(unit_text: str, question: str, values: bool = False) -> set[str]:
    """Return the unit's content words that are neither the question's nor framing words.

    Numbers count only when the unit states a quantity: "MuJoCo's default timestep is 0.002
    seconds." answers with its number, "Let's look at the 5 steps in Chapter 3." has none.
    With `values`, a number the sentence ends on as a value counts too ("The default value of
    scale is 0."): what a unit may answer with, not what two units share.
    """
    asked = set(content_words(question))
    valued = values and _VALUE.search(unit_text) is not None
    quantity = valued or _states_quantity(unit_text, asked)
    return {w for w in content_words(unit_text)
            if w not in asked and w not in FRAMING_WORDS and (quantity or not w.isdigit())}


def _states_quantity(unit_text: str, asked: set[str]) -> bool:
    """Whether the unit states a number as a quantity of something the question did not ask."""
    for m in _QUANTITY.finditer(unit_text):
        noun = content_words(m.group(0).split()[-1]) if " " in m.group(0) else []
        # "0.002 seconds" (after a number "second" is a unit), not "the 5 steps" it asked about
        if not noun or noun[-1] == "second" or (noun[-1] not in asked
                                                and noun[-1] not in FRAMING_WORDS):
            return True
    return False
