"""HTML conversion time against the number of elements, nested and flat.

    python -m benchmarks.html [--sizes 1000,2000,...] [--old PATH]

Times `textbound.documents.ingest.loaders._html_to_markdown` (what ingestion runs on an .html file,
the parse included) on two shapes: `nested`, n `<div><p>` pairs each inside the previous (the shape
that was quadratic: each block asked for a container parent up the whole depth), and `flat`, n
`<p>` siblings in one `<section>`. Best of three per size. With `--old PATH`, the same on the
loaders module at PATH (e.g. `git show a53256f:textbound/documents/ingest/loaders.py >
/tmp/old.py`), for the sizes it finishes within `--old-max`.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def nested(n: int) -> str:
    """N block elements, each nested in the previous."""
    return ("<html><body>" + "".join(f"<div><p>paragraph {i} of the page</p>" for i in range(n))
            + "</div>" * n + "</body></html>")


def flat(n: int) -> str:
    """N paragraphs side by side."""
    return ("<html><body><section>" + "".join(f"<p>paragraph {i} of the page</p>"
                                              for i in range(n)) + "</section></body></html>")


def best_of(convert: Callable[[str], Any], html: str, runs: int = 3) -> float:
    """Return the fastest of `runs` conversions, in seconds."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        convert(html)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    """Print a Markdown table of conversion times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,4000,8000,16000,32000,64000")
    parser.add_argument("--old", type=Path, help="an older loaders.py to time beside")
    parser.add_argument("--old-max", type=int, default=4000, help="largest size for --old")
    args = parser.parse_args()
    from textbound.documents.ingest.loaders import _html_to_markdown

    old = None
    if args.old:
        spec = importlib.util.spec_from_file_location("old_loaders", args.old)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        old = module._html_to_markdown
    print("| shape | elements | HTML KB | seconds | s per 1k elements |"
          + (" before, seconds |" if old else ""))
    print("|---|--:|--:|--:|--:|" + ("--:|" if old else ""))
    for shape, make in (("nested", nested), ("flat", flat)):
        for n in (int(s) for s in args.sizes.split(",")):
            html = make(n)
            s = best_of(_html_to_markdown, html)
            row = f"| {shape} | {n:,} | {len(html) / 1000:,.0f} | {s:.2f} | {s / n * 1000:.3f} |"
            if old:
                row += f" {best_of(old, html, 1):.2f} |" if n <= args.old_max else " - |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
