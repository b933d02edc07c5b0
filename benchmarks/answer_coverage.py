"""What min_answer_coverage trades: answered share per kind at several thresholds.

    python -m benchmarks.answer_coverage [--every 3] [--questions FILE --corpus FILE]

Runs the graph (shipped calibration, extractive generator, coverage check off) once per question
of every N-th SQuAD dev question, then computes for each answer the IDF-weighted share of the
question's words held by the answer's sentences and cited section titles: the quantity
validate_grounding compares with min_answer_coverage. One pass serves every threshold because
the check only removes answers.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SQUAD = REPO.parent / "shared" / "data" / "squad2"


def main() -> None:
    """Run and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--every", type=int, default=3, help="take every N-th question")
    ap.add_argument("--questions", default=str(SQUAD / "questions.dev.jsonl"))
    ap.add_argument("--corpus", default=str(SQUAD / "corpus.jsonl"))
    args = ap.parse_args()

    from graph.builder import build_graph, build_services
    from textbound.answer.evidence import coverage, question_terms
    from textbound.documents.ingest import ingest
    from textbound.settings import Settings

    data = Path(tempfile.mkdtemp(prefix="tb-answer-coverage-"))
    settings = Settings(_env_file=None, data_dir=data, audit_log="")  # type: ignore[call-arg]
    services = build_services(settings=settings)
    ingest(services.store, jsonl=[Path(args.corpus)])
    graph = build_graph(services=services)
    idf = services.store.term_stats().idf
    questions = [json.loads(x) for x in Path(args.questions).read_text().splitlines()]
    questions = questions[:: args.every]
    rows: dict[str, list[float | None]] = defaultdict(list)
    for q in questions:
        out = graph.invoke({"question": q["question"]})
        if out["was_refusal"]:
            rows[q["kind"]].append(None)
            continue
        heads = " ".join(s["section"] for s in out["sources"])
        rows[q["kind"]].append(coverage(question_terms(q["question"]),
                                        out["answer"] + " " + heads, idf))
    kinds = sorted(rows)
    print(f"questions: {len(questions)} (every {args.every}th of {Path(args.questions).name})")
    print("| min_answer_coverage | " + " | ".join(f"{k} answered" for k in kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    for th in (0.0, 0.3, 0.4, 0.5):
        cells = []
        for k in kinds:
            vals = rows[k]
            kept = sum(1 for v in vals if v is not None and v >= th)
            cells.append(f"{kept / len(vals):.1%}")
        print(f"| {th} | " + " | ".join(cells) + " |")
    services.store.close()


if __name__ == "__main__":
    main()
