"""The name an API reference section is about, when its sentences leave it unsaid.

A reference page heads each entry with the name it documents and then writes as if the heading
were the sentence's subject: under "## `os.homedir()`" the page says "Returns the string path
of the current user's home directory.", and under "## `os.EOL`" "The operating system-specific
end-of-line marker.". Quoted alone, such a sentence answers "how do I get the home directory?"
without the one thing asked for. A section whose own title is a code name (it holds a span in
backquotes, as Markdown marks code) lends that title to the first sentence an answer quotes
from it, unless the sentence prints the name itself; the title is then part of what the
sentence cites (textbound/answer/support.py).
"""

from __future__ import annotations

import re

from textbound.shapes import ChunkDict
from textbound.text.commands import called_name

__all__ = ["MAX_TITLE_WORDS", "code_title", "named"]

MAX_TITLE_WORDS = 6
"""A title of more words than this is prose about code ("Using `git rebase` to ..."), no name,
unless it is code throughout (a function's whole signature, as a Texinfo PDF prints it)."""
_CODE = re.compile(r"`([^`]+)`")


def code_title(chunk: ChunkDict) -> str | None:
    """The chunk's own section title when it names code ("`os.homedir()`"), else None."""
    title = str((chunk.get("metadata") or {}).get("section") or "").split(" > ")[-1].strip()
    if _CODE.fullmatch(title):  # wholly code, however long: "`int f (const char * file)`"
        return title
    if not _CODE.search(title) or len(title.split()) > MAX_TITLE_WORDS:
        return None
    return title


def _name(title: str) -> str:
    """The documented name in a code title: the word before its parenthesis, if any.

    "os.homedir" of "`os.homedir()`", "f" of "`int f (const char * file)`".
    """
    found = _CODE.search(title)
    code = (found.group(1) if found else title).strip()
    return called_name(code) or re.split(r"[\s(\[]", code, maxsplit=1)[0]


def named(chunk: ChunkDict, text: str) -> str:
    """The sentence as an answer quotes it: led by its section's code title when it needs it.

    "`os.homedir()`: Returns the string path of the current user's home directory." A sentence
    that prints the name ("The path.basename() method returns ...") is left as it is.
    """
    title = code_title(chunk)
    if title is None or _name(title) in text:
        return text
    return f"{title}: {text}"
