"""The words textbound says: refusals, fixed replies, the bundled course profile, the system prompt.

They live in YAML/text files beside this module so they can be reviewed and translated without
touching code; this module only reads them. What a course profile is and how one is parsed live
in textbound/course.py. Each template's {placeholders} are checked against what its node supplies
(tests/unit/test_prompts.py).
"""

from __future__ import annotations

import string
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "PROHIBITED_PHRASES",
    "answer_request_template",
    "bundled_profile",
    "contextualize_prompt_template",
    "peer_prompt_template",
    "placeholders",
    "refusal_variant",
    "reply_triggers",
    "refusal_label",
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


def refusal_label(reason: str) -> str:
    """Return the short heading the reader page shows above a refusal with this reason."""
    labels = _yaml("refusals.yaml")["labels"]
    if reason not in labels:
        raise ValueError(f"no refusal label for reason {reason!r}")
    return str(labels[reason])


def standard_refusal() -> str:
    """Return seed 002's one-size refusal message."""
    return str(_yaml("refusals.yaml")["standard"])


def refusal_variant(key: str) -> str:
    """Return a message that replaces a reason's own (refusals.yaml's top-level `key`)."""
    return str(_yaml("refusals.yaml")[key])


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


@cache
def answer_request_template() -> str:
    """Return the chat generator's user message: the question and what a good answer gives."""
    return (_HERE / "answer_request.txt").read_text(encoding="utf-8").strip()


@cache
def contextualize_prompt_template() -> str:
    """Return the prompt that asks a chat model to make a follow-up question standalone."""
    return (_HERE / "contextualize.txt").read_text(encoding="utf-8")


@cache
def peer_prompt_template() -> str:
    """Return the plain RAG prompt of the evaluation's peer (a chain with no gates)."""
    return (_HERE / "peer_rag.txt").read_text(encoding="utf-8")


def bundled_profile() -> dict[str, Any]:
    """Return the bundled course's profile as written (prompts/scope.yaml)."""
    return _yaml("scope.yaml")


def reply_triggers() -> dict[str, Any]:
    """Return the default greeting and coverage-question patterns (prompts/triggers.yaml)."""
    return _yaml("triggers.yaml")
