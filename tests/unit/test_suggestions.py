"""Refusal suggestions are questions a student could send as they are."""

import pytest

from nodes.refuse import suggestion_question, suggestions_for


@pytest.mark.parametrize(("title", "question"), [
    ("What Is ROS 2?", "What Is ROS 2?"),
    ("How nodes talk", "How nodes talk?"),
    ("Chapter 2: ROS 2 Fundamentals", "Tell me about ROS 2 Fundamentals."),
    ("Buoyancy engines", "Tell me about buoyancy engines."),
    ("3.2 Isaac Sim", "Tell me about Isaac Sim."),
    ("NVIDIA Isaac Ecosystem", "Tell me about NVIDIA Isaac Ecosystem."),
])
def test_a_title_becomes_a_natural_question(title: str, question: str) -> None:
    """A question title stays a question; numbering goes; sentence case reads as a sentence."""
    assert suggestion_question(title) == question


def test_suggestions_are_distinct_questions_from_the_nearest_sections() -> None:
    """Generic sections are skipped and two chunks of one section give one suggestion."""
    def chunk(score: float, *path: str) -> dict:
        return {"score": score, "metadata": {"heading_path": list(path)}}

    state = {"chunks": [chunk(0.6, "Book", "What Is ROS 2?"), chunk(0.5, "Book", "Summary"),
                        chunk(0.45, "Book", "What Is ROS 2?"), chunk(0.4, "Book", "Topics"),
                        chunk(0.1, "Book", "Far away")]}
    assert suggestions_for(state) == ["What Is ROS 2?", "Tell me about Topics."]
