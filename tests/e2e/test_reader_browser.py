"""The reader page in a real headless Chromium, against the real server over the ingested textbook.

The server (`textbound.serving.server.create_app`, which mounts `textbound.serving.reader`) runs
in-process with uvicorn on a free loopback port; Playwright drives Debian's `/usr/bin/chromium`
(never a browser
Playwright downloads). Every test saves a screenshot under `test-artifacts/`. The harness is
tests/e2e/reader_harness.py, shared with tests/e2e/test_reader_conversation.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO
from tests.e2e.reader_harness import AMBER_BACKGROUND, RESPONSE, Reader, chromium, serving

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(textbook: Any) -> Iterator[str]:
    """The server over the ingested textbook; its URL."""
    with serving(textbook) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium driven by Playwright (the system executable)."""
    with chromium() as b:
        yield b


@pytest.fixture
def reader(browser: Any, server: str) -> Iterator[Reader]:
    """A fresh desktop-sized page on the reader."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    yield Reader(page, server)
    context.close()


def _first_sentence(answer: str) -> str:
    return answer.split("[1]")[0].strip()


def _in_viewport(page: Any, selector: str) -> bool:
    return bool(page.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= innerHeight && r.height > 0; }", selector))


def test_answer_cites_and_highlights_the_passage(reader: Reader) -> None:
    """An answerable question gets a cited answer whose citation highlights the exact passage."""
    r = reader.open()
    r.open_chapter("Chapter 1: Physical AI Foundations")
    box = r.ask("What is a ROS 2 topic?")
    assert "refusal" not in (box.get_attribute("class") or "")
    assert box.locator(".confidence strong").inner_text().lower() in {"high", "medium", "low"}
    assert box.locator(".checks summary").inner_text().startswith("How this was checked (")
    # progress arrived node by node over /chat/stream, the last step being the checked release
    steps = box.locator(".progress li")
    assert steps.count() >= 4
    assert steps.last.get_attribute("data-node") == "release_answer"
    sources = box.locator("ol.sources li")
    assert sources.count() >= 1
    sentence = _first_sentence(box.locator(".answer-text").first.inner_text())
    assert sentence

    highlighted = r.follow_first_citation(box)
    # the citation opened the chapter it cites (chapter 2, not the one being read)
    assert "ROS 2 Fundamentals" in r.page.inner_text("#chapter-body h1")
    assert sentence in " ".join(highlighted.split())
    assert _in_viewport(r.page, "mark#cited-passage")
    assert r.page.evaluate("document.activeElement.id") == "cited-passage"
    r.shot("desktop-answer-citation")
    r.assert_clean()


# Scroll first and select two frames later: the page hides the selection popup on scroll, and a
# scroll event dispatched after the selection would hide it again (a race seen in CI).
SELECT_PARAGRAPH = """(start) => new Promise((resolve) => {
  const p = [...document.querySelectorAll('#chapter-body p')]
    .find(el => el.textContent.startsWith(start));
  p.scrollIntoView({block: 'center'});
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const range = document.createRange();
    range.selectNodeContents(p);
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    resolve(p.textContent);
  }));
})"""


def test_selection_limits_the_answer_to_the_passage(reader: Reader) -> None:
    """Asking about a selection sends it as selected_text and cites inside it."""
    r = reader.open()
    r.open_chapter("Chapter 2: ROS 2 Fundamentals")
    paragraph = r.page.evaluate(SELECT_PARAGRAPH, "A topic is a named bus")
    r.page.wait_for_selector("#selection-popup:not([hidden])")
    r.page.fill("#question", "What does a subscription do?")
    before = r.page.locator(RESPONSE).count()
    r.page.click("#selection-popup")
    box = r.wait_response(before)

    assert r.page.locator(".message.user .message-tag").last.inner_text().startswith(
        "About your selection")
    assert "limited to your selected passage" in box.locator(".selection-notice").inner_text()
    assert "your selection" in r.page.inner_text("#scope-name")
    assert "refusal" not in (box.get_attribute("class") or "")
    assert box.locator("ol.sources li").first.inner_text().startswith("Your selection")
    sentence = _first_sentence(box.locator(".answer-text").first.inner_text())
    assert sentence and sentence in paragraph

    highlighted = r.follow_first_citation(box)
    assert sentence in " ".join(highlighted.split())
    assert highlighted in paragraph  # the cited sentence lies inside the selection
    r.shot("desktop-selection")
    r.assert_clean()


def test_out_of_scope_question_is_refused_in_amber(reader: Reader, server: str) -> None:
    """An out-of-scope question shows an amber refusal, its reason and the suggestions."""
    expected = httpx.post(f"{server}/chat/invoke", timeout=60,
                          json={"input": {"question": "How do I tune a PID controller?"}}
                          ).json()["output"]
    assert expected["was_refusal"]
    r = reader.open()
    box = r.ask("How do I tune a PID controller?")
    assert "refusal" in (box.get_attribute("class") or "")
    assert box.evaluate("el => getComputedStyle(el).backgroundColor") == AMBER_BACKGROUND
    assert box.locator(".refusal-reason").inner_text().startswith("Not answered:")
    assert box.locator(".reason-code").inner_text().endswith(expected["refusal_reason"])
    assert box.locator("a.cite").count() == 0
    assert box.locator(".confidence").count() == 0
    buttons = box.locator("button.suggestion")
    assert [buttons.nth(i).inner_text() for i in range(buttons.count())] == expected[
        "suggestions"]
    r.shot("desktop-refusal")
    if expected["suggestions"]:
        before = r.page.locator(RESPONSE).count()
        buttons.first.click()
        r.wait_response(before)
        assert r.page.locator(".message.user .message-text").last.inner_text() == (
            expected["suggestions"][0])
    r.assert_clean()


def test_keyboard_alone_can_ask_and_follow_a_citation(reader: Reader) -> None:
    """Tab to the skip link, Enter, type, Enter; then Tab to the citation and open it."""
    r = reader.open()
    page = r.page
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "question"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    before = page.locator(RESPONSE).count()
    page.keyboard.type("What is a ROS 2 topic?")
    page.keyboard.press("Enter")
    box = r.wait_response(before)
    assert "refusal" not in (box.get_attribute("class") or "")
    for _ in range(60):
        if page.evaluate("document.activeElement.classList.contains('cite')"):
            break
        page.keyboard.press("Shift+Tab")
    else:
        pytest.fail("Shift+Tab never reached a citation link")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    page.wait_for_selector("mark#cited-passage")
    assert page.evaluate("document.activeElement.id") == "cited-passage"
    r.shot("desktop-keyboard")
    r.assert_clean()


def test_narrow_screen_reads_asks_and_refuses(browser: Any, server: str) -> None:
    """At 390 px the page fits the width; the chat opens over the chapter and closes on a cite."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                  has_touch=True, device_scale_factor=2)
    try:
        r = Reader(context.new_page(), server).open()
        page = r.page
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert not page.is_visible("#chat") and not page.is_visible("#toc")
        page.click("#chat-toggle")
        assert page.is_visible("#chat")
        box = r.ask("What is a ROS 2 topic?")
        r.shot("narrow-answer")
        highlighted = r.follow_first_citation(box)
        assert not page.is_visible("#chat")  # following the citation shows the chapter
        assert _first_sentence(box.locator(".answer-text").first.inner_text()) in " ".join(
            highlighted.split())
        assert _in_viewport(page, "mark#cited-passage")
        r.shot("narrow-citation")
        page.click("#chat-toggle")
        refusal = r.ask("How do I tune a PID controller?")
        assert refusal.evaluate("el => getComputedStyle(el).backgroundColor") == AMBER_BACKGROUND
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        r.shot("narrow-refusal")
        r.assert_clean()
    finally:
        context.close()


def test_chapter_endpoints_serve_only_ingested_documents(server: str) -> None:
    """The table of contents lists the ingested chapters; other paths are 404, never files."""
    toc = httpx.get(f"{server}/api/chapters", timeout=10).json()["chapters"]
    sources = [c["source"] for c in toc]
    assert sources == sorted(p.relative_to(REPO).as_posix()
                             for p in (REPO / "corpus").glob("*.md"))
    chapter = httpx.get(f"{server}/api/chapters/{sources[1]}", timeout=10).json()
    assert chapter["text"] == (REPO / sources[1]).read_text(encoding="utf-8")
    assert chapter["stale"] is False
    for bad in ("corpus/../pyproject.toml", "pyproject.toml", "corpus/questions.jsonl"):
        assert httpx.get(f"{server}/api/chapters/{bad}", timeout=10).status_code == 404
    page = httpx.get(f"{server}/", timeout=10)
    assert "default-src 'self'" in page.headers["content-security-policy"]


RENDER = """async (md) => {
  const m = await import('/reader/static/markdown.js');
  const root = document.createElement('div');
  const r = m.renderMarkdown(md, root);
  const units = m.codePointIndex(md);
  return {
    html: root.innerHTML,
    tags: [...root.querySelectorAll('*')].map(e => e.tagName.toLowerCase()),
    segments: r.segments.map(s => [s.start, s.end, s.node.data]),
    headings: r.headings.map(h => h.text),
    // where the code point after the emoji lands in UTF-16
    unitOfLast: units([...md].length - 1),
  };
}"""

MARKDOWN = """# Title with `code`

A paragraph with **bold**, *italic*, base_link and a [link](https://example.org).
Second line <script>alert(1)</script> & <img src=x onerror=alert(2)>.

- item one
- item **two**
  - nested item

1. first
2. second

```python
print("<b>not bold</b>")
```

> quoted text

| Name | Size `a\\|b` |
|---|--:|
| integer | 4 **bytes** |
| a \\| b | <i>x</i> |

![diagram](http://example.org/x.png) end 😀!"""


def test_markdown_renderer_maps_every_character_and_escapes_html(reader: Reader) -> None:
    """Each rendered text node is the exact source slice it claims; HTML stays text."""
    r = reader.open()
    out = r.page.evaluate(RENDER, MARKDOWN)
    assert out["segments"], "nothing rendered"
    for start, end, data in out["segments"]:
        # JS offsets are UTF-16; the sample's only astral character is its last-but-one
        assert MARKDOWN.encode("utf-16-le")[2 * start:2 * end].decode("utf-16-le") == data
    assert "script" not in out["tags"] and "img" not in out["tags"] and "i" not in out["tags"]
    assert "&lt;script&gt;" in out["html"] and "&lt;b&gt;not bold&lt;/b&gt;" in out["html"]
    for tag in ("h1", "p", "strong", "em", "code", "a", "ul", "ol", "li", "pre", "blockquote",
                "table", "thead", "th", "tbody", "td"):
        assert tag in out["tags"], tag
    assert out["tags"].count("ul") == 2  # the nested list
    assert out["headings"] == ["Title with code"]
    rendered = "".join(d for _, _, d in out["segments"])
    assert "**" not in rendered and "```" not in rendered and "base_link" in rendered
    assert out["unitOfLast"] == len(MARKDOWN.encode("utf-16-le")) // 2 - 1
    r.assert_clean()


TABLES_JS = """async (md) => {
  const m = await import('/reader/static/markdown.js');
  const root = document.createElement('div');
  m.renderMarkdown(md, root);
  const text = (c) => `${c.tagName.toLowerCase()}:${c.textContent}`;
  return {
    blocks: [...root.children].map(e => e.className === 'md-table' ? 'table'
                                                                   : e.tagName.toLowerCase()),
    tables: [...root.querySelectorAll('table')].map(t => ({
      head: [...t.querySelectorAll('thead th')].map(text),
      rows: [...t.querySelectorAll('tbody tr')].map(tr => [...tr.children].map(text)),
      align: [...t.querySelectorAll('th, td')].map(c => c.className),
      scope: [...t.querySelectorAll('th')].map(c => c.scope),
    })),
    paragraphs: [...root.querySelectorAll('p')].map(p => p.textContent),
  };
}"""

TABLES = """Paragraph before the table.
| Name | Size |
|---|:-:|
| integer | 4 bytes |
| a \\| b | `x\\|y` |
Text right after the table.

| one line that starts with a pipe

| bare | row one |
| bare | row two |
"""


def test_markdown_tables_have_header_cells_and_a_lone_pipe_line_stays_text(reader: Reader) -> None:
    """A header row over a separator is <thead>/<th>; bare rows are rows; one `|` line is text."""
    out = reader.open().page.evaluate(TABLES_JS, TABLES)
    assert out["blocks"] == ["p", "table", "p", "p", "table"]
    headed, bare = out["tables"]
    assert headed["head"] == ["th:Name", "th:Size"]
    assert headed["scope"] == ["col", "col"]
    assert headed["rows"] == [["td:integer", "td:4 bytes"], ["td:a | b", "td:x|y"]]
    assert headed["align"] == ["", "align-center"] * 3
    assert bare["head"] == [] and bare["rows"] == [["td:bare", "td:row one"],
                                                   ["td:bare", "td:row two"]]
    assert out["paragraphs"] == ["Paragraph before the table.", "Text right after the table.",
                                 "| one line that starts with a pipe"]
    reader.assert_clean()


# A page as ingestion reads it: its tables become GitHub-style Markdown tables (`a|b` as `a\|b`)
TABLE_PAGE = """<html><head><title>Numeric types</title></head><body>
<h1>Numeric types</h1>
<p>The integer types store whole numbers of various ranges:</p>
<table>
<tr><th>Name</th><th>Storage size</th><th>Range</th></tr>
<tr><td>smallint</td><td>2 bytes</td><td>-32768 to +32767</td></tr>
<tr><td>integer</td><td>4 bytes</td><td>-2147483648 to +2147483647</td></tr>
<tr><td>bit_or</td><td>a|b</td><td>the bitwise OR of all non-null input values</td></tr>
</table>
<p>The statistics views have many columns:</p>
<table>
<tr>""" + "".join(f"<th>pg_stat_activity_column_{n}</th>" for n in range(12)) + """</tr>
<tr>""" + "".join(f"<td>value_of_column_{n}_in_the_view</td>" for n in range(12)) + """</tr>
</table>
</body></html>"""


def _source(citation: int, md: str, quoted: str) -> dict[str, Any]:
    start = md.index(quoted)
    return {"citation": citation, "source": "book/numeric.md", "section": "Numeric types",
            "start": start, "end": start + len(quoted), "score": 0.8}


def test_a_table_in_a_chapter_has_header_cells_and_a_citation_highlights_one_cell(
        reader: Reader) -> None:
    """An ingested HTML table reads as a table; a citation of one cell highlights that cell."""
    from textbound.documents.ingest.html import html_to_markdown

    md, _ = html_to_markdown(TABLE_PAGE)
    assert "a\\|b" in md  # the `|` in a cell, as ingestion escapes it
    r = reader
    r.serve_chapter("book/numeric.md", "Numeric types", md)
    r.serve_answer({
        "answer": "An integer takes 4 bytes. [1] The bit_or aggregate computes a|b. [2]",
        "was_refusal": False, "refusal_reason": None, "suggestions": [],
        "confidence_level": "high",
        "sources": [_source(1, md, "4 bytes"), _source(2, md, "a\\|b")]})
    r.open()
    page = r.page
    first = page.locator("#chapter-body table").first
    assert first.locator("thead th").all_inner_texts() == ["Name", "Storage size", "Range"]
    assert first.locator("tbody tr").count() == 3
    assert first.locator("tbody tr").nth(2).locator("td").all_inner_texts() == [
        "bit_or", "a|b", "the bitwise OR of all non-null input values"]

    box = r.ask("How big is an integer?")
    assert r.follow_first_citation(box) == "4 bytes"
    cell = "document.querySelector('mark#cited-passage').closest('td')"
    assert page.evaluate(f"{cell}.textContent") == "4 bytes"
    assert page.evaluate(f"{cell}.parentElement.firstElementChild.textContent") == "integer"
    r.shot("desktop-table-citation")

    box.locator("a.cite").nth(1).click()
    page.wait_for_function(
        "document.querySelector('mark#cited-passage')?.textContent === 'a'")
    assert page.evaluate("[...document.querySelectorAll('mark.cite-highlight')]"
                         ".map(m => m.textContent).join('')") == "a|b"
    assert page.evaluate(f"{cell}.textContent") == "a|b"

    # the wide table scrolls inside its own box; the chapter column keeps its width
    wide = page.locator("#chapter-body .md-table").nth(1)
    assert wide.evaluate("el => el.scrollWidth > el.clientWidth")
    assert wide.evaluate("el => getComputedStyle(el).overflowX") == "auto"
    assert page.evaluate("document.querySelector('#reading').scrollWidth"
                         " <= document.querySelector('#reading').clientWidth")
    wide.scroll_into_view_if_needed()
    r.shot("desktop-table")
    r.assert_clean()


SELECT_ROWS = """(rows) => new Promise((resolve) => {
  const trs = document.querySelectorAll('#chapter-body table tbody tr');
  const [first, last] = [trs[rows[0]], trs[rows[1]]];
  first.scrollIntoView({block: 'center'});
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const range = document.createRange();
    range.setStartBefore(first.firstElementChild.firstChild);
    range.setEndAfter(last.lastElementChild.lastChild);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    resolve();
  }));
})"""


def test_a_selection_across_table_rows_reads_row_by_row(reader: Reader) -> None:
    """Selected cells are joined with ' | ' within a row and a line break between rows."""
    from textbound.documents.ingest.html import html_to_markdown

    md, _ = html_to_markdown(TABLE_PAGE)
    r = reader
    r.serve_chapter("book/numeric.md", "Numeric types", md)
    r.open()
    r.page.evaluate(SELECT_ROWS, [0, 1])
    r.page.wait_for_selector("#selection-popup:not([hidden])")
    r.page.click("#selection-popup")  # no question typed: the selection is pinned
    assert r.page.inner_text("#selection-preview") == (
        "smallint | 2 bytes | -32768 to +32767\ninteger | 4 bytes | -2147483648 to +2147483647")
    r.assert_clean()


CODE = "$ psql -c '\\dT' <b>types</b> <img src=x onerror=\"window.injected=1\">\n  SELECT 1 | 2;"
CODE_ANSWER = {
    "answer": ("The integer type is the usual choice for whole numbers. [1] "
               f"To list the types from a shell, run:\n{CODE} [1] "
               "To plot the sizes, type:\nplot 'sizes.dat' using 1:2 with boxes\n"
               "which plots the second column against the first. [2] "
               "git log --oneline\ngit status [1]"),
    "was_refusal": False, "refusal_reason": None, "suggestions": [], "confidence_level": "high",
    "sources": [{"citation": n, "source": "corpus/02-ros2-fundamentals.md",
                 "section": "Chapter 2: ROS 2 Fundamentals", "start": None, "end": None}
                for n in (1, 2)],
}


def test_an_answer_quoting_code_shows_it_verbatim_in_a_code_block(reader: Reader) -> None:
    """A sentence with line breaks: lead-in, then <pre><code> with the code as text, then [n]."""
    r = reader
    r.serve_answer(CODE_ANSWER)
    r.open()
    box = r.ask("How do I list the types?")
    assert box.locator("b, img").count() == 0  # the answer's HTML stays text
    assert r.page.evaluate("window.injected") is None
    blocks = box.locator(".answer-code")
    assert blocks.count() == 3
    assert blocks.nth(0).locator("pre > code").text_content() == CODE
    assert blocks.nth(1).locator("pre > code").text_content() == (
        "plot 'sizes.dat' using 1:2 with boxes")
    assert blocks.nth(0).locator("pre code").evaluate(
        "el => getComputedStyle(el).whiteSpace") == "pre"
    # each citation follows its sentence: after the code, or after the prose that goes on
    assert blocks.nth(0).evaluate("el => el.lastElementChild.textContent") == "[1]"
    # a block quoted without a lead-in: its first line is code, not taken for one
    assert blocks.nth(2).locator("pre > code").text_content() == "git log --oneline\ngit status"
    assert blocks.nth(2).evaluate("el => el.lastElementChild.textContent") == "[1]"
    paragraphs = box.locator("p.answer-text")
    assert paragraphs.nth(0).inner_text() == (
        "The integer type is the usual choice for whole numbers. [1] "
        "To list the types from a shell, run:")
    assert paragraphs.nth(1).inner_text() == "To plot the sizes, type:"
    assert paragraphs.nth(2).inner_text() == "which plots the second column against the first. [2]"
    order = box.evaluate("el => [...el.querySelectorAll('p.answer-text, .answer-code')]"
                         ".map(e => e.className)")
    assert order == ["answer-text", "answer-code", "answer-text", "answer-code", "answer-text",
                     "answer-code"]
    r.shot("desktop-answer-code")
    # on a phone the code scrolls inside its block; the page keeps its width
    r.page.set_viewport_size({"width": 390, "height": 844})
    r.page.click("#chat-toggle")
    assert blocks.nth(0).locator("pre").evaluate("el => el.scrollWidth > el.clientWidth")
    assert r.page.evaluate("document.documentElement.scrollWidth") <= 390
    r.shot("narrow-answer-code")
    r.assert_clean()


class _ScrollStore:
    """The slice of VectorStore the reader's Library reads: count, exists and scroll."""

    collection = "fake"

    def __init__(self, metas: list[dict[str, Any]]) -> None:
        self.metas = metas

    def exists(self) -> bool:
        return True

    def count(self) -> int:
        return len(self.metas)

    def scroll(self, fields: Any = ("source",)) -> Iterator[tuple[str, dict[str, Any]]]:
        for i, m in enumerate(self.metas):
            yield str(i), {k: m[k] for k in fields if k in m}


def test_library_flags_edited_files_and_explains_unreadable_ones(tmp_path: Path) -> None:
    """A file changed since ingestion is stale; JSONL and deleted files say why they can't show."""
    import hashlib

    from textbound.serving.reader import Library
    from textbound.serving.reader._library import UnavailableText

    book = tmp_path / "book.md"
    book.write_text("# Book\n\n## Part\n\nOriginal text.\n", encoding="utf-8")
    digest = hashlib.sha256(book.read_bytes()).hexdigest()[:16]
    gone = tmp_path / "gone.md"
    store = _ScrollStore([
        {"source": "docs/book.md", "title": "Book", "path": str(book), "file_hash": digest,
         "heading_path": ["Book", "Part"], "start": 17},
        {"source": "q1", "title": "From JSONL", "kind": "jsonl"},
        {"source": "docs/gone.md", "title": "Gone", "path": str(gone)},
    ])
    lib = Library(store, None)
    assert lib.table_of_contents()[0] == {"source": "docs/book.md", "title": "Book",
                                          "sections": ["Part"], "readable": True,
                                          "contents": False}
    first = lib.chapter("docs/book.md")
    assert first.text.endswith("Original text.\n") and first.stale is False
    book.write_text("# Book\n\n## Part\n\nEdited text.\n", encoding="utf-8")
    assert lib.chapter("docs/book.md").stale is True
    with pytest.raises(UnavailableText, match="JSONL"):
        lib.chapter("q1")
    with pytest.raises(UnavailableText, match="no longer exists"):
        lib.chapter("docs/gone.md")
    with pytest.raises(KeyError):
        lib.chapter("docs/other.md")


def test_library_without_a_store_lists_the_corpus_folder() -> None:
    """With no store, the corpus folder's files are listed under the names ingestion gives."""
    from textbound.serving.reader import Library

    lib = Library(None, REPO / "corpus")
    toc = lib.table_of_contents()
    assert [c["source"] for c in toc] == sorted(
        f"corpus/{p.name}" for p in (REPO / "corpus").glob("*.md"))
    assert toc[1]["title"] == "Chapter 2: ROS 2 Fundamentals"
    assert lib.chapter(toc[1]["source"]).text.startswith("# Chapter 2: ROS 2 Fundamentals")
