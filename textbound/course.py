"""The course profile: what a course is called, covers and leaves out, and its reply triggers.

`Profile` is the shape; `parse_profile` and `load_profile` turn YAML into one, saying where a
file is wrong. The words (the bundled course's profile, the default triggers, the greeting) are
in prompts/; which profile is in force for a collection is textbound/documents/profile.py's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

import prompts

__all__ = ["GREETING_VALUES", "PROFILE_KEYS", "Profile", "ProfileFormatError", "Scope",
           "load_profile", "load_scope", "parse_profile"]

PROFILE_KEYS = ("title", "course_name", "scope", "chapters", "out_of_scope", "greeting",
                "greetings", "coverage_questions", "example_question")
"""The keys a course profile may hold; anything else is reported as a mistake."""

GREETING_VALUES = ("course_title", "course_name", "scope", "scope_summary")
"""The placeholders a profile's own greeting may use."""


@dataclass(frozen=True)
class Profile:
    """A course profile: what the course is called, covers and leaves out, and reply triggers.

    The triggers are the patterns that make a question get a fixed reply. The bundled course's
    profile is prompts/scope.yaml; a collection's own is a YAML file that `textbound init`
    drafts (textbound.documents.profile resolves which one is in force).
    """

    title: str
    covers: tuple[str, ...]
    """The chapter list (empty: derived from the collection's headings when resolved)."""
    out_of_scope: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]
    greetings: tuple[re.Pattern[str], ...]
    coverage_questions: tuple[re.Pattern[str], ...]
    course_name: str = ""
    """How sentences name the course ("the X course"); empty means "the <title> course"."""
    scope: str = ""
    """One paragraph on what the course covers."""
    greeting: str | None = None
    """The greeting reply's template; None keeps prompts/replies.yaml's."""
    example_question: str = ""
    """A question the reader page offers as an example; empty: one drawn from the chapters."""
    origin: str = "bundled"
    """Where it came from: a file path, "bundled" or "generic" (for messages and `stats`)."""

    @property
    def course_title(self) -> str:
        """Return the title (the name the templates and the system prompt use)."""
        return self.title

    @property
    def name(self) -> str:
        """Return how sentences name the course, e.g. "the Marine Biology course"."""
        return self.course_name or f"the {self.title} course"

    def summary(self) -> str:
        """Return the chapter list as Markdown bullets."""
        return "\n".join(f"- {c}" for c in self.covers) or "- (no documents yet)"

    def values(self) -> dict[str, str]:
        """Return what the templates can name: title, course name, scope and chapter list."""
        return {"course_title": self.title, "course_name": self.name, "scope": self.scope,
                "scope_summary": self.summary()}

    def greeting_text(self) -> str:
        """Return the greeting reply, filled in; an empty scope leaves no blank paragraph."""
        template = self.greeting or prompts.reply_template("greeting")
        text = template.format(**self.values())
        return re.sub(r"\n{3,}", "\n\n", text).strip()

    def detect_out_of_scope(self, question: str) -> tuple[str, str] | None:
        """Return (topic, matched text) of the first out-of-scope pattern in question."""
        for topic, patterns in self.out_of_scope:
            for p in patterns:
                m = p.search(question)
                if m:
                    return topic, m.group(0)
        return None


Scope = Profile
"""The profile's former name, kept for existing imports."""


class ProfileFormatError(ValueError):
    """A profile's content is not what a profile holds; the message says where and why."""


def _strings(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProfileFormatError(f"{where} must be a list of strings")
    return value


def _patterns(value: Any, where: str) -> tuple[re.Pattern[str], ...]:
    out = []
    for n, raw in enumerate(_strings(value, where)):
        try:
            out.append(re.compile(raw, re.I))
        except re.error as exc:
            raise ProfileFormatError(f"{where}[{n}] is not a valid regular expression "
                                     f"({exc}): {raw!r}") from exc
    return tuple(out)


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ProfileFormatError(f"{key} must be text, not {type(value).__name__}")
    return " ".join(value.split()) if key != "greeting" and value else value


def parse_profile(data: Any, *, origin: str) -> Profile:
    """Build a Profile from parsed YAML, or raise ProfileFormatError saying what is wrong.

    The greeting and coverage-question patterns default to prompts/triggers.yaml's.
    """
    if not isinstance(data, dict):
        raise ProfileFormatError("a profile is a mapping of keys such as title: and scope:")
    unknown = sorted(set(map(str, data)) - set(PROFILE_KEYS))
    if unknown:
        raise ProfileFormatError(f"unknown key {unknown[0]!r} (a profile holds "
                                 f"{', '.join(PROFILE_KEYS)})")
    title = _text(data, "title")
    if not title:
        raise ProfileFormatError("title is missing (the course's name, e.g. title: Marine Biology)")
    greeting = _text(data, "greeting")
    if greeting is not None:
        try:
            names = prompts.placeholders(greeting)
        except ValueError as exc:
            raise ProfileFormatError(f"greeting is not a valid template ({exc})") from exc
        if not names <= set(GREETING_VALUES):
            raise ProfileFormatError(
                f"greeting uses {{{sorted(names - set(GREETING_VALUES))[0]}}}; it may use "
                + ", ".join(f"{{{v}}}" for v in GREETING_VALUES))
    topics = data.get("out_of_scope") or []
    if not isinstance(topics, list):
        raise ProfileFormatError("out_of_scope must be a list of {topic, patterns} entries")
    out_of_scope = []
    for n, entry in enumerate(topics):
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str) or not entry[
                "topic"].strip():
            raise ProfileFormatError(f"out_of_scope[{n}] needs a topic: (text) and patterns:")
        out_of_scope.append((entry["topic"].strip(),
                             _patterns(entry.get("patterns"), f"out_of_scope[{n}].patterns")))
    triggers = prompts.reply_triggers()
    return Profile(
        title=title,
        course_name=_text(data, "course_name") or "",
        scope=_text(data, "scope") or "",
        covers=tuple(c.strip() for c in _strings(data.get("chapters"), "chapters") if c.strip()),
        out_of_scope=tuple(out_of_scope),
        greeting=greeting,
        example_question=_text(data, "example_question") or "",
        greetings=_patterns(data.get("greetings", triggers["greetings"]), "greetings"),
        coverage_questions=_patterns(data.get("coverage_questions",
                                              triggers["coverage_questions"]),
                                     "coverage_questions"),
        origin=origin,
    )


def load_profile(path: Path | None = None) -> Profile:
    """Load a profile file (default: the bundled course's, prompts/scope.yaml).

    Raises ProfileFormatError, one line naming the file, for a file that is not valid YAML or
    not a valid profile.
    """
    if path is None:
        return _bundled()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ProfileFormatError(f"{path}: not valid YAML{where}: {problem}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileFormatError(f"{path}: cannot be read: {exc}") from None
    try:
        return parse_profile(data, origin=str(path))
    except ProfileFormatError as exc:
        raise ProfileFormatError(f"{path}: {exc}") from None


@cache
def _bundled() -> Profile:
    try:
        return parse_profile(prompts.bundled_profile(), origin="bundled")
    except ProfileFormatError as exc:
        raise ProfileFormatError(f"prompts/scope.yaml: {exc}") from None


def load_scope(path: Path | None = None) -> Profile:
    """Load a profile: the former name of `load_profile`, kept for existing callers."""
    return load_profile(path)
