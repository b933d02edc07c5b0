"""A book's own blocks survive loading and answer as blocks: code, tables, definitions, lead-ins.

In technical books the answer to "how do I ...?" is a command in a code block, and a table row
means something only with its header. These tests build small documents in each format and
check what the loaders keep, what answer units they give, and what an extractive answer quotes.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.fixtures.pdf.writer import Line, pdf_bytes
from textbound.answer.compose import extractive_draft
from textbound.answer.evidence import glossary_term
from textbound.answer.grounding import draft_findings
from textbound.documents.ingest.chunking import MAX_CHARS, TARGET_CHARS, chunk_document
from textbound.documents.ingest.documents import SkipFile
from textbound.documents.ingest.html import html_to_markdown
from textbound.documents.ingest.loaders import load_file
from textbound.documents.pdf import read_pdf
from textbound.fakes import HashEmbedder
from textbound.text.units import LEADING_KINDS, answer_units, chunk_units

PAGE = """<html><head><title>Types</title></head><body>
<div class="navheader"><table summary="Navigation header"><tr><td><a href="a.html">Prev</a></td>
<td><a href="c.html">Next</a></td></tr></table></div>
<div class="toc"><p><a href="#x">1. Register Types</a></p></div>
<h2>Register Types</h2>
<p>Table 4.1 lists the registers:</p>
<table><tr><th>Name</th><th>Storage Size</th><th>Range</th></tr>
<tr><td>flag</td><td>1 byte</td><td>0 to 1</td></tr>
<tr><td>reading</td><td>2 bytes</td><td>0 to 4095</td></tr></table>
<p>Redirect it to "<code>/dev/null</code>" to discard it.</p>
<pre class="screen">$ grep -r <em>pattern</em> src/
$ tar -xf <var>archive</var></pre>
<dl><dt><span class="term">dry run</span></dt><dd>A dry run is a rehearsal of a command that
reports what it would change without changing anything.</dd></dl>
<div class="navfooter"><p>Prev Up Next</p></div>
</body></html>"""


def _md() -> str:
    return html_to_markdown(PAGE)[0]


def test_html_table_keeps_its_header_cells_and_a_row_reads_with_them() -> None:
    """A <th> row becomes the table's header; each row unit names its cells by it."""
    units = answer_units(_md())
    rows = [u.text for u in units if u.kind == "row"]
    assert "Name: reading; Storage Size: 2 bytes; Range: 0 to 4095." in rows
    assert not any(u.kind == "prose" and u.text.startswith("Table 4.1") for u in units)


def test_html_definition_list_is_a_glossary_entry() -> None:
    """<dt>/<dd> keep the term and become '- **term**: definition', read as a glossary entry."""
    md = _md()
    line = next(ln for ln in md.splitlines() if "dry run" in ln)
    assert line.startswith("- **dry run**: A dry run is a rehearsal")
    assert glossary_term(line) == ["dry", "run"]


def test_a_labelled_list_set_as_a_table_is_read_as_definition_entries() -> None:
    """AsciiDoc sets a horizontal labelled list as a table of two data cells a row (Ninja's
    tools: "compdb" beside what it does); each row is an entry, its later paragraphs after it.
    A data table with a header row, or with more columns, stays a table."""
    page = ("<html><body><table>"
            "<tr><td><p><code>clean</code></p></td><td><p>remove built files.</p>"
            "<p>Adding the -g flag also removes generated files.</p></td></tr>"
            "<tr><td><p><code>compdb</code></p></td><td><p>prints a compilation database."
            "</p></td></tr></table>"
            "<table><tr><th>Name</th><th>Size</th></tr><tr><td>int</td><td>4 bytes</td></tr>"
            "<tr><td>bigint</td><td>8 bytes</td></tr></table></body></html>")
    md, _ = html_to_markdown(page)
    assert ("- **clean**: remove built files.\n\nAdding the -g flag also removes generated "
            "files.\n\n- **compdb**: prints a compilation database.") in md
    assert glossary_term("- **compdb**: prints a compilation database.") == ["compdb"]
    assert "| Name | Size |\n|---|---|\n| int | 4 bytes |" in md


def test_html_code_is_verbatim_and_inline_code_keeps_its_place() -> None:
    """A placeholder inside <pre> stays on its line; inline <code> gets no padding."""
    md = _md()
    assert "```\n$ grep -r pattern src/\n$ tar -xf archive\n```" in md
    assert 'Redirect it to "/dev/null" to discard it.' in md


def test_html_navigation_and_table_of_contents_are_not_text() -> None:
    """Previous/next headers and footers and the page's own contents list are dropped."""
    md = _md()
    assert "Prev" not in md and "Next" not in md
    assert "1. Register Types" not in md


@pytest.mark.parametrize("content", ["0; url=Shell-Grammar.html#Aliasing",
                                     "0;URL='Shell-Grammar.html'", "0; ./cli.html"])
def test_an_html_page_that_only_redirects_is_skipped_with_its_reason(tmp_path: Path,
                                                                      content: str) -> None:
    """A page whose browser moves on at once (Texinfo's page for a node name that moved) is
    never seen by a reader: it is skipped, saying so, not stored as a passage."""
    page = tmp_path / "Aliasing.html"
    page.write_text(f'<html><head><meta http-equiv="Refresh" content="{content}"></head><body>'
                    '<p>The node you are looking for is at <a href="Shell-Grammar.html">Aliasing'
                    "</a>.</p></body></html>")
    with pytest.raises(SkipFile, match=r"only sends the browser on to another \(a redirect\)"):
        load_file(page, page.name)


def test_an_html_page_that_reloads_itself_after_a_delay_is_read() -> None:
    """A refresh after a delay (a status page that reloads) is not a redirect."""
    md, _ = html_to_markdown('<html><head><meta http-equiv="refresh" content="300"></head>'
                             "<body><p>The queue holds every job waiting to run.</p></body></html>")
    assert "The queue holds every job waiting to run." in md


BUILD = ("Remove what the build produced before you package a release. For example, if you "
         "want to delete the objects of every target, use:\n\n```\n$ make clean-all TARGETS=*\n"
         "```\n\nThis leaves the sources and the configuration untouched.\n")


def test_a_lead_in_and_its_code_block_are_one_unit_and_the_lead_in_alone_never_leads() -> None:
    """'..., use:' + the command is a `block`; the sentence alone is a `lead`."""
    units = answer_units(BUILD)
    block = next(u for u in units if u.kind == "block")
    assert block.text == ("For example, if you want to delete the objects of every target, use:\n"
                          "$ make clean-all TARGETS=*")
    lead = next(u for u in units if u.text.startswith("For example") and u.kind != "block")
    assert lead.kind == "lead" and lead.kind not in LEADING_KINDS
    assert "block" in LEADING_KINDS


def test_a_clause_going_on_after_code_is_part_of_the_block() -> None:
    """'which prints ...' after a command belongs to it, and never answers alone."""
    text = ("To keep only the rows whose third field is positive, filter the file with awk:\n\n"
            "```\nawk '$3 > 0' readings.txt\n```\n\nwhich prints each line whose third field "
            "is greater than zero.\n")
    units = answer_units(text)
    block = next(u for u in units if u.kind == "block")
    assert block.text.splitlines() == [
        "To keep only the rows whose third field is positive, filter the file with awk:",
        "awk '$3 > 0' readings.txt",
        "which prints each line whose third field is greater than zero."]
    assert next(u for u in units if u.text.startswith("which")).kind == "tail"


def test_a_lead_in_moves_to_the_chunk_of_the_block_it_introduces(tmp_path: Path) -> None:
    """When the code does not fit the chunk, its lead-in goes with it, not with the chunk before."""
    filler = " ".join(["Targets are cheap to build and cheap to rebuild."] * 12)
    f = tmp_path / "book.md"
    f.write_text("# Cleaning\n\n" + filler + "\n\n" + BUILD)
    assert len(filler) > TARGET_CHARS // 2
    chunks = chunk_document(load_file(f, "book.md"))
    holding = [c for c in chunks if "make clean-all" in c.text]
    assert len(holding) == 1 and "objects of every target, use:" in holding[0].text


def test_a_lead_in_its_block_and_the_clause_after_the_block_move_together(
        tmp_path: Path) -> None:
    """"Writing:" + code + "without a size makes ..." are bound in a row: when the clause does
    not fit, the whole row goes on to the next chunk, so no chunk ends on "Writing:"."""
    filler = " ".join(["A volume holds the files of one container."] * 14)
    clause = " ".join(["without a size makes a volume that grows as files are written."] * 6)
    text = (f"# Volumes\n\n{filler}\n\nTo make a volume of a fixed size, use:\n\n```\nbox volume "
            f"create --size 2G data\n```\n\nwhich reserves the space at once. Writing:\n\n"
            f"```\nbox volume create data\n```\n\n{clause}\n")
    f = tmp_path / "book.md"
    f.write_text(text)
    chunks = chunk_document(load_file(f, "book.md"))
    assert not any(c.text.rstrip().endswith(":") for c in chunks), [c.text[-40:] for c in chunks]
    holding = [c for c in chunks if "box volume create data" in c.text]
    assert len(holding) == 1 and "Writing:" in holding[0].text and clause[:30] in holding[0].text


def test_a_lead_in_alone_joins_its_block_however_long_the_block(tmp_path: Path) -> None:
    """A passage that would hold nothing but "The script below starts the server:" answers
    nothing: the lead-in joins its long code block, even past the usual passage length."""
    filler = " ".join(["A volume holds the files of one container."] * 15)
    code = "\n".join(f"box volume create data{i} --size {i}G --label team=build" for i in range(20))
    text = (f"# Volumes\n\n{filler}\n\nThe script below makes twenty volumes, one for each build "
            f"machine of the team, and labels them:\n\n```\n{code}\n```\n")
    assert len(code) > MAX_CHARS - 100 and len(filler) > TARGET_CHARS - 100
    f = tmp_path / "book.md"
    f.write_text(text)
    chunks = chunk_document(load_file(f, "book.md"))
    assert not any(c.text.rstrip().endswith(":") for c in chunks), [c.text[-40:] for c in chunks]
    holding = [c for c in chunks if "data0 --size" in c.text]
    assert len(holding) == 1 and holding[0].text.startswith("The script below makes")


ACCESS = ("The access granted is the sum of the entries of the following table:\n\n"
           "Access Mode Bit Values\n\n| Bit | file | folder |\n|---|---|---|\n"
           "| 1 | run it | enter it |\n| 2 | change it | add entries to it |\n")
"""A made-up table with a lead-in and a title line (the tests below bind and cut it)."""


def test_a_lead_in_and_the_title_of_the_table_it_introduces_never_answer_alone() -> None:
    """"... the following table:" says nothing without the rows, with or without a title line
    between them; the title ("Access Mode Bit Values") is the table's caption, not a
    sentence."""
    units = answer_units(ACCESS)
    kinds = {u.text: u.kind for u in units}
    assert kinds["The access granted is the sum of the entries of the following table:"] == "lead"
    assert kinds["Access Mode Bit Values"] == "caption"
    assert kinds["Bit: 1; file: run it; folder: enter it."] == "row"
    untitled = ACCESS.replace("Access Mode Bit Values\n\n", "")
    assert [u.kind for u in answer_units(untitled)][0] == "lead"  # a header row between
    spoken = ACCESS.replace("Access Mode Bit Values", "Each bit is one right.")
    # no title; the sentence ending in a colon still says nothing alone
    assert [u.kind for u in answer_units(spoken)][:2] == ["lead", "prose"]


def test_a_sentence_ending_in_a_colon_never_answers_alone() -> None:
    """A lead-in whose block is not bound to it (a list too long to join, a chunk that ends on
    it) is a `lead`, like one bound to its code: it introduces what follows and says nothing
    by itself. A colon inside a sentence changes nothing."""
    items = "".join(f"- rule {n}: the column may not refer to column {n}\n" for n in range(14))
    text = ("Several restrictions apply to the definition of generated columns:\n\n" + items
            + "\nA generated column is computed from other columns: it cannot be written.\n"
            "The value is stored on disk when the row is written, as follows:")
    kinds = {u.text: u.kind for u in answer_units(text)}
    assert kinds["Several restrictions apply to the definition of generated columns:"] == "lead"
    assert kinds["The value is stored on disk when the row is written, as follows:"] == "lead"
    assert kinds["A generated column is computed from other columns: it cannot be written."] \
        == "prose"
    assert not any(k == "list" for k in kinds.values())  # fourteen items: no list unit


def test_a_lead_in_and_a_title_move_to_the_chunk_of_their_table(tmp_path: Path) -> None:
    """A chunk never ends on "... the following table:", a caption or a header row: they go on
    with the table's first row, and a table too long for one chunk is still cut by rows."""
    filler = " ".join(["Access rights guard every file and folder."] * 15)
    f = tmp_path / "book.md"
    rows = "".join(f"| {2 ** n} | side {n} | edge {n} of the base or the top |\n"
                   for n in range(2, 40))
    f.write_text(f"# Access\n\n{filler}\n\n{ACCESS}{rows}")
    assert len(filler) < TARGET_CHARS and len(filler + ACCESS + rows) > MAX_CHARS
    chunks = chunk_document(load_file(f, "book.md"))
    assert not any(c.text.rstrip().endswith(("table:", "Values", "| folder |", "|---|---|---|"))
                   for c in chunks)
    holding = [c for c in chunks if "| 1 | run it" in c.text]
    assert len(holding) == 1
    assert "the following table:\n\nAccess Mode Bit Values\n\n| Bit | file" in holding[0].text
    assert all(len(c.text) <= MAX_CHARS for c in chunks)  # the later rows bind nothing more


def test_the_later_passages_of_a_long_table_read_their_rows_with_its_header(
        tmp_path: Path) -> None:
    """A table too long for one chunk is cut by rows; a chunk that opens on a later row carries
    the table's header row (metadata `table_header`), so its rows still read "Bit: 64; ..."
    and the first chunk, which holds the header itself, carries none."""
    f = tmp_path / "book.md"
    rows = "".join(f"| {2 ** n} | side {n} | edge {n} of the base or the top |\n"
                   for n in range(2, 40))
    f.write_text(f"# Access\n\n{ACCESS}{rows}\nAfter the table, a sentence.\n")
    chunks = chunk_document(load_file(f, "book.md"))
    later = [c for c in chunks if c.text.startswith("| ") and "| Bit |" not in c.text]
    assert later and all(c.metadata["table_header"] == "| Bit | file | folder |\n|---|---|---|"
                         for c in later)
    assert not any("table_header" in c.metadata for c in chunks if "| Bit |" in c.text)
    assert not any("table_header" in c.metadata for c in chunks if c.text.startswith("After"))
    chunk = {"text": later[-1].text, "metadata": later[-1].metadata}
    read = [u.text for u in chunk_units(chunk) if u.kind == "row"]
    assert read and all(t.startswith("Bit: ") and "; file: side" in t for t in read)
    # without the header the same text names no cell
    assert not any(u.text.startswith("Bit: ") for u in answer_units(later[-1].text))
    # and the passage is embedded as it is read: rows with their header's names
    assert "\nBit: " in later[-1].embedding_text() and "| " not in later[-1].embedding_text()


def test_a_row_quoted_with_the_header_its_chunk_carries_is_grounded() -> None:
    """The header's names in a quoted row ("Philosopher who proposed it: Ada Example") are
    checked against the header the chunk carries, not only against its own text."""
    cited = {"chunk_id": "c9", "score": 0.7,
             "text": "| Quiet harbour | Ada Example | 1961 |\n"
                     "| Empty lighthouse | Ben Sample | 1972 |",
             "metadata": {"table_header": "| Thought experiment | Philosopher who proposed it "
                                          "| Year published |\n|---|---|---|"}}
    row = [u.text for u in chunk_units(cited) if u.kind == "row"][0]
    assert row.startswith("Thought experiment: Quiet harbour; Philosopher who proposed it: Ada")
    draft = {"generator": "extractive", "sentences": [{"text": row, "citations": ["c9"]}]}
    limits = SimpleNamespace(sentence_support_threshold=0.7, grounding_threshold=1.0,
                             min_answer_coverage=0.0, confidence_threshold=0.0)
    found = draft_findings(draft, [cited], limits, HashEmbedder())
    assert found["passed"] and found["sentences"][0]["supported"]


def _chunk(text: str, cid: str, score: float) -> dict[str, Any]:
    return {"chunk_id": cid, "text": text, "score": score,
            "metadata": {"heading_path": ["Build", "Cleaning"], "source": "build.html"}}


def test_a_how_do_i_question_is_answered_with_the_command() -> None:
    """The extractive answer quotes the code block with its lead-in, the command verbatim."""
    draft = extractive_draft("how can I delete the objects of every target?",
                             [_chunk(BUILD, "c1", 0.7)], HashEmbedder())
    first = draft["sentences"][0]["text"]
    assert "$ make clean-all TARGETS=*" in first.splitlines()
    assert first.startswith("For example, if you want to delete the objects of every target, use:")


def test_pdf_code_in_a_fixed_pitch_font_keeps_its_lines_and_brackets(tmp_path: Path) -> None:
    """Courier lines become one fenced block, line by line; `x[[1]]` and `e[3] <- 17` intact."""
    lines = [Line("To change one element of a vector, index it:", 72, 700),
             Line("x[[1]]", 90, 686, mono=True),
             Line("e[3] <- 17", 90, 672, mono=True),
             Line("which sets the third element to seventeen.", 72, 656)]
    path = tmp_path / "code.pdf"
    path.write_bytes(pdf_bytes([lines]))
    text = read_pdf(path).text
    assert "```\nx[[1]]\ne[3] <- 17\n```" in text
    block = next(u for u in answer_units(text) if u.kind == "block")
    assert block.text.splitlines() == ["To change one element of a vector, index it:",
                                       "x[[1]]", "e[3] <- 17",
                                       "which sets the third element to seventeen."]


BISECT = ("Suppose last week's build passed but today's fails. Often the quickest way to find "
          "the change that broke it is to test the snapshots in between, halving the range each "
          "time, until one change is left. The bisect helper does this for you:\n\n```\n"
          "$ vcs bisect start\n$ vcs bisect good week-42\n$ vcs bisect bad today\n```\n\n"
          "After the first step your working copy holds a snapshot halfway between the two.\n")


def test_a_how_do_i_answer_led_by_prose_goes_on_to_the_command_it_leads_to() -> None:
    """A procedure question's prose lead is followed by the block a few units after it."""
    question = "How do I find the change that broke my build between two snapshots?"
    draft = extractive_draft(question, [_chunk(BISECT, "c1", 0.7)], HashEmbedder())
    texts = [s["text"] for s in draft["sentences"]]
    assert any("$ vcs bisect start" in t.splitlines() for t in texts)


def test_a_sentence_pointing_back_at_a_command_is_shown_after_it() -> None:
    """'This is handy for correcting a typo ...' after `snap save --replace` brings the command."""
    text = ("If the last snapshot you saved has a mistake, you can redo it with\n\n```\n"
            "$ snap save --replace\n```\n\nwhich swaps the last snapshot for a new one.\n\n"
            "This is handy for correcting a typo in the last snapshot's label or for adding a "
            "file you left out.\n")
    draft = extractive_draft("how do i correct a typo in the label of my last snapshot",
                             [_chunk(text, "c1", 0.7)], HashEmbedder())
    shown = "\n".join(s["text"] for s in draft["sentences"])
    assert "$ snap save --replace" in shown.splitlines()


def _pdf_lines(texts: list[str], y: float = 720) -> list[Line]:
    return [Line(t, 72, y - 14 * n) for n, t in enumerate(texts)]


def test_pdf_contents_and_index_pages_go_under_their_own_heading_and_are_never_quoted(
        tmp_path: Path) -> None:
    """A page of 'title . . . page' lines is Contents, one of 'term, 24, 231' lines is Index."""
    toc = [f"Section number {n} about plotting . . . . . . . . {10 + n}" for n in range(10)]
    body = ["Plotting draws a function or a data file on the chosen terminal.",
            "The plot command takes ranges, functions and data files."]
    index = [f"term{n}, {n + 3}, {n + 40}" for n in range(10)]
    title = [Line("A Plotting Manual", 72, 720, size=18, bold=True),
             Line("This manual describes an interactive plotting program.", 72, 690)]
    path = tmp_path / "book.pdf"
    path.write_bytes(pdf_bytes([title, _pdf_lines(toc), _pdf_lines(body), _pdf_lines(index)]))
    doc = load_file(path, "book.pdf")
    assert "###### Contents" in doc.text and "###### Index" in doc.text
    chunks = chunk_document(doc)
    toc_chunks = [c for c in chunks if "Section number 3" in c.text]
    assert toc_chunks and all("Contents" in c.metadata["heading_path"] for c in toc_chunks)
    # the text after the contents goes back under the heading it was under before them
    assert [c.metadata["heading_path"] for c in chunks if "Plotting draws" in c.text] \
        == [["A Plotting Manual"]]
    draft = extractive_draft("which section number is about plotting?",
                             [_chunk(c.text, c.chunk_id, 0.9) | {"metadata": c.metadata}
                              for c in toc_chunks], HashEmbedder())
    assert draft["sentences"] == []


def test_a_chapters_own_contents_list_above_its_text_is_contents_too(tmp_path: Path) -> None:
    """DocBook opens a chapter (and a FAQ) with its own contents list above the text, an entry
    too long for a line running on to the next, where its leaders are. The page is mostly text,
    so it is no contents page; the list's lines are Contents all the same, and the text after
    them, the "...." inside it included, stays where it was."""
    lines = _pdf_lines([
        "Each block is handled independently. If a media or transmission error occurs, the",
        "damaged blocks can be recovered from the rest of the file.",
        "4.1. Limitations of the compressed file format .............................. 31",
        "4.2. My program uses the C++ STL and string classes. Valgrind reports 'still",
        "reachable' memory leaks involving these classes at the exit ........... 32",
        "4.3. Reporting bugs ............................................................ 32",
        "4.4. Did you get the right package? ......................................... 33",
        "The format is limited to 900k blocks. Output lines read like 1 0 0 .... 2",
        "and the rest of the chapter says why; the last line of this page is text too.",
        "A third line of text keeps the page from being mostly a contents list, as a",
        "chapter's first page is.",
        "Another line of the chapter's text."])
    path = tmp_path / "bzip2.pdf"
    path.write_bytes(pdf_bytes([lines]))
    doc = load_file(path, "bzip2.pdf")
    chunks = chunk_document(doc)
    listed = [c for c in chunks if "Did you get the right package" in c.text]
    assert listed and all("Contents" in c.metadata["heading_path"] for c in listed)
    assert any("reachable' memory leaks" in c.text for c in listed)  # the entry's second line
    text = [c for c in chunks if "Contents" not in c.metadata["heading_path"]]
    assert any("damaged blocks can be recovered" in c.text for c in text)
    # with no heading before the list, the text after it goes back under the book's title
    assert [c.metadata["heading_path"] for c in chunks
            if "The format is limited to 900k blocks" in c.text] == [["bzip2"]]


def test_a_contents_list_runs_on_at_the_top_of_the_next_page(tmp_path: Path) -> None:
    """The last entries of a contents list at the top of a page whose rest is the book's text
    (gnuplot's "V Bugs 303" before "Part I") are contents too; the text after them is the book's,
    under its title when no heading came before the list (the Debian FAQ's abstract had been
    hidden under "Contents")."""
    toc = [f"{n}. Section number {n} about plotting . . . . . . . . {10 + n}" for n in range(10)]
    tail = ["Known limitations 303", "External libraries 303",
            "Abstract This document answers questions frequently asked about plotting.",
            "It is written for users of every version of the program."]
    path = tmp_path / "faq.pdf"
    path.write_bytes(pdf_bytes([_pdf_lines(toc), _pdf_lines(tail)]))
    chunks = chunk_document(load_file(path, "faq.pdf"))
    listed = [c for c in chunks if "External libraries" in c.text]
    assert listed and all("Contents" in c.metadata["heading_path"] for c in listed)
    assert [c.metadata["heading_path"] for c in chunks if "Abstract This document" in c.text] \
        == [["faq"]]


def test_a_bookmark_matches_its_heading_with_or_without_the_section_number(
        tmp_path: Path) -> None:
    """The bookmark '2.3 Joins Between Tables' finds the printed heading 'Joins Between Tables'."""
    from tests.fixtures.pdf.writer import Bookmark
    page = [Line("Joins Between Tables", 72, 720, size=16, bold=True),
            Line("A join combines rows from two tables.", 72, 690)]
    other = [Line("Aggregate Functions", 72, 720, size=16, bold=True),
             Line("An aggregate computes one result from many rows.", 72, 690)]
    path = tmp_path / "joins.pdf"
    path.write_bytes(pdf_bytes([page, other], outline=[Bookmark(1, "2.3 Joins Between Tables", 0),
                                                       Bookmark(1, "2.4. Aggregate Functions", 1)]))
    text = read_pdf(path).text
    assert "# Joins Between Tables" in text and "# Aggregate Functions" in text


def test_an_appendix_and_an_index_keep_the_headings_their_bookmarks_name(tmp_path: Path) -> None:
    """Texinfo prints 'Appendix A Copying Information' for the bookmark 'A Copying Information',
    and an index page under its own printed title: both stay headings, so the licence is not
    filed under the chapter before it and the index is read under its name."""
    from tests.fixtures.pdf.writer import Bookmark
    chapter = [Line("4 Function reference", 72, 720, size=16, bold=True),
               Line("Every function returns an error code.", 72, 690)]
    appendix = [Line("Appendix A Copying Information", 72, 720, size=16, bold=True),
                Line("The manual may be copied under the licence below.", 72, 690)]
    index = [Line("Function and Data Index", 72, 720, size=16, bold=True)] + [
        Line(f"asn1_function_{n} . . . . . . . . . . . . . . . . {n + 10}", 72, 690 - 18 * n)
        for n in range(12)]
    path = tmp_path / "manual.pdf"
    path.write_bytes(pdf_bytes([chapter, appendix, index], outline=[
        Bookmark(1, "4 Function reference", 0), Bookmark(1, "A Copying Information", 1),
        Bookmark(1, "Function and Data Index", 2)]))
    headings = [line for line in read_pdf(path).text.splitlines() if line.startswith("#")]
    assert headings == ["# 4 Function reference", "# Appendix A Copying Information",
                        "# Function and Data Index", "###### Contents"]


def test_bracketed_code_reaches_the_answer_verbatim() -> None:
    """The source's citation markers are dropped from prose, never from code: x[[1]], e[3]."""
    from nodes.release_answer import render
    text = ("To change one element of a vector, index it [4]:\n\n```\nx[[1]]\ne[3] <- 17\n```\n\n"
            "which sets the third element to seventeen [5].\n")
    block = next(u for u in answer_units(text) if u.kind == "block")
    draft = {"sentences": [{"text": block.text, "citations": ["c1"],
                            "spans": [["c1", block.start, block.end]]}]}
    answer, _, _ = render(draft, [_chunk(text, "c1", 0.7)])
    assert answer.splitlines() == ["To change one element of a vector, index it:", "x[[1]]",
                                   "e[3] <- 17",
                                   "which sets the third element to seventeen. [1]"]


def test_a_table_is_embedded_row_by_row_with_its_header() -> None:
    """The embedding model reads 'Name: reading; Range: ...', not pipes and dashes."""
    from textbound.documents.ingest.documents import Chunk
    chunk = Chunk("c1", "Table 4.1 lists the registers:\n\n| Name | Range |\n|---|---|\n"
                  "| reading | 0 to 4095 |\n\nMore text.",
                  {"heading_path": ["Book", "Register Types"]})
    assert chunk.embedding_text() == ("Register Types\nTable 4.1 lists the registers:\n\n"
                                      "Name: reading; Range: 0 to 4095.\n\n"
                                      "More text.")


def test_html_inline_code_in_loose_text_keeps_its_place() -> None:
    """Text straight in a <div> beside blocks: inline <code> gets no spaces the page lacks."""
    md = html_to_markdown('<div><p>Output.</p>Redirect it to "<code>/dev/null</code>" now '
                          '(<code>git log</code>).</div>')[0]
    assert 'Redirect it to "/dev/null" now (git log).' in md


def test_html_literal_layout_keeps_its_lines_as_code() -> None:
    """A DocBook literal layout (lines ended by <br>) is a code block, line for line."""
    md = html_to_markdown('<p>Valid numeric constants:</p><div class="literallayout"><p><br />\n'
                          '42<br />\n3.5<br />\n<code>1.925e-3</code><br />\n</p></div>')[0]
    assert "```\n42\n3.5\n1.925e-3\n```" in md


def test_html_navigation_bar_without_a_class_is_not_text() -> None:
    """Prev / Up / Next links in a table nobody named are navigation, a chapter title with them."""
    md = html_to_markdown(
        '<table><tr><td><a href="a.html">Prev</a></td><th>Chapter 2. The SQL Language</th>'
        '<td><a href="c.html">Next</a></td></tr></table><h2>2.5. Querying a Table</h2>'
        '<p>To retrieve data from a table, the table is queried.</p>'
        '<p>Next, see <a href="c.html">the next section</a>.</p>')[0]
    assert "Prev" not in md and "Chapter 2" not in md
    assert "Next, see the next section." in md


def test_html_navigation_that_names_what_it_moves_to_is_not_text() -> None:
    """"Next Chapter" beside "Table of Contents" is a navigation bar (the zsh FAQ's, at the top
    and foot of its first chapter: two links, too few for a contents list); one such link in a
    sentence is not."""
    bar = ('<hr><ul><li> <a href="FAQ.html">Table of Contents</a>'
           '<li> <a href="FAQ02.html">Next Chapter</a></ul><hr>')
    md = html_to_markdown(
        f'<body>{bar}<h2>Chapter 1: Introducing zsh</h2>'
        '<p>Completion is done by the line editor; read <a href="FAQ05.html">the next '
        f'chapter</a> for the rest.</p>{bar}</body>')[0]
    assert "Contents" not in md and "Next Chapter" not in md
    assert "Completion is done by the line editor; read the next chapter for the rest." in md


def test_html_own_contents_list_without_a_class_is_not_text() -> None:
    """A list of nothing but links to the sections below (or to the book's pages) is dropped."""
    md = html_to_markdown(
        '<h1>Chapter 5. Data Definition</h1><p><b>Table of Contents</b></p>'
        '<dl><dt><a href="#basics">5.1. Table Basics</a></dt>'
        '<dt><a href="#defaults">5.2. Default Values</a></dt></dl>'
        '<ul><li><a href="ddl-alter.html">5.6. Modifying Tables</a></li>'
        '<li><a href="ddl-priv.html">5.7. Privileges</a></li>'
        '<li><a href="ddl-schemas.html">5.9. Schemas</a></li></ul>'
        '<h2 id="basics">5.1. Table Basics</h2><p>A table is like a table on paper.</p>'
        '<h2 id="defaults">5.2. Default Values</h2><p>A column can be assigned a default.</p>'
        '<ul><li><a href="https://example.org/a">one site</a></li><li><a href="#x">two</a></li>'
        '<li><a href="https://example.org/c">three</a></li></ul>')[0]
    assert "Table of Contents" not in md and "Modifying Tables" not in md
    assert md.count("5.1. Table Basics") == 1 and md.count("5.2. Default Values") == 1
    assert "- one site" in md  # links elsewhere are content



def test_html_permalink_marks_are_not_text() -> None:
    """A heading's or an entry's permalink (Sphinx '¶', Texinfo ' ¶', '#') is not in the text."""
    md = html_to_markdown(
        '<h1>Installation<a class="headerlink" href="#installation" title="Permalink">¶</a></h1>'
        '<p>Run the installer.</p><h2 id="opts">Options<a class="id_link" href="#opts">#</a></h2>'
        '<dl><dt id="index-x"><span><code>ffi_type_void</code><a href="#index-x" '
        'class="copiable-anchor"> &para;</a></span></dt><dd><p>The type void.</p></dd></dl>'
        '<p>Paragraphs are marked <a href="#pilcrow">¶</a> in proofs; see <a href="#s2">§</a> 2'
        ' and <a href="#fn1">[1]</a>.</p>')[0]
    assert "# Installation\n" in md and "## Options\n" in md
    assert "- **ffi_type_void**: The type void." in md
    assert "¶" not in md and "§" not in md
    assert "see 2 and [1]." in md  # links with words stay where they are


def test_html_texinfo_headers_and_menus_are_not_text() -> None:
    """Texinfo's "Next: X, Previous: Y, Up: Z [Index]" header and its menu table are dropped."""
    md = html_to_markdown(
        '<div class="header"><p>Next: <a href="What.html" accesskey="n" rel="next">What is it?'
        '</a> &nbsp; [<a href="Index.html" rel="index">Index</a>]</p></div>'
        '<h1>libx</h1><p>This manual is for libx.</p>'
        '<table class="menu"><tr><td>&bull; <a href="#Description">Description</a></td></tr>'
        '<tr><td>&bull; <a href="#Options">Command Line Options</a></td></tr></table>'
        '<div class="header"><p>Next: <a href="Types.html">Types</a>, Previous: '
        '<a href="Basics.html">The Basics</a>, Up: <a href="Using.html">Using libx</a> '
        '&nbsp; [<a href="Index.html">Index</a>]</p></div>'
        '<h2 id="Description">Description</h2><p>Next: run it. Up: the default is 4.</p>'
        '<h2 id="Options">Command Line Options</h2><p>-q is quiet.</p>')[0]
    assert "Next: run it. Up: the default is 4." in md
    for gone in ("What is it?", "[Index]", "Types,", "The Basics", "Using libx", "•"):
        assert gone not in md, gone
    assert md.count("Command Line Options") == 1


def test_html_contents_table_of_links_to_sections_below_is_not_text() -> None:
    """A table whose cells are nothing but links to the sections below is a table of contents."""
    md = html_to_markdown(
        '<h1>Guide</h1><table><tr><td>&bull; <a href="#a">Numbers</a></td></tr>'
        '<tr><td>&bull; <a href="#b">Variables</a></td></tr>'
        '<tr><td>&bull; <a href="#c">Comments</a></td></tr></table>'
        '<table><tr><th>Command</th><th>Does</th></tr><tr><td><a href="#a">scale</a></td>'
        '<td>sets the digits after the point</td></tr></table>'
        '<h2 id="a">Numbers</h2><p>Numbers are arbitrary precision.</p>'
        '<h2 id="b">Variables</h2><p>Variables hold numbers.</p>'
        '<h2 id="c">Comments</h2><p>Comments start with #.</p>')[0]
    assert md.count("Numbers") == 2  # its heading, and the sentence of its section
    assert "sets the digits after the point" in md and "scale" in md


def test_html_table_whose_cells_wrap_one_paragraph_each_is_a_data_table() -> None:
    """`<td><p>...</p></td>` is a data cell: the row is read with its header cells."""
    md = html_to_markdown(
        '<details><summary>History</summary><table><tr><th>Version</th><th>Changes</th></tr>'
        '<tr><td>v8.0.0</td><td><p><code>NaN</code> is no longer a valid time.</p></td></tr>'
        '<tr><td>v4.1.0</td><td><p>Numeric strings are allowed.</p></td></tr></table></details>'
        '<table><tr><td><p>Layout: first block.</p><p>Second block.</p></td></tr></table>')[0]
    assert "| Version | Changes |\n|---|---|\n| v8.0.0 | NaN is no longer a valid time. |" in md
    assert "Layout: first block.\n\nSecond block." in md  # two paragraphs: a layout cell


def test_html_page_footer_is_not_text() -> None:
    """A footer marked `role="contentinfo"` (Sphinx's copyright line) is not a passage."""
    md = html_to_markdown(
        '<div class="body"><h1>Packaging</h1><p>Modules go to dist-packages.</p></div>'
        '<div class="footer" role="contentinfo">&#169; <a href="#">Copyright</a> 1999-2023, '
        'Software in the Public Interest. Created using <a href="https://x.org">Sphinx</a>.</div>'
        '<div class="footer-note"><p>See the copyright file for the licence.</p></div>')[0]
    assert "Created using" not in md and "1999-2023" not in md
    assert "Modules go to dist-packages." in md
    assert "See the copyright file for the licence." in md
