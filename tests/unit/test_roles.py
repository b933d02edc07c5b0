"""Every route answers as the role `ROUTE_ROLES` declares for it allows, for every kind of key."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.routing import Mount

from tests.unit._keyed_app import SECOND, CourseKeys, Keys, client, make_keys, two_courses
from textbound.records.keys import digest
from textbound.serving.server._roles import ROUTE_ROLES


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, Keys]]:
    keys = make_keys(tmp_path / "data")
    with client(tmp_path / "data", ask_per_minute=0, rate_per_minute=0) as c:
        yield c, keys


def _routes(app: object) -> list[tuple[str, str]]:
    found = []
    for route in app.routes:  # type: ignore[attr-defined]
        methods = ["GET", "HEAD"] if isinstance(route, Mount) else sorted(route.methods)
        found.extend((m, route.path) for m in methods)
    return sorted(set(found))


def _url(path: str) -> str:
    url = re.sub(r"\{[^}]+\}", "t-1", path)
    return url + "/index.html" if url in ("/reader/static", "/docs/static") else url


def test_every_route_of_the_app_declares_its_role(served):
    """A route added without a role in the table fails here (it would need any key)."""
    app = served[0].app
    assert set(_routes(app)) <= set(ROUTE_ROLES), sorted(set(_routes(app)) - set(ROUTE_ROLES))


def test_each_route_answers_each_key_as_its_role_allows(served):
    """No key and another course's key reach only open routes; a student no teacher route."""
    c, keys = served
    callers = {"none": {}, "other_course": keys.other_course, "student": keys.student,
               "teacher": keys.teacher, "env": keys.env}
    allowed = {"open": set(callers), "student": {"student", "teacher", "env"},
               "teacher": {"teacher", "env"}}
    for method, path in _routes(c.app):
        need = ROUTE_ROLES[(method, path)]
        for who, headers in callers.items():
            body = {"json": {}} if method in ("POST", "PUT") else {}
            r = c.request(method, _url(path), headers=headers, **body)
            if who in allowed[need]:
                assert r.status_code not in (401, 403), (method, path, who, r.status_code)
            else:
                expected = 403 if who == "student" else 401
                assert r.status_code == expected, (method, path, who, r.status_code, r.text)


def test_the_reader_page_is_told_the_callers_role(served):
    """The page hides the teacher's controls for the role GET /api/reader names."""
    c, keys = served
    assert c.get("/api/reader", headers=keys.student).json()["role"] == "student"
    assert c.get("/api/reader", headers=keys.teacher).json()["role"] == "teacher"


def test_a_student_key_cannot_upload_a_document(served):
    """PUT /api/documents is the teacher's: a student gets 403 and nothing is kept."""
    c, keys = served
    r = c.put("/api/documents/notes.md", content=b"# Notes\n\nText.", headers=keys.student)
    assert r.status_code == 403
    assert c.put("/api/documents/notes.md", content=b"# Notes\n\nText.",
                 headers=keys.teacher).status_code == 202


def test_a_key_made_or_revoked_while_serving_counts_at_once(served, tmp_path):
    """Keys are read per request: no restart is needed to add or revoke one."""
    from tests.conftest import make_settings
    from textbound.records.keys import open_keys

    c, _ = served
    store = open_keys(make_settings(tmp_path / "data"))
    record, secret = store.create("student", "textbook")
    assert c.get("/api/reader", headers={"X-API-Key": secret}).status_code == 200
    assert store.revoke(record.id)
    store.close()
    assert c.get("/api/reader", headers={"X-API-Key": secret}).status_code == 401


def test_keys_are_stored_only_as_their_digests(served, tmp_path):
    """The key file holds each key's sha256, never the key."""
    raw = (tmp_path / "data" / "keys.sqlite").read_bytes()
    _, keys = served
    secret = keys.student["X-API-Key"]
    assert secret.encode() not in raw and digest(secret).encode() in raw


def test_openapi_names_the_role_of_every_operation(served):
    """Each operation says the role it needs, read from the same table as the check."""
    c, keys = served
    spec = c.get("/openapi.json", headers=keys.student).json()
    roles = {(m.upper(), p): op["x-textbound-role"]
             for p, ops in spec["paths"].items() for m, op in ops.items()}
    assert roles[("PUT", "/api/documents/{name}")] == "teacher"
    assert roles[("GET", "/threads/{thread_id}")] == "student"
    assert roles[("GET", "/healthz")] == "open"
    assert "403" in spec["paths"]["/api/documents/{name}"]["put"]["responses"]


def test_a_server_without_keys_stays_open(tmp_path):
    """No TEXTBOUND_API_KEY and no keys made: every route answers without a key, as before."""
    from tests.unit._keyed_app import services
    from textbound.serving.server import create_app

    with TestClient(create_app(services(tmp_path / "data"))) as c:
        assert c.get("/api/reader").status_code == 200
        assert c.post("/chat/invoke", json={"input": {"question": "What is a topic?"}}
                      ).status_code == 200


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[TestClient, CourseKeys]]:
    c, keys = two_courses(tmp_path / "data", ask_per_minute=0, rate_per_minute=0)
    with c:
        yield c, keys


def _course_apps(app: object) -> dict[str, object]:
    """The apps the server's course router sends /c/<course>/ to, by course."""
    from textbound.serving.server._courses import CourseRouter

    routers = [m for m in app.user_middleware if m.cls is CourseRouter]  # type: ignore[attr-defined]
    assert len(routers) == 1
    return {routers[0].kwargs["default"]: app, **routers[0].kwargs["courses"]}


def test_each_course_route_answers_only_that_courses_keys(two):
    """Under /c/<course>/ every route answers as its role allows for that course's keys only:
    the other course's keys, its teacher's and TEXTBOUND_API_KEY included, are no keys there."""
    c, keys = two
    callers = {"none": {}, "student": keys.student, "teacher": keys.teacher, "env": keys.env,
               "second_student": keys.second_student, "second_teacher": keys.second_teacher}
    allowed = {"textbook": {"student": {"student", "teacher", "env"},
                            "teacher": {"teacher", "env"}},
               SECOND: {"student": {"second_student", "second_teacher"},
                        "teacher": {"second_teacher"}}}
    apps = _course_apps(c.app)
    assert set(apps) == {"textbook", SECOND}
    for course, app in apps.items():
        assert set(_routes(app)) <= set(ROUTE_ROLES), (course, set(_routes(app)) - set(ROUTE_ROLES))
        for method, path in _routes(app):
            need = ROUTE_ROLES[(method, path)]
            for who, headers in callers.items():
                body = {"json": {}} if method in ("POST", "PUT") else {}
                r = c.request(method, f"/c/{course}{_url(path)}", headers=headers, **body)
                where = (course, method, path, who, r.status_code)
                if need == "open" or who in allowed[course][need]:
                    assert r.status_code not in (401, 403), where
                elif who in allowed[course]["student"]:
                    assert r.status_code == 403, where
                else:
                    assert r.status_code == 401, where


def test_no_key_reads_another_courses_or_students_thread(two):
    """A student's thread is read, continued, rated or deleted by no other key of the course
    but its teacher's, by no key of the other course, and is not the other course's thread."""
    c, keys = two
    body = {"input": {"question": "What is a topic?"},
            "config": {"configurable": {"thread_id": "t-owned"}}}
    run_id = c.post("/chat/invoke", headers=keys.student, json=body).json()["output"]["run_id"]

    def attempts(prefix: str, headers: dict[str, str]) -> list[tuple[str, object]]:
        return [
            ("read", c.get(f"{prefix}/threads/t-owned", headers=headers)),
            ("continue", c.post(f"{prefix}/chat/invoke", headers=headers, json=body)),
            ("rate", c.post(f"{prefix}/feedback", headers=headers,
                            json={"run_id": run_id, "rating": "down"})),
            ("delete", c.delete(f"{prefix}/threads/t-owned", headers=headers)),
        ]

    for prefix in ("", "/c/textbook"):
        for who, headers, status in (("other student", keys.other_student, 404),
                                     ("second teacher", keys.second_teacher, 401),
                                     ("second student", keys.second_student, 401),
                                     ("no key", {}, 401)):
            for what, r in attempts(prefix, headers):
                assert r.status_code == status, (prefix, who, what, r.status_code)  # type: ignore[attr-defined]
    for headers in (keys.student, keys.teacher, keys.env):
        for what, r in attempts(f"/c/{SECOND}", headers):
            assert r.status_code == 401, (what, r.status_code)  # type: ignore[attr-defined]
    # the other course's teacher, in that course: its own (empty) thread of that id, not this
    second = dict(attempts(f"/c/{SECOND}", keys.second_teacher))
    assert second["read"].json()["turns"] == []  # type: ignore[attr-defined]
    assert second["rate"].status_code == 404  # type: ignore[attr-defined]
    turns = c.get("/threads/t-owned", headers=keys.teacher).json()["turns"]
    assert [t["question"] for t in turns] == ["What is a topic?"]
    kept = c.get(f"/c/{SECOND}/threads/t-owned", headers=keys.second_teacher).json()["turns"]
    assert kept == []  # deleted there: only that course's own turn of that id went


def test_keys_create_refuses_a_course_the_settings_do_not_serve(tmp_path, monkeypatch):
    """A misspelt --course is refused, naming the courses; a declared one gets its key."""
    from typer.testing import CliRunner

    from textbound.serving.cli import app

    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TEXTBOUND_COURSES", "physics")
    bad = CliRunner().invoke(app, ["keys", "create", "--role", "student", "--course",
                                   "phisics"])
    assert bad.exit_code != 0
    assert "phisics" in bad.output and "physics" in bad.output
    assert "TEXTBOUND_COURSES" in bad.output
    good = CliRunner().invoke(app, ["keys", "create", "--role", "student", "--course",
                                    "physics"])
    assert good.exit_code == 0, good.output
    listed = CliRunner().invoke(app, ["keys", "list"])
    assert "physics" in listed.output and "phisics" not in listed.output
