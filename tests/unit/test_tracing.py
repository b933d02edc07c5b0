"""LangSmith mapping, offline: run metadata and tags, dataset sync, evaluators, experiments.

A fake client records what LangSmith would receive; no test opens a socket (see conftest) and
none turns LANGSMITH_TRACING on: tracing is switched on per call with an explicit tracer.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import langsmith
import pytest
from langchain_core.tracers.langchain import LangChainTracer
from langsmith import schemas

from graph.builder import build_graph
from tests.conftest import make_settings
from textbound.errors import SetupError
from textbound.quality.evaluation import experiments
from textbound.records import tracing


class FakeLangSmith:
    """Records runs, and keeps datasets and examples in memory, like a LangSmith client."""

    api_url = "http://127.0.0.1:9"  # never contacted: every call below is answered in memory
    otel_exporter = None
    _select_eval_results = langsmith.Client._select_eval_results  # pure: no I/O

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.updated: list[dict[str, Any]] = []
        self.datasets: dict[str, Any] = {}
        self.examples: dict[str, schemas.Example] = {}
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the fake LangSmith client has no {name!r}")

    def create_run(self, **kw: Any) -> None:
        self.created.append(kw)

    def update_run(self, **kw: Any) -> None:
        self.updated.append(kw)

    def has_dataset(self, *, dataset_name: str) -> bool:
        self.calls.append("has_dataset")
        return dataset_name in self.datasets

    def read_dataset(self, *, dataset_name: str) -> Any:
        self.calls.append("read_dataset")
        return self.datasets[dataset_name]

    def create_dataset(self, name: str, **kw: Any) -> Any:
        self.calls.append("create_dataset")
        self.datasets[name] = SimpleNamespace(id=uuid.uuid4(), name=name)
        return self.datasets[name]

    def list_examples(self, dataset_id: Any = None, dataset_name: str | None = None,
                      **kw: Any) -> Any:
        self.calls.append("list_examples")
        if dataset_name is not None:
            dataset_id = self.datasets[dataset_name].id
        return iter([e for e in self.examples.values() if e.dataset_id == dataset_id])

    def _store(self, dataset_id: Any, rows: list[dict[str, Any]]) -> None:
        for r in rows:
            self.examples[str(r["id"])] = schemas.Example(
                id=r["id"], dataset_id=dataset_id, inputs=r["inputs"], outputs=r["outputs"],
                metadata=r["metadata"])

    def create_examples(self, *, dataset_id: Any, examples: list[dict[str, Any]]) -> None:
        self.calls.append(f"create_examples:{len(examples)}")
        self._store(dataset_id, examples)

    def update_examples(self, *, dataset_id: Any, updates: list[dict[str, Any]]) -> None:
        self.calls.append(f"update_examples:{len(updates)}")
        self._store(dataset_id, updates)


def _root_update(client: FakeLangSmith) -> dict[str, Any]:
    roots = [u for u in client.updated if u.get("parent_run_id") is None]
    assert len(roots) == 1
    return roots[0]


@pytest.fixture
def traced_graph(tmp_path: Path, embeddings: Any, fake_store: Any) -> Any:
    return build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=fake_store)


def test_refusal_tags_and_metadata_reach_the_root_run(traced_graph: Any) -> None:
    """A traced refusal: the graph's root run carries reason, confidence, collection, policy."""
    client = FakeLangSmith()
    tracer = LangChainTracer(client=client, project_name="test")
    out = traced_graph.invoke({"question": "Who won the 2018 FIFA World Cup?",
                               "session_id": "sess-1"}, config={"callbacks": [tracer]})
    assert out["was_refusal"]
    root = _root_update(client)
    md = root["extra"]["metadata"]
    assert md["refusal_reason"] == out["refusal_reason"] and md["outcome"] == "refused"
    assert md["session_id"] == "sess-1" and md["collection"] == "fake"
    assert md["policy"] == "calibrated" and md["generator"] == "extractive"
    assert md["calibration"].startswith("calibrated:") and md["confidence_level"] == "insufficient"
    assert {f"refusal_reason:{out['refusal_reason']}", "outcome:refused", "collection:fake",
            "confidence:insufficient", "policy:calibrated", "generator:extractive",
            "textbound"} <= set(root["tags"])
    children = [u for u in client.updated if u.get("parent_run_id") is not None]
    assert children and not any("outcome:refused" in (u["tags"] or []) for u in children)


def test_answer_is_tagged_answered(traced_graph: Any) -> None:
    """A traced answer: refusal_reason is 'answered' and the confidence level is the answer's."""
    client = FakeLangSmith()
    out = traced_graph.invoke(
        {"question": "How many degrees of freedom does a rigid body moving freely in "
                     "three-dimensional space have?"},
        config={"callbacks": [LangChainTracer(client=client, project_name="test")]})
    assert not out["was_refusal"], out["answer"]
    root = _root_update(client)
    assert root["extra"]["metadata"]["refusal_reason"] == "answered"
    assert "session_id" not in root["extra"]["metadata"]
    assert {"outcome:answered", "refusal_reason:answered",
            f"confidence:{out['confidence_level']}"} <= set(root["tags"])


def test_an_outer_callers_run_is_left_alone(traced_graph: Any) -> None:
    """Inside a caller's own trace, the tags go on the graph run, not the caller's run."""
    from langsmith.run_helpers import tracing_context

    client = FakeLangSmith()
    outer = langsmith.RunTree(name="caller", run_type="chain", inputs={}, ls_client=client)
    with tracing_context(parent=outer, enabled=True, client=client, project_name="test"):
        traced_graph.invoke({"question": "What is the capital of France?"},
                            config={"callbacks": [LangChainTracer(client=client,
                                                                  project_name="test")]})
    graph_runs = [u for u in client.updated if u["name"] == "textbound"]
    assert len(graph_runs) == 1 and "outcome:refused" in graph_runs[0]["tags"]
    assert graph_runs[0]["parent_run_id"] == outer.id
    assert not outer.tags and "outcome" not in outer.metadata


def test_untraced_runs_are_not_touched() -> None:
    """Without a current run, annotating is a no-op that says so."""
    assert tracing.annotate_current_run({"was_refusal": False}, {}) is False


def test_annotation_never_raises(monkeypatch: pytest.MonkeyPatch,
                                 caplog: pytest.LogCaptureFixture) -> None:
    """A run that rejects metadata is logged, not raised: tracing cannot break an answer."""
    class Broken:
        parent_run_id = None
        tags: list[str] = []

        def add_metadata(self, md: dict[str, Any]) -> None:
            raise RuntimeError("boom")

    import langsmith.run_helpers as rh

    monkeypatch.setattr(rh, "get_current_run_tree", lambda: Broken())
    monkeypatch.setattr(tracing, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="textbound.records.tracing"):
        assert tracing.annotate_current_run({"was_refusal": True}, {}) is False
    assert "boom" in caplog.text


def test_run_metadata_from_the_contract_alone() -> None:
    """Experiment rows are tagged from the response contract when no state is at hand."""
    md = tracing.run_metadata({"was_refusal": True, "refusal_reason": "out_of_scope",
                               "confidence_level": "insufficient",
                               "diagnostics": {"generator": "chat", "path": "refuse_out_of_scope",
                                               "thresholds": {"policy": "seed_002"}}})
    assert md == {"outcome": "refused", "refusal_reason": "out_of_scope",
                  "confidence_level": "insufficient", "generator": "chat", "policy": "seed_002",
                  "path": "refuse_out_of_scope"}
    assert tracing.run_tags(md) == ["textbound", "outcome:refused", "refusal_reason:out_of_scope",
                                    "confidence:insufficient", "generator:chat",
                                    "policy:seed_002"]


def test_require_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key: a SetupError naming LANGSMITH_API_KEY; with one, it is returned."""
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGCHAIN_API_KEY", raising=False)
    with pytest.raises(SetupError, match="LANGSMITH_API_KEY"):
        experiments.require_langsmith_key()
    monkeypatch.setenv("LANGSMITH_API_KEY", " lsv2-test ")
    assert experiments.require_langsmith_key() == "lsv2-test"


def test_experiment_without_a_key_stops_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key and no client: nothing is uploaded and the target is never called."""
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.delenv("LANGCHAIN_API_KEY", raising=False)
    called: list[Any] = []
    with pytest.raises(SetupError):
        experiments.run_langsmith_experiment(QUESTIONS, called.append, "ds")  # type: ignore[arg-type]
    assert called == []


QUESTIONS = [
    {"id": "q1", "question": "What is a topic?", "expected": "answer",
     "answers": ["a named bus"], "kind": "answerable"},
    {"id": "q2", "question": "What is the capital of France?", "expected": "refuse",
     "answers": [], "kind": "out_of_scope"},
    {"id": "q3", "question": "When did Honda end ASIMO?", "expected": "refuse", "answers": [],
     "kind": "near_miss"},
]


def test_dataset_sync_is_idempotent() -> None:
    """Same questions twice: nothing new; a changed label updates that one example in place."""
    client = FakeLangSmith()
    first = experiments.sync_dataset(client, "ds", QUESTIONS)
    assert (first["created"], first["updated"], first["unchanged"]) == (3, 0, 0)
    again = experiments.sync_dataset(client, "ds", QUESTIONS)
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, 3)
    assert again["dataset_id"] == first["dataset_id"]
    relabelled = [dict(QUESTIONS[0], answers=["named bus"]), *QUESTIONS[1:]]
    third = experiments.sync_dataset(client, "ds", relabelled)
    assert (third["created"], third["updated"], third["unchanged"]) == (0, 1, 2)
    assert len(client.examples) == 3
    q1 = client.examples[str(experiments.example_id("ds", "q1"))]
    assert q1.outputs["answers"] == ["named bus"]
    assert client.calls.count("create_dataset") == 1


def test_example_ids_are_stable_per_dataset() -> None:
    """The same question id maps to the same example id, different across datasets."""
    # golden: a changed id would make every LangSmith dataset sync create its examples anew
    assert experiments.example_id("ds", "q1") == uuid.UUID("b34055d1-9065-5771-9d9b-9b297648fdb6")
    assert experiments.example_id("ds", "q1") != experiments.example_id("other", "q1")
    with pytest.raises(ValueError, match="twice"):
        experiments.dataset_examples([QUESTIONS[0], QUESTIONS[0]], "ds")


@pytest.mark.parametrize(("out", "ref", "scores"), [
    ({"was_refusal": False}, {"expected": "answer", "kind": "answerable"}, 1),
    ({"was_refusal": True, "refusal_reason": "empty_retrieval"},
     {"expected": "answer", "kind": "answerable"}, 0),
    ({"was_refusal": True}, {"expected": "refuse", "kind": "near_miss"}, 1),
    ({"was_refusal": False}, {"expected": "refuse", "kind": "near_miss"}, 0),
])
def test_decision_correct(out: dict[str, Any], ref: dict[str, Any], scores: int) -> None:
    """Answer-vs-refuse is scored overall and under the question's kind."""
    res = experiments.decision_correct(out, ref)["results"]
    assert [(r["key"], r["score"]) for r in res] == [
        ("decision_correct", scores), (f"decision_correct.{ref['kind']}", scores)]


def test_gold_answer_match() -> None:
    """A gold answer must appear in the answer (the local eval's rule); refusals miss."""
    ref = {"expected": "answer", "answers": ["has 6 DoF", "six degrees"]}
    match = experiments.gold_answer_match
    assert match({"was_refusal": False, "answer": "A rigid body HAS 6 DoF [1]."}, ref)["score"] == 1
    assert match({"was_refusal": False, "answer": "It has 3."}, ref)["score"] == 0
    assert match({"was_refusal": True, "answer": "has 6 DoF"}, ref)["score"] == 0
    assert match({"was_refusal": True}, {"expected": "refuse"}) == {"results": []}


@pytest.mark.filterwarnings("ignore:.*upload_results.*:langsmith._internal._beta_decorator."
                            "LangSmithBetaWarning")
def test_experiment_runs_langsmiths_evaluate(monkeypatch: pytest.MonkeyPatch) -> None:
    """langsmith.evaluate runs (results kept local) and the built-in scores come back."""
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    client = FakeLangSmith()
    seen: list[str] = []

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        seen.append(inputs["question"])
        if "topic" in inputs["question"]:
            return {"answer": "A topic is a named bus [1].", "was_refusal": False,
                    "refusal_reason": None, "confidence_level": "high", "diagnostics": {}}
        if "ASIMO" in inputs["question"]:  # a false answer
            return {"answer": "In 2018.", "was_refusal": False, "refusal_reason": None,
                    "confidence_level": "low", "diagnostics": {}}
        return {"answer": "No.", "was_refusal": True, "refusal_reason": "out_of_scope",
                "confidence_level": "insufficient", "diagnostics": {}}

    summary = experiments.run_langsmith_experiment(QUESTIONS, target, "ds", client=client,
                                                   upload_results=False)
    assert sorted(seen) == sorted(q["question"] for q in QUESTIONS)
    assert summary.dataset["created"] == 3
    assert summary.scores["decision_correct"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary.scores["decision_correct.answerable"] == 1.0
    assert summary.scores["decision_correct.near_miss"] == 0.0
    assert summary.scores["gold_answer_match"] == 1.0
    assert summary.scores["false_answer_rate"] == 0.5
    assert summary.scores["false_refusal_rate"] == 0.0
    assert summary.counts["decision_correct"] == 3
