"""One reading of the question: what it asks, computed once a turn and kept in the graph's state.

The gates and the answer rules all ask the same things of a question: its content words, whether
it asks for a number or a list, the term it asks to define, the two sides it compares, the kind
of value and the attribute it asks for. `analyse` reads them once, with the parsers that define
them (textbound/text/question.py, textbound/text/__init__.py, textbound/answer/evidence.py,
answer_type.py, attribute.py), on the question the pipeline answers (contextualize's standalone
form with retrieve's spelling corrections); retrieve, or select_passage for a selection, keeps it
in `State.question_analysis` and every later node reads it there (`nodes._common.analysis_of`).

It is plain data (strings, numbers, booleans and lists), so a thread's checkpoint keeps it as it
keeps the rest of the state; the helpers below hand the few fields a rule wants as sets or
objects back in that form.
"""

from __future__ import annotations

from typing_extensions import TypedDict

from textbound.answer.answer_type import ANSWER_TYPES, AnswerType, expected_answer_type
from textbound.answer.attribute import asked_action, asked_forms
from textbound.answer.evidence import (
    asked_terms,
    compared_sides,
    compared_terms,
    defined_term,
    question_terms,
)
from textbound.text import capitalised_words
from textbound.text.question import (
    acronyms_to_spell,
    asked_count,
    asks_example,
    literals,
    wants_code,
    wants_list,
    wants_procedure,
)

__all__ = ["FIELDS", "QuestionAnalysis", "analyse", "answer_type", "compared", "count",
           "terms"]


class QuestionAnalysis(TypedDict):
    """What a question asks for, read once (each field names the parser it comes from)."""

    question: str
    """The question as read: the one every node after retrieve (or select_passage) checks."""
    terms: list[str]
    """Its distinct stemmed content words, sorted (evidence.question_terms)."""
    names: list[str]
    """The capitalised words it is about, in order (text.capitalised_words)."""
    wants_list: bool
    wants_code: bool
    wants_procedure: bool
    """What it asks for (text/question.py)."""
    asked_count: list[int | str] | None
    """[N, category] when it asks for N things ("the four causes": [4, "causes"])."""
    defined_term: list[str]
    """The content words of the term a definition question asks about (evidence.defined_term)."""
    asks_what_it_does: bool
    """Whether it asks what the term does ("What does a ROS 2 service do?")."""
    compared_sides: list[str] | None
    """The two sides of a comparison as written (evidence.compared_sides)."""
    compared_terms: list[list[str]] | None
    """Each side's terms, sorted, when the sides differ in terms (evidence.compared_terms)."""
    asked_terms: list[str]
    """The terms it asks the book to define, as written (evidence.asked_terms)."""
    answer_type: str | None
    """The name of the kind of value it asks for (answer_type.expected_answer_type)."""
    asked_attribute: list[str]
    """The attributes it asks for as "form:word" (attribute.asked_forms)."""
    asked_action: str | None
    """The action a how-to question asks to do, "rename" in "How do I rename a branch?"
    (attribute.asked_action)."""
    acronyms: list[str]
    """The acronyms it asks to have spelled out ("What does NITROS stand for?")."""
    asks_example: bool
    literals: list[str]
    """Its tokens a book prints as they are ("^P", "--staged", "max_workers"; question.literals)."""


FIELDS = frozenset(QuestionAnalysis.__annotations__)
"""Every field: a stored analysis missing one (written by an older version) is read again."""


def analyse(question: str) -> QuestionAnalysis:
    """Return the reading of `question` (pure; the parsers' own results, as plain data)."""
    term, does = defined_term(question)
    counted = asked_count(question)
    sides = compared_sides(question)
    both = compared_terms(question)
    kind = expected_answer_type(question)
    return {
        "question": question,
        "terms": sorted(question_terms(question)),
        "names": capitalised_words(question),
        "wants_list": wants_list(question),
        "wants_code": wants_code(question),
        "wants_procedure": wants_procedure(question),
        "asked_count": list(counted) if counted is not None else None,
        "defined_term": term,
        "asks_what_it_does": does,
        "compared_sides": list(sides) if sides is not None else None,
        "compared_terms": [sorted(both[0]), sorted(both[1])] if both is not None else None,
        "asked_terms": asked_terms(question),
        "answer_type": kind.name if kind is not None else None,
        "asked_attribute": list(asked_forms(question)),
        "asked_action": asked_action(question),
        "acronyms": acronyms_to_spell(question),
        "asks_example": asks_example(question),
        "literals": literals(question),
    }


def terms(analysis: QuestionAnalysis) -> set[str]:
    """Return the question's content words as a set (what coverage and the gates weigh)."""
    return set(analysis["terms"])


def count(analysis: QuestionAnalysis) -> tuple[int, str] | None:
    """Return (N, category) when the question asks for N things."""
    found = analysis["asked_count"]
    return (int(found[0]), str(found[1])) if found else None


def compared(analysis: QuestionAnalysis) -> tuple[set[str], set[str]] | None:
    """Return each side's terms of a comparison question, as sets."""
    found = analysis["compared_terms"]
    return (set(found[0]), set(found[1])) if found else None


def answer_type(analysis: QuestionAnalysis) -> AnswerType | None:
    """Return the kind of value the question asks for, or None."""
    name = analysis["answer_type"]
    return next((t for t in ANSWER_TYPES if t.name == name), None) if name else None
