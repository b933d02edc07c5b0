"""A conversation over HTTP and in `textbound chat`: follow-ups keep their thread, across restarts
(SQLite in the data folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import VENV_BIN, free_port, run_server, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _serve(data: Path, root: Path) -> Any:
    port = free_port()
    cmd = [str(VENV_BIN / "textbound"), "serve", "--host", "127.0.0.1", "--port", str(port),
           "--log-level", "warning"]
    return run_server(cmd, env=server_env(data), cwd=root, port=port, ready_path="/healthz",
                      timeout_s=120, log=root / f"serve-{port}.log")


def _ask(url: str, question: str, thread: str | None) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}} if thread else {}
    r = httpx.post(url + "/chat/invoke", json={"input": {"question": question},
                                               "config": config}, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()["output"]


def test_a_three_turn_conversation_keeps_its_context_across_a_restart(data_dir: Path,
                                                                      tmp_path: Path) -> None:
    with _serve(data_dir, tmp_path) as server:
        first = _ask(server.url, "What is Gazebo?", "student-1")
        assert not first["was_refusal"] and "Gazebo" in first["answer"]
        assert first["run_id"] and first["diagnostics"]["conversation"]["turn"] == 1
        second = _ask(server.url, "what physics engines does it support?", "student-1")
        conv = second["diagnostics"]["conversation"]
        assert conv["rewritten"] and conv["standalone"] == \
            "What physics engines does Gazebo support?"
        assert not second["was_refusal"] and "physics" in second["answer"]
        # another student's thread never sees the first one's
        other = _ask(server.url, "what physics engines does it support?", "student-2")
        assert not other["diagnostics"]["conversation"]["rewritten"]
        turns = httpx.get(server.url + "/threads/student-1", timeout=30).json()["turns"]
        assert [t["question"] for t in turns] == [
            "What is Gazebo?", "what physics engines does it support?"]
        assert turns[1]["standalone"] == "What physics engines does Gazebo support?"
    with _serve(data_dir, tmp_path) as server:  # a restart keeps the thread (SQLite)
        third = _ask(server.url, "and Isaac Sim?", "student-1")
        conv = third["diagnostics"]["conversation"]
        assert conv["turn"] == 3 and conv["standalone"] == \
            "What physics engines does Isaac Sim support?"
        assert not third["was_refusal"] and "PhysX" in third["answer"]
        # a follow-up the book does not answer is refused, before any generation
        missing = _ask(server.url, "how much does it cost?", "student-1")
        assert missing["diagnostics"]["conversation"]["standalone"] == \
            "How much does Isaac Sim cost?"
        assert missing["was_refusal"] and missing["refusal_reason"] in (
            "insufficient_context", "question_not_answered", "out_of_scope")
        assert "generate" not in missing["diagnostics"]["timings_ms"]
        assert httpx.delete(server.url + "/threads/student-1", timeout=30).status_code == 204
        assert httpx.get(server.url + "/threads/student-1", timeout=30).json()["turns"] == []


def test_a_bad_thread_id_is_a_422_naming_the_rule(data_dir: Path, tmp_path: Path) -> None:
    with _serve(data_dir, tmp_path) as server:
        r = httpx.post(server.url + "/chat/invoke", json={
            "input": {"question": "What is Gazebo?"},
            "config": {"configurable": {"thread_id": "../../etc/passwd"}}}, timeout=60)
        assert r.status_code == 422 and "letter, digit" in r.text
        assert httpx.get(server.url + "/threads/a%20b", timeout=30).status_code == 422


def _chat(data: Path, root: Path, thread: str, *lines: str) -> list[dict[str, Any]]:
    import json
    import subprocess

    proc = subprocess.run([str(VENV_BIN / "textbound"), "chat", "--thread", thread, "--json"],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          env=server_env(data), cwd=root, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_textbound_chat_keeps_a_conversation_and_resumes_it(data_dir: Path,
                                                            tmp_path: Path) -> None:
    """Three turns in `textbound chat`; a later `chat --thread` picks the thread up again."""
    outs = _chat(data_dir, tmp_path, "cli-1", "What is Gazebo?",
                 "what physics engines does it support?", "and Isaac Sim?")
    assert [o["diagnostics"]["conversation"]["standalone"] for o in outs] == [
        "What is Gazebo?", "What physics engines does Gazebo support?",
        "What physics engines does Isaac Sim support?"]
    assert not outs[2]["was_refusal"] and "PhysX" in outs[2]["answer"]
    later = _chat(data_dir, tmp_path, "cli-1", "how much does it cost?", "history")
    assert later[0]["was_refusal"]
    assert later[0]["diagnostics"]["conversation"]["standalone"] == "How much does Isaac Sim cost?"
    assert len(later[1]["turns"]) == 4 and later[1]["thread_id"] == "cli-1"
