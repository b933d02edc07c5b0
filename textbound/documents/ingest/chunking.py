"""Chunking: a document cut into passages by headings, paragraphs and sentences, with pages."""

from __future__ import annotations

import re
import uuid
from typing import Any

from textbound.documents.ingest.documents import Chunk, Document
from textbound.documents.ingest.outline import Outline, outline
from textbound.text import normalize, sentence_spans
from textbound.text.units import FENCE, TABLE_RULE, is_caption, opens_block

_ID_NAMESPACE = uuid.UUID("6f1c3e0a-4b7e-5d2a-9c1f-7465787462f1")
TARGET_CHARS = 700
MAX_CHARS = 1100

def _sections(doc: Document, outline: Outline) -> list[tuple[list[str], int, int]]:
    """Split a document into (heading path, body start, body end), following ATX headings."""
    if doc.kind not in ("markdown", "html", "pdf"):
        return [([doc.title], 0, len(doc.text))]
    out: list[tuple[list[str], int, int]] = []
    path: list[tuple[int, str]] = []
    cursor, current = 0, [doc.title]
    for h in outline.headings:
        if h.start > cursor:
            out.append((current, cursor, h.start))
        path = [p for p in path if p[0] < h.level] + [(h.level, h.title)]
        current = [p[1] for p in path]
        if path[0][0] != 1 and normalize(path[0][1]) != normalize(doc.title):
            current = [doc.title] + current  # not when the page's top heading is its title
        cursor = h.end
    out.append((current, cursor, len(doc.text)))
    return out


def _pieces(text: str, start: int, end: int, outline: Outline) -> list[tuple[int, int]]:
    """Cut text[start:end] into passages of about TARGET_CHARS on paragraph/sentence bounds."""
    blocks: list[tuple[int, int]] = []
    pos = start
    block_start = None
    for line in re.finditer(r"[^\n]*\n?", text[start:end]):
        if not line.group(0):
            break
        s = start + line.start()
        if not line.group(0).strip() and not outline.in_fence(s):  # a blank line ends a block
            if block_start is not None:
                blocks.append((block_start, s))
                block_start = None
        elif block_start is None:
            block_start = s
        pos = start + line.end()
    if block_start is not None:
        blocks.append((block_start, pos))
    # split over-long blocks by sentences (a table by rows, so a row is never cut)
    units: list[tuple[int, int]] = []
    for b_start, b_end in blocks:
        if b_end - b_start <= MAX_CHARS:
            units.append((b_start, b_end))
            continue
        rows = _table_rows(text, b_start, b_end)
        spans = rows or sentence_spans(text, b_start, b_end) or [(b_start, b_end)]
        for s, e in spans:
            while e - s > MAX_CHARS:  # a "sentence" longer than a chunk: cut at a space
                cut = text.rfind(" ", s, s + MAX_CHARS)
                cut = cut if cut > s else s + MAX_CHARS
                units.append((s, cut))
                s = cut + 1 if text[cut:cut + 1] == " " else cut
            if e > s:
                units.append((s, e))
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    last = 0  # where the last unit of `cur` starts: a lead-in moves with the block it introduces
    bound = 0  # where the run of units bound to each other (a lead-in, its block, the clause
    # going on from the block) starts: the run moves to the next passage whole
    led = False  # whether the last unit was bound to the lead-in before it
    for u in units:
        if cur is None:
            cur, last, bound = u, u[0], u[0]
            continue
        # a caption between a lead-in and its block passes the binding on ("... the following
        # table:", "Graph Border Encoding", then the table)
        titled = led and is_caption(text[last:cur[1]])
        leads = _leads_in(text[last:cur[1]], text[u[0]:u[1]]) or (
            titled and opens_block(text[u[0]:u[1]]))
        led = leads
        # a passage that would be only a lead-in ("... as follows:"), or a lead-in and a
        # caption, joins its block, whatever the block's length: alone it answers nothing
        alone = (last == cur[0] and text[last:cur[1]].rstrip().endswith(":")) or (
            leads and titled and bound == cur[0])
        if u[1] - cur[0] <= TARGET_CHARS or (cur[1] - cur[0] < TARGET_CHARS // 3
                                             and u[1] - cur[0] <= MAX_CHARS) or (
                leads and (u[1] - cur[0] <= MAX_CHARS or alone)):
            cur = (cur[0], u[1])
        elif leads and last > cur[0]:
            # "... use:" then a code block that does not fit: the lead-in goes with its block,
            # and so does the lead-in of a block that a clause goes on from
            start = bound if cur[0] < bound and u[1] - bound <= MAX_CHARS else last
            out.append((cur[0], start))
            cur = (start, u[1])
        else:
            out.append(cur)
            cur = u
        bound = bound if leads and cur[0] <= bound else u[0]
        last = u[0]
    if cur is not None:
        out.append(cur)
    return [(s, e) for s, e in out if text[s:e].strip()]


def _leads_in(before: str, block: str) -> bool:
    """Whether a paragraph introduces the block after it and must stay with it.

    A paragraph right before a code block introduces it ("To delete the objects of every
    target, use:", "... you may force the update with"); one that ends in a colon introduces
    whatever follows (a list, a table). A clause that opens in lower case right after a code
    block ("which prints each line whose third field ...") goes on from it.
    """
    before = before.rstrip()
    if not before or before.lstrip().startswith("#"):
        return False
    if TABLE_RULE.match(before) or TABLE_RULE.match(block):
        # a long table cut row by row: its header, the rule under it and its first row go
        # together, so no passage ends on a header whose rows went on without it
        return before.lstrip().startswith("|") and block.lstrip().startswith("|")
    if FENCE.match(before):  # "which plots ..." goes on from the code before it
        return block[:1].islower()
    return bool(FENCE.match(block)) or before.endswith(":")


def _table_rows(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Return the line spans of text[start:end] when every line is a table row, else []."""
    rows, pos = [], start
    for line in text[start:end].split("\n"):
        if line.strip():
            if not line.lstrip().startswith("|"):
                return []
            rows.append((pos, pos + len(line)))
        pos += len(line) + 1
    return rows


def table_header(text: str, start: int) -> str | None:
    """The header row and rule of the table a passage at `start` opens inside, if any.

    A table longer than a passage is cut row by row; a passage that opens on a later row
    carries its table's header (chunk metadata `table_header`), so its rows read with their
    header cells ("Case: ...; Proposed by: ...").
    """
    line_start = text.rfind("\n", 0, start) + 1
    first_end = text.find("\n", line_start)
    first_end = len(text) if first_end < 0 else first_end
    if not text[line_start:first_end].lstrip().startswith("|"):
        return None
    next_end = text.find("\n", first_end + 1)
    after = text[first_end + 1:len(text) if next_end < 0 else next_end]
    if TABLE_RULE.match(after):  # the passage opens on its own header
        return None
    lines: list[str] = []  # the table's lines before the passage, nearest first
    pos = line_start
    while pos > 0:
        prev = text.rfind("\n", 0, pos - 1) + 1
        line = text[prev:pos - 1]
        if not line.lstrip().startswith("|"):
            break
        lines.append(line)
        pos = prev
    if len(lines) < 2 or not TABLE_RULE.match(lines[-2]):
        return None
    return lines[-1] + "\n" + lines[-2]


def _page_of(doc: Document, pos: int) -> int | None:
    page = None
    for number, start, _end in doc.pages:
        if start > pos:
            break
        page = number
    return page


def page_at(metadata: dict[str, Any], offset: int | None) -> int | None:
    """Return the page of a source offset inside a chunk, from the chunk's metadata.

    A chunk records the page it starts on (`page`) and, when it runs onto later pages, where
    each of them starts (`page_starts`, [[offset, page], ...]), so a citation can name the page
    of the sentence it quotes rather than the chunk's first page.
    """
    page = metadata.get("page")
    if offset is None:
        return page
    for start, number, *_label in metadata.get("page_starts") or ():
        if start <= offset:
            page = number
    return page


def page_label_at(metadata: dict[str, Any], offset: int | None) -> str | None:
    """Return the page of a source offset as the book prints it ("18", "xiv"), for citations.

    A chunk records its first page's printed label (`page_label`) and each later page's as the
    third item of its `page_starts` entry. A page the book prints no number on, and a chunk
    stored before labels were kept, fall back to the file's page number; None without a page.
    """
    page, label = metadata.get("page"), metadata.get("page_label")
    if offset is not None:
        for start, number, *rest in metadata.get("page_starts") or ():
            if start <= offset:
                page, label = number, (rest[0] if rest else None)
    if label:
        return str(label)
    return None if page is None else str(page)


def chunk_document(doc: Document, file_hash: str | None = None) -> list[Chunk]:
    """Split a document into chunks with source, heading path, page and character offsets."""
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    blocks = outline(doc.text)
    for path, start, end in _sections(doc, blocks):
        for s, e in _pieces(doc.text, start, end, blocks):
            # trim surrounding whitespace so offsets point at the passage itself
            raw = doc.text[s:e]
            s += len(raw) - len(raw.lstrip())
            e = s + len(raw.strip())
            text = doc.text[s:e]
            occurrence = seen.get(text, 0)
            seen[text] = occurrence + 1
            chunk_id = str(uuid.uuid5(_ID_NAMESPACE, f"{doc.source}\x1f{occurrence}\x1f{text}"))
            meta: dict[str, Any] = {
                "chunk_id": chunk_id,
                "source": doc.source,
                "title": doc.title,
                "heading_path": path,
                "section": " > ".join(path),
                "start": s,
                "end": e,
                "kind": doc.kind,
            }
            header = table_header(doc.text, s)
            if header:
                meta["table_header"] = header
            if blocks.in_fence(s) and (not FENCE.match(text) or blocks.in_fence(s - 1)):
                meta["in_code"] = True  # opens inside a code block, or on its closing fence
            if doc.path:
                meta["path"] = doc.path
            if file_hash:
                meta["file_hash"] = file_hash
            page = _page_of(doc, s) if doc.pages else None
            if page is not None:
                meta["page"] = page
                if page in doc.page_labels:
                    meta["page_label"] = doc.page_labels[page]
                later = [[start, number, *([doc.page_labels[number]]
                                           if number in doc.page_labels else [])]
                         for number, start, _ in doc.pages if s < start < e]
                if later:
                    meta["page_starts"] = later
            chunks.append(Chunk(chunk_id, text, meta))
    return chunks

