"""A later sentence of a definition entry leads with the entry's head, which names its term.

An options list (`<dl>`: the option, then what it does) is read as "- **-f --force**: ..."
entries; each sentence of a description is a unit of its own, and only the first names the
option. When a later one leads ("Also forces ..."), the answer opens on the entry's first unit.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import page_evidence
from textbound.answer.candidates import Candidate
from textbound.answer.compose import extractive_draft
from textbound.answer.followers import entry_head
from textbound.shapes import ChunkDict
from textbound.text.units import chunk_units

PAGE = """<html><head><title>packer</title></head><body>
<h2>Options</h2>
<dl>
<dt>-o --overwrite</dt>
<dd><p>Replace an archive that is already there. By default packer stops when the output
archive exists. It also replaces a symbolic link at that path instead of following it.</p></dd>
<dt>-q --quiet</dt>
<dd><p>Print nothing but errors. Warnings about unreadable files are dropped too.</p></dd>
</dl>
<p>Archives are written next to their input unless a folder is named.</p>
</body></html>
"""


@pytest.fixture(scope="module")
def options(tmp_path_factory: pytest.TempPathFactory) -> list[ChunkDict]:
    return page_evidence(tmp_path_factory.mktemp("opts"), "packer.html", PAGE)


def _candidate(chunk: ChunkDict, starts: str) -> Candidate:
    units = chunk_units(chunk)
    n, unit = next((n, u) for n, u in enumerate(units) if u.text.startswith(starts))
    return Candidate(chunk, unit, "", n)


def test_a_later_sentence_of_an_entry_has_the_entry_head(options) -> None:
    chunk = next(c for c in options if "--overwrite" in c["text"])
    later = _candidate(chunk, "It also replaces a symbolic link")
    head = entry_head(later)
    assert head is not None and head.kind == "item"
    assert head.text == "-o --overwrite: Replace an archive that is already there."
    # the head itself, and a paragraph outside the list, have none
    assert entry_head(_candidate(chunk, "-o --overwrite")) is None
    assert entry_head(_candidate(chunk, "Archives are written next to")) is None


def test_the_answer_opens_on_the_option_the_sentence_describes(options, embeddings: Any) -> None:
    draft = extractive_draft("packer won't write over a symlink, what replaces it instead?",
                             options, embeddings)
    quoted = [s["text"] for s in draft["sentences"]]
    assert quoted[0] == "-o --overwrite: Replace an archive that is already there.", quoted
    assert any(q.startswith("It also replaces a symbolic link") for q in quoted)


MARKDOWN_FLAGS = """# Opening files

The flag argument names how a file is opened:

* `'r'`: Open the file for reading. An error is raised when it is missing.

* `'rs+'`: Open the file for reading and writing in synchronous mode. The
  operating system is told to leave its cache out.

  This helps where a network mount would serve stale data. It slows every
  read down, so leave the flag off unless you need it.

  Indented text goes on with the item above.

Plain text after the list is no entry.
"""


def test_a_paragraph_under_a_code_term_item_has_the_items_head(tmp_path) -> None:
    # "* `'rs+'`: ..." defines a code term; a wrapped line and a paragraph of its own under the
    # item go on describing it, and only the item's first unit names it
    chunk = next(c for c in page_evidence(tmp_path, "flags.md", MARKDOWN_FLAGS)
                 if "'rs+'" in c["text"])
    for later in ("This helps where a network mount", "It slows every read down",
                  "The operating system is told"):
        head = entry_head(_candidate(chunk, later))
        assert head is not None and head.text.startswith("'rs+': Open the file for reading"), later
    first = entry_head(_candidate(chunk, "An error is raised"))
    assert first is not None and first.text.startswith("'r': Open")
    assert entry_head(_candidate(chunk, "Plain text after the list")) is None
    assert entry_head(_candidate(chunk, "The flag argument names")) is None
