"""Which unit leads an extractive answer: a declared table of signals, with weights fitted on data.

Every candidate unit (textbound/answer/candidates.py) is described by the signals of `SIGNALS`,
each with an example of what it recognises; the candidate whose weighted sum is highest leads
the answer. The weights are not set by hand: `python -m benchmarks.lead_fit` replays the dev
pool (five books, three formats) and fits them by conditional logit on which candidate, put
first, gives an answer holding a gold phrase (a hash-split holdout is kept out of the fit), and
writes `calibration/lead.json`, read here. A file whose signals are not exactly this table's is
refused with an error that says so, never half-read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from textbound.errors import ConfigError
from textbound.settings import PACKAGE_ROOT

__all__ = ["LEAD_FILE", "SIGNALS", "Signal", "lead_weights", "load_weights", "lead_score"]

LEAD_FILE = PACKAGE_ROOT / "calibration" / "lead.json"


@dataclass(frozen=True)
class Signal:
    """One thing a candidate unit is measured by, and an example of a unit that shows it."""

    name: str
    means: str
    example: str


SIGNALS: tuple[Signal, ...] = (
    Signal("cosine", "the unit's embedding cosine with the question",
           "'How are topics named?' and 'Topic names are strings such as /cmd_vel.'"),
    Signal("overlap", "IDF-weighted share of the question's words in the unit (with the sentence "
           "before it, or its section titles, at a discount)",
           "'What does git fetch update?' and a unit saying 'git fetch updates ...'"),
    Signal("block_how", "a sentence with the code block it introduces, for a how-to question",
           "'How do I squash my last commits?' and 'use: git rebase -i HEAD~5'"),
    Signal("names_term", "the share of the asked term's words the definition's subject names",
           "'What is Moravec's paradox?': 'Moravec's paradox is ...' (1.0) over 'The paradox "
           "is ...' (0.5)"),
    Signal("names_extra", "how many words the definition's subject has beyond the asked term "
           "(at most 6)", "'What is ROS 2?': 'A running ROS 2 system is ...' (2) under 'ROS 2, "
           "the second generation ..., is ...' (0)"),
    Signal("example", "the unit gives an example, for a question asking for one",
           "'Give me an example of a fallacy' and 'For example, ...'"),
    Signal("enumerates", "the unit names as many things as the question asks for",
           "'What are the four causes?' and the unit naming four"),
    Signal("expands", "the unit spells out the acronym the question asks about",
           "'What does NITROS stand for?' and 'NVIDIA Isaac Transport for ROS (NITROS)'"),
    Signal("glossary", "the book's glossary entry for the asked term",
           "'What is reflective equilibrium?' and 'Reflective equilibrium: ...'"),
    Signal("reader", "the unit holds the answerability reader's span (reader at least 0.5 sure)",
           "'When did X begin?' and the unit holding the reader's '1998'"),
    Signal("restates", "the unit's cosine when the unit itself holds every word of the "
           "question (it restates the question as a statement)",
           "'What does the cif in ffi_cif stand for?' and 'The cif in ffi_cif stands for Call "
           "InterFace.'"),
    Signal("states_action", "the unit states the action a how-to question asks to do (the verb "
           "or a synonym derived from data)", "'How do I add a column?' and 'To add a column, "
           "use: ALTER TABLE products ADD COLUMN description text;'"),
    Signal("row_header", "a table row whose header cells name a word of the question and whose "
           "cells name another (the row answers what the question asks of its subject)",
           "'How large is the range of the integer type?' and 'Name: integer; Storage Size: "
           "4 bytes; Range: -2147483648 to +2147483647.'"),
    Signal("quotes_literal", "the share of the question's literal tokens (code, keys, options: "
           "'^P', '--staged', 'max_workers') the unit prints as they are; 1 for the table row "
           "whose first cell is one ('Constant: PRIORITY_HIGH; ...'); the reader's unit counts "
           "those its passage names before it too (candidates.introduced)",
           "'What does ^P do?' and 'Key: ^P; Action: recalls the previous command.'"),
    Signal("names_command", "for a how-to question, a sentence or item naming one of the "
           "book's commands (a word its code blocks open with) with a word of the question "
           "after it", "'How do I list the volumes?' and 'Run box volume ls to list them.' in a "
           "book whose code blocks open with 'box'"),
)


def load_weights(path: Path) -> dict[str, float]:
    """Read a lead-weights file; raise ConfigError unless it weighs exactly SIGNALS."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        weights = {str(k): float(v) for k, v in data["weights"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"lead weights {path} cannot be read ({type(exc).__name__}: {exc}); rebuild it with "
            "`python -m benchmarks.lead_fit` or restore it from git") from exc
    names = {s.name for s in SIGNALS}
    if set(weights) != names:
        missing, extra = sorted(names - set(weights)), sorted(set(weights) - names)
        raise ConfigError(
            f"lead weights {path} do not match the signal table (missing {missing}, unknown "
            f"{extra}); refit them with `python -m benchmarks.lead_fit`")
    return weights


@lru_cache(maxsize=1)
def lead_weights() -> dict[str, float]:
    """The shipped lead weights (calibration/lead.json), read once."""
    return load_weights(LEAD_FILE)


def lead_score(signals: dict[str, float], weights: dict[str, float] | None = None) -> float:
    """A candidate's lead score: its signals weighed (the shipped weights by default)."""
    w = lead_weights() if weights is None else weights
    return sum(w[name] * value for name, value in signals.items())
