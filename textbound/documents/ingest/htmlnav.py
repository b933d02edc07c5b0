"""Navigation a page marks by what it is rather than by its class names.

Generated books name their navigation (`class="navheader"`, `class="toc"`); others do not. Two
shapes are navigation whatever they are called:

* a **navigation bar**: a short block holding links of two kinds among previous, next, up, home,
  contents and index (by the link's words, "Next Chapter" as "Next", its `rel`, its DocBook
  `accesskey` or a label before it), such as "Prev | Up | Home | Next", a "Chapter 2. ..."
  header table around them or Texinfo's "Next: Types, Previous: Structures, Up: Using libffi
  [Index]";
* a page's own **table of contents**: a list of nothing but links (three or more) to sections
  further down the same page (`href="#..."`) or to the other pages of the book.

Neither is text: a contents line names a topic without saying anything about it, and a passage
of "Prev Up Next" matches any question that says "next". Nor is a **permalink**: the mark a
generator puts after a heading or an entry, linking to it (shown on hover), which otherwise
ends up in the heading ("Installation¶") or the term ("ffi_type_void ¶"). What a heading is
made of is read here too: one that is a single code name (`code_heading`) is an API entry's;
and so is a page that only sends the browser on to another (`redirect_target`).
"""

from __future__ import annotations

import re
from typing import Any

_NAV_WORDS = {"prev": "prev", "previous": "prev", "next": "next", "up": "up", "home": "home",
              "top": "up", "contents": "contents", "table of contents": "contents",
              "index": "index"}
_UNITS = frozenset({"chapter", "section", "page", "part", "topic", "lesson", "node"})
"""What a way may name after it: "Next Chapter", "Previous page"."""
_ACCESS_KEYS = {"p": "prev", "n": "next", "u": "up", "h": "home"}
_RELS = {"prev": "prev", "previous": "prev", "next": "next", "up": "up", "parent": "up",
         "home": "home", "start": "home", "contents": "contents", "toc": "contents",
         "index": "index"}
_NOT_WORDS = re.compile(r"[^a-z ]+")
_LABEL = re.compile(r"\b(next|previous|prev|up)\s*:\s*$", re.I)
"""A link labelled by the text before it, as Texinfo writes its headers: "Next: <a>Types</a>"."""
BAR_MAX_CHARS = 300
"""A navigation bar is short: a block with more text than this is content that links."""
_BARS = frozenset({"div", "p", "table", "tr", "ul", "ol", "header", "footer", "section",
                   "center", "aside"})


def _kind(a: Any) -> str | None:
    """Which way a link goes (prev, next, up, home, contents), or None for an ordinary link."""
    rels = a.get("rel") or []
    for rel in [rels] if isinstance(rels, str) else rels:
        if str(rel).lower() in _RELS:
            return _RELS[str(rel).lower()]
    key = str(a.get("accesskey", "")).lower()
    if key in _ACCESS_KEYS:
        return _ACCESS_KEYS[key]
    label = a.previous_sibling
    found = _LABEL.search(label) if isinstance(label, str) else None
    if found:
        return _NAV_WORDS[found.group(1).lower()]
    words = " ".join(_NOT_WORDS.sub(" ", a.get_text(" ").lower()).split())
    way, _, unit = words.rpartition(" ")
    return _NAV_WORDS.get(way if unit in _UNITS else words)


def navigation_bars(soup: Any) -> list[Any]:
    """Return the largest short blocks that hold navigation links of two kinds or more."""
    bars: list[Any] = []
    for a in soup.find_all("a"):
        if _kind(a) is None:
            continue
        best = None
        for up in a.parents:
            if up.name in (None, "body", "html", "[document]") \
                    or len(up.get_text(" ", strip=True)) > BAR_MAX_CHARS:
                break
            if up.name in _BARS and len({_kind(x) for x in up.find_all("a")} - {None}) >= 2:
                best = up
        if best is not None and all(best is not b for b in bars):
            bars.append(best)
    return bars


def _position(tag: Any) -> tuple[int, int]:
    return (tag.sourceline or 0, tag.sourcepos or 0)


def _elsewhere(href: str) -> bool:
    """Whether a link goes to another page of the same site (a relative address)."""
    return bool(href) and not href.startswith(("#", "//")) and not _SCHEME.match(href)


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
_CONTENTS_TITLE = re.compile(r"^\W*(?:table of )?contents\W*$", re.I)
CONTENTS_MIN_LINKS = 3
_NOT_TEXT = re.compile(r"[\s\u2022\u00b7]+")
"""What a contents list's share of link text leaves out: spaces and bullets ("•", "·")."""


def own_contents(soup: Any) -> list[Any]:
    """Return a page's own tables of contents: lists of nothing but links to its sections.

    A list (`ul`, `ol`, `dl`) or table whose text is all link text, each link to a section further
    down this page (`#id`) or to another page of the book (a relative address: the chapter page of a
    book split in pages), with three links or more or a "Table of Contents" title right before
    it (dropped with it).
    """
    out: list[Any] = []
    anchors: dict[str, Any] | None = None
    for lst in soup.find_all(["ul", "ol", "dl", "table"]):
        if lst.find_parent(["ul", "ol", "dl", "table"]) is not None:
            continue  # a nested list goes with the list it is in
        links = lst.find_all("a", href=True)
        title = lst.find_previous_sibling()
        titled = title is not None and bool(_CONTENTS_TITLE.match(title.get_text(" ", strip=True)))
        if len(links) < (1 if titled else CONTENTS_MIN_LINKS):
            continue
        text = len(_NOT_TEXT.sub("", lst.get_text("")))
        linked = sum(len(_NOT_TEXT.sub("", a.get_text(""))) for a in links)
        if linked < 0.9 * text:
            continue
        targets = [str(a["href"]) for a in links]
        here = [t[1:] for t in targets if t.startswith("#")]
        if not all(t.startswith("#") and len(t) > 1 or _elsewhere(t) for t in targets):
            continue
        if here and anchors is None:
            anchors = {str(t.get("name")): t for t in soup.find_all("a", attrs={"name": True})}
            anchors.update({str(t.get("id")): t for t in soup.find_all(id=True)})
        where = _position(lst)
        if all(t in (anchors or {}) and _position((anchors or {})[t]) > where for t in here):
            out += [lst, title] if titled else [lst]
    return out


PERMALINK_MARKS = frozenset({"¶", "#", "§", "🔗", "⚓"})
"""The whole text of a permalink: Sphinx and MkDocs `<a class="headerlink" href="#install">¶</a>`,
Texinfo `<a href="#index-x" class="copiable-anchor"> &para;</a>`, PostgreSQL's `<a
class="id_link" href="#ddl-basics">#</a>`."""


def permalinks(soup: Any) -> list[Any]:
    """Return the links to a place on this page whose whole text is one permalink mark."""
    return [a for a in soup.find_all("a", href=True)
            if str(a["href"]).startswith("#") and a.get_text("", strip=True) in PERMALINK_MARKS]


def code_heading(heading: Any) -> str | None:
    """A heading that is one code name, in backquotes as Markdown writes it, else None.

    API references head each entry with the name it documents (Node.js: `<h3><code>os.EOL</code>
    </h3>`); "`os.EOL`" tells the answer composer that the entry's sentences are about it
    (textbound/answer/named_section.py). A heading with prose beside its code ("LIMIT and
    OFFSET") is written as it reads.
    """
    codes = heading.find_all(["code", "tt", "kbd", "samp"])
    if len(codes) != 1:
        return None
    code = " ".join(codes[0].get_text().split())
    return f"`{code}`" if code and "`" not in code \
        and " ".join(heading.get_text().split()) == code else None


_REFRESH = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*[;,]\s*(?:url\s*=\s*)?['\"]?([^'\"\s]+)", re.I)


def redirect_target(soup: Any) -> str | None:
    """Where a page sends the browser at once (`<meta http-equiv="refresh" content="0; url=X">`).

    A reader never sees such a page: Texinfo writes one for every node name that moved ("The
    node you are looking for is at Aliasing."), a site for a page renamed. A refresh after a
    delay (a page that reloads itself) is no redirect.
    """
    for meta in soup.find_all("meta"):
        if str(meta.get("http-equiv", "")).strip().lower() != "refresh":
            continue
        m = _REFRESH.match(str(meta.get("content", "")))
        if m and float(m.group(1)) <= 1:
            return m.group(2)
    return None
