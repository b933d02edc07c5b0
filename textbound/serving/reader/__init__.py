"""The textbook reader: a web page to read the ingested documents and ask about them.

`mount(app, services=..., settings=...)` adds to a FastAPI app (the server's `create_app` calls it):

- `GET /` the page, and `GET /reader/static/...` its script and style sheet (no framework, no
  external requests: the page's Content-Security-Policy allows only its own origin);
- `GET /api/reader` the course profile (title, scope, chapters) and the wording the page
  needs, the refusal reasons' headings included (the page keeps no list of its own);
- `GET /api/chapters` the table of contents: each document's source, title and sections, in
  the book's order (`textbound.documents.profile.book_order`), its own contents page left out;
- `GET /api/chapters/{source}` one document's text, exactly as ingestion chunked it, so citation
  offsets (`sources[].start/end`) point at the right characters.

The page asks questions through the server's `/chat/stream` (falling back to `/chat/invoke`),
with its tab's thread id as `config.configurable.thread_id`; it restores a tab's conversation from
`GET /threads/{id}` and sends ratings to `POST /feedback` (routes of the server, not of the reader).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

# at module level: FastAPI resolves the routes' return annotations when it builds /openapi.json
from fastapi import Request
from fastapi.responses import FileResponse, JSONResponse
from pydantic import BaseModel, Field

import prompts
from graph.reasons import RefusalReason
from textbound import course
from textbound.documents.profile import book_order, chapter_topic, chapters_of, is_contents_heading
from textbound.records.keys import caller_of
from textbound.serving.reader._library import ChapterText, Library, UnavailableText
from textbound.settings import Settings
from textbound.text.sanitize import hide_paths

__all__ = ["STATIC_DIR", "mount", "ChapterText", "Library", "ReaderInfo", "question_placeholder",
           "refusal_reasons"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The page's HTML, CSS and JavaScript (package data)."""

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
_PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


class ReaderInfo(BaseModel):
    """What the reader page needs to know: the course, and the words it adapts."""

    course_title: str = Field(description="The course profile's title; it heads the page.")
    course_name: str = Field(description='How sentences name the course ("the X course").')
    scope: str = Field(description="The profile's one-paragraph description of the course.")
    chapters: list[str] = Field(description="The profile's chapter list.")
    profile: str = Field(description='Where the profile came from: a file path, "bundled" or '
                         '"generic" (see docs/course-profile.md).')
    collection: str | None = Field(description="The vector store collection the page reads.")
    question_placeholder: str = Field(description=(
        "The example in the empty question box: the profile's `example_question`, else one "
        "drawn from a chapter heading, else a neutral prompt."))
    suggestions_lead: str = Field(description="The words a refusal puts before its suggested "
                                  "questions; the page drops them when it shows buttons.")
    role: Literal["teacher", "student"] = Field(description=(
        "The caller's role: a student's page shows none of the teacher's controls (adding a "
        "document). `teacher` on a server with no keys, where anyone may do what a teacher "
        "does but add documents."))
    refusal_reasons: dict[str, str] = Field(description=(
        "Every `refusal_reason` the response contract can carry, in the graph's order, with the "
        "short heading the page shows above such a refusal."))


def refusal_reasons() -> dict[str, str]:
    """Return every refusal reason with its heading from prompts/refusals.yaml."""
    return {reason.value: prompts.refusal_label(reason.value) for reason in RefusalReason}


NEUTRAL_PLACEHOLDER = "Ask a question about the course"

# chapter headings that make a poor example: the book's front matter and its apparatus
_NOT_A_TOPIC = re.compile(
    r"^(?:preface|foreword|introduction|acknowledge?ments?|about\b|appendix|glossary|index"
    r"|bibliography|references|summary|exercises)\b", re.I)


def question_placeholder(profile: course.Profile,
                         toc: Sequence[dict[str, Any]] = ()) -> str:
    """Return the question box's example, taken from the course and never from another one.

    The profile's `example_question` when it declares one; else "Ask about <topic>" for the
    first chapter heading that names a topic (the profile's chapter list, else the documents'
    headings); else a neutral prompt.
    """
    if profile.example_question:
        return f"e.g. {profile.example_question}"
    for heading in list(profile.covers) or chapters_of(toc):
        topic = chapter_topic(heading)
        if topic and not is_contents_heading(topic) and not _NOT_A_TOPIC.match(topic):
            return f"Ask about {topic}"
    return NEUTRAL_PLACEHOLDER


def _suggestions_lead(template: str) -> str:
    # the fixed words before "{suggestions}", which the page drops when it shows buttons instead
    return template.split("{suggestions}", 1)[0].strip()


def mount(app: Any, *, services: Any = None, settings: Settings | None = None,
          store: Any = None) -> None:
    """Add the reader page and its JSON endpoints to a FastAPI app.

    The documents come from `store`, else the services' store; with neither, from the files
    under `settings.corpus_dir`. The course profile is the services' own, so the page and the
    answers always name the same course.
    """
    from fastapi import HTTPException
    from fastapi.staticfiles import StaticFiles

    if store is None and services is not None:
        store = services.store
    corpus_dir = getattr(settings, "corpus_dir", None)
    library = Library(store, Path(corpus_dir) if corpus_dir else None)
    if services is not None:
        profiles = services.profiles
    else:
        from textbound.documents.profile import ProfileResolver
        from textbound.settings import get_settings

        settings = settings or get_settings()
        collection = getattr(store, "collection", None) or getattr(settings, "collection", "")
        profiles = ProfileResolver(settings, str(collection), library.table_of_contents)

    def profile() -> course.Profile:
        # read per request: a profile written or edited while serving shows on the next load
        return profiles.current()

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def reader_page() -> FileResponse:
        """Serve the reader page."""
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html",
                            headers=_PAGE_HEADERS)

    app.mount("/reader/static", StaticFiles(directory=STATIC_DIR), name="reader-static")

    @app.get("/api/reader", tags=["reader"], summary="What the reader page needs to know")
    def reader_info(request: Request) -> ReaderInfo:
        """Return the course profile's title, scope and chapters, and the wording the page adapts.

        `course_title` heads the page; `scope` is the profile's one-paragraph description;
        `chapters` its chapter list; `profile` where it came from (a file path, "bundled" or
        "generic"), see docs/course-profile.md; `refusal_reasons` every refusal reason with the
        heading the page shows for it.
        """
        course = profile()
        collection = getattr(store, "collection", None)
        caller = caller_of(request)
        return ReaderInfo(
            course_title=course.title,
            course_name=course.name,
            scope=course.scope,
            chapters=list(course.covers),
            profile=hide_paths(course.origin, settings),
            collection=str(collection) if collection is not None else None,
            question_placeholder=question_placeholder(course, library.table_of_contents()),
            suggestions_lead=_suggestions_lead(prompts.suggestions_template()),
            refusal_reasons=refusal_reasons(),
            role=caller.role if caller is not None else "teacher",
        )

    @app.get("/api/chapters", tags=["reader"], summary="Table of contents")
    def chapters() -> dict[str, Any]:
        """List the documents with their titles and top-level sections, in the book's order.

        The order is the profile's chapter list, else the documents' own (front matter first,
        chapter numbers, then file names); the book's own contents page is not listed.
        """
        return {"chapters": book_order(library.table_of_contents(), profile().covers)}

    @app.get("/api/chapters/{source:path}", tags=["reader"], summary="One document's text",
             responses={409: {"description": "A known document whose text cannot be shown; "
                                             "`detail` says why."}})
    def chapter(source: str) -> JSONResponse:
        """Return a document's text (Markdown for Markdown files) with its title."""
        try:
            text = library.chapter(source)
        except KeyError as exc:
            raise HTTPException(404, f"no document {source!r} in this collection") from exc
        except UnavailableText as exc:
            raise HTTPException(409, hide_paths(str(exc), settings)) from exc
        return JSONResponse(text.as_json(), headers={"Cache-Control": "no-cache"})
