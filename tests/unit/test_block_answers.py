"""Each block a book answers with, end to end: the loader keeps it, the extractive answer quotes it.

A small HTML page and a small PDF are built here; each test loads them with the loaders the app
uses (`load_file`, `chunk_document`), composes the extractive answer over their chunks with the
real embedding model, and checks the exact text an answer quotes and, through `render`, shows:
a command from a code block with its lead-in, a table row with its header cells, a definition
entry, printed program output, PDF code with brackets, a sentence across a footnote at a page
break, a word hyphenated at a line end, and a contents page that is never quoted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nodes.release_answer import render
from tests.fixtures.pdf.writer import Line, pdf_bytes
from textbound.answer.compose import extractive_draft
from textbound.answer.sources import cited_sources
from textbound.documents.ingest import chunk_document, load_file
from textbound.fakes import HashEmbedder
from textbound.shapes import ChunkDict

PAGE = """<html><head><title>Reference</title></head><body>
<h2>Register Types</h2>
<p>A logger stores each value in a register of one of three widths. Table 4.1 lists the
registers:</p>
<table><tr><th>Name</th><th>Storage Size</th><th>Range</th></tr>
<tr><td>flag</td><td>1 byte</td><td>0 to 1</td></tr>
<tr><td>reading</td><td>2 bytes</td><td>0 to 4095</td></tr>
<tr><td>timestamp</td><td>8 bytes</td><td>0 to 18446744073709551615</td></tr>
</table>
<p>The reading register suits most sensors, as its range covers a twelve-bit converter.</p>
<h2>Cleaning the build</h2>
<p>Remove what the build produced before you package a release. For example, if you want to
delete the objects of every target, use:</p>
<pre class="screen">$ make clean-all TARGETS=*</pre>
<p>This leaves the sources and the configuration untouched.</p>
<h2>Glossary</h2>
<dl><dt><span class="term">dry run</span></dt><dd>A dry run is a rehearsal of a command that
reports what it would change without changing anything.</dd>
<dt><span class="term">hot spare</span></dt><dd>A hot spare is a disk kept powered in an array
so that it can take the place of a failed disk at once.</dd></dl>
</body></html>"""

HEADER = "A Statistics Manual"
LEAD_IN = "Applied to these data, t.test(extra ~ group, data = sleep) prints:"
OUTPUT = ["t = -1.8608, df = 17.776, p-value = 0.07939",
          "95 percent confidence interval: -3.3654832 0.2054832"]
NOTE = "Student published the test under a pseudonym in 1908."


def _furniture(printed: str) -> list[Line]:
    """The running header and the page number the book prints."""
    return [Line(HEADER, 72, 752, 9), Line(printed, 300, 36, 9)]


def _body(lines: list[str], top: float = 680) -> list[Line]:
    return [Line(t, 72, top - 14 * n) for n, t in enumerate(lines)]


def _manual_pages() -> list[list[Line]]:
    """Four pages, printed i, 1, 2, 3: a contents page, code with brackets and a hyphenated word,
    printed output, and a sentence that runs over a page break past a footnote."""
    entries = ["Reading a data frame from a text file", "Vectors, lists and indexing them",
               "Comparing two groups with a t-test", "The p-value of the two-sample t-test",
               "Missing values and how they are written", "Graphics for comparing groups",
               "Regression with one predictor and its output", "Index of functions and terms"]
    contents = [*_furniture("i"), Line("Contents", 72, 710, 16, bold=True),
                *_body([f"{n}. {t} . . . . . . . . . . {n // 2 + 1}"
                        for n, t in enumerate(entries, 1)])]
    vectors = [*_furniture("1"), Line("Vectors and lists", 72, 710, 16, bold=True), *_body([
        "A list holds components of any type. To take the first component of a list and to",
        "change the third element of a vector, index them with brackets:"]),
        Line("x[[1]]", 90, 640, mono=True), Line("e[3] <- 17", 90, 626, mono=True),
        *_body(["Indexing past the end of a vector extends it with missing values, so assign-",
                "ment never fails for a positive index."], top=600)]
    groups = [*_furniture("2"), Line("Comparing two groups", 72, 710, 16, bold=True), *_body([
        "The sleep data record the extra hours of sleep of ten patients under two drugs.",
        LEAD_IN]),
        *(Line(t, 90, 640 - 14 * n, mono=True) for n, t in enumerate(OUTPUT)),
        *_body(["Welch's test does not assume that the two groups have equal variances, and it",
                "is the default of the function. When the variances are known to be equal the"],
               top=600),
        Line(f"1 {NOTE}", 72, 60, 8)]
    missing = [*_furniture("3"), *_body(["pooled estimate is used instead, by passing "
                                         "var.equal = TRUE to the call."], top=706),
               Line("Missing values", 72, 660, 16, bold=True),
               *_body(["Missing values are written NA and propagate through most arithmetic."],
                      top=630)]
    return [contents, vectors, groups, missing]


def _evidence(path: Path) -> list[ChunkDict]:
    """Every chunk of the file as evidence, as retrieve hands it to the composer."""
    return [ChunkDict(chunk_id=c.chunk_id, text=c.text, score=0.8, metadata=c.metadata)
            for c in chunk_document(load_file(path, path.name))]


@pytest.fixture(scope="module")
def html_book(tmp_path_factory: pytest.TempPathFactory) -> list[ChunkDict]:
    path = tmp_path_factory.mktemp("html") / "reference.html"
    path.write_text(PAGE, encoding="utf-8")
    return _evidence(path)


@pytest.fixture(scope="module")
def pdf_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pdf") / "manual.pdf"
    path.write_bytes(pdf_bytes(_manual_pages()))
    return path


@pytest.fixture(scope="module")
def pdf_book(pdf_path: Path) -> list[ChunkDict]:
    return _evidence(pdf_path)


def _answer(question: str, evidence: list[ChunkDict], embeddings: Any
            ) -> tuple[list[str], str, dict[str, Any]]:
    """The quoted units, the rendered answer, and the draft."""
    draft = extractive_draft(question, evidence, embeddings)
    answer, _, _ = render(dict(draft), evidence)
    return [s["text"] for s in draft["sentences"]], answer, dict(draft)


def test_a_command_from_an_html_code_block_answers_with_its_lead_in(html_book, embeddings):
    """<pre> stays a code block; 'how can I ...?' quotes the lead-in with the command, never
    the lead-in alone."""
    chunk = next(c for c in html_book if "make clean-all" in c["text"])
    assert "use:\n\n```\n$ make clean-all TARGETS=*\n```" in chunk["text"]
    quoted, answer, _ = _answer("how can I delete the objects of every target?", html_book,
                                embeddings)
    lead_in = "For example, if you want to delete the objects of every target, use:"
    assert quoted[0] == f"{lead_in}\n$ make clean-all TARGETS=*"
    assert answer.startswith(f"{lead_in}\n$ make clean-all TARGETS=* [1]")
    assert lead_in not in quoted


@pytest.mark.parametrize(("question", "row"), [
    ("What is the storage size of a timestamp register?",
     "Name: timestamp; Storage Size: 8 bytes; Range: 0 to 18446744073709551615."),
    ("How many bytes does a flag take?",
     "Name: flag; Storage Size: 1 byte; Range: 0 to 1."),
])
def test_a_table_row_answers_read_with_its_header_cells(html_book, embeddings, question, row):
    """<th> cells are the header; the row that answers is quoted 'Header: cell; ...'."""
    chunk = next(c for c in html_book if "timestamp" in c["text"])
    assert "| Name | Storage Size | Range |\n|---|---|---|\n" in chunk["text"]
    quoted, answer, _ = _answer(question, html_book, embeddings)
    assert quoted == [row]
    assert answer == f"{row} [1]"


def test_a_definition_entry_answers_what_is(html_book, embeddings):
    """<dt>/<dd> is one entry, quoted with its term."""
    quoted, _, _ = _answer("What is a dry run?", html_book, embeddings)
    assert quoted == ["dry run: A dry run is a rehearsal of a command that reports what it would "
                      "change without changing anything."]


def test_printed_output_answers_a_question_about_the_result(pdf_path, pdf_book, embeddings):
    """Output in a fixed-pitch font keeps its lines; the p-value is quoted with the call that
    printed it (not the data's description) and cited on the printed page."""
    chunk = next(c for c in pdf_book if OUTPUT[0] in c["text"])
    assert f"{LEAD_IN}\n\n```\n{OUTPUT[0]}\n{OUTPUT[1]}\n```" in chunk["text"]
    quoted, answer, draft = _answer("What p-value does the t-test on the sleep data give?",
                                    pdf_book, embeddings)
    assert quoted[0] == "\n".join([LEAD_IN, *OUTPUT])
    assert answer.startswith("\n".join([LEAD_IN, *OUTPUT]) + " [1]")
    first = draft["sentences"][0]
    source = cited_sources([chunk], {chunk["chunk_id"]: [first["spans"][0][1:]]})[0]
    assert (source["page"], source["page_label"]) == (3, "2")


def test_pdf_code_with_brackets_is_quoted_verbatim(pdf_book, embeddings):
    """`x[[1]]` and `e[3] <- 17` are code: not citation markers, in the draft or the answer,
    wherever the code line falls in the quote (here last)."""
    quoted, answer, _ = _answer("How do I change the third element of a vector?", pdf_book,
                                embeddings)
    lead_in = ("To take the first component of a list and to change the third element of a "
               "vector, index them with brackets:")
    assert quoted[0] == f"{lead_in}\nx[[1]]\ne[3] <- 17"
    assert answer.splitlines() == [lead_in, "x[[1]]", "e[3] <- 17 [1]"]


def test_a_code_quote_that_opens_with_bracketed_code_keeps_its_brackets() -> None:
    """A code block quoted alone (asked for the code) keeps `[3]` on its first line too, while a
    citation marker in the prose quoted with it is still dropped."""
    text = "Change one element [4]:\n\n```\ne[3] <- 17\nx[[1]]\n```\n"
    evidence = [ChunkDict(chunk_id="c1", text=text, score=0.8, metadata={"start": 0})]
    code_at = text.index("e[3]")
    draft = {"sentences": [
        {"text": "e[3] <- 17\nx[[1]]", "citations": ["c1"],
         "spans": [["c1", code_at, code_at + len("e[3] <- 17\nx[[1]]")]]},
        {"text": "Change one element [4]:", "citations": ["c1"], "spans": [["c1", 0, 23]]}]}
    answer, _, _ = render(draft, evidence)
    assert answer == "e[3] <- 17\nx[[1]] [1]\nChange one element: [1]"


def test_a_sentence_after_a_quoted_block_starts_its_own_line() -> None:
    """After a code block the next sentence is not glued to its last line; prose joins prose."""
    text = "Build it with:\n\n```\ncolcon build\nsource install/setup.bash\n```\n\nIt links."
    evidence = [ChunkDict(chunk_id="c1", text=text, score=0.8, metadata={"start": 0})]
    block = text.index("Build")
    end = text.index("\n```\n\nIt")
    draft = {"sentences": [
        {"text": "Build it with:\ncolcon build\nsource install/setup.bash", "citations": ["c1"],
         "spans": [["c1", block, end]]},
        {"text": "It links.", "citations": ["c1"], "spans": [["c1", len(text) - 9, len(text)]]},
        {"text": "Nothing else.", "citations": ["c1"], "spans": [["c1", 0, 5]]}]}
    answer, _, _ = render(draft, evidence)
    assert answer == ("Build it with:\ncolcon build\nsource install/setup.bash [1]\n"
                      "It links. [1] Nothing else. [1]")


def test_a_word_hyphenated_at_a_line_end_is_whole_in_the_answer(pdf_book, embeddings):
    """'assign-' + 'ment' at a line end is quoted as 'assignment'."""
    quoted, _, _ = _answer("What happens when I index past the end of a vector?", pdf_book,
                           embeddings)
    assert quoted == ["Indexing past the end of a vector extends it with missing values, so "
                      "assignment never fails for a positive index."]


def test_a_sentence_across_a_footnote_at_a_page_break_is_quoted_whole(pdf_book, embeddings):
    """The footnote at the foot of the page leaves the sentence it interrupts whole."""
    quoted, answer, _ = _answer("When is the pooled estimate of the variance used?", pdf_book,
                                embeddings)
    assert quoted == ["When the variances are known to be equal the pooled estimate is used "
                      "instead, by passing var.equal = TRUE to the call."]
    assert NOTE not in answer


@pytest.mark.parametrize("question", [
    "On which page does the section on regression start?",  # only the contents line says it
    "What is the p-value of the two-sample t-test?",  # a contents line would support the output
])
def test_a_contents_page_is_never_quoted(pdf_book, embeddings, question):
    """The contents page is kept under its own heading, and no answer quotes from it, even when
    its lines are the ones that share the question's words."""
    contents = [c for c in pdf_book if "Contents" in c["metadata"]["heading_path"]]
    assert len(contents) == 1
    assert "Regression with one predictor and its output . . . ." in contents[0]["text"]
    draft = extractive_draft(question, pdf_book, embeddings)
    cited = {cid for s in draft["sentences"] for cid in s["citations"]}
    assert cited and contents[0]["chunk_id"] not in cited
    assert not any("Regression with one predictor" in s["text"] or "two-sample" in s["text"]
                   for s in draft["sentences"])


SHELL = """<html><head><title>The vault shell</title></head><body>
<h2>Starting the shell</h2>
<p>When the shell starts it prints its version and then waits for you at its prompt:</p>
<pre class="screen">vault 2.1
vault$</pre>
<p>For some users the greeting ends on another prompt:</p>
<pre class="screen">vault#</pre>
<p>That would mean you opened the shell as the administrator, who may change every setting of
every store.</p>
<p>Type quit to leave the shell and go back to the command line.</p>
</body></html>"""


def test_printed_output_is_followed_by_the_sentence_that_says_what_it_means(tmp_path, embeddings):
    """'Why does my prompt show vault#?': the output the question quotes leads, and the sentence
    right after it that points back at it ("That would mean ...") follows it, whatever else
    scores near the lead."""
    path = tmp_path / "shell.html"
    path.write_text(SHELL, encoding="utf-8")
    book = _evidence(path)
    quoted, answer, _ = _answer("Why does my prompt show vault#?", book, embeddings)
    assert quoted == ["For some users the greeting ends on another prompt:\nvault#",
                      "That would mean you opened the shell as the administrator, who may "
                      "change every setting of every store."]
    assert answer.endswith("every store. [1]")


@pytest.mark.parametrize(("text", "question", "lead"), [
    # no lead-in (the block opens the passage): the block leads though no code is asked for
    ("```\n$ git show HEAD~1    # the parent\n$ git show HEAD~9    # nine generations back\n"
     "```\n\nNames like these work with every command that takes a commit.",
     "What does HEAD~9 mean?",
     "$ git show HEAD~1    # the parent\n$ git show HEAD~9    # nine generations back"),
    # a sentence leads into the block: that sentence with its code, never the code alone
    ("The fetch command takes --depth to limit how much history it copies.\n\n```\n"
     "$ fetch --depth 3 origin\n```\n\nShallow copies are smaller and faster to make.",
     "What does --depth do?",
     "The fetch command takes --depth to limit how much history it copies.\n"
     "$ fetch --depth 3 origin"),
])
def test_a_code_block_printing_the_questions_literal_answers_it(embeddings, text, question,
                                                                 lead):
    """'What does HEAD~9 mean?' is answered where the book prints HEAD~9, here only in a code
    block's comment; the code is quoted bare only when nothing introduces it."""
    evidence = [ChunkDict(chunk_id="c1", text=text, score=0.8, metadata={"start": 0})]
    quoted, _, _ = _answer(question, evidence, embeddings)
    assert quoted[0] == lead


def test_a_bare_code_block_supports_an_answer_only_when_code_is_asked_for() -> None:
    """A code block printing the question's literal may answer it, but it never follows a prose
    lead as its supporting unit unless the question asks for code: "What does HEAD~9 name?" is
    answered by the sentence; "Which command shows HEAD~9?" by the sentence and the command."""
    text = ("```\n$ git show HEAD~9\n```\n\nHEAD~9 names the ninth ancestor of the current "
            "commit. An ancestor can also be named with a caret.\n")
    evidence = [ChunkDict(chunk_id="c1", text=text, score=0.8,
                          metadata={"source": "b.md", "heading_path": ["Naming commits"]})]
    meaning = extractive_draft("What does HEAD~9 name?", evidence, HashEmbedder(), max_sentences=3)
    assert [s["text"] for s in meaning["sentences"]] == [
        "HEAD~9 names the ninth ancestor of the current commit."]
    command = extractive_draft("Which command shows HEAD~9?", evidence, HashEmbedder(),
                               max_sentences=3)
    assert [s["text"] for s in command["sentences"]] == [
        "HEAD~9 names the ninth ancestor of the current commit.", "$ git show HEAD~9"]
