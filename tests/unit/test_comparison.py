"""Comparison questions: the two sides read once, a unit about each side (answer/comparison.py)."""

import pytest

from textbound.answer.comparison import about, one_per_side
from textbound.answer.compose import extractive_draft
from textbound.answer.evidence import asked_terms, compared_sides
from textbound.fakes import HashEmbedder


@pytest.mark.parametrize(("question", "sides"), [
    # a closing complement is said of both sides
    ("What's the difference between PUSH and PULL sockets in a message queue?",
     ("PUSH", "PULL sockets")),
    ("What is the difference between warm and cold starts for a robot controller?",
     ("warm", "cold starts")),
    # after "between", only "and" parts the sides: "with" belongs to the first
    ("What is the difference between a joint with a brake and a free joint?",
     ("a joint with a brake", "a free joint")),
    # one side inside the other
    ("What's the difference between launch and launch all?", ("launch", "launch all")),
    ("How is a servo different from a stepper?", ("a servo", "a stepper")),
    ("Who built the first humanoid robot?", None),
])
def test_the_sides_of_a_comparison(question: str, sides: tuple[str, str] | None) -> None:
    assert compared_sides(question) == sides


def test_asked_terms_are_the_sides_as_written() -> None:
    """Each side is looked up as the question writes it; no head is borrowed from the other."""
    assert asked_terms("What's the difference between PUSH and PULL sockets in a message "
                       "queue?") == ["PUSH", "PULL sockets"]


def test_a_unit_is_about_a_side_by_its_own_words() -> None:
    """The side's own words, any inflection ("grippers" names "a gripper")."""
    assert about("Grippers close on a part.", "a gripper", "a suction nozzle") == 1.0
    assert about("A suction nozzle holds flat parts.", "a gripper", "a suction nozzle") == 0.0
    assert about("Suction nozzles hold flat parts.", "a suction nozzle", "a gripper") == 1.0


def test_a_side_written_inside_the_other_is_matched_as_a_phrase() -> None:
    """"launch" is about `launch` only where it is not part of "launch all"."""
    assert about("Use launch all to start every node.", "launch", "launch all") == 0.0
    assert about("Use launch to start one node.", "launch", "launch all") == 1.0
    assert about("Use launch all to start every node.", "launch all", "launch") == 1.0


def _chunk(text: str) -> dict:
    return {"chunk_id": "c1", "text": text, "score": 0.8,
            "metadata": {"heading_path": ["Grasping"], "source": "book.md"}}


def _pick(question: str, text: str) -> list[str]:
    draft = extractive_draft(question, [_chunk(text)], HashEmbedder())
    return [s["text"] for s in draft["sentences"]]


def test_each_side_gets_a_unit_about_it_not_one_naming_both() -> None:
    """A sentence that says the same of both sides counts for half on each."""
    text = ("Grippers and suction nozzles are both mounted on the wrist flange of the arm. "
            "A gripper closes two fingers around a part and can hold odd shapes. "
            "A suction nozzle needs a flat, sealed surface to hold a part.")
    picked = _pick("What is the difference between a gripper and a suction nozzle?", text)
    assert picked == ["A gripper closes two fingers around a part and can hold odd shapes.",
                      "A suction nozzle needs a flat, sealed surface to hold a part."]


def test_a_sentence_that_sets_the_sides_against_each_other_is_about_both() -> None:
    """"Unlike grippers, suction nozzles ..." states the difference itself."""
    text = ("Grippers and suction nozzles are both mounted on the wrist flange of the arm. "
            "Unlike grippers, suction nozzles need a flat surface and cannot hold odd shapes. "
            "A suction nozzle is cheap to replace.")
    picked = _pick("What is the difference between a gripper and a suction nozzle?", text)
    assert picked == ["Unlike grippers, suction nozzles need a flat surface and cannot hold odd "
                      "shapes.", "A suction nozzle is cheap to replace."]


def test_one_per_side_never_picks_a_unit_twice() -> None:
    """With one candidate, the second side gets none rather than the same unit again."""
    from textbound.answer.candidates import Candidate
    from textbound.text.units import Unit

    unit = Unit(0, 27, "A gripper closes on a part.", "prose")
    cand = Candidate(_chunk(unit.text), unit, "", 0)
    assert one_per_side([cand], [0.5], ["a gripper", "a suction cup"], {}) == [0]
