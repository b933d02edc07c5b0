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
