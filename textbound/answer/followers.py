"""What follows the lead of an extractive answer: a supporting unit, its code, what it announces.

Each rule reads the lead's own chunk: a second unit that supports the lead rather than repeating
it, the code block a procedure's prose leads to, the option the sentence after a procedure's
prose names, the sentence naming what a lead's "It" points back to, the sentence after a block
lead that says what the block shows, and the items a lead announces ("... describes four modes
...").
"""

from __future__ import annotations

import re
from typing import Any

from textbound.answer.candidates import Candidate
from textbound.answer.evidence import glossary_term
from textbound.text import content_words
from textbound.text.counting import announced_count, enumerates
from textbound.text.framing import own_words
from textbound.text.units import LEADING_KINDS, Unit, chunk_units

__all__ = ["BLOCK_REACH", "MAX_ANNOUNCED", "REPEATS", "announced_items", "antecedent",
           "block_after", "entry_head", "explanation", "option_after", "span_rest", "supports"]

REPEATS = 0.8
"""A second unit whose content words are at least this share the lead's says it again."""
SAME_LINES = 2
"""A second unit printing this many of the lead's lines again says it again: the "dangling
commit 7281251d..." lines of `git fsck`, which a manual shows twice."""
LINE_CHARS = 24
"""Only lines this long count: a short one ("name text,") is shared by listings that differ."""
BLOCK_REACH = 3
"""A procedure question's prose lead is followed by a block at most this many units after it."""


def _long_lines(text: str) -> set[str]:
    """The unit's lines long enough to be told apart (`LINE_CHARS` or more), stripped."""
    return {line.strip() for line in text.splitlines() if len(line.strip()) >= LINE_CHARS}


def supports(second: Candidate, lead: Candidate, question: str) -> bool:
    """Whether a second unit supports the lead's answer: next to it, or sharing its facts.

    Not when it says the lead again: the text's own "The law of the excluded middle states
    that ..." after the glossary's "Law of the excluded middle: ... states that ...".
    """
    said = set(content_words(lead.unit.text))
    words = set(content_words(second.unit.text))
    if words and len(words & said) >= REPEATS * len(words):
        return False
    if len(_long_lines(second.unit.text) & _long_lines(lead.unit.text)) >= SAME_LINES:
        return False  # the same printed lines again: a listing the book shows twice
    if second.chunk["chunk_id"] == lead.chunk["chunk_id"]:
        if second.unit.start < lead.unit.end and lead.unit.start < second.unit.end:
            return False  # overlapping units (a list and its own items) say it twice
        if abs(second.order - lead.order) <= 1:
            return True
    return bool(own_words(second.unit.text, question) & own_words(lead.unit.text, question))


def block_after(lead: Candidate) -> Unit | None:
    """Return the block a prose lead leads to: the first code block just after it, if any.

    Only in the lead's own chunk, at most `BLOCK_REACH` units on, and only when the lead holds
    no code of its own.
    """
    if lead.unit.kind in ("block", "code"):
        return None
    after = [u for u in chunk_units(lead.chunk)
             if u.start >= lead.unit.end and u.kind not in ("lead", "tail", "code")]
    for u in after[:BLOCK_REACH]:
        if u.kind == "block":
            return u
    return None


def _next_unit(lead: Candidate, kinds: tuple[str, ...] | None = None) -> Unit | None:
    """The first unit of the lead's chunk after the lead (of these kinds, if given)."""
    return min((u for u in chunk_units(lead.chunk) if u.start >= lead.unit.end
                and (kinds is None or u.kind in kinds)), key=lambda u: u.start, default=None)


_OPTION = r"(?<![\w-])--?[A-Za-z][\w-]*(?:=\S+)?"
"""A command-line option as a book prints it: "-g", "--keep-debuginfo=yes"."""
_NAME = re.compile(_OPTION + r"|\b[A-Za-z]\w*_\w+|\b[A-Za-z][\w.]*\(\)")
"""A name to use as a book prints it: an option, a name joined by underscores
("ffi_prep_closure_loc") or a call ("os.availableParallelism()")."""
_CODE_SPAN = re.compile(r"`+([^`\n]+)`+")


def _names_beyond(unit: Unit, chunk_text: str, question: str) -> bool:
    """Whether a unit names an option, a name or inline code that the question does not.

    Read in the chunk's own text, where inline code keeps its backticks: "... is expanded into
    plain URDF with the command `xacro robot.urdf.xacro > robot.urdf`." names its command.
    """
    raw, asked = chunk_text[unit.start:unit.end], question.lower()
    found = {m.group(0) for m in _NAME.finditer(raw)}
    found |= {m.group(1).strip() for m in _CODE_SPAN.finditer(raw)}
    return any(n.lower() not in asked for n in found if n)


def option_after(lead: Candidate, question: str = "") -> Unit | None:
    """Return the next sentence of a how-to lead's paragraph when it names the option to use.

    "Also, for leak reports involving shared objects, ... the error message will be full of ???
    entries." says what goes wrong; the sentence after it, "If you use the option
    --keep-debuginfo=yes, then Valgrind will keep the debug information ...", what to do. A
    name to use does the same: "os.cpus().length should not be used to calculate the amount of
    parallelism ..." and then "Use os.availableParallelism() for this purpose." Only when the
    lead is prose that names no option, name or inline code beyond the question's own, and the
    sentence names one.
    """
    text = lead.chunk["text"]
    if lead.unit.kind != "prose" or _names_beyond(lead.unit, text, question):
        return None
    nxt = _next_unit(lead)
    if nxt is None or nxt.kind != "prose" or text[lead.unit.end:nxt.start].count("\n") > 1:
        return None
    return nxt if _names_beyond(nxt, text, question) else None


_SPANNED = ("prose", "item", "code", "row")


def span_rest(lead: Candidate, anchor: tuple[tuple[str, int, int], list[Any]] | None
              ) -> list[Unit]:
    """Return the units after the lead that the reader's span runs on into, in order.

    The reader's answer is its whole span: "A robot arm has a limit on how many waypoints one
    trajectory may hold. Depending on the controller, it is between 64 and 4096." is one span
    over two sentences, and the answer quotes both. Only when the lead is the unit holding the
    span's start.
    """
    if anchor is None:
        return []
    (cid, start, end), span = anchor
    if (lead.chunk["chunk_id"], lead.unit.start, lead.unit.end) != (cid, start, end):
        return []
    stop = int(span[2])
    if stop <= lead.unit.end:
        return []
    rest: list[Unit] = []
    for u in sorted(chunk_units(lead.chunk), key=lambda u: u.start):
        if u.kind in _SPANNED and lead.unit.end <= u.start < stop \
                and all(u.start >= r.end for r in rest):
            rest.append(u)
    return rest


_REFERS_BACK = re.compile(r"^(?:it|its|this|these|those|that|they|their|he|his|she|her)\b",
                          re.I)
"""A sentence opening with one of these words points back at what comes just before it."""


_GOES_ON = re.compile(r"^[a-z]+s\b")
"""A sentence opening on a verb in lower case goes on from the code block it follows: "For
every object, you can use git-cat-file(1) to examine details: $ git cat-file -t <objectname>
shows the type of the object"."""


def antecedent(lead: Candidate) -> Unit | None:
    """Return the sentence just before a lead that opens by pointing back ("It", "This", "He").

    The lead is a sentence, or a lead-in with its block ("This is done with the snap command,
    for example: ..."). Only the sentence right before it in the same paragraph, where "it" is
    named, or the code block right before it ("This is useful for fixing typos ..." after
    `git commit --amend`). A lead opening on a verb in lower case ("shows the type of the
    object") goes on from a code block right before it, and from nothing else.
    """
    goes_on = _GOES_ON.match(lead.unit.text) is not None  # "$ git cat-file -t X" + "shows ..."
    if lead.unit.kind not in ("prose", "block") or not (
            goes_on or _REFERS_BACK.match(lead.unit.text)):
        return None
    text = lead.chunk["text"]
    before = [u for u in chunk_units(lead.chunk)
              if u.kind in ("prose", "item", "block", "code", "tail") and u.end <= lead.unit.start]
    if not before:
        return None
    last = max(before, key=lambda u: (u.end, u.end - u.start))
    if last.kind == "tail":  # the clause after a code block: "this" points at the whole block
        last = max((u for u in before if u.kind == "block" and u.end == last.end),
                   key=lambda u: u.end - u.start, default=last)
    gap = text[last.end:lead.unit.start]
    if last.kind in ("block", "code"):  # a block ends its paragraph: "This is useful ..." follows
        return last if not gap.strip(" \t\n`~") else None
    if goes_on:
        return None
    # the item a list entry's second sentence goes on from: "- There is no row for X. This is
    # because ..."
    return last if last.kind in ("prose", "item") and not gap.strip() and "\n\n" not in gap \
        else None


_ITEM_LINE = re.compile(r"[ \t]*(?:[-*+]|\d+[.)])[ \t]")
"""A line that opens a list item."""
_CODE_ENTRY = re.compile(r"[ \t]*[-*+][ \t]+`[^`\n]{1,80}`[ \t]*:[ \t]")
"""A list item that defines a code term: "* `'rs+'`: Open file for reading and writing ..."."""


def entry_head(lead: Candidate) -> Unit | None:
    """Return the head of the definition entry a lead goes on describing, when it is one.

    "- **-f --force**: Force overwrite of output files. Normally, bzip2 will not overwrite
    existing output files. Also forces bzip2 to break hard links ...": a later sentence of the
    entry ("Also forces ...") is about the term it describes, which only the entry's first unit
    names ("-f --force: Force overwrite of output files."); it comes first.
    """
    if lead.unit.kind != "prose":
        return None
    text = lead.chunk["text"]
    own = line = text.rfind("\n", 0, lead.unit.start) + 1
    while 0 < line and text[line:line + 1] in (" ", "\t", "\n"):
        # an indented line goes on with the list item above it (a wrapped line, or a paragraph
        # of its own under the item: "This is primarily useful for ..." under "'rs+': Open
        # file for reading and writing in synchronous mode."): the entry is that item's
        line = text.rfind("\n", 0, line - 1) + 1
    if line < own and not _ITEM_LINE.match(text, line):
        return None  # the indented lines go on with a paragraph, not a list item
    before = text[line:lead.unit.start]
    if glossary_term(before) is None and not _CODE_ENTRY.match(before):
        return None  # the lead's line is no definition entry, or the lead opens it
    return next((u for u in chunk_units(lead.chunk)
                 if u.kind == "item" and line <= u.start < lead.unit.start), None)


def explanation(lead: Candidate) -> Unit | None:
    """Return the sentence right after a block lead that says what the block shows, if any.

    A book shows a command or its output, then says what it means: "For some users the greeting
    ends on another prompt: vault#" and then "That would mean you opened the shell as the
    administrator ...". The sentence must
    follow the block at once in the same chunk and open by pointing back at it ("That", "This",
    "It"); a lead-in of its own ("This can happen if you:") is not released without its block,
    so it does not count.
    """
    if lead.unit.kind not in ("block", "code"):
        return None
    note = _next_unit(lead, ("prose", "item", "tail"))
    if note is None:
        return None
    gap = lead.chunk["text"][lead.unit.end:note.start]
    if gap.strip(" \t\n`~") or not _REFERS_BACK.match(note.text) \
            or note.text.rstrip().endswith(":"):
        return None
    return note


MAX_ANNOUNCED = 6
"""The most items an announcing lead ("... describes four modes ...") is followed by."""


def announced_items(lead: Candidate, question: str) -> tuple[Unit, list[Unit]] | None:
    """Return the lead and the units that enumerate what it announces, when it announces some.

    "ISO/TS 15066 describes four modes of collaborative operation." answers "Which modes ...?"
    only with the four that follow it: the list it leads in, the next unit that names all four,
    or the next four units. None when the lead announces nothing or names the items itself.
    """
    ann = announced_count(lead.unit.text, question)
    if ann is None or ann[0] > MAX_ANNOUNCED or enumerates(lead.unit, ann):
        return None
    units = [u for u in chunk_units(lead.chunk) if u.kind in LEADING_KINDS]
    led = [u for u in units if u.kind == "list" and u.start <= lead.unit.start < u.end]
    if led:
        return led[0], []
    after = [u for u in units if u.start >= lead.unit.end and u.kind != "list"]
    named = next((u for u in after[:2] if enumerates(u, ann)), None)
    if named is not None:
        return lead.unit, [named]
    if len(after) >= ann[0]:
        return lead.unit, after[:ann[0]]
    return None
