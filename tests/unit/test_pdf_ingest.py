"""PDF ingestion as a teacher's book is laid out: pages per sentence, headings, no furniture.

Every PDF here is written by tests/fixtures/pdf/writer.py (our own minimal PDF writer), so the
structure a parser should recover is known.
"""

import re
from pathlib import Path

import pytest

from graph.builder import build_graph
from tests.fixtures.pdf.writer import Bookmark, Line, corpus_book, pdf_bytes, typeset
from textbound.answer.sources import cited_sources
from textbound.documents.ingest import chunk_document, ingest, load_file, page_at
from textbound.documents.pdf import read_pdf
from textbound.text.units import answer_units

from ..conftest import make_settings

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"
HEADER = "Marine Robotics Notes"
PAGE_TWO_SENTENCE = ("A glider on a long mission surfaces every few hours to fix its position "
                     "by satellite.")


def body(lines: list[str], top: float = 680.0, leading: float = 14.0) -> list[Line]:
    return [Line(text, 72, top - i * leading) for i, text in enumerate(lines)]


def furniture(page: int) -> list[Line]:
    return [Line(HEADER, 72, 752, 9), Line(str(page), 300, 36, 9)]


def glider_pages() -> list[list[Line]]:
    """Two pages: a chapter heading, a paragraph running onto page 2, then a section."""
    page1 = [*furniture(1), Line("Chapter 7: Underwater Gliders", 72, 708, 20, bold=True),
             *body([
                 "An underwater glider is an autonomous vehicle that moves by changing its",
                 "buoyancy instead of spinning a propeller. Its wings turn the sinking and",
                 "rising into forward motion along a saw-tooth path. The pitch is set accord-",
                 "ing to the mission plan, and each saw-",
                 "tooth cycle can take several hours in deep water. Between dives the",
                 "vehicle drifts quietly and listens to the ocean, and",
             ])]
    page2 = [*furniture(2), *body([
        "it records temperature and salinity on the way down and up.",
        PAGE_TWO_SENTENCE,
    ], top=706), Line("Buoyancy Engines", 72, 650, 15, bold=True), *body([
        "A buoyancy engine pumps oil between an inner reservoir and an outer bladder.",
        "Filling the bladder makes the glider rise; emptying it makes the glider sink.",
    ], top=625)]
    return [page1, page2]


def write(tmp_path: Path, name: str, pages: list[list[Line]], **kw) -> Path:
    path = tmp_path / name
    path.write_bytes(pdf_bytes(pages, **kw))
    return path


@pytest.fixture
def glider_pdf(tmp_path):
    return write(tmp_path, "gliders.pdf", glider_pages(), title="Marine Robotics")


def test_sentence_on_the_second_page_is_cited_with_page_two(tmp_path, glider_pdf, store,
                                                            embeddings):
    """A chunk that starts on page 1 cites page 2 for a sentence printed on page 2."""
    ingest(store, [glider_pdf])
    graph = build_graph(settings=make_settings(tmp_path, calibration_file=CALIBRATION),
                        embeddings=embeddings, store=store)
    # a two-chunk book is far from what the gate was calibrated on; pages are the subject here
    out = graph.invoke({"question": "How often does a glider surface to fix its position?"},
                       context={"generator": "extractive", "answer_threshold": 0.5})
    assert not out["was_refusal"], out["answer"]
    assert "surfaces every few hours" in out["answer"]
    cited = out["sources"][0]
    assert cited["page"] == 2
    assert cited["section"] == "Chapter 7: Underwater Gliders"


def test_chunk_records_where_later_pages_start(glider_pdf):
    """A chunk spanning pages keeps its first page and where page 2 starts inside it."""
    doc = load_file(glider_pdf, "gliders.pdf")
    chunk = next(c for c in chunk_document(doc) if PAGE_TWO_SENTENCE in c.text)
    meta = chunk.metadata
    assert meta["page"] == 1 and [p[1] for p in meta["page_starts"]] == [2]
    at = meta["start"] + chunk.text.index(PAGE_TWO_SENTENCE)
    first = meta["start"] + chunk.text.index("An underwater glider")
    assert page_at(meta, at) == 2 and page_at(meta, first) == 1 and page_at(meta, None) == 1
    cited = {"chunk_id": chunk.chunk_id, "text": chunk.text, "score": 0.9, "metadata": meta}
    source = cited_sources([cited], {chunk.chunk_id: [[at, at + len(PAGE_TWO_SENTENCE)]]})[0]
    assert source["page"] == 2
    assert cited_sources([cited], {})[0]["page"] == 1  # nothing quoted: the chunk's first page


@pytest.mark.parametrize("outline", [False, True], ids=["font-size", "bookmarks"])
def test_headings_become_sections_and_leave_the_text(tmp_path, outline):
    """Headings (from type or from bookmarks) are the heading path, not part of a passage."""
    marks = [Bookmark(1, "Chapter 7: Underwater Gliders", 0), Bookmark(2, "Buoyancy Engines", 1)]
    pdf = write(tmp_path, "g.pdf", glider_pages(), outline=marks if outline else ())
    chunks = chunk_document(load_file(pdf, "g.pdf"))
    by_start = {c.text.split()[0]: c.metadata for c in chunks}
    assert by_start["An"]["heading_path"] == ["Chapter 7: Underwater Gliders"]
    assert by_start["A"]["section"] == "Chapter 7: Underwater Gliders > Buoyancy Engines"
    assert not any("Chapter 7" in c.text or "Buoyancy Engines" in c.text for c in chunks)
    assert chunks[0].text.startswith("An underwater glider is")


def test_running_headers_footers_and_page_numbers_are_dropped(glider_pdf):
    """The repeated header and the bare page numbers appear in no chunk."""
    doc = load_file(glider_pdf, "gliders.pdf")
    assert HEADER not in doc.text and doc.title == "Marine Robotics"
    for chunk in chunk_document(doc):
        assert HEADER not in chunk.text
        assert not re.search(r"(^|\s)[12](\s|$)", chunk.text)


def test_a_running_header_naming_a_one_page_chapter_is_furniture_too(tmp_path):
    """'Chapter 1: Scope 1' recurs nowhere, but has the shape of the headers that do."""
    heads = ["Chapter 1: Scope 1", "Chapter 2: Sensors and Their Care 2",
             "Chapter 2: Sensors and Their Care 3", "Chapter 3: Storage 4"]
    pages = [[Line(head, 72, 752, 9), *body([
        f"Buoy {n} reports its position every hour and its battery every day.",
        "Chapter 9 of the survey explains the sensors in more detail for those",
        "who maintain them, with the tools each of them needs on a ship and",
        "the spare parts a crew should carry on a long cruise in cold water.",
        f"Buoy {n} was last serviced in the spring."])]
        for n, head in enumerate(heads, 1)]
    text = read_pdf_bytes(tmp_path, pdf_bytes(pages)).text
    assert "Chapter 1" not in text and "Chapter 3" not in text and "Sensors" not in text
    assert all(f"Buoy {n} reports its position every hour" in text for n in range(1, 5))
    assert text.count("Chapter 9 of the survey explains the sensors") == 4


def test_line_end_hyphenation_is_joined_and_compounds_survive(glider_pdf):
    """'accord-' + 'ing' is one word; 'saw-' + 'tooth' keeps the hyphen the book uses."""
    text = load_file(glider_pdf, "gliders.pdf").text
    assert "set according to the mission plan" in text
    assert "each saw-tooth cycle" in text and "sawtooth" not in text
    assert "moves by changing its buoyancy instead" in text  # a plain line break is a space


@pytest.mark.parametrize(("lines", "expected"), [
    # '32-' + 'bit counter' reads '32-bit counter', as printed, not '32- bit' or '32bit'
    (["The variant defined in the later standard uses a 32-",
      "bit counter value, and the epoch starts on 1-",
      "Jan-1970 at midnight; subtract 3 -",
      "1 to get two."],
     ["uses a 32-bit counter value", "starts on 1-Jan-1970 at midnight",
      "subtract 3 - 1 to get two."]),  # a minus apart from its number
    # Texinfo breaks a long name after an underscore: 'ASN1_' + 'SYNTAX_ERROR' is one name
    (["The function returns ASN1_SUCCESS on success, or ASN1_",
      "SYNTAX_ERROR if the syntax is not correct; this function is used instead of sha3_256_",
      "digest to get a longer output, and a lone _",
      "stays apart."],
     ["or ASN1_SYNTAX_ERROR if the syntax", "used instead of sha3_256_digest to get",
      "a lone _ stays apart."]),
], ids=["digit-and-hyphen", "underscore"])
def test_a_line_broken_after_a_hyphen_or_an_underscore_joins_as_printed(tmp_path, lines,
                                                                       expected):
    parsed = read_pdf_bytes(tmp_path, pdf_bytes([body(lines)]))
    for text in expected:
        assert text in parsed.text


def test_a_sentence_broken_before_a_number_goes_on_and_a_numbered_list_still_starts(tmp_path):
    """'... are' + '8. Under LP64 ...' is one sentence; '1.', '2.' after a colon are items."""
    parsed = read_pdf_bytes(tmp_path, pdf_bytes([body([
        "The library needs sizeof(int) to be 4 and sizeof(long) to be",
        "8. Under LP64 the int type is still 4 bytes, so it is fine.",
        "The build runs in two steps:",
        "1. Configure the tree for this machine",
        "2. Compile every library with make"])]))
    assert "sizeof(long) to be 8. Under LP64 the int type" in parsed.text
    assert re.search(r"two steps:\n+1\. Configure the tree for this machine\n+2\. Compile",
                     parsed.text)


def test_a_list_item_whose_lines_hang_under_its_text_reads_whole(tmp_path):
    """A bulleted item's later lines sit right of its bullet, one em in: one item, not one
    paragraph a line; the next bullet starts the next item, a first-line indent a paragraph.
    The item is written as Markdown writes one ("- "), so it reads as a list item."""
    lines = [Line("\u2022 The first line tells you what kind of error it is: the program", 72, 680),
             Line("wrote to memory it should not have, past the end of a block.", 83, 666),
             Line("\u2022 The code addresses are usually unimportant, but occasionally", 72, 652),
             Line("crucial for tracking down weirder bugs.", 83, 638),
             Line("A report ends with a summary of the errors found in the run.", 72, 610),
             Line("Each summary line counts one kind.", 83, 596)]
    text = read_pdf_bytes(tmp_path, pdf_bytes([lines])).text
    assert ("- The first line tells you what kind of error it is: the program wrote to memory "
            "it should not have, past the end of a block.") in text
    assert ("- The code addresses are usually unimportant, but occasionally crucial for "
            "tracking down weirder bugs.") in text
    assert "\u2022" not in text
    assert [u.kind for u in answer_units(text) if u.text.startswith("The code addresses")] \
        == ["item"]
    assert re.search(r"found in the run\.\n+Each summary line", text)


def test_a_definition_whose_arguments_go_on_reads_as_one_line_before_its_description(tmp_path):
    """Texinfo's "void f (..., const [Function]" + "uint8_t *data)" is one definition, each
    definition the heading of its description (its signature in backquotes, the category
    dropped, one level below the heading above it); a line that opens "*digest)" or "*.ps" goes
    on its sentence (a "*" bullet has a space after it)."""
    lines = [Line("void hash_update (struct hash_ctx *ctx, size_t length, const", 90, 680),
             Line("[Function]", 500, 680),  # the category flush right, as Texinfo sets it
             Line("uint8_t *data)", 140, 667),
             Line("void hash_digest (struct hash_ctx *ctx, size_t length, uint8_t", 90, 654),
             Line("[Function]", 500, 654),
             Line("*digest)", 140, 641),
             Line("Hash some more data, then write the digest to digest.", 119, 628),
             Line("Viewers know the standard fonts, so the", 72, 600),
             Line("*.ps files it creates refer to them by name.", 72, 586),
             Line("The same holds for the fonts of the printers in [Adobe]", 72, 560),
             Line("(see the reference manual) and of the viewers.", 72, 546)]
    text = read_pdf_bytes(tmp_path, pdf_bytes([lines])).text
    assert re.search(r"# `void hash_update \(struct hash_ctx \*ctx, size_t length, const "
                     r"uint8_t \*data\)`\n+# `void hash_digest \(struct hash_ctx \*ctx, "
                     r"size_t length, uint8_t \*digest\)`\n+Hash some more data", text)
    assert "[Function]" not in text
    assert "so the *.ps files it creates" in text
    assert "printers in [Adobe] (see the reference manual)" in text  # a citation, no category


def test_a_definition_heads_its_description_under_the_section_and_answers_name_it(tmp_path):
    """The subheading Texinfo prints above a definition ("hash update", its underscores lost
    to the font) goes into the definition's heading; the description's "Returns: ..." is
    quoted with the function it is about (answer/named_section.py)."""
    from textbound.answer.named_section import code_title, named
    lines = [Line("4.1 Hash functions", 72, 700, size=16, bold=True),
             Line("hash update", 72, 676, size=12, bold=True),
             Line("int hash_update (struct hash_ctx *ctx, size_t length)", 90, 656),
             Line("[Function]", 500, 656),
             Line("Adds length bytes to the hash.", 119, 636),
             Line("Returns: HASH_OK on success, HASH_TOO_LONG past 2^61 bytes.", 119, 622),
             # arguments broken at a pointer: "* name)" goes on the signature, no list item
             Line("int hash_name (struct hash_ctx *ctx, const char", 90, 596),
             Line("[Function]", 500, 596),
             Line("* name)", 140, 583),
             Line("Names the hash.", 119, 563)]
    text = read_pdf_bytes(tmp_path, pdf_bytes([lines])).text
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["# 4.1 Hash functions",
                        "## `int hash_update (struct hash_ctx *ctx, size_t length)`",
                        "## `int hash_name (struct hash_ctx *ctx, const char * name)`"]
    assert "hash update\n" not in text
    chunk = {"metadata": {"section": f"Hash > 4.1 Hash functions > {headings[1][3:]}"}}
    assert code_title(chunk) == headings[1][3:]
    assert named(chunk, "Returns: HASH_OK on success.").startswith("`int hash_update (")
    assert named(chunk, "hash_update adds bytes.") == "hash_update adds bytes."


def test_a_term_on_its_own_line_with_its_description_indented_under_it_is_an_entry(tmp_path):
    """bzip2's options and return values: the term at the margin, its description an em and a
    half in. Each reads as a definition entry, "- **term**: description", as an HTML <dl> does;
    a paragraph with a first-line indent and a line ending in a comma are no terms."""
    lines = [Line("-k --keep", 72, 680),
             Line("Keep (don't delete) input files during compression or", 108, 666),
             Line("decompression.", 108, 652),
             Line("-q --quiet", 72, 638),
             Line("Suppress non-essential warning messages.", 108, 624),
             Line("The release went out (3.0.1: 29 August 05,", 72, 596),
             Line("from the branch) as planned.", 108, 582)]
    text = read_pdf_bytes(tmp_path, pdf_bytes([lines])).text
    assert ("- **-k --keep**: Keep (don't delete) input files during compression or "
            "decompression.\n\n- **-q --quiet**: Suppress non-essential warning messages.") in text
    assert "**The release" not in text


def test_a_term_in_a_fixed_pitch_font_with_its_description_under_it_is_an_entry(tmp_path):
    """bzip2's options and bash's glossary set the term in a typewriter font ("-c --stdout",
    "exit status") and the description in the text font, indented under it: an entry, not a
    line of code and a paragraph. Two lines of code before an indented paragraph stay code."""
    lines = [Line("-c --stdout", 72, 680, mono=True),
             Line("Compress or decompress to standard output.", 108, 666),
             Line("-k --keep", 72, 652, mono=True),
             Line("Keep (don't delete) input files during compression or", 108, 638),
             Line("decompression.", 108, 624),
             Line("int BZ2_bzCompressInit ( bz_stream *strm,", 72, 590, mono=True),
             Line("int blockSize100k );", 72, 578, mono=True),
             Line("Prepares for compression.", 108, 564)]
    text = read_pdf_bytes(tmp_path, pdf_bytes([lines])).text
    assert ("- **-c --stdout**: Compress or decompress to standard output.\n\n"
            "- **-k --keep**: Keep (don't delete) input files during compression or "
            "decompression.") in text
    assert ("```\nint BZ2_bzCompressInit ( bz_stream *strm,\nint blockSize100k );\n```\n\n"
            "Prepares for compression.") in text


def test_code_in_a_fixed_pitch_font_nothing_names_is_measured_as_code(tmp_path):
    """Ghostscript's Nimbus Mono L, embedded in bzip2's and fontconfig's manuals, carries no
    FixedPitch flag and no "mono" or "courier" in its name, and their code read as prose, its
    lines run together. Every character of a fixed-pitch font advances the same width, which
    the reader measures: the listing is code, line by line; the text font stays prose."""
    code = ["typedef struct {", "char *next_in;", "unsigned int avail_in;",
            "unsigned int total_in_lo32;", "} bz_stream;"]
    lines = [Line("The stream is declared as follows, with its fields:", 72, 700),
             *(Line(c, 90, 686 - 12 * i, typewriter=True) for i, c in enumerate(code)),
             Line("Prepares for compression with the fields above.", 72, 610)]
    text = read_pdf_bytes(tmp_path, pdf_bytes([lines])).text
    assert "```\n" + "\n".join(code) + "\n```" in text
    assert "\n\nPrepares for compression with the fields above." in text
    assert "```\nThe stream" not in text


def test_a_term_beside_its_description_keeps_the_description_in_one_paragraph(tmp_path):
    """Texinfo's tables (zsh, bash): "< word" at the margin, "Open file word ..." beside it
    past a wide gap, and the description's later lines under its first word. The description
    is one paragraph with its term, not a paragraph per line; the next term starts another."""
    lines = [Line("< word", 72, 680), Line("Open file word for reading as standard input. It is",
                                           144, 680),
             Line("an error to open a file in this fashion if it does not exist.", 144, 666),
             Line("> word", 72, 652), Line("Open file word for writing as standard output.",
                                           144, 652),
             Line("If the file does not exist then it is created.", 144, 638)]
    text = read_pdf_bytes(tmp_path, pdf_bytes([lines])).text
    assert ("< word Open file word for reading as standard input. It is an error to open a file "
            "in this fashion if it does not exist.\n\n> word Open file word for writing as "
            "standard output. If the file does not exist then it is created.") in text


def test_a_book_from_the_bundled_markdown_keeps_its_structure(tmp_path):
    """A 20-page book typeset from corpus/: every heading, every paragraph's page, no furniture."""
    book = corpus_book(CORPUS, pages=20)
    parsed = read_pdf_bytes(tmp_path, book.to_bytes(title="A Textbook of Robots"))
    headings = re.findall(r"^(#+) (.+)$", parsed.text, re.M)
    assert headings == [("#" * b.level, b.title) for b in book.outline]
    assert "A Textbook of Robots" not in parsed.text
    assert not re.search(r"^\d+$", parsed.text, re.M)
    assert all(word in parsed.text for word in book.hyphenated)
    at = 0
    for head, page in book.paragraph_pages:
        head = head.encode("cp1252", "replace").decode("cp1252")[:20]
        at = parsed.text.index(head, at)
        assert page_of(parsed, at) == page, head


def test_two_column_pages_read_column_by_column(tmp_path):
    """On two-column pages each paragraph reads whole, left column before right."""
    blocks = [("h1", "Chapter 1: Columns")] + [
        ("p", f"Paragraph {n} explains how column number {n} of this page is read in order, "
              f"and it keeps going long enough to wrap over several narrow lines of type.")
        for n in range(1, 25)]
    book = typeset(blocks, columns=2, hyphenate=False)
    parsed = read_pdf_bytes(tmp_path, book.to_bytes())
    positions = [parsed.text.index(text) for kind, text in blocks if kind == "p"]
    assert positions == sorted(positions)
    assert len(book.pages) >= 2 and book.pages[0][-1].x > 300  # the right column was used


def test_malformed_pdf_is_skipped_with_the_same_clear_reason(tmp_path, store):
    """A file that is not a PDF is skipped as an unreadable PDF; nothing is stored."""
    bad = tmp_path / "docs" / "broken.pdf"
    bad.parent.mkdir()
    bad.write_bytes(b"%PDF-1.4 this is not a pdf")
    summary = ingest(store, [bad.parent])
    assert [s[0] for s in summary.skipped] == [str(bad)]
    assert summary.skipped[0][1].startswith("unreadable PDF (")
    assert store.count() == 0


def test_pdf_with_no_text_is_skipped(tmp_path, store):
    """A PDF with pages but no text (a scan) is skipped, saying OCR is needed."""
    pdf = write(tmp_path, "scan.pdf", [[], []])
    summary = ingest(store, [pdf])
    assert summary.skipped and "no extractable text" in summary.skipped[0][1]


# --- helpers -------------------------------------------------------------------------------------

def read_pdf_bytes(folder: Path, data: bytes):
    path = folder / "book.pdf"
    path.write_bytes(data)
    return read_pdf(path)


def page_of(parsed, offset: int) -> int:
    return max(page for page, start in parsed.page_starts if start <= offset)
