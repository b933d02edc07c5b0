"""The commands a book's code is written in, and the commands a question names.

A technical book shows its program at work in code blocks: "$ git log ...", "set xrange
[0:10]", "ros2 topic list". The word that opens its code blocks (after any shell prompt) is the
book's command head ("git", "set", "plot", "ros2"); what follows a head in the book, in prose or
code, is a command the book knows ("git log", "set xrange"). A question that names a command as
the code writes it ("how do I ... with git blame?") which the book never once says ("git
blame" nowhere, though "blame" may be) asks about what the book does not cover, however well its
other words retrieve.

A head must open at least `MIN_BLOCKS` of the book's code blocks and `MIN_SHARE` of them, be
written in lower case and not be an English function word ("from", "if"), so that prose books
(no code) and books whose code opens with data have none, and Python's `import` counts only in
a book whose code is mostly imports.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from textbound.text import STOPWORDS
from textbound.text.question import AUXILIARIES

__all__ = ["MIN_BLOCKS", "MIN_SHARE", "WORD_SHARE", "asked_commands", "block_openings",
           "called_name", "code_heads", "following_words", "word_heads"]

MIN_BLOCKS = 5
"""A head opens at least this many code blocks of the book."""
MIN_SHARE = 0.1
"""... and at least this share of them."""
WORD_SHARE = 0.5
"""A head takes subcommands when at least this share of the blocks it opens go on with a word."""
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_-]*")

_FENCE = re.compile(r"^[ \t]{0,3}(?:```|~~~)[^\n]*\n(.*?)^[ \t]{0,3}(?:```|~~~)[ \t]*$",
                    re.M | re.S)
_PROMPT = re.compile(r"^\s*(?:[\w.@~/=-]*[$#%>]\s+|[$#%>]\s*)")
"""A shell or program prompt before a command: "$ ", "alice$ ", "mydb=> ", "gnuplot> "."""
_HEAD = re.compile(r"^[a-z][a-z0-9_.-]*$")
_WORD = re.compile(r"[A-Za-z0-9][\w+-]*(?:\.[\w+-]+)*")


def block_openings(text: str) -> list[tuple[str, str]]:
    """Each fenced code block's first two tokens, as the code writes them ("" for none)."""
    found = []
    for m in _FENCE.finditer(text):
        first = next((ln for ln in m.group(1).splitlines() if ln.strip()), "")
        tokens = _PROMPT.sub("", first, count=1).split()
        if tokens:
            found.append((tokens[0], tokens[1] if len(tokens) > 1 else ""))
    return found


def word_heads(openings: Iterable[tuple[str, str]], heads: Iterable[str]) -> frozenset[str]:
    """The heads whose code blocks mostly go on with a word, as a subcommand does.

    "git log", "set xrange" (`WORD_SHARE` of the blocks a head opens or more), not "time -v
    sleep 4" or "make -j4": only a head that takes subcommands makes "<head> <word>" in a
    question a command the book may never print ("git blame"); "time keeps overwriting my log"
    names no command.
    """
    wanted = set(heads)
    total: Counter[str] = Counter()
    word: Counter[str] = Counter()
    for head, nxt in openings:
        if head in wanted:
            total[head] += 1
            word[head] += bool(_SUBCOMMAND.match(nxt))
    return frozenset(h for h in wanted if total[h] and word[h] >= WORD_SHARE * total[h])


def code_heads(opening_words: Counter[str], blocks: int) -> frozenset[str]:
    """The book's command heads, from the words that open its `blocks` code blocks."""
    return frozenset(
        w for w, n in opening_words.items()
        if _HEAD.match(w) and w not in STOPWORDS and n >= MIN_BLOCKS and n >= MIN_SHARE * blocks)


def following_words(text: str, heads: Iterable[str]) -> dict[str, set[str]]:
    """For each head, the words that follow it in a text (lower case): the commands it names."""
    wanted = set(heads)
    found: dict[str, set[str]] = {}
    tokens = [t.lower() for t in _WORD.findall(text)]
    for a, b in zip(tokens, tokens[1:], strict=False):
        if a in wanted:
            found.setdefault(a, set()).add(b)
    return found


def asked_commands(question: str, heads: frozenset[str]) -> list[tuple[str, str]]:
    """The (head, word) commands a question names as the book's code writes them.

    The head as the code writes it ("git", not "Git", which names the program rather than
    typing it), followed by a lower-case word that is not a function word ("git blame", not
    "git to"); not after an auxiliary, where the head is the subject and the word its verb
    ("does git track permissions?").
    """
    tokens = _WORD.findall(question)
    return [(a, b) for n, (a, b) in enumerate(zip(tokens, tokens[1:], strict=False))
            if a in heads and b == b.lower() and b not in STOPWORDS and b[0].isalpha()
            and (n == 0 or tokens[n - 1].lower() not in AUXILIARIES)]


_CALLED = re.compile(r"[^(]*?([\w.:$]+)\s*\(")


def called_name(code: str) -> str | None:
    """The name a call or a signature names: the word before its parenthesis, if it has one.

    "os.homedir" of "os.homedir()", "asn1_parser2tree" of "int asn1_parser2tree (const char *
    file, ...)".
    """
    found = _CALLED.match(code)
    return found.group(1) if found else None
