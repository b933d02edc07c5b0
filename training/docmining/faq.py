"""Question and answer pairs from the FAQs documentation ships (`python -m training.docmining.faq`).

The template questions of `mine.py` ("what does -x do in X") are one shape; the questions people
ask are another ("Why is int() broken?", "How do I keep my own module directory?"). A FAQ holds
both halves written by people: each question is a heading and its answer the paragraphs under
it. Two layouts are read:

- manual pages whose subsections are questions (perl-doc's perlfaq1..9: `.SS "How do I ...?"`);
- reStructuredText sources whose section titles are questions (python3.x-doc's
  html/_sources/faq/*.rst.txt);
- HTML pages where a heading, a definition term or a paragraph in bold asks (SQLite's faq.html,
  FFmpeg's, fetchmail's, the Debian FAQ): the blocks after it, up to the next heading or
  question, are its answer. Any installed HTML page with at least `MIN_HTML_QUESTIONS` such
  questions counts, so a manual whose section titles ask is read too.

Per question, a positive (the question, its answer's opening paragraphs, the first sentence of
substance as the span) and a negative (`neg-faq`: the question against the answer of another
question of the same FAQ page, the same subject and not the asked fact). Records are in the
format of ../shared/data/train; the page is the article, so a page is held out whole.
Packages named in ../shared/data/books/EXCLUDE are never read.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

from training.docmining.roff import parse_man
from training.docmining.sources import (
    DEFAULT_EXCLUDE,
    PackageIndex,
    is_forbidden,
    licence_of,
    read_doc,
    read_exclude,
)

__all__ = ["faq_entries_html", "faq_entries_man", "faq_entries_rst", "faq_records", "main"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'“])")
_ATTRIBUTION = re.compile(r"^\(?(contributed|updated|answered) by\b", re.I)
_RST_TITLE_LINE = re.compile(r"^([=\-~^\"'`#*+])\1{3,}\s*$")
_RST_ROLE = re.compile(r":[a-z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_RST_LINK = re.compile(r"`([^`<]+?)\s*<[^>]*>`_+")
# "(1) ", "1.2. ", "G1. ", "3.2 ": the number an HTML FAQ gives its question
_NUMBERING = re.compile(r"^(?:\(\d+\)|[A-Z]?\d+(?:\.\d+)*\.?)\s+")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLOCKS = (*_HEADINGS, "p", "pre", "li", "dt", "dd")
MIN_HTML_QUESTIONS = 3
"""An HTML page is read as a FAQ when at least this many of its headings or terms ask."""


def _clean_rst(text: str) -> str:
    text = _RST_ROLE.sub(r"\1", text)
    text = _RST_LINK.sub(r"\1", text)
    text = text.replace("``", "").replace("`_", "")
    return re.sub(r"[ \t]+", " ", text).strip()


def faq_entries_rst(source: str) -> list[tuple[str, list[str]]]:
    """(question, answer paragraphs) for each section title of an rst page that asks."""
    lines = source.splitlines()
    entries: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] | None = None
    para: list[str] = []

    def flush() -> None:
        if current is not None and para:
            text = _clean_rst(" ".join(s.strip() for s in para))
            if text and not text.startswith(".. "):
                current[1].append(text)
        para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _RST_TITLE_LINE.match(nxt) and len(nxt.strip()) >= len(line.strip()):
            flush()
            title = _clean_rst(line)
            current = (title, []) if title.endswith("?") else None
            if current is not None:
                entries.append(current)
            i += 2
            continue
        if not line.strip():
            flush()
        elif line.strip() != "::" and not _RST_TITLE_LINE.match(line):  # nor an overline
            # "text::" opens a literal block and reads "text:"; a bare "::" reads nothing
            para.append(line.rstrip()[:-1] if line.rstrip().endswith("::") else line)
        i += 1
    flush()
    return [(q, ps) for q, ps in entries if ps]


def _html_question(el: object) -> str | None:
    """The question an HTML block asks: a heading or term, or a paragraph all in bold."""
    from bs4 import Tag

    if not isinstance(el, Tag):
        return None
    text = " ".join(el.get_text(" ", strip=True).split())
    text = _NUMBERING.sub("", text.replace(" ?", "?")).strip()
    if not text.endswith("?") or not 3 <= len(text.split()) <= 40:
        return None
    if el.name in (*_HEADINGS, "dt"):
        return text
    if el.name == "p":
        bold = " ".join(b.get_text(" ", strip=True) for b in el.find_all(["b", "strong"]))
        if bold and len(" ".join(bold.split())) >= 0.9 * len(el.get_text(" ", strip=True)):
            return text
    return None


def faq_entries_html(html: str) -> list[tuple[str, list[str]]]:
    """(question, answer blocks) for each heading, term or bold paragraph of a page that asks.

    The page is read as a run of blocks (headings, paragraphs, preformatted text, list items,
    definition terms and descriptions; a block inside another is part of it); a question's
    answer is the blocks after it up to the next heading or question.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "nav", "footer", "noscript", "template"]):
        tag.decompose()
    for tag in soup.find_all("a"):  # a heading's permalink marks are no part of its text
        if tag.get("aria-hidden") == "true" or {"headerlink", "anchor"} & set(tag.get("class")
                                                                              or []):
            tag.decompose()
    entries: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for el in soup.find_all(_BLOCKS):
        if el.find_parent(_BLOCKS) is not None:
            continue
        question = _html_question(el)
        if question is not None:
            current = []
            entries.append((question, current))
            continue
        if el.name in _HEADINGS:
            current = None
            continue
        if current is not None:
            if el.name == "pre":
                text = el.get_text().strip("\n")
            else:
                text = " ".join(el.get_text(" ", strip=True).split())
            if text:
                current.append(text)
    return [(q, ps) for q, ps in entries if ps]


def faq_entries_man(source: str) -> list[tuple[str, list[str]]]:
    """(question, answer paragraphs) for each subsection of a manual page that asks."""
    page = parse_man(source)
    # the parser upper-cases section titles; the question is written back in sentence case
    return [(s.title[0] + s.title[1:].lower(), [b.text for b in s.blocks if b.text.strip()])
            for s in page.sections if s.title.endswith("?") and s.blocks]


def _span(paragraphs: list[str]) -> tuple[str, str] | None:
    """The answer's passage and its first sentence of substance.

    The passage is the opening paragraphs (about 900 characters) without an attribution
    ("(contributed by ...)"); the sentence has at least five words.
    """
    kept = [p for p in paragraphs if not _ATTRIBUTION.match(p)]
    passage, size = [], 0
    for p in kept:
        if size and size + len(p) > 900:
            break
        passage.append(p)
        size += len(p)
    if not passage:
        return None
    for paragraph in passage:  # a code line before the prose is no answer sentence
        for sentence in _SENTENCE_END.split(paragraph):
            if len(sentence.split()) >= 5:
                return "\n\n".join(passage), sentence.strip()
    return None


def faq_records(entries: list[tuple[str, list[str]]], *, page: str, package: str, path: str,
                seed: int) -> list[dict]:
    """Positives and `neg-faq` negatives of one FAQ page, deterministic for a seed."""
    rng = random.Random(f"{seed}:faq:{page}")
    spans = [(q, _span(ps)) for q, ps in entries]
    usable = [(q, s) for q, s in spans if s is not None]
    out: list[dict] = []
    for i, (question, (passage, sentence)) in enumerate(usable):
        base = {"title": f"{package}:{page} / {question[:80]}",
                "source": f"docmining faq {package} {path}"}
        start = passage.find(sentence)
        out.append({"id": f"docmining:faq:{package}:{page}:{i}:faq:0", "question": question,
                    "context": passage, "answers": [{"text": sentence, "start": start}],
                    "is_impossible": False, **base})
        others = [j for j in range(len(usable)) if j != i]
        if others:
            # a nearby question of the same page first: the same subject, another fact
            near = [j for j in others if abs(j - i) <= 3]
            j = rng.choice(near or others)
            out.append({"id": f"docmining:faq:{package}:{page}:{i}:neg-faq:0",
                        "question": question, "context": usable[j][1][0], "answers": [],
                        "is_impossible": True, **base})
    return out


# "?" closing a heading, term or bold text, past any permalink marks ("#", "TOC", "¶")
_ASKS_HTML = re.compile(r"\?(?:\s|<[^>]*>|[#¶]|TOC){0,40}</(?:h[1-6]|dt|b|strong)>", re.I)


def find_faqs(man_root: Path, doc_root: Path) -> list[tuple[str, Path]]:
    """(layout, path) of the FAQ pages installed.

    perlfaqN man pages, rst FAQ sources, and HTML pages with at least MIN_HTML_QUESTIONS
    headings, terms or bold paragraphs that ask.
    """
    found = [("man", p) for p in sorted(man_root.glob("man1/perlfaq[0-9]*.1*"))]
    found += [("rst", p) for p in sorted(doc_root.glob("*/html/_sources/faq/*.rst.txt"))
              if p.name != "index.rst.txt"]
    for p in sorted(doc_root.rglob("*.htm*")):
        if p.suffix in (".html", ".htm") and p.is_file() and not is_forbidden(p):
            # a cheap look first: a closing heading, term or bold right after a "?"
            if len(_ASKS_HTML.findall(read_doc(p))) >= MIN_HTML_QUESTIONS:
                found.append(("html", p))
    unique: dict[Path, tuple[str, Path]] = {}  # a doc folder reached through a link: once
    for layout, p in found:
        unique.setdefault(p.resolve(), (layout, p))
    return list(unique.values())


def run(args: argparse.Namespace) -> dict:
    """Mine every FAQ page found into OUT/docmining-faq.jsonl; return the counts."""
    patterns = read_exclude(Path(args.exclude))
    index = PackageIndex.from_dpkg(Path(args.dpkg_info), Path(args.dpkg_status))
    records: list[dict] = []
    pages = []
    asked: set[tuple[str, str]] = set()
    for layout, path in find_faqs(Path(args.man_root), Path(args.doc_root)):
        package = index.package_of(path)  # the file, or the one a link names
        if package is None or index.excluded(package, patterns) or is_forbidden(path):
            continue
        text = read_doc(path)
        reader = {"man": faq_entries_man, "rst": faq_entries_rst, "html": faq_entries_html}
        # a question already read from the same package (python's FAQ as rst source and as
        # its HTML rendering) is read once
        entries = [(q, ps) for q, ps in reader[layout](text)
                   if (package, q.lower()) not in asked]
        asked.update((package, q.lower()) for q, _ in entries)
        if layout == "html" and len(entries) < MIN_HTML_QUESTIONS:
            continue
        page = path.name.split(".")[0]
        recs = faq_records(entries, page=page, package=package, path=str(path),
                           seed=args.seed)
        pages.append({"package": package, "source_package": index.source_of(package),
                      "page": page, "questions": len(entries), "records": len(recs),
                      "licence": licence_of(package, Path(args.doc_root)).summary})
        records += recs
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "docmining-faq.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    summary = {"records": len(records), "positives": sum(not r["is_impossible"] for r in records),
               "pages": pages}
    (out / "faq-sources.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def main(argv: list[str] | None = None) -> None:
    """Entry point."""
    p = argparse.ArgumentParser(prog="python -m training.docmining.faq",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/docmining")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--man-root", default="/usr/share/man")
    p.add_argument("--doc-root", default="/usr/share/doc")
    p.add_argument("--exclude", default=str(DEFAULT_EXCLUDE))
    p.add_argument("--dpkg-info", default="/var/lib/dpkg/info")
    p.add_argument("--dpkg-status", default="/var/lib/dpkg/status")
    summary = run(p.parse_args(argv))
    json.dump({k: v for k, v in summary.items() if k != "pages"}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
