"""Markdown blocks written by the readers of formats that are not Markdown.

Word, OpenDocument and manual pages set as text write the same things: running text kept from
reading as markup, tables with their header row, runs of code as one fenced block.
"""

from __future__ import annotations

from textbound.documents.ingest.documents import SkipFile

__all__ = ["Blocks", "escaped", "table"]


def escaped(text: str) -> str:
    """Running text, its opening markup character escaped so it stays text.

    A heading's "#", a fence, a table row's "|".
    """
    return "\\" + text if text.startswith(("#", "```", "~~~", "|")) else text


def table(rows: list[list[str]]) -> str:
    """A Markdown table whose first row is the header cells ("" when no row holds text)."""
    rows = [[c.replace("|", "\\|") for c in r] for r in rows if any(r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    return "\n".join([lines[0], "|---" * width + "|", *lines[1:]])


class Blocks:
    """A document's blocks in order; consecutive code lines are one fenced block."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self._code: list[str] = []

    def code(self, line: str) -> None:
        """A line of code (or program output), kept as it is."""
        self._code.append(line.rstrip())

    def add(self, block: str) -> None:
        """A block after the code before it, if any; an empty block is nothing."""
        if self._code:
            self.blocks.append("```\n" + "\n".join(self._code) + "\n```")
            self._code.clear()
        if block:
            self.blocks.append(block)

    def text(self, what: str) -> str:
        """The blocks as one Markdown text; SkipFile saying the `what` has no text when empty."""
        self.add("")
        if not self.blocks:
            raise SkipFile(f"{what} has no text")
        return "\n\n".join(self.blocks) + "\n"
