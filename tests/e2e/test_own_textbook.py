"""A teacher's own textbook, end to end, as the README's "Use your own textbook" steps run it.

A generated 20-page PDF with chapters and sections plus an HTML page are ingested with the CLI,
`textbound init` names the course, `textbound serve` serves it: the reader page (in Chromium)
shows the course's title and chapters, answers cite the right page and section, the greeting and
an out-of-scope refusal name the course, a second document is added while the server runs (by
`textbound ingest --server`, after plain `textbound ingest` says that is what to do, and by the
reader page's form), and `textbound demo` (what `make run` runs) leaves every document in place.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import VENV_BIN, Running, free_port, run_server, server_env
from tests.fixtures.pdf.writer import Book, typeset

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KEY = "teacher-key-3c9d"
AUTH = {"X-API-Key": KEY}
TITLE = "Marine Robotics"
PAGES = 20

CHAPTERS = {
    "Chapter 1: Ocean Environments": ["Pressure and Depth", "Currents and Tides"],
    "Chapter 2: Underwater Gliders": ["Buoyancy Engines", "Mission Planning"],
    "Chapter 3: Remotely Operated Vehicles": ["Tethers", "Manipulator Arms"],
    "Chapter 4: Acoustic Navigation": ["Long Baseline Positioning", "Doppler Velocity Logs"],
    "Chapter 5: Sensors for Ocean Science": ["Conductivity and Temperature", "Sonar Imaging"],
}
FACTS = {
    "Buoyancy Engines": "A buoyancy engine pumps mineral oil between an internal reservoir and "
                        "an external bladder to change the volume of the glider.",
    "Long Baseline Positioning": "A long baseline system fixes the position of a vehicle from "
                                 "the acoustic travel times to three seafloor transponders.",
}
HTML = """<!doctype html><html><head><title>Field Safety at Sea</title></head><body>
<h1>Field Safety at Sea</h1>
<h2>Launch and Recovery</h2>
<p>Launch and recovery of a vehicle is allowed only when the sea state is three or lower.
The deck crew wears helmets and life jackets during every recovery.</p>
<h2>Weather Watch</h2>
<p>The bridge reads the marine forecast every six hours and logs the wind speed.</p>
</body></html>"""
REEFS = """# Coral Reef Surveys

## Transects

Divers photograph a coral reef transect every fifty metres with a square photo quadrat. Each
photo is scored for live coral cover back on the ship.
"""
GLOSSARY = """Kelp Forest Notes

A kelp forest grows where cold water upwells along a rocky coast. Sea otters keep the sea
urchins that graze on kelp in check.
"""


def _filler(section: str, n: int) -> str:
    return (f"Log entry {n} for {section.lower()}: the crew records the weather, the heading of "
            "the ship and the state of every battery in the notebook before the work begins. "
            "The engineer on watch signs each entry, and the chief scientist reviews the "
            "notebook at the end of the cruise, marking any gaps in red ink for the next "
            "season's planning meeting.")


def marine_book() -> Book:
    """Typeset the course: five chapters of two sections, two pages each, facts mid-section."""
    blocks: list[tuple[str, str]] = []
    for chapter, sections in CHAPTERS.items():
        blocks.append(("h1", chapter))
        for section in sections:
            blocks.append(("h2", section))
            entries = [_filler(section, n) for n in range(1, 18)]
            if section in FACTS:
                entries.insert(10, FACTS[section])
            blocks += [("p", text) for text in entries]
    return typeset(blocks, running_header=TITLE, max_pages=PAGES)


@dataclass
class Course:
    """The teacher's files, data folder, environment and the server answering over them."""

    root: Path
    data: Path
    env: dict[str, str]
    book: Book
    server: Running

    def cli(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(VENV_BIN / "textbound"), *args], env=self.env, cwd=self.root,
                              capture_output=True, text=True, timeout=timeout)

    def ask(self, question: str) -> dict[str, Any]:
        r = httpx.post(self.server.url + "/chat/invoke", headers=AUTH, timeout=120,
                       json={"input": {"question": question}})
        assert r.status_code == 200, r.text
        return dict(r.json()["output"])


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Course]:
    """Run the README's steps: ingest the PDF and the HTML page, init, edit the profile, serve."""
    root = tmp_path_factory.mktemp("own-textbook")
    data = root / "data"
    book = marine_book()
    assert len(book.pages) == PAGES
    (root / "marine-robotics.pdf").write_bytes(book.to_bytes(title=TITLE))
    (root / "field-safety.html").write_text(HTML, encoding="utf-8")
    (root / "coral-reefs.md").write_text(REEFS, encoding="utf-8")
    (root / "kelp-forests.txt").write_text(GLOSSARY, encoding="utf-8")
    env = server_env(data, TEXTBOUND_API_KEY=KEY)
    steps = Course(root, data, env, book, server=None)  # type: ignore[arg-type]

    done = steps.cli("ingest", "marine-robotics.pdf", "field-safety.html", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["files_skipped"] == [] and summary["chunks_added"] > 40
    done = steps.cli("init", "--title", TITLE)
    assert done.returncode == 0, done.stderr
    profile = data / "profiles" / "textbook.yaml"
    # the teacher names a topic the course leaves out, as the drafted file's comment shows
    profile.write_text(profile.read_text().replace("out_of_scope: []", (
        "out_of_scope:\n  - topic: deep-sea mining\n    patterns:\n"
        "      - '\\b(deep[- ]sea|seabed) mining\\b'")))

    port = free_port()
    cmd = [str(VENV_BIN / "textbound"), "serve", "--port", str(port), "--log-level", "warning"]
    with run_server(cmd, env=env, cwd=root, port=port, ready_path="/healthz", timeout_s=180,
                    log=root / "serve.log") as running:
        steps.server = running
        yield steps


def _page_of(book: Book, sentence: str) -> int:
    return next(page for start, page in book.paragraph_pages if sentence.startswith(start))


def test_the_reader_info_has_the_courses_title_and_chapters(course: Course) -> None:
    """GET /api/reader names the course from `textbound init`, its chapters its documents."""
    info = httpx.get(course.server.url + "/api/reader", headers=AUTH).json()
    assert info["course_title"] == TITLE
    assert info["profile"].endswith("textbook.yaml")
    # two documents: init drafts one chapter per document (the page lists the PDF's own)
    assert info["chapters"] == ["Field Safety at Sea", TITLE]
    toc = httpx.get(course.server.url + "/api/chapters", headers=AUTH).json()["chapters"]
    assert {c["source"]: c["title"] for c in toc} == {
        "marine-robotics.pdf": TITLE, "field-safety.html": "Field Safety at Sea"}


@pytest.mark.parametrize(("question", "section"), [
    ("What does a buoyancy engine pump between the reservoir and the bladder?",
     "Buoyancy Engines"),
    ("How does a long baseline system fix the position of a vehicle?",
     "Long Baseline Positioning"),
])
def test_answers_cite_the_page_and_section_of_the_pdf(course: Course, question: str,
                                                       section: str) -> None:
    """An answer from the PDF cites the page its sentence is printed on, and its chapter."""
    out = course.ask(question)
    assert not out["was_refusal"], out
    cited = out["sources"][0]
    assert cited["source"] == "marine-robotics.pdf"
    chapter = next(c for c, sections in CHAPTERS.items() if section in sections)
    assert cited["section"] == f"{chapter} > {section}"
    assert cited["page"] == _page_of(course.book, FACTS[section])


def test_an_answer_from_the_html_page_cites_its_section(course: Course) -> None:
    """The HTML page answers too, citing its heading path."""
    out = course.ask("When is launch and recovery of a vehicle allowed?")
    assert not out["was_refusal"], out
    assert out["sources"][0]["source"] == "field-safety.html"
    assert out["sources"][0]["section"] == "Field Safety at Sea > Launch and Recovery"


def test_greeting_and_out_of_scope_refusal_name_the_course(course: Course) -> None:
    """The greeting and the teacher's out-of-scope topic speak of the Marine Robotics course."""
    hello = course.ask("hello")
    assert TITLE in hello["answer"] and "Physical AI" not in hello["answer"]
    mining = course.ask("What are the rules for deep-sea mining?")
    assert mining["refusal_reason"] == "out_of_scope"
    assert "the Marine Robotics course" in mining["answer"]


def test_a_second_document_is_added_while_the_server_runs(course: Course) -> None:
    """Plain `textbound ingest` says to use --server; with it the server ingests the file."""
    blocked = course.cli("ingest", "coral-reefs.md")
    assert blocked.returncode == 2
    message = " ".join(blocked.stderr.split())
    assert "in use by another textbound process" in message
    assert "textbound ingest --server http://127.0.0.1:8000 coral-reefs.md" in message

    done = course.cli("ingest", "--server", course.server.url, "coral-reefs.md", "--json")
    assert done.returncode == 0, done.stderr
    [job] = json.loads(done.stdout)
    assert job["status"] == "done" and job["source"] == "coral-reefs.md"
    assert (course.data / "uploads" / "textbook" / "coral-reefs.md").read_text() == REEFS
    out = course.ask("How often do divers photograph a coral reef transect?")
    assert not out["was_refusal"], out
    assert out["sources"][0]["source"] == "coral-reefs.md"
    assert out["sources"][0]["section"] == "Coral Reef Surveys > Transects"


def test_the_reader_page_in_chromium(course: Course) -> None:
    """The page shows the course title and chapters, marks PDF pages, adds a document and
    answers with a citation that opens the cited page of the PDF."""
    from tests.e2e.reader_harness import ARTIFACTS, CHROMIUM_ARGS, chromium_or_skip

    executable = chromium_or_skip()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(course.server.url + "/")
            page.fill("#api-key", KEY)  # the page asks for the key the server wants
            page.click("#key-form button[type=submit]")
            page.wait_for_selector(f"#course-title:has-text({TITLE!r})")
            page.click("#chapter-list a[data-source='marine-robotics.pdf']")
            page.wait_for_selector("#chapter-body h1:has-text('Chapter 1: Ocean Environments')")
            chapters = page.locator(
                "#chapter-list a[data-source='marine-robotics.pdf'] + .section-list a"
            ).all_inner_texts()
            assert chapters == list(CHAPTERS)
            markers = page.locator("#chapter-body .page-marker").all_inner_texts()
            assert markers == [f"p. {n}" for n in range(1, PAGES + 1)]

            page.click("#add-document summary")
            page.set_input_files("#upload-file", str(course.root / "kelp-forests.txt"))
            page.fill("#upload-key", KEY)
            page.click("#upload-send")
            page.wait_for_selector("#upload-status:has-text('Added kelp-forests.txt')",
                                   timeout=120_000)
            page.wait_for_selector("#chapter-list a[data-source='kelp-forests.txt']")

            page.fill("#question", "What does a buoyancy engine pump?")
            page.press("#question", "Enter")
            page.wait_for_selector(".message.assistant.answer", timeout=120_000)
            page.locator(".message.assistant.answer a.cite").first.click()
            mark = page.locator("#cited-passage")
            mark.wait_for()
            assert "buoyancy engine pumps mineral oil" in mark.inner_text()
            # the highlight covers the quoted sentences and runs no further
            highlighted = " ".join(page.evaluate(
                "[...document.querySelectorAll('mark.cite-highlight')]"
                ".map(m => m.textContent).join('')").split())
            answer = " ".join(page.locator(".message.assistant.answer").last.inner_text().split())
            quoted = [s for s in re.split(r"(?<=[.!?])\s+", highlighted) if s]
            assert quoted and all(s in answer for s in quoted), (highlighted, answer)
            expected = _page_of(course.book, FACTS["Buoyancy Engines"])
            before = page.evaluate("""() => {
                const mark = document.getElementById('cited-passage');
                const all = [...document.querySelectorAll('#chapter-body .page-marker')];
                const prior = all.filter((m) => m.compareDocumentPosition(mark)
                                                & Node.DOCUMENT_POSITION_FOLLOWING);
                return Number(prior[prior.length - 1].dataset.page);
            }""")
            assert before == expected
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "own-textbook-reader.png"))
            assert errors == []
        finally:
            browser.close()


def test_make_run_afterwards_leaves_the_teachers_documents(course: Course,
                                                          ingested_template: Path) -> None:
    """With the server stopped, `textbound demo` (make run) keeps every document and file."""
    course.server.proc.terminate()
    course.server.proc.wait(timeout=60)
    # the demo finds its collection holding the bundled book, as a second `make run` does, so it
    # does not embed the book again (two minutes on 2 cores); tests/unit/test_cli.py runs a
    # first demo into a data folder that has none
    shutil.copytree(ingested_template / "qdrant" / "edge" / "textbook",
                    course.data / "qdrant" / "edge" / "demo")
    demo = course.cli("demo", timeout=600)
    assert demo.returncode == 0, demo.stderr[-2000:]
    stats = course.cli("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    sources = {d["source"] for d in json.loads(stats.stdout)["table_of_contents"]}
    assert sources == {"marine-robotics.pdf", "field-safety.html", "coral-reefs.md",
                       "kelp-forests.txt"}
    kept = sorted(p.name for p in (course.data / "uploads" / "textbook").iterdir())
    assert kept == ["coral-reefs.md", "kelp-forests.txt"]
