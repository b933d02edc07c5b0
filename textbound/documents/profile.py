"""Course profiles: which one a collection uses, its chapters, and drafting one for a teacher.

A profile (`course.Profile`) holds everything the assistant says about the course: its title,
how sentences name it, a scope paragraph, the chapter list, the out-of-scope topics and the
greeting. For the collection in effect, the first of these wins:

1. `TEXTBOUND_PROFILE`, a YAML file named by the settings (a missing file is a ConfigError);
2. `<data_dir>/profiles/<collection>.yaml`, which `textbound init` drafts;
3. the built-in default: the bundled course's profile (prompts/scope.yaml) when the collection
   holds any of the bundled textbook's files, otherwise a generic profile that names the
   collection, claims no course and has no out-of-scope patterns. Adding or replacing a document
   never turns the bundled course into a generic one (which would drop its title and its
   out-of-scope topics): only deleting every bundled file does.

A profile without a chapter list gets one from the collection's headings: the document titles,
or the top-level sections when the collection is one document. Profiles are read again when
their file or the collection's documents change, so an edit needs no restart.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from textbound import course
from textbound.documents.ingest import SUPPORTED_SUFFIXES
from textbound.errors import ProfileError, TextboundError
from textbound.settings import PACKAGE_ROOT, Settings

__all__ = [
    "BUNDLED_CORPUS",
    "FixedProfile",
    "ProfileResolver",
    "book_order",
    "chapter_topic",
    "chapters_of",
    "check_profile",
    "default_profile",
    "generic_profile",
    "holds_bundled_textbook",
    "is_contents_heading",
    "load_profile_file",
    "outline_of",
    "profile_file",
    "profile_path",
]

log = logging.getLogger(__name__)

BUNDLED_CORPUS = PACKAGE_ROOT / "corpus"
"""The bundled textbook, the one collection the bundled profile describes."""

MAX_CHAPTERS = 40
"""Most chapters a derived list names (a larger collection lists its first ones)."""

TableOfContents = Callable[[], Sequence[dict[str, Any]]]
"""Returns the collection's documents: dicts with source, title and sections."""


def profile_path(settings: Settings, collection: str | None = None) -> Path:
    """Return where `textbound init` writes the collection's profile."""
    name = collection or settings.collection
    return Path(settings.data_dir) / "profiles" / f"{name}.yaml"


def profile_file(settings: Settings, collection: str | None = None) -> Path | None:
    """Return the YAML file that defines the collection's profile, by precedence, or None.

    Raises ProfileError when TEXTBOUND_PROFILE names a file that does not exist.
    """
    explicit = getattr(settings, "profile", None)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ProfileError(f"TEXTBOUND_PROFILE={explicit}: no such file (a course profile "
                               "YAML; `textbound init --title ...` drafts one)")
        return path
    data_dir = getattr(settings, "data_dir", None)
    if data_dir is None:
        return None
    path = profile_path(settings, collection)
    return path if path.is_file() else None


def load_profile_file(path: Path) -> course.Profile:
    """Load a profile YAML, or raise ProfileError in one line naming the file."""
    try:
        return course.load_profile(path)
    except course.ProfileFormatError as exc:
        raise ProfileError(str(exc)) from None


_CONTENTS = re.compile(r"^\s*(?:table\s+of\s+)?contents\s*[:.]?\s*$", re.I)
_FRONT_MATTER = re.compile(
    r"^\s*(?:preface|foreword|prologue|introduction|acknowledge?ments?|dedication|copyright"
    r"|about\s+(?:this|the)\s+(?:book|course|text(?:book)?)|how\s+to\s+use\s+this\s+book)\b",
    re.I)
_BACK_MATTER = re.compile(r"^\s*(?:appendix|appendices|glossary|index|bibliography|references"
                          r"|further\s+reading|afterword|epilogue)\b", re.I)
_CHAPTER_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|part|unit|lesson|module|section)\s+)?(\d+)(?:[\s.:\-\u2013\u2014]|$)",
    re.I)


def is_contents_heading(text: str) -> bool:
    """Whether a heading or title names a book's own table of contents ("Contents")."""
    return bool(_CONTENTS.match(text))


def _title(doc: dict[str, Any]) -> str:
    return str(doc.get("title") or doc.get("source") or "")


def _file_order(source: str) -> tuple[Any, ...]:
    # "ch2.md" before "ch10.md": digits compare as numbers
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower())
                 for part in re.split(r"(\d+)", source) if part)


def book_order(toc: Sequence[dict[str, Any]],
               chapters: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Return the documents in the book's order, leaving out its own table-of-contents pages.

    Front matter (preface, foreword, an unnumbered introduction) comes first and back matter
    (appendices, glossary, index) last. Between them, documents follow `chapters` (the profile's
    list, matched by title without its numbering) when it names every one of them, else their
    chapter numbers when every one has a number, else their file names. A document titled
    "Contents", or flagged `contents` (an HTML page that is mostly links), is not a chapter.
    """
    wanted = {chapter_topic(c).casefold(): n for n, c in enumerate(chapters)}
    docs = [d for d in toc if not d.get("contents") and not is_contents_heading(_title(d))]
    numbers = {id(d): _CHAPTER_NUMBER.match(_title(d)) for d in docs}
    parts = {id(d): 0 if _FRONT_MATTER.match(_title(d)) and not numbers[id(d)]
             else 2 if _BACK_MATTER.match(_title(d)) else 1 for d in docs}
    # chapter numbers order the body only when every chapter of it has one
    numbered = all(numbers[id(d)] for d in docs if parts[id(d)] == 1)

    # the profile's list orders the body only when it names every chapter of it: a list that
    # names some ("Simulation & Digital Twin" for "Simulation and Digital Twins") would move the
    # ones it misses behind the rest
    body = [chapter_topic(_title(d)).casefold() for d in docs if parts[id(d)] == 1]
    if not all(t in wanted for t in body):
        wanted = {}

    def key(doc: dict[str, Any]) -> tuple[Any, ...]:
        number = numbers[id(doc)]
        listed = wanted.get(chapter_topic(_title(doc)).casefold(), len(wanted))
        own = int(number.group(1)) if numbered and number else 0
        return parts[id(doc)], listed, own, _file_order(str(doc.get("source") or ""))

    return sorted(docs, key=key)


def chapters_of(toc: Sequence[dict[str, Any]]) -> list[str]:
    """Return the chapter list the headings give: document titles, or one book's sections.

    Documents come in the book's order (`book_order`); a table of contents is not a chapter.
    """
    docs = book_order(toc)
    if len(docs) == 1:
        chapters = [str(s) for s in docs[0].get("sections") or []
                    if not is_contents_heading(str(s))]
        if not chapters:
            chapters = [_title(docs[0])]
    else:
        chapters = [_title(d) for d in docs]
    return [c for c in chapters if c.strip()][:MAX_CHAPTERS]


def outline_of(chunks: Iterable[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Return a table of contents whose sections are each document's top-level headings.

    `chunks` are (id, metadata) pairs as `Store.scroll` yields them. A heading equal to the
    document's title is skipped, so a Markdown file's H1 gives way to its H2s while a PDF's
    chapter headings (level 1 under the book's title) are kept. `textbound init` drafts the
    chapter list from this.
    """
    docs: dict[str, dict[str, Any]] = {}
    for _, meta in chunks:
        source = str(meta.get("source", ""))
        doc = docs.setdefault(source, {"source": source, "title": meta.get("title") or source,
                                       "sections": {}})
        path = [str(h) for h in meta.get("heading_path") or []]
        if path and path[0] == doc["title"]:
            path = path[1:]
        if path:
            at = (meta.get("page") or 0, meta.get("start") or 0)
            doc["sections"][path[0]] = min(doc["sections"].get(path[0], at), at)
    return [{"source": d["source"], "title": d["title"],
             "sections": [s for s, _ in sorted(d["sections"].items(), key=lambda kv: kv[1])]}
            for d in sorted(docs.values(), key=lambda d: d["source"])]


def _bundled_names() -> frozenset[str]:
    return frozenset(p.name for p in BUNDLED_CORPUS.glob("*")
                     if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES)


def holds_bundled_textbook(toc: Sequence[dict[str, Any]]) -> bool:
    """Whether any document is one of the bundled textbook's files.

    Any, not all: a teacher who adds notes to the bundled course (or uploads a chapter again)
    keeps its profile, title and out-of-scope topics included.
    """
    names = _bundled_names()
    return any(str(d.get("source", "")).rsplit("/", 1)[-1] in names for d in toc)


def generic_profile(collection: str, toc: Sequence[dict[str, Any]]) -> course.Profile:
    """Return the profile of a collection nobody described: it names the collection only.

    Its title is the one document's title, else the collection's name; it has no scope
    paragraph and no out-of-scope patterns.
    """
    title = str(toc[0].get("title") or collection) if len(toc) == 1 else collection
    base = course.parse_profile({"title": title}, origin="generic")
    return replace(base, course_name=f"the collection {collection!r}",
                   covers=tuple(chapters_of(toc)))


def default_profile(collection: str, toc: Sequence[dict[str, Any]]) -> course.Profile:
    """Return the built-in profile: the bundled course's for the bundled textbook, else generic."""
    if holds_bundled_textbook(toc):
        return course.load_profile()
    return generic_profile(collection, toc)


def check_profile(settings: Settings, collection: str | None = None) -> course.Profile | None:
    """Load the collection's profile file, if any, so a bad one fails at start-up."""
    path = profile_file(settings, collection)
    return load_profile_file(path) if path is not None else None


@dataclass(frozen=True)
class FixedProfile:
    """The source of a profile given once (`build_graph(profile=...)`): it never changes."""

    profile: course.Profile

    def current(self) -> course.Profile:
        """Return the profile given."""
        return self.profile


class ProfileResolver:
    """The profile in force for one collection, re-read when its file or documents change.

    A file that becomes invalid while serving keeps the last good profile in force and logs
    the error once; at start-up (`check_profile`) the same file raises.
    """

    def __init__(self, settings: Settings, collection: str, toc: TableOfContents | None) -> None:
        self.settings = settings
        self.collection = collection
        self.toc = toc
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._profile: course.Profile | None = None
        self._last_toc: list[dict[str, Any]] = []
        self._reported: str | None = None

    def _documents(self) -> list[dict[str, Any]]:
        if self.toc is None:
            return []
        try:
            self._last_toc = list(self.toc())
        except TextboundError:
            pass  # the store is down: keep describing the documents it last held
        return self._last_toc

    def current(self) -> course.Profile:
        """Return the collection's profile as it stands now."""
        path = profile_file(self.settings, self.collection)
        stamp: tuple[str, int | None, int | None] | None = None
        if path is not None:
            try:
                stat = path.stat()
                stamp = (str(path), stat.st_mtime_ns, stat.st_size)
            except OSError:
                stamp = (str(path), None, None)
        with self._lock:
            toc = self._documents()
            key = (stamp, tuple((d.get("source"), d.get("title"), tuple(d.get("sections") or ()))
                                for d in toc))
            if key != self._key or self._profile is None:
                self._profile = self._build(path, toc)
                self._key = key
            return self._profile

    def _build(self, path: Path | None, toc: list[dict[str, Any]]) -> course.Profile:
        if path is None:
            return default_profile(self.collection, toc)
        try:
            profile = load_profile_file(path)
        except ProfileError as exc:
            if self._profile is None:
                raise
            if str(exc) != self._reported:
                log.error("%s; the previous profile stays in force until it is fixed", exc)
                self._reported = str(exc)
            return self._profile
        self._reported = None
        if not profile.covers:
            profile = replace(profile, covers=tuple(chapters_of(toc)))
        return profile


# --- drafting a profile for a teacher ------------------------------------------------------------

_NUMBERING = re.compile(
    r"^\s*(?:(?:chapter|part|unit|lesson|module|section)\s+[\w.]+\s*[:.\-\u2013\u2014]?\s*"
    r"|\d+(?:\.\d+)*\.?\s+)", re.I)


def chapter_topic(chapter: str) -> str:
    """Return a chapter heading without its numbering ("Chapter 2: Floats" -> "Floats")."""
    return _NUMBERING.sub("", chapter).strip() or chapter.strip()
