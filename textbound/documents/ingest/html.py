"""HTML as rendered: a page turned into Markdown blocks that keep the page's own structure.

What a reader of the page sees, and in the shape they see it:

* headings become ATX headings (`## Title`), so they make the heading path;
* `<pre>` (and a literal layout: `class="literallayout"`, `white-space: pre`) becomes a fenced
  block, line for line: a placeholder (`<em>file</em>`, `<var>`) stays on its line, nothing is
  stripped or padded;
* a data table becomes a Markdown table whose first row holds the header cells (`<th>`), so a
  row is read with its header; a layout table (one that holds blocks of its own) is read as the
  blocks it holds;
* a question-and-answer set (DocBook's FAQ table: rows of class `question` and `answer`) is
  read as the blocks it holds, never as a table: each question heads its answer as a section
  title does, one level below the heading above it ("4.3. Programs run OK on Valgrind, but at
  exit ..." is what its answer is about, and no answer itself);
* a definition list (`<dl>`) becomes `- **term**: description` entries, the form a book's
  glossary takes in Markdown, so "What is X?" can read the entry for X; so does a labelled
  list set as a table (AsciiDoc's horizontal lists: rows of two data cells, a short term
  beside its description);
* list items become `- item` (or `1. item`), each with its first paragraph; a code block or a
  second paragraph inside an item follows it as its own block;
* inline elements (`<code>`, `<a>`, `<em>`) keep their place in the sentence: no spaces are
  added around them;
* text placed straight in a `<div>` or `<section>` (no `<p>` around it) is kept;
* navigation is not text: `<nav>`, previous/next headers and footers, a page's own table of
  contents (`class="toc"`, `id="toc"`, `role="navigation"`), a page's footer
  (`role="contentinfo"`) and tables summarised as navigation are dropped, as are comments,
  scripts, styles and hidden elements; so are navigation bars, contents lists that carry no
  such name and the permalink marks after headings (`htmlnav`);
* a manual page set as text in `<pre>` (as `man` printed it: postfix's, ncurses') is read as
  the headings, paragraphs, definition entries and examples its indentation sets
  (`manpage`), not as one block of code;
* a page that only sends the browser on (`<meta http-equiv="refresh" content="0; url=...">`:
  Texinfo writes one for every node name that moved) is skipped, saying so.
"""

from __future__ import annotations

import re
import time
from typing import Any

from textbound.documents.ingest.documents import SkipFile
from textbound.documents.ingest.htmlnav import (
    code_heading,
    navigation_bars,
    own_contents,
    permalinks,
    redirect_target,
)
from textbound.documents.ingest.manpage import is_manual_page, layout, manual_blocks

TOO_SLOW = "took too long to read (TEXTBOUND_INGEST_TIME_LIMIT_S)"

_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)
_NAV_CLASS = re.compile(r"^(?:nav|navbar|navheader|navfooter|navigation|menu|toc\d?|breadcrumbs?|"
                        r"list-of-(?:tables|figures|examples)|skip-?link|pagination)$", re.I)
_NAV_SUMMARY = re.compile(r"\bnavigation\b", re.I)
_QANDA = {"question", "answer"}
"""The row classes of DocBook's question-and-answer sets (an FAQ's table)."""
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_DROP = ("script", "style", "nav", "footer", "noscript", "template", "head")
# elements that start a new block; everything else is inline and flows into the sentence
_BLOCK = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "form", "header", "hr",
    "html", "li", "main", "ol", "p", "pre", "section", "summary", "table", "tbody", "td",
    "tfoot", "th", "thead", "tr", "ul", *_HEADINGS})
_CELLS = ("td", "th")
_TERM_CHARS = 60
"""The longest term of a labelled list set as a two-column table."""


def _holds_blocks(cell: Any) -> bool:
    """Whether a table cell holds blocks of its own (code, a list, a table, two paragraphs).

    One paragraph is only a wrapper: `<td><p>Passing ... now throws.</p></td>` is a data cell.
    """
    return bool(cell.find(["pre", "table", "ul", "ol", "dl"])) or len(cell.find_all("p")) > 1


def _hidden(tag: Any) -> bool:
    """Whether an element is not shown: `hidden`, `aria-hidden="true"` or a hiding style."""
    attrs = getattr(tag, "attrs", None) or {}
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).strip().lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(str(attrs.get("style", ""))))


def _navigation(tag: Any) -> bool:
    """Whether an element is navigation (previous/next links, a table of contents)."""
    attrs = getattr(tag, "attrs", None) or {}
    if str(attrs.get("role", "")).lower() in ("navigation", "contentinfo"):
        return True  # contentinfo: a page's footer ("© Copyright ... Created using Sphinx")
    classes = attrs.get("class") or []
    if isinstance(classes, str):
        classes = classes.split()
    if any(_NAV_CLASS.match(c) for c in classes) or str(attrs.get("id", "")).lower() == "toc":
        return True
    return tag.name == "table" and bool(_NAV_SUMMARY.search(str(attrs.get("summary", ""))))


def inline_text(el: Any) -> str:
    """Return an element's text (or a run of sibling nodes') as one line.

    Inline elements join without added spaces: `to "<code>/dev/null</code>" now` reads
    `to "/dev/null" now`, a space only where the page has one. Walked with an explicit stack:
    a page nested thousands of elements deep is read, not a RecursionError.
    """
    parts: list[str] = []
    stack: list[Any] = list(reversed(el)) if isinstance(el, list) else [el]
    while stack:
        node = stack.pop()
        if node is _SPACE:
            parts.append(" ")
            continue
        name = getattr(node, "name", None)
        if name is None:
            parts.append(str(node))
            continue
        if name == "br":
            parts.append(" ")
            continue
        block = name in _BLOCK
        if block:
            parts.append(" ")
            stack.append(_SPACE)
        stack.extend(reversed(list(node.children)))
    return " ".join("".join(parts).split())


_SPACE = object()
"""Marks the end of a block element inside inline text: a space goes there."""


def _verbatim(tag: Any) -> bool:
    """Whether a page lays an element out line for line.

    `<pre>`, a DocBook literal layout (`<div class="literallayout">`, lines ended by `<br>`) or
    a `white-space: pre` style.
    """
    if tag.name == "pre":
        return True
    attrs = getattr(tag, "attrs", None) or {}
    classes = attrs.get("class") or []
    if isinstance(classes, str):
        classes = classes.split()
    return "literallayout" in classes or bool(_PRE_STYLE.search(str(attrs.get("style", ""))))


_PRE_STYLE = re.compile(r"white-space\s*:\s*pre\b", re.I)


def _code_text(el: Any) -> str:
    """Return a verbatim block's text line for line, without leading and trailing blank lines.

    In `<pre>` the page's own line breaks are the lines; elsewhere (a literal layout) `<br>`
    ends a line and the source's line breaks are spaces. A placeholder (`<em>`, `<var>`) is
    text on its line like the rest.
    """
    pre = el.name == "pre" or bool(_PRE_STYLE.search(str(el.attrs.get("style", ""))))
    parts: list[str] = []
    for node in el.descendants:
        name = getattr(node, "name", None)
        if name == "br":
            parts.append("\n")
        elif name is None:
            parts.append(str(node) if pre else re.sub(r"[ \t\r\n]+", " ", str(node)))
    lines = "".join(parts).replace("\r\n", "\n").split("\n")
    if not pre:
        lines = [line.strip(" ").replace("\xa0", " ") for line in lines]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(line.rstrip() for line in lines)


def _has_block_child(el: Any) -> bool:
    return any(getattr(c, "name", None) in _BLOCK for c in el.children)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


class _Writer:
    """Collect the Markdown blocks of a page in document order."""

    def __init__(self, deadline: float | None) -> None:
        self.blocks: list[str] = []
        self.deadline = deadline
        self.seen = 0
        self.prefix = ""  # "- **term**: " or "- " waiting for the first paragraph of an entry
        self.manual: tuple[int, int] | None = None  # a manual page set as text: its layout
        self.asked: set[str] = set()  # an FAQ's questions, as the headings they became

    def tick(self) -> None:
        self.seen += 1
        if self.deadline is not None and self.seen % 256 == 0 \
                and time.monotonic() > self.deadline:
            raise SkipFile(TOO_SLOW)

    def para(self, text: str) -> None:
        if not text:
            return
        if self.prefix:
            text, self.prefix = self.prefix + text, ""
        self.blocks.append(text)

    def flush_prefix(self) -> None:
        """An entry whose term has no paragraph of its own is written bare."""
        if self.prefix.strip(" -:*"):
            self.blocks.append(self.prefix.rstrip().rstrip(":").rstrip())
        self.prefix = ""

    def code(self, text: str) -> None:
        if text.strip():
            self.flush_prefix()
            self.blocks.append("```\n" + text + "\n```")

    # -- elements: a stack of tasks, so no depth of nesting can exhaust Python's stack --------

    def run(self, root: Any) -> None:
        """Write every block under root, in document order."""
        self.todo: list[tuple[str, Any]] = [("mixed", root)]
        while self.todo:
            task, arg = self.todo.pop()
            if task == "el":
                self.element(arg)
            elif task == "mixed":
                self.mixed(arg)
            elif task == "run":
                self.para(inline_text(arg))
            elif task == "para":
                self.para(inline_text(arg))
            elif task == "prefix":
                self.flush_prefix()
                self.prefix = arg
            elif task == "flush":
                self.flush_prefix()
            elif task == "question":
                self.question(arg)
        self.flush_prefix()

    def later(self, tasks: list[tuple[str, Any]]) -> None:
        """Run these tasks next, in this order."""
        self.todo.extend(reversed(tasks))

    def element(self, el: Any) -> None:
        self.tick()
        name = el.name
        if name in _HEADINGS:
            self.flush_prefix()
            title = code_heading(el) or inline_text(el)  # "`os.EOL`": an entry's name
            if title:
                self.blocks.append("#" * _HEADINGS[name] + " " + title)
        elif _verbatim(el) and self.manual is not None:
            self.flush_prefix()
            heading = next((b for b in reversed(self.blocks) if b.startswith("#")), "")
            self.blocks.extend(manual_blocks(_code_text(el), self.manual,
                                             heading.lstrip("#").strip()))
        elif _verbatim(el):
            self.code(_code_text(el))
        elif name == "table":
            self.table(el)
        elif name == "dl":
            self.definitions(el)
        elif name in ("ul", "ol"):
            self.items(el, ordered=name == "ol")
        elif name == "hr":
            return
        elif _has_block_child(el):
            self.mixed(el)
        else:
            self.para(inline_text(el))

    def mixed(self, el: Any) -> None:
        """Blocks and loose text side by side: each run of loose text is a paragraph."""
        tasks: list[tuple[str, Any]] = []
        run: list[Any] = []
        for child in el.children:
            name = getattr(child, "name", None)
            if name in _BLOCK:
                if run:
                    tasks.append(("run", run))
                    run = []
                tasks.append(("el", child))
            elif name is None and not str(child).strip():
                continue
            else:
                run.append(child)
        if run:
            tasks.append(("run", run))
        self.later(tasks)

    def _body(self, el: Any) -> tuple[str, Any]:
        return ("mixed", el) if _has_block_child(el) else ("para", el)

    def items(self, el: Any, *, ordered: bool) -> None:
        tasks: list[tuple[str, Any]] = []
        for n, li in enumerate(el.find_all("li", recursive=False), start=1):
            tasks += [("prefix", f"{n}. " if ordered else "- "), self._body(li), ("flush", None)]
        self.later(tasks)

    def definitions(self, el: Any) -> None:
        tasks: list[tuple[str, Any]] = []
        for child in el.find_all(["dt", "dd"], recursive=False):
            if child.name == "dt":
                term = inline_text(child)
                tasks.append(("prefix", f"- **{term}**: " if term else ""))
            else:
                tasks += [self._body(child), ("flush", None)]
        tasks.append(("flush", None))
        self.later(tasks)

    def questions(self, rows: list[Any]) -> None:
        """An FAQ's rows: each question heads the answer after it, as a section title does."""
        self.later([("question", " ".join(" ".join(inline_text(c) for c in tr.find_all(
            _CELLS, recursive=False)).split())) if "question" in (tr.get("class") or ())
            else ("mixed", tr) for tr in rows])

    def question(self, title: str) -> None:
        """A question's heading: a level below the heading above, or a question's level."""
        self.flush_prefix()
        last = next((b for b in reversed(self.blocks) if b.startswith("#")), "")
        level = len(last) - len(last.lstrip("#")) + (last not in self.asked)
        heading = "#" * min(6, level) + " " + title
        if title:
            self.asked.add(heading)
            self.blocks.append(heading)

    def table(self, el: Any) -> None:
        rows = [tr for tr in el.find_all("tr") if tr.find_parent("table") is el]
        if any(_QANDA & set(tr.get("class") or ()) for tr in rows):
            self.questions(rows)
            return
        pairs = [tr.find_all(_CELLS, recursive=False) for tr in rows]
        if len(pairs) > 1 and all(len(p) == 2 and p[0].name == "td" and not _holds_blocks(p[0])
                                  and 0 < len(inline_text(p[0])) <= _TERM_CHARS for p in pairs):
            # a labelled list set as a table (AsciiDoc's: "compdb" beside what it does)
            self.later([t for p in pairs for t in (
                ("prefix", f"- **{inline_text(p[0])}**: "), self._body(p[1]), ("flush", None))])
            return
        if not rows or any(_holds_blocks(c) for tr in rows
                           for c in tr.find_all(_CELLS, recursive=False)):
            self.mixed(el)  # a layout table: read the blocks it holds
            return
        self.flush_prefix()
        caption = el.find("caption")
        if caption is not None and inline_text(caption):
            self.blocks.append(inline_text(caption))
        grid = [[_cell(inline_text(c)) for c in tr.find_all(_CELLS, recursive=False)]
                for tr in rows]
        grid = [r for r in grid if any(r)]
        if not grid:
            return
        width = max(len(r) for r in grid)
        header_row = rows[0].find_all(_CELLS, recursive=False)
        headed = bool(header_row) and all(c.name == "th" for c in header_row) and len(grid) > 1
        lines = []
        for i, r in enumerate(grid):
            r = r + [""] * (width - len(r))
            lines.append("| " + " | ".join(r) + " |")
            if i == 0 and headed:
                lines.append("|" + "---|" * width)
        self.blocks.append("\n".join(lines))


def html_to_markdown(html: str, deadline: float | None = None) -> tuple[str, str | None]:
    """Return a page's text as Markdown blocks, and its `<title>`.

    `deadline` (a `time.monotonic()` value): a page still being read then raises SkipFile.
    """
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(html, "html.parser")
    if redirect_target(soup) is not None:
        raise SkipFile("a page that only sends the browser on to another (a redirect): "
                       "no text of its own")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    for tag in soup(list(_DROP)):
        tag.decompose()
    for tag in soup.find_all(lambda t: _hidden(t) or _navigation(t)):
        if not tag.decomposed:
            tag.decompose()
    for tag in navigation_bars(soup) + own_contents(soup) + permalinks(soup):
        if not tag.decomposed:
            tag.decompose()
    writer = _Writer(deadline)
    pres = soup.find_all("pre")
    if pres and is_manual_page(soup.get_text()):
        writer.manual = layout([_code_text(p) for p in pres])
    writer.run(soup.body or soup)
    return "\n\n".join(writer.blocks) + "\n", title
