"""The words textbound says: refusal messages, fixed replies, scope topics and the system prompt.

They live in YAML/text files beside this module so they can be reviewed and translated without
touching code. Each template's {placeholders} are checked against what its node supplies
(tests/unit/test_prompts.py).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "PROHIBITED_PHRASES",
    "Scope",
    "load_scope",
    "no_chat_model_message",
    "not_ingested_template",
    "placeholders",
    "refusal_template",
    "reply_template",
    "suggestions_template",
    "standard_refusal",
    "system_prompt_template",
]

_HERE = Path(__file__).resolve().parent

PROHIBITED_PHRASES = (
    "in general",
    "typically",
    "i believe",
    "based on my understanding",
    "you might also consider",
    "as a best practice",
    "i think",
)
"""Seed 001's forbidden patterns (and its system prompt's "I think"), matched ignoring case."""


@cache
def _yaml(name: str) -> dict[str, Any]:
    with (_HERE / name).open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"prompts/{name} must hold a mapping")
    return data


def placeholders(template: str) -> set[str]:
    """Return the {placeholder} names a template uses."""
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def refusal_template(reason: str) -> str:
    """Return the refusal message template for a reason."""
    messages = _yaml("refusals.yaml")["messages"]
    if reason not in messages:
        raise ValueError(f"no refusal message for reason {reason!r}")
    return str(messages[reason])


def standard_refusal() -> str:
    """Return seed 002's one-size refusal message."""
    return str(_yaml("refusals.yaml")["standard"])


def not_ingested_template() -> str:
    """Return store_unavailable's message for a collection that has no documents yet."""
    return str(_yaml("refusals.yaml")["not_ingested"])


def no_chat_model_message() -> str:
    """Return generation_error's message for a run that asks for a chat model none is set."""
    return str(_yaml("refusals.yaml")["no_chat_model"])


def suggestions_template() -> str:
    """Return the 'you could ask about' line template."""
    return str(_yaml("refusals.yaml")["suggestions_lead"])


def reply_template(name: str) -> str:
    """Return a fixed reply template: greeting, coverage or coverage_empty."""
    return str(_yaml("replies.yaml")[name])


@lru_cache(maxsize=1)
def system_prompt_template() -> str:
    """Return seed 001's system prompt template."""
    return (_HERE / "system.txt").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Scope:
    """What the course covers, what it excludes, and the fixed-reply triggers."""

    course_title: str
    covers: tuple[str, ...]
    out_of_scope: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]
    greetings: tuple[re.Pattern[str], ...]
    coverage_questions: tuple[re.Pattern[str], ...]

    def summary(self) -> str:
        """Return the covered topics as a Markdown list."""
        return "\n".join(f"- {c}" for c in self.covers)

    def detect_out_of_scope(self, question: str) -> tuple[str, str] | None:
        """Return (topic, matched text) of the first out-of-scope pattern in question."""
        for topic, patterns in self.out_of_scope:
            for p in patterns:
                m = p.search(question)
                if m:
                    return topic, m.group(0)
        return None


def load_scope(path: Path | None = None) -> Scope:
    """Load a scope file (default: prompts/scope.yaml); raise ValueError on a bad pattern."""
    data = _yaml("scope.yaml") if path is None else yaml.safe_load(path.read_text("utf-8"))

    def compile_all(items: list[str], where: str) -> tuple[re.Pattern[str], ...]:
        out = []
        for raw in items or []:
            try:
                out.append(re.compile(raw, re.I))
            except re.error as exc:
                raise ValueError(f"bad pattern in {where}: {raw!r}: {exc}") from exc
        return tuple(out)

    return Scope(
        course_title=str(data.get("course_title", "course")),
        covers=tuple(str(c) for c in data.get("covers", [])),
        out_of_scope=tuple(
            (str(t["topic"]), compile_all(t.get("patterns", []), str(t["topic"])))
            for t in data.get("out_of_scope", [])
        ),
        greetings=compile_all(data.get("greetings", []), "greetings"),
        coverage_questions=compile_all(data.get("coverage_questions", []), "coverage_questions"),
    )
