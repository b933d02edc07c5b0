"""Evaluate the graph on labelled question sets: how often it answers, refuses and leaks.

A question file holds one `{id, question, expected, answers, doc_id, kind}` per line (the SQuAD 2.0
and ClapNQ benchmarks in shared/data, and corpus/questions.jsonl for the bundled textbook). Every
question goes through the real compiled graph, once per policy compared, and the report counts per
kind how many were answered, refused (and why), and for answerable questions how many answers hold
a gold answer.

Correctness rule (`answer_matches`): answer and gold are normalised SQuAD-style (lower case,
punctuation and the articles a/an/the dropped, whitespace collapsed). A short gold answer (at most
`LONG_FORM_WORDS` normalised words) must occur in the answer as a whole-word substring. A longer,
abstractive gold answer (ClapNQ) counts as matched when at least `RECALL_CUTOFF` of its distinct
content words (stop words dropped, lightly stemmed) occur in the answer.

Every distinct text is embedded once per run (`MemoEmbeddings`): the extractive generator embeds
the sentences of the retrieved passages for every question, and those repeat across questions and
across policies. The vectors are the model's own; only repeated work is skipped.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import string
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.embeddings import Embeddings

from graph.state import RefusalReason
from textbound.errors import SetupError, TextboundError
from textbound.text import content_words

__all__ = [
    "LONG_FORM_WORDS",
    "RECALL_CUTOFF",
    "MemoEmbeddings",
    "answer_matches",
    "corpus_fingerprint",
    "eval_command",
    "evaluate",
    "load_questions",
    "normalize_answer",
    "percentile",
    "prepare_graph",
    "refusal_label",
    "run_questions",
    "sample_questions",
    "summarize",
    "write_markdown",
    "write_plots",
]

LONG_FORM_WORDS = 8
"""Gold answers longer than this (normalised words) are scored by content-word recall."""
RECALL_CUTOFF = 0.5
"""Share of a long gold answer's content words the answer must contain to count as correct."""
_NOT_GATED = ("refuse_out_of_scope", "refuse_invalid_question")

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’–—`´")


# --- metrics (pure) ---------------------------------------------------------------------------

def normalize_answer(text: str) -> str:
    """Fold text SQuAD-style: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_matches(answer: str, golds: Sequence[str]) -> bool:
    """Whether the answer contains any gold answer (see the module docstring for the rule)."""
    norm = f" {normalize_answer(answer)} "
    have: set[str] | None = None
    for gold in golds:
        g = normalize_answer(gold)
        if not g:
            continue
        if len(g.split()) <= LONG_FORM_WORDS:
            if f" {g} " in norm:
                return True
            continue
        want = set(content_words(gold))
        if not want:
            continue
        if have is None:
            have = set(content_words(answer))
        if len(want & have) / len(want) >= RECALL_CUTOFF:
            return True
    return False


def percentile(values: Sequence[float], q: float) -> float | None:
    """Return the q-th percentile (0-100, linear interpolation) or None for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


_READER_REFUSALS = (RefusalReason.INSUFFICIENT_CONTEXT, RefusalReason.SELECTED_TEXT_INSUFFICIENT)


def refusal_label(record: dict[str, Any]) -> str:
    """Return the refusal reason, marked " (answerable)" when the answerability reader refused.

    The reader refuses with the same reasons as the score gate (insufficient_context, or
    selected_text_insufficient for a selection); its failed check `answerable` tells them apart.
    """
    reason = str(record.get("refusal_reason"))
    if reason in _READER_REFUSALS and "answerable" in (record.get("failed_checks") or []):
        return f"{reason} (answerable)"
    return reason


def summarize(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate per-question records of one policy into per-kind rates and latencies.

    Each record has `kind`, `expected`, `was_refusal`, `refusal_reason`, `path`, `latency_ms`,
    optionally `failed_checks`, and, for answerable questions, `correct` (None when refused).
    Refusals are counted per `refusal_label`, so the reader's are told apart from the gate's.
    """
    kinds: dict[str, dict[str, Any]] = {}
    latency: dict[str, list[float]] = defaultdict(list)
    total = answered_all = 0
    for r in records:
        total += 1
        k = kinds.setdefault(r["kind"], {"n": 0, "answered": 0, "refusals": Counter(),
                                         "correct": 0, "expected": r["expected"]})
        k["n"] += 1
        if r["was_refusal"]:
            k["refusals"][refusal_label(r)] += 1
        else:
            k["answered"] += 1
            answered_all += 1
            k["correct"] += bool(r.get("correct"))
        if r.get("latency_ms") is not None:
            latency[r["path"]].append(float(r["latency_ms"]))
    out_kinds: dict[str, Any] = {}
    for name in sorted(kinds):
        k = kinds[name]
        row: dict[str, Any] = {
            "n": k["n"],
            "expected": k["expected"],
            "answered": k["answered"],
            "answer_rate": _rate(k["answered"], k["n"]),
            "refusals": dict(sorted(k["refusals"].items())),
        }
        if k["expected"] == "answer":
            row["correct"] = k["correct"]
            row["correct_rate"] = _rate(k["correct"], k["answered"])
            row["correct_of_all"] = _rate(k["correct"], k["n"])
        else:
            row["leak_rate"] = row["answer_rate"]
        out_kinds[name] = row
    lat = {
        path: {"n": len(xs), "p50_ms": round(percentile(xs, 50) or 0.0, 1),
               "p95_ms": round(percentile(xs, 95) or 0.0, 1)}
        for path, xs in sorted(latency.items())
    }
    return {"n": total, "answered": answered_all, "kinds": out_kinds, "latency": lat}


# --- data -------------------------------------------------------------------------------------

def load_questions(path: Path) -> list[dict[str, Any]]:
    """Read a question file; raise SetupError naming the first malformed line."""
    out = []
    try:
        with Path(path).open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                row = json.loads(line)
                missing = [k for k in ("id", "question", "expected", "kind") if k not in row]
                if missing:
                    raise SetupError(f"{path}:{number}: missing {', '.join(missing)}")
                row.setdefault("answers", [])
                out.append(row)
    except (OSError, json.JSONDecodeError) as exc:
        raise SetupError(f"cannot read questions from {path}: {exc}") from exc
    return out


def _hash_key(text: str, salt: str = "") -> int:
    return int(hashlib.sha256(f"{salt}{text}".encode()).hexdigest(), 16)


def sample_questions(questions: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """Return the first `limit` questions (all when None) in a deterministic hash order."""
    ordered = sorted(questions, key=lambda q: _hash_key(str(q["id"]), "sample:"))
    return ordered if limit is None else ordered[:limit]


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def corpus_fingerprint(corpus: Path) -> str:
    """Hash a corpus file, or a folder's files (paths and bytes), to name its collection."""
    corpus = Path(corpus)
    if corpus.is_file():
        return file_sha256(corpus)
    h = hashlib.sha256()
    for f in sorted(p for p in corpus.rglob("*") if p.is_file()):
        if f.suffix == ".jsonl":
            continue  # question files living beside the documents are not corpus
        h.update(str(f.relative_to(corpus)).encode())
        h.update(file_sha256(f).encode())
    return h.hexdigest()


# --- running the graph ------------------------------------------------------------------------

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


def prepare_graph(corpus: Path | None, settings: Any, *,
                  progress: Callable[[str, int, int], None] | None = None
                  ) -> tuple[Any, Any, dict[str, Any]]:
    """Ingest the corpus into its own collection and return (graph, store, ingest info).

    The collection is named after the corpus fingerprint, so an unchanged corpus is reused
    (ingestion is idempotent and then embeds nothing). `corpus` None means settings.corpus_dir.
    """
    from graph.builder import build_graph, build_services
    from textbound.embeddings import build_embeddings
    from textbound.ingest import ingest
    from textbound.store import VectorStore

    corpus = Path(corpus) if corpus is not None else Path(settings.corpus_dir)
    if not corpus.exists():
        raise SetupError(f"corpus {corpus} does not exist")
    fingerprint = corpus_fingerprint(corpus)
    settings = settings.model_copy(update={"collection": f"eval-{fingerprint[:16]}"})
    embeddings = build_embeddings(settings)
    store = VectorStore.from_settings(settings, embeddings)
    t0 = time.perf_counter()
    if corpus.is_file():
        summary = ingest(store, [], jsonl=[corpus], batch_size=settings.embedding_batch_size * 4,
                         progress=progress, sentence_vectors=settings.sentence_vectors)
    else:
        summary = ingest(store, [corpus], batch_size=settings.embedding_batch_size * 4,
                         progress=progress, sentence_vectors=settings.sentence_vectors)
    info = {"corpus": str(corpus), "sha256": fingerprint, "collection": settings.collection,
            "chunks": store.count(), "chunks_added": summary.chunks_added,
            "ingest_seconds": round(time.perf_counter() - t0, 2), "skipped": summary.skipped}
    # the store keeps the raw model, so its identity check sees the model that built it
    services = build_services(settings=settings, embeddings=MemoEmbeddings(embeddings),
                              store=store)
    return build_graph(services=services), store, info


def run_questions(graph: Any, inputs: Sequence[dict[str, Any]], context: dict[str, Any],
                  *, workers: int = 4, on_done: Callable[[], None] | None = None
                  ) -> list[dict[str, Any]]:
    """Invoke the graph on every input with one run context; keep input order."""
    def one(payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return dict(graph.invoke(payload, context=context))
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
    correct = None
    if answerable and not out["was_refusal"]:
        correct = answer_matches(out["answer"], question.get("answers") or [])
    return {
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
    }


def _progress_bar(disable: bool) -> Any:
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


def evaluate(corpus: Path | None, questions_path: Path, settings: Any, *,
             policies: Sequence[str] = ("calibrated",), limit: int | None = None,
             workers: int = 4, quiet: bool = False) -> dict[str, Any]:
    """Run every question through the graph for each policy; return the report and records."""
    questions = sample_questions(load_questions(questions_path), limit)
    with _progress_bar(quiet) as bar:
        ingest_task = bar.add_task("ingest", total=None)

        def ingest_progress(stage: str, done: int, total: int) -> None:
            bar.update(ingest_task, completed=done, total=total)

        t0 = time.perf_counter()
        graph, store, corpus_info = prepare_graph(corpus, settings, progress=ingest_progress)
        bar.update(ingest_task, visible=False)
        inputs = [{"question": q["question"]} for q in questions]
        records: dict[str, list[dict[str, Any]]] = {}
        seconds: dict[str, float] = {}
        try:
            for policy in policies:
                task = bar.add_task(f"eval {policy}", total=len(inputs))
                t1 = time.perf_counter()
                outs = run_questions(graph, inputs, {"policy": policy}, workers=workers,
                                     on_done=functools.partial(bar.advance, task))
                seconds[policy] = round(time.perf_counter() - t1, 2)
                records[policy] = [make_record(q, o) for q, o in zip(questions, outs, strict=True)]
        finally:
            store.close()
        total_seconds = round(time.perf_counter() - t0, 2)

    from graph.context import resolve_tunables

    policies_report = {}
    for policy, recs in records.items():
        tun = resolve_tunables(settings.model_copy(update={"policy": policy}))
        policies_report[policy] = summarize(recs) | {
            "seconds": seconds[policy],
            "tunables": {k: v for k, v in tun.model_dump().items() if k != "calibration"},
            "calibration": {k: v for k, v in tun.calibration.items() if k != "provenance"},
        }
    calib_file = Path(settings.calibration_file) if settings.calibration_file else None
    report = {
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
        "settings": {"embedding_model": settings.embedding_model, "top_k": settings.top_k,
                     "lexical_weight": settings.lexical_weight, "generator": settings.generator,
                     "calibration_file": str(calib_file) if calib_file else None,
                     "calibration_sha256": file_sha256(calib_file)
                     if calib_file and calib_file.is_file() else None},
        "workers": workers,
        "seconds_total": total_seconds,
        "policies": policies_report,
    }
    return {"report": report, "records": records}


# --- writing the report -----------------------------------------------------------------------

def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def write_markdown(report: dict[str, Any], path: Path) -> None:
    """Write a readable summary of the report."""
    lines = [
        f"# Evaluation: {Path(report['questions']['path']).name}",
        "",
        f"- corpus: `{report['corpus']['corpus']}` ({report['corpus']['chunks']} chunks, "
        f"collection `{report['corpus']['collection']}`, ingest "
        f"{report['corpus']['ingest_seconds']} s)",
        f"- questions: {report['questions']['n']}"
        + (f" (deterministic sample, limit {report['questions']['limit']})"
           if report["questions"]["limit"] else ""),
        f"- total time: {report['seconds_total']} s with {report['workers']} worker threads",
        f"- scoring: {report['scoring']['short_gold']}; long answers: "
        f"{report['scoring']['long_gold']}",
        "",
        "Refusals by reason; \"(answerable)\": refused by the answerability reader (failed "
        "check `answerable`) rather than the score gate.",
        "",
        "| policy | kind | n | answered | correct (of answered) | refusals |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for policy, rep in report["policies"].items():
        for kind, k in rep["kinds"].items():
            refusals = ", ".join(f"{r}: {c}" for r, c in k["refusals"].items()) or "–"
            correct = _pct(k.get("correct_rate")) if k["expected"] == "answer" else ""
            lines.append(f"| {policy} | {kind} | {k['n']} | {_pct(k['answer_rate'])} | "
                         f"{correct} | {refusals} |")
    lines += ["", "Latency per path (ms):", "", "| policy | path | n | p50 | p95 |",
              "| --- | --- | ---: | ---: | ---: |"]
    for policy, rep in report["policies"].items():
        for p, lat in rep["latency"].items():
            lines.append(f"| {policy} | {p} | {lat['n']} | {lat['p50_ms']} | {lat['p95_ms']} |")
    lines += ["", "Gate in force:", ""]
    for policy, rep in report["policies"].items():
        c = rep["calibration"]
        reader = (f", answerable_threshold {rep['tunables']['answerable_threshold']}"
                  if rep.get("tunables", {}).get("answerability") else ", answerability off")
        lines.append(f"- {policy}: floor {c['floor']}, answer_threshold "
                     f"{c['answer_threshold']}, weights {c['weights']}"
                     + (f", mean_threshold {c['mean_threshold']}" if c.get("mean_threshold")
                        is not None else "") + reader)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def tradeoff_curve(records: Sequence[dict[str, Any]], feature: str
                   ) -> tuple[list[float], list[float], list[float]]:
    """Sweep a threshold over one gate feature: (thresholds, answered share, leaked share).

    Gate-only: a question counts as answered when its feature reaches the threshold, ignoring
    later checks. Answered is over answerable questions, leaked over refuse-expected ones;
    questions refused before the gate could decide (out of scope, invalid) are left out.
    """
    records = [r for r in records if r.get("path") not in _NOT_GATED]
    pos = [r["features"].get(feature, -math.inf) for r in records if r["expected"] == "answer"]
    neg = [r["features"].get(feature, -math.inf) for r in records if r["expected"] != "answer"]
    finite = sorted({v for v in pos + neg if v != -math.inf})
    thresholds = [finite[0] - 1e-6] + finite if finite else []
    answered = [sum(v >= t for v in pos) / max(len(pos), 1) for t in thresholds]
    leaked = [sum(v >= t for v in neg) / max(len(neg), 1) for t in thresholds]
    return thresholds, answered, leaked


def write_plots(result: dict[str, Any], out: Path, title: str) -> list[str]:
    """Write the PNG plots; return their file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = result["records"]
    report = result["report"]
    first = next(iter(records))
    files = []

    fig, ax = plt.subplots(figsize=(7, 4))
    kinds = sorted({r["kind"] for r in records[first]})
    for kind in kinds:
        xs = [r["features"]["top1"] for r in records[first]
              if r["kind"] == kind and "top1" in r["features"]]
        ax.hist(xs, bins=40, range=(-0.1, 1.0), histtype="step", linewidth=1.6,
                label=f"{kind} (n={len(xs)})")
    ax.set_xlabel("top-1 cosine")
    ax.set_ylabel("questions")
    ax.set_title(f"{title}: top-1 score by kind")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "top1_by_kind.png", dpi=110)
    plt.close(fig)
    files.append("top1_by_kind.png")

    fig, ax = plt.subplots(figsize=(6, 5))
    for feature, recs, label in (("gate_score", records.get("calibrated"),
                                  "calibrated gate score"),
                                 ("top1", records[first], "top-1 cosine")):
        if not recs:
            continue
        _, answered, leaked = tradeoff_curve(recs, feature)
        ax.plot(leaked, answered, label=f"sweep: {label}")
    for policy, rep in report["policies"].items():
        pos = [k for k in rep["kinds"].values() if k["expected"] == "answer"]
        neg = [k for k in rep["kinds"].values() if k["expected"] != "answer"]
        a = sum(k["answered"] for k in pos) / max(sum(k["n"] for k in pos), 1)
        leak = sum(k["answered"] for k in neg) / max(sum(k["n"] for k in neg), 1)
        ax.plot([leak], [a], "o", markersize=8, label=f"{policy} (end to end)")
    ax.set_xlabel("refuse-expected questions answered (leaked)")
    ax.set_ylabel("answerable questions answered")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.set_title(f"{title}: answered vs leaked")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "tradeoff.png", dpi=110)
    plt.close(fig)
    files.append("tradeoff.png")

    reasons = sorted({reason for rep in report["policies"].values()
                      for k in rep["kinds"].values() for reason in k["refusals"]})
    if reasons:
        fig, ax = plt.subplots(figsize=(8, 4))
        width = 0.8 / len(report["policies"])
        for i, (policy, rep) in enumerate(report["policies"].items()):
            counts = [sum(k["refusals"].get(r, 0) for k in rep["kinds"].values())
                      for r in reasons]
            ax.bar([j + i * width for j in range(len(reasons))], counts, width, label=policy)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(reasons))])
        ax.set_xticklabels(reasons, rotation=20, ha="right")
        ax.set_ylabel("refusals")
        ax.set_title(f"{title}: refusals per reason")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "refusals.png", dpi=110)
        plt.close(fig)
        files.append("refusals.png")
    return files


def eval_settings(data_dir: Path | None, calibration: Path | None) -> Any:
    """Return settings for an evaluation run: no audit log, optional data dir and calibration."""
    from textbound.settings import Settings

    values: dict[str, Any] = {"audit_log": ""}
    if data_dir is not None:
        values["data_dir"] = data_dir
    if calibration is not None:
        values["calibration_file"] = calibration
    return Settings(**values)


def eval_command(
    corpus: Annotated[Path | None, typer.Option(
        help="Benchmark corpus (JSONL of {doc_id, title, text}) or a folder of documents. "
        "Default: the bundled textbook.")] = None,
    questions: Annotated[Path | None, typer.Option(
        help="Question file: one {id, question, expected, answers, kind} per line. Default: "
        "the bundled textbook's corpus/questions.jsonl.")] = None,
    out: Annotated[Path, typer.Option(help="Folder for report.json, report.md and plots.")
                   ] = Path("eval-out"),
    policy: Annotated[list[str] | None, typer.Option(
        help="Gate policy to evaluate; repeat to compare (calibrated, seed_000, seed_002, "
        "seed_004).")] = None,
    limit: Annotated[int | None, typer.Option(
        help="Evaluate a deterministic sample of this many questions.")] = None,
    workers: Annotated[int, typer.Option(help="Threads running the graph.")] = 4,
    data_dir: Annotated[Path | None, typer.Option(
        help="Data folder for the evaluation collections (default: TEXTBOUND_DATA_DIR).")] = None,
    calibration: Annotated[Path | None, typer.Option(
        help="Calibration JSON for the calibrated policy (default: the shipped one).")] = None,
    records: Annotated[bool, typer.Option(help="Also write records.jsonl, one per question.")
                       ] = False,
    langsmith: Annotated[bool, typer.Option(
        "--langsmith", help="Also upload the questions as a LangSmith dataset (idempotent) and "
        "run each policy as a LangSmith experiment. Needs LANGSMITH_API_KEY.")] = False,
    dataset: Annotated[str | None, typer.Option(
        help="LangSmith dataset name (default: textbound-<questions file stem>).")] = None,
) -> None:
    """Run a labelled question set through the graph; report answer, refusal and leak rates.

    Example: textbound eval --corpus data/squad2/corpus.jsonl --questions
    data/squad2/questions.dev.jsonl --policy calibrated --policy seed_000 --out eval-squad
    """
    from rich.console import Console

    console = Console(stderr=True)
    if questions is None:
        from textbound.settings import PACKAGE_ROOT

        questions = PACKAGE_ROOT / "corpus" / "questions.jsonl"
    if langsmith:
        from textbound.experiments import require_langsmith_key

        try:
            require_langsmith_key()  # before any ingestion or evaluation
        except TextboundError as exc:
            console.print(f"[bold red]error:[/] {exc}")
            raise typer.Exit(code=2) from exc
    try:
        settings = eval_settings(data_dir, calibration)
        result = evaluate(corpus, questions, settings, policies=policy or ["calibrated"],
                          limit=limit, workers=workers, quiet=not console.is_terminal)
    except TextboundError as exc:
        console.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(code=2) from exc
    out.mkdir(parents=True, exist_ok=True)
    report = result["report"]
    report["plots"] = write_plots(result, out, f"{questions.parent.name}/{questions.stem}")
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    write_markdown(report, out / "report.md")
    if records:
        with (out / "records.jsonl").open("w", encoding="utf-8") as fh:
            for pol, recs in result["records"].items():
                for r in recs:
                    fh.write(json.dumps({"policy": pol} | r) + "\n")
    console.print((out / "report.md").read_text(encoding="utf-8"))
    if langsmith:
        run_experiments(corpus, questions, settings, policy or ["calibrated"], limit,
                        dataset or f"textbound-{questions.stem}", console)


def run_experiments(corpus: Path | None, questions: Path, settings: Any, policies: Sequence[str],
                    limit: int | None, dataset: str, console: Any) -> None:
    """Run each policy as a LangSmith experiment over the same (reused) collection."""
    from textbound.experiments import run_langsmith_experiment

    rows = sample_questions(load_questions(questions), limit)
    graph, store, _ = prepare_graph(corpus, settings)
    try:
        for pol in policies:
            summary = run_langsmith_experiment(
                rows, functools.partial(_invoke_with_policy, graph, pol), dataset_name=dataset,
                experiment_prefix=f"textbound-{pol}", metadata={"policy": pol})
            console.print(f"LangSmith experiment ({pol}): {summary}")
    finally:
        store.close()


def _invoke_with_policy(graph: Any, policy: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return dict(graph.invoke(inputs, context={"policy": policy}))
