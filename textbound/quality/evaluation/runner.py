"""Run labelled questions through the real compiled graph, once per policy compared.

Every distinct text is embedded once per run (`MemoEmbeddings`): the extractive generator embeds
the sentences of the retrieved passages for every question, and those repeat across questions and
across policies. The vectors are the model's own; only repeated work is skipped.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from textbound.errors import SetupError
from textbound.quality.evaluation.conversations import (
    REWRITE_F1,
    REWRITE_RECOVERED,
    is_conversation_file,
    load_conversations,
    run_conversations,
    summarize_conversations,
)
from textbound.quality.evaluation.data import (
    corpus_fingerprint,
    file_sha256,
    load_questions,
    sample_questions,
)
from textbound.quality.evaluation.failures import breakdown, classify, gold_in_chunks, let_through
from textbound.quality.evaluation.journal import run_journaled
from textbound.quality.evaluation.metrics import (
    LONG_FORM_WORDS,
    RECALL_CUTOFF,
    answer_matches,
    summarize,
)
from textbound.settings import Settings


class MemoEmbeddings(Embeddings):
    """Wrap an embeddings model so each distinct text is embedded once (thread-safe)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.model_name = getattr(inner, "model_name", None) or getattr(inner, "model", None)
        self.dimension = getattr(inner, "dimension", None)
        self._docs: dict[str, list[float]] = {}
        self._queries: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts, computing only those not seen before."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._docs))
        if missing:
            vectors = self.inner.embed_documents(missing)
            with self._lock:
                self._docs.update(zip(missing, vectors, strict=True))
        with self._lock:
            return [self._docs[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query once."""
        with self._lock:
            hit = self._queries.get(text)
        if hit is None:
            hit = self.inner.embed_query(text)
            with self._lock:
                self._queries[text] = hit
        return hit


@contextmanager
def prepared_graph(corpus: Path | None, settings: Settings, *,
                   progress: Callable[[str, int, int], None] | None = None,
                   checkpointer: Any = None) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
    """Ingest the corpus into its own collection; yield (graph, store, ingest info).

    The store is closed when the `with` block ends, however it ends (also when ingestion fails).
    The collection is named after the corpus fingerprint, so an unchanged corpus is reused
    (ingestion is idempotent and then embeds nothing). `corpus` None means settings.corpus_dir.
    A `checkpointer` compiles the graph with one (conversations need it); None leaves it out.
    """
    from graph.builder import build_graph, build_services
    from textbound.documents.ingest import ingest
    from textbound.documents.store import opened_store
    from textbound.providers.embeddings import build_embeddings

    corpus = Path(corpus) if corpus is not None else Path(settings.corpus_dir)
    if not corpus.exists():
        raise SetupError(f"corpus {corpus} does not exist")
    fingerprint = corpus_fingerprint(corpus)
    settings = settings.model_copy(update={"collection": f"eval-{fingerprint[:16]}"})
    embeddings = build_embeddings(settings)
    with opened_store(settings, embeddings) as store:
        t0 = time.perf_counter()
        if corpus.is_file():
            summary = ingest(store, [], jsonl=[corpus],
                             batch_size=settings.embedding_batch_size * 4, progress=progress,
                             sentence_vectors=settings.sentence_vectors)
        else:
            summary = ingest(store, [corpus], batch_size=settings.embedding_batch_size * 4,
                             progress=progress, sentence_vectors=settings.sentence_vectors)
        info = {"corpus": str(corpus), "sha256": fingerprint, "collection": settings.collection,
                "chunks": store.count(), "chunks_added": summary.chunks_added,
                "ingest_seconds": round(time.perf_counter() - t0, 2), "skipped": summary.skipped}
        # the store keeps the raw model, so its identity check sees the model that built it
        services = build_services(settings=settings, embeddings=MemoEmbeddings(embeddings),
                                  store=store)
        extra = {"checkpointer": checkpointer} if checkpointer is not None else {}
        yield build_graph(services=services, **extra), store, info


def run_questions(graph: Any, inputs: Sequence[dict[str, Any]], context: dict[str, Any],
                  *, workers: int = 4, on_done: Callable[[], None] | None = None
                  ) -> list[dict[str, Any]]:
    """Invoke the graph on every input with one run context; keep input order."""
    # the response contract plus the retrieved chunks, for the failure breakdown
    keys = [*graph.output_channels, "chunks"] if isinstance(graph.output_channels, list) else None

    def one(payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return dict(graph.invoke(payload, context=context, output_keys=keys))
        finally:
            if on_done is not None:
                on_done()

    if workers <= 1:
        return [one(p) for p in inputs]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="eval") as pool:
        return list(pool.map(one, inputs))


def make_record(question: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """Reduce a graph response to what the report needs."""
    diag = out.get("diagnostics") or {}
    features = (diag.get("gate") or {}).get("features") or {}
    answerable = question["expected"] == "answer"
    golds = question.get("answers") or []
    correct = None
    if answerable and not out["was_refusal"]:
        correct = answer_matches(out["answer"], golds)
    reader = diag.get("answerability") or {}
    record = {
        "id": question["id"],
        "kind": question["kind"],
        "expected": question["expected"],
        "was_refusal": bool(out["was_refusal"]),
        "refusal_reason": out.get("refusal_reason"),
        "path": diag.get("path"),
        "failed_checks": list(diag.get("failed_checks") or []),
        "answerable_score": (diag.get("answerability") or {}).get("score"),
        "correct": correct,
        "features": features,
        "latency_ms": diag.get("latency_ms"),
        "question": question["question"],
        "answers": golds,
        "answer": out.get("answer"),
        "sources": [{"section": s.get("section"), "score": s.get("score"),
                     "chunk_id": s.get("chunk_id")} for s in out.get("sources") or []],
        "retrieved": [{"chunk_id": c["chunk_id"], "score": round(float(c["score"]), 4),
                       "section": (c.get("metadata") or {}).get("section")}
                      for c in out.get("chunks") or []],
        "gold_chunks": gold_in_chunks(out.get("chunks") or [], golds) if answerable else [],
        "reader_span": reader.get("span_text"),
        "reader_score": reader.get("score"),
    }
    record["failure"] = classify(record)
    record["let_through"] = let_through(diag) if record["failure"] == "leaked" else None
    return record


def progress_bar(disable: bool) -> Any:
    """Return a rich progress bar on stderr (shared with `textbound calibrate`)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), disable=disable)


def evaluate(corpus: Path | None, questions_path: Path, settings: Settings, *,
             policies: Sequence[str] = ("calibrated",), limit: int | None = None,
             workers: int = 4, quiet: bool = False, generator: str | None = None,
             journal: Path | None = None) -> dict[str, Any]:
    """Run every question through the graph for each policy; return the report and records.

    `generator` overrides the settings' generator for the run; "peer" answers with a plain
    RAG chain over the graph's own retrieval instead (evaluation/peer.py). With a `journal`
    folder the run is resumable: one question at a time, each record (with its draft) appended
    to <journal>/<policy>.jsonl as it is done, and questions already there are not run again.

    A conversation file (lines with `turns`, see `conversations`) runs each conversation in its
    own thread of a graph compiled with an in-memory checkpointer, turns in order, one record
    per turn; `limit` then samples conversations, and the journal is not used (a conversation
    resumed half-way would lose its thread). The report gains `conversations`, per policy.
    """
    conversational = is_conversation_file(questions_path)
    peer_model = None
    if generator == "peer":
        if conversational or journal is None:
            raise SetupError("--generator peer runs single questions with a journal (--out)")
        from textbound.providers.chat import build_chat_model

        peer_model = build_chat_model(settings)  # no chat model: say so before ingesting
    if conversational:
        conversations = sample_questions(load_conversations(questions_path), limit)
        questions = [t for c in conversations for t in c["turns"]]
        journal = None
    else:
        questions = sample_questions(load_questions(questions_path), limit)
    with progress_bar(quiet) as bar:
        ingest_task = bar.add_task("ingest", total=None)

        def ingest_progress(stage: str, done: int, total: int) -> None:
            bar.update(ingest_task, completed=done, total=total)

        t0 = time.perf_counter()
        inputs = [{"question": q["question"]} for q in questions]
        records: dict[str, list[dict[str, Any]]] = {}
        seconds: dict[str, float] = {}
        checkpointer = _memory_checkpointer() if conversational else None
        with prepared_graph(corpus, settings, progress=ingest_progress,
                            checkpointer=checkpointer) as (graph, _, corpus_info):
            bar.update(ingest_task, visible=False)
            for policy in policies:
                task = bar.add_task(f"eval {policy}", total=len(inputs))
                t1 = time.perf_counter()
                context = {"policy": policy} | ({"generator": generator} if generator else {})
                if conversational:
                    records[policy] = run_conversations(
                        graph, conversations, context, make_record,
                        thread_prefix=f"eval-{policy}", workers=workers,
                        on_done=functools.partial(bar.advance, task))
                    seconds[policy] = round(time.perf_counter() - t1, 2)
                    continue
                if journal is not None and generator == "peer":
                    # the graph only retrieves; the chain answers (evaluation/peer.py)
                    records[policy] = run_journaled(
                        graph, questions, {"policy": policy, "generator": "peer"},
                        journal / f"{policy}.jsonl", make_record,
                        on_done=functools.partial(bar.advance, task),
                        answer=_peer_answerer(peer_model, policy))
                    seconds[policy] = round(sum(r["seconds"] for r in records[policy]), 2)
                    continue
                if journal is not None:
                    records[policy] = run_journaled(
                        graph, questions, context, journal / f"{policy}.jsonl", make_record,
                        on_done=functools.partial(bar.advance, task))
                    seconds[policy] = round(sum(r["seconds"] for r in records[policy]), 2)
                    continue
                outs = run_questions(graph, inputs, context, workers=workers,
                                     on_done=functools.partial(bar.advance, task))
                seconds[policy] = round(time.perf_counter() - t1, 2)
                records[policy] = [make_record(q, o) for q, o in zip(questions, outs, strict=True)]
        total_seconds = round(time.perf_counter() - t0, 2)

    from graph.context import resolve_tunables

    policies_report = {}
    for policy, recs in records.items():
        tun = resolve_tunables(settings.model_copy(update={"policy": policy}))
        policies_report[policy] = summarize(recs) | {
            "failures": breakdown(recs),
            "seconds": seconds[policy],
            "tunables": tun.tunables() | {
                "max_question_chars": tun.max_question_chars,
                "max_selected_text_chars": tun.max_selected_text_chars},
            "calibration": tun.gate.rule_dict(),
        }
    calib_file = Path(settings.calibration_file) if settings.calibration_file else None
    tuned = settings.tunable_values()
    report: dict[str, Any] = {
        "questions": {"path": str(questions_path), "sha256": file_sha256(questions_path),
                      "n": len(questions), "limit": limit},
        "corpus": corpus_info,
        "scoring": {
            "short_gold": f"normalised gold (<= {LONG_FORM_WORDS} words) is a whole-word "
                          "substring of the normalised answer",
            "long_gold": f">= {RECALL_CUTOFF:.0%} of the gold answer's content words occur "
                         "in the answer",
            "correct_rate": "share of answered answerable questions whose answer matches a gold",
            "leak_rate": "share of refuse-expected questions that were answered",
        },
        "settings": {"embedding_model": settings.embedding_model, "top_k": tuned.top_k,
                     "lexical_weight": tuned.lexical_weight,
                     "generator": generator or tuned.generator,
                     "calibration_file": str(calib_file) if calib_file else None,
                     "calibration_sha256": file_sha256(calib_file)
                     if calib_file and calib_file.is_file() else None},
        "workers": 1 if journal is not None else workers,
        "seconds_total": total_seconds,
        "policies": policies_report,
    }
    if conversational:
        report["questions"]["conversations"] = len(conversations)
        report["scoring"]["rewrite"] = (
            "a follow-up's standalone question (diagnostics.conversation.standalone) is right "
            f"when it brings in >= {REWRITE_RECOVERED:.0%} of the gold standalone question's "
            "content words that the asked question lacks, and its content-word F1 against the "
            f"gold is >= {REWRITE_F1}")
        report["conversations"] = {policy: summarize_conversations(recs)
                                   for policy, recs in records.items()}
    return {"report": report, "records": records}


def _peer_answerer(model: Any, policy: str) -> Callable[..., Any]:
    """Return the peer's one-question answerer: the chat model in a plain chain."""
    from textbound.quality.evaluation.peer import peer_answer, peer_chain

    chain = peer_chain(model)

    def answer(graph: Any, payload: dict[str, Any], _: dict[str, Any]) -> Any:
        return peer_answer(graph, chain, payload, {"policy": policy})

    return answer


def _memory_checkpointer() -> Any:
    """Return a fresh in-memory checkpointer: evaluation threads live only for the run."""
    from textbound.conversation.threads import memory_saver

    return memory_saver()
