"""Read an HTML manual's definition lists and header-celled tables.

A definition list (``<dl>``) gives entries: a ``<dt>`` term and the text of its first
``<dd>``. Tables of contents (``class="toc"``, or terms that are only links with no description)
are skipped. A table counts when its first row is all ``<th>`` header cells (at least two, no
spans) and at least two further rows have one ``<td>``/``<th>`` cell per header; each row's first
cell is its key. Each list and table carries the nearest heading above it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DefList", "Table", "parse_html"]

_MAX_CELL = 300


@dataclass
class DefList:
    """The entries of one ``<dl>``: (term, description) in page order."""

    heading: str
    entries: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Table:
    """A table with header cells: `rows` have one cell per header, the first being the key."""

    heading: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)


def _text(el: object) -> str:
    from bs4 import Tag

    if not isinstance(el, Tag):
        return ""
    return " ".join(el.get_text(" ", strip=True).split())


def _heading(el: object) -> str:
    from bs4 import Tag

    if not isinstance(el, Tag):
        return ""
    h = el.find_previous(["h1", "h2", "h3", "h4"])
    return _text(h) if h is not None else ""


def parse_html(html: str) -> tuple[list[DefList], list[Table]]:
    """The definition lists and header-celled tables of an HTML page."""
    from bs4 import BeautifulSoup, Tag

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "nav", "footer", "noscript", "template"]):
        tag.decompose()
    lists: list[DefList] = []
    for dl in soup.find_all("dl"):
        if "toc" in (dl.get("class") or []):
            continue
        out = DefList(heading=_heading(dl))
        for dt in dl.find_all("dt", recursive=False):
            dd = dt.find_next_sibling(["dt", "dd"])
            if not isinstance(dd, Tag) or dd.name != "dd":
                continue
            if dd.find("dl") is not None:  # a nested list (a table of contents' tree)
                continue
            term, desc = _text(dt), _text(dd)
            if term and desc and len(term) <= 120 and len(desc) >= 10:
                out.entries.append((term, desc))
        if len(out.entries) >= 2:
            lists.append(out)
    tables: list[Table] = []
    for table in soup.find_all("table"):
        if table.find("table") is not None:
            continue
        rows = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
        if len(rows) < 3:
            continue
        head = rows[0].find_all(["th", "td"], recursive=False)
        if len(head) < 2 or any(c.name != "th" or c.get("colspan") or c.get("rowspan")
                                for c in head):
            continue
        out_t = Table(heading=_heading(table), header=[_text(c) for c in head])
        if not all(out_t.header):
            continue
        for tr in rows[1:]:
            cells = tr.find_all(["th", "td"], recursive=False)
            if len(cells) != len(head) or any(c.get("colspan") or c.get("rowspan")
                                               for c in cells):
                continue
            texts = [_text(c) for c in cells]
            if texts[0] and all(len(t) <= _MAX_CELL for t in texts):
                out_t.rows.append(texts)
        if len(out_t.rows) >= 2:
            tables.append(out_t)
    return lists, tables
