"""What the contextualize step costs: the node alone, and a whole follow-up turn against the same
question asked on its own.

    python -m benchmarks.contextualize [--rounds 2] [--reps 20] [--limit N]

On the bundled textbook in a temporary embedded Qdrant, embedded defaults (extractive generator,
so the rule rewrites; no chat model), the graph compiled with an in-memory checkpointer. The
conversations are corpus/conversations.dev.jsonl's.

1. Whole turns: each conversation runs in its own thread, turns in order. Right after each
   follow-up, the standalone question it was rewritten into (`diagnostics.conversation
   .standalone`) is asked again without a thread, as any single question is asked: the same
   retrieval and gates, without history or checkpoint; and once more as the first turn of a new
   thread (checkpointed, no history). The three run one after the other, each going first in
   turn (the store's payload cache favours a later run), so the machine's drift and the caches
   hit them alike; the paired differences are what a follow-up adds over a question asked
   alone, and over the same question opening a thread.
2. The node alone: the `contextualize` node (`nodes/contextualize.py`, with its timing wrapper)
   called directly, `--reps` times each, on the state each turn reached it with (the question
   and the thread's history as the checkpointer held it), and the rule it calls
   (`textbound.conversation.rewrite.rewrite`) on the same inputs. Questions: follow-ups that need
   the
   conversation, stand-alone switches (with history: the rule finds nothing to resolve) and
   first turns (no history).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def pct(values: list[float], p: float) -> float:
    """Return the p-th percentile (nearest rank)."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def row(label: str, values: list[float]) -> str:
    """Format one Markdown table row: n, p50, p95, mean (ms)."""
    return (f"| {label} | {len(values)} | {pct(values, 50):.3f} | {pct(values, 95):.3f} | "
            f"{statistics.fmean(values):.3f} |")


def main() -> None:
    """Run the benchmark and print Markdown tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2, help="passes over the conversations")
    ap.add_argument("--reps", type=int, default=20, help="calls of the node per question")
    ap.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    args = ap.parse_args()

    from langgraph.runtime import Runtime

    from graph.builder import build_graph, build_services
    from graph.context import resolve_tunables
    from nodes.contextualize import contextualize
    from textbound.conversation.rewrite import rewrite
    from textbound.conversation.threads import memory_saver
    from textbound.documents.ingest import ingest
    from textbound.settings import Settings
    from textbound.text import clean_text

    data = Path(tempfile.mkdtemp(prefix="tb-contextualize-"))
    settings = Settings(_env_file=None, data_dir=data, audit_log="")  # type: ignore[call-arg]
    services = build_services(settings=settings)
    ingest(services.store, [REPO / "corpus"])
    graph = build_graph(services=services, checkpointer=memory_saver())
    lines = (REPO / "corpus" / "conversations.dev.jsonl").read_text().splitlines()
    conversations = [json.loads(x) for x in lines][: args.limit]

    for c in conversations[:3]:  # warm-up: model, term statistics, caches
        for t in c["turns"]:
            graph.invoke({"question": t["question"]})

    follow_up: list[float] = []
    alone: list[float] = []
    fresh: list[float] = []
    diffs: list[float] = []
    diffs_fresh: list[float] = []
    in_graph: dict[str, list[float]] = {"needs context": [], "stand-alone switch": [],
                                        "first turn": []}
    inputs: list[tuple[str, str, list[dict[str, Any]]]] = []  # (group, question, history)
    mismatched = 0
    for r in range(args.rounds):
        for c in conversations:
            config = {"configurable": {"thread_id": f"bench-{r}-{c['id']}"}}
            for i, turn in enumerate(c["turns"]):
                group = ("first turn" if i == 0 else "stand-alone switch"
                         if turn["follow_up"] == "standalone" else "needs context")
                history = list(graph.get_state(config).values.get("history") or [])
                if r == 0:
                    inputs.append((group, turn["question"], history))
                if group != "needs context":
                    out = graph.invoke({"question": turn["question"]}, config=config)
                    in_graph[group].append(out["diagnostics"]["timings_ms"]["contextualize"])
                    continue
                # the rule the node applies, so the three runs can take turns going first
                # (the store's payload cache favours whichever runs later)
                standalone = rewrite(clean_text(turn["question"]), history).standalone
                fresh_config = {"configurable": {"thread_id": f"fresh-{r}-{c['id']}-{i}"}}
                runs = [("follow-up", {"question": turn["question"]}, config),
                        ("alone", {"question": standalone}, None),
                        ("fresh", {"question": standalone}, fresh_config)]
                shift = (i + r) % 3
                ms: dict[str, float] = {}
                for name, payload, cfg in runs[shift:] + runs[:shift]:
                    t0 = time.perf_counter()
                    out = graph.invoke(payload, config=cfg)
                    ms[name] = (time.perf_counter() - t0) * 1000
                    if name == "follow-up":
                        in_graph[group].append(out["diagnostics"]["timings_ms"]["contextualize"])
                        got = out["diagnostics"]["conversation"]["standalone"]
                        mismatched += got != standalone
                follow_up.append(ms["follow-up"])
                alone.append(ms["alone"])
                fresh.append(ms["fresh"])
                diffs.append(ms["follow-up"] - ms["alone"])
                diffs_fresh.append(ms["follow-up"] - ms["fresh"])

    base = resolve_tunables(settings)
    node: dict[str, list[float]] = {g: [] for g in in_graph}
    rule: dict[str, list[float]] = {g: [] for g in in_graph}
    for group, question, history in inputs:
        runtime = Runtime(context=replace(base, thread_id="bench"))
        state: Any = {"clean_question": clean_text(question), "history": history}
        for _ in range(args.reps):
            t0 = time.perf_counter()
            contextualize(state, runtime)
            node[group].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            rewrite(state["clean_question"], history)
            rule[group].append((time.perf_counter() - t0) * 1000)

    print(f"{len(conversations)} conversations, {args.rounds} rounds, {args.reps} calls per "
          f"question for the node alone; {mismatched} follow-ups whose graph rewrite differed "
          "from the rule's on the same input\n")
    print("| contextualize (ms) | calls | p50 | p95 | mean |")
    print("|---|--:|--:|--:|--:|")
    for group in node:
        print(row(f"node alone, {group}", node[group]))
    for group in rule:
        print(row(f"rule alone (textbound.conversation.rewrite.rewrite), {group}", rule[group]))
    for group, values in in_graph.items():
        print(row(f"node inside the graph (diagnostics.timings_ms), {group}", values))
    print("\n| whole turn (ms) | turns | p50 | p95 | mean |")
    print("|---|--:|--:|--:|--:|")
    print(row("follow-up in its thread", follow_up))
    print(row("its standalone question asked alone (no thread)", alone))
    print(row("its standalone question as the first turn of a new thread", fresh))
    print(row("paired difference: follow-up minus asked alone", diffs))
    print(row("paired difference: follow-up minus first turn of a new thread", diffs_fresh))
    services.store.close()


if __name__ == "__main__":
    main()
