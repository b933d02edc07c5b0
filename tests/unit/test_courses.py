"""Two courses on one server: each its own documents, keys, conversations, logs and report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.conftest import make_settings
from tests.unit._keyed_app import SECOND, CourseKeys, two_courses
from textbound.errors import ConfigError
from textbound.records.courses import course_of, courses_of

C2 = f"/c/{SECOND}"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, CourseKeys]]:
    c, keys = two_courses(tmp_path / "data", ask_per_minute=0, rate_per_minute=0)
    with c:
        yield c, keys


def ask(c: TestClient, prefix: str, headers: dict[str, str], question: str,
        thread: str | None = None) -> Any:
    config = {"configurable": {"thread_id": thread}} if thread else {}
    return c.post(f"{prefix}/chat/invoke", headers=headers,
                  json={"input": {"question": question}, "config": config})


def _questions(log: Path) -> list[str]:
    if not log.is_file():
        return []
    return [json.loads(line)["question"] for line in log.read_text().splitlines()]


def test_each_course_serves_its_own_documents(served):
    """The default course's page data at /, the second course's at /c/physics/."""
    c, keys = served
    mine = c.get("/api/chapters", headers=keys.student).json()["chapters"]
    theirs = c.get(f"{C2}/api/chapters", headers=keys.second_student).json()["chapters"]
    assert [ch["source"] for ch in mine] == ["02-ros2.md"]
    assert [ch["source"] for ch in theirs] == ["01-forces.md"]
    assert c.get(f"{C2}/api/reader", headers=keys.second_student).json()["collection"] == SECOND


def test_the_default_course_answers_under_its_own_name_too(served):
    """/c/textbook/... is the default course's /... with the same keys."""
    c, keys = served
    plain = c.get("/api/chapters", headers=keys.student)
    named = c.get("/c/textbook/api/chapters", headers=keys.student)
    assert named.status_code == 200 and named.json() == plain.json()
    assert c.get("/c/textbook/api/reader", headers=keys.second_student).status_code == 401


def test_a_key_of_one_course_opens_nothing_of_the_other(served):
    """Each course's keys, teacher's included, are no keys of the other (both ways)."""
    c, keys = served
    for headers in (keys.teacher, keys.student, keys.env):
        assert c.get(f"{C2}/api/reader", headers=headers).status_code == 401
        assert ask(c, C2, headers, "What is a force?").status_code == 401
    for headers in (keys.second_teacher, keys.second_student):
        assert c.get("/api/reader", headers=headers).status_code == 401
        assert ask(c, "", headers, "What is a topic?").status_code == 401
    assert c.get(f"{C2}/api/reader", headers=keys.second_teacher).json()["role"] == "teacher"


def test_the_same_thread_id_is_two_conversations(served):
    """A thread id asked in both courses keeps each course's turns apart; the teacher of one
    reads none of the other's."""
    c, keys = served
    assert ask(c, "", keys.student, "What is a topic?", "t-1").status_code == 200
    assert ask(c, C2, keys.second_student, "What is a force?", "t-1").status_code == 200
    mine = c.get("/threads/t-1", headers=keys.teacher).json()["turns"]
    theirs = c.get(f"{C2}/threads/t-1", headers=keys.second_teacher).json()["turns"]
    assert [t["question"] for t in mine] == ["What is a topic?"]
    assert [t["question"] for t in theirs] == ["What is a force?"]
    assert c.delete(f"{C2}/threads/t-1", headers=keys.second_student).status_code == 204
    assert c.get(f"{C2}/threads/t-1", headers=keys.second_teacher).json()["turns"] == []
    assert len(c.get("/threads/t-1", headers=keys.student).json()["turns"]) == 1


def test_a_teacher_of_one_course_cannot_reach_a_thread_of_the_other(served):
    """The other course's teacher key reads, continues and deletes nothing of this course."""
    c, keys = served
    ask(c, "", keys.student, "What is a topic?", "t-private")
    assert c.get("/threads/t-private", headers=keys.second_teacher).status_code == 401
    assert c.delete("/threads/t-private", headers=keys.second_teacher).status_code == 401
    assert c.get(f"{C2}/threads/t-private", headers=keys.second_teacher).json()["turns"] == []
    assert len(c.get("/threads/t-private", headers=keys.teacher).json()["turns"]) == 1


def test_each_course_keeps_its_own_audit_log_and_ratings(served, tmp_path):
    """Questions and ratings land in their course's logs; a run of one course is unknown to
    the other's feedback route."""
    c, keys = served
    data = tmp_path / "data"
    run = ask(c, "", keys.student, "What is a topic?", "t-a").json()["output"]["run_id"]
    other = ask(c, C2, keys.second_student, "What is a force?", "t-b").json()["output"]["run_id"]
    assert _questions(data / "audit.jsonl") == ["What is a topic?"]
    assert _questions(data / "courses" / SECOND / "audit.jsonl") == ["What is a force?"]
    assert c.post(f"{C2}/feedback", headers=keys.second_teacher,
                  json={"run_id": run, "rating": "down"}).status_code == 404
    assert c.post(f"{C2}/feedback", headers=keys.second_student,
                  json={"run_id": other, "rating": "down"}).status_code == 201
    assert c.post("/feedback", headers=keys.student,
                  json={"run_id": run, "rating": "up"}).status_code == 201
    kept = (data / "courses" / SECOND / "feedback.jsonl").read_text().splitlines()
    assert [json.loads(line)["run_id"] for line in kept] == [other]
    kept = (data / "feedback.jsonl").read_text().splitlines()
    assert [json.loads(line)["run_id"] for line in kept] == [run]


def test_each_course_has_its_own_report(served, tmp_path, monkeypatch):
    """`textbound report` and `report --course physics` count only their own course."""
    from textbound.serving.cli import app

    c, keys = served
    for question in ("What is a topic?", "What is a node?"):
        ask(c, "", keys.student, question)
    ask(c, C2, keys.second_student, "What is a force?")
    data = tmp_path / "data"
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(data))
    monkeypatch.setenv("TEXTBOUND_COURSES", SECOND)
    runner = CliRunner()
    plain = runner.invoke(app, ["report"])
    second = runner.invoke(app, ["report", "--course", SECOND])
    assert plain.exit_code == 0 and second.exit_code == 0, plain.output + second.output
    mine = json.loads((data / "report" / "summary.json").read_text())
    theirs = json.loads((data / "courses" / SECOND / "report" / "summary.json").read_text())
    assert (mine["answers"] + mine["refusals"], theirs["answers"] + theirs["refusals"]) == (2, 1)
    assert theirs["audit_log"] == f"courses/{SECOND}/audit.jsonl"
    mine_md = (data / "report" / "report.md").read_text()
    theirs_md = (data / "courses" / SECOND / "report" / "report.md").read_text()
    assert "What is a force?" in theirs_md and "What is a force?" not in mine_md
    assert "What is a node?" not in theirs_md and "What is a topic?" not in theirs_md
    unknown = runner.invoke(app, ["report", "--course", "biology"])
    assert unknown.exit_code == 2 and "no course 'biology'" in unknown.output


def test_an_unknown_course_is_a_404_that_says_so(served):
    """/c/<name>/ of a course the server does not serve: 404 naming it, whatever the key."""
    c, keys = served
    for headers in ({}, keys.teacher):
        r = c.get("/c/biology/api/reader", headers=headers)
        assert r.status_code == 404 and "no course 'biology'" in r.json()["detail"]
    assert c.get("/c/", headers=keys.teacher).status_code == 404


def test_an_oversized_header_is_431_under_any_course_address(served):
    """The header limits hold before a course is chosen: an unknown course's address too."""
    c, _ = served
    big = {"X-API-Key": "k" * 60_000}
    for path in ("/c/biology/api/reader", "/c/physics/api/reader", "/api/reader"):
        r = c.get(path, headers=big)
        assert r.status_code == 431 and "x-api-key" in r.json()["detail"].lower(), path


def test_a_course_page_is_served_under_its_address(served):
    """/c/physics redirects to /c/physics/, the page, whose links stay under it."""
    c, keys = served
    r = c.get(C2, follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == f"{C2}/"
    page = c.get(f"{C2}/")
    assert page.status_code == 200 and 'src="reader/static/reader.js"' in page.text
    assert c.get(f"{C2}/reader/static/reader.js").status_code == 200
    assert c.get(f"{C2}/healthz").status_code == 200


def test_the_env_key_is_the_default_courses_teacher_only(tmp_path):
    """With TEXTBOUND_API_KEY alone the second course is locked, not open."""
    c, keys = two_courses(tmp_path / "data", make=False)
    with c:
        assert c.get("/api/reader", headers=keys.env).json()["role"] == "teacher"
        assert c.get(f"{C2}/api/reader", headers=keys.env).status_code == 401
        assert c.get(f"{C2}/api/reader").status_code == 401


def test_a_server_without_any_key_leaves_every_course_open(tmp_path):
    """No key for any course and no TEXTBOUND_API_KEY: both courses open, as one was before."""
    c, _ = two_courses(tmp_path / "data", api_key=None, make=False)
    with c:
        assert c.get(f"{C2}/api/reader").status_code == 200
        assert c.get("/api/reader").status_code == 200


def test_courses_are_named_by_the_setting(tmp_path):
    """TEXTBOUND_COURSES lists the others; the default is the collection; each has its files."""
    settings = make_settings(tmp_path, courses=[SECOND, "textbook", SECOND], profile=tmp_path)
    served = courses_of(settings)
    assert [(c.name, c.default) for c in served] == [("textbook", True), (SECOND, False)]
    second = served[1]
    assert second.settings.collection == SECOND and second.settings.profile is None
    assert second.settings.audit_log == tmp_path / "courses" / SECOND / "audit.jsonl"
    assert second.report_dir == tmp_path / "courses" / SECOND / "report"
    assert served[0].settings is settings and served[0].report_dir == tmp_path / "report"
    with pytest.raises(ConfigError, match="no course 'biology'"):
        course_of(settings, "biology")


def test_a_bad_course_name_is_refused_in_one_line(monkeypatch):
    """A course name a collection cannot have fails at start-up, naming the variable."""
    from textbound.settings import load_settings

    monkeypatch.setenv("TEXTBOUND_COURSES", "physics,my course")
    with pytest.raises(ConfigError, match="TEXTBOUND_COURSES=.*'my course' is not a course"):
        load_settings(_env_file=None)


def test_given_services_must_be_of_a_named_course(tmp_path):
    """Services for a course TEXTBOUND_COURSES does not name are a configuration error."""
    from tests.unit._keyed_app import services
    from textbound.serving.server import create_app

    with pytest.raises(ConfigError, match="biology"):
        create_app(services(tmp_path / "data"), courses={"biology": services(tmp_path / "b")})


def test_courses_on_the_legacy_local_store_are_refused_at_start(tmp_path):
    """qdrant-client's local mode opens one collection per process: say so, not a 503 later."""
    from tests.unit._keyed_app import services
    from textbound.serving.server import create_app

    with pytest.raises(ConfigError, match="TEXTBOUND_COURSES needs the Edge store"):
        create_app(services(tmp_path / "data", store="local", courses=[SECOND]))


def test_a_courses_saver_keeps_and_lists_only_its_own_threads():
    """CourseThreads stores `<course>/<id>` in the shared saver and hands back `<id>`."""
    from langgraph.checkpoint.base import empty_checkpoint

    from textbound.conversation.threads import memory_saver
    from textbound.records.course_threads import CourseThreads

    shared = memory_saver()
    physics = CourseThreads(shared, f"{SECOND}/")
    config = {"configurable": {"thread_id": "t-1", "checkpoint_ns": ""}}
    saved = physics.put(config, empty_checkpoint(), {}, {})  # type: ignore[arg-type]
    shared.put(config, empty_checkpoint(), {}, {})  # type: ignore[arg-type]
    assert saved["configurable"]["thread_id"] == "t-1"
    found = physics.get_tuple(config)  # type: ignore[arg-type]
    assert found is not None and found.config["configurable"]["thread_id"] == "t-1"
    assert [t.config["configurable"]["thread_id"] for t in physics.list(None)] == ["t-1"]
    ids = {t.config["configurable"]["thread_id"] for t in shared.list(None)}
    assert ids == {"t-1", f"{SECOND}/t-1"}
    physics.delete_thread("t-1")
    assert [t.config["configurable"]["thread_id"] for t in shared.list(None)] == ["t-1"]


def test_a_courses_cross_process_turn_lock_is_taken_on_its_own_thread():
    """The shared saver's turn lock (PostgreSQL's advisory lock) sees the prefixed thread id."""
    from textbound.conversation.threads import memory_saver
    from textbound.records.course_threads import CourseThreads

    taken: list[str] = []
    shared = memory_saver()
    shared.turn_lock = taken.append  # type: ignore[attr-defined]
    CourseThreads(shared, f"{SECOND}/").turn_lock("t-1")  # type: ignore[attr-defined]
    assert taken == [f"{SECOND}/t-1"]
    assert getattr(CourseThreads(memory_saver(), "x/"), "turn_lock", None) is None


def test_a_command_naming_a_course_sees_that_courses_conversations(served, tmp_path,
                                                                    monkeypatch):
    """`threads show --collection physics` (or --course) reads the thread the server keeps for
    that course; without it, the default course's thread of the same id."""
    from textbound.serving.cli import app

    c, keys = served
    ask(c, "", keys.student, "What is a topic?", "t-cli")
    ask(c, C2, keys.second_student, "What is a force?", "t-cli")
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TEXTBOUND_COURSES", SECOND)
    runner = CliRunner()

    def shown(*options: str) -> list[str]:
        done = runner.invoke(app, ["threads", "show", "t-cli", "--json", *options])
        assert done.exit_code == 0, done.output
        return [t["question"] for t in json.loads(done.stdout)["turns"]]

    assert shown() == ["What is a topic?"]
    assert shown("--collection", SECOND) == shown("--course", SECOND) == ["What is a force?"]


def test_a_courses_settings_say_which_course_they_are(tmp_path):
    """course_for finds a further course's folder from its settings; the default's is none."""
    from textbound.records.courses import course_for

    base = make_settings(tmp_path, courses=[SECOND])
    assert course_for(base).default
    found = course_for(course_of(base, SECOND).settings)
    assert (found.name, found.folder) == (SECOND, tmp_path / "courses" / SECOND)
    alone = make_settings(tmp_path, collection=SECOND, courses=[SECOND])
    assert alone.courses == [] and course_for(alone).default  # the collection is the default
