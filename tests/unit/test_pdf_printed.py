"""PDF as printed: citations name the page number the book prints; footnotes leave the sentence.

Every PDF here is written by tests/fixtures/pdf/writer.py, so the printed numbers, the page labels
and the footnotes are known.
"""

from pathlib import Path

import pytest

from graph.builder import build_graph
from tests.fixtures.pdf.writer import Line, PageLabels, pdf_bytes
from textbound.answer.sources import cited_sources
from textbound.documents.ingest import (
    chunk_document,
    ingest,
    load_file,
    page_at,
    page_label_at,
)
from textbound.documents.pdf import read_pdf
from textbound.quality.analytics.marked import passage_place
from textbound.serving.cli._common import console
from textbound.serving.cli.answers import print_response

from ..conftest import make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"
HEADER = "Ocean Sensing Handbook"
SALINITY = "Salinity is measured from the conductivity of the water and its temperature."
PAGE_SENTENCES = [
    "The preface says who the handbook is for and how to read its chapters.",
    "The contents list every chapter of the handbook and the page it starts on.",
    "A conductivity cell sends a small current through the water between two electrodes.",
    SALINITY,
    "Oxygen optodes measure how a dye glows, since dissolved oxygen quenches its light.",
    "Fluorometers estimate chlorophyll from the red light that algae give back.",
]


def page(number: str | None, sentence: str) -> list[Line]:
    """A page: the running header, one paragraph, and its printed number (None: none)."""
    lines = [Line(HEADER, 72, 752, 9), Line(sentence, 72, 680, 11),
             Line("Each instrument is calibrated before a cruise and checked after it.", 72, 666)]
    return lines + ([Line(number, 300, 36, 9)] if number else [])


def write(tmp_path: Path, numbers: list[str | None], **kw) -> Path:
    path = tmp_path / "handbook.pdf"
    path.write_bytes(pdf_bytes([page(n, s) for n, s in zip(numbers, PAGE_SENTENCES, strict=True)],
                               **kw))
    return path


def chunk_with(path: Path, sentence: str):
    return next(c for c in chunk_document(load_file(path, path.name)) if sentence in c.text)


def cited(chunk, sentence: str) -> dict:
    at = chunk.metadata["start"] + chunk.text.index(sentence)
    passage = {"chunk_id": chunk.chunk_id, "text": chunk.text, "score": 0.9,
               "metadata": chunk.metadata}
    return cited_sources([passage], {chunk.chunk_id: [[at, at + len(sentence)]]})[0]


def shown(source: dict) -> str:
    """What the command line prints for an answer citing `source`."""
    out = {"answer": "x [1]", "was_refusal": False, "confidence_level": "high",
           "sources": [source], "diagnostics": {"path": "release_answer", "chunks_retrieved": 1,
                                                "max_score": 0.9, "latency_ms": 1}}
    with console.capture() as cap:
        print_response(out)
    return cap.get()


def test_printed_numbers_offset_from_the_file_give_the_printed_label(tmp_path):
    """Front matter i, ii, then 1, 2, ...: each page is labelled as printed, a missing one as
    its neighbours imply."""
    # the file's page 5 prints no number (a chapter opener): its neighbours say it is 3
    pdf = write(tmp_path, ["i", "ii", "1", "2", None, "4"])
    assert read_pdf(pdf).page_labels == {1: "i", 2: "ii", 3: "1", 4: "2", 5: "3", 6: "4"}
    chunk = chunk_with(pdf, SALINITY)  # the whole book is one passage, from page i on
    assert chunk.metadata["page"] == 1 and chunk.metadata["page_label"] == "i"
    assert [p[1:] for p in chunk.metadata["page_starts"]] == [
        [2, "ii"], [3, "1"], [4, "2"], [5, "3"], [6, "4"]]
    source = cited(chunk, SALINITY)
    assert source["page"] == 4 and source["page_label"] == "2"
    assert ", page 2 " in shown(source)
    assert passage_place(source).endswith(", page 2")
    assert cited(chunk, PAGE_SENTENCES[4])["page_label"] == "3"


def test_an_answer_cites_the_printed_page(tmp_path, store, embeddings):
    """The graph's answer names the file's page in `page` and the printed one in `page_label`."""
    ingest(store, [write(tmp_path, ["i", "ii", "1", "2", "3", "4"])])
    graph = build_graph(settings=make_settings(tmp_path, calibration_file=CALIBRATION),
                        embeddings=embeddings, store=store)
    out = graph.invoke({"question": "How is salinity measured?"},
                       context={"generator": "extractive", "answer_threshold": 0.5})
    assert not out["was_refusal"], out["answer"]
    source = next(s for s in out["sources"] if s["page"] == 4)
    assert source["page_label"] == "2"


def test_a_misread_number_takes_the_label_its_neighbours_imply(tmp_path):
    """One page whose number reads wrong ("7" among 1, 2, 3, ...) is labelled as the run says."""
    pdf = write(tmp_path, ["1", "2", "7", "4", "5", "6"])
    assert read_pdf(pdf).page_labels == {n: str(n) for n in range(1, 7)}


def test_the_pdfs_own_page_labels_win(tmp_path):
    """A PDF with /PageLabels is cited with them, whatever numbers its pages print."""
    pdf = write(tmp_path, ["1", "2", "3", "4", "5", "6"],
                labels=[PageLabels(0, "r"), PageLabels(2, "D", prefix="A-", start=10)])
    parsed = read_pdf(pdf)
    assert parsed.label_source == "pdf"
    assert parsed.page_labels == {1: "i", 2: "ii", 3: "A-10", 4: "A-11", 5: "A-12", 6: "A-13"}
    assert cited(chunk_with(pdf, SALINITY), SALINITY)["page_label"] == "A-11"


@pytest.mark.parametrize("numbers", [
    [None] * 6,
    ["3", "9", "1", "14", "2", "30"],  # numbers that follow no run of pages
], ids=["none-printed", "disagreeing"])
def test_no_printed_numbers_fall_back_to_the_files_page(tmp_path, numbers):
    """Without a consistent printed number a page has no label and is cited by the file's page."""
    pdf = write(tmp_path, numbers)
    assert read_pdf(pdf).page_labels == {}
    chunk = chunk_with(pdf, SALINITY)
    assert "page_label" not in chunk.metadata
    source = cited(chunk, SALINITY)
    assert source["page"] == 4 and source["page_label"] == "4"
    assert ", page 4 " in shown(source)


def test_a_chunk_stored_before_labels_falls_back_to_its_page():
    """Old metadata (no `page_label`, two-item `page_starts`) cites the file's pages."""
    meta = {"page": 3, "start": 100, "end": 400, "page_starts": [[250, 4]]}
    assert page_label_at(meta, 120) == "3" and page_label_at(meta, 300) == "4"
    assert page_label_at(meta, None) == "3"
    assert page_label_at({"start": 0}, 10) is None  # not a PDF: no page at all
    assert ", page 3 " in shown({"chunk_id": "c", "score": 0.9, "source": "a.pdf",
                                 "section": "S", "citation": 1, "start": 0, "end": 9, "page": 3})


# --- footnotes ----------------------------------------------------------------------------------

BEFORE_BREAK = ["Between dives an underwater glider drifts at the surface, sends its data by",
                "satellite and waits for new orders. When they arrive the glider"]
AFTER_BREAK = "pumps oil into its bladder and begins the next dive."
NOTE = "Gliders were first proposed by Henry Stommel in 1989."


def footnote_pages(marker: str) -> list[list[Line]]:
    """A paragraph broken at a page end, with a smaller footnote below it on the first page."""
    note = [Line("1", 72, 64, 5.5), Line(NOTE, 76, 60, 8)] if marker == "superscript" \
        else [Line(f"{marker} {NOTE}", 72, 60, 8)]
    first = [Line(HEADER, 72, 752, 9),
             *(Line(t, 72, 680 - 14 * i, 11) for i, t in enumerate(BEFORE_BREAK)),
             *note, Line("1", 300, 36, 9)]
    second = [Line(HEADER, 72, 752, 9), Line(AFTER_BREAK, 72, 706, 11),
              Line("The next section is about batteries.", 72, 670, 11), Line("2", 300, 36, 9)]
    return [first, second]


@pytest.mark.parametrize("marker", ["1", "*", "\u2020", "superscript"])
def test_a_footnote_at_a_page_break_leaves_the_sentence_whole(tmp_path, marker):
    """The sentence runs on across the page break; the footnote is a paragraph of its own."""
    pdf = tmp_path / "notes.pdf"
    pdf.write_bytes(pdf_bytes(footnote_pages(marker)))
    parsed = read_pdf(pdf)
    paragraphs = parsed.text.strip().split("\n\n")
    whole = " ".join(BEFORE_BREAK) + " " + AFTER_BREAK
    assert paragraphs[0] == whole
    assert paragraphs[1].endswith(NOTE) and len(paragraphs[1]) <= len(NOTE) + 2
    note_at = parsed.text.index(NOTE)
    assert [p for p, start in parsed.page_starts if start <= note_at][-1] == 1
    chunk = chunk_with(pdf, NOTE)
    assert whole in chunk_with(pdf, AFTER_BREAK).text
    assert any(p.endswith(NOTE) and len(p) <= len(NOTE) + 2 for p in chunk.text.split("\n\n"))
    at = chunk.metadata["start"] + chunk.text.index(NOTE)
    assert page_at(chunk.metadata, at) == 1  # quoted on its own, it is cited on its page
