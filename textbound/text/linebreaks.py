"""Lines printed with a line-end hyphen, joined back into the words or compounds they were.

A printed book breaks "accord-" / "ing" at a line end, and also prints "32-" / "bit" and
"upper-" / "case" there. Which it was is read from the book's own vocabulary: the words it
prints whole somewhere (the two halves of a break are not counted). A manual also breaks a long
name after its underscore ("ASN1_" / "SYNTAX_ERROR"), which is joined whole. The PDF reader
(textbound/documents/pdf) and the reader of manual pages set as text (ingest/manpage.py) mend
their lines the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["joined_lines", "line_break", "vocabulary"]

_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def vocabulary(lines: Iterable[str]) -> Counter[str]:
    """Count the words the document prints whole: not the two halves of a line-end break."""
    words: Counter[str] = Counter()
    broken = False
    for text in lines:
        tokens = _WORD.findall(text)
        if broken and tokens and text.startswith(tokens[0]):
            tokens = tokens[1:]
        broken = bool(re.search(r"[^\W\d_]-$", text))
        if broken and tokens:
            tokens = tokens[:-1]
        words.update(t.lower() for t in tokens)
    return words


def _keeps_hyphen(head: str, tail: str, words: Counter[str]) -> bool:
    """Whether a line ending in a hyphen keeps it before the next line: "32-bit", "upper-case"."""
    left = head.rsplit(" ", 1)[-1][:-1]
    right = re.match(r"[^\s.,;:!?)\]\"'\u201d\u2019]*", tail)
    right_word = right.group(0) if right else ""
    a = re.search(r"[^\W\d_]+$", left)
    b = re.match(r"[^\W\d_]+", right_word)
    if not a or not b or a.end() != len(left) or "-" in left or not b.group(0).islower():
        return True
    joined, compound = f"{left}{right_word}".lower(), f"{left}-{right_word}".lower()
    if words[joined]:
        return False
    # a compound of two words the book uses is likelier than a split into two words
    return words[compound] > 0 or (words[left.lower()] > 0 and words[b.group(0)] > 0)


def line_break(head: str, tail: str, words: Counter[str]) -> tuple[bool, str]:
    """How line `tail` follows `head`: whether head's line-end hyphen goes, and the gap.

    "accord-" + "ing" is "according", "32-" + "bit" is "32-bit", other lines join with a space.
    Texinfo breaks a long name after an underscore ("ASN1_" / "SYNTAX_ERROR", "sha3_256_" /
    "digest"): no word ends in one, so the name is joined whole.
    """
    if re.search(r"\w_$", head) and re.match(r"\w", tail):
        return False, ""
    if re.search(r"[^\W\d_]-$", head):
        return not _keeps_hyphen(head, tail, words), ""
    return False, "" if re.search(r"\d-$", head) and tail[:1].isalnum() else " "


def joined_lines(text: str, words: Counter[str]) -> str:
    """Lines (apart by newlines) as one line, mended as a paragraph's are (a table cell's)."""
    lines = text.split("\n")
    out = lines[0]
    for prev, line in zip(lines, lines[1:], strict=False):
        cut, gap = line_break(prev, line, words)
        out = (out[:-1] if cut else out) + gap + line
    return out
