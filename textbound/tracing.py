"""LangSmith: filterable metadata and tags on traced runs, and experiments on labelled questions.

Tracing is switched on only by LangSmith's own environment variables (`LANGSMITH_TRACING=true`
with `LANGSMITH_API_KEY`, optionally `LANGSMITH_PROJECT` / `LANGSMITH_ENDPOINT`); textbound never
requires it and does nothing when it is off. When it is on, `annotate_current_run` (called by
`nodes._common.respond` for every answer and refusal) adds to the graph's root run:

* metadata: `outcome`, `refusal_reason` (`answered` for answers), `confidence_level`,
  `collection`, `generator`, `policy`, `calibration` (policy name + a hash of the thresholds and
  weights in force), `answer_threshold`, `floor`, `path` (terminal node), `selected_text`, and
  `session_id` (which LangSmith also uses to group runs into threads);
* tags: `textbound`, `outcome:<answered|refused>`, `refusal_reason:<reason|answered>`,
  `confidence:<level>`, `collection:<name>`, `generator:<name>`, `policy:<name>`,
  `calibration:<id>`.

Hooking the terminal node rather than each caller covers every entry point (CLI, HTTP server,
LangServe, Studio, notebooks) the same way. The root run is still open when the terminal node
runs, so the tags travel with the run's final update.

`run_langsmith_experiment` uploads labelled questions as a dataset (idempotently: example ids are
derived from question ids) and runs LangSmith's own `evaluate` on them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from textbound.errors import SetupError

__all__ = [
    "ExperimentSummary",
    "annotate_current_run",
    "dataset_examples",
    "decision_correct",
    "example_id",
    "gold_answer_match",
    "require_langsmith_key",
    "run_langsmith_experiment",
    "run_metadata",
    "run_tags",
    "sync_dataset",
]

log = logging.getLogger("textbound.tracing")
_warned = False

EXAMPLE_NAMESPACE = uuid.UUID("6f1c2b1e-3f57-4a55-9a43-0d6c8e1b7a21")
"""Namespace of the uuid5 example ids: same dataset + question id -> same example."""


# --- run metadata and tags -----------------------------------------------------------------------
def _calibration_id(tunables: Mapping[str, Any]) -> str | None:
    cal = tunables.get("calibration")
    if not isinstance(cal, Mapping):
        return None
    digest = hashlib.sha256(json.dumps(cal, sort_keys=True, default=str).encode()).hexdigest()
    return f"{cal.get('name') or tunables.get('policy') or 'custom'}:{digest[:8]}"


def run_metadata(
    response: Mapping[str, Any],
    state: Mapping[str, Any] | None = None,
    *,
    collection: str | None = None,
) -> dict[str, Any]:
    """Return the filterable metadata of one response (the contract, plus state when known)."""
    state = state or {}
    diag = response.get("diagnostics") or {}
    tun = state.get("tunables") or {}
    thresholds = diag.get("thresholds") or {}
    reason = response.get("refusal_reason")
    md: dict[str, Any] = {
        "outcome": "refused" if response.get("was_refusal") else "answered",
        "refusal_reason": reason or "answered",
        "confidence_level": response.get("confidence_level"),
        "collection": collection,
        "generator": diag.get("generator") or tun.get("generator"),
        "policy": thresholds.get("policy") or tun.get("policy"),
        "calibration": _calibration_id(tun),
        "answer_threshold": tun.get("answer_threshold"),
        "floor": tun.get("floor"),
        "path": diag.get("path"),
        "selected_text": bool(state.get("selected_text")) if state else None,
        "session_id": state.get("session_id"),
    }
    return {k: v for k, v in md.items() if v is not None}


def run_tags(metadata: Mapping[str, Any]) -> list[str]:
    """Return the tags for metadata from `run_metadata` (low-cardinality fields only)."""
    tags = ["textbound"]
    for key, prefix in (("outcome", "outcome"), ("refusal_reason", "refusal_reason"),
                        ("confidence_level", "confidence"), ("collection", "collection"),
                        ("generator", "generator"), ("policy", "policy"),
                        ("calibration", "calibration")):
        if metadata.get(key) is not None:
            tags.append(f"{prefix}:{metadata[key]}")
    return tags


def _apply(run: Any, metadata: Mapping[str, Any], tags: Sequence[str]) -> None:
    run.add_metadata(dict(metadata))
    have = set(run.tags or [])
    run.add_tags([t for t in tags if t not in have])


def _graph_root(current: Any) -> Any:
    """Climb from the current run to the outermost run LangChain's tracer started itself.

    Runs started outside the graph (a caller's `@traceable`, an `evaluate` target) are known to
    the tracer as external parents; the climb stops below them, so one caller running many
    questions inside one trace never collects every question's tags.
    """
    from langchain_core.runnables.config import var_child_runnable_config
    from langchain_core.tracers.langchain import LangChainTracer

    config = var_child_runnable_config.get() or {}
    handlers = getattr(config.get("callbacks"), "handlers", None) or []
    tracer = next((h for h in handlers if isinstance(h, LangChainTracer)), None)
    if tracer is None:
        return current
    external = getattr(tracer, "_external_run_ids", {})
    run = current
    while run.parent_run_id is not None:
        parent = tracer.run_map.get(str(run.parent_run_id))
        if parent is None or str(parent.id) in external:
            break
        run = parent
    return run


def annotate_current_run(
    response: Mapping[str, Any],
    state: Mapping[str, Any] | None = None,
    *,
    collection: str | None = None,
) -> bool:
    """Attach the response's metadata and tags to the traced graph run, if there is one.

    Returns whether a run was annotated. Never raises: tracing must not turn an answer into an
    error, so a failure is logged (once, as a warning) and ignored.
    """
    global _warned
    try:
        from langsmith.run_helpers import get_current_run_tree

        current = get_current_run_tree()
        if current is None:
            return False
        md = run_metadata(response, state, collection=collection)
        _apply(_graph_root(current), md, run_tags(md))
        return True
    except Exception as exc:  # noqa: BLE001 - see docstring: tracing is best effort
        if not _warned:
            _warned = True
            log.warning("could not add textbound metadata to the LangSmith run: %r", exc)
        return False


# --- experiments ---------------------------------------------------------------------------------
def require_langsmith_key() -> str:
    """Return the LangSmith API key, or raise SetupError saying how to set one."""
    key = (os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY") or "").strip()
    if not key:
        raise SetupError(
            "--langsmith needs a LangSmith API key: set LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT "
            "for a self-hosted or EU instance). Nothing was run."
        )
    return key


def example_id(dataset_name: str, question_id: str) -> uuid.UUID:
    """Return the stable example id of a question in a dataset."""
    return uuid.uuid5(EXAMPLE_NAMESPACE, f"{dataset_name}\x1f{question_id}")


def dataset_examples(questions: Sequence[Mapping[str, Any]], dataset_name: str
                     ) -> list[dict[str, Any]]:
    """Turn labelled questions (corpus/questions.jsonl rows) into LangSmith examples."""
    out = []
    seen: set[str] = set()
    for q in questions:
        qid = str(q["id"])
        if qid in seen:
            raise ValueError(f"question id {qid!r} appears twice")
        seen.add(qid)
        inputs: dict[str, Any] = {"question": q["question"]}
        if q.get("selected_text"):
            inputs["selected_text"] = q["selected_text"]
        out.append({
            "id": example_id(dataset_name, qid),
            "inputs": inputs,
            "outputs": {"expected": q.get("expected", "answer"),
                        "answers": list(q.get("answers") or []),
                        "kind": q.get("kind", "unlabelled")},
            "metadata": {"question_id": qid, "kind": q.get("kind", "unlabelled"),
                         "doc_id": q.get("doc_id"), "section": q.get("section")},
        })
    return out


def sync_dataset(client: Any, dataset_name: str, questions: Sequence[Mapping[str, Any]],
                 *, description: str = "textbound labelled questions") -> dict[str, Any]:
    """Create or update the dataset so it holds exactly these questions' current labels.

    Re-running with the same questions creates nothing; a question whose text or labels
    changed is updated in place; examples not derived from these questions are left alone.
    Returns the dataset id and how many examples were created, updated and unchanged.
    """
    examples = dataset_examples(questions, dataset_name)
    if client.has_dataset(dataset_name=dataset_name):
        dataset = client.read_dataset(dataset_name=dataset_name)
    else:
        dataset = client.create_dataset(dataset_name, description=description,
                                        metadata={"created_by": "textbound"})
    existing = {str(ex.id): ex for ex in client.list_examples(dataset_id=dataset.id)}
    new, changed = [], []
    for ex in examples:
        old = existing.get(str(ex["id"]))
        if old is None:
            new.append(ex)
        elif (old.inputs or {}) != ex["inputs"] or (old.outputs or {}) != ex["outputs"]:
            changed.append(ex)
    if new:
        client.create_examples(dataset_id=dataset.id, examples=new)
    if changed:
        client.update_examples(dataset_id=dataset.id, updates=changed)
    return {"dataset_id": str(dataset.id), "created": len(new), "updated": len(changed),
            "unchanged": len(examples) - len(new) - len(changed)}


def decision_correct(outputs: Mapping[str, Any], reference_outputs: Mapping[str, Any]
                     ) -> dict[str, Any]:
    """Score answer-vs-refuse against the label, overall and per kind of question."""
    refused = bool(outputs.get("was_refusal"))
    expected_refusal = reference_outputs.get("expected") == "refuse"
    score = int(refused == expected_refusal)
    kind = reference_outputs.get("kind") or "unlabelled"
    comment = (f"expected {'refusal' if expected_refusal else 'answer'}, got "
               f"{'refusal: ' + str(outputs.get('refusal_reason')) if refused else 'answer'}")
    return {"results": [
        {"key": "decision_correct", "score": score, "comment": comment},
        {"key": f"decision_correct.{kind}", "score": score, "comment": comment},
    ]}


def gold_answer_match(outputs: Mapping[str, Any], reference_outputs: Mapping[str, Any]
                      ) -> dict[str, Any]:
    """Score whether an answer holds one of the gold answers (answerable questions only).

    Uses the local eval's rule (`textbound.evaluation.answer_matches`) so both report the same.
    """
    from textbound.evaluation import answer_matches

    golds = [str(g) for g in reference_outputs.get("answers") or [] if str(g).strip()]
    if reference_outputs.get("expected") != "answer" or not golds:
        return {"results": []}
    answer = "" if outputs.get("was_refusal") else str(outputs.get("answer") or "")
    hit = next((g for g in golds if answer and answer_matches(answer, [g])), None)
    return {"key": "gold_answer_match", "score": int(hit is not None),
            "comment": f"matched {hit!r}" if hit else "no gold answer in the response"}


def _rate(outputs: Sequence[Mapping[str, Any]], refs: Sequence[Mapping[str, Any]],
          expected: str) -> float | None:
    picked = [bool(o.get("was_refusal")) for o, r in zip(outputs, refs, strict=True)
              if r.get("expected") == expected]
    if not picked:
        return None
    wrong = sum(picked) if expected == "answer" else len(picked) - sum(picked)
    return round(wrong / len(picked), 4)


def refusal_rates(outputs: list[dict[str, Any]], reference_outputs: list[dict[str, Any]]
                  ) -> dict[str, Any]:
    """Summary: false refusals (answerable refused) and false answers (unanswerable answered)."""
    return {"results": [
        {"key": "false_refusal_rate", "score": _rate(outputs, reference_outputs, "answer")},
        {"key": "false_answer_rate", "score": _rate(outputs, reference_outputs, "refuse")},
    ]}


@dataclass
class ExperimentSummary:
    """What `run_langsmith_experiment` did."""

    dataset_name: str
    dataset: dict[str, Any]
    experiment_name: str | None
    scores: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    url: str | None = None


def _mean_scores(results: Any) -> tuple[dict[str, float], dict[str, int]]:
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for row in results:
        for res in (row.get("evaluation_results") or {}).get("results", []):
            if isinstance(res.score, int | float) and not isinstance(res.score, bool):
                sums[res.key] += float(res.score)
                counts[res.key] += 1
    return ({k: round(sums[k] / counts[k], 4) for k in sorted(sums)}, dict(counts))


def run_langsmith_experiment(
    questions: Sequence[Mapping[str, Any]],
    target: Callable[[dict[str, Any]], dict[str, Any]],
    dataset_name: str,
    *,
    evaluators: Sequence[Callable[..., Any]] = (),
    experiment_prefix: str = "textbound",
    metadata: Mapping[str, Any] | None = None,
    max_concurrency: int | None = 0,
    client: Any = None,
    upload_results: bool = True,
) -> ExperimentSummary:
    """Upload `questions` as the dataset `dataset_name` and run a LangSmith experiment on it.

    `target` takes an example's inputs (`{"question": ..., "selected_text"?: ...}`) and returns
    the response contract (e.g. `lambda inputs: graph.invoke(inputs)`). The built-in evaluators
    score answer-vs-refuse (overall and per kind) and gold-answer match, plus summary false
    refusal / false answer rates; `evaluators` adds more (LangSmith evaluator signatures).
    Raises SetupError before any work when no key is set and no client is given.
    """
    if client is None:
        require_langsmith_key()
        from langsmith import Client

        client = Client()
    from langsmith import evaluate
    from langsmith.run_helpers import get_current_run_tree

    dataset = sync_dataset(client, dataset_name, questions)

    def textbound_target(inputs: dict[str, Any]) -> dict[str, Any]:
        out = target(inputs)
        run = get_current_run_tree()
        if run is not None:  # the experiment row: make it filterable like a graph run
            md = run_metadata(out)
            _apply(run, md, run_tags(md))
        return out

    results = evaluate(
        textbound_target,
        data=dataset_name,
        evaluators=[decision_correct, gold_answer_match, *evaluators],
        summary_evaluators=list[Any]([refusal_rates]),
        experiment_prefix=experiment_prefix,
        metadata={"dataset_examples": len(questions), **(metadata or {})},
        max_concurrency=max_concurrency,
        client=client,
        upload_results=upload_results,
    )
    scores, counts = _mean_scores(results)
    for res in (getattr(results, "_summary_results", None) or {}).get("results", []):
        if isinstance(res.score, int | float) and not isinstance(res.score, bool):
            scores[res.key] = float(res.score)
    url = None
    try:
        manager = getattr(results, "_manager", None)
        project = getattr(manager, "_experiment", None)
        url = getattr(project, "url", None)
    except Exception:  # noqa: BLE001 - the link is a convenience
        url = None
    return ExperimentSummary(dataset_name, dataset, getattr(results, "experiment_name", None),
                             scores, counts, url)
