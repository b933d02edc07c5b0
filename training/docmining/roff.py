"""Read a manual page's roff source (the man macros) into its sections and entries.

Only the structure the miner needs is kept: the page's name and section (``.TH``), the NAME
line, and per section (``.SH``, and ``.SS`` as a section of its own) a list of blocks, each a
plain paragraph or a tagged entry (a term and its description). Entries come from ``.TP``,
``.IP "term"``, ``.TQ`` (a second term line), and the DocBook/pod2man shape of a one-line
paragraph followed by an indented ``.RS`` block. Fonts and escapes are reduced to plain text;
conditionals, macro definitions and the mdoc macro set are not interpreted.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

__all__ = ["Block", "ManPage", "Section", "parse_man", "plain"]


@dataclass
class Block:
    """A paragraph (`term` is None) or a tagged entry: a term and its description."""

    text: str
    term: str | None = None


@dataclass
class Section:
    """One ``.SH`` or ``.SS`` section; `title` is upper-cased, without a trailing colon."""

    title: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class ManPage:
    """A parsed manual page."""

    name: str
    section: str
    sections: list[Section] = field(default_factory=list)

    def find(self, *titles: str) -> list[Section]:
        """The sections whose title is one of `titles` (or starts with one followed by a space)."""
        return [s for s in self.sections
                if any(s.title == t or s.title.startswith(t + " ") for t in titles)]


_NAMED = {
    "-": "-", "hy": "-", "em": "\u2014", "en": "\u2013", "bu": "\u2022", "aq": "'", "dq": '"',
    "lq": "\u201c", "rq": "\u201d", "oq": "\u2018", "cq": "\u2019", "rs": "\\", "ti": "~",
    "ha": "^", "ga": "`", "co": "\u00a9", "rg": "\u00ae", "tm": "\u2122", "mu": "\u00d7",
    ">=": "\u2265", "<=": "\u2264", "!=": "\u2260", "->": "\u2192", "<-": "\u2190",
    "de": "\u00b0", "+-": "\u00b1", "sl": "/", "ba": "|", "or": "|", "lh": "", "rh": "",
    "Aq": "'", "L\"": "\u201c", "R\"": "\u201d", "C`": "\u201c", "C'": "\u201d", "R": "\u00ae",
}
# one escape: \(xx, \[name], \*(xx, \*[name], \*x, \f(xx, \f[..], \fX, \s+-N, \X'..' forms, \x
_ESCAPE = re.compile(
    r"\\(?:\((?P<two>..)|\[(?P<long>[^\]]*)\]|\*(?:\((?P<str2>..)|\[(?P<strl>[^\]]*)\]|(?P<str1>.))"
    r"|f(?:\(..|\[[^\]]*\]|.)|s[-+]?(?:\(\d\d|\[\d+\]|\d)|[hvwlLNoDbXZRS]'[^']*'|[mMnkgFY]"
    r"(?:\(..|\[[^\]]*\]|.)|\$\d|(?P<one>.))", re.S)
_ONE = {"-": "-", "e": "\\", "\\": "\\", "&": "", "|": "", "^": "", "0": " ", "~": "\u00a0",
        " ": " ", "c": "", "'": "'", "`": "`", ".": ".", "%": "", ":": "", "/": "", ",": "",
        "t": "\t", "}": "", "{": "", "!": "", "p": "", "r": "", "u": "", "d": "", "a": ""}


def _escape(m: re.Match[str]) -> str:
    g = m.groupdict()
    if g["two"] is not None:
        return _NAMED.get(g["two"], "")
    if g["long"] is not None:
        name = g["long"]
        if name.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
            return chr(int(name[1:], 16))
        return _NAMED.get(name, "")
    for key in ("str2", "strl", "str1"):
        if g[key] is not None:
            return _NAMED.get(g[key], "")
    if g["one"] is not None:
        return _ONE.get(g["one"], g["one"])
    return ""  # fonts, sizes, motions, colours


def plain(text: str) -> str:
    """Roff text with its fonts and escapes reduced to plain characters."""
    text = re.sub(r'\\".*', "", text)
    return _ESCAPE.sub(_escape, text).replace("\u00a0", " ")


def _args(line: str) -> tuple[str, list[str]]:
    body = line[1:].lstrip()
    name, _, rest = body.partition(" ")
    rest = re.sub(r'\\".*', "", rest).strip()
    try:
        args = shlex.split(rest.replace("\\", "\\\\"), posix=True) if rest else []
    except ValueError:
        args = rest.split()
    return name, [a.replace("\\\\", "\\") for a in args]


_FONT_PAIRS = {"BR", "RB", "IR", "RI", "BI", "IB"}
_BREAKS = {"PP", "LP", "P", "HP", "sp", "SP", "Sp", "ne"}


def parse_man(source: str) -> ManPage:
    """Parse a man-macro page; raise ValueError for a page that is not one (mdoc, ``.so``)."""
    lines = source.replace("\r\n", "\n").split("\n")
    page = ManPage(name="", section="")
    cur: Section | None = None
    para: list[str] = []
    term: str | None = None
    pending_term = False  # the next text line is a .TP term
    rs_entry = 0  # >0: inside an .RS block that is the description of the entry above it
    rs_depth = 0
    fill = True
    skip_until: str | None = None
    brace = 0

    def flush() -> None:
        nonlocal para, term
        if cur is not None:
            text = " ".join(p for p in para if p).strip() if fill else "\n".join(para).strip()
            text = re.sub(r"[ \t]+", " ", text)
            if text or term:
                cur.blocks.append(Block(text=text, term=term))
        para, term = [], None

    def add_text(text: str) -> None:
        nonlocal pending_term, term
        if pending_term:
            term = plain(text).strip() if term is None else f"{term}, {plain(text).strip()}"
            pending_term = False
        else:
            para.append(plain(text) if fill else plain(text).rstrip())

    for raw in lines:
        if skip_until is not None:
            if raw.strip() == skip_until:
                skip_until = None
            continue
        if brace:
            brace += raw.count("\\{") - raw.count("\\}")
            brace = max(brace, 0)
            continue
        if raw.startswith((".\\\"", "'\\\"", '.\\"')) or raw.strip() in (".", "'"):
            continue
        if raw.startswith((".", "'")):
            name, args = _args(raw)
            if name in ("Dd", "Nm", "Sh") and not page.name:
                raise ValueError("an mdoc page (not the man macros)")
            if name == "so":
                raise ValueError("a .so link to another page")
            if name in ("de", "de1", "am", "ig"):
                skip_until = ".." if name != "ig" or not args else f".{args[0]}"
                continue
            if name in ("if", "ie", "el"):
                brace = max(raw.count("\\{") - raw.count("\\}"), 0)
                continue
            if name == "TH":
                page.name = plain(args[0]).strip().lower() if args else ""
                page.section = plain(args[1]).strip() if len(args) > 1 else ""
            elif name in ("SH", "SS"):
                flush()
                title = plain(" ".join(args)).strip().rstrip(":").upper()
                cur = Section(title=title)
                page.sections.append(cur)
                rs_entry = rs_depth = 0
                if not args:
                    pending_term = False
                    para = []
                    # the heading is on the next line: read it as the title
                    cur.title = ""
            elif name in _BREAKS:
                if rs_entry and rs_depth >= rs_entry:
                    para.append("")  # a paragraph inside an entry's description
                else:
                    flush()
            elif name in ("TP", "TQ"):
                if name == "TQ":
                    pending_term = True
                    continue
                flush()
                pending_term = True
            elif name == "IP":
                flush()
                tag = plain(args[0]).strip() if args else ""
                term = tag if tag and tag not in ("\u2022", "*", "-", "o", "\u00b7") else None
            elif name == "RS":
                rs_depth += 1
                if (not rs_entry and term is None and len(para) == 1 and 0 < len(para[0]) <= 80
                        and cur is not None):
                    term, para = para[0].strip(), []
                    rs_entry = rs_depth
            elif name == "RE":
                if rs_entry and rs_depth == rs_entry:
                    flush()
                    rs_entry = 0
                rs_depth = max(rs_depth - 1, 0)
            elif name in ("nf", "EX", "Vb"):
                fill = False
            elif name in ("fi", "EE", "Ve"):
                fill = True
            elif name in ("B", "I", "SM", "SB"):
                if args:
                    add_text(" ".join(args))
            elif name in _FONT_PAIRS:
                add_text("".join(args))
            elif name in ("UR", "MT"):
                continue
            elif name in ("UE", "ME"):
                if args:
                    para.append(plain("".join(args)))
            elif name == "br":
                if not fill:
                    para.append("")
            continue
        if cur is not None and cur.title == "" and not para and term is None:
            cur.title = plain(raw).strip().rstrip(":").upper()
            continue
        add_text(raw)
    flush()
    page.sections = [s for s in page.sections if s.title]
    if not page.name:
        raise ValueError("no .TH line")
    return page
