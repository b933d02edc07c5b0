"""The question analysis (textbound/answer/reading.py): each field, on the forms students ask."""

import json

import pytest

from graph.state import TURN_KEYS
from nodes._common import analysis_of
from textbound.answer import reading
from textbound.answer.reading import analyse
from textbound.conversation.threads import serializer

NOTHING = {
    "names": [],
    "wants_list": False, "wants_code": False, "wants_procedure": False,
    "asked_count": None, "defined_term": [], "asks_what_it_does": False,
    "compared_sides": None, "compared_terms": None, "asked_terms": [], "answer_type": None,
    "asked_attribute": [], "asked_action": None, "acronyms": [], "asks_example": False,
    "literals": [],
}
"""A question asking for none of the things the analysis reads (each test sets its own)."""


def _expect(question: str, **fields: object) -> dict[str, object]:
    return {"question": question, **NOTHING, **fields}


def test_a_definition_question():
    """"What is a topic?": the defined term, asked to define."""
    q = "What is a topic?"
    assert analyse(q) == _expect(q, terms=["topic"], defined_term=["topic"],
                                 asked_terms=["topic"])


def test_a_question_asking_what_a_term_does():
    """"What does a ROS 2 service do?": the term, what it does, its name, a list word ("do")."""
    q = "What does a ROS 2 service do?"
    assert analyse(q) == _expect(
        q, terms=["2", "ros", "service"], names=["ROS"], wants_list=True,
        defined_term=["ros", "2", "service"], asks_what_it_does=True,
        asked_terms=["ROS 2 service"])


def test_a_possessive_term():
    """"MuJoCo's default step size": the whole term, the owner's possessive included."""
    q = "What is MuJoCo's default step size?"
    assert analyse(q) == _expect(
        q, terms=["default", "mujoco'", "size", "step"], names=["MuJoCo"],
        defined_term=["mujoco'", "default", "step", "size"],
        asked_terms=["MuJoCo's default step size"], answer_type="limit or setting")


def test_a_comparison_x_vs_y():
    """"ROS 1 vs ROS 2?": two sides, each side's terms, both asked to define."""
    q = "ROS 1 vs ROS 2?"
    assert analyse(q) == _expect(
        q, terms=["1", "2", "ros", "vs"], names=["ROS"], compared_sides=["ROS 1", "ROS 2"],
        compared_terms=[["1", "ros"], ["2", "ros"]], asked_terms=["ROS 1", "ROS 2"])


def test_a_difference_between_two_terms():
    """"the difference between X and Y": X and Y are the sides, and the terms asked."""
    q = "What is the difference between homeostasis and allostasis?"
    got = analyse(q)
    assert got["compared_sides"] == ["homeostasis", "allostasis"]
    assert got["compared_terms"] == [["homeostasi"], ["allostasi"]]
    assert got["asked_terms"] == ["homeostasis", "allostasis"]


def test_a_how_do_i_question():
    """"How do I ...?": a procedure, its action, with the qualifier "last" as its attribute."""
    q = "How do I reorder my last 5 commits?"
    assert analyse(q) == _expect(q, terms=["5", "commit", "last", "reorder"],
                                 wants_procedure=True, asked_attribute=["qual:last"],
                                 asked_action="reorder")


@pytest.mark.parametrize(("question", "procedure"), [
    ("old code calls ffi_prep_closure, what should I use instead?", True),
    ("Which method should I use to count the CPUs?", True),
    ("my program crashes at exit under valgrind, workaround?", True),
    ("Which citation style do philosophers prefer?", False),
    ("What is a closure?", False),
])
def test_what_to_use_is_a_procedure(question: str, procedure: bool):
    """"What should I use ...?" and "workaround?" ask what to do, as "How do I ...?" does."""
    assert analyse(question)["wants_procedure"] is procedure


@pytest.mark.parametrize(("question", "action"), [
    ("How do I rename a file?", "rename"),
    ("how do i completely remove an old package?", "remove"),
    ("How can you add a column to a table?", "add"),
    ("how to install the package", "install"),
    ("How do I make the plot bigger?", None),  # "make": names no action
    ("How do you get the contents?", None),
    ("What is a branch?", None),
])
def test_the_action_a_how_to_question_asks(question: str, action: str | None):
    assert analyse(question)["asked_action"] == action


def test_a_question_for_n_things():
    """"What are the four causes?": a list of four causes."""
    q = "What are the four causes?"
    assert analyse(q) == _expect(q, terms=["caus", "four"], wants_list=True,
                                 asked_count=[4, "causes"], defined_term=["four", "caus"],
                                 asked_terms=["four causes"])


def test_an_acronym_to_spell_out():
    """"What does NITROS stand for?": the acronym to spell out."""
    q = "What does NITROS stand for?"
    assert analyse(q) == _expect(q, terms=["nitro", "stand"], names=["NITROS"],
                                 acronyms=["NITROS"])


def test_a_number_question():
    """"How many ...?": a number, a count."""
    q = "How many degrees of freedom does a rigid body have?"
    assert analyse(q) == _expect(q, terms=["body", "degre", "freedom", "rigid"],
                                 answer_type="count")


def test_an_example_is_asked_for():
    """"an example of a 0.8 m CoM height": an example is asked, no acronym to spell out."""
    q = "Give me an example of a 0.8 m CoM height"
    got = analyse(q)
    assert got["asks_example"] and got["acronyms"] == []


def test_an_attribute_and_a_kind_of_value():
    """"Where was X born?" asks for an attribute; "What is the price of X?" for money."""
    assert analyse("Where was Ibn Sina born?")["asked_attribute"] == ["where:born"]
    assert analyse("What is the price of the Jetson kit?")["answer_type"] == "money"
    assert analyse("Show me the command that prints the log")["wants_code"]


@pytest.mark.parametrize(("question", "expected"), [
    ("What does ^P do at the prompt?", ["^P"]),
    ("what's the difference between ros2 launch and ros2 launch --debug", ["--debug"]),
    ("Why does the shell show robot$ and not robot# ?", ["robot$", "robot#"]),
    ("How do I set max_workers in pool.conf?", ["max_workers", "pool.conf"]),
    ("Does %j count the days from one?", ["%j"]),
    ("what does node~2 refer to", ["node~2"]),
    ("Does Flex+Go cost more, e.g. per seat?", []),  # a name with "+", an abbreviation
    ("Is x > 0 checked [ first ]?", []),  # a lone symbol is no literal
    ("How do I rename a branch?", []),
    # a quoted value keeps the quote that closes it; a quoted literal loses both
    ('What does setting target="scan" on a <match> element do?', ['target="scan"', "<match>"]),
    ('Is "pool.conf" read first?', ["pool.conf"]),
    # a word the question quotes is printed as quoted: "'A'", not every capital A
    ("What properties does a record of type 'A' have?", ["'A'"]),
])
def test_the_literal_tokens_a_book_would_print_as_they_are(question, expected):
    assert analyse(question)["literals"] == expected


def test_an_element_is_printed_with_its_attributes_too():
    """"<match>" in a question names the element "<match target="pattern">" opens."""
    from textbound.text.question import prints
    assert prints('`<match target="pattern">`: This element holds ...', "<match>")
    assert prints("The <match> element", "<match>")
    assert not prints("The <matches> element", "<match>")
    assert not prints("a match element", "<match>")


def test_a_quoted_word_is_printed_between_any_quotes():
    """"type 'A'" is printed by "Type: 'A'", "‘A’" or "`A`", never by the article "A"."""
    from textbound.text.question import prints
    assert prints("Type: 'A'; Properties: address/ttl.", "'A'")
    assert prints("the flag ‘rx’ opens it", "'rx'") and prints("use `rx`", "'rx'")
    assert not prints("A record holds an address.", "'A'")


def test_the_helpers_hand_fields_back_as_sets_and_objects():
    """terms, count, compared and answer_type read the plain fields back."""
    assert reading.terms(analyse("What is a topic?")) == {"topic"}
    assert reading.count(analyse("What are the four causes?")) == (4, "causes")
    assert reading.count(analyse("What is a topic?")) is None
    assert reading.compared(analyse("ROS 1 vs ROS 2?")) == ({"1", "ros"}, {"2", "ros"})
    kind = reading.answer_type(analyse("How many joints does it have?"))
    assert kind is not None and kind.name == "count"
    assert reading.answer_type(analyse("What is a topic?")) is None


@pytest.mark.parametrize("question", ["ROS 1 vs ROS 2?", "What are the four causes?",
                                      "What is MuJoCo's default step size?"])
def test_a_checkpoint_keeps_it_as_it_is(question):
    """Plain data: the thread's serializer and JSON give back an equal analysis."""
    found = analyse(question)
    serde = serializer()
    assert serde.loads_typed(serde.dumps_typed(found)) == found
    assert json.loads(json.dumps(found)) == found


def test_the_state_keeps_it_for_one_turn_only():
    """check_question clears it with the other per-turn keys: a turn never reads the last's."""
    assert "question_analysis" in TURN_KEYS


def test_a_state_without_it_is_read_afresh():
    """analysis_of: the stored one for this question; else (absent, another question's, or
    one an older version wrote with fewer fields) the question is read again."""
    q = "What is a topic?"
    stored = {**analyse(q), "terms": ["stored"]}
    assert analysis_of({"clean_question": q, "question_analysis": stored}) is stored
    assert analysis_of({"clean_question": q}) == analyse(q)
    assert analysis_of({"clean_question": q, "question_analysis": None}) == analyse(q)
    other = analyse("What is a service?")
    assert analysis_of({"clean_question": q, "question_analysis": other}) == analyse(q)
    older = {k: v for k, v in stored.items() if k != "asks_example"}
    assert analysis_of({"clean_question": q, "question_analysis": older}) == analyse(q)
    corrected = {"clean_question": "What is a topik?", "corrected_question": q,
                 "question_analysis": stored}
    assert analysis_of(corrected) is stored
