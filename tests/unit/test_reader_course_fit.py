"""The reader page fits the course: its example question and chapter order come from the book."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.conftest import make_settings
from textbound import course
from textbound.documents.profile import book_order, chapters_of, is_contents_heading
from textbound.serving.reader import mount, question_placeholder
from textbound.serving.reader._library import Library, mostly_links

CONTENTS_PAGE = """<html><head><title>Contents</title></head><body>
<h1>Ocean Robotics</h1>
<ul><li><a href="gliders.html">Chapter 1: Gliders</a></li>
<li><a href="floats.html">Chapter 2: Floats</a></li>
<li><a href="preface.html">Preface</a></li></ul></body></html>"""

PROSE_PAGE = """<html><body><h1>Chapter 1: Gliders</h1>
<p>A glider changes its buoyancy to dive and climb, gliding forward on its wings; see
<a href="floats.html">floats</a> and <a href="x.html">x</a> and <a href="y.html">y</a>.</p>
</body></html>"""


def _profile(**data: Any) -> course.Profile:
    return course.parse_profile({"title": "Ocean Robotics", **data}, origin="test")


def _doc(source: str, title: str, sections: list[str] | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"source": source, "title": title, "sections": sections or [], **extra}


def _order(toc: list[dict[str, Any]], chapters: tuple[str, ...] = ()) -> list[str]:
    return [d["title"] for d in book_order(toc, chapters)]


def test_the_bundled_course_keeps_its_example() -> None:
    """The bundled profile declares the example its page has always shown."""
    assert question_placeholder(course.load_profile()) == "e.g. What is a ROS 2 topic?"


def test_a_declared_example_question_is_the_placeholder() -> None:
    """A profile's `example_question` is offered as typed."""
    profile = _profile(example_question="How does a glider dive?", chapters=["Gliders"])
    assert question_placeholder(profile) == "e.g. How does a glider dive?"


def test_without_an_example_the_first_topical_chapter_gives_one() -> None:
    """The profile's chapters, numbering and front matter skipped, name the example's topic."""
    profile = _profile(chapters=["Preface", "Contents", "Chapter 1: Gliders", "Floats"])
    assert question_placeholder(profile) == "Ask about Gliders"


def test_without_a_chapter_list_the_book_headings_give_the_example() -> None:
    """One document and no profile chapters: its first section heading."""
    toc = [_doc("b.pdf", "Ocean Robotics", ["Table of Contents", "2. Floats", "Gliders"])]
    assert question_placeholder(_profile(), toc) == "Ask about Floats"


def test_nothing_to_draw_from_gives_a_neutral_placeholder() -> None:
    """No example, no chapters, no documents: a prompt that names no other course's topic."""
    assert question_placeholder(_profile()) == "Ask a question about the course"


def test_a_non_text_example_question_is_a_profile_mistake() -> None:
    """`example_question` must be text."""
    with pytest.raises(course.ProfileFormatError, match="example_question"):
        _profile(example_question=["a", "b"])


def test_the_profile_chapter_list_orders_the_documents() -> None:
    """Documents follow the profile's list, matched by title without its numbering."""
    toc = [_doc("a.md", "Chapter 1: Gliders"), _doc("b.md", "Floats"), _doc("c.md", "Sonar")]
    assert _order(toc, ("Sonar", "Gliders", "Floats")) == [
        "Sonar", "Chapter 1: Gliders", "Floats"]


def test_chapter_numbers_order_the_documents_before_file_names() -> None:
    """Every title numbered: the numbers give the order, whatever the files are called."""
    toc = [_doc("a/alpha.md", "Chapter 10: Sonar"), _doc("a/beta.md", "Chapter 2: Floats"),
           _doc("a/gamma.md", "1. Gliders")]
    assert _order(toc) == ["1. Gliders", "Chapter 2: Floats", "Chapter 10: Sonar"]


def test_file_order_is_the_fallback_and_compares_numbers_as_numbers() -> None:
    """Unnumbered titles: the file names, "ch2" before "ch10"."""
    toc = [_doc("a/ch10.md", "Sonar"), _doc("a/ch2.md", "Floats"), _doc("a/ch1.md", "Gliders")]
    assert _order(toc) == ["Gliders", "Floats", "Sonar"]


def test_front_matter_comes_first_and_back_matter_last() -> None:
    """A preface precedes the chapters, even those the profile lists; a glossary follows them."""
    toc = [_doc("a/1.md", "Gliders"), _doc("a/2.md", "Glossary"), _doc("a/3.md", "Preface"),
           _doc("a/4.md", "Floats")]
    assert _order(toc, ("Floats", "Gliders")) == ["Preface", "Floats", "Gliders", "Glossary"]


def test_a_contents_page_is_not_a_chapter() -> None:
    """A document titled "Contents", or flagged as a page of links, is left out."""
    toc = [_doc("a/0.md", "Table of Contents"), _doc("a/1.html", "Ocean Robotics", contents=True),
           _doc("a/2.md", "Gliders")]
    assert _order(toc) == ["Gliders"]
    assert chapters_of(toc) == ["Gliders"]


def test_a_contents_heading_is_not_a_derived_chapter() -> None:
    """One book: its sections in order, the PDF's `###### Contents` listing left out."""
    book = [_doc("b.pdf", "Ocean Robotics", ["Contents", "Preface", "Gliders", "Floats"])]
    assert chapters_of(book) == ["Preface", "Gliders", "Floats"]
    assert [is_contents_heading(t) for t in ("Contents", "TABLE OF CONTENTS:", "Contents of a cell")
            ] == [True, True, False]


def test_an_html_page_of_links_is_a_contents_page() -> None:
    """Mostly link text: a contents page; prose that links a few words: not one."""
    assert mostly_links(CONTENTS_PAGE)
    assert not mostly_links(PROSE_PAGE)


def test_the_chapters_route_lists_the_book_in_its_order(tmp_path: Path) -> None:
    """The page's chapter list: front matter first, numbered chapters, no contents page."""
    book = tmp_path / "book"
    book.mkdir()
    (book / "a-contents.html").write_text(CONTENTS_PAGE, encoding="utf-8")
    (book / "b-floats.md").write_text("# Chapter 2: Floats\n\nFloats drift.\n", encoding="utf-8")
    (book / "c-gliders.md").write_text("# Chapter 1: Gliders\n\nGliders glide.\n",
                                       encoding="utf-8")
    (book / "d-preface.md").write_text("# Preface\n\nWhy this book.\n", encoding="utf-8")
    settings = make_settings(tmp_path, corpus_dir=book, collection="ocean")
    assert Library(None, book).entries()["book/a-contents.html"].contents
    app = FastAPI()
    mount(app, settings=settings)
    client = TestClient(app)
    chapters = client.get("/api/chapters").json()["chapters"]
    assert [c["title"] for c in chapters] == ["Preface", "Chapter 1: Gliders", "Chapter 2: Floats"]
    info = client.get("/api/reader").json()
    assert info["question_placeholder"] == "Ask about Gliders"
    assert client.get("/api/chapters/book/a-contents.html").status_code == 200  # still readable


def test_a_profile_list_that_misses_a_chapter_does_not_reorder_the_book() -> None:
    """A list naming some chapters only ('Simulation & Digital Twin' for '... and Digital
    Twins') leaves the book in its own order, not the missed chapters moved to the end."""
    from textbound.documents.profile import book_order
    toc = [{"source": f"corpus/0{n}-x.md", "title": t} for n, t in enumerate(
        ["Physical AI Foundations", "Simulation and Digital Twins", "Vision Systems"], start=1)]
    order = book_order(toc, ["Physical AI Foundations", "Simulation & Digital Twin",
                             "Vision Systems"])
    assert [d["source"] for d in order] == ["corpus/01-x.md", "corpus/02-x.md", "corpus/03-x.md"]
