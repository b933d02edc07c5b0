"""Drafting a course profile for a teacher (`textbound init`).

YAML with the book's title, a scope made from its chapters, and a commented example of every
other field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from textbound import course
from textbound.documents.profile import chapter_topic, chapters_of

__all__ = ["draft_profile", "draft_scope"]


def draft_scope(title: str, chapters: Sequence[str], shown: int = 8) -> str:
    """Draft the scope paragraph from the chapter titles, for the teacher to rewrite."""
    topics = [chapter_topic(c) for c in chapters]
    if not topics:
        return f"{title}: answers come only from the documents of this course."
    named = topics[:shown]
    more = len(topics) - len(named)
    if more:
        listed = ", ".join(named) + f" and {more} more chapter{'s' if more > 1 else ''}"
    elif len(named) > 1:
        listed = ", ".join(named[:-1]) + " and " + named[-1]
    else:
        listed = named[0]
    return (f"{title} covers {listed}. Answers come only from these documents, with the "
            "passages they rely on.")


def _scalar(value: str) -> str:
    dumped: str = yaml.safe_dump(value, allow_unicode=True, width=1_000)
    return dumped.strip().removesuffix("\n...")


def draft_profile(title: str, collection: str, toc: Sequence[dict[str, Any]]) -> str:
    """Return a profile YAML drafted from the collection's headings, commented for editing."""
    chapters = chapters_of(toc)
    scope = draft_scope(title, chapters)
    chapter_lines = "\n".join(f"  - {_scalar(c)}" for c in chapters) if chapters else "  []"
    wrapped = "\n".join(
        "  " + line for line in _wrap(scope, 96)) if scope else "  ''"
    text = f"""\
# Course profile for collection {collection!r}, drafted by `textbound init` from its headings
# ({len(toc)} document{'s' if len(toc) != 1 else ''}). Edit it freely: textbound reads it again on
# the next question, no restart needed. Guide: docs/course-profile.md.

# The course's name: the reader page's header, the greeting, the chat model's prompt.
title: {_scalar(title)}

# How refusals and the greeting name the course mid-sentence.
course_name: {_scalar(f"the {title} course")}

# One paragraph on what the course covers (the reader page and the greeting show it).
scope: >-
{wrapped}

# The chapters the greeting and out-of-scope refusals list, drafted from the headings. Delete the
# list (and this key) to derive it from the ingested documents every time instead.
chapters:
{chapter_lines}

# Topics the course deliberately leaves out. A question matching one of a topic's patterns (Python
# regular expressions, case-insensitive) is refused as out of scope, naming the topic. Example:
#   - topic: deep-sea mining
#     patterns:
#       - '\\b(deep[- ]sea|seabed) mining\\b'
out_of_scope: []

# The greeting reply. Unset, a default names the course and lists the chapters; it may use
# {{course_title}}, {{course_name}}, {{scope}} and {{scope_summary}} (the chapter list).
# greeting: |-
#   Welcome to {{course_title}}! Ask me anything the course documents cover.
#
#   Chapters:
#   {{scope_summary}}
"""
    course.parse_profile(yaml.safe_load(text), origin="draft")  # never write a broken draft
    return text


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines
