"""What a question asks for, read from its words: code, a procedure, a list, a count.

The answer rules (textbound/text/units.py, the extractive composer) ask these of the question; they
are declared here once, each with the example it was written for.
"""

from __future__ import annotations

import re

__all__ = ["AUXILIARIES", "NUMBER_WORDS", "WH_WORDS", "acronyms_to_spell", "asked_count",
           "asks_example", "literals", "prints", "wants_code", "wants_list", "wants_procedure"]

_CODE_QUESTION = re.compile(
    r"\b(?:code|command|commands|syntax|snippet|listing|output|print(?:s|ed)?|error message|"
    r"compiler|terminal|console|shell|flag|option|type in|run(?:ning)? the)\b", re.I)

_PROCEDURE_QUESTION = re.compile(
    r"\bhow\s+(?:do|can|could|would|should|shall|must|to)\b(?!\s+(?:i|you|we)\s+know\b)|"
    r"\b(?:what|which)(?:'s|\s+is)?\s+(?:the\s+)?(?:exact\s+)?(?:command|option|setting|"
    r"syntax|flag|switch|keyword|statement|function)\b|\bhow\s+(?:i|you)\s+(?:can|should)\b|"
    r"\b(?:what|which)\b[^?.]{0,40}\b(?:should|can|do|must)\s+(?:i|you|we)\s+use\b|"
    r"\bwork ?around\b",
    re.I)


def wants_procedure(question: str) -> bool:
    """Whether a question asks how to do something ("how do I ...?", "what command ...?").

    In a technical book the answer to such a question is often a command in a code block, so a
    `block` unit may lead it and a prose lead is followed by the block it leads to.
    """
    return bool(_PROCEDURE_QUESTION.search(question))


def wants_code(question: str) -> bool:
    """Whether a question asks for code, a command or program output (code may then lead)."""
    return bool(_CODE_QUESTION.search(question))


_LIST_QUESTION = re.compile(
    r"\b(?:what|which|name|list)\b.{0,40}\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+|"
    r"main|major|several|some|different|types|kinds|forms|stages|steps|parts|elements|causes|"
    r"examples|components|areas|categories|principles|rules|virtues)\b|\blist\b|"
    r"\bexamples of\b", re.I)


def wants_list(question: str) -> bool:
    """Whether a question asks for an enumeration ("What are the three ...?")."""
    return bool(_LIST_QUESTION.search(question))


WH_WORDS = ("what", "which", "how", "when", "where", "who", "whom", "whose", "why")
"""The words that open what a question asks (the answer type and the asked attribute read the
first one)."""
AUXILIARIES = frozenset("do does did can could will would should shall may might must is are "
                        "was were has have had".split())
"""The auxiliaries a yes/no question opens with ("Can I ...?"), and after which a command's head
is the subject of a verb ("does git track ...?")."""

NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_COUNT_LEAD = frozenset("the which what these those are were list name".split())
_COUNT_STOP = frozenset("""is are was were be do does did has have had of in on for to by with
from about that which who whom what how into according""".split())


def asked_count(question: str) -> tuple[int, str] | None:
    """Return (N, category) when a question asks for N things ("What are the four causes?").

    The category is the first plural word after the number ("the three main areas ethics is
    divided into" -> areas), else the last word before a function word.
    """
    if not wants_list(question):
        return None
    # "three-dimensional", "two-finger": a hyphenated number describes, it does not count
    toks = [t.lower() for t in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", question)]
    for i, t in enumerate(toks):
        # a digit counts after a determiner ("the 3 laws"), not after a name ("ROS 2 topic")
        digit = t.isdigit() and len(t) <= 2 and i > 0 and toks[i - 1] in _COUNT_LEAD
        n = NUMBER_WORDS.get(t) or (int(t) if digit else 0)
        if n < 2:
            continue
        run: list[str] = []
        for w in toks[i + 1:i + 5]:
            if w in _COUNT_STOP:
                break
            run.append(w)
        plural = [w for w in run if len(w) > 3 and w.endswith("s") and not w.endswith("ss")]
        head = plural[0] if plural else (run[-1] if run else "")
        if head:
            return n, head
    return None


# "give me an example", "what is an example of X?": a unit that gives one is preferred
_ASKS_EXAMPLE = re.compile(r"\b(?:an?|some|another|one)\s+examples?\b|\bexamples?\s+of\b|"
                           r"\bfor\s+instance\b", re.I)


def asks_example(question: str) -> bool:
    """Whether a question asks for an example ("Give me an example of a topic")."""
    return bool(_ASKS_EXAMPLE.search(question))


_STANDS_FOR = re.compile(r"\bstands?\s+for\b|\bacronym\b|\babbreviat\w*|\bshort\s+for\b", re.I)
_ACRONYM = re.compile(r"\b[A-Z][A-Z]{1,7}\b")


def acronyms_to_spell(question: str) -> list[str]:
    """Return the acronyms a question asks to have spelled out ("What does NITROS stand for?").

    None unless the question asks what something stands for, abbreviates or is short for.
    """
    return _ACRONYM.findall(question) if _STANDS_FOR.search(question) else []


_SYMBOL = re.compile(r"[\^%$~=<>*/\\_\[\]{}|#&@]|^--?[^\W\d]|\w\.\.+\w|\w\.\w")
"""A token is a literal when it holds a symbol code and keys use, starts like an option, or
joins words with dots ("main..topic", "pool.conf"); a "+" alone makes none: product and
language names use it ("C++", "Notepad++")."""
_EDGE = ".,;:!?)(\"'\u2019\u201d"
_ABBREVIATION = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]?$")  # "e.g", "i.e.", "J.I" are words


def prints(text: str, literal: str) -> bool:
    """Whether the text prints the literal as it is, standing alone.

    "^P" stands in "Key: ^P; Action: ..."; "--staged" does not in "--staged-only", nor "-r"
    in "-rf".
    """
    quoted = _QUOTED.match(literal)
    if quoted is not None:  # "'A'" is printed as 'A', ‘A’, "A" or `A`
        return re.search(rf"[`'\"‘“]{re.escape(quoted.group(2))}[`'\"’”]", text) is not None
    tag = _TAG.match(literal)
    if tag is not None:  # "<match>" is printed by "<match target="pattern">" too
        return re.search(rf"<{re.escape(tag.group(1))}[\s>]", text) is not None
    return re.search(rf"(?<![\w-]){re.escape(literal)}(?![\w-])", text) is not None


_QUOTED = re.compile(r"^(['\"])([^\s'\"]+)\1$")
"""A value the question quotes as the book would print it: "'A'", "'rx'"."""
_TAG = re.compile(r"^<([A-Za-z][\w.-]*)>$")
"""A markup element as a question names it: "<match>", "<edit>"."""


def literals(question: str) -> list[str]:
    """The question's tokens a book would print as they are: code, keys, options, file names.

    A token with a symbol in it ("^P", "%j", "robot$", "max_workers", "--staged", "node~2",
    "main..topic", "pool.conf") names one thing exactly; the word analysis splits it into
    words or drops it ("^P" reads as nothing). Trailing punctuation is not part of it; a token
    needs a letter or a digit and two characters ("[" and ">" alone are no literal); an
    abbreviation ("e.g.") is none. A word the question quotes is one with its quotes ("type
    'A'"), and a quoted value keeps the quote that closes it ('target="scan"').
    """
    out: list[str] = []
    for raw in question.split():
        value = _QUOTED.match(raw.rstrip(".,;:!?)"))
        if value is not None and any(ch.isalnum() for ch in value.group(2)) \
                and not _SYMBOL.search(value.group(2)):
            if value.group(0) not in out:  # "a record of type 'A'": a word only as quoted
                out.append(value.group(0))
            continue
        token = raw.rstrip(_EDGE) or raw
        tail = raw[len(token):]
        if token.startswith(("(", "\"", "'")):
            token = token[1:]
        for mark in "\"'":  # target="scan" keeps the quote that closes its value
            if token.count(mark) % 2 and tail.startswith(mark):
                token += mark
        if len(token) >= 2 and any(ch.isalnum() for ch in token) and _SYMBOL.search(token) \
                and not _ABBREVIATION.match(token) and token not in out:
            out.append(token)
    return out
