"""Document names that cannot be mistaken for each other: NFC, a byte limit, look-alike keys.

A name a browser sends may be NFC or NFD; the file system limits its length in bytes, not
characters; and `zorblax.md`, `ZORBLAX.md` and `zоrblax.md` (a Cyrillic о) look like one
document in a list. `look_alike_key` folds case and maps every character to a representative
of its confusable class, taken from Unicode's confusables table as the MIT-licensed
`confusable-homoglyphs` package ships it, in the spirit of UTS #39's skeleton: two names with the
same key look the same.
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["MAX_NAME_BYTES", "look_alike", "look_alike_key", "nfc"]

MAX_NAME_BYTES = 200
"""A name's UTF-8 length: a file system allows 255 bytes, and a temporary or previous copy of
the file may add a prefix of up to 55 (`.previous-<16 hex>-` takes 27)."""


def nfc(name: str) -> str:
    """Return the name in Unicode's composed form (NFC), the one it is stored under."""
    return unicodedata.normalize("NFC", name)


@functools.cache
def _classes() -> dict[str, str]:
    """Map each confusable character to its class's representative (ASCII where there is one)."""
    from confusable_homoglyphs.confusables import confusables_data

    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.get(c, c) != c:
            parent[c] = parent.get(parent[c], parent[c])
            c = parent[c]
        return c

    def rank(c: str) -> tuple[bool, int]:
        return (not c.isascii(), ord(c))

    for char, alikes in confusables_data.items():
        for alike in alikes:
            other = str(alike.get("c", "")).strip("\u200e\u200f")
            if len(char) != 1 or len(other) != 1:
                continue  # a sequence (rn ~ m) is not a one-character class
            a, b = find(char), find(other)
            if a != b:
                low, high = sorted((a, b), key=rank)
                parent[high] = low
    return {c: find(c) for c in parent}


def _skeleton(text: str) -> str:
    classes = _classes()
    return unicodedata.normalize(
        "NFC", "".join(classes.get(c, c) for c in unicodedata.normalize("NFD", text)))


def look_alike_key(name: str) -> tuple[str, str]:
    """Return keys that two names share when they differ only in case or look-alike letters.

    Two, since case and shape do not commute: `ZORBLAX` is `zorblax` once case is folded
    first (an upper-case O looks like a zero, a lower-case one does not), and `zorbIax`
    (capital i) is `zorblax` once shapes are mapped first. Names clash when either key is equal.
    """
    return _skeleton(name.casefold()), _skeleton(name).casefold()


def look_alike(a: str, b: str) -> bool:
    """Whether two names look the same (case or confusable letters)."""
    ka, kb = look_alike_key(a), look_alike_key(b)
    return ka[0] == kb[0] or ka[1] == kb[1]
