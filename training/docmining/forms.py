"""Question forms as students type them: templates, case and punctuation, a seeded misspelling.

Every choice takes a `random.Random` that the caller seeds, so the same fact always gets the same
question. `styled` is the last step for every question: as written, lower case, without the
question mark, or with one longer word misspelt (two inner letters swapped, one dropped or one
doubled); never a word that names the thing asked about (`keep`), so the question still points at
its answer.
"""

from __future__ import annotations

import random
import re

__all__ = ["styled", "misspell", "verb_phrase", "third_person", "first_clause"]

_WORD = re.compile(r"[A-Za-z]{5,}")


def misspell(question: str, rng: random.Random, keep: tuple[str, ...] = ()) -> str:
    """Misspell one ordinary word of five or more letters (none in `keep`); unchanged if none."""
    kept = {k.lower() for k in keep}
    blocked = [(m.start(), m.end()) for k in keep if k
               for m in re.finditer(re.escape(k), question, re.I)]
    words = [m for m in _WORD.finditer(question)
             if m.group(0).lower() not in kept
             and not any(s < m.end() and m.start() < e for s, e in blocked)]
    if not words:
        return question
    m = rng.choice(words)
    w = m.group(0)
    i = rng.randrange(1, len(w) - 2)
    how = rng.randrange(3)
    if how == 0 and w[i] != w[i + 1]:
        bad = w[:i] + w[i + 1] + w[i] + w[i + 2:]
    elif how == 1:
        bad = w[:i] + w[i + 1:]
    else:
        bad = w[:i] + w[i] + w[i:]
    return question[:m.start()] + bad + question[m.end():]


def styled(question: str, rng: random.Random, keep: tuple[str, ...] = ()) -> str:
    """The question as one of four typing styles, chosen by `rng`."""
    style = rng.randrange(4)
    if style == 1:
        return question[:1].lower() + question[1:].rstrip("?").lower()
    if style == 2:
        return question.rstrip("?").rstrip()
    if style == 3:
        return misspell(question, rng, keep)
    return question


_VERB_HINT = {"print", "list", "show", "display", "use", "output", "read", "write", "add",
              "remove", "ignore", "suppress", "make", "force", "run", "sort", "include",
              "exclude", "append", "create", "delete", "skip", "keep", "treat", "follow",
              "generate", "limit", "override", "change", "select", "report", "check", "send",
              "save", "load", "allow", "prevent", "assume", "search", "match", "reverse",
              "compress", "decompress", "verify", "dump", "scale", "produce", "give", "copy",
              "move", "preserve", "overwrite", "prompt", "ask", "wait", "stop", "start",
              "restart", "kill", "count", "convert", "recurse", "descend", "group", "quote",
              "escape", "color", "colour", "explain", "describe", "install", "update",
              "upgrade", "download", "fetch", "mount", "unmount", "set", "enable", "disable",
              "specify", "define", "emit", "log", "encrypt", "decrypt", "sign", "compare",
              "merge", "split", "join", "truncate", "pad", "strip", "trim", "replace",
              "rename", "link", "open", "close", "lock", "unlock", "wrap", "format", "parse",
              "turn", "test", "validate", "query", "return", "exit"}


def _base_form(word: str) -> str | None:
    """The base form of a third-person verb ("prints" -> "print"), or None if it is not one."""
    w = word.lower()
    if len(w) < 4 or not w.endswith("s") or w.endswith(("ss", "us", "is")):
        return None
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zes")):
        return w[:-2]
    return w[:-1]


def first_clause(text: str, max_words: int = 12) -> str | None:
    """The description's first clause (up to ; : . or a parenthesis), if short enough."""
    clause = re.split(r"[;:(]|\.(?:\s|$)|, (?:and |or |but |which |e\.g\.|i\.e\.)", text,
                      maxsplit=1)[0]
    clause = " ".join(clause.split()).rstrip(" ,.")
    n = len(clause.split())
    return clause if 2 <= n <= max_words else None


def verb_phrase(description: str) -> str | None:
    """The description's first clause as a base-form verb phrase ("Prints X" -> "print X").

    None when the clause does not open with a verb this heuristic recognises.
    """
    clause = first_clause(description)
    if clause is None:
        return None
    first, _, rest = clause.partition(" ")
    low = first.lower()
    if low in ("do", "don't") and rest.startswith("not "):
        return None  # "do not ignore ..." reads badly after "how do I"
    if low in _VERB_HINT:
        base = low
    else:
        base = _base_form(first) or ""
        if base not in _VERB_HINT:
            return None
    if not rest or not re.match(r"[A-Za-z\"'`(<$/.-]", rest):
        return None
    return f"{base} {rest[:1].lower() + rest[1:] if not rest[:2].isupper() else rest}"


def third_person(phrase: str) -> str:
    """A base-form verb phrase in the third person ("print X" -> "prints X")."""
    verb, _, rest = phrase.partition(" ")
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        verb += "es"
    elif verb.endswith("y") and verb[-2:-1] not in "aeiou":
        verb = verb[:-1] + "ies"
    else:
        verb += "s"
    return f"{verb} {rest}".strip()
