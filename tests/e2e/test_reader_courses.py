"""The reader page of a second course, in real Chromium: it reads and asks only its own course.

One server (tests/e2e/reader_harness.py) holds the ingested textbook as its default course and a
one-document course `marine` at /c/marine/. The page opened there loads its files, lists its
chapters, asks and keeps its conversation all under /c/marine/, in a thread the textbook's
routes do not know.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.reader_harness import Reader, chromium, serving

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SECOND = "marine"
BOOK = """# Marine Robots

## Gliders

An underwater glider changes its buoyancy to move forward. It dives and climbs in a saw-tooth
pattern and needs no propeller, so one battery lasts for weeks of sampling.
"""


@pytest.fixture(scope="module")
def server(textbook: Any, embeddings: Any, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[str]:
    """The textbook at /, the marine course at /c/marine/, served by one app."""
    from graph.builder import build_services
    from textbound.documents.ingest import ingest
    from textbound.fakes import MemoryStore
    from textbound.records.courses import course_of

    folder = tmp_path_factory.mktemp("marine-book")
    (folder / "marine.md").write_text(BOOK, encoding="utf-8")
    settings = textbook.settings.model_copy(update={"courses": [SECOND]})
    default = dataclasses.replace(textbook, settings=settings)
    store = MemoryStore(embeddings, SECOND)
    ingest(store, [folder / "marine.md"])
    second = build_services(settings=course_of(settings, SECOND).settings,
                            embeddings=embeddings, store=store)
    with serving(default, courses={SECOND: second}) as url:
        yield url


def test_a_courses_page_reads_and_asks_only_its_own_course(server: str) -> None:
    """Chapters, question, thread: every request under /c/marine/, the answer from its book."""
    base = f"{server}/c/{SECOND}"
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        reader = Reader(context.new_page(), base).open()
        chapters = reader.page.locator("#chapter-list a").all_inner_texts()
        assert chapters == ["Marine Robots", "Gliders"]
        box = reader.ask("How does an underwater glider move forward?")
        assert "buoyancy" in box.inner_text()
        thread = str(reader.page.evaluate(
            f"sessionStorage.getItem('textbound-thread-id:/c/{SECOND}')"))
        reader.assert_clean()  # nothing outside /c/marine/: the page's files included
        assert any(u.startswith(f"{base}/reader/static/") for u in reader.requests)
        assert any(u == f"{base}/chat/stream" for u in reader.requests)
        context.close()
    mine = httpx.get(f"{base}/threads/{thread}", timeout=10).json()["turns"]
    assert [t["question"] for t in mine] == ["How does an underwater glider move forward?"]
    assert httpx.get(f"{server}/threads/{thread}", timeout=10).json()["turns"] == []
