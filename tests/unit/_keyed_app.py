"""A served app over the shipped fakes, with a teacher key, two students and another course's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import make_settings
from textbound.fakes import HashEmbedder, MemoryStore
from textbound.records.keys import open_keys
from textbound.serving.server import create_app

ENV_KEY = "the-env-teacher-key"
PASSAGE = "A topic is a named bus over which nodes exchange messages in ROS 2."


@dataclass
class Keys:
    """The keys of one test server, as headers."""

    teacher: dict[str, str]
    student: dict[str, str]
    other_student: dict[str, str]
    other_course: dict[str, str]
    env: dict[str, str]


def services(data: Path, **settings: Any) -> Any:
    """Services over a one-chunk MemoryStore and hash embeddings."""
    from graph.builder import build_services

    store = MemoryStore(HashEmbedder())
    store.ensure_collection(16)
    store.upsert(["c-topic"], store.embeddings.embed_documents([PASSAGE]), [PASSAGE],
                 [{"source": "02-ros2.md", "section": "Chapter 2 > Topics"}])
    return build_services(settings=make_settings(data, **settings), embeddings=HashEmbedder(),
                          store=store)


def make_keys(data: Path, course: str = "textbook") -> Keys:
    """Make a teacher key, two student keys and a teacher key of another course."""
    store = open_keys(make_settings(data))
    try:
        made = {name: store.create(role, c)[1] for name, role, c in (
            ("teacher", "teacher", course), ("student", "student", course),
            ("other_student", "student", course), ("other_course", "teacher", "biology"))}
    finally:
        store.close()
    return Keys(**{k: {"X-API-Key": v} for k, v in made.items()},
                env={"X-API-Key": ENV_KEY})


def client(data: Path, **settings: Any) -> TestClient:
    """A TestClient (not yet entered) of an app with the env key set."""
    return TestClient(create_app(services(data, api_key=ENV_KEY, **settings)))


SECOND = "physics"
"""The second course of `two_courses`, served at /c/physics/."""
SECOND_PASSAGE = "Newton's second law states that the net force equals mass times acceleration."


@dataclass
class CourseKeys:
    """A teacher's and students' keys of each of two courses, and the env key, as headers."""

    teacher: dict[str, str]
    student: dict[str, str]
    other_student: dict[str, str]
    second_teacher: dict[str, str]
    second_student: dict[str, str]
    env: dict[str, str]


def two_courses(data: Path, *, api_key: str | None = ENV_KEY, make: bool = True,
                **settings: Any) -> tuple[TestClient, CourseKeys]:
    """A TestClient (not yet entered) of one server holding `textbook` and `physics`, and keys.

    With `make` False no key is made (the env key, when `api_key` is set, is the only one).
    """
    from graph.builder import build_services
    from textbound.records.courses import course_of

    extra = {"api_key": api_key} if api_key else {}
    default = services(data, courses=[SECOND], **extra, **settings)
    course = course_of(default.settings, SECOND)
    store = MemoryStore.holding(HashEmbedder(), [
        ("c-newton", SECOND_PASSAGE, {"source": "01-forces.md", "section": "Forces > Newton"})],
        collection=SECOND)
    second = build_services(settings=course.settings, embeddings=HashEmbedder(), store=store)
    made = dict.fromkeys(("teacher", "student", "other_student", "second_teacher",
                          "second_student"), "")
    if make:
        keys = open_keys(make_settings(data))
        try:
            made = {name: keys.create(role, c)[1] for name, role, c in (
                ("teacher", "teacher", "textbook"), ("student", "student", "textbook"),
                ("other_student", "student", "textbook"),
                ("second_teacher", "teacher", SECOND), ("second_student", "student", SECOND))}
        finally:
            keys.close()
    app = create_app(default, courses={SECOND: second})
    return TestClient(app), CourseKeys(**{k: {"X-API-Key": v} for k, v in made.items()},
                                       env={"X-API-Key": ENV_KEY})
