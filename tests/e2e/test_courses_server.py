"""Two courses on one `textbound serve` (issue 39): the bundled textbook and a small second course.

The server is started with `TEXTBOUND_COURSES=marine` over a copy of the ingested textbook
beside a second collection; each course is asked through its own address with its own keys,
and `textbound report` and `textbound report --course marine` each count only their course.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import MARINE_BOOK, VENV_BIN, Running, free_port, run_server, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SECOND = "marine"

TEXTBOOK_Q = "What is a ROS 2 topic?"
MARINE_Q = "How does an underwater glider move forward?"
FLOAT_Q = "What does a profiling float send by satellite?"


def textbound(data: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "textbound"), *args], capture_output=True, text=True,
                          env=server_env(data, TEXTBOUND_COURSES=SECOND, **env), timeout=300)


def make_key(data: Path, role: str, course: str) -> dict[str, str]:
    made = textbound(data, "keys", "create", "--role", role, "--course", course)
    assert made.returncode == 0, made.stderr
    return {"X-API-Key": made.stdout.strip()}


@pytest.fixture(scope="module")
def served(ingested_template: Path, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[Running, Path, dict[str, dict[str, str]]]]:
    """The textbook and the marine course served by one process, with a teacher and a student
    key of each."""
    from tests.conftest import copy_ingested

    root = tmp_path_factory.mktemp("courses")
    data = copy_ingested(ingested_template, root / "data")
    book = root / "marine.md"
    book.write_text(MARINE_BOOK, encoding="utf-8")
    done = textbound(data, "ingest", str(book), "--collection", SECOND)
    assert done.returncode == 0, done.stderr
    keys = {f"{course}_{role}": make_key(data, role, course)
            for course in ("textbook", SECOND) for role in ("teacher", "student")}
    port = free_port()
    cmd = [str(VENV_BIN / "textbound"), "serve", "--host", "127.0.0.1", "--port", str(port),
           "--log-level", "warning"]
    with run_server(cmd, env=server_env(data, TEXTBOUND_COURSES=SECOND), cwd=root, port=port,
                    ready_path="/healthz", timeout_s=180, log=root / "serve.log") as running:
        yield running, data, keys


def ask(server: Running, prefix: str, key: dict[str, str], question: str) -> httpx.Response:
    return httpx.post(f"{server.url}{prefix}/chat/invoke", headers=key, timeout=120,
                      json={"input": {"question": question}})


def _output(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code == 200, r.text
    return dict(r.json()["output"])


def test_two_courses_side_by_side_with_separate_reports(served, tmp_path):
    """Each course answers from its own book at its own address, with its own keys; each
    report counts only its own course's questions."""
    server, data, keys = served
    mine = _output(ask(server, "", keys["textbook_student"], TEXTBOOK_Q))
    theirs = _output(ask(server, f"/c/{SECOND}", keys[f"{SECOND}_student"], MARINE_Q))
    assert not mine["was_refusal"] and {s["source"] for s in mine["sources"]} <= {
        s["source"] for s in httpx.get(f"{server.url}/api/chapters", timeout=30,
                                       headers=keys["textbook_student"]).json()["chapters"]}
    assert not theirs["was_refusal"] and "buoyancy" in theirs["answer"], theirs
    assert {s["source"] for s in theirs["sources"]} == {"marine.md"}
    # the marine book is not the textbook's, and the other way round
    assert _output(ask(server, "", keys["textbook_student"], MARINE_Q))["was_refusal"]
    # a key of one course is no key of the other, the teacher's included
    assert ask(server, f"/c/{SECOND}", keys["textbook_teacher"], MARINE_Q).status_code == 401
    assert ask(server, "", keys[f"{SECOND}_teacher"], TEXTBOOK_Q).status_code == 401
    info = httpx.get(f"{server.url}/c/{SECOND}/api/reader", headers=keys[f"{SECOND}_student"],
                     timeout=30).json()
    assert info["collection"] == SECOND and info["role"] == "student"
    assert httpx.get(f"{server.url}/c/{SECOND}/", timeout=30).status_code == 200

    # the command line beside the server reaches the course at its address, with its key
    announced = json.loads((data / "servers" / f"{SECOND}.json").read_text())
    assert announced["url"] == f"{server.url}/c/{SECOND}"
    beside = textbound(data, "ask", "--collection", SECOND, "--json", FLOAT_Q,
                       TEXTBOUND_API_KEY=keys[f"{SECOND}_teacher"]["X-API-Key"])
    assert beside.returncode == 0, beside.stderr
    assert "salinity" in json.loads(beside.stdout)["answer"]

    plain = textbound(data, "report", "--out", str(tmp_path / "textbook"))
    second = textbound(data, "report", "--course", SECOND, "--out", str(tmp_path / SECOND))
    assert plain.returncode == 0, plain.stderr
    assert second.returncode == 0, second.stderr
    counts = {}
    for name in ("textbook", SECOND):
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        counts[name] = summary["answers"] + summary["refusals"]
    assert counts == {"textbook": 2, SECOND: 2}
    questions = [json.loads(line)["question"] for line in
                 (data / "courses" / SECOND / "audit.jsonl").read_text().splitlines()]
    assert questions == [MARINE_Q, FLOAT_Q]
