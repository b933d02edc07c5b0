"""Per-path latency of the gated graph against a plain LangChain retrieval chain.

    python -m benchmarks.latency [--rounds 30]

On the bundled textbook in a temporary embedded Qdrant, with embedded defaults (extractive
generator, no chat model). Paths: refusal before retrieval (invalid/greeting), refusal after
retrieval (out-of-corpus questions), answer (answerable questions). The baseline is the plain
chain a LangChain user would write over the same store and embeddings: a retriever
(`QdrantVectorStore.as_retriever(k=5)`) piped into a prompt template that stuffs the context,
with no model call: it measures what retrieval costs without any gate.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def pct(values: list[float], p: float) -> float:
    """Return the p-th percentile (nearest rank)."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def main() -> None:
    """Run the benchmark and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=30, help="passes over the question set")
    args = ap.parse_args()

    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    from graph.builder import build_graph, build_services
    from textbound.documents.ingest import ingest
    from textbound.settings import Settings

    data = Path(tempfile.mkdtemp(prefix="tb-latency-"))
    settings = Settings(_env_file=None, data_dir=data, audit_log=data / "audit.jsonl")  # type: ignore[call-arg]
    services = build_services(settings=settings)
    ingest(services.store, [REPO / "corpus"])
    graph = build_graph(services=services)
    lines = (REPO / "corpus" / "questions.jsonl").read_text().splitlines()
    questions = [json.loads(x) for x in lines]
    answerable = [q["question"] for q in questions if q["kind"] == "answerable"][:12]
    off = [q["question"] for q in questions if q["kind"] == "out_of_corpus"][:8]
    before = ["", "hello", "   ", "thank you"]

    retriever = services.store.as_langchain().as_retriever(search_kwargs={"k": 5})
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer only from the context.\n\n{context}"), ("human", "{question}")])
    chain = ({"context": retriever | RunnableLambda(
        lambda docs: "\n\n".join(d.page_content for d in docs)), "question": RunnablePassthrough()}
        | prompt)

    for q in answerable + off + before:  # warm-up: model, term statistics, caches
        graph.invoke({"question": q})
        chain.invoke(q or "x")

    times: dict[str, list[float]] = {}
    paths: dict[str, str] = {}
    for _ in range(args.rounds):
        for label, qs in (("refusal before retrieval", before),
                          ("refusal after retrieval", off), ("answer", answerable)):
            for q in qs:
                t0 = time.perf_counter()
                out = graph.invoke({"question": q})
                times.setdefault(label, []).append((time.perf_counter() - t0) * 1000)
                paths.setdefault(label, out["diagnostics"]["path"])
            if label != "refusal before retrieval":
                for q in qs:
                    t0 = time.perf_counter()
                    chain.invoke(q)
                    times.setdefault(f"plain chain ({label} questions)", []).append(
                        (time.perf_counter() - t0) * 1000)
    refusal_reasons = {graph.invoke({"question": q})["refusal_reason"] for q in off}
    print(f"refusal reasons on the out-of-corpus questions: {sorted(map(str, refusal_reasons))}")
    print("| path | n | p50 ms | p95 ms | mean ms |")
    print("|---|---|---|---|---|")
    for label, vals in times.items():
        print(f"| {label} | {len(vals)} | {pct(vals, 50):.1f} | {pct(vals, 95):.1f} | "
              f"{statistics.fmean(vals):.1f} |")
    g = pct(times["answer"], 50) / pct(times["plain chain (answer questions)"], 50)
    r = pct(times["refusal after retrieval"], 50) / pct(
        times["plain chain (refusal after retrieval questions)"], 50)
    print(f"\ngated/plain p50 ratio: answers {g:.2f}x, refusals after retrieval {r:.2f}x")
    services.store.close()


if __name__ == "__main__":
    main()
