"""Run `textbound eval` in this process, saving the inputs of every extractive composition.

    python -m benchmarks.lead_capture OUT.pkl eval --corpus ... --questions ... --records ...

The generate node's `extractive_draft` is wrapped for the run: each call's question, evidence,
query vector, stored unit vectors, reader anchor, the book's command heads and the IDF weights of
the question's words are pickled to OUT.pkl when the run ends, so `benchmarks.lead_fit` can
replay every composition with other lead weights without running the graph again. The answers
are the eval's own, unchanged.
"""

from __future__ import annotations

import pickle
import sys
import threading
from pathlib import Path
from typing import Any

import nodes.generate as generate
from textbound.text import content_words


def capture(out: Path, argv: list[str]) -> int:
    """Run the CLI with `argv`, capturing compositions to `out`; return how many were captured."""
    original = generate.extractive_draft
    caught: list[dict[str, Any]] = []
    lock = threading.Lock()

    def wrapper(question: str, evidence: list[Any], embeddings: Any, **kw: Any) -> Any:
        weigh = kw.get("weigh")
        item = {"question": question, "evidence": evidence,
                "weights": {t: weigh(t) for t in set(content_words(question))} if weigh else {},
                "query_vector": kw.get("query_vector"), "stored": kw.get("stored") or {},
                "anchor": kw.get("anchor"),
                "heads": kw.get("heads") or frozenset()}
        with lock:
            caught.append(item)
        return original(question, evidence, embeddings, **kw)

    generate.extractive_draft = wrapper  # type: ignore[assignment]
    from textbound.serving.cli import app
    try:
        app(args=argv, standalone_mode=False)
    finally:
        generate.extractive_draft = original  # type: ignore[assignment]
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("wb") as fh:
            pickle.dump(caught, fh)
    return len(caught)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    n = capture(Path(sys.argv[1]), sys.argv[2:])
    print(f"captured {n} compositions to {sys.argv[1]}", file=sys.stderr)
