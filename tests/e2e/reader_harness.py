"""The reader page's browser harness: the server in process, Debian's Chromium, a page driver.

`serving(services)` runs `textbound.serving.server.create_app` with uvicorn on a free loopback port;
`chromium()` launches `/usr/bin/chromium` through Playwright (never a browser Playwright
downloads), skipping when neither it nor Debian's package can be had; `Reader` drives one page
and records the requests it made and the errors it logged. Screenshots go to `test-artifacts/`.
`Reader.serve_chapter` and `Reader.serve_answer` answer the page's own requests with a given
document or response contract, for what the sample textbook and its answers do not hold (a
table, a quoted code block): the page is what they test, not the server.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

__all__ = ["AMBER_BACKGROUND", "ANSWER_TIMEOUT_MS", "ARTIFACTS", "CHROMIUM", "CHROMIUM_ARGS",
           "RESPONSE", "Reader", "chromium", "chromium_or_skip", "free_port", "serving"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = REPO / "test-artifacts"
ANSWER_TIMEOUT_MS = 60_000
AMBER_BACKGROUND = "rgb(255, 245, 219)"  # --amber-wash in reader.css
RESPONSE = ".message.assistant:not(.pending)"


def chromium_or_skip() -> Path:
    """Return the system Chromium, installing Debian's package when possible, else skip."""
    if CHROMIUM.exists():
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt and hasattr(os, "geteuid") and os.geteuid() == 0:
        for cmd in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium"]):
            try:
                subprocess.run(cmd, check=False, capture_output=True, timeout=900,
                               env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
            except subprocess.TimeoutExpired:
                break
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed and `apt-get install chromium` did not install "
                    "it (needs root and Debian's package archive); .ci/run installs it")
    return CHROMIUM


def free_port() -> int:
    """Return a loopback TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(services: Any, *, graph: Any = None, courses: Any = None) -> Iterator[str]:
    """Serve create_app over these services (this graph, these further courses' services) on a
    free loopback port; its URL."""
    import uvicorn

    from textbound.serving.server import create_app

    app = create_app(services, graph=graph, courses=courses)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            ws="none", lifespan="off")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, name="reader-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            srv.should_exit = True
            pytest.fail("the server did not start within 30 s")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=15)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium driven by Playwright (the system executable), or skip."""
    executable = chromium_or_skip()
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="the playwright package (dev group) is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        yield b
        b.close()


class Reader:
    """A page of the reader with the requests it made and the errors it raised."""

    def __init__(self, page: Any, base: str) -> None:
        self.page, self.base = page, base
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    def serve_chapter(self, source: str, title: str, text: str) -> None:
        """Make this page's table of contents one document, `text`, as the chapter API sends it."""
        chapter = {"source": source, "title": title, "kind": "markdown", "text": text,
                   "stale": False, "pages": []}
        toc = {"chapters": [{"source": source, "title": title, "sections": [],
                             "readable": True}]}
        self.page.route("**/api/chapters", lambda route: route.fulfill(json=toc))
        self.page.route(f"**/api/chapters/{source}",
                        lambda route: route.fulfill(json=chapter))

    def serve_answer(self, contract: dict[str, Any]) -> None:
        """Answer this page's questions over /chat/stream with `contract`, as the server does."""
        events = [("metadata", {"run_id": "fake"}),
                  ("data", {"progress": {"node": "release_answer", "step": 1}}),
                  ("data", contract)]
        body = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)
        body += "event: end\n\n"
        self.page.route("**/chat/stream", lambda route: route.fulfill(
            status=200, content_type="text/event-stream", body=body))

    def open(self) -> Reader:
        self.page.goto(self.base + "/")
        self.page.wait_for_selector("#chapter-body h1")
        return self

    def open_chapter(self, title: str) -> None:
        self.page.get_by_role("link", name=title, exact=True).click()
        self.page.wait_for_selector(f"#chapter-body h1:has-text({title!r})")

    def ask(self, question: str) -> Any:
        """Type a question, press the Ask button, wait for the checked answer or refusal."""
        before = self.page.locator(RESPONSE).count()
        self.page.fill("#question", question)
        self.page.click("#send")
        return self.wait_response(before)

    def wait_response(self, before: int) -> Any:
        box = self.page.locator(RESPONSE).nth(before)
        box.wait_for(timeout=ANSWER_TIMEOUT_MS)
        return box

    def follow_first_citation(self, box: Any) -> str:
        box.locator("a.cite").first.click()
        self.page.wait_for_selector("mark#cited-passage")
        return str(self.page.evaluate(
            "[...document.querySelectorAll('mark.cite-highlight')].map(m => m.textContent)"
            ".join('')"))

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"reader-{name}.png"
        self.page.screenshot(path=str(path))
        assert path.stat().st_size > 10_000
        return path

    def assert_clean(self) -> None:
        outside = [u for u in self.requests
                   if not (u.startswith(self.base + "/") or u.startswith("data:"))]
        assert outside == [], f"the page made outside requests: {outside}"
        assert self.errors == [], f"the page logged errors: {self.errors}"
