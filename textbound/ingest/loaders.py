"""Loading one file (Markdown, text, HTML, PDF) or a benchmark JSONL corpus as Documents."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from textbound.ingest.documents import MAX_FILE_BYTES, SUPPORTED_SUFFIXES, Document, SkipFile
from textbound.ingest.outline import first_title
from textbound.text import LONE_SURROGATE


def _read_text(path: Path) -> str:
    size = path.stat().st_size
    if size == 0:
        raise SkipFile("empty file")
    if size > MAX_FILE_BYTES:
        raise SkipFile(f"too large ({size:,} bytes; the limit is {MAX_FILE_BYTES:,})")
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise SkipFile("binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkipFile(f"not valid UTF-8 (byte {exc.start}); re-save it as UTF-8") from exc
    if not text.strip():
        raise SkipFile("no text (only whitespace)")
    return text.replace("\r\n", "\n").replace("\r", "\n")


_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)


def _hidden(tag: Any) -> bool:
    """Whether an element is not shown: `hidden`, `aria-hidden="true"` or a hiding style."""
    attrs = getattr(tag, "attrs", None) or {}
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).strip().lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(str(attrs.get("style", ""))))


def _html_to_markdown(html: str) -> tuple[str, str | None]:
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(html, "html.parser")
    # a reader never sees comments, scripts, styles or hidden elements, so neither may an answer
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    for tag in soup(["script", "style", "nav", "footer", "noscript", "template"]):
        tag.decompose()
    for tag in soup.find_all(_hidden):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    lines: list[str] = []
    body = soup.body or soup
    for el in body.find_all(["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "td",
                             "blockquote"]):
        if el.find_parent(["p", "li", "pre", "td", "blockquote"]) is not None:
            continue
        text = el.get_text("\n" if el.name == "pre" else " ", strip=el.name != "pre")
        if not text.strip():
            continue
        if el.name and el.name[0] == "h" and el.name[1:].isdigit():
            lines.append("#" * int(el.name[1:]) + " " + " ".join(text.split()))
        elif el.name == "pre":
            lines.append("```\n" + text.strip("\n") + "\n```")
        elif el.name == "li":
            lines.append("- " + " ".join(text.split()))
        else:
            lines.append(" ".join(text.split()))
    return "\n\n".join(lines) + "\n", title


def _load_pdf(path: Path) -> Document:
    from textbound.pdf import PdfError, read_pdf

    try:
        parsed = read_pdf(path)
    except PdfError as exc:
        raise SkipFile(str(exc)) from exc
    ends = [start for _, start in parsed.page_starts[1:]] + [len(parsed.text)]
    pages = [(page, start, end)
             for (page, start), end in zip(parsed.page_starts, ends, strict=True)]
    return Document(source="", title=parsed.title or path.stem, text=parsed.text, kind="pdf",
                    pages=pages)


def load_file(path: Path, source: str) -> Document:
    """Load one file as a Document, or raise SkipFile saying why it cannot be used."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise SkipFile(f"unsupported file type {suffix or '(none)'}")
    if suffix == ".pdf":
        if path.stat().st_size == 0:
            raise SkipFile("empty file")
        doc = _load_pdf(path)
    elif suffix in (".html", ".htm"):
        md, title = _html_to_markdown(_read_text(path))
        if not md.strip():
            raise SkipFile("HTML has no text")
        doc = Document(source="", title=title or path.stem, text=md, kind="html")
    else:
        text = _read_text(path)
        doc = Document(source="", title=path.stem, text=text,
                       kind="markdown" if suffix in (".md", ".markdown") else "text")
        if doc.kind == "markdown":
            doc.title = first_title(text) or doc.title
    doc.source = source
    doc.path = str(path.resolve())
    return doc


def iter_jsonl_documents(path: Path) -> Iterator[Document | tuple[str, str]]:
    """Yield Documents from a benchmark corpus (`{doc_id, title, text}` per line).

    A malformed line (invalid JSON, bytes that are not UTF-8, text that is not valid Unicode)
    yields (location, reason) instead, so the caller can report it and go on with the rest.
    """
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            where = f"{path.name}:{number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield where, f"not valid UTF-8 (byte {exc.start}); re-save it as UTF-8"
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield where, f"invalid JSON ({exc.msg})"
                continue
            if not isinstance(row, dict):
                yield where, "not a JSON object"
                continue
            doc_id, text = row.get("doc_id"), row.get("text")
            if not isinstance(doc_id, str) or not doc_id.strip():
                yield where, "missing doc_id"
                continue
            if not isinstance(text, str) or not text.strip():
                yield where, f"{doc_id}: missing or empty text"
                continue
            raw_title = row.get("title")
            title = raw_title if isinstance(raw_title, str) else doc_id
            if any(LONE_SURROGATE.search(v) for v in (doc_id, title, text)):
                yield where, f"{doc_id!a}: text that is not valid Unicode (a lone surrogate escape)"
                continue
            yield Document(source=doc_id, title=title, text=text, kind="jsonl")

