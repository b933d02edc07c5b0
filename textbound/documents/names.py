"""Document names that cannot be mistaken for each other: NFC, a byte limit, look-alike keys.

A name a browser sends may be NFC or NFD; the file system limits its length in bytes, not
characters; and `zorblax.md`, `ZORBLAX.md` and `zоrblax.md` (a Cyrillic о) look like one
document in a list. `look_alike_key` folds case and maps every character to a representative
of its confusable class, taken from Unicode's confusables table as the MIT-licensed
`confusable-homoglyphs` package ships it, in the spirit of UTS #39's skeleton: two names with the
same key look the same.

`check_name` and `check_look_alike` are the rules a document's file name must pass before it is
kept or ingested: `textbound ingest` and the server's uploads both call them, and both report an
`UploadNameError`, whose `kind` says which rule the name broke.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from textbound.errors import TextboundError

__all__ = ["MAX_NAME_BYTES", "UploadNameError", "check_look_alike", "check_name", "look_alike",
           "look_alike_key", "nfc"]

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


class UploadNameError(TextboundError):
    """A document's file name breaks a rule; `kind` names it.

    "name": not a plain file name; "type": a file type ingestion does not read; "look_alike":
    it reads the same as another document's name.
    """

    def __init__(self, message: str, kind: Literal["name", "type", "look_alike"]) -> None:
        super().__init__(message)
        self.kind = kind


def check_name(name: str) -> str:
    """Return the name in NFC, or raise UploadNameError: not a plain file name, or its type.

    The limit is in UTF-8 bytes, as the file system counts (MAX_NAME_BYTES, with room for any
    prefix a temporary copy adds): 200 ASCII characters, 100 accented or 66 CJK ones.
    """
    from textbound.documents.ingest import SUPPORTED_SUFFIXES

    name = nfc(name)
    size = len(name.encode("utf-8", "surrogatepass"))
    if (not name or size > MAX_NAME_BYTES or name.startswith(".") or name != name.strip()
            or any(c in name for c in "/\\\x00") or not name.isprintable()):
        shown = name if size <= MAX_NAME_BYTES else name[:60] + "..."
        raise UploadNameError(
            f"{shown!r} is not a plain file name: give the file's own name, e.g. my-book.pdf "
            f"(no folders, not starting with a dot, at most {MAX_NAME_BYTES} bytes in UTF-8: "
            f"{MAX_NAME_BYTES} plain letters, fewer accented or CJK ones; this one has {size})",
            "name")
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        kind = suffix or "files without a suffix"
        raise UploadNameError(f"{name!r}: textbound cannot ingest {kind}; it reads "
                              + ", ".join(sorted(SUPPORTED_SUFFIXES)), "type")
    return name


def check_look_alike(name: str, existing: Iterable[str]) -> None:
    """Raise UploadNameError when `name` is a case or look-alike variant of an existing name."""
    for other in existing:
        if other != name and look_alike(name, other):
            raise UploadNameError(
                f"{name!r} looks the same as the existing document {other!r} (it differs only "
                f"in letter case or in look-alike letters): give it {other!r}'s name to replace "
                "that document, or a name that reads differently", "look_alike")
