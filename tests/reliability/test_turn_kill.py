"""A turn SIGKILLed between its reply and its save leaves no audit line (records/turn_audit.py).

The teacher's report counts the audit log's lines; a student's conversation shows the thread's
saved turns. A process killed after the reply node made the turn's line and before the thread
saved the turn must leave neither, so the report never counts a turn the student cannot see.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.reliability._turn_child import THREAD
from textbound.conversation.threads import ThreadSqliteSaver, saved_turns


def _turn(stage: str, data: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEXTBOUND_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update({"LANGSMITH_TEST_TRACKING": "false", "PYTHONPATH": str(REPO)})
    done = subprocess.run([sys.executable, "-m", "tests.reliability._turn_child", stage,
                           str(data)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    return done.returncode, done.stdout.split()[0] if done.stdout.split() else ""


def _lines(data: Path) -> list[dict[str, Any]]:
    log = data / "audit.jsonl"
    return [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()] \
        if log.exists() else []


def _kept(data: Path) -> list[str]:
    saver = ThreadSqliteSaver.open(data / "threads.sqlite")
    try:
        return [t["run_id"] for t in saved_turns(saver, THREAD)]
    finally:
        saver.conn.close()


@pytest.mark.slow
def test_a_turn_killed_before_its_save_leaves_no_audit_line(tmp_path: Path) -> None:
    rc, killed = _turn("saving", tmp_path)
    assert rc == -signal.SIGKILL and killed
    assert _kept(tmp_path) == [] and _lines(tmp_path) == []
    # the same thread then answers normally: one turn, one line, the same run
    rc, kept = _turn("none", tmp_path)
    assert rc == 0
    assert _kept(tmp_path) == [kept]
    assert [(r["run_id"], r["thread_id"]) for r in _lines(tmp_path)] == [(kept, THREAD)]
