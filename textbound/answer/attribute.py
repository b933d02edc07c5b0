"""Does the answer state the attribute the question asks about?

A near-miss question names something the book covers and asks for an attribute of it the book
never states: "Where was Ibn Sina born?" against a passage on Ibn Sina's works, "What did Epicurus
die of?" against one on his school, "How much power does module X draw?" against one giving its
TOPS. The reader, trained to find *some* span near the question's words, is often confident on
these. The answer-type check (textbound/answer/answer_type.py) catches a missing kind of value (a
price, a year); this check catches a missing attribute: the question's attribute words must be
stated
in the sentence that answers (the reader's unit, with its neighbours for a pronoun's antecedent).

The attribute is read from the question's form, deterministically:

* `who VERB ...` ("Who killed/succeeded/proposed X?"): the verb;
* `where/when ... VERB` ("Where was X born?", "When did X die?"): the last verb;
* `what/which NOUN ...` ("Which country ...", "What book ...", "Which dataset ..."): the noun;
* `how many/much NOUN [VERB]` ("How many men died ..."): the verb after the noun, or the noun;
* `what did X VERB of/from/at/in` ("What did Epicurus die of?"): the verb.

An attribute word is stated when the sentence has a word sharing its first five letters (whole
word when shorter: die/died, founded/founder, legalize/legalized) or one of its synonyms. The
synonym list is derived from data, not written per question: `training/attributes/derive.py`
reads the answerable SQuAD 1.1 training questions and keeps, for each attribute word, the words
that stand in its place in the sentence holding the gold answer far more often than chance
(born -> birth, died -> death), stored in `models/attributes/synonyms.json` with its provenance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from textbound.text import PREFIX, STOPWORDS, prefix_key, words
from textbound.text.question import NUMBER_WORDS, WH_WORDS

__all__ = ["AttributeCheck", "AttributeTable", "MIN_STATED_RATE", "SYNONYMS_FILE",
           "asked_action", "asked_attribute", "asked_forms", "form_key", "load_synonyms", "says",
           "states_action", "states_attribute"]

SYNONYMS_FILE = Path(__file__).resolve().parents[2] / "models" / "attributes" / "synonyms.json"
MIN_STATED_RATE = 0.52
"""An attribute is demanded only when the training data's gold sentences state it this often."""

_AUX = frozenset("""is was are were be been being do does did has have had can could will would
should may might must shall""".split())
_GENERIC_NOUNS = frozenset("""thing things kind kinds type types way ways sort part parts one ones
example examples reason reasons role roles idea ideas main term terms word words view views
point points difference differences purpose aspect aspects factor factors features feature
problem problems question questions topic topics point concept concepts best first most other
same different new two three four five many much often long far old""".split())
"""Nouns after "what/which" that name no attribute of their own ("what kind of ...")."""
_WH = frozenset(WH_WORDS)
_COUNTS = frozenset({w for w, n in NUMBER_WORDS.items() if 2 <= n <= 10} | {"several"})
_DATES = frozenset("year years date dates century decade month day time age".split())
_GENERIC_VERBS = frozenset("""make makes made give gives gave take takes took get got find found
think thought say said see saw come came go went put set become became want wanted need needed
help helped show showed""".split())
"""Verbs too general to name an attribute ("Who made it ...", "What makes ...")."""
_QUALIFIERS = frozenset("""first last earliest latest oldest youngest largest biggest smallest
highest lowest longest shortest original total""".split())
"""Ordinals and superlatives that narrow a question to one instance ("the first to ...")."""
_VERB_END = re.compile(r"(?:ed|ize|ise|ate|en)$")
_IRREGULAR = frozenset("""born die dies died kill kills win won lose lost buy bought sell sold
build built write wrote written begin began begun leave left lead led make made teach taught
find found think thought give gave grow grew draw drew hold held run ran meet met pay paid
live lives study studies marry married succeed succeeds""".split())


@dataclass(frozen=True)
class AttributeCheck:
    """The attribute words a question asks for, and whether an answer states them."""

    words: tuple[str, ...]
    stated: bool
    missing: tuple[str, ...]


_INFLECTIONS = frozenset({"", "s", "es", "d", "ed", "ing", "r", "rs", "er", "ers", "n"})
"""Endings a short attribute word may take and still be itself: die -> died, case -> cases."""


def says(key: str, said: set[str]) -> bool:
    """Whether a word of `said` has the prefix key (a short key is a word start: die -> died)."""
    if len(key) < PREFIX:
        return any(w.startswith(key) and w[len(key):] in _INFLECTIONS for w in said)
    return any(prefix_key(w) == key for w in said)


def _is_verbish(word: str) -> bool:
    return word in _IRREGULAR or bool(_VERB_END.search(word)) and len(word) >= 4


_HOW_TO = re.compile(r"\bhow\s+(?:do|does|can|could|would|should|shall|must|to)\s+"
                     r"(?:(?:i|you|we|one)\s+)?(?:\w+ly\s+)?([a-z][a-z-]*)", re.I)


def asked_action(question: str) -> str | None:
    """Return the action a how-to question asks to do: "rename" in "How do I rename a branch?".

    The verb right after "how do I / can you / to" (an adverb before it skipped: "how do I
    completely remove"). None when the question is no how-to question, or its verb is too
    general to name an action ("how do I make / get / put ...").
    """
    m = _HOW_TO.search(question)
    if m is None:
        return None
    verb = m.group(1).lower()
    if verb in _AUX or verb in STOPWORDS or verb in _GENERIC_VERBS:  # "how do I make ...", "can it"
        return None
    return verb


def states_action(action: str, text: str, table: AttributeTable | None = None) -> bool:
    """Whether text states a how-to question's action: the verb, or a derived synonym of it.

    "How do I rename a file?" and "mv renames a file" (the verb's prefix);
    the synonyms are the attribute table's, derived from data (`load_synonyms`).
    """
    table = load_synonyms() if table is None else table
    said = set(words(text))
    return says(prefix_key(action), said) or any(
        says(s, said) for s in table.synonyms_of("*:" + action))


def asked_attribute(question: str) -> tuple[str, ...]:
    """Return the attribute words the question asks about (empty: it asks for none)."""
    return tuple(a.split(":", 1)[1] for a in asked_forms(question))


def form_key(asked: str) -> str:
    """Return the table key of a "form:word" attribute: the form and the word's prefix."""
    form, word = asked.split(":", 1)
    return f"{form}:{prefix_key(word)}"


def asked_forms(question: str) -> tuple[str, ...]:
    """Return the question's attributes as "form:word" ("where:born", "which:case").

    The form matters: "which release" (answered with a release's name) and "when was X
    released" (answered with the verb) are stated at different rates.
    """
    toks = words(question)
    if not toks:
        return ()
    out: list[str] = []
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if t == "who" and nxt and nxt not in _AUX and nxt not in STOPWORDS \
                and nxt not in _GENERIC_VERBS:
            out.append(f"who:{nxt}")  # who killed / succeeded / coined
        elif t in ("where", "when") and nxt in _AUX:
            rest = [w for w in toks[i + 2:] if w not in STOPWORDS]
            verbs = [w for w in rest if _is_verbish(w) and w not in _GENERIC_VERBS]
            if verbs:
                out.append(f"{t}:{verbs[-1]}")  # where was X born / when did X die
        elif t in ("what", "which") and nxt and nxt not in _AUX and nxt not in STOPWORDS \
                and not _is_verbish(nxt) and toks[i + 2:i + 3] not in (["a"], ["an"], ["the"]):
            # ("what distinguishes a twin ...": a verb, followed by its object's article)
            phrase: list[str] = []
            for w in toks[i + 1:]:  # "which supreme court case overturned": the head is "case"
                if w in _AUX or w in STOPWORDS or (phrase and (_is_verbish(w)
                                                               or w.endswith("ly"))):
                    break  # "what group specifically opposed": an adverb ends the phrase
                phrase.append(w)
            head = phrase[-1] if phrase else ""
            # "which two vices": an enumeration names its category, its answer need not
            counted = any(w.isdigit() or w in _COUNTS for w in phrase)
            if head and not counted and head not in _GENERIC_NOUNS and head not in _DATES \
                    and head not in _GENERIC_VERBS:
                out.append(f"which:{head}")  # which country / what book (dates: answer type)
        elif t == "how" and nxt in ("many", "much") and i + 2 < len(toks):
            noun = toks[i + 2]
            after = [w for w in toks[i + 3:i + 5] if w not in _AUX and w not in STOPWORDS]
            if after and _is_verbish(after[0]):
                out.append(f"many:{after[0]}")  # how many men died
            elif toks[i + 1] == "much" and noun not in STOPWORDS and noun not in _AUX:
                out.append(f"much:{noun}")  # how much power (how many: the count check's business)
        elif t == "what" and nxt == "did":
            tail = [w for w in toks[i + 2:] if w not in STOPWORDS]
            if tail and toks[-1] in ("of", "from") and len(tail) >= 2:
                out.append(f"did:{tail[-1]}")  # what did Epicurus die of
        if t in _WH:
            break  # only the question's first wh-word says what it asks
    # "the first to", "the largest", "in total": a qualifier narrows what is asked, and a
    # sentence about the thing that never says it answers another question
    # ("When was X first banned?" asks for a date, which the answer-type check demands; "the
    # six total packages" counts)
    when = toks[0] == "when" or any(
        a in _WH and b in _DATES for a, b in zip(toks, toks[1:], strict=False))
    if not when:
        # only in the clause that asks, from its wh-word on: "I have to finish my report first,
        # how do I save the draft?" asks nothing of a first thing
        asking = next((k for k, w in enumerate(toks) if w in _WH), 0)
        out.extend(f"qual:{w}" for k, w in enumerate(toks) if k >= asking and w in _QUALIFIERS
                   and not (k and (toks[k - 1].isdigit() or toks[k - 1] in _COUNTS)))
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class AttributeTable:
    """The derived table: synonyms per attribute, and how often the data states each one."""

    synonyms: dict[str, tuple[str, ...]]
    stated_rate: dict[str, float]

    def checkable(self, asked: str) -> bool:
        """Whether the check applies: the data states this attribute in most gold sentences.

        Attributes whose answers usually name an instance instead ("which country" -> "France",
        "what sensors" -> "a gyroscope") are stated too rarely to demand, and unseen ones are
        never demanded.
        """
        return self.rate(asked) >= MIN_STATED_RATE

    def rate(self, asked: str) -> float:
        """Return how often the data's gold sentences state this attribute (0 when unseen).

        The question form's own figure; for a verb or property form too rare to have one, the
        figure pooled over all forms. A "which NOUN" form is never demanded: its answers name
        an instance of the noun, not the noun.
        """
        key = form_key(asked)
        if key.startswith("which:"):
            # "which NOUN" is answered with an instance ("Which projects?" "Isaac Gym and
            # Orbit."): on SQuAD 2.0 dev it refused 7 answerable questions for 4 near-misses
            return 0.0
        if key in self.stated_rate:
            return self.stated_rate.get(key, 0.0)
        return self.stated_rate.get("*:" + key.split(":", 1)[1], 0.0)

    def synonyms_of(self, asked: str) -> tuple[str, ...]:
        """Return the derived synonyms of a "form:word" attribute: the form's and the pooled."""
        key = form_key(asked)
        pooled = self.synonyms.get("*:" + key.split(":", 1)[1], ())
        return tuple(dict.fromkeys(self.synonyms.get(key, ()) + pooled))


@lru_cache(maxsize=4)
def load_synonyms(path: Path = SYNONYMS_FILE) -> AttributeTable:
    """Return the derived table; an empty one (the check then demands nothing) when absent."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return AttributeTable({}, {})
    table = data.get("synonyms") if isinstance(data, dict) else None
    rates = data.get("stated_rate") if isinstance(data, dict) else None
    if not isinstance(table, dict) or not isinstance(rates, dict):
        return AttributeTable({}, {})
    return AttributeTable(
        {str(k): tuple(str(v) for v in vs) for k, vs in table.items() if isinstance(vs, list)},
        {str(k): float(v) for k, v in rates.items() if isinstance(v, int | float)})


def states_attribute(question: str, text: str, table: AttributeTable | None = None,
                     forms: Sequence[str] | None = None) -> AttributeCheck:
    """Check that text states each checkable attribute word of the question (or a synonym).

    `forms` are the question's `asked_forms` when they were read already (its analysis).
    """
    table = load_synonyms() if table is None else table
    checked = [a for a in (asked_forms(question) if forms is None else forms)
               if table.checkable(a)]
    if not checked:
        return AttributeCheck((), True, ())
    said = set(words(text))
    asked = tuple(a.split(":", 1)[1] for a in checked)
    missing = tuple(a.split(":", 1)[1] for a in checked
                    if not says(prefix_key(a.split(":", 1)[1]), said)
                    and not any(says(s, said) for s in table.synonyms_of(a)))
    return AttributeCheck(asked, not missing, missing)
