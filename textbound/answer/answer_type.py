"""Does the reader's answer have the kind of value the question asks for?

An extractive reader trained on SQuAD learns that a "how much" or "what year" question is answered
by a number or a date near the question's words, so over a passage on the right topic that lacks
the fact it picks *some* number: "What was the launch price of the Jetson AGX Orin developer kit?"
gets "67" (from "67 TOPS"), "What is the maximum range in meters of a spinning LiDAR?" gets "16"
(from "16, 32, 64 or 128 channels"), with a confident score. Those are the textbook near misses a
student notices most.

This module holds the deterministic check: when a question plainly asks for a price, a speed, a
rate, a data size, a length in meters, a year or a count, the reader's span (with a few characters
after it, where units live: "100" + " m") must hold a value of that kind. Anything else asks for
no particular type and passes. The rules are narrow on purpose: over the reader's spans on the
dev sets they veto no answerable question (SQuAD 1,519, ClapNQ 66, textbook 48) and 10 of the
textbook's 20 near-miss questions, 13 of SQuAD's 1,637 and 2 of ClapNQ's 132
(docs/changelog.md, 2026-11-23).

A technical book's near-misses ask for a limit or a setting it never states ("the largest
upload it accepts", "the port it listens on without the option"), and the reader answers with
the sentence about the option. So a question asking for a maximum, minimum, default or exact
quantity (a size, number, limit, length, resolution, port, timeout ...), or "what <quantity>",
must be answered with a number too, whatever wh-word leads it ("When I use X, what port ...?",
"Is there a maximum size ...?"). Added 2026-11-27 (fifth session): on the pool it refused 2 of
the gnuplot manual's 20 near-misses and no answerable question (one of them only while "dpi"
was among the quantities, a word taken from that question and removed in review); on SQuAD 2.0
it refused one
answerable question answered rightly in words ("fixed length"); ClapNQ unchanged.

"What is the numeric value of X?" asks for a number as a limit does (twenty-fifth session).

"How much faster (or slower) ...?" is answered by a figure: a number, "twice", "10 times",
"30%". Added in the twenty-fifth session: three near-misses of the manuals outside the pool
("How much slower does a program run under Memcheck?" answered "It will run slower than
usual ..."); no answerable question of any set here asks so (SQuAD 2.0's "How much less steam
...?" asks "less", not a speed, and is not typed).

A version asked for ("Which Python version does ninja -t browse need?", "In which libtasn1
version was X introduced?": "what" or "which" among the question's first three words, at most
two words before "version") is answered by a version: "3.6", "v5", "version 2". A how-to ("how
do I check which version I have") asks for a way. Added in the twenty-fifth session from the
manuals outside the pool, where it refused 3 of 5 leaking version questions (bc, ninja,
libtasn1) and no answerable one; on the pool it types two gnuplot near-misses, both refused
before; no question of SQuAD 2.0, ClapNQ or our book asks for a version so.

A colour asked for by its value ("What is the RGB value of ...?", "which hex colour codes ...")
is answered by a hex code, an rgb() or a triple, and a key asked for as a hotkey, keyboard
shortcut, key binding or keystroke by a key's name ("Ctrl", "C-o", "^F"), one quoted
character, or the term of a key table's entry of one to three characters ("- **%**: Split the
current pane ...", as a manual page's key table is read). Both need a "what"/"which" before
them: "my RGB values are floats, how do I plot them?" asks for no value. Added 2026-11-29
(twenty-third session) from three of the gnuplot manual's leaks (the reader had answered with
"23", a passage's "lc rgb" setting and "set grid command"); no other question of the sets here
is typed by them, so they were tried on 30 new questions about less(1), tmux(1) and top(1)
(docs/pool.md): near-misses answered 5 -> 3 of 10, right answers 7 -> 6 of 20. The entry's
term was added in the twenty-fifth session, when tmux's key table became entries: keys 8 -> 9
of 20 right, the pool unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from textbound.text.question import WH_WORDS

__all__ = ["ANSWER_TYPES", "AnswerType", "expected_answer_type", "span_has_type"]

_WH = re.compile(r"\b(" + "|".join(WH_WORDS) + r")\b")
_NOT_A_VALUE = frozenset({"when", "where", "who", "whom", "whose", "why"})
"""Questions led by these ask for a time, place, person or reason, never for the types below."""

_NUMBER = (r"(\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
           r"fifteen|twenty|thirty|forty|fifty|sixty|hundreds?|thousands?|millions?|billions?|"
           r"dozens?|several|few|many|numerous|single|once|twice|both|no|none|half)\b)")
_QUANTITY = (r"(size|number|limit|length|width|height|depth|resolution|port|timeout|"
             r"interval|count|amount)s?\b")
"""Nouns that name a quantity: "the maximum length", "the default port", "what resolution"."""
_AFTER_CHARS = 16
"""Characters after the span read with it, so "100" followed by " m" or " Hz" has its unit."""
_BEFORE_CHARS = 2
"""Characters before it, for a currency sign the span left out ("$" + "1,999")."""


@dataclass(frozen=True)
class AnswerType:
    """One kind of value: how a question asks for it, and how a span shows it."""

    name: str
    asks: re.Pattern[str]
    shows: re.Pattern[str]
    unit_after_span: bool
    """Whether the characters after the span count (units follow the number)."""


def _type(name: str, asks: str, shows: str, unit_after_span: bool = True) -> AnswerType:
    return AnswerType(name, re.compile(asks), re.compile(shows), unit_after_span)


ANSWER_TYPES: tuple[AnswerType, ...] = (
    _type("money",
          r"\bhow much\b.*\b(cost|costs|pay|paid|spend|spent|worth|charge|charged|sell|sold)\b"
          r"|\b(what|which)\b.{0,30}\b(price|cost)\b(?!.*\b(increase|rise|rose|fall|fell|drop|"
          r"change)\b)",
          r"([$€£¥₹]|\b(dollars?|euros?|pounds?|yen|usd|eur|gbp|cents?|rupees?|francs?|marks?|"
          r"free)\b)"),
    _type("speed",
          r"\b(top speed|how fast|what speed|walking speed|running speed|maximum speed"
          r"|max speed)\b",
          r"(km/h|kph|mph|m/s|kilomet(er|re)s? (per|an|a) hour|miles (per|an|a) hour|\bknots?\b|"
          r"met(er|re)s? (per|a) second)"),
    _type("rate",
          r"\b(update|sampling|sample|frame|refresh|control|publish(ing)?|loop) (rate|frequency)\b",
          r"(hz\b|hertz|\bfps\b|frames? (per|a) second|times (a|per) second|per second|/s\b)"),
    _type("data size",
          r"\b(message|file|memory|packet|payload|storage|ram|buffer) size\b"
          r"|\bhow much (memory|ram|storage|vram)\b",
          r"(\b[kmgtp]i?b\b|\d\s?[kmgtp]i?b\b|bytes?\b|\b(kilo|mega|giga|tera)bytes?\b)"),
    _type("meters", r"\bin (meters|metres)\b", r"(\bm\b|\d\s?m\b|\bmet(er|re)s?\b)"),
    _type("year", r"^(in )?(what|which) year\b|\b(in|during) (what|which) year\b",
          r"\b(1[0-9]{3}|20[0-9]{2})s?\b", unit_after_span=False),
    _type("colour value",
          r"\b(what|which)\b.{0,30}(\b(hex(adecimal)?|rgba?|html)\b.{0,20}\b(values?|codes?"
          r"|colou?rs?|triplets?)\b|\bcolou?r (codes?|values?)\b)",
          r"(#[0-9a-f]{3,8}\b|\b0x[0-9a-f]{6,8}\b|\b\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\b"
          r"|\brgba?\s*\()", unit_after_span=False),
    _type("key",
          r"\b(what|which)\b.{0,30}\b(hot ?keys?|keyboard shortcuts?|shortcut keys?|key ?bindings?"
          r"|keystrokes?|key (combination|press)(es)?)\b",
          r"(\b(ctrl|control|alt|shift|meta|esc|escape|enter|return|tab|space(bar)?|backspace"
          r"|f\d{1,2})\b|\b[cms]-\S|\^[a-z@\[\]\\]|<[a-z0-9-]{1,12}>|^\W?[a-z0-9]\W?$"
          r"|['‘`\"][^\s'’`\"]['’`\"]|(?:^|\s)(?:\*\*|`)[^\s*`]{1,3}(?:\*\*|`):)",
          unit_after_span=False),
    _type("ratio", r"\bhow much (faster|slower|quicker)\b",
          r"(\d|\b(twice|thrice|double|triple|half|times)\b|%)", unit_after_span=False),
    _type("version", r"^(\w+\s+){0,2}?(what|which)\s+([\w.+-]+\s+){0,2}?versions?\b",
          r"(\b\d+\.\d+|\bv\d|\bversions?\s+\d)", unit_after_span=False),
    _type("count", r"\bhow many\b", _NUMBER, unit_after_span=False),
    _type("limit or setting",
          r"\b(maximum|minimum|max|min|default|exact)\s+(\w+\s+){0,2}?" + _QUANTITY
          + r"|\b(what|which)\s+" + _QUANTITY + r"|\bnumer(ic|ical)\s+values?\b",
          _NUMBER, unit_after_span=False),
)
"""Checked in order; the first whose question pattern matches is the type asked for."""
_LIMIT = next(t for t in ANSWER_TYPES if t.name == "limit or setting")


_ASKS_VALUE = re.compile(r"\b(what|which|whats|how)\b|^(is|are) there\b")
"""A limit or a setting is asked for by a "what", "which" or "how" anywhere in the question
("When I use X without Y, what port does it use?") or by "Is there a maximum number of ...?"."""


def expected_answer_type(question: str) -> AnswerType | None:
    """Return the kind of value the question asks for, or None when it asks for no such type."""
    q = " ".join(question.lower().split())
    wh = _WH.search(q)
    if wh is not None and wh.group(1) not in _NOT_A_VALUE:
        found = next((t for t in ANSWER_TYPES if t.asks.search(q)), None)
        if found is not None:
            return found
    return _LIMIT if _ASKS_VALUE.search(q) and _LIMIT.asks.search(q) else None


_SPAN_NUMBER = re.compile(_NUMBER)
_MEASURE_UNIT = re.compile(
    r"[\s-]*(%|percent\b|t?flops\b|tops\b|[kmg]?hz\b|hertz\b|[kmgtp]i?b\b|bytes?\b|"
    r"(kilo|mega|giga|tera)bytes?\b|[kmc]?m\b|km/h|mph\b|m/s\b|kg\b|lbs?\b|[km]?w\b|"
    r"watts?\b|volts?\b|mah\b|ms\b|fps\b|degrees?\b|°)")
"""A measurement unit right after a number: "67 TOPS" is a quantity of something, not a count."""
_HOW_MANY_NOUN = re.compile(r"\bhow many ([a-z]+)")
_UNIT_NOUNS = frozenset({
    "percent", "hertz", "bytes", "kilobytes", "megabytes", "gigabytes", "terabytes", "bits",
    "meters", "metres", "kilometers", "kilometres", "centimeters", "millimeters", "miles",
    "feet", "inches", "yards", "pounds", "kilograms", "grams", "tons", "tonnes", "ounces",
    "watts", "kilowatts", "megawatts", "volts", "degrees", "seconds", "milliseconds", "minutes",
    "hours", "liters", "litres", "gallons", "acres", "hectares", "square", "cubic", "calories",
    "frames", "flops", "teraflops", "tops"})
"""'How many' nouns that are themselves units: the question asks for a measure, not a count."""


def span_has_type(kind: AnswerType, passage: str, start: int, end: int,
                  question: str = "") -> bool:
    """Whether passage[start:end] (with, for units, a few characters around it) shows the type.

    A measured value (a speed, rate, size or length) needs a number in the span itself, not only
    a unit beside it: "hertz" answers no "update rate" question. A price may also be "free". A
    count is not a number followed by a unit ("67" of "67 TOPS" for "How many CUDA cores ..."),
    unless the question counts that unit ("How many pounds ...").
    """
    span = passage[start:end].lower()
    if kind.unit_after_span:  # "$" before the number, "Hz" or " m" after it
        text = passage[max(0, start - _BEFORE_CHARS):end + _AFTER_CHARS]
        if not (_SPAN_NUMBER.search(span) or (kind.name == "money" and "free" in span)):
            return False
    else:
        text = span
    if kind.shows.search(text.lower()) is None:
        return False
    if kind.name == "count" and _MEASURE_UNIT.match(passage[end:end + _AFTER_CHARS].lower()):
        noun = _HOW_MANY_NOUN.search(" ".join(question.lower().split()))
        return noun is not None and noun.group(1) in _UNIT_NOUNS
    return True
