"""How a book reads after ingestion, with no questions: the loaders' artefacts, counted.

    python -m benchmarks.read_audit /usr/share/doc/zsh-common/zsh.pdf book/ manual.html
    python -m benchmarks.read_audit /usr/share/doc/zsh-common/html --limit 200

Any book a teacher brings is read by the same loaders (textbound/documents/ingest, pdf) and cut
by the same chunker, and what they get wrong shows in the text before any question is asked.
For each path (a file, or a folder read as `textbound ingest` reads one; `--limit` files at
most, in name order) this loads and chunks every document, without embedding anything, and
counts per book:

- `skipped`: files the loaders refuse, with their reasons grouped (a redirect page, no text);
- `passages`, and `short`: passages under 100 characters (a scrap cut from its neighbours, or a
  section of one sentence);
- `mid-sentence`: paragraphs opening in lower case right after a paragraph (not a heading)
  that ends on a letter or a comma (a paragraph cut at a line, a page break or a hanging
  indent);
- `broken words`: "oth- erwise": a word hyphenated at a line end and joined with a space;
- `bullets`: a bullet glyph left in the text instead of a list item, and `controls`: C0/C1
  control characters (a glyph the font's encoding left unmapped);
- `html tags`: HTML tags left in the text outside code (`<td>`: a table written as HTML
  into Markdown and not read as one; `<span class="caption">`);
- `navigation`: passages that are only navigation words ("Table of Contents", "Next Chapter");
- `opens in code`: passages that open inside a code block cut over passages (read as code by
  the chunk's `in_code` mark since the eighteenth session; as sentences before).

A count is a symptom to read, not a score: a book may open a paragraph with a lower-case
command name ("gnuplot supports ...") or print a compound across a line ("upper- and
lower-case"). Compare the same books before and after a loader change (docs/pool.md, "Books
outside the pool").
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from textbound.documents.pdf._paragraphs import BULLETS

__all__ = ["COLUMNS", "audit", "main"]

SHORT = 100
_MID = re.compile(r"(?m)^(?!#)[^\n]*(?:[^\W\d_,]|,)\n\n(?=[a-z])")
"""A paragraph (not a heading: "## 2.3. DESCRIPTION" before "bzip2 compresses ...") ending on a
letter or a comma, the next one opening in lower case."""
_BROKEN = re.compile(r"\b[^\W\d_]{2,}- [a-z]{2,}\b")
_BULLET = re.compile(rf"(?m)^[ \t]*[{BULLETS}]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_NAV = re.compile(r"^(?:[-*\s]*(?:table of contents|contents|index|home|up|top|prev(?:ious)?|next)"
                  r"(?: (?:chapter|section|page|part|topic))?\W*)+$", re.I)


COLUMNS = ("files", "passages", "short", "mid-sentence", "broken words", "bullets", "controls",
           "html tags", "navigation", "opens in code")
_TAG = re.compile(r"</?(?:table|tr|td|th|dl|dt|dd|div|ul|ol|li|pre|span|sup|sub|kbd|em|strong|"
                  r"code|br|img)\b[^>\n]*>", re.I)


def audit(path: Path, limit: int | None = None) -> dict[str, Any]:
    """Load and chunk every document under `path`; return the counts of the module docstring."""
    from textbound.documents.ingest import discover
    from textbound.documents.ingest.chunking import chunk_document
    from textbound.documents.ingest.documents import SkipFile
    from textbound.documents.ingest.loaders import load_file
    from textbound.documents.ingest.outline import outline

    found = [f for f, _ in discover([path]) if isinstance(f, Path)]
    files = sorted(found)[:limit]
    row: dict[str, Any] = dict.fromkeys(COLUMNS, 0)
    skipped: Counter[str] = Counter()
    for f in files:
        row["files"] += 1
        try:
            doc = load_file(f, f.name)
        except SkipFile as exc:
            skipped[str(exc)] += 1
            continue
        text = doc.text
        row["mid-sentence"] += len(_MID.findall(text))
        row["broken words"] += len(_BROKEN.findall(text))
        row["bullets"] += len(_BULLET.findall(text))
        row["controls"] += len(_CONTROL.findall(text))
        fences = outline(text)
        row["html tags"] += sum(not fences.in_fence(m.start()) for m in _TAG.finditer(text))
        for c in chunk_document(doc):
            row["passages"] += 1
            row["short"] += len(c.text) < SHORT
            row["navigation"] += bool(_NAV.match(c.text.replace("\n", " ")))
            row["opens in code"] += fences.in_fence(c.metadata["start"]) \
                and not c.text.startswith(("```", "~~~"))
    row["skipped"] = dict(skipped)
    return row


def main(argv: list[str] | None = None) -> int:
    """Print one Markdown row per path."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", type=Path, help="books: files or folders")
    ap.add_argument("--limit", type=int, default=None, help="at most this many files a folder")
    args = ap.parse_args(argv)
    cols = list(COLUMNS)
    print("| book | " + " | ".join(cols) + " | skipped |")
    print("|---|" + "--:|" * len(cols) + "---|")
    for path in args.paths:
        if not path.exists():
            print(f"{path}: no such file or folder", file=sys.stderr)
            return 2
        row = audit(path, args.limit)
        why = "; ".join(f"{n} {r}" for r, n in row["skipped"].items()) or "-"
        print(f"| {path} | " + " | ".join(str(row[c]) for c in cols) + f" | {why} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
