"""Small text utilities shared by chunking, gating, generation and validation.

Everything here is deterministic and dependency-free: the one text sanitiser (`clean_text`,
`LONE_SURROGATE`, `valid_unicode`, `from_command_line`), sentence spans, word tokens, stop words,
and the question analysis the gates and the extractive generator use.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "PREFIX",
    "prefix_key",
    "LONE_SURROGATE",
    "STOPWORDS",
    "clean_text",
    "from_command_line",
    "valid_unicode",
    "content_words",
    "normalize",
    "capitalised_words",
    "compound_names",
    "fold_word",
    "surface_words",
    "sentence_spans",
    "split_sentences",
    "term_set",
    "words",
    "key_tokens",
]

# --- the sanitiser -------------------------------------------------------------------------------
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate: text that is not valid Unicode (a JSON escape such as "\\ud800", or an
undecodable command-line byte), which nothing can encode as UTF-8."""
_INVISIBLE = {"Cf", "Cc", "Cs", "Co", "Cn"}


def valid_unicode(text: str) -> str:
    """Return text with each lone surrogate replaced by U+FFFD."""
    return LONE_SURROGATE.sub("\ufffd", text)


def clean_text(text: str) -> str:
    """Drop control, format (bidi, zero-width) and unassigned characters; keep line breaks."""
    return "".join(
        ch for ch in text
        if ch in "\n\t" or unicodedata.category(ch) not in _INVISIBLE
    )


def from_command_line(value: str | None) -> str | None:
    """Return a command-line argument as valid Unicode: undecodable bytes become U+FFFD.

    Python hands over bytes that are not UTF-8 as lone surrogates (`surrogateescape`), which
    nothing downstream can encode.
    """
    if value is None:
        return None
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte
        raw = value.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves also may might must shall us i'm
    it's what's let's does did done get gets got one ones use used using uses like tell explain
    describe mean means meant define called call known name named please give kind kinds type types
    many much whats wat way ways passage selection selected excerpt paragraph say says said
    according mention mentions mentioned text""".split()
)

_WORD = re.compile(r"[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*")
# Abbreviations that end with a period but do not end a sentence.
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|eg|ie|etc|vs|v|cf|al|Dr|Mr|Mrs|Ms|Prof|Fig|fig|Eq|eq|No|approx|Inc|Ltd|St|Jr|Sr)"
    r"|\b[A-Z]"
    r"|\((?:b|c|ca|d|fl|r))\.$"  # "John Searle (b. 1932)", "Socrates (c. 470-399 BCE)"
)
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(?=\s+|$)")
_REFERENCE = re.compile(r"(?:\d|\b[A-Za-z]{1,3})\.$")
"""Before a number, a period after a number ("step 2. 3 ...") or a short abbreviation ends no
sentence: a printed manual's "see set contour (p. 154)" is one sentence, not "see set contour
(p." and "154)."."""


def _inside_sentence(mark: str, before: str, after: str) -> bool:
    """Whether a full stop, "!" or "?" is inside a sentence, not at its end.

    - "??", a reference the PDF could not resolve, the sentence going on in lower case: "see
      Section ?? for the options";
    - inside parentheses that close within the next sentence: "(see the table above. It is
      long) is used";
    - closing a parenthesis opened inside the sentence, the sentence going on in lower case:
      "send a frame (say, a pose ...) before the arm moves".
    """
    if mark == "??" and after.lstrip()[:1].islower():
        return True
    opened = before.count("(") - before.count(")")
    if opened > 0:
        nxt = _BOUNDARY.search(after)  # the parenthesis closes within the next sentence
        upto = after[:nxt.start()] if nxt else after
        if upto.count(")") > upto.count("("):
            return True
    return (mark.endswith(")") and not before.lstrip().startswith("(")
            and after.lstrip()[:1].islower())


def normalize(text: str) -> str:
    """Return text folded for matching: NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def words(text: str) -> list[str]:
    """Return lower-cased word tokens (letters and digits, inner hyphens and apostrophes kept)."""
    return [m.group(0).lower() for m in _WORD.finditer(unicodedata.normalize("NFKC", text))]


def _stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


PREFIX = 5
"""Two forms of a word are one when they share this many first letters (servic/service)."""


def prefix_key(word: str) -> str:
    """Return the prefix two forms of a word share: its first five letters (whole when shorter).

    The one prefix stemmer: glossary and section titles (answer/evidence.py), asked attributes
    (answer/attribute.py) and counted categories (text/units.py, after a plural "s") use it.
    """
    return word[:PREFIX]


def content_words(text: str) -> list[str]:
    """Return the stemmed non-stop words of text, in order, duplicates kept."""
    return [_stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


_BLOCK_START = re.compile(r"\s*(?:[-*+]\s|\d+\.\s|#|\||```|~~~)")


def _blocks(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split text[start:end] into line blocks that sentences never cross.

    A block ends at a blank line, before a list item, heading, table row or fence, and after a
    heading line.
    """
    blocks: list[tuple[int, int]] = []
    b_start: int | None = None
    prev_heading = False
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        line_end = end if nl == -1 else nl
        line = text[pos:line_end]
        blank = not line.strip()
        if blank or _BLOCK_START.match(line) or prev_heading:
            if b_start is not None:
                blocks.append((b_start, pos - 1 if pos > b_start else pos))
            b_start = None if blank else pos
        elif b_start is None:
            b_start = pos
        prev_heading = line.lstrip().startswith("#")
        pos = line_end + 1
    if b_start is not None:
        blocks.append((b_start, end))
    return blocks


@lru_cache(maxsize=65536)
def term_set(text: str) -> frozenset[str]:
    """Return the distinct content words of text (cached: chunk texts recur across questions)."""
    return frozenset(content_words(text))


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Return (start, end) character spans of the sentences in text[start:end], trimmed.

    Blank lines, list items and headings also end a sentence, so Markdown bullets and code lines
    do not run together.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    for b_start, b_end in _blocks(text, start, end):
        chunk = text[b_start:b_end]
        cursor = 0
        for m in _BOUNDARY.finditer(chunk):
            candidate = chunk[cursor : m.end()]
            digit_next = m.end() < len(chunk) and chunk[m.end() : m.end() + 2].strip()[:1].isdigit()
            if _ABBREV.search(candidate.rstrip("\"')]")) or digit_next and _REFERENCE.search(
                candidate
            ) or _inside_sentence(m.group(0), candidate, chunk[m.end():]):
                continue
            spans.append((b_start + cursor, b_start + m.end()))
            cursor = m.end()
        spans.append((b_start + cursor, b_start + len(chunk)))
    trimmed = []
    for s, e in spans:
        piece = text[s:e]
        lead = len(piece) - len(piece.lstrip())
        tail = len(piece.rstrip())
        if tail > lead:
            trimmed.append((s + lead, s + tail))
    return trimmed


_SURFACE = re.compile(r"\w+(?:['\u2019]\w+)*")
_CAPITALISED = re.compile(r"\b[^\W\d_a-z]\w*(?:['\u2019]\w+)*")


def fold_word(word: str, lower: bool = True) -> str:
    """Strip accents and a possessive 's, and lower-case unless told not to: Möngke's -> mongke."""
    w = unicodedata.normalize("NFKD", word)
    w = "".join(c for c in w if not unicodedata.combining(c)).replace("\u2019", "'")
    w = w.lower() if lower else w
    return w[:-2] if w.lower().endswith("'s") else w


def surface_words(text: str, lower: bool = True) -> set[str]:
    """Return the folded words of text as written (no stemming, no stop-word removal)."""
    return {fold_word(m.group(0), lower) for m in _SURFACE.finditer(text)}


_COMPOUND = re.compile(r"(?<![\w-])[A-Za-z]+-\d\w*(?![\w-])")
_COMPOUND_NAME = re.compile(r"(?<![\w-])[A-Z][A-Za-z]*-\d\w*(?![\w-])")


def compound_names(text: str, *, named: bool = True) -> set[str]:
    """Return the names of text joined to a number by a hyphen, as written: "SHA-256", "RT-2".

    A model, standard or algorithm is often named so, and the words alone ("SHA", "256") say
    nothing of which one. With `named`, only those starting with a capital (what a question
    names); without, every such token ("sha-1" in code too: what a collection prints).
    """
    return set((_COMPOUND_NAME if named else _COMPOUND).findall(text))


_NAME_PAIR = re.compile(r"(?=\b([^\W\d_a-z]\w*)[ \t]+([^\W\d_a-z]\w*)\b)")


def name_pairs(text: str) -> set[str]:
    """Return each two adjacent capitalised words of text, folded: "Isaac Sim" -> "isaac sim"."""
    return {f"{fold_word(a)} {fold_word(b)}" for a, b in _NAME_PAIR.findall(text)}


_DOTTED = re.compile(r"[a-z0-9_]\.")
"""A code path's dot, matched just before a word ("os.", "fs.constants.")."""


def capitalised_words(text: str) -> list[str]:
    """Return the capitalised words of text that do not start a sentence (case kept, folded).

    "Can I use ROS 2 on Windows?" gives ROS and Windows: the names a question is about; "what
    does fs.constants.O_TMPFILE do?" gives O_TMPFILE.
    """
    out: list[str] = []
    for m in _CAPITALISED.finditer(text):
        before = text[:m.start()].rstrip()
        # "fs.constants.O_TMPFILE": a name after a code path's dot starts no sentence
        dotted = m.start() >= 2 and _DOTTED.match(text, m.start() - 2, m.start())
        if not dotted and (not before or before[-1] in ".!?:;\"'([*#>-`"):
            continue
        w = fold_word(m.group(0), lower=False)
        if w != "I" and w not in out:
            out.append(w)
    return out


def split_sentences(text: str) -> list[str]:
    """Return the sentences of text."""
    return [text[s:e] for s, e in sentence_spans(text)]


# --- question analysis ------------------------------------------------------------------------

def key_tokens(text: str) -> set[str]:
    """Return numbers, years and capitalised names in text: the facts a hallucination invents.

    Sentence-initial capitals are skipped, and so are the words of a heading-like phrase that
    begins the text, so "According to the textbook" does not count as a name.
    """
    tokens: set[str] = set()
    for m in re.finditer(r"\b\d+(?:[.,]\d+)*\b", text):
        tokens.add(m.group(0).replace(",", ""))
    for m in re.finditer(r"\b[A-Z][A-Za-z0-9]*(?:[-][A-Za-z0-9]+)*\b", text):
        before = text[: m.start()].rstrip()
        if not before or before[-1] in ".!?:;\"'([*#>-" or before.endswith("]"):
            continue  # sentence-initial or list-initial capital
        tokens.add(m.group(0).lower())
    return tokens
