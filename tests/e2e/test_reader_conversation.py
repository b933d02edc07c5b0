"""Conversations in the reader page, in real Chromium: follow-ups, reloads, new threads, ratings.

Same harness as tests/e2e/test_reader_browser.py (tests/e2e/reader_harness.py: the server over
the ingested textbook in process, Debian's Chromium through Playwright). Each tab keeps its
thread id in sessionStorage; the server keeps the thread (`GET /threads/{id}`) and the ratings
(`POST /feedback`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.reader_harness import Reader, chromium, serving

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

THREAD_KEY = "textbound-thread-id"
# corpus/02-ros2-fundamentals.md: "An action type is defined in an `.action` file with three
# parts"; "Service types are defined in `.srv` files". Asked alone, TYPE is answered with the
# .srv sentence and PARTS is refused (nothing to say what "it" is): only the conversation makes
# them about actions.
ACTION = "What does a ROS 2 action do?"
TYPE = "What file defines its type?"
PARTS = "How many parts does it have?"


@pytest.fixture(scope="module")
def server(textbook: Any) -> Iterator[str]:
    """The server over the ingested textbook (its threads and ratings in its data folder)."""
    with serving(textbook) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium driven by Playwright (the system executable)."""
    with chromium() as b:
        yield b


@pytest.fixture
def reader(browser: Any, server: str) -> Iterator[Reader]:
    """A fresh desktop-sized page on the reader (a new browser context: a new tab's storage)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    yield Reader(context.new_page(), server)
    context.close()


def _thread_id(r: Reader) -> str:
    return str(r.page.evaluate(f"sessionStorage.getItem({THREAD_KEY!r})"))


def _turns(server: str, thread_id: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{server}/threads/{thread_id}", timeout=10)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["thread_id"] == thread_id
    return list(body["turns"])


def _understood(r: Reader) -> list[str]:
    return list(r.page.locator(".message.user .understood-as").all_inner_texts())


def test_a_follow_up_keeps_its_context_across_a_reload(reader: Reader, server: str) -> None:
    """Ask, follow up with a pronoun, reload (same thread, turns shown), follow up again."""
    r = reader.open()
    thread = _thread_id(r)
    assert thread.startswith("reader-")
    first = r.ask(ACTION)
    assert "answer" in (first.get_attribute("class") or "").split()
    assert _understood(r) == []  # a question that stands alone is shown as asked

    follow = r.ask(TYPE)
    assert "answer" in (follow.get_attribute("class") or "").split()
    assert ".action" in follow.locator(".answer-text").first.inner_text()
    understood = _understood(r)
    assert len(understood) == 1 and understood[0].startswith("Understood as:")
    assert "action" in understood[0].lower()
    assert [t["question"] for t in _turns(server, thread)] == [ACTION, TYPE]
    r.shot("conversation-follow-up")

    r.page.reload()
    r.page.wait_for_selector("#chapter-body h1")
    r.page.locator(".message.assistant.restored").nth(1).wait_for()
    assert _thread_id(r) == thread
    assert r.page.locator(".message.user .message-text").all_inner_texts() == [ACTION, TYPE]
    assert ".action" in r.page.locator(".message.assistant").nth(1).inner_text()
    assert _understood(r) == understood  # the standalone question is shown again
    assert "2 earlier questions" in r.page.inner_text("#conversation-status")

    again = r.ask(PARTS)
    assert "answer" in (again.get_attribute("class") or "").split()
    last = _understood(r)[-1]
    assert "action" in last.lower(), last
    turns = _turns(server, thread)
    assert len(turns) == 3 and "action" in turns[2]["standalone"].lower()
    r.shot("conversation-after-reload")
    r.assert_clean()


def test_a_new_conversation_forgets_the_old_thread(reader: Reader, server: str) -> None:
    """"New conversation" starts a fresh thread whose follow-up does not see the old one."""
    r = reader.open()
    old = _thread_id(r)
    r.ask(ACTION)
    r.page.click("#new-conversation")
    new = _thread_id(r)
    assert new != old and new.startswith("reader-")
    assert r.page.locator(".message").count() == 0
    assert r.page.evaluate("document.activeElement.id") == "question"
    assert "New conversation" in r.page.inner_text("#conversation-status")

    box = r.ask(TYPE)
    assert _understood(r) == []  # nothing to carry a subject from
    assert ".action" not in box.inner_text()
    assert [t["question"] for t in _turns(server, new)] == [TYPE]
    assert [t["question"] for t in _turns(server, old)] == [ACTION]  # kept on the server

    r.page.reload()
    r.page.locator(".message.assistant.restored").first.wait_for()
    assert _thread_id(r) == new
    assert r.page.locator(".message.user .message-text").all_inner_texts() == [TYPE]
    r.assert_clean()


def test_a_new_tab_starts_its_own_thread(browser: Any, server: str) -> None:
    """Two tabs (browser contexts) hold two threads; neither shows the other's questions."""
    contexts = [browser.new_context(viewport={"width": 1400, "height": 900}) for _ in range(2)]
    try:
        one, two = (Reader(c.new_page(), server).open() for c in contexts)
        one.ask(ACTION)
        assert _thread_id(one) != _thread_id(two)
        two.page.reload()
        two.page.wait_for_selector("#chapter-body h1")
        assert two.page.locator(".message").count() == 0
        one.assert_clean()
        two.assert_clean()
    finally:
        for c in contexts:
            c.close()


def _feedback_log(textbook: Any) -> Path:
    from textbound.records.feedback import feedback_log_path

    path = feedback_log_path(Path(textbook.settings.audit_log))
    assert path is not None
    return path


def _feedback_lines(textbook: Any) -> list[dict[str, Any]]:
    path = _feedback_log(textbook)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_rating_an_answer_down_with_a_comment_reaches_the_server(reader: Reader,
                                                                textbook: Any) -> None:
    """Keyboard only: thumbs down, a comment, send; the server stores both for the run."""
    r = reader.open()
    box = r.ask(ACTION)
    run_id = box.get_attribute("data-run-id")
    assert run_id
    form = box.locator("form.feedback")
    assert form.get_by_role("group", name="Was this answer right?").count() == 1
    down = form.get_by_role("button", name="No")
    assert down.get_attribute("aria-pressed") == "false"
    down.focus()
    r.page.keyboard.press("Enter")
    status = form.locator(".feedback-status")
    status.filter(has_text="Recorded").wait_for()
    assert down.get_attribute("aria-pressed") == "true"
    assert status.get_attribute("role") == "status"

    r.page.keyboard.press("Tab")
    assert r.page.evaluate("document.activeElement.tagName") == "TEXTAREA"
    assert form.get_by_label("Comment for your teacher (optional)").count() == 1
    r.page.keyboard.type("It should say what an action is for.")
    r.page.keyboard.press("Tab")
    r.page.keyboard.press("Enter")
    status.filter(has_text="with your comment").wait_for()

    mine = [f for f in _feedback_lines(textbook) if f.get("run_id") == run_id]
    assert [(f["rating"], f.get("comment")) for f in mine] == [
        ("down", None), ("down", "It should say what an action is for.")]
    # the teacher's report lists it under "Answers students marked wrong", with the comment
    from textbound.quality.analytics import marked_wrong

    listed = [run for chapter in marked_wrong(_feedback_log(textbook)).chapters
              for run in chapter.runs if run.get("run_id") == run_id]
    assert [(run.get("comment"), run.get("asked_question") or run.get("question"))
            for run in listed] == [("It should say what an action is for.", ACTION)]
    r.shot("conversation-rated")
    r.assert_clean()


def test_a_refusal_can_be_rated_and_a_bad_rating_says_why_in_one_line(reader: Reader,
                                                                      server: str) -> None:
    """A refusal has the same controls; a rating the server refuses shows its reason."""
    r = reader.open()
    box = r.ask("How do I tune a PID controller?")
    assert "refusal" in (box.get_attribute("class") or "")
    form = box.locator("form.feedback")
    assert form.get_by_role("group", name="Was it right not to answer?").count() == 1
    # the rating is sent for a run id the server never gave
    r.page.route(f"{server}/feedback", lambda route: route.continue_(post_data=json.dumps(
        {"run_id": "00000000-0000-4000-8000-000000000000", "rating": "up", "comment": None})))
    form.get_by_role("button", name="Yes").click()
    status = form.locator(".feedback-status.feedback-error")
    status.wait_for()
    text = status.inner_text()
    assert text.startswith("Not recorded: ") and "\n" not in text
    r.page.unroute(f"{server}/feedback")
    r.errors.clear()  # the browser logs the refused request (404) as a console error
    form.get_by_role("button", name="Yes").click()
    form.locator(".feedback-status:not(.feedback-error)").filter(has_text="Recorded").wait_for()
    r.assert_clean()


def test_a_server_that_keeps_no_conversations_says_so(browser: Any, textbook: Any) -> None:
    """Without a checkpointer the page says each question stands alone and offers no restart."""
    from graph.builder import build_graph

    with serving(textbook, graph=build_graph(services=textbook)) as url:
        assert httpx.get(f"{url}/threads/reader-x", timeout=10).status_code == 404
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        try:
            r = Reader(context.new_page(), url).open()
            status = r.page.locator("#conversation-status")
            status.filter(has_text="keeps no conversations").wait_for()
            assert not r.page.is_visible("#new-conversation")
            box = r.ask(ACTION)
            assert "answer" in (box.get_attribute("class") or "").split()
            assert "keeps no conversations" in status.inner_text()  # still true after asking
            # the browser logs the 404 of GET /threads as a failed resource, nothing else
            assert all("404" in e for e in r.errors), r.errors
            r.errors.clear()
            r.assert_clean()
        finally:
            context.close()
