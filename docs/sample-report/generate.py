"""Regenerate the sample refusal report in this folder from real graph runs.

1. Ingests the bundled textbook (corpus/) into a temporary embedded Qdrant.
2. Runs the graph (extractive generator, default settings) once on each of the 90 labelled
   questions in corpus/questions.jsonl; each run writes its real audit line.
3. Replays those real lines as four weeks of simulated traffic: each question gets a fixed
   popularity (Zipf-like, seeded), and its copies get new timestamps and session ids. Only the
   timestamp and session_id fields are rewritten; every other field is what the graph wrote.
4. Runs `textbound report` on that log with the textbook collection naming the topics.

    .venv/bin/python docs/sample-report/generate.py
"""

from __future__ import annotations

import json
import random
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from graph.builder import build_graph
from textbound.providers.embeddings import build_embeddings
from textbound.quality.analytics import build_report
from textbound.settings import PACKAGE_ROOT

HERE = Path(__file__).resolve().parent
CORPUS = PACKAGE_ROOT / "corpus"


def main() -> None:
    """Run the graph on the labelled questions, simulate traffic, and write the report."""
    rng = random.Random(2024)
    questions = [json.loads(line) for line in (CORPUS / "questions.jsonl").open(encoding="utf-8")]
    with tempfile.TemporaryDirectory() as tmp:
        from textbound.documents.ingest import ingest
        from textbound.documents.store import VectorStore
        from textbound.settings import Settings

        data = Path(tmp)
        settings = Settings(_env_file=None, data_dir=data,  # type: ignore[call-arg]
                            audit_log=data / "graph-runs.jsonl")
        embeddings = build_embeddings(settings)
        store = VectorStore.from_settings(settings, embeddings)
        ingest(store, [CORPUS])
        graph = build_graph(settings=settings, embeddings=embeddings, store=store)
        for q in questions:
            graph.invoke({"question": q["question"], "session_id": "sample-real"})
        store.close()
        real = [json.loads(line) for line in settings.audit_log.open(encoding="utf-8")]
        assert len(real) == len(questions), "one audit line per question"

        order = list(range(len(real)))
        rng.shuffle(order)
        popularity = {i: 1 / (rank + 1) ** 0.9 for rank, i in enumerate(order)}
        start = datetime(2025, 3, 3, tzinfo=UTC)
        log = Path(tempfile.gettempdir()) / "textbound-sample-audit.jsonl"
        lines = 0
        with log.open("w", encoding="utf-8") as f:
            for day in range(28):
                n = rng.randint(35, 70) + (20 if day % 7 < 5 else 0)
                for _ in range(n):
                    i = rng.choices(range(len(real)), weights=[popularity[j] for j in
                                                               range(len(real))])[0]
                    rec = dict(real[i])
                    ts = start + timedelta(days=day, seconds=rng.randrange(86400))
                    rec["timestamp"] = ts.isoformat(timespec="milliseconds").replace(
                        "+00:00", "Z")
                    rec["session_id"] = f"sim-{rng.randrange(400)}"
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    lines += 1
        result = build_report(log, HERE, settings=settings)
        print(f"{lines} simulated lines from {len(real)} real runs; wrote "
              + ", ".join(p.name for p in result.files))


if __name__ == "__main__":
    main()
