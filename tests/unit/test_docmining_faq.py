"""training/docmining/faq.py: a FAQ written as a man page, as reStructuredText and as HTML gives
the expected question/answer pairs and same-page negatives. The pages are made up for these tests.
"""

from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path

from training.docmining.faq import (
    faq_entries_html,
    faq_entries_man,
    faq_entries_rst,
    faq_records,
    run,
)

MAN_FAQ = r""".TH FROBFAQ 1 "2026" "frobtools" "Frobtools FAQ"
.SH NAME
frobfaq \- frequently asked questions about frobnicate
.SH "FROBNICATING FILES"
.SS "How do I frobnicate a whole directory?"
(contributed by A. Writer)
.PP
Give frobnicate the \fB\-r\fR option and the directory. Each file under it is frobnicated in
place, and links are left alone.
.SS "Why is my output empty?"
An empty output means the input held no frob markers. Run frobnicate \-v to list what it saw.
.SS "Frobnicating in color"
This section asks nothing.
.SS "Can frobnicate read from a pipe?"
Yes. When no file is named, frobnicate reads standard input until it ends.
"""

RST_FAQ = """=========
Shelf FAQ
=========

.. contents::

How do I list every shelf in the catalogue?
-------------------------------------------

Use :func:`shelf.list_all` with no arguments. It returns the shelves in catalogue order::

   shelves = shelf.list_all()

Why does a shelf report zero books after a move?
------------------------------------------------

::

   shelf.count("A3")

The count is refreshed by the nightly ``reindex`` job, see `the reindex guide <reindex.html>`_.
Until it runs, a moved shelf reports the count of its old place.

General
-------

Shelves are numbered from one.
"""

# the three HTML layouts seen in Debian's FAQs: a numbered heading with a permalink mark, a
# paragraph all in bold under a table of contents, a definition term; and what is no question
HTML_FAQ = """<html><head><title>Widget FAQ</title><style>p {}</style></head><body>
<h1>Widget FAQ</h1>
<ol><li><a href="#q1">How do I stack two widgets?</a></li></ol>
<h2 class="section">1.1 How do I stack two widgets?<a class="headerlink" href="#s">#</a></h2>
<p>Put the second widget on the first with <code>widget stack a b</code>, then press Enter.</p>
<pre>widget stack a b
widget show</pre>
<a name="q2"></a>
<p><b>(2) Can a widget hold   a gadget?</b></p>
<blockquote><p>No. A widget holds other widgets only, and a gadget is refused with an error.</p>
</blockquote>
<p>Why would anyone ask this? This paragraph is no question: only part of it is bold, <b>here</b>.
</p>
<h2>Limits</h2>
<p>This answer belongs to no question, since a heading that asks nothing comes first.</p>
<dl><dt>What is the largest widget?</dt><dd>The largest widget measures ten metres on a side.</dd>
</dl>
<h3>Is this empty?</h3>
</body></html>
"""


def test_an_html_faq_gives_headings_bold_paragraphs_and_terms_that_ask():
    entries = faq_entries_html(HTML_FAQ)
    assert [q for q, _ in entries] == ["How do I stack two widgets?",
                                       "Can a widget hold a gadget?",
                                       "What is the largest widget?"]
    stack, hold, largest = (ps for _, ps in entries)
    # the permalink mark is not part of the question; code keeps its lines
    assert stack == ["Put the second widget on the first with widget stack a b , then press "
                     "Enter.", "widget stack a b\nwidget show"]
    # the answer runs on to the next heading, a paragraph that only half-bolds a question too
    assert hold[0] == ("No. A widget holds other widgets only, and a gadget is refused with an "
                       "error.")
    assert len(hold) == 2 and hold[1].startswith("Why would anyone ask this?")
    assert largest == ["The largest widget measures ten metres on a side."]
    recs = faq_records(entries, page="faq", package="widget-doc", path="faq.html", seed=1)
    pos = [r for r in recs if not r["is_impossible"]]
    assert pos[0]["answers"][0]["text"] == ("Put the second widget on the first with widget "
                                            "stack a b , then press Enter.")
    assert all(r["context"][r["answers"][0]["start"]:].startswith(r["answers"][0]["text"])
               for r in pos)
    # each question is also asked against another answer of the page
    neg = [r for r in recs if r["is_impossible"]]
    assert len(neg) == 3 and all(r["answers"] == [] for r in neg)


def test_a_man_page_faq_gives_each_asking_subsection_with_its_paragraphs():
    entries = faq_entries_man(MAN_FAQ)
    assert [q for q, _ in entries] == ["How do i frobnicate a whole directory?",
                                       "Why is my output empty?",
                                       "Can frobnicate read from a pipe?"]
    assert entries[0][1][0] == "(contributed by A. Writer)"
    assert entries[0][1][1].startswith("Give frobnicate the -r option")


def test_an_rst_faq_gives_each_asking_title_with_its_paragraphs_as_rendered():
    entries = faq_entries_rst(RST_FAQ)
    assert [q for q, _ in entries] == ["How do I list every shelf in the catalogue?",
                                       "Why does a shelf report zero books after a move?"]
    first = entries[0][1]
    # roles and literal markers read as rendered; "text::" reads "text:"
    assert first[0] == ("Use shelf.list_all with no arguments. It returns the shelves in "
                        "catalogue order:")
    assert first[1] == "shelves = shelf.list_all()"
    # a bare "::" opens a literal block and reads nothing
    assert entries[1][1][:2] == ['shelf.count("A3")', entries[1][1][1]]
    assert entries[1][1][1].startswith("The count is refreshed by the nightly reindex job, see "
                                       "the reindex guide.")


def test_records_answer_with_the_first_sentence_of_substance_and_refuse_another_answer():
    entries = faq_entries_man(MAN_FAQ)
    recs = faq_records(entries, page="frobfaq", package="frobtools", path="frobfaq.1", seed=3)
    pos = [r for r in recs if not r["is_impossible"]]
    neg = [r for r in recs if r["is_impossible"]]
    assert len(pos) == len(neg) == 3
    for r in pos:
        span = r["answers"][0]
        assert r["context"][span["start"]:span["start"] + len(span["text"])] == span["text"]
        assert "contributed by" not in r["context"]  # the attribution is no answer
    assert pos[0]["answers"][0]["text"] == "Give frobnicate the -r option and the directory."
    own = {r["question"]: r["context"] for r in pos}
    for r in neg:
        assert r["answers"] == [] and r["context"] in own.values()
        assert r["context"] != own[r["question"]]  # always another question's answer
        assert r["id"].split(":")[-2] == "neg-faq"
    # one page is one article: held out (or trained on) whole
    assert {r["title"].split(" / ")[0] for r in recs} == {"frobtools:frobfaq"}
    again = faq_records(entries, page="frobfaq", package="frobtools", path="frobfaq.1", seed=3)
    assert again == recs


def test_run_reads_installed_faqs_and_never_an_excluded_package(tmp_path: Path):
    man = tmp_path / "man" / "man1"
    man.mkdir(parents=True)
    (man / "perlfaq1.1").write_text(MAN_FAQ, encoding="utf-8")
    doc = tmp_path / "doc" / "shelf-doc" / "html" / "_sources" / "faq"
    doc.mkdir(parents=True)
    (doc / "general.rst.txt").write_text(RST_FAQ, encoding="utf-8")
    widget = tmp_path / "doc" / "widget-doc"
    widget.mkdir()
    (widget / "faq.html").write_text(HTML_FAQ, encoding="utf-8")
    # a page with fewer than MIN_HTML_QUESTIONS questions is a manual, not a FAQ
    (widget / "intro.html").write_text("<h2>What is a widget?</h2><p>A thing that stacks, of "
                                       "course, and nothing more.</p>", encoding="utf-8")
    # a doc folder reached again through a link (as python3-doc's is) is read once
    (tmp_path / "doc" / "shelf").symlink_to(tmp_path / "doc" / "shelf-doc")
    info = tmp_path / "info"
    info.mkdir()
    (info / "perl-doc.list").write_text(f"{man / 'perlfaq1.1'}\n", encoding="utf-8")
    (info / "shelf-doc.list").write_text(f"{doc / 'general.rst.txt'}\n", encoding="utf-8")
    (info / "widget-doc.list").write_text(f"{widget / 'faq.html'}\n{widget / 'intro.html'}\n",
                                          encoding="utf-8")
    status = tmp_path / "status"
    status.write_text("Package: perl-doc\nSource: perl\n\nPackage: shelf-doc\nSource: shelf\n"
                      "\nPackage: widget-doc\nSource: widget\n", encoding="utf-8")
    exclude = tmp_path / "EXCLUDE"

    def mine(patterns: str) -> dict:
        exclude.write_text(patterns, encoding="utf-8")
        return run(Namespace(out=str(tmp_path / "out"), seed=13, man_root=str(tmp_path / "man"),
                             doc_root=str(tmp_path / "doc"), exclude=str(exclude),
                             dpkg_info=str(info), dpkg_status=str(status)))

    both = mine("git*\n")
    assert [(p["package"], p["questions"]) for p in both["pages"]] == [
        ("perl-doc", 3), ("shelf-doc", 2), ("widget-doc", 3)]
    lines = (tmp_path / "out" / "docmining-faq.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == both["records"] == 16
    assert json.loads(lines[0])["source"].startswith("docmining faq perl-doc ")
    only = mine("shelf*\nwidget\n")
    assert [p["package"] for p in only["pages"]] == ["perl-doc"]
