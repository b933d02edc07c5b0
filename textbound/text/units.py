"""Answer units: the pieces of a chunk an extractive answer may quote, following the book's shape.

A real book is not a run of declarative sentences. It has lists under a lead-in sentence, tables
with a header row, block quotes, figure and listing captions and code. Cutting all of that into
"sentences" loses what a list or a row means and lets Markdown markers into answers. A unit is
a span of the chunk (for citation and highlighting) with the text to show and its kind:

* `prose`: a sentence of at least four words (block-quote markers and emphasis removed);
* `item`: one list item, without its bullet or number;
* `list`: a lead-in sentence and the list that follows it, shown as "lead-in: a; b; c." so
  "What are the three ...?" is answered with the whole enumeration;
* `row`: a table row with its header, shown as "Header: cell; Header: cell";
* `caption`: "Figure 1.2: ...", "Listing 6-9: ...", "Table 5.1: ..." lines;
* `objective`: a list item that sets a task ("- Describe the differences between ..."), as
  learning objectives and review questions do: it never answers;
* `code`: a fenced block or console output;
* `block`: a code block with the sentence that introduces it ("..., use:") and the clause
  that goes on after it ("which plots ..."), the code verbatim; the sentence alone is a
  `lead`, the clause alone a `tail`, and neither answers by itself. Any sentence that ends in a
  colon is a `lead`: its list may be too long to join or its block in the next chunk.

Captions and code are kept as evidence but never lead an answer unless the question asks for
code, a command or output (`question.wants_code`); nor does a unit with no content words of its own
beyond the question's and a list of framing words ("Let's look at each of these in turn.").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from textbound.text import sentence_spans

__all__ = ["Unit", "answer_units", "chunk_units", "answer_spans", "unit_holding",
           "is_caption", "opens_block", "LEADING_KINDS", "TABLE_RULE", "display"]

LEADING_KINDS = frozenset({"prose", "item", "list", "row", "block"})
"""Kinds that may lead an answer to a question that does not ask for code or output."""

MAX_LIST_ITEMS = 12
MAX_LIST_CHARS = 700
MIN_WORDS = 4
CAPTION_CHARS = 80
"""The longest line read as the title of the table or code after it."""

FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
"""The line that opens or closes a fenced code block."""
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)]|[a-zA-Z][.)])[ \t]+")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_CAPTION = re.compile(
    r"^\W{0,3}(?:Figure|Fig\.|Listing|Table|Image|Exhibit|Chart|Diagram|Photo)\s+"
    r"[\dA-Z]+(?:[.\-–][\dA-Za-z]+)*\s*[:.]", re.I)
_TASK = re.compile(
    r"^(?:describe|identify|explain|compare|contrast|distinguish|evaluate|define|outline|discuss|"
    r"analy[sz]e|summari[sz]e|recogni[sz]e|articulate|assess|classify|demonstrate|examine|"
    r"illustrate|interpret|justify|list|name|state|recall|apply|consider|reflect)\b", re.I)
_CONSOLE = re.compile(r"^\s*(?:\$|>>>|PS>|C:\\|#\s*$)")
# emphasis markers only at word edges: ROS_TYPE and 2*3*4 keep their characters
_EMPHASIS = re.compile(r"(?<!\w)(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_CODE_SPAN = re.compile(r"`+([^`]*)`+")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
"""The rule line under a Markdown table's header row ("|---|:--:|")."""


@dataclass(frozen=True)
class Unit:
    """A quotable piece of a chunk: its span, the text to show, and its kind."""

    start: int
    end: int
    text: str
    kind: str


def display(raw: str) -> str:
    """Return text as an answer shows it: no list, quote or emphasis markers, one line."""
    text = _QUOTE.sub("", raw)
    lines = [_ITEM.sub("", line, count=1) for line in text.splitlines()]
    text = " ".join(line.strip() for line in lines if line.strip())
    text = _LINK.sub(r"\1", text)
    text = _CODE_SPAN.sub(r"\1", text)
    for _ in range(2):  # nested emphasis: ***x*** or **_x_**
        text = _EMPHASIS.sub(r"\2", text)
    return " ".join(text.split())


def answer_spans(text: str) -> list[tuple[int, int]]:
    """Return the spans of a chunk's answer units (ingestion embeds exactly these)."""
    return [(u.start, u.end) for u in answer_units(text)]


def unit_holding(text: str, start: int, end: int) -> Unit | None:
    """Return the smallest leading unit of text that holds the span [start, end), if any."""
    holding = [u for u in answer_units(text)
               if u.kind in LEADING_KINDS and u.start <= start and end <= u.end]
    return min(holding, key=lambda u: u.end - u.start) if holding else None


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [display(c.replace("\\|", "|")) for c in re.split(r"(?<!\\)\|", body)]


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in text.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def chunk_units(chunk: Mapping[str, Any]) -> tuple[Unit, ...]:
    """Return a retrieved chunk's answer units, read as the table or code it opens inside."""
    meta = chunk.get("metadata") or {}
    return answer_units(chunk["text"], meta.get("table_header"), bool(meta.get("in_code")))


@lru_cache(maxsize=16384)
def answer_units(text: str, table_header: str | None = None,
                 in_code: bool = False) -> tuple[Unit, ...]:
    """Return the answer units of a chunk's text, in reading order (cached: chunks recur).

    `table_header`: the header row of the table a chunk opens inside (a long table cut row by
    row; chunk metadata), which names the cells of the rows before any header of its own.
    `in_code`: the chunk opens inside a code block cut over chunks; its lines up to the closing
    fence are code.
    """
    units: list[Unit] = []
    lines = _line_spans(text)
    prose_ranges: list[tuple[int, int]] = []  # (start, end) of text handled as prose
    i = 0
    if in_code:  # the lines before the closing fence are the rest of a code block
        i = next((n for n, (s, e) in enumerate(lines) if FENCE.match(text[s:e])), len(lines))
        body = text[:lines[i - 1][1]] if i else ""
        if body.strip():
            units.append(Unit(0, len(body), body.strip("\n"), "code"))
        i += 1  # past the closing fence
    header = _cells(table_header.split("\n")[0]) if table_header else None
    while i < len(lines):
        s, e = lines[i]
        line = text[s:e]
        if FENCE.match(line):  # a fenced block: one code unit, fences excluded
            j = i + 1
            while j < len(lines) and not FENCE.match(text[lines[j][0]:lines[j][1]]):
                j += 1
            body_s = lines[i + 1][0] if i + 1 < len(lines) else e
            body_e = lines[j - 1][1] if j - 1 > i else body_s
            if text[body_s:body_e].strip():
                units.append(Unit(body_s, body_e, text[body_s:body_e].strip("\n"), "code"))
            i = j + 1
            continue
        if line.lstrip().startswith("|"):
            cells = _cells(line)
            nxt = text[lines[i + 1][0]:lines[i + 1][1]] if i + 1 < len(lines) else ""
            if header is None and TABLE_RULE.match(nxt):
                header = cells
                i += 2
                continue
            if not TABLE_RULE.match(line):
                units.append(_row(s, e, cells, header))
            i += 1
            continue
        header = None
        start_block = i
        while i < len(lines):  # a run of non-table, non-fence lines
            ls, le = lines[i]
            piece = text[ls:le]
            if FENCE.match(piece) or piece.lstrip().startswith("|"):
                break
            i += 1
        prose_ranges.append((lines[start_block][0], lines[i - 1][1]))
    for r_start, r_end in prose_ranges:
        units.extend(_prose_units(text, r_start, r_end))
    units.sort(key=lambda u: (u.start, -u.end))
    return tuple(_bind_lead_ins(text, units))


_LEAD_GAP = re.compile(r"^\s*(?:```|~~~)[^\n]*\n$")
_TAIL_GAP = re.compile(r"^\n?[ \t]{0,3}(?:```|~~~)[ \t]*\n\s*$")


def _next_unit(units: list[Unit], pos: int) -> Unit | None:
    return min((v for v in units if v.start >= pos), key=lambda v: (v.start, -v.end),
               default=None)


def _bind_lead_ins(text: str, units: list[Unit]) -> list[Unit]:
    """Bind a code block to the sentence that introduces it and the clause that goes on after it.

    "For example, to delete the objects of every target, use:" says nothing without the
    `make clean-all` after it, and "which prints each line whose third field ..." says
    nothing without the `awk` command before it. So the block, its lead-in and its continuation (a
    sentence right after it that opens in lower case) make one `block` unit: each part on its
    own line, the code verbatim. The lead-in alone becomes a `lead` and the continuation a
    `tail`; neither answers by itself. A title line right before a table is its `caption`; any
    sentence ending in a colon is a `lead` (a table's rows, a list or a block carry its meaning).
    """
    out = list(units)
    index = {id(u): n for n, u in enumerate(units)}
    for code in (u for u in units if u.kind == "code"):
        lead = max((v for v in units if v.kind in ("prose", "item") and v.end <= code.start),
                   key=lambda v: v.end, default=None)
        if lead is not None and not _LEAD_GAP.match(
                text[lead.end:code.start].lstrip(" \t").lstrip("\n") or "x"):
            lead = None
        tail = _next_unit(units, code.end)
        if tail is None or tail.kind != "prose" or not tail.text[:1].islower() \
                or not _TAIL_GAP.match(text[code.end:tail.start]):
            tail = None
        if lead is None and tail is None:
            continue
        parts = [p.text for p in (lead, code, tail) if p is not None]
        start = lead.start if lead is not None else code.start
        end = tail.end if tail is not None else code.end
        out.append(Unit(start, end, "\n".join(parts), "block"))
        if lead is not None:
            out[index[id(lead)]] = Unit(lead.start, lead.end, lead.text, "lead")
        if tail is not None:
            out[index[id(tail)]] = Unit(tail.start, tail.end, tail.text, "tail")
    for n, u in enumerate(units):  # "... the following table:" [a caption] then the table
        nxt = _next_unit(units, u.end)
        if nxt is not None and nxt.kind == "prose" and is_caption(text[nxt.start:nxt.end]):
            nxt = _next_unit(units, nxt.end)
        if u.kind != "prose" or nxt is None or nxt.kind != "row":
            continue
        gap = [g.strip() for g in text[u.end:nxt.start].splitlines() if g.strip()]
        head = gap[1:] if gap and not gap[0].startswith("|") and is_caption(gap[0]) else gap
        if not all(g.startswith("|") for g in head):  # more than a header row between
            continue
        if not u.text.endswith(":") and head == gap and is_caption(text[u.start:u.end]):
            out[n] = Unit(u.start, u.end, u.text, "caption")  # the table's own title
    out = [Unit(u.start, u.end, u.text, "lead") if u.kind == "prose" and u.text.endswith(":")
           else u for u in out]  # it introduces what follows, here or in the next chunk
    out.sort(key=lambda v: (v.start, -v.end))
    return out


def is_caption(paragraph: str) -> bool:
    """Whether a paragraph can be a block's title: one short line that ends no sentence or clause.

    "Graph Border Encoding" or "Tic-mark label numerical format specifiers" before a table; a
    table row or a code fence is none.
    """
    line = paragraph.strip()
    return 0 < len(line) <= CAPTION_CHARS and "\n" not in line and line[-1] not in ".!?:;," \
        and not opens_block(line)


def opens_block(paragraph: str) -> bool:
    """Whether a paragraph opens a table row or a code fence."""
    first = paragraph.lstrip()
    return first.startswith("|") or bool(FENCE.match(first))


def _row(s: int, e: int, cells: list[str], header: list[str] | None) -> Unit:
    named = header is not None and any(header) and len(header) == len(cells)
    parts = []
    for n, cell in enumerate(cells):
        if not cell:
            continue
        head = header[n] if named and header is not None else ""
        parts.append(f"{head}: {cell}" if head else cell)
    body = "; ".join(parts)
    return Unit(s, e, body + ("" if body.endswith((".", "!", "?")) else "."), "row")


def _kind_of(raw: str) -> str:
    first = raw.lstrip()
    if _CAPTION.match(display(first)):
        return "caption"
    if _CONSOLE.match(first):
        return "code"
    if _ITEM.match(first):
        # "- Describe the differences between X and Y.": a learning objective or review
        # question sets a task, it does not state anything
        return "objective" if _TASK.match(display(first)) else "item"
    return "prose"


_QUOTE_BLANK = re.compile(r"^[ \t]*>[ \t>]*$")
_NUMBER_ONLY = re.compile(r"^\s*(?:\d{1,3}|[a-zA-Z])[.)]$")


def _spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans that respect quote paragraphs and keep "1. Text." as one item."""
    ranges, cut = [], start
    for ls, le in _line_spans(text[start:end]):
        if _QUOTE_BLANK.match(text[start + ls:start + le]):
            ranges.append((cut, start + ls))
            cut = start + le
    ranges.append((cut, end))
    spans: list[tuple[int, int]] = []
    for a, b in ranges:
        spans.extend(sentence_spans(text, a, b))
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and _NUMBER_ONLY.match(text[merged[-1][0]:merged[-1][1]]) \
                and "\n" not in text[merged[-1][1]:s]:
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def _prose_units(text: str, start: int, end: int) -> list[Unit]:
    units: list[Unit] = []
    spans = _spans(text, start, end)
    for s, e in spans:
        raw = text[s:e]
        if raw.lstrip().startswith("#"):
            continue
        shown = display(raw)
        kind = _kind_of(raw)
        if kind in ("prose", "item") and (len(shown) < 15 or len(shown.split()) < MIN_WORDS):
            continue
        units.append(Unit(s, e, shown, kind))
    units.extend(_lists(text, spans))
    return units


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _lists(text: str, spans: list[tuple[int, int]]) -> list[Unit]:
    """Join a lead-in sentence and the list items after it into one `list` unit."""
    out: list[Unit] = []
    n = 0
    while n < len(spans):
        s, e = spans[n]
        lead = text[s:e]
        is_item = bool(_ITEM.match(text[_line_start(text, s):e]))
        if is_item or lead.lstrip().startswith("#") or not lead.rstrip().endswith(":"):
            n += 1
            continue
        items: list[tuple[int, int]] = []
        m = n + 1
        indent: int | None = None
        while m < len(spans):
            ls = _line_start(text, spans[m][0])
            line = text[ls:spans[m][1]]
            if not _ITEM.match(line):
                # a later sentence of the same item (same line, after the first) belongs to it
                if items and ls == _line_start(text, items[-1][0]):
                    items[-1] = (items[-1][0], spans[m][1])
                    m += 1
                    continue
                break
            depth = len(line) - len(line.lstrip())
            indent = depth if indent is None else indent
            if depth == indent:
                items.append(spans[m])
            elif items:  # a nested item stays part of its parent
                items[-1] = (items[-1][0], spans[m][1])
            m += 1
        if 2 <= len(items) <= MAX_LIST_ITEMS:
            shown_items = [display(text[a:b]).rstrip(".;,") for a, b in items]
            if sum(len(x) for x in shown_items) > MAX_LIST_CHARS:
                shown_items = [x.split(". ")[0] for x in shown_items]
            body = display(lead).rstrip(":").rstrip() + ": " + "; ".join(shown_items) + "."
            tasks = sum(bool(_TASK.match(x)) for x in shown_items)
            out.append(Unit(s, items[-1][1], body, "objective" if 2 * tasks > len(items)
                            else "list"))
        n = m if items else n + 1
    return out
