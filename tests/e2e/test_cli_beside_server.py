"""The CLI beside a running `textbound serve` (issue 39): ask, stats, report and feedback work.

The server holds the embedded collection; `ask` and `stats` find it from the file it writes in
the data folder and go through its HTTP API, `report` and `feedback` read the logs, and the
report holds no store error.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import MARINE_BOOK, VENV_BIN, Running, free_port, run_server, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KEY = "cli-beside-server-key"


def textbound(data: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "textbound"), *args], capture_output=True, text=True,
                          env=server_env(data, TEXTBOUND_API_KEY=KEY), timeout=timeout)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, Path]]:
    """A small book ingested, then served on a free port of 127.0.0.1 with a teacher key."""
    root = tmp_path_factory.mktemp("cli-beside-server")
    data = root / "data"
    book = root / "marine.md"
    book.write_text(MARINE_BOOK, encoding="utf-8")
    done = textbound(data, "ingest", str(book))
    assert done.returncode == 0, done.stderr
    port = free_port()
    cmd = [str(VENV_BIN / "textbound"), "serve", "--host", "127.0.0.1", "--port", str(port),
           "--log-level", "warning"]
    with run_server(cmd, env=server_env(data, TEXTBOUND_API_KEY=KEY), cwd=root, port=port,
                    ready_path="/healthz", timeout_s=120, log=root / "serve.log") as running:
        yield running, data


def test_ask_stats_report_and_feedback_while_the_server_runs(
        served: tuple[Running, Path], tmp_path: Path) -> None:
    """Each command succeeds while the server holds the store; the report has no error text."""
    server, data = served
    assert json.loads((data / "servers" / "textbook.json").read_text())["url"] == server.url
    answered = textbound(data, "ask", "How does an underwater glider move forward?", "--json")
    assert answered.returncode == 0, answered.stderr
    answer = json.loads(answered.stdout)
    assert not answer["was_refusal"] and "buoyancy" in answer["answer"], answer
    refused = textbound(data, "ask", "What is the capital of France?", "--json")
    assert refused.returncode == 0, refused.stderr
    assert json.loads(refused.stdout)["was_refusal"]

    stats = textbound(data, "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    shown = json.loads(stats.stdout)
    assert shown["documents"] == 1 and shown["chunks"] >= 1
    assert shown["location"].startswith(server.url)

    rated = textbound(data, "feedback", answer["run_id"], "down", "--comment", "too short")
    assert rated.returncode == 0, rated.stderr
    assert "rated down" in rated.stdout

    out = tmp_path / "report"
    report = textbound(data, "report", "--out", str(out))
    assert report.returncode == 0, report.stderr
    assert "1 of 1 rated responses marked wrong" in " ".join(report.stdout.split())
    for name in ("report.md", "report.html", "summary.json"):
        text = (out / name).read_text(encoding="utf-8")
        for internal in ("WouldBlock", "WAL", "could not be searched", str(data)):
            assert internal not in text, (name, internal)
    gaps = (out / "report.md").read_text(encoding="utf-8").split(
        "## Coverage gaps by chapter")[1].split("## Most refused")[0]
    assert "capital of France" not in gaps
    assert server.proc.poll() is None, server.output()  # the server kept running throughout
