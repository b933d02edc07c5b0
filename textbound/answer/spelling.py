"""Misspelt question words corrected against the collection's own vocabulary (SymSpell).

"How do I install Isaak Sym?" finds nothing: neither word is in the book, the dense vector of a
misspelt name is far from the passage, BM25 has no token to match, and the unknown-names check
refuses it. Correcting it to "Isaac Sim" before retrieval finds the passage. The rules keep the
correction from turning a question the book cannot answer into one it seems to:

- a word the collection uses (in any case) is never changed;
- a word is only ever changed into a word the collection uses, one edit away (Damerau: a letter
  added, dropped, changed, or two swapped), and only words made of letters alone, written in
  lower case or capitalised (no digits, `_`, `-` or `.`: commands, flags and variables are
  matched verbatim by BM25, never guessed; no acronyms: "GPS" is not a typo of "GAS");
- a word changes on its own only when it has at least `MIN_LENGTH` letters, keeps its first
  letter ("math" does not become "path") and the change is not just an ending ("analyzes" /
  "analyze", "Soviets" / "Soviet": BM25 stems those anyway);
- and it changes into a word written as the book writes it: a capitalised word (a name) into
  one the book capitalises, a lower-case word into one the book writes in lower case ("Meggers"
  does not become "mergers", "tumor" does not become "Tudor");
- an English word ("Tesla", "sym"), or a shorter one, is changed only when the result forms,
  with a neighbouring question word that is not a stop word, a name the collection writes
  ("Isaac Sim"; two misspelt neighbours may form it together: "isaak sym"): an ordinary word
  the book lacks is what makes a question out of its scope, so it stays;
- several equally close candidates that are about as frequent (within `DOMINANCE`) and that no
  neighbour settles: nothing changes.

The dictionary is the collection's own words with the number of chunks using each
(`Store.term_stats()`, computed from the stored text and cached until the next write, so uploads
while serving are in it at once), indexed by symspellpy on first use (about 0.4 s per 10k
distinct words) and kept for as long as those statistics are. The English word list is the one
symspellpy ships (82,765 words).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from textbound.text import STOPWORDS, fold_word

__all__ = ["Correction", "correct_question", "english_words", "unknown_words"]

MAX_EDITS = 1
"""Edits allowed per word: one typo a word ("Isaak Sym" has one in each)."""
MIN_LENGTH = 4
"""Shorter words change only into a name the collection writes (many words are one edit from
them: "und" / "and", "Pal" / "Pax")."""
NAME_LENGTH = 3
"""Words shorter than this never change."""
_ENDINGS = ("s", "es", "d", "ed")
DOMINANCE = 3.0
"""The best of several equally close candidates must be used this many times more often."""

_TOKEN = re.compile(r"\S+")
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
_EDGE_PUNCT = "\"'`([{<,.;:!?)]}>\u201c\u201d\u2018\u2019"


@dataclass(frozen=True)
class Correction:
    """A question with its misspelt words corrected, and what was changed."""

    question: str
    changes: list[tuple[str, str]] = field(default_factory=list)
    """(as asked, as corrected) for each changed word, in question order."""


@cache
def english_words() -> frozenset[str]:
    """Return the English words of symspellpy's frequency dictionary (lower case)."""
    text = resources.files("symspellpy").joinpath(
        "frequency_dictionary_en_82_765.txt").read_text(encoding="utf-8")
    return frozenset(line.split(" ", 1)[0] for line in text.splitlines() if line)


NAME_EDITS = 2
"""A lower-case word this many edits or fewer from an English word may be a typo of it."""
FORM_ENDING = 3
"""Letters a word's ending may differ by from another form of it ("calibratory",
"calibrator")."""


@cache
def _english_index() -> Any:
    """A SymSpell index over the English words (built on first use: about 2 s, 100 MB)."""
    from symspellpy import SymSpell

    spell = SymSpell(max_dictionary_edit_distance=NAME_EDITS)
    spell.load_dictionary(str(resources.files("symspellpy").joinpath(
        "frequency_dictionary_en_82_765.txt")), 0, 1)
    return spell


def _near_english(word: str) -> bool:
    """Whether an English word is at most `NAME_EDITS` edits from word (a typo of it)."""
    from symspellpy import Verbosity

    return bool(_english_index().lookup(word, Verbosity.CLOSEST, max_edit_distance=NAME_EDITS))


def unknown_words(question: str, stats: Any) -> list[str]:
    """Return the question's lower-case names that the collection never uses.

    "How do I export the scene to tensorflowlite?": a word of letters that is no word of
    the collection, no English word, no typo of either (one edit from a word of the collection,
    two from an English word) and no other form of a word of the collection (all but its last
    `FORM_ENDING` letters open one: "calibratory" and "calibrator") names something the book
    does not know, as a capitalised name it never uses does (evidence.unknown_names). Without
    the collection's word counts nothing is reported.
    """
    counts: dict[str, int] = getattr(stats, "counts", None) or {}
    if not counts:
        return []
    english = english_words()
    found = []
    for m in _TOKEN.finditer(question):
        core = m.group(0).strip(_EDGE_PUNCT)
        if len(core) < MIN_LENGTH or not (core.isalpha() and core.islower()):
            continue
        word = fold_word(core)
        if word in counts or word in english or word in STOPWORDS \
                or _index(stats).candidates(word) or _near_english(word):
            continue
        stem = word[:-FORM_ENDING]
        if len(stem) < MIN_LENGTH or not any(w.startswith(stem) for w in counts):
            found.append(core)
    return found


class _Index:
    """A SymSpell index over one collection's words (built once per term statistics)."""

    def __init__(self, counts: dict[str, int]) -> None:
        from symspellpy import SymSpell

        self.spell = SymSpell(max_dictionary_edit_distance=MAX_EDITS, prefix_length=7)
        for word, count in counts.items():
            if len(word) >= NAME_LENGTH - MAX_EDITS and _WORD.fullmatch(word):
                self.spell.create_dictionary_entry(word, count)

    def candidates(self, word: str) -> list[tuple[str, int]]:
        """Return (word, count) of the collection's words closest to word, most used first."""
        from symspellpy import Verbosity

        found = self.spell.lookup(word, Verbosity.CLOSEST, max_edit_distance=MAX_EDITS,
                                  transfer_casing=False)
        return [(s.term, int(s.count)) for s in found if s.distance > 0]


_LOCK = threading.Lock()
_INDEXES: dict[int, tuple[Any, _Index]] = {}


def _index(stats: Any) -> _Index:
    """Return the index of these term statistics (the last few are kept)."""
    with _LOCK:
        hit = _INDEXES.get(id(stats))
        if hit is not None and hit[0] is stats:
            return hit[1]
    index = _Index(stats.counts)
    with _LOCK:
        if len(_INDEXES) >= 4:
            _INDEXES.pop(next(iter(_INDEXES)))
        _INDEXES[id(stats)] = (stats, index)
    return index


def _recase(new: str, old: str) -> str:
    """Write the correction as the word was written: its case, and a possessive 's kept."""
    tail = old[-2:] if old[-2:].lower() in ("'s", "\u2019s") else ""
    if old.isupper() and len(old) > 1:
        return new.upper() + tail
    if old[:1].isupper():
        return new[:1].upper() + new[1:] + tail
    return new + tail


def correct_question(question: str, stats: Any) -> Correction | None:
    """Return the question with its misspelt words corrected, or None when none is.

    `stats` is the collection's TermStats; without word counts nothing is corrected.
    """
    counts: dict[str, int] = getattr(stats, "counts", None) or {}
    if not counts:
        return None
    names: frozenset[str] = getattr(stats, "names", frozenset())
    english = english_words()
    # (start, end, word as asked) of each plain word, in order
    words: list[tuple[int, int, str]] = []
    for m in _TOKEN.finditer(question):
        token = m.group(0)
        core = token.strip(_EDGE_PUNCT)
        if core and _WORD.fullmatch(core):
            start = m.start() + token.index(core)
            words.append((start, start + len(core), core))
    folded = [fold_word(w) for _, _, w in words]
    fixed: dict[int, str] = {}
    pending: list[tuple[int, list[tuple[str, int]]]] = []
    index: _Index | None = None
    for i, (_, _, asked) in enumerate(words):
        w = folded[i]
        if len(w) < NAME_LENGTH or w in counts or not (asked[1:].islower() or len(asked) == 1):
            continue  # too short, a word of the book, or an acronym / mixed case
        index = index or _index(stats)
        found = index.candidates(w)
        if found:
            pending.append((i, found))

    def neighbours(i: int) -> list[str]:
        near = [fixed.get(j, folded[j]) for j in (i - 1, i + 1) if 0 <= j < len(folded)]
        return [n for n in near if n not in STOPWORDS]

    def named(i: int, cand: str) -> bool:
        return any(f"{n} {cand}" in names or f"{cand} {n}" in names for n in neighbours(i))

    def alone(i: int, cand: str) -> bool:
        """Whether word i may become cand without a name to support it (case aside)."""
        w = folded[i]
        if len(w) < MIN_LENGTH or w[0] != cand[0]:
            return False
        return not any(w == cand + e or cand == w + e for e in _ENDINGS)

    def as_written(i: int, cand: str) -> bool:
        """Whether the book writes cand as word i is written.

        A name as a name ("Meggers" is no "mergers"), a common word as a common word ("tumor" is
        no "Tudor"); a question's first word may be either.
        """
        written: frozenset[str] = getattr(stats, "words", frozenset())
        if i == 0:
            return True
        asked = words[i][2]
        return (cand[:1].upper() + cand[1:] if asked[:1].isupper() else cand) in written

    def pick(i: int, found: list[tuple[str, int]], need_name: bool) -> str | None:
        paired = [(c, n) for c, n in found if named(i, c)]
        if need_name or paired:
            found = paired
        else:
            found = [(c, n) for c, n in found if alone(i, c)]
        if not found or (len(found) > 1 and found[0][1] < DOMINANCE * found[1][1]):
            return None  # nothing, or no clear winner (before the case filter narrows it)
        if not (paired or as_written(i, found[0][0])):
            return None
        return found[0][0]

    # two misspelt neighbours that together become a name the book writes ("isaak sym")
    for (i, first), (j, second) in zip(pending, pending[1:], strict=False):
        if j == i + 1 and i not in fixed:
            both = [(a, b) for a, _ in first for b, _ in second if f"{a} {b}" in names]
            if len(both) == 1:
                fixed[i], fixed[j] = both[0]
    # then words no English speaker would write, then English words a name now supports
    for need_name in (False, True):
        for i, found in pending:
            if i in fixed or (folded[i] in english) != need_name:
                continue
            best = pick(i, found, need_name)
            if best is not None:
                fixed[i] = best
    if not fixed:
        return None
    out, last, changes = [], 0, []
    for i, (start, end, asked) in enumerate(words):
        if i in fixed:
            new = _recase(fixed[i], asked)
            out.append(question[last:start] + new)
            last = end
            changes.append((asked, new))
    out.append(question[last:])
    return Correction("".join(out), changes)
