"""A conversation is its opener's: another student can neither read, continue nor rate it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.unit._keyed_app import Keys, client, make_keys


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, Keys]]:
    keys = make_keys(tmp_path / "data")
    with client(tmp_path / "data", checkpointer="sqlite") as c:
        yield c, keys


def ask(c: TestClient, headers: dict[str, str], thread: str) -> object:
    return c.post("/chat/invoke", headers=headers, json={
        "input": {"question": "What is a topic?"},
        "config": {"configurable": {"thread_id": thread}}})


def test_another_student_is_told_the_thread_does_not_exist(served):
    """Reading, continuing or deleting another student's thread is a 404."""
    c, keys = served
    first = ask(c, keys.student, "t-mine")
    assert first.status_code == 200
    assert c.get("/threads/t-mine", headers=keys.other_student).status_code == 404
    assert ask(c, keys.other_student, "t-mine").status_code == 404
    assert c.delete("/threads/t-mine", headers=keys.other_student).status_code == 404
    assert len(c.get("/threads/t-mine", headers=keys.student).json()["turns"]) == 1


def test_the_teacher_reads_every_conversation(served):
    """The teacher's key reads a student's thread."""
    c, keys = served
    ask(c, keys.student, "t-class")
    turns = c.get("/threads/t-class", headers=keys.teacher).json()["turns"]
    assert [t["question"] for t in turns] == ["What is a topic?"]


def test_another_student_cannot_rate_its_answers(served):
    """A rating of a run in someone else's thread is a 404; the owner's is stored."""
    c, keys = served
    run_id = ask(c, keys.student, "t-rated").json()["output"]["run_id"]
    body = {"run_id": run_id, "rating": "down"}
    assert c.post("/feedback", headers=keys.other_student, json=body).status_code == 404
    assert c.post("/feedback", headers=keys.student, json=body).status_code == 201


def test_a_bad_thread_id_is_422(served):
    """Thread ids are validated (length, characters) before anything is read."""
    c, keys = served
    assert ask(c, keys.student, "x" * 129).status_code == 422
    assert c.get("/threads/a%20b", headers=keys.student).status_code == 422
