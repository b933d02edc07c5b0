"""The block structure chunking follows, read by markdown-it-py (CommonMark), not by hand.

Only two kinds of block matter: ATX headings (`#` to `######`) outside any container, which cut
a document into sections, and fenced code blocks (in a list item too), inside which a blank line
does not end a passage and a `#` line is code, not a heading. Setext headings (a line underlined
with `===` or `---`) are left as text: PDF and plain-text conversions underline things that are
not headings.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt

_MARKDOWN = MarkdownIt("commonmark").disable("inline")
"""Block rules only: a heading's text is its source, without the closing `#`s."""


@dataclass
class Heading:
    """An ATX heading: its level, the offsets of its line (end: before the newline), its title."""

    level: int
    start: int
    end: int
    title: str


@dataclass
class Outline:
    """The headings and fenced code blocks of a text, as character offsets into it."""

    headings: list[Heading] = field(default_factory=list)
    fences: list[tuple[int, int]] = field(default_factory=list)
    """(start of the opening line, end of the closing line), in order and disjoint."""

    def in_fence(self, pos: int) -> bool:
        """Whether the offset lies inside a fenced code block (its fence lines included)."""
        i = bisect.bisect_right(self.fences, pos, key=lambda fence: fence[0])
        return i > 0 and pos <= self.fences[i - 1][1]


def outline(text: str) -> Outline:
    """Return the top-level ATX headings and all fenced code blocks of Markdown text."""
    out = Outline()
    if "#" not in text and "```" not in text and "~~~" not in text:
        return out  # nothing to find: plain text skips the parse
    starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def line_end(line: int) -> int:
        return starts[line + 1] - 1 if line + 1 < len(starts) else len(text)

    # markdown-it reads a lone "\r" as a line break; a space keeps its lines the text's lines
    tokens = _MARKDOWN.parse(text.replace("\r", " "))
    for i, token in enumerate(tokens):
        if token.map is None:
            continue
        first, last = token.map[0], token.map[1] - 1
        if token.type == "fence":
            out.fences.append((starts[first], line_end(last)))
        elif token.type == "heading_open" and token.level == 0 and token.markup[:1] == "#":
            title = tokens[i + 1].content.strip()
            if title:  # a bare "#" line is text, as it always was
                out.headings.append(Heading(len(token.markup), starts[first], line_end(first),
                                            title))
    return out


def first_title(text: str) -> str | None:
    """Return the title of the first level-1 heading of Markdown text, if it has one."""
    return next((h.title for h in outline(text).headings if h.level == 1), None)
