"""`textbound feedback` and chat's `/up` and `/down`: a rating in one line, errors that say why."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.unit.test_feedback import RUN, audit_line, write_audit
from textbound.serving.cli import app
from textbound.serving.cli.feedback import rate_in_chat


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder whose audit log holds the run RUN (no store: passages stay places)."""
    folder = tmp_path / "data"
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(folder))
    write_audit(folder / "audit.jsonl", audit_line(
        sources=[{"chunk_id": "c-srv", "score": 0.7}]))
    return folder


def ratings(folder: Path) -> list[dict[str, Any]]:
    path = folder / "feedback.jsonl"
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()] \
        if path.exists() else []


def test_feedback_stores_the_rating_and_says_so(data: Path) -> None:
    """Exit 0, one line naming the rating, the question and the run."""
    result = CliRunner().invoke(app, ["feedback", RUN, "down", "--comment", "it is .srv"])
    assert result.exit_code == 0, result.output
    assert "rated down" in result.stdout and RUN in result.stdout
    assert "What file defines its interface?" in result.stdout
    [stored] = ratings(data)
    assert (stored["rating"], stored["comment"], stored["run_id"]) == ("down", "it is .srv", RUN)


def test_feedback_json_prints_the_stored_record(data: Path) -> None:
    """--json prints the record; a second rating says it replaces the first."""
    runner = CliRunner()
    assert runner.invoke(app, ["feedback", RUN, "up"]).exit_code == 0
    result = runner.invoke(app, ["feedback", RUN, "down", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["rating"] == "down" and out["replaces_earlier"] is True
    assert [r["rating"] for r in ratings(data)] == ["up", "down"]


@pytest.mark.parametrize(("args", "says"), [
    ([str(uuid.uuid4()), "up"], "no response with run_id"),
    ([RUN, "meh"], "rating must be 'up' or 'down'"),
    (["not-a-run", "up"], "is not a run id"),
    ([RUN, "down", "--comment", "x" * 1001], "at most 1,000"),
])
def test_feedback_errors_are_one_line_and_exit_2(data: Path, args: list[str], says: str) -> None:
    """An unknown run, a bad rating, a bad id or an overlong comment: exit 2, nothing stored."""
    result = CliRunner().invoke(app, ["feedback", *args])
    assert result.exit_code == 2
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert ratings(data) == []


def test_feedback_with_the_audit_log_off_says_how_to_turn_it_on(
        data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TEXTBOUND_AUDIT_LOG="": exit 2 naming the setting."""
    monkeypatch.setenv("TEXTBOUND_AUDIT_LOG", "")
    result = CliRunner().invoke(app, ["feedback", RUN, "up"])
    assert result.exit_code == 2 and "TEXTBOUND_AUDIT_LOG" in result.stderr


def test_feedback_is_listed_in_the_commands_help() -> None:
    """`textbound --help` lists it; its own help explains the latest-wins rule."""
    assert "feedback" in CliRunner().invoke(app, ["--help"]).stdout
    own = CliRunner().invoke(app, ["feedback", "--help"]).stdout
    assert "latest wins" in own and "up|down" in own


# --- chat ----------------------------------------------------------------------------------------
LAST = {"run_id": RUN, "answer": "A .msg file [1].", "was_refusal": False,
        "sources": [{"chunk_id": "c-srv", "source": "02-ros2.md",
                     "section": "Chapter 2 > Services"}]}


def test_chat_down_with_a_comment_rates_the_last_answer(
        data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`/down comment` stores the rating, with the chat's own response filling in places."""
    assert rate_in_chat("/down the book says .srv", LAST) is True
    [stored] = ratings(data)
    assert (stored["rating"], stored["comment"]) == ("down", "the book says .srv")
    assert stored["answer"] == "A .msg file [1]."
    assert stored["sources"][0]["section"] == "Chapter 2 > Services"
    assert "rated down" in capsys.readouterr().out


def test_chat_up_alone_and_in_json_mode(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`/UP` works in any case; with --json the rating is one JSON line."""
    assert rate_in_chat("/UP", LAST, as_json=True) is True
    line = json.loads(capsys.readouterr().out)
    assert line["feedback"]["rating"] == "up" and line["feedback"]["comment"] is None


def test_chat_rating_before_any_answer_says_to_ask_first(
        data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing to rate: a hint, no rating, and the chat goes on."""
    assert rate_in_chat("/down", None) is True
    assert "ask a question first" in capsys.readouterr().err
    assert ratings(data) == []


def test_chat_rating_errors_are_printed_not_raised(
        data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A response the audit log does not hold: an error line, the chat goes on."""
    assert rate_in_chat("/up", {**LAST, "run_id": str(uuid.uuid4())}) is True
    assert "no response with run_id" in capsys.readouterr().err


@pytest.mark.parametrize("line", ["What is a topic?", "/upload", "history", "up"])
def test_other_chat_lines_are_not_ratings(data: Path, line: str) -> None:
    """Questions and other commands pass through untouched."""
    assert rate_in_chat(line, LAST) is False
    assert ratings(data) == []
