"""Loading one file (Markdown, text, HTML, PDF) or a benchmark JSONL corpus as Documents."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from textbound.documents.ingest.documents import (
    MAX_FILE_BYTES,
    SUPPORTED_SUFFIXES,
    Document,
    SkipFile,
)
from textbound.documents.ingest.docx import read_docx
from textbound.documents.ingest.epub import read_epub
from textbound.documents.ingest.html import TOO_SLOW, html_to_markdown
from textbound.documents.ingest.manpage import is_manual_page, manual_blocks
from textbound.documents.ingest.markdown import rendered_markdown
from textbound.documents.ingest.odt import read_odt
from textbound.documents.ingest.outline import first_title
from textbound.text import LONE_SURROGATE

_MAGIC = {b"%PDF-": "a PDF", b"\x89PNG": "a PNG image", b"GIF8": "a GIF image",
          b"\xff\xd8\xff": "a JPEG image",
          b"PK\x03\x04": "a ZIP archive (a Word, OpenDocument or EPUB file: name it .docx, .odt "
                          "or .epub)",
          b"\x1f\x8b": "a gzip archive", b"\xd0\xcf\x11\xe0": "an old Office document",
          b"\x7fELF": "a program", b"Rar!": "a RAR archive", b"7z\xbc\xaf": "a 7-Zip archive"}
"""Leading bytes of file types that are not text, whatever their name says."""
_ARCHIVES: dict[str, tuple[str, Callable[[Path], tuple[str, str | None]], str]] = {
    ".epub": ("an EPUB", read_epub, "html"),
    ".docx": ("a Word document", read_docx, "markdown"),
    ".odt": ("an OpenDocument text", read_odt, "markdown"),
}
"""Formats that are ZIP archives: what each is called, its reader, the kind of its text."""
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def sniff(head: bytes, suffix: str) -> str | None:
    """Return why a file's first bytes are not the type its name declares, or None.

    A PDF must start with `%PDF-`; a text, Markdown or HTML file must not start like a PDF,
    image, archive or program, nor hold NUL or other control bytes (text has none).
    """
    if suffix == ".pdf":
        return None if head.startswith(b"%PDF-") else "not a PDF (it does not start with %PDF-)"
    if suffix in _ARCHIVES:
        what = _ARCHIVES[suffix][0]
        return None if head.startswith(b"PK\x03\x04") else f"not {what} (not a ZIP archive)"
    for magic, what in _MAGIC.items():
        if head.startswith(magic):
            hint = " (name it .pdf)" if magic == b"%PDF-" else ""
            return f"binary file: {what}, not {suffix} text{hint}"
    if b"\x00" in head:
        return "binary file (contains NUL bytes)"
    controls = len(_CONTROL.findall(head))
    if controls > max(2, len(head) // 100):
        return f"binary file ({controls} control bytes in its first {len(head):,})"
    return None


def _read_text(path: Path) -> str:
    size = path.stat().st_size
    if size == 0:
        raise SkipFile("empty file")
    if size > MAX_FILE_BYTES:
        raise SkipFile(f"too large ({size:,} bytes; the limit is {MAX_FILE_BYTES:,})")
    raw = path.read_bytes()
    why = sniff(raw[:8192], path.suffix.lower())
    if why:
        raise SkipFile(why)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkipFile(f"not valid UTF-8 (byte {exc.start}); re-save it as UTF-8") from exc
    if not text.strip():
        raise SkipFile("no text (only whitespace)")
    return text.replace("\r\n", "\n").replace("\r", "\n")


__all__ = ["TOO_SLOW", "iter_jsonl_documents", "load_file", "sniff"]


def _load_pdf(path: Path) -> Document:
    from textbound.documents.pdf import PdfError, read_pdf

    try:
        parsed = read_pdf(path)
    except PdfError as exc:
        raise SkipFile(str(exc)) from exc
    ends = [start for _, start in parsed.page_starts[1:]] + [len(parsed.text)]
    pages = [(page, start, end)
             for (page, start), end in zip(parsed.page_starts, ends, strict=True)]
    return Document(source="", title=parsed.title or path.stem, text=parsed.text, kind="pdf",
                    pages=pages, page_labels=parsed.page_labels)


def load_file(path: Path, source: str, deadline: float | None = None) -> Document:
    """Load one file as a Document, or raise SkipFile saying why it cannot be used.

    `deadline` (a `time.monotonic()` value): an HTML file still being read then is skipped.
    """
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise SkipFile(f"unsupported file type {suffix or '(none)'}")
    if suffix == ".pdf" or suffix in _ARCHIVES:
        if path.stat().st_size == 0:
            raise SkipFile("empty file")
        with path.open("rb") as f:
            why = sniff(f.read(8), suffix)
        if why:
            raise SkipFile(why)
        if suffix == ".pdf":
            doc = _load_pdf(path)
        else:
            _, read, kind = _ARCHIVES[suffix]
            text, title = read(path)
            doc = Document(source="", title=title or path.stem, text=text, kind=kind)
    elif suffix in (".html", ".htm"):
        md, title = html_to_markdown(_read_text(path), deadline)
        if not md.strip():
            raise SkipFile("HTML has no text")
        doc = Document(source="", title=title or path.stem, text=md, kind="html")
    else:
        text = _read_text(path)
        if suffix == ".txt" and is_manual_page(text):  # `man foo > foo.txt`
            doc = Document(source="", title=path.stem, kind="markdown",
                           text="\n\n".join(manual_blocks(text)) + "\n")
        else:
            markdown = suffix in (".md", ".markdown", ".rmd", ".qmd")
            doc = Document(source="", title=path.stem,
                           text=rendered_markdown(text, path.parent) if markdown else text,
                           kind="markdown" if markdown else "text")
            if doc.kind == "markdown":
                doc.title = first_title(doc.text) or doc.title
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

