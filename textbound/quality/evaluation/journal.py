"""A resumable evaluation run: one question at a time, each record appended as it is done.

For slow generators (a chat model on a CPU answers in about 30 s): a run that is stopped loses
at most the question in flight, and the same command run again skips the questions its journal
already holds. Each record keeps what the generator drafted (before validation) and the
released answer, so refusals can be sorted into right and wrong by hand.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textbound.errors import SetupError

__all__ = ["answer_with_draft", "run_journaled"]

_OUTPUT = ("answer", "was_refusal", "refusal_reason", "sources", "confidence_level",
           "suggestions", "diagnostics")


def answer_with_draft(graph: Any, payload: dict[str, Any], context: dict[str, Any]
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one question; return (response, what the generator saw and wrote).

    The second holds `draft` (as generate wrote it, before validation), `generation_error`,
    and, when a draft was written, the `evidence` it was written from (ids, texts, headings),
    so the draft can be validated again later without the model.
    """
    seen: dict[str, Any] = {"draft": None, "generation_error": None}
    evidence: list[dict[str, Any]] = []
    final: dict[str, Any] = {}
    for mode, chunk in graph.stream(payload, context=context, stream_mode=["updates", "values"]):
        if mode == "updates":
            for node, values in chunk.items():
                values = values or {}
                if "evidence" in values:
                    evidence = values["evidence"]
                if node == "generate":
                    seen["draft"] = values.get("draft")
                    seen["generation_error"] = values.get("generation_error")
        else:
            final = chunk
    if seen["draft"] is not None:
        seen["evidence"] = [
            {"chunk_id": c["chunk_id"], "text": c["text"], "score": c["score"],
             "metadata": {k: c["metadata"].get(k) for k in ("source", "section", "heading_path")}}
            for c in evidence]
    return {k: final.get(k) for k in _OUTPUT}, seen


def _load(path: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            done[str(row["id"])] = row
        except (ValueError, KeyError) as exc:
            if number == len(lines):
                break  # a line cut short by a stopped run: that question runs again
            raise SetupError(f"{path}:{number} is not a journal record ({exc})") from exc
    return done


def run_journaled(graph: Any, questions: Sequence[dict[str, Any]], context: dict[str, Any],
                  path: Path, make_record: Callable[[dict[str, Any], dict[str, Any]],
                                                    dict[str, Any]],
                  on_done: Callable[[], None] | None = None,
                  answer: Callable[..., tuple[dict[str, Any], dict[str, Any]]] | None = None
                  ) -> list[dict[str, Any]]:
    """Answer the questions the journal at `path` lacks, one at a time; return every record.

    Records come back in question order; those already in the journal are not run again (their
    context must match: a journal written with another generator or policy is refused).
    `answer(graph, payload, context)` answers one question (default `answer_with_draft`; the
    peer chain's `peer_answer` for `--generator peer`).
    """
    answer = answer or answer_with_draft
    path.parent.mkdir(parents=True, exist_ok=True)
    done = _load(path)
    for row in done.values():
        if row.get("context") != context:
            raise SetupError(f"{path} was written with {row.get('context')}, not {context}: "
                             "use another --out folder or delete it")
    # rewrite without a cut-short last line, so appends start on a fresh line
    path.write_text("".join(json.dumps(r) + "\n" for r in done.values()), encoding="utf-8")
    out: list[dict[str, Any]] = []
    with path.open("a", encoding="utf-8") as journal:
        for q in questions:
            if q["id"] in done:
                out.append(done[q["id"]])
            else:
                t0 = time.perf_counter()
                response, seen = answer(graph, {"question": q["question"]}, context)
                record = make_record(q, response) | {
                    "context": context,
                    "question": q["question"],
                    "answers": q.get("answers", []),
                    "answer": response["answer"],
                    **seen,
                    "seconds": round(time.perf_counter() - t0, 2),
                }
                journal.write(json.dumps(record) + "\n")
                journal.flush()
                out.append(record)
            if on_done is not None:
                on_done()
    return out
