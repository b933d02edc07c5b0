"""Conversation files: each line a short conversation whose turns run, in order, in one thread.

A conversation file holds one `{id, turns: [turn, ...]}` per line; a turn is a question row
(`question`, `expected`, `answers`, `kind`, as in a question file) plus `follow_up` (None on
the first turn; `pronoun`, `ellipsis`, `and_x`, `why`, `example` or `standalone`) and
`standalone`, the question rewritten to stand alone as a careful reader would write it (the
question itself for a first turn or a stand-alone topic switch).

Each conversation runs in its own thread (`config.configurable.thread_id`) of a graph compiled
with a checkpointer, so every turn after the first sees the thread's history and the graph's
contextualize step may rewrite it. Every turn is scored with the single-question rule
(`answer_matches`); the summary splits first turns from follow-ups and adds how well the
rewritten question (`diagnostics.conversation.standalone`) matches the gold one.

Rewrite match (`rewrite_right`): each question is reduced to its distinct content words
(`textbound.text.content_words`: stop words dropped, lightly stemmed, after dropping a
possessive 's). A rewrite is right when it (a) brings in at least `REWRITE_RECOVERED` of the
gold standalone question's words that the asked question lacks (the carried subject: for "what
file defines its interface?" after a question on ROS 2 services, `ros`, `2`, `service`), and
(b) reaches a content-word F1 of `REWRITE_F1` against the gold question (it did not drop the
asked words or pile up others). A follow-up left as asked fails (a); one that keeps the old
question beside the new subject ("and a node? what is a topic") fails (a) or (b); one that words
the same subject differently passes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from textbound.errors import SetupError
from textbound.quality.evaluation.metrics import summarize
from textbound.text import content_words

__all__ = [
    "FOLLOW_UPS",
    "REWRITE_F1",
    "REWRITE_RECOVERED",
    "is_conversation_file",
    "load_conversations",
    "rewrite_overlap",
    "rewrite_recovered",
    "rewrite_right",
    "run_conversations",
    "summarize_conversations",
    "turn_record",
]

FOLLOW_UPS = ("pronoun", "ellipsis", "and_x", "why", "example", "standalone")
"""The kinds of follow-up a conversation file labels (None on a first turn)."""
REWRITE_F1 = 0.6
"""Content-word F1 against the gold standalone question a right rewrite reaches."""
REWRITE_RECOVERED = 0.5
"""Share of the gold's words missing from the asked question that a right rewrite brings in."""

_POSSESSIVE = re.compile(r"['’]s\b")
_TURN_KEYS = ("question", "expected", "kind")


def is_conversation_file(path: Path) -> bool:
    """Whether the file's first non-empty line is a conversation (has `turns`)."""
    try:
        with Path(path).open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    return isinstance(row, dict) and "turns" in row
    except (OSError, json.JSONDecodeError):
        return False  # load_questions reports the unreadable file
    return False


def load_conversations(path: Path) -> list[dict[str, Any]]:
    """Read a conversation file; raise SetupError naming the first malformed line."""
    out = []
    try:
        with Path(path).open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                row = json.loads(line)
                turns = row.get("turns") if isinstance(row, dict) else None
                if "id" not in row or not isinstance(turns, list) or not turns:
                    raise SetupError(f"{path}:{number}: a conversation needs an id and turns")
                for i, turn in enumerate(turns, start=1):
                    missing = [k for k in _TURN_KEYS if k not in turn]
                    if missing:
                        raise SetupError(f"{path}:{number}: turn {i} is missing "
                                         f"{', '.join(missing)}")
                    turn.setdefault("answers", [])
                    turn.setdefault("follow_up", None)
                    turn.setdefault("standalone", turn["question"])
                out.append(row)
    except (OSError, json.JSONDecodeError) as exc:
        raise SetupError(f"cannot read conversations from {path}: {exc}") from exc
    return out


def _words(text: str) -> set[str]:
    return set(content_words(_POSSESSIVE.sub("", text or "")))


def rewrite_overlap(ours: str, gold: str) -> float:
    """Return the F1 of the two questions' distinct content words (1.0 when both have none)."""
    a, b = _words(ours), _words(gold)
    if not a and not b:
        return 1.0
    common = len(a & b)
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return round(2 * precision * recall / (precision + recall), 4)


def rewrite_recovered(asked: str, ours: str, gold: str) -> float:
    """Return the share of the gold's content words absent from `asked` that `ours` has.

    1.0 when the gold adds nothing to the asked question (nothing had to be carried).
    """
    need = _words(gold) - _words(asked)
    if not need:
        return 1.0
    return round(len(need & _words(ours)) / len(need), 4)


def rewrite_right(asked: str, ours: str, gold: str) -> bool:
    """Whether `ours` rewrites `asked` into the gold standalone question (module docstring)."""
    return (rewrite_recovered(asked, ours, gold) >= REWRITE_RECOVERED
            and rewrite_overlap(ours, gold) >= REWRITE_F1)


def turn_record(conversation: dict[str, Any], index: int, thread_id: str,
                out: dict[str, Any], make_record: Callable[[dict[str, Any], dict[str, Any]],
                                                           dict[str, Any]]) -> dict[str, Any]:
    """Score one turn as a single question would be, plus what the conversation step did."""
    turn = conversation["turns"][index]
    question = {**turn, "id": f"{conversation['id']}#{index + 1}"}
    record = make_record(question, out)
    conv = (out.get("diagnostics") or {}).get("conversation") or {}
    ours = conv.get("standalone") or turn["question"]
    rewritten = conv.get("rewritten")
    if rewritten is None:  # a graph without the flag: compare the texts
        rewritten = " ".join(ours.split()) != " ".join(turn["question"].split())
    gold = turn["standalone"]
    return record | {
        "conversation": conversation["id"],
        "turn": index + 1,
        "thread_id": thread_id,
        "follow_up": turn.get("follow_up"),
        "asked": turn["question"],
        "standalone": ours,
        "standalone_gold": gold,
        "rewritten": bool(rewritten),
        "rule": conv.get("rule"),
        "rewrite_f1": rewrite_overlap(ours, gold),
        "rewrite_recovered": rewrite_recovered(turn["question"], ours, gold),
        "rewrite_ok": rewrite_right(turn["question"], ours, gold),
    }


def run_conversations(graph: Any, conversations: Sequence[dict[str, Any]],
                      context: dict[str, Any], make_record: Callable[..., dict[str, Any]], *,
                      thread_prefix: str = "eval", workers: int = 4,
                      on_done: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """Run each conversation's turns in order in its own thread; return one record per turn.

    Conversations run side by side (`workers` threads), never two turns of one at a time.
    The graph must have been compiled with a checkpointer. Records keep conversation order.
    """
    keys = [*graph.output_channels, "chunks"] if isinstance(graph.output_channels, list) else None

    def one(conversation: dict[str, Any]) -> list[dict[str, Any]]:
        thread_id = f"{thread_prefix}:{conversation['id']}"
        config = {"configurable": {"thread_id": thread_id}}
        records = []
        for index, turn in enumerate(conversation["turns"]):
            try:
                out = dict(graph.invoke({"question": turn["question"]}, config=config,
                                        context=context, output_keys=keys))
            finally:
                if on_done is not None:
                    on_done()
            records.append(turn_record(conversation, index, thread_id, out, make_record))
        return records

    if workers <= 1:
        per = [one(c) for c in conversations]
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="eval-conv") as pool:
            per = list(pool.map(one, conversations))
    return [r for records in per for r in records]


def _share(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _answerable(records: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for r in records if r["expected"] == "answer"]
    correct = sum(1 for r in rows if not r["was_refusal"] and r.get("correct"))
    refused = sum(1 for r in rows if r["was_refusal"])
    return {"n": len(rows), "correct": correct, "correct_rate": _share(correct, len(rows)),
            "refused": refused, "refused_rate": _share(refused, len(rows)),
            "answered_wrong": len(rows) - correct - refused}


def _leaks(records: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    rows = [r for r in records if r["kind"] == kind]
    answered = sum(1 for r in rows if not r["was_refusal"])
    return {"n": len(rows), "answered": answered, "leak_rate": _share(answered, len(rows))}


def summarize_conversations(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate turn records: first turns and follow-ups apart, and the rewrites' accuracy.

    `follow_ups.answerable.correct_rate` is over every answerable follow-up (a refused one
    counts against it); `near_miss.leak_rate` and `out_of_corpus.leak_rate` are the shares
    answered. `rewrite` covers follow-ups that depend on the conversation (all but
    `standalone`): how many rewrites are right (`rewrite_right`), also per follow-up kind;
    `standalone_rewritten` counts stand-alone follow-ups that were rewritten although they
    must not be (first turns: `first_turns.rewritten`).
    """
    records = list(records)
    first = [r for r in records if r["turn"] == 1]
    follow = [r for r in records if r["turn"] > 1]
    dependent = [r for r in follow if r.get("follow_up") != "standalone"]
    standalone = [r for r in follow if r.get("follow_up") == "standalone"]
    by_kind: dict[str, dict[str, Any]] = {}
    for name in FOLLOW_UPS:
        rows = [r for r in follow if r.get("follow_up") == name]
        if not rows:
            continue
        ans = [r for r in rows if r["expected"] == "answer"]
        ok = sum(1 for r in ans if not r["was_refusal"] and r.get("correct"))
        refuse = [r for r in rows if r["expected"] != "answer"]
        by_kind[name] = {
            "n": len(rows), "answerable": len(ans), "correct": ok,
            "correct_rate": _share(ok, len(ans)),
            "refuse_expected": len(refuse),
            "leaked": sum(1 for r in refuse if not r["was_refusal"]),
            "rewritten": sum(1 for r in rows if r["rewritten"]),
            "rewrite_ok": sum(1 for r in rows if r["rewrite_ok"]),
            "rewrite_f1_mean": round(sum(r["rewrite_f1"] for r in rows) / len(rows), 4),
        }
    ok_rewrites = sum(1 for r in dependent if r["rewrite_ok"])
    return {
        "conversations": len({r["conversation"] for r in records}),
        "turns": len(records),
        "first_turns": {"n": len(first), "answerable": _answerable(first),
                        "near_miss": _leaks(first, "near_miss"),
                        "out_of_corpus": _leaks(first, "out_of_corpus"),
                        "rewritten": sum(1 for r in first if r["rewritten"]),
                        "kinds": summarize(first)["kinds"]},
        "follow_ups": {"n": len(follow), "answerable": _answerable(follow),
                       "near_miss": _leaks(follow, "near_miss"),
                       "out_of_corpus": _leaks(follow, "out_of_corpus"),
                       "kinds": summarize(follow)["kinds"], "by_follow_up": by_kind},
        "rewrite": {"rule": f"brings in >= {REWRITE_RECOVERED:.0%} of the gold standalone "
                            "question's content words the asked one lacks, and content-word "
                            f"F1 >= {REWRITE_F1} against it",
                    "n": len(dependent), "ok": ok_rewrites,
                    "accuracy": _share(ok_rewrites, len(dependent)),
                    "f1_mean": round(sum(r["rewrite_f1"] for r in dependent)
                                     / len(dependent), 4) if dependent else None,
                    "rules": dict(Counter(str(r.get("rule")) for r in dependent
                                          if r["rewritten"]).most_common()),
                    "standalone_n": len(standalone),
                    "standalone_rewritten": sum(1 for r in standalone if r["rewritten"])},
    }
