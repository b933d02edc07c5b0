"""Two `textbound serve` processes and the CLI on one PostgreSQL: threads, turns, keys, roles,
and the audit lines and ratings the teacher's report reads.

Each process has its own copy of the ingested data folder (the embedded store allows one
process per collection) and all share TEXTBOUND_CHECKPOINT_URL on a real PostgreSQL server
(tests/pg_server.py): the deployment docs/deployment.md describes, with the CLI writing through
the saver's sync methods and the servers through its async ones. Conversations, keys and thread
owners, audit lines and ratings are all in that database, so what one process keeps or checks,
the other sees.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import VENV_BIN, Running, free_port, run_server, server_env
from tests.pg_server import PostgresServer, postgres_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

__all__ = ["postgres_server"]

TEACHER = {"X-API-Key": "e2e-env-teacher-key"}
"""TEXTBOUND_API_KEY of both servers: the default course's teacher key."""


@dataclass
class Deployment:
    """Two servers on one database, and the CLI's environment beside them."""

    a: Running
    b: Running
    cli_env: dict[str, str]

    @property
    def servers(self) -> tuple[Running, Running]:
        return self.a, self.b

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run `textbound ARGS` against the same database; fail the test if it fails."""
        done = subprocess.run([str(VENV_BIN / "textbound"), *args], env=self.cli_env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    def new_key(self, role: str) -> tuple[str, dict[str, str]]:
        """Make a key with `textbound keys create`; return its id and the key as a header."""
        made = self.cli("keys", "create", "--role", role)
        key_id = made.stderr.split(f"made {role} key ", 1)[1].split()[0]
        return key_id, {"X-API-Key": made.stdout.strip()}


def _env(root: Path, name: str, template: Path, url: str) -> dict[str, str]:
    data = root / name
    shutil.copytree(template, data)
    # no rate limit (a burst of turns is the point); a history long enough to hold every turn
    return server_env(data, TEXTBOUND_CHECKPOINTER="postgres", TEXTBOUND_CHECKPOINT_URL=url,
                      TEXTBOUND_API_KEY=TEACHER["X-API-Key"], TEXTBOUND_ASK_PER_MINUTE="0",
                      TEXTBOUND_HISTORY_TURNS="40", TEXTBOUND_HISTORY_CHARS="200000")


@pytest.fixture(scope="module")
def deployment(postgres_server: PostgresServer, ingested_template: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """Two servers and a CLI environment on one fresh PostgreSQL database."""
    root = tmp_path_factory.mktemp("pg-deployment")
    url = postgres_server.create_database(f"e2e_threads_{uuid.uuid4().hex[:8]}")
    with ExitStack() as stack:
        servers = []
        for name in ("a", "b"):
            port = free_port()
            cmd = [str(VENV_BIN / "textbound"), "serve", "--host", "127.0.0.1", "--port",
                   str(port), "--log-level", "warning"]
            servers.append(stack.enter_context(run_server(
                cmd, env=_env(root, name, ingested_template, url), cwd=root,
                port=port, ready_path="/healthz", timeout_s=180,
                log=root / f"serve-{name}.log")))
        yield Deployment(servers[0], servers[1], _env(root, "cli", ingested_template, url))


def _ask(server: Running, thread: str, question: str,
         key: dict[str, str] = TEACHER) -> httpx.Response:
    return httpx.post(server.url + "/chat/invoke", headers=key, timeout=300, json={
        "input": {"question": question}, "config": {"configurable": {"thread_id": thread}}})


def _answered(server: Running, thread: str, question: str,
              key: dict[str, str] = TEACHER) -> dict[str, object]:
    r = _ask(server, thread, question, key)
    assert r.status_code == 200, r.text[:500]
    return r.json()["output"]


def _questions(server: Running, thread: str, key: dict[str, str] = TEACHER) -> list[str]:
    r = httpx.get(f"{server.url}/threads/{thread}", headers=key, timeout=30)
    assert r.status_code == 200, r.text[:500]
    return [turn["question"] for turn in r.json()["turns"]]


def test_two_servers_and_the_cli_share_one_postgres_thread(deployment: Deployment) -> None:
    """The CLI starts a thread, server A and then B continue it, both see it, one deletes it."""
    a, b = deployment.servers
    thread = "shared-1"
    first = "What does a ROS 2 service do?"
    deployment.cli("ask", "--thread", thread, first)

    second = _answered(a, thread, "What file defines its interface?")
    assert second["diagnostics"]["conversation"]["turn"] == 2  # type: ignore[index]
    third = _answered(b, thread, "Give me an example.")
    assert third["diagnostics"]["conversation"]["turn"] == 3  # type: ignore[index]
    expected = [first, "What file defines its interface?", "Give me an example."]
    assert _questions(a, thread) == _questions(b, thread) == expected

    r = httpx.delete(f"{b.url}/threads/{thread}", headers=TEACHER, timeout=30)
    assert r.status_code == 204
    assert _questions(a, thread) == []


def test_sixteen_turns_at_once_split_across_two_servers_keep_sixteen(
        deployment: Deployment) -> None:
    """Turns sent at once to one thread through both processes wait for one another."""
    thread = "burst-1"
    asked = [f"What is a ROS 2 topic? (asked {n})" for n in range(16)]

    def turn(n: int) -> int:
        return _ask(deployment.servers[n % 2], thread, asked[n]).status_code

    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(turn, range(16)))
    assert codes == [200] * 16
    a, b = deployment.servers
    kept = _questions(a, thread)
    assert sorted(kept) == sorted(asked)
    assert _questions(b, thread) == kept


def test_keys_and_roles_hold_on_both_servers(deployment: Deployment) -> None:
    """Keys made with the CLI while both serve count on both; a student's thread is theirs."""
    a, b = deployment.servers
    _, student = deployment.new_key("student")
    other_id, other = deployment.new_key("student")
    _, teacher = deployment.new_key("teacher")
    thread = "private-1"

    _answered(a, thread, "What does a ROS 2 service do?", student)
    _answered(b, thread, "What file defines its interface?", student)  # its owner, on B
    for server in (a, b):
        assert _questions(server, thread, student) == [
            "What does a ROS 2 service do?", "What file defines its interface?"]
        seen = httpx.get(f"{server.url}/threads/{thread}", headers=other, timeout=30)
        assert seen.status_code == 404, server.url
        assert _ask(server, thread, "Give me an example.", other).status_code == 404
        assert len(_questions(server, thread, teacher)) == 2  # the teacher reads every one
        upload = httpx.put(f"{server.url}/api/documents/notes.md", headers=student,
                           content=b"# Notes\n\nText.", timeout=30)
        assert upload.status_code == 403
        assert httpx.get(f"{server.url}/threads/{thread}", timeout=30).status_code == 401

    deployment.cli("keys", "revoke", other_id)  # counts on both at once, no restart
    for server in (a, b):
        assert _ask(server, "other-1", "What is a topic?", other).status_code == 401


def test_a_dead_postgres_is_refused_fast_on_both_servers_and_both_recover(
        deployment: Deployment, postgres_server: PostgresServer) -> None:
    """With the database stopped a question is refused within 2 s; once it is back, answered."""
    thread = "outage-1"
    for server in deployment.servers:
        _answered(server, thread, "What is a ROS 2 topic?")
    postgres_server.stop()
    try:
        for server in deployment.servers:
            start = time.monotonic()
            r = _ask(server, thread, "What does a ROS 2 service do?")
            took = time.monotonic() - start
            assert r.status_code == 503 and int(r.headers["retry-after"]) > 0, r.text[:300]
            assert r.json()["output"]["refusal_reason"] == "store_unavailable"
            assert r.json()["output"]["diagnostics"]["store"] == "conversations"
            assert took < 2.0
    finally:
        postgres_server.start()
    for server in deployment.servers:  # the first question after it is back: nothing restarted
        _answered(server, thread, "What does a ROS 2 service do?")
    assert len(_questions(deployment.a, thread)) == 4
    for server in deployment.servers:
        assert "Traceback" not in server.log.read_text(errors="replace"), server.output()


def _report(deployment: Deployment, out: Path) -> dict[str, object]:
    """Run `textbound report` beside the servers; return its summary.json."""
    deployment.cli("report", "--out", str(out))
    data: dict[str, object] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return data


def _rate(server: Running, run_id: object, rating: str) -> dict[str, object]:
    r = httpx.post(server.url + "/feedback", headers=TEACHER, timeout=60,
                   json={"run_id": run_id, "rating": rating})
    assert r.status_code == 201, r.text[:500]
    return r.json()  # type: ignore[no-any-return]


def test_a_run_answered_on_one_server_is_rated_on_the_other_and_reported(
        deployment: Deployment, tmp_path: Path) -> None:
    """Audit lines and ratings are shared: rate anywhere, report every process's questions."""
    a, b = deployment.servers
    before = _report(deployment, tmp_path / "before")
    on_a = _answered(a, "records-a", "What does a ROS 2 service do?")
    refused = "What is the boiling point of mercury in kelvin?"
    on_b = _answered(b, "records-b", refused)
    assert on_b["was_refusal"] and not on_a["was_refusal"]

    rated = _rate(b, on_a["run_id"], "down")  # A answered it; B finds the run
    assert rated["question"] == "What does a ROS 2 service do?"
    assert rated["thread_id"] == "records-a"
    _rate(a, on_b["run_id"], "down")
    deployment.cli("feedback", str(on_b["run_id"]), "up")  # the CLI beside them: latest wins

    after = _report(deployment, tmp_path / "after")
    assert "PostgreSQL" in str(after["audit_log"])
    assert after["answers"] == before["answers"] + 1  # type: ignore[operator]
    assert after["refusals"] == before["refusals"] + 1  # type: ignore[operator]
    wrong = after["marked_wrong"]
    assert isinstance(wrong, dict)
    runs = [r["run_id"] for ch in wrong["chapters"] for r in ch["runs"]]
    assert on_a["run_id"] in runs and on_b["run_id"] not in runs
    text = (tmp_path / "after" / "report.md").read_text(encoding="utf-8")
    assert refused in text
    data_dir = deployment.cli_env["TEXTBOUND_DATA_DIR"]
    url = deployment.cli_env["TEXTBOUND_CHECKPOINT_URL"]
    for name in ("report.md", "report.html", "summary.json"):  # no server path, no password
        shown = (tmp_path / "after" / name).read_text(encoding="utf-8")
        assert data_dir not in shown and url not in shown and str(tmp_path) not in shown

    # deleting B's thread on A removes its line and its rating, whoever wrote them
    assert httpx.delete(f"{a.url}/threads/records-b", headers=TEACHER,
                        timeout=30).status_code == 204
    gone = _report(deployment, tmp_path / "gone")
    assert gone["refusals"] == before["refusals"]
    assert refused not in (tmp_path / "gone" / "report.md").read_text(encoding="utf-8")
    assert gone["marked_wrong"]["rated"] == wrong["rated"] - 1  # type: ignore[index]
    r = httpx.post(a.url + "/feedback", headers=TEACHER, timeout=60,
                   json={"run_id": on_b["run_id"], "rating": "up"})
    assert r.status_code == 404
