"""Store a float reader's weights as int8 and keep its arithmetic in float.

    python -m training.answerability.weights_only FLOAT_DIR --out DIR

FLOAT_DIR is a reader folder exported with `python -m training.answerability.export ...
--no-quantize` (model.onnx in float, tokenizer.json, config.json). Every MatMul weight matrix and
every embedding table becomes an int8 initializer with one float scale per output column (per
row for a table), dequantized in the graph by a `DequantizeLinear` node; the arithmetic stays
float. The file is as small as a dynamically quantized one, but no activation is rounded per
batch, so a passage's score no longer depends on the passages read beside it (the model card,
"the same int8 weights in float arithmetic", measures both).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

__all__ = ["MIN_SIZE", "convert", "main"]

MIN_SIZE = 4096
"""Matrices smaller than this many numbers (biases, norms, heads) stay float."""


def _axis(uses: set[tuple[str, int]]) -> int | None:
    """The axis to scale along: output columns of a MatMul weight, rows of a Gather table."""
    if uses and all(u == ("MatMul", 1) for u in uses):
        return 1
    if uses and all(u == ("Gather", 0) for u in uses):
        return 0
    return None


def convert(src: Path, dst: Path) -> int:
    """Write src's graph with int8 weights to dst; return how many matrices were converted."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    uses: dict[str, set[tuple[str, int]]] = {}
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name in inits:
                uses.setdefault(name, set()).add((node.op_type, k))
    added = []
    for name, used in uses.items():
        weights = numpy_helper.to_array(inits[name])
        axis = _axis(used)
        if axis is None or weights.ndim != 2 or weights.dtype != np.float32 \
                or weights.size < MIN_SIZE:
            continue
        top = np.abs(weights).max(axis=1 - axis, keepdims=True)
        scale = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
        q = np.clip(np.round(weights / scale), -127, 127).astype(np.int8)
        graph.initializer.remove(inits[name])
        graph.initializer.extend([
            numpy_helper.from_array(q, f"{name}_int8"),
            numpy_helper.from_array(scale.reshape(-1), f"{name}_scale"),
            numpy_helper.from_array(np.zeros(scale.size, np.int8), f"{name}_zero")])
        added.append(helper.make_node("DequantizeLinear",
                                      [f"{name}_int8", f"{name}_scale", f"{name}_zero"], [name],
                                      axis=axis, name=f"{name}_dequantize"))
    for node in reversed(added):
        graph.node.insert(0, node)
    onnx.checker.check_model(model)
    dst.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(dst))
    return len(added)


def main(argv: list[str] | None = None) -> None:
    """Command line: convert a float reader folder into one with int8 weights."""
    p = argparse.ArgumentParser(prog="python -m training.answerability.weights_only",
                                description=__doc__.splitlines()[0])
    p.add_argument("src", help="a reader folder exported with --no-quantize")
    p.add_argument("--out", required=True, help="the folder to write")
    a = p.parse_args(argv)
    src, out = Path(a.src), Path(a.out)
    for name in ("model.onnx", "tokenizer.json", "config.json"):
        if not (src / name).is_file():
            raise SystemExit(f"{src / name} is missing: export the reader with --no-quantize "
                             "first (python -m training.answerability.export ... --no-quantize)")
    count = convert(src / "model.onnx", out / "model.onnx")
    shutil.copyfile(src / "tokenizer.json", out / "tokenizer.json")
    config = json.loads((src / "config.json").read_text(encoding="utf-8"))
    config["quantized"] = "int8 weights (per channel), float arithmetic"
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    size = (out / "model.onnx").stat().st_size / 2**20
    print(f"wrote {out / 'model.onnx'} ({size:.1f} MiB, {count} matrices int8)")


if __name__ == "__main__":
    main()
