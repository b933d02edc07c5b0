"""Misspelt question words are corrected against the collection's own words, and only those."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graph.builder import build_graph
from textbound import course
from textbound.answer.spelling import correct_question, english_words, unknown_words
from textbound.documents.store import TermStats
from textbound.documents.store.memory import MemoryStore

from ..conftest import make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"

BOOK = [
    "NVIDIA Isaac Sim is a robotics simulator built on Omniverse. Install Isaac Sim from the "
    "Omniverse launcher and open a sample scene.",
    "Gazebo simulates rigid-body physics so robot software can be tested before hardware.",
    "Set ROS_DOMAIN_ID so that nodes on one network only see their own domain.",
    "A sum of joint torques gives the total load; the cart carries the battery.",
    "A service is a request-response interaction between two nodes.",
    "The planned path avoids the gas station; mergers of maps follow the Tudor convention.",
]


@pytest.fixture
def stats() -> TermStats:
    from textbound.fakes import HashEmbedder

    store = MemoryStore(HashEmbedder(16))
    store.ensure_collection(16)
    ids = [f"00000000-0000-4000-8000-{n:012d}" for n in range(len(BOOK))]
    store.upsert(ids, store.embeddings.embed_documents(BOOK), BOOK,
                 [{"source": "book.md", "heading_path": ["Book"]} for _ in BOOK])
    return store.term_stats()


def test_a_product_name_with_two_typos_is_corrected(stats: TermStats) -> None:
    """"Isaak Sym": Isaak is no English word, so it becomes the book's Isaac; "Sym" is one
    (a symbol), and becomes "Sim" only because the book writes "Isaac Sim"."""
    fix = correct_question("How do I install Isaak Sym?", stats)
    assert fix is not None
    assert fix.question == "How do I install Isaac Sim?"
    assert fix.changes == [("Isaak", "Isaac"), ("Sym", "Sim")]
    lower = correct_question("how do i install isaak sym", stats)
    assert lower is not None and lower.question == "how do i install isaac sim"


def test_a_word_the_book_uses_is_never_changed(stats: TermStats) -> None:
    """Every word the book has stays, even one edit from another book word (sum / sim)."""
    for question in ("What is the sum of joint torques?", "What does the cart carry?",
                     "What does Gazebo simulate?", "What is Isaac Sim?"):
        assert correct_question(question, stats) is None


def test_no_word_is_corrected_towards_a_word_the_book_lacks(stats: TermStats) -> None:
    """A typo of a word the book never uses has nothing to become: it stays as asked, and
    every correction made is a word of the book."""
    assert "receive" not in stats.counts
    assert correct_question("Does the node recieve messages?", stats) is None
    fix = correct_question("Does Gazebo simulate Omniverce scenes for the robott?", stats)
    assert fix is not None
    assert all(new.lower() in stats.counts for _, new in fix.changes)
    assert fix.changes == [("Omniverce", "Omniverse"), ("robott", "robot")]


def test_an_english_word_the_book_lacks_is_kept(stats: TermStats) -> None:
    """An ordinary word the book never uses is what makes a question out of its scope: "cat"
    (one edit from the book's "cart") and "Tesla" are not turned into book words."""
    assert "cat" in english_words() and "cart" in stats.counts
    assert correct_question("What does the cat carry?", stats) is None
    assert correct_question("Which battery does a Tesla use?", stats) is None


def test_identifiers_and_short_words_are_never_guessed(stats: TermStats) -> None:
    """Commands, flags and variables are matched verbatim (BM25), never corrected; nor are
    words shorter than three letters."""
    assert correct_question("What does ROS_DOMAN_ID set?", stats) is None
    assert correct_question("What is ROS_DOMAIN_ID?", stats) is None
    assert correct_question("Is it ok?", stats) is None


def test_without_word_counts_nothing_is_corrected() -> None:
    """A store that gives no word counts (an old fake) corrects nothing."""
    assert correct_question("How do I install Isaak Sym?", TermStats(0, {})) is None


@pytest.fixture
def book_graph(tmp_path: Path, embeddings: Any) -> Any:
    store = MemoryStore(embeddings)
    store.ensure_collection(len(embeddings.embed_query("probe")))
    ids = [f"00000000-0000-4000-8000-{n:012d}" for n in range(len(BOOK))]
    store.upsert(ids, embeddings.embed_documents(BOOK), BOOK,
                 [{"source": "book.md", "title": "Book", "heading_path": ["Book", f"S{n}"],
                   "section": f"Book > S{n}", "start": 0, "end": len(t)}
                  for n, t in enumerate(BOOK)])
    settings = make_settings(tmp_path, audit_log=tmp_path / "audit.jsonl",
                             calibration_file=CALIBRATION)
    graph = build_graph(settings=settings, embeddings=embeddings, store=store,
                        profile=course.load_profile())
    return graph, ids, store, settings


def test_the_misspelt_name_finds_its_passage_instead_of_an_empty_retrieval(
        book_graph: Any) -> None:
    """Without correction "Isaak Sym" names something the book never mentions (refused as
    empty retrieval); corrected, the Isaac Sim passage is retrieved first, the checks read the
    corrected question and the diagnostics show it."""
    graph, ids, store, settings = book_graph
    question = {"question": "How do I install Isaak Sym?"}
    off = graph.invoke(question, context={"spelling": False})
    assert off["refusal_reason"] == "empty_retrieval"
    assert "known_names" in off["diagnostics"]["failed_checks"]
    assert "corrected_question" not in off["diagnostics"]
    on = graph.invoke(question)
    assert on["refusal_reason"] != "empty_retrieval"
    assert "known_names" not in on["diagnostics"]["failed_checks"]
    assert on["diagnostics"]["corrected_question"] == "How do I install Isaac Sim?"
    assert on["diagnostics"]["spelling"] == [["Isaak", "Isaac"], ["Sym", "Sim"]]

    from langgraph.runtime import Runtime

    from graph.context import resolve_tunables
    from nodes.retrieve import retrieve

    state: Any = {"clean_question": question["question"]}
    got = retrieve(state, Runtime(context=resolve_tunables(settings)), store=store,
                   embeddings=store.embeddings)
    assert got["corrected_question"] == "How do I install Isaac Sim?"
    assert got["chunks"][0]["chunk_id"] == ids[0]


def test_over_eager_corrections_are_refused(stats: TermStats) -> None:
    """The guards that keep out-of-corpus questions out of scope, each seen on SQuAD 2.0 dev
    questions before it was added: acronyms ("GPS" is no "gas"), a changed first letter ("math"
    is no "path"), a lone endings change ("Soviets"), a name into a common word ("Meggers" is
    no "mergers") and a common word into a name ("tudr" may become "Tudor" only as a name)."""
    assert {"gas", "path", "mergers", "tudor"} <= set(stats.counts)
    for question in ("At what rank is GPS service?", "What type of math was advanced?",
                     "What did Betty Meggers describe?", "Which tudr convention applies?",
                     "What do the robots do?"):
        assert correct_question(question, stats) is None, question
    fix = correct_question("Which Tudr convention applies?", stats)
    assert fix is not None and fix.changes == [("Tudr", "Tudor")]


def test_a_lower_case_name_the_book_never_uses_is_unknown(stats: TermStats) -> None:
    """"tensorflowlite" is no word of the book, no English word and no typo of either: a name
    the book does not know. Words of the book, English words ("spreadsheet"), a typo of a book
    word ("simulater") or of an English word ("recieve"), another form of a book word, and
    short words are not."""
    assert unknown_words("How do I export the scene to tensorflowlite?", stats) == [
        "tensorflowlite"]
    assert unknown_words("Can the simulator read a spreadsheet?", stats) == []
    assert unknown_words("Does the simulater recieve torques?", stats) == []
    assert unknown_words("Does gazebo use xyzq?", stats) == []  # "gazebo" is the book's
    # another form of a word of the book: all but its last three letters open "simulator"
    assert unknown_words("Is the model simulatorial?", stats) == []
    assert unknown_words("How do I export to tensorflowlite?", None) == []


def test_a_question_naming_a_lower_case_name_the_book_lacks_is_refused(
        book_graph: Any) -> None:
    """The gate refuses it as it refuses a capitalised name the book never uses."""
    graph, _, _, _ = book_graph
    out = graph.invoke({"question": "How do I open a sample scene in tensorflowlite?"})
    assert out["refusal_reason"] == "empty_retrieval"
    assert "known_names" in out["diagnostics"]["failed_checks"]
    same = graph.invoke({"question": "How do I open a sample scene in Isaac Sim?"})
    assert same["refusal_reason"] != "empty_retrieval"
