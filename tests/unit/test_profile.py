"""Course profiles: loading, precedence, `textbound init`, and every text naming its own course."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from graph.builder import build_graph, build_services
from tests.conftest import book_store, make_settings
from textbound import course
from textbound.documents.profile import (
    ProfileResolver,
    chapters_of,
    check_profile,
    holds_bundled_textbook,
    load_profile_file,
    outline_of,
    profile_path,
)
from textbound.documents.profile_draft import draft_profile
from textbound.errors import ProfileError
from textbound.serving.cli import app

OCEAN = """\
title: Ocean Robotics
scope: Gliders, floats and the robots that work under water.
chapters: [Gliders, Floats]
out_of_scope:
  - topic: deep-sea mining
    patterns: ['\\b(deep[- ]sea|seabed) mining\\b']
"""

BOOK = """# Chapter 1: Underwater Gliders

An underwater glider changes its buoyancy to move forward. It needs no propeller.

## Buoyancy engines

A buoyancy engine pumps oil from an internal reservoir into an external bladder, which makes
the glider lighter than the water around it, so it rises.

## Wings

Wings turn the glider's rising and sinking into forward motion through the water.
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _toc(*sources: str) -> list[dict[str, Any]]:
    return [{"source": s, "title": s.rsplit("/", 1)[-1], "sections": []} for s in sources]


@pytest.fixture
def ask(tmp_path: Path, embeddings: Any, exploding_chat: Any) -> Any:
    """Ask a graph over the four-chunk fake store (collection 'fake', not the bundled book)."""
    settings = make_settings(tmp_path / "data", audit_log=None)
    graph = build_graph(settings=settings, embeddings=embeddings,
                        store=book_store(embeddings), chat_model=exploding_chat)

    def _ask(question: str) -> dict[str, Any]:
        return dict(graph.invoke({"question": question}, context={"generator": "extractive"}))

    _ask.settings = settings  # type: ignore[attr-defined]
    return _ask


# --- loading and validation ----------------------------------------------------------------------

def test_bundled_profile_loads_with_seed_000_topics() -> None:
    """prompts/scope.yaml is the bundled course's profile: title, name, scope, six chapters."""
    p = course.load_profile()
    assert p.title == "Physical AI & Humanoid Robotics" and p.origin == "bundled"
    assert p.name == "the Physical AI & Humanoid Robotics course"
    assert len(p.covers) == 6 and p.scope and len(p.out_of_scope) == 6


def test_profile_file_loads_and_defaults_the_course_name(tmp_path: Path) -> None:
    """A minimal profile loads; its course name defaults to 'the <title> course'."""
    p = load_profile_file(_write(tmp_path / "p.yaml", OCEAN))
    assert p.title == "Ocean Robotics" and p.name == "the Ocean Robotics course"
    assert p.covers == ("Gliders", "Floats")
    assert p.detect_out_of_scope("Is seabed mining legal?") == ("deep-sea mining", "seabed mining")
    assert p.greetings and p.coverage_questions  # prompts/triggers.yaml's


@pytest.mark.parametrize(("text", "problem"), [
    ("title: [Ocean", "not valid YAML at line"),
    ("title: Ocean\nout_of_scope:\n  - topic: x\n    patterns: ['(unclosed']\n",
     "out_of_scope[0].patterns[0] is not a valid regular expression"),
    ("scope: no title here\n", "title is missing"),
    ("title: Ocean\ntitel: typo\n", "unknown key 'titel'"),
    ("title: Ocean\ngreeting: 'Hi {student}'\n", "greeting uses {student}"),
    ("- just\n- a list\n", "a profile is a mapping"),
])
def test_a_bad_profile_is_one_line_naming_the_file(tmp_path: Path, text: str,
                                                   problem: str) -> None:
    """Bad YAML, a bad regex, a missing title or a typo: one line with the file and the fault."""
    path = _write(tmp_path / "bad.yaml", text)
    with pytest.raises(ProfileError) as info:
        load_profile_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and problem in message and "\n" not in message


def test_the_guides_example_profile_is_valid() -> None:
    """docs/course-profile.md's example loads and refuses its own example question."""
    from textbound.settings import PACKAGE_ROOT

    guide = (PACKAGE_ROOT / "docs" / "course-profile.md").read_text()
    example = guide.split("```yaml\n", 1)[1].split("```", 1)[0]
    profile = course.parse_profile(yaml.safe_load(example), origin="guide")
    assert profile.detect_out_of_scope("Is seabed mining legal?") is not None


def test_a_missing_profile_setting_is_a_config_error(tmp_path: Path) -> None:
    """TEXTBOUND_PROFILE naming no file fails at start-up, naming the variable."""
    settings = make_settings(tmp_path, profile=tmp_path / "nope.yaml")
    with pytest.raises(ProfileError, match="TEXTBOUND_PROFILE=.*nope.yaml: no such file"):
        check_profile(settings)


def test_a_bad_profile_fails_at_start_up(tmp_path: Path, embeddings: Any) -> None:
    """A broken profile file stops build_services, not the first question."""
    settings = make_settings(tmp_path, collection="fake")
    _write(profile_path(settings), "title: [Ocean")
    with pytest.raises(ProfileError, match="fake.yaml: not valid YAML"):
        build_services(settings=settings, embeddings=embeddings,
                       store=book_store(embeddings))


# --- which profile applies -----------------------------------------------------------------------

def test_precedence_setting_then_collection_file_then_default(tmp_path: Path) -> None:
    """TEXTBOUND_PROFILE > <data_dir>/profiles/<collection>.yaml > the built-in default."""
    toc = _toc("mine/gliders.md")
    plain = make_settings(tmp_path, collection="mine")
    assert ProfileResolver(plain, "mine", lambda: toc).current().origin == "generic"
    _write(profile_path(plain), OCEAN)
    assert ProfileResolver(plain, "mine", lambda: toc).current().title == "Ocean Robotics"
    explicit = _write(tmp_path / "other.yaml", "title: Marine Biology\n")
    chosen = make_settings(tmp_path, collection="mine", profile=explicit)
    assert ProfileResolver(chosen, "mine", lambda: toc).current().title == "Marine Biology"


def test_bundled_profile_only_for_the_bundled_textbook(tmp_path: Path) -> None:
    """The bundled files get the bundled profile, also with notes added; others are generic."""
    settings = make_settings(tmp_path)
    bundled = _toc("corpus/01-physical-ai-foundations.md", "02-ros2-fundamentals.md")
    mixed = bundled + _toc("mine/gliders.md")
    assert holds_bundled_textbook(bundled) and holds_bundled_textbook(mixed)
    assert ProfileResolver(settings, "x", lambda: bundled).current().origin == "bundled"
    assert ProfileResolver(settings, "x", lambda: mixed).current().origin == "bundled"
    generic = ProfileResolver(settings, "x", lambda: _toc("mine/gliders.md")).current()
    assert generic.origin == "generic" and generic.out_of_scope == ()
    assert ProfileResolver(settings, "x", lambda: []).current().origin == "generic"


def test_chapters_come_from_the_headings_when_the_profile_lists_none(tmp_path: Path) -> None:
    """Several documents: their titles; one document: its top-level sections."""
    settings = make_settings(tmp_path, collection="c")
    _write(profile_path(settings), "title: Ocean Robotics\n")
    book = [{"source": "b.pdf", "title": "Ocean Robotics", "sections": ["Gliders", "Floats"]}]
    assert ProfileResolver(settings, "c", lambda: book).current().covers == ("Gliders", "Floats")
    two = _toc("a/gliders.md", "a/floats.md")
    assert chapters_of(two) == ["floats.md", "gliders.md"]  # no other order: the files'


def test_an_edited_profile_applies_without_restart(tmp_path: Path, caplog: Any) -> None:
    """A change is read on the next use; a broken edit keeps the last good one, logged."""
    settings = make_settings(tmp_path, collection="c")
    path = _write(profile_path(settings), OCEAN)
    resolver = ProfileResolver(settings, "c", lambda: [])
    assert resolver.current().title == "Ocean Robotics"
    _write(path, OCEAN.replace("Ocean Robotics", "Marine Robotics") + "\n")
    assert resolver.current().title == "Marine Robotics"
    _write(path, "title: [broken")
    with caplog.at_level(logging.ERROR, logger="textbound.documents.profile"):
        assert resolver.current().title == "Marine Robotics"
    assert "not valid YAML" in caplog.text


# --- what users read ----------------------------------------------------------------------------

def test_a_collection_without_a_profile_never_mentions_physical_ai(ask: Any) -> None:
    """Greeting, coverage and every refusal name the collection, never the bundled course."""
    answers = {q: ask(q) for q in (
        "hello", "What topics do you cover?", "What is the capital of France?",
        "How do I tune a PID controller for a robot arm?", "\u200f")}
    for question, out in answers.items():
        assert "Physical AI" not in out["answer"], question
    assert "the collection 'fake'" in answers["hello"]["answer"]
    # no out-of-scope patterns: the bundled course's PID topic is not this collection's
    pid = answers["How do I tune a PID controller for a robot arm?"]
    assert pid["refusal_reason"] != "out_of_scope"


def test_a_collection_profile_refuses_with_its_patterns_and_names_its_title(ask: Any) -> None:
    """Its own out-of-scope topic is refused naming the topic and the course; greeting too."""
    _write(profile_path(ask.settings, "fake"), OCEAN)
    out = ask("Is deep-sea mining allowed where gliders work?")
    assert out["refusal_reason"] == "out_of_scope"
    assert out["diagnostics"]["out_of_scope"]["topic"] == "deep-sea mining"
    assert "the Ocean Robotics course" in out["answer"] and "- Gliders" in out["answer"]
    assert "Physical AI" not in out["answer"]
    greeting = ask("hi")["answer"]
    assert "the Ocean Robotics course" in greeting and "robots that work under water" in greeting
    assert ask("How do I tune a PID controller?")["refusal_reason"] != "out_of_scope"


# the bundled textbook's own wording (seed 000's greeting and out-of-scope refusal) is checked over
# the ingested book in tests/integration/test_textbook.py: ingesting it costs the unit tier a minute


@pytest.fixture
def reader(tmp_path: Path, embeddings: Any) -> Iterator[tuple[TestClient, Any]]:
    """The HTTP server over the fake store, with its settings."""
    from textbound.serving.server import create_app

    settings = make_settings(tmp_path / "data", collection="fake")
    services = build_services(settings=settings, embeddings=embeddings,
                              store=book_store(embeddings))
    with TestClient(create_app(services)) as client:
        yield client, settings


def test_reader_page_gets_the_title_from_the_profile(reader: tuple[TestClient, Any]) -> None:
    """GET /api/reader names the profile in force, re-read after `textbound init` writes one."""
    client, settings = reader
    before = client.get("/api/reader").json()
    assert before["course_title"] == "Book" and before["profile"] == "generic"
    _write(profile_path(settings), OCEAN)
    after = client.get("/api/reader").json()
    assert after["course_title"] == "Ocean Robotics" and after["chapters"] == ["Gliders", "Floats"]
    assert after["scope"].startswith("Gliders, floats")
    assert "/api/reader" in client.get("/openapi.json").json()["paths"]


# --- textbound init -----------------------------------------------------------------------------

def test_draft_profile_holds_the_chapters_and_a_commented_example() -> None:
    """The draft lists the headings as chapters, drafts the scope, leaves out_of_scope empty."""
    toc = [{"source": "b/book.md", "title": "Gliders", "sections": [
        "Chapter 1: Buoyancy", "Chapter 2: Wings"]}]
    text = draft_profile("Ocean Robotics", "c", toc)
    data = yaml.safe_load(text)
    assert data["title"] == "Ocean Robotics" and data["out_of_scope"] == []
    assert data["chapters"] == ["Chapter 1: Buoyancy", "Chapter 2: Wings"]
    assert data["scope"].startswith("Ocean Robotics covers Buoyancy and Wings.")
    assert "#   - topic: " in text and "#       - '" in text


def test_init_outline_takes_a_pdfs_chapter_headings() -> None:
    """A PDF's level-1 chapters under the book title are chapters; a Markdown H1 is skipped."""
    pdf = [("1", {"source": "book.pdf", "title": "Ocean Robotics", "page": 3, "start": 0,
                  "heading_path": ["Chapter 2: Floats", "Ballast"]}),
           ("2", {"source": "book.pdf", "title": "Ocean Robotics", "page": 1, "start": 0,
                  "heading_path": ["Chapter 1: Gliders", "Wings"]}),
           ("3", {"source": "book.pdf", "title": "Ocean Robotics", "page": 2, "start": 9,
                  "heading_path": ["Chapter 1: Gliders"]})]
    assert chapters_of(outline_of(pdf)) == ["Chapter 1: Gliders", "Chapter 2: Floats"]
    md = [("1", {"source": "m/g.md", "title": "Gliders", "start": 5,
                 "heading_path": ["Gliders", "Wings"]}),
          ("2", {"source": "m/g.md", "title": "Gliders", "start": 0, "heading_path": ["Gliders"]})]
    assert chapters_of(outline_of(md)) == ["Wings"]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A runner with the test's own data folder."""
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TEXTBOUND_SENTENCE_VECTORS", "false")
    _write(tmp_path / "mine" / "gliders.md", BOOK)
    return CliRunner()


def test_init_drafts_from_the_documents_and_the_cli_uses_it(cli: CliRunner,
                                                            tmp_path: Path) -> None:
    """init PATH ingests, writes the draft, says where; ask and stats then use its title."""
    result = cli.invoke(app, ["init", "--title", "Ocean Robotics", str(tmp_path / "mine")])
    assert result.exit_code == 0, result.output
    target = tmp_path / "data" / "profiles" / "textbook.yaml"
    assert str(target) in "".join(result.stdout.split())  # rich may wrap the path
    assert "out_of_scope" in result.stdout
    profile = load_profile_file(target)
    assert profile.covers == ("Buoyancy engines", "Wings")
    _write(target, target.read_text().replace(
        "out_of_scope: []", "out_of_scope:\n  - topic: deep-sea mining\n"
        "    patterns: ['\\b(deep[- ]sea|seabed) mining\\b']"))
    # --collection: a graph of its own, whose store closes after the answer
    out = cli.invoke(app, ["ask", "Is seabed mining allowed?", "--collection", "textbook",
                           "--json"])
    refusal = json.loads(out.stdout)
    assert refusal["refusal_reason"] == "out_of_scope"
    assert "the Ocean Robotics course" in refusal["answer"]
    stats = json.loads(cli.invoke(app, ["stats", "--json"]).stdout)
    assert stats["course"] == "Ocean Robotics" and stats["profile"] == str(target)


def test_init_refuses_to_overwrite_without_force(cli: CliRunner, tmp_path: Path) -> None:
    """An existing profile is kept (exit 2, saying --force); --force drafts a new one."""
    assert cli.invoke(app, ["ingest", str(tmp_path / "mine")]).exit_code == 0
    assert cli.invoke(app, ["init", "--title", "Ocean Robotics"]).exit_code == 0
    again = cli.invoke(app, ["init", "--title", "Marine Robotics"])
    assert again.exit_code == 2 and "--force" in " ".join(again.stderr.split())
    target = tmp_path / "data" / "profiles" / "textbook.yaml"
    assert load_profile_file(target).title == "Ocean Robotics"
    forced = cli.invoke(app, ["init", "--title", "Marine Robotics", "--force"])
    assert forced.exit_code == 0 and load_profile_file(target).title == "Marine Robotics"


def test_init_on_an_empty_collection_says_to_ingest(cli: CliRunner) -> None:
    """Nothing to draft from: exit 4 and the command that fixes it; no file written."""
    result = cli.invoke(app, ["init", "--title", "Ocean Robotics", "--collection", "empty"])
    assert result.exit_code == 4 and "textbound ingest PATH" in " ".join(result.stderr.split())


def test_init_help_has_an_example(cli: CliRunner) -> None:
    """`textbound init --help` shows how to call it."""
    result = cli.invoke(app, ["init", "--help"])
    assert result.exit_code == 0 and 'textbound init --title "' in result.stdout
