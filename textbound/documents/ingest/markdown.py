"""Markdown as a reader sees it: what a renderer hides is not text.

A Markdown file is stored as written, with its headings, lists, tables and code, except for the
markup a rendered page never shows:

| markup | example as written | as read |
|---|---|---|
| an HTML comment | `<!-- YAML added: v0.1.90 -->` | (nothing) |
| an empty anchor | `<a id="unsafe-rust"></a>` | (nothing) |
| an inline link | `see [the guide](guide.md#start)` | `see the guide` |
| a reference link | `[Chapter 19][ch19]`, `[RFC 8439]` | `Chapter 19`, `RFC 8439` |
| a link definition | `[ch19]: ch19-00-advanced.html` | (the line goes) |
| an image | `![A crab](img/ferris.svg)` | `A crab` |
| an autolink | `<https://nodejs.org/>` | `https://nodejs.org/` |
| an HTML block | `<table><tr><th>Constant</th>...` | as an HTML page's (a table's rows) |
| inline HTML | `<span class="caption">Listing 19-1</span>`, `<kbd>C</kbd>` | `Listing 19-1`, `C` |
| an mdBook include | `{{#include ../listings/ch19/src/main.rs:here}}` | the listing's lines |

MyST (Sphinx's and Jupyter Book's Markdown) writes directives as fences and roles before code
spans; they are read as rendered too:

| markup | example as written | as read |
|---|---|---|
| an admonition | ```` ```{note} ```` (or `:::{note}`), lines, a closing fence | the lines |
| a version note | ```` ```{versionadded} 21.2 ```` | "New in version 21.2." and its lines |
| a code directive | ```` ```{code-block} python ```` | a ```` ```python ```` block |
| a contents tree | ```` ```{toctree} ```` | (nothing) |
| a reference role | ``{ref}`virtual environments <venv>` `` | `virtual environments` |
| another role | ``{mod}`ensurepip` `` | `` `ensurepip` `` |
| a target | `(ensurepip)=` | (nothing) |

Pandoc's and Quarto's fenced divs (R Markdown and Quarto books, `.Rmd` and `.qmd`, are read as
Markdown; their ```` ```{r} ```` chunks are code) lose their fence lines, `::: {.callout-note}`
and `:::`, and keep what they hold.

Code is never touched: fenced blocks (``` or ~~~) and inline code spans are kept exactly, so an
XML comment in a listing or `[x](y)` in a code span stays as printed. A bracketed word with no
definition of that name (`[1]`, `[sic]`) is not a link and stays, and a footnote (`[^1]`, `[^1]:
text`) is text.
"""

from __future__ import annotations

import re
from pathlib import Path

from textbound.documents.ingest.html import html_to_markdown
from textbound.documents.ingest.outline import outline

__all__ = ["rendered_markdown"]

_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_ANCHOR = re.compile(r"<a\s+(?:id|name)\s*=\s*\"[^\"]*\"\s*>\s*</a>", re.I)
_DEFINITION = re.compile(r"^ {0,3}\[([^\]\^\n][^\]\n]*)\]:[ \t]*\S+[^\n]*\n?", re.M)
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_INLINE = re.compile(r"\[((?:[^\[\]\n]|\[[^\]\n]*\])+)\]\((?:[^()\n]|\([^)\n]*\))*\)")
_REFERENCE = re.compile(r"\[((?:[^\[\]\n]|\[[^\]\n]*\])+)\]\[([^\]\n]*)\]")
_SHORTCUT = re.compile(r"\[((?:[^\[\]\n]|\[[^\]\n]*\])+)\]()(?![\[(:])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_BLANK_RUNS = re.compile(r"\n{3,}")
_DIRECTIVE = re.compile(r"^( {0,3})(`{3,}|~{3,}|:{3,})\{([\w:.-]+)\}[ \t]*(.*?)[ \t]*$")
_OPTION = re.compile(r"^\s*:[\w-]+:")
_PROSE = frozenset({"note", "warning", "tip", "important", "caution", "attention", "danger",
                    "error", "hint", "seealso", "admonition", "topic", "sidebar", "margin",
                    "dropdown", "epigraph", "versionadded", "versionchanged", "deprecated"})
_VERSION = {"versionadded": "New in version", "versionchanged": "Changed in version",
            "deprecated": "Deprecated since version"}
_HIDDEN = frozenset({"toctree", "contents", "tableofcontents"})
_CODE = frozenset({"code-block", "code", "sourcecode", "code-cell"})
_ROLE = re.compile(r"\{([\w:.-]+)\}(`+)(.+?)\2")
_PLAIN_ROLES = frozenset({"ref", "doc", "term", "numref", "abbr", "sub", "sup", "pep", "rfc",
                          "pypi", "issue", "pr", "user", "ghissue", "download", "any",
                          "math"})
_DIV = re.compile(r"^ {0,3}:{3,}[ \t]*(?:\{[^}\n]*\}|[\w-]+)?[ \t]*(?:\n|$)", re.M)
"""A Pandoc or Quarto fenced div's opening or closing line (`::: {.callout-note}`, `:::`)."""
_TARGET = re.compile(r"^\([\w.:-]+\)=[ \t]*\n?", re.M)


def rendered_markdown(text: str, folder: Path | None = None) -> str:
    """Return the Markdown text without the markup a rendered page does not show.

    `folder`: the file's own, where mdBook's `{{#include ...}}` listings are read from.
    """
    parts = _parts(_directives(_includes(text, folder)))
    if any(not code and _HTML_OPEN.search(part) for code, part in parts):
        parts = _parts("".join(part if code else _html_blocks(part) for code, part in parts))
    prose = "".join(part for code, part in parts if not code)
    defined = {m.group(1).strip().lower() for m in _DEFINITION.finditer(prose)}
    return "".join(part if code else _render(part, defined) for code, part in parts)


def _parts(text: str) -> list[tuple[bool, str]]:
    """Split text into (is_code, piece): the fenced blocks chunking sees (`outline`), and prose."""
    parts: list[tuple[bool, str]] = []
    at = 0
    for start, end in outline(text).fences:
        if start > at:
            parts.append((False, text[at:start]))
        parts.append((True, text[start:end]))
        at = end
    if at < len(text):
        parts.append((False, text[at:]))
    return parts


_INCLUDE = re.compile(r"^([ \t]*)\{\{#(include|rustdoc_include|playground)[ \t]+([^\s}]+)"
                      r"[^}\n]*\}\}[ \t]*$", re.M)
_LISTING_SUFFIXES = frozenset({".rs", ".py", ".js", ".ts", ".go", ".c", ".h", ".cpp", ".hpp",
                               ".java", ".kt", ".swift", ".rb", ".sh", ".toml", ".txt", ".out",
                               ".css", ".html", ".sql", ".hs", ".ml", ".ex", ".lua"})
"""What an mdBook include may read: listings and their output, never a settings file."""
_INCLUDE_BYTES = 200_000


def _included(spec: str, folder: Path, rustdoc: bool) -> str | None:
    """The text an include names ("file", "file:anchor", "file:3:9"), or None."""
    name, _, part = spec.partition(":")
    here = folder.resolve()
    path = (here / name).resolve()
    # from the book's folder and the one above it (mdBook's ../listings), never from another
    # collection's uploads
    root = here if here.parent.name == "uploads" else here.parent
    if path.suffix.lower() not in _LISTING_SUFFIXES or not path.is_relative_to(root):
        return None
    try:
        if not path.is_file() or path.stat().st_size > _INCLUDE_BYTES:
            return None
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if re.fullmatch(r"\d*(?::\d*)?", part) and part:
        a, _, b = part.partition(":")
        lines = lines[int(a) - 1 if a else 0:int(b) if b else (int(a) if a and ":" not in part
                                                              else None)]
    elif part:  # an anchor: the lines between "ANCHOR: part" and "ANCHOR_END: part"
        start = next((i for i, ln in enumerate(lines) if f"ANCHOR: {part}" in ln), None)
        if start is None:
            return None
        end = next((i for i, ln in enumerate(lines) if f"ANCHOR_END: {part}" in ln), len(lines))
        lines = lines[start + 1:end]
    lines = [ln for ln in lines if "ANCHOR:" not in ln and "ANCHOR_END:" not in ln
             and not (rustdoc and re.match(r"\s*#(?: |$)", ln))]  # rustdoc's hidden lines
    return "\n".join(lines)


def _includes(text: str, folder: Path | None) -> str:
    """Read mdBook's `{{#include file}}` (`rustdoc_include`, `playground`) as the book shows it.

    The listing's lines, a part of it when an anchor or line range follows the file name. One
    that cannot be read (no such file, not a listing, outside the book) is left out: the book
    shows no such line either.
    """
    if "{{#" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        body = _included(m.group(3), folder, m.group(2) == "rustdoc_include") \
            if folder is not None else None
        if body is None:
            return ""
        return "\n".join(m.group(1) + ln if ln else ln for ln in body.splitlines())

    return _INCLUDE.sub(one, text)


_HTML_OPEN = re.compile(r"^ {0,3}<(table|dl|ul|ol|div|pre|p|details|blockquote|section"
                        r"|h[1-6])(?=[\s>/]|$)", re.I | re.M)
"""A line that opens an HTML block, as CommonMark reads one (its type 1 and 6)."""


def _html_blocks(prose: str) -> str:
    """HTML blocks written into Markdown (Node.js's API tables) read as an HTML page's are.

    A block runs to the first blank line (a `<pre>` to its closing tag), as CommonMark has it;
    a table becomes a Markdown table with its header cells, a definition list entries, `<pre>`
    code. A block the HTML reader finds no text in stays as written.
    """
    out: list[str] = []
    at = 0
    for m in _HTML_OPEN.finditer(prose):
        if m.start() < at:
            continue  # inside a block already read
        if m.group(1).lower() == "pre":
            close = re.search(r"</pre\s*>[^\n]*\n?", prose[m.start():], re.I)
            end = m.start() + close.end() if close else len(prose)
        else:
            blank = re.search(r"\n[ \t]*\n", prose[m.start():])
            end = m.start() + blank.start() + 1 if blank else len(prose)
        try:
            md = html_to_markdown(prose[m.start():end])[0].strip()
        except Exception:  # noqa: BLE001 (a block the reader cannot take stays as written)
            md = ""
        if md:
            out += [prose[at:m.start()], md, "\n\n"]
            at = end
    return "".join(out) + prose[at:]


_INLINE_TAG = re.compile(r"</?(?:span|sup|sub|kbd|em|strong|b|i|u|small|mark|abbr|cite|var|"
                         r"samp|ins|del|s|q|dfn|time|font|a)(?:\s[^<>]*)?>", re.I)
_CODE_TAG = re.compile(r"<code(?:\s[^<>]*)?>([^<>`]*)</code>", re.I)
_IMG_TAG = re.compile(r"<img\s[^<>]*?\balt\s*=\s*\"([^\"]*)\"[^<>]*>", re.I)
_BR_TAG = re.compile(r"<br\s*/?>", re.I)


def _inline_html(text: str) -> str:
    """Inline HTML as rendered: its words without the tags.

    `<span class="caption">Listing 19-1: ...</span>` and `<kbd>Ctrl</kbd>` read as their words,
    `<code>` as a code span, an image as its alt text; code spans were set aside before.
    """
    text = _CODE_TAG.sub(lambda m: f"`{m.group(1)}`", text)
    text = _IMG_TAG.sub(lambda m: m.group(1), text)
    text = _BR_TAG.sub(" ", text)
    return _INLINE_TAG.sub("", text)


def _directives(text: str) -> str:
    """MyST directive blocks as rendered: admonitions as prose, code as code, toctrees gone."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i].rstrip("\n"))
        name = m.group(3).lower() if m else ""
        if not m or not (name in _PROSE or name in _HIDDEN or name in _CODE):
            out.append(lines[i])
            i += 1
            continue
        indent, fence, arg = m.group(1), m.group(2), m.group(4)
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j].rstrip("\n")):
            j += 1
        body = lines[i + 1:j]
        while body and _OPTION.match(body[0]):
            body = body[1:]
        if name in _CODE:
            out += [f"{indent}```{arg}\n", *body, f"{indent}```\n"]
        elif name in _PROSE:
            head = f"{_VERSION[name]} {arg}." if name in _VERSION and arg else arg
            inner = _directives("".join(body))
            out += [f"{indent}{head}\n\n" if head else "", inner,
                    "\n" if inner and not inner.endswith("\n") else ""]
        i = j + 1
    return "".join(out)


def _role(m: re.Match[str]) -> str:
    """A MyST role as rendered: a reference's words, else its text as code."""
    name, content = m.group(1).split(":")[-1].lower(), m.group(3)
    titled = re.match(r"^(.*?)\s*<[^<>]+>$", content)
    if titled and titled.group(1):
        return titled.group(1)
    if name in _PLAIN_ROLES:
        return content.lstrip("!~")
    return f"`{content.lstrip('!~')}`"


def _render(prose: str, defined: set[str]) -> str:
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    text = _ROLE.sub(_role, prose)
    text = _TARGET.sub("", text)
    text = _DIV.sub("", text)
    text = _SPAN.sub(keep, text)
    text = _COMMENT.sub("", text)
    text = _ANCHOR.sub("", text)

    def label(raw: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda s: spans[int(s.group(1))], raw).strip().lower()

    text = _DEFINITION.sub(lambda m: "" if label(m.group(1)) in defined else m.group(0), text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _inline_html(text)
    text = _INLINE.sub(lambda m: m.group(1), text)

    def reference(m: re.Match[str]) -> str:
        return m.group(1) if label(m.group(2) or m.group(1)) in defined else m.group(0)

    text = _REFERENCE.sub(reference, text)
    text = _SHORTCUT.sub(reference, text)
    text = _AUTOLINK.sub(lambda m: m.group(1), text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], text)
