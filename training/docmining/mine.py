"""Turn the structure of a manual page or an HTML manual into question-passage-answer records.

Positives (the answer is a span of the passage):

* ``name``: the NAME line -> "what does X do", "what is X for" (answer: its description);
* ``option``: an entry whose term is an option -> "what does -x do in X" (its description's
  first sentence); ``option-how``: "how do I <its description as a verb phrase> with X" (the
  term);
* ``file`` / ``env``: a FILES or ENVIRONMENT entry -> "what is /etc/x for", "what does the
  VAR environment variable do in X"; ``env-which``: "which environment variable <does...>";
* ``exit``: an EXIT STATUS value -> "what does exit status 2 mean for X"; ``exit-which``:
  "what exit code does X return if <...>" (the value);
* ``detail``: an option entry that states its default -> "what is the default for -x in X"
  (the sentence that states it);
* ``term``: an HTML definition entry -> "what is <term>";
* ``cell``: a table row with header cells -> "what is the <header> of <row key>" (the cell).

The passage is the entry with 0-2 neighbours each side (the shape a chunk of a manual has),
sometimes under its section heading. Negatives (``is_impossible``, no answers), each from the
same structure:

* ``neg-neighbour``: the same question against neighbouring entries only (which never name the
  asked option, variable, file or key);
* ``neg-absent``: the question asked about an option, variable, exit value or row key that the
  page does not have, against the positive's passage;
* ``neg-other-section``: the same question against a paragraph of another section of the same
  page that does not state the asked fact;
* ``neg-other-program``: "what does Y do" for a sibling page Y of the same package, against X's
  NAME passage;
* ``neg-mention``: "what does -x do in X" against the page's NAME line and SYNOPSIS, which name
  -x and never say what it does. The other negatives never show the asked option, so without
  this one the option's presence alone tells them from the positives (in the mined pairs: 98% of
  option positives show their flag, 0.1% of the negatives), and a reader learns that shortcut
  instead of whether the passage states the fact: the books' near-misses name what they ask;
* ``neg-detail``: "what is the default for -x in X" against -x's own entry (and its neighbours)
  when the entry states no default: the passage is about the asked option and leaves out the
  asked detail, as the books' near-misses do ("what DPI does it use without the resolution
  option").

Records have the seven keys of ../shared/data/train (see its README); the rule that made a
record is the second-to-last ``:``-field of its id (`kind_of`). Every choice is drawn from a
`random.Random` seeded by (seed, package, page), so a page gives the same records whatever else
is mined.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass

from training.docmining.forms import first_clause, styled, third_person, verb_phrase
from training.docmining.htmldoc import DefList, Table
from training.docmining.roff import Block, ManPage

__all__ = ["Rates", "mine_man", "mine_html", "kind_of", "KINDS"]

POSITIVE_KINDS = ("name", "option", "option-how", "file", "env", "env-which", "exit",
                  "exit-which", "detail", "term", "cell")
NEGATIVE_KINDS = ("neg-neighbour", "neg-absent", "neg-other-section", "neg-other-program",
                  "neg-mention", "neg-detail")
KINDS = POSITIVE_KINDS + NEGATIVE_KINDS

_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*|\+[A-Za-z])")
_OPTION_TERM = re.compile(r"^(?:--?[A-Za-z0-9?]|\+[A-Za-z])")
_ENV_TERM = re.compile(r"^\$?([A-Z][A-Z0-9_]{2,})$")
_PATH_TERM = re.compile(r"^(?:~|\$HOME|/)[\w./~$*{}+-]*$")
_EXIT_VALUE = re.compile(r"^(\d{1,3})$")
_EXIT_IN_TEXT = re.compile(r"\b(\d{1,3}),?\s+(?:if|when|on)\s+([^,;.]{3,100})")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_COMMON_LONG = ("--verbose", "--recursive", "--force", "--quiet", "--dry-run", "--output",
                "--color", "--config", "--debug", "--version", "--help", "--all", "--follow",
                "--interactive", "--no-clobber", "--timeout", "--format", "--user", "--level",
                "--parallel", "--strict", "--backup", "--compress", "--exclude", "--include")
_COMMON_ENV = ("HOME", "PAGER", "EDITOR", "LANG", "TMPDIR", "TZ", "COLUMNS", "LC_ALL", "TERM",
               "PATH", "SHELL", "VISUAL", "NO_COLOR", "XDG_CONFIG_HOME", "LINES", "USER",
               "HTTP_PROXY", "DISPLAY", "MANPATH", "POSIXLY_CORRECT")
_ABSENT_EXIT = ("3", "4", "5", "6", "42", "64", "65", "77", "126", "127", "255")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+")
_MAX_ENTRIES = 40  # per page and kind: a page with hundreds of options does not dominate


@dataclass(frozen=True)
class Rates:
    """How often each negative is drawn for a positive, and how often a heading is shown."""

    neighbour: float = 0.5
    absent: float = 0.3
    other_section: float = 0.3
    other_program: float = 0.5
    mention: float = 0.5
    detail: float = 0.3
    heading: float = 0.5
    how: float = 0.8


def kind_of(record_id: str) -> str:
    """The mining rule that made a record, read from its id."""
    return record_id.split(":")[-2]


def _first_sentence(text: str, cap: int = 300) -> str:
    first = _SENTENCE_END.split(text, maxsplit=1)[0].strip()
    if len(first) > cap:
        cut = first.rfind(" ", 0, cap)
        first = first[: cut if cut > 40 else cap].rstrip(" ,;:")
    return first


def _mentions(text: str, token: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text) is not None


def _render(entries: list[tuple[str | None, str]], heading: str | None
            ) -> tuple[str, list[tuple[int, int]]]:
    """A passage of entries ("term" line, then description), and where each term and text start."""
    parts: list[str] = []
    pos = 0
    starts: list[tuple[int, int]] = []
    if heading:
        parts.append(heading + "\n\n")
        pos += len(heading) + 2
    for i, (term, text) in enumerate(entries):
        if i:
            parts.append("\n\n")
            pos += 2
        t0 = pos
        if term:
            parts.append(term + "\n")
            pos += len(term) + 1
        starts.append((t0, pos))
        parts.append(text)
        pos += len(text)
    return "".join(parts), starts


class _Out:
    """Collects records of one page, numbering them and dropping repeated (question, passage)."""

    def __init__(self, prefix: str, title_base: str, source: str) -> None:
        self.prefix, self.title_base, self.source = prefix, title_base, source
        self.records: list[dict] = []
        self._seen: set[tuple[str, str]] = set()

    def add(self, kind: str, fact: str, question: str, context: str, section: str,
            answer: tuple[str, int] | None) -> None:
        key = (question.lower(), context)
        if key in self._seen or not question.strip() or not context.strip():
            return
        if answer is not None:
            text, start = answer
            if not text or context[start:start + len(text)] != text:
                raise AssertionError(f"span {text!r} not at {start} in its passage")
        self._seen.add(key)
        fact_id = re.sub(r"[\s:]+", "_", fact)[:60]
        self.records.append({
            "id": f"{self.prefix}:{fact_id}:{kind}:{len(self.records)}",
            "question": question,
            "context": context,
            "answers": [{"text": answer[0], "start": answer[1]}] if answer else [],
            "is_impossible": answer is None,
            "title": f"{self.title_base} / {section}" if section else self.title_base,
            "source": self.source,
        })


def _window(n: int, i: int, rng: random.Random) -> tuple[int, int]:
    return max(0, i - rng.randint(0, 2)), min(n, i + 1 + rng.randint(0, 2))


def _neighbours(entries: list[tuple[str | None, str]], i: int, rng: random.Random,
                avoid: Iterable[str]) -> list[tuple[str | None, str]] | None:
    """1-3 entries beside entry i (never i) that mention none of `avoid`, or None."""
    avoid = [a for a in avoid if a]
    sides = [entries[i + 1: i + 1 + rng.randint(1, 3)], entries[max(0, i - rng.randint(1, 3)): i]]
    rng.shuffle(sides)
    for side in sides:
        text = "\n".join(f"{t or ''}\n{d}" for t, d in side)
        if side and not any(_mentions(text, a) or a.lower() in text.lower() for a in avoid):
            return side
    return None


def _paragraphs(page: ManPage, skip: set[str]) -> list[tuple[str, str]]:
    """(section title, text) of the page's plain paragraphs long enough to be a passage."""
    return [(s.title, b.text) for s in page.sections if s.title not in skip
            for b in s.blocks if b.term is None and len(b.text) >= 80]


def _other_section(out: _Out, kind_fact: tuple[str, str], question: str,
                   paras: list[tuple[str, str]], avoid: list[str], rng: random.Random) -> None:
    cands = [(t, p) for t, p in paras
             if not any(_mentions(p, a) or a.lower() in p.lower() for a in avoid if a)]
    if cands:
        title, text = rng.choice(cands)
        out.add("neg-other-section", kind_fact[1], question, text, title, None)


def _name_line(page: ManPage) -> tuple[list[str], str] | None:
    sec = page.find("NAME")
    if not sec or not sec[0].blocks:
        return None
    line = sec[0].blocks[0].text
    m = re.match(r"^(.+?)\s+(?:-|\u2014|\u2013|\\-)\s+(.+)$", line)
    if not m:
        return None
    names = [n.strip() for n in m.group(1).split(",") if n.strip()]
    return names, m.group(2).strip()


def _program(page: ManPage) -> str:
    """The name a student would type: the page's, unless its NAME line names others only."""
    parsed = _name_line(page)
    if parsed and parsed[0] and page.name not in {n.lower() for n in parsed[0]}:
        first = parsed[0][0]
        return first.lower() if first.isupper() else first
    return page.name


def _absent_flag(flag: str, page_text: str, rng: random.Random) -> str | None:
    if flag.startswith("--"):
        cands = [f for f in _COMMON_LONG if not _mentions(page_text, f)]
    else:
        letters = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   if not _mentions(page_text, f"-{c}")]
        cands = [f"-{c}" for c in letters]
    return rng.choice(cands) if cands else None


_OPTION_Q = ("What does {f} do in {p}?", "what does {p} {f} do", "{p} {f}",
             "What is the {f} option of {p} for?", "what does the {f} flag do",
             "{f} option in {p}?", "What happens if I run {p} with {f}?")
_HOW_Q = ("How do I {v} with {p}?", "how to {v} in {p}", "Which {p} option {v3}?",
          "how can i {v} using {p}", "{p} option to {v}")
_NAME_Q = ("What does {p} do?", "what is {p}", "What is {p} for?", "what is {p} used for",
           "{p}?", "What does the {p} command do?")
_NAME_Q5 = ("What is {p}?", "what is the {p} file", "What is the {p} file for?", "{p} file?")
_FILE_Q = ("What is {f} for in {p}?", "what is {f}", "What does {p} use {f} for?",
           "{p} {f} file", "what is the file {f} used for")
_ENV_Q = ("What does the {v} environment variable do in {p}?", "what is {v} for",
          "{p} {v}", "What does {v} do?", "what is the {v} env var in {p}")
_ENV_WHICH_Q = ("Which environment variable {v3} in {p}?", "what env var {v3}")
_EXIT_Q = ("What does exit status {n} mean for {p}?", "{p} exit code {n}",
           "what does it mean when {p} returns {n}", "What is exit code {n} of {p}?")
_EXIT_WHICH_Q = ("What exit code does {p} return {c}?", "{p} exit status {c}")


def _ask(rng: random.Random, forms: tuple[str, ...], keep: tuple[str, ...], **kw: str) -> str:
    return styled(rng.choice(forms).format(**kw), rng, keep)


def mine_man(page: ManPage, *, package: str, path: str, seed: int,
             siblings: Iterable[str] = (), rates: Rates = Rates()) -> list[dict]:
    """The records of one manual page; `siblings`: other page names of the same package."""
    # the file's name, not .TH's, keys the page: two files of a package may share a .TH name
    file = path.rsplit("/", 1)[-1].removesuffix(".gz")
    rng = random.Random(f"{seed}:{package}:{file}")
    prog = _program(page)
    base = f"{page.name}({page.section})"
    out = _Out(f"docmining:man:{package}:{file}", base,
               f"docmining man {package} {path}")
    page_text = "\n".join(f"{b.term or ''}\n{b.text}" for s in page.sections for b in s.blocks)
    paras = _paragraphs(page, {"NAME", "SYNOPSIS", "SEE ALSO", "AUTHOR", "AUTHORS", "COPYRIGHT",
                               "REPORTING BUGS"})
    is_file_page = page.section.startswith("5")
    synopsis = _synopsis(page, rng=random.Random(f"{seed}:{package}:{file}:mention"))
    detail_rng = random.Random(f"{seed}:{package}:{file}:detail")  # own rng, as `_synopsis`'s

    parsed = _name_line(page)
    if parsed:
        names, desc = parsed
        line = f"{', '.join(names)} - {desc}"
        head = "NAME\n\n" if rng.random() < rates.heading else ""
        context = f"{head}{line}"
        descr = page.find("DESCRIPTION")
        if descr and descr[0].blocks and rng.random() < 0.5:
            context += f"\n\nDESCRIPTION\n\n{descr[0].blocks[0].text}"
        start = len(head) + len(line) - len(desc)
        q = _ask(rng, _NAME_Q5 if is_file_page else _NAME_Q, (prog,), p=prog)
        out.add("name", prog, q, context, "NAME", (desc, start))
        others = sorted(s for s in set(siblings) - set(names)
                        if s and not _mentions(context, s) and s.lower() not in context.lower())
        if others and rng.random() < rates.other_program:
            other = rng.choice(others)
            q = _ask(rng, _NAME_Q5 if is_file_page else _NAME_Q, (other,), p=other)
            out.add("neg-other-program", other, q, context, "NAME", None)

    for sec in page.sections:
        if sec.title in ("NAME", "SYNOPSIS", "SEE ALSO"):
            continue
        entries: list[tuple[str | None, str]] = [(b.term, b.text) for b in sec.blocks
                                                 if b.term and b.text]
        if not entries:
            if sec.title.startswith("EXIT") or sec.title in ("RETURN VALUE", "DIAGNOSTICS"):
                _exit_paragraphs(out, sec.title, sec.blocks, prog, rng, paras, rates)
            continue
        _entries(out, sec.title, entries, prog, rng, page_text, paras, rates, synopsis,
                 detail_rng)
    return out.records


def _synopsis(page: ManPage, *, rng: random.Random) -> tuple[str, random.Random] | None:
    """The NAME line and SYNOPSIS as one passage (for `neg-mention`), with the rule's own rng.

    Its own generator, so that adding the rule left every other record of a page as it was.
    """
    text = "\n".join(b.text for s in page.find("SYNOPSIS") for b in s.blocks).strip()
    if not _FLAG.search(text):
        return None
    name = page.find("NAME")
    head = name[0].blocks[0].text if name and name[0].blocks else ""
    return (f"NAME\n\n{head}\n\nSYNOPSIS\n\n{text}" if head else f"SYNOPSIS\n\n{text}"), rng


def _entries(out: _Out, title: str, entries: list[tuple[str | None, str]], prog: str,
             rng: random.Random, page_text: str, paras: list[tuple[str, str]],
             rates: Rates, synopsis: tuple[str, random.Random] | None = None,
             detail_rng: random.Random | None = None) -> None:
    """Records for the tagged entries of one section (options, files, variables, exit values)."""
    exit_section = title.startswith("EXIT") or title in ("RETURN VALUE", "EXIT CODES")
    chosen = list(range(len(entries)))
    if len(chosen) > _MAX_ENTRIES:
        chosen = sorted(rng.sample(chosen, _MAX_ENTRIES))
    for i in chosen:
        term, desc = entries[i]
        assert term is not None
        answer = _first_sentence(desc)
        if len(answer) < 3:
            continue
        kind, avoid, q, how_q = "", [term], "", None
        if _OPTION_TERM.match(term) and not exit_section:
            flags = _FLAG.findall(term)
            if not flags:
                continue
            f = rng.choice(flags)
            kind, avoid = "option", flags
            q = _ask(rng, _OPTION_Q, (prog, f), f=f, p=prog)
            vp = verb_phrase(desc)
            if vp and rng.random() < rates.how:
                how_q = _ask(rng, _HOW_Q, (prog,), v=vp, v3=third_person(vp), p=prog)
        elif exit_section and _EXIT_VALUE.match(term):
            kind, avoid = "exit", [term]
            q = _ask(rng, _EXIT_Q, (prog,), n=term, p=prog)
            clause = first_clause(desc)
            if clause and clause.split()[0].lower() in ("if", "when", "on"):
                how_q = _ask(rng, _EXIT_WHICH_Q, (prog,), p=prog, c=clause.lower())
        elif title.startswith("ENVIRONMENT") and _ENV_TERM.match(term):
            var = _ENV_TERM.match(term).group(1)  # type: ignore[union-attr]
            kind, avoid = "env", [var]
            q = _ask(rng, _ENV_Q, (prog, var), v=var, p=prog)
            vp = verb_phrase(desc)
            if vp:
                how_q = _ask(rng, _ENV_WHICH_Q, (prog,), v3=third_person(vp), p=prog)
        elif title.startswith("FILES") and _PATH_TERM.match(term):
            kind, avoid = "file", [term]
            q = _ask(rng, _FILE_Q, (prog, term), f=term, p=prog)
        else:
            continue
        lo, hi = _window(len(entries), i, rng)
        head = title if rng.random() < rates.heading else None
        context, starts = _render(entries[lo:hi], head)
        t0, d0 = starts[i - lo]
        out.add(kind, term, q, context, title, (answer, d0))
        if how_q:
            which = {"option": "option-how", "env": "env-which", "exit": "exit-which"}[kind]
            out.add(which, term, how_q, context, title, (term, t0))
        if rng.random() < rates.neighbour:
            side = _neighbours(entries, i, rng, avoid + [answer])
            if side:
                ctx, _ = _render(side, head)
                out.add("neg-neighbour", term, q, ctx, title, None)
        if rng.random() < rates.absent and kind in ("option", "env", "exit"):
            if kind == "option":
                f0 = _FLAG.findall(term)[0]
                absent = _absent_flag(f0, page_text, rng)
                aq = _ask(rng, _OPTION_Q, (prog, absent or ""), f=absent or "", p=prog)
            elif kind == "env":
                absent = rng.choice([v for v in _COMMON_ENV if not _mentions(page_text, v)]
                                    or [None])  # type: ignore[list-item]
                aq = _ask(rng, _ENV_Q, (prog, absent or ""), v=absent or "", p=prog)
            else:
                absent = rng.choice([v for v in _ABSENT_EXIT
                                     if not _mentions(context, v)] or [None])  # type: ignore[list-item]
                aq = _ask(rng, _EXIT_Q, (prog,), n=absent or "", p=prog)
            if absent:
                out.add("neg-absent", absent, aq, context, title, None)
        if rng.random() < rates.other_section:
            _other_section(out, (kind, term), q, [p for p in paras if p[0] != title],
                           avoid + [answer], rng)
        if kind == "option" and synopsis is not None:
            text, mention_rng = synopsis
            asked = _FLAG.findall(q)
            if asked and all(_mentions(text, a) for a in asked) and answer not in text \
                    and mention_rng.random() < rates.mention:
                out.add("neg-mention", term, q, text, "SYNOPSIS", None)
        if kind == "option" and detail_rng is not None:
            _default(out, (term, f, prog, title), desc, (context, d0), detail_rng, rates.detail)


_DEFAULT = re.compile(r"\bdefaults?\b", re.I)
_SENTENCE_OR_PARAGRAPH = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])|\n[ \t]*\n")
_DEFAULT_Q = ("What is the default for {f} in {p}?", "what does {f} default to in {p}",
              "{p} {f} default", "What is the default value of the {f} option of {p}?",
              "what's the default {f} in {p}")


def _sentence_matching(text: str, pattern: re.Pattern[str]) -> tuple[str, int] | None:
    """The first sentence of `text` (a blank line ends one too) that `pattern` finds, and where."""
    pos = 0
    for piece in _SENTENCE_OR_PARAGRAPH.split(text):
        start = text.index(piece, pos)
        pos = start + len(piece)
        if pattern.search(piece):
            return piece.strip(), start + len(piece) - len(piece.lstrip())
    return None


def _default(out: _Out, what: tuple[str, str, str, str], desc: str, passage: tuple[str, int],
             rng: random.Random, rate: float) -> None:
    """`detail` when the option's entry states its default, else (at `rate`) `neg-detail`."""
    term, flag, prog, title = what
    context, d0 = passage
    q = _ask(rng, _DEFAULT_Q, (prog, flag), f=flag, p=prog)
    hit = _sentence_matching(desc, _DEFAULT)
    if hit is not None:
        out.add("detail", term, q, context, title, (hit[0], d0 + hit[1]))
        return
    asked = re.compile(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", re.I)
    stated = any(_DEFAULT.search(p) and asked.search(p)
                 for p in _SENTENCE_OR_PARAGRAPH.split(context))
    if not stated and rng.random() < rate:  # no sentence gives a default for this flag
        out.add("neg-detail", term, q, context, title, None)


def _exit_paragraphs(out: _Out, title: str, blocks: list[Block], prog: str,
                     rng: random.Random, paras: list[tuple[str, str]], rates: Rates) -> None:
    """Exit values stated in prose ("0 if OK, 1 if minor problems")."""
    for b in blocks:
        for m in _EXIT_IN_TEXT.finditer(b.text):
            n, meaning = m.group(1), m.group(0)[len(m.group(1)):].lstrip(", ")
            start = m.start() + m.group(0).index(meaning)
            head = title if rng.random() < rates.heading else None
            context = f"{head}\n\n{b.text}" if head else b.text
            off = len(context) - len(b.text)
            q = _ask(rng, _EXIT_Q, (prog,), n=n, p=prog)
            out.add("exit", n, q, context, title, (meaning, off + start))
            if rng.random() < rates.absent:
                cands = [v for v in _ABSENT_EXIT if not _mentions(context, v)]
                if cands:
                    v = rng.choice(cands)
                    out.add("neg-absent", v, _ask(rng, _EXIT_Q, (prog,), n=v, p=prog), context,
                            title, None)
            if rng.random() < rates.other_section:
                _other_section(out, ("exit", n), q,
                               [p for p in paras if "exit" not in p[1].lower()
                                and p[0] != title], [n, meaning], rng)


_TERM_Q = ("What is {t}?", "what does {t} mean", "{t}?", "what is {t} in {h}", "explain {t}",
           "What does {t} do?")
_CELL_Q = ("What is the {h} of {k}?", "{k} {h}", "what {h} does {k} have", "{h} for {k}?",
           "What is {k}'s {h}?")
_TERM_OPTION_Q = ("What does the {f} option do?", "what does {f} do", "{f} option?")


def _table_passage(header: list[str], rows: list[list[str]], heading: str | None
                   ) -> tuple[str, list[list[int]]]:
    """A Markdown pipe table (as the runtime renders HTML tables) and each cell's offset."""
    def line(cells: list[str]) -> tuple[str, list[int]]:
        offs, s = [], "|"
        for c in cells:
            s += " "
            offs.append(len(s))
            s += c + " |"
        return s, offs

    text = f"{heading}\n\n" if heading else ""
    head, _ = line([h.replace("|", "/") for h in header])
    text += head + "\n" + "|" + "---|" * len(header)
    offsets: list[list[int]] = []
    for r in rows:
        s, offs = line(r)
        text += "\n"
        offsets.append([len(text) + o for o in offs])
        text += s
    return text, offsets


def mine_html(lists: list[DefList], tables: list[Table], *, package: str, path: str,
              seed: int, other_terms: Iterable[str] = (), other_keys: Iterable[str] = (),
              rates: Rates = Rates()) -> list[dict]:
    """The records of one HTML page's definition lists and header-celled tables.

    `other_terms` / `other_keys`: terms and row keys of the package's other pages, the pool that
    `neg-absent` questions draw from (never one that the passage mentions).
    """
    rng = random.Random(f"{seed}:{package}:{path}")
    page = path.rsplit("/", 1)[-1]
    out = _Out(f"docmining:html:{package}:{page}", f"{package} {page}",
               f"docmining html {package} {path}")
    pool_terms = sorted(set(other_terms))
    pool_keys = sorted(set(other_keys))
    for dl in lists:
        entries: list[tuple[str | None, str]] = [(t, d) for t, d in dl.entries]
        chosen = list(range(len(entries)))
        if len(chosen) > _MAX_ENTRIES:
            chosen = sorted(rng.sample(chosen, _MAX_ENTRIES))
        for i in chosen:
            term, desc = dl.entries[i]
            answer = _first_sentence(desc)
            flags = _FLAG.findall(term) if _OPTION_TERM.match(term) else []
            key = flags[0] if flags else term.rstrip(":").strip()
            if len(key.split()) > 6 or len(answer) < 3:
                continue
            about = dl.heading or package
            if flags:
                q = _ask(rng, _TERM_OPTION_Q, (key,), f=key)
            else:
                q = _ask(rng, _TERM_Q, (key,), t=key, h=about)
            lo, hi = _window(len(entries), i, rng)
            head = dl.heading if dl.heading and rng.random() < rates.heading else None
            context, starts = _render(entries[lo:hi], head)
            out.add("term", key, q, context, dl.heading, (answer, starts[i - lo][1]))
            if rng.random() < rates.neighbour:
                side = _neighbours(entries, i, rng, [key, answer])
                if side:
                    out.add("neg-neighbour", key, q, _render(side, head)[0], dl.heading, None)
            if rng.random() < rates.absent and not flags:
                cands = [t for t in pool_terms if len(t.split()) <= 6
                         and t.lower() not in context.lower()]
                if cands:
                    other = rng.choice(cands)
                    out.add("neg-absent", other, _ask(rng, _TERM_Q, (other,), t=other, h=about),
                            context, dl.heading, None)
    for table in tables:
        if sum(bool(_VERSION.match(r[0])) for r in table.rows) * 2 >= len(table.rows):
            continue  # a change history ("v8.2.0 | Renamed from ..."): no student asks by version
        # a pipe in a cell would end it in the Markdown rendering: it is read as a slash
        rows = [[c.replace("|", "/") for c in r] for r in table.rows]
        chosen = list(range(len(rows)))
        if len(chosen) > _MAX_ENTRIES:
            chosen = sorted(rng.sample(chosen, _MAX_ENTRIES))
        for i in chosen:
            key = rows[i][0]
            if len(key.split()) > 8:
                continue
            cols = [j for j in range(1, len(table.header))
                    if rows[i][j] and rows[i][j] != key and len(rows[i][j]) <= 200]
            for j in sorted(rng.sample(cols, min(2, len(cols)))):
                h = table.header[j].lower() if not table.header[j].isupper() else table.header[j]
                q = _ask(rng, _CELL_Q, (key, h), h=h, k=key)
                lo, hi = max(0, i - rng.randint(0, 3)), min(len(rows), i + 1 + rng.randint(0, 3))
                head = table.heading if table.heading and rng.random() < rates.heading else None
                context, offs = _table_passage(table.header, rows[lo:hi], head)
                out.add("cell", f"{key}.{h}", q, context, table.heading,
                        (rows[i][j], offs[i - lo][j]))
                if rng.random() < rates.neighbour:
                    others = [r for r in rows[max(0, i - 3): i] + rows[i + 1: i + 4]
                              if key.lower() not in " ".join(r).lower()]
                    if others:
                        ctx, _ = _table_passage(table.header, others, head)
                        out.add("neg-neighbour", f"{key}.{h}", q, ctx, table.heading, None)
                if rng.random() < rates.absent:
                    cands = [k for k in pool_keys if k.lower() not in context.lower()
                             and len(k.split()) <= 8]
                    if cands:
                        other = rng.choice(cands)
                        out.add("neg-absent", f"{other}.{h}",
                                _ask(rng, _CELL_Q, (other, h), h=h, k=other), context,
                                table.heading, None)
    return out.records
