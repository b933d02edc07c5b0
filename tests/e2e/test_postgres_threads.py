"""Two `textbound serve` processes and the CLI continue one conversation kept in PostgreSQL.

Each process has its own copy of the ingested data folder (the embedded store allows one
process per collection) and all share TEXTBOUND_CHECKPOINT_URL on a real PostgreSQL server
(tests/pg_server.py): the deployment docs/deployment.md describes, with the CLI writing through
the saver's sync methods and the servers through its async ones.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import VENV_BIN, Running, free_port, run_server, server_env
from tests.pg_server import PostgresServer, postgres_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

__all__ = ["postgres_server"]

THREAD = "shared-1"


def _env(root: Path, name: str, template: Path, url: str) -> dict[str, str]:
    data = root / name
    shutil.copytree(template, data)
    return server_env(data, TEXTBOUND_CHECKPOINTER="postgres", TEXTBOUND_CHECKPOINT_URL=url)


@pytest.fixture
def deployment(postgres_server: PostgresServer, ingested_template: Path,
               tmp_path: Path) -> Iterator[tuple[Running, Running, dict[str, str]]]:
    """Two servers and a CLI environment on one fresh PostgreSQL database."""
    url = postgres_server.create_database("e2e_threads")
    with ExitStack() as stack:
        servers = []
        for name in ("a", "b"):
            port = free_port()
            cmd = [str(VENV_BIN / "textbound"), "serve", "--host", "127.0.0.1", "--port",
                   str(port), "--log-level", "warning"]
            servers.append(stack.enter_context(run_server(
                cmd, env=_env(tmp_path, name, ingested_template, url), cwd=tmp_path,
                port=port, ready_path="/healthz", timeout_s=180,
                log=tmp_path / f"serve-{name}.log")))
        yield servers[0], servers[1], _env(tmp_path, "cli", ingested_template, url)


def _ask(server: Running, question: str) -> dict[str, object]:
    r = httpx.post(server.url + "/chat/invoke", timeout=120, json={
        "input": {"question": question}, "config": {"configurable": {"thread_id": THREAD}}})
    assert r.status_code == 200, r.text[:500]
    return r.json()["output"]


def _questions(server: Running) -> list[str]:
    r = httpx.get(f"{server.url}/threads/{THREAD}", timeout=30)
    assert r.status_code == 200, r.text[:500]
    return [turn["question"] for turn in r.json()["turns"]]


def test_two_servers_and_the_cli_share_one_postgres_thread(
        deployment: tuple[Running, Running, dict[str, str]]) -> None:
    """The CLI starts a thread, server A and then B continue it, both see it, one deletes it."""
    a, b, cli_env = deployment
    first = "What does a ROS 2 service do?"
    cli = subprocess.run([str(VENV_BIN / "textbound"), "ask", "--thread", THREAD, first],
                         env=cli_env, capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stderr[-2000:]

    second = _ask(a, "What file defines its interface?")
    assert second["diagnostics"]["conversation"]["turn"] == 2  # type: ignore[index]
    third = _ask(b, "Give me an example.")
    assert third["diagnostics"]["conversation"]["turn"] == 3  # type: ignore[index]
    expected = [first, "What file defines its interface?", "Give me an example."]
    assert _questions(a) == _questions(b) == expected

    assert httpx.delete(f"{b.url}/threads/{THREAD}", timeout=30).status_code == 204
    assert _questions(a) == []
