"""LangSmith experiments: labelled questions as a dataset, scored by LangSmith's `evaluate`.

`run_langsmith_experiment` uploads labelled questions as a dataset (idempotently: example ids are
derived from question ids) and runs LangSmith's own `evaluate` on them, with evaluators that score
answer-vs-refuse and gold-answer match the way the local evaluation does. `textbound eval
--langsmith` calls it; nothing on the answering path imports this module (the per-run tags every
answer carries are `textbound.records.tracing`'s job).
"""

from __future__ import annotations

import os
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from textbound.errors import SetupError
from textbound.quality.evaluation.metrics import answer_matches
from textbound.records.tracing import apply_to_run, run_metadata, run_tags

__all__ = [
    "EXAMPLE_NAMESPACE",
    "ExperimentSummary",
    "dataset_examples",
    "decision_correct",
    "example_id",
    "gold_answer_match",
    "refusal_rates",
    "require_langsmith_key",
    "run_langsmith_experiment",
    "sync_dataset",
]

EXAMPLE_NAMESPACE = uuid.UUID("6f1c2b1e-3f57-4a55-9a43-0d6c8e1b7a21")
"""Namespace of the uuid5 example ids: same dataset + question id -> same example."""


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

    Uses the local eval's rule (`textbound.quality.evaluation.answer_matches`) so both report the
    same.
    """
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
            apply_to_run(run, md, run_tags(md))
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
