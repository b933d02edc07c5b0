"""report.md is inert: what students typed never renders as HTML or links, and no server path."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from markdown_it import MarkdownIt

from tests.conftest import make_settings
from tests.unit.test_analytics import rec, write
from tests.unit.test_report_feedback import SERVICES, rating
from textbound.quality import analytics as an
from textbound.records.feedback import FeedbackLog

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "<svg onload=alert(3)>",
    '<a href="javascript:alert(4)">click</a>',
    "<iframe src=javascript:alert(5)></iframe>",
    "[click](javascript:alert(6))",
    "![x](javascript:alert(7))",
    "<javascript:alert(8)>",
    "<details open ontoggle=alert(9)>",
]
"""Nine hostile questions and comments, as the issue's client typed them."""


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _rendered(md: str) -> list[tuple[str, dict[str, str | None]]]:
    """The tags report.md renders to with raw HTML allowed (the unsafe way to show it)."""
    parser = _Tags()
    parser.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(md))
    return parser.tags


def _report(tmp_path: Path, settings: object = None) -> tuple[str, str, dict]:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    audit = write(data / "audit.jsonl", [rec(question=p) for p in PAYLOADS])
    log = FeedbackLog(data / "feedback.jsonl")
    for p in PAYLOADS:
        log.append(rating("down", sources=[SERVICES], comment=p, asked_question=p, question=p,
                          answer=p))
    result = an.build_report(audit, tmp_path / "out", settings=settings,  # type: ignore[arg-type]
                             locate=lambda texts: [("Topics > <b>Bold</b>", 0.9)] * len(texts))
    out = result.out_dir
    return ((out / "report.md").read_text(encoding="utf-8"),
            (out / "report.html").read_text(encoding="utf-8"),
            json.loads((out / "summary.json").read_text(encoding="utf-8")))


def test_students_html_and_links_stay_text_in_report_md(tmp_path: Path) -> None:
    """Rendered with raw HTML on, report.md makes no tag, link or image from a student's text."""
    md, _, _ = _report(tmp_path)
    tags = _rendered(md)
    made = {tag for tag, _ in tags}
    assert not made & {"script", "svg", "iframe", "details", "b"}, made
    assert all(tag != "a" for tag, _ in tags), [a for t, a in tags if t == "a"]
    assert [a["src"] for t, a in tags if t == "img"] == [
        "timeline.png", "reasons.png", "gaps.png", "topics.png", "marked_wrong.png"]
    for p in PAYLOADS:  # each is still there for the teacher to read, as typed
        assert p.replace("](", "]\\(").replace("<", "&lt;") in md


def test_the_report_names_files_relative_to_the_data_folder(tmp_path: Path) -> None:
    """No absolute server path in report.md, report.html or summary.json."""
    settings = make_settings(tmp_path / "data")
    md, html, summary = _report(tmp_path, settings)
    for text in (md, html, json.dumps(summary)):
        assert str(tmp_path) not in text
    assert "| audit log | audit.jsonl |" in md
    assert summary["audit_log"] == "audit.jsonl"
    assert summary["marked_wrong"]["log"] == "feedback.jsonl"


def test_without_settings_the_report_names_files_by_name(tmp_path: Path) -> None:
    """An audit log given alone (`--audit FILE`) is named, never shown with its folders."""
    md, _, summary = _report(tmp_path)
    assert str(tmp_path) not in md and summary["audit_log"] == "audit.jsonl"
