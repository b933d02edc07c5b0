"""Recover the torch reader's weights from a shipped int8 ONNX model, to train on from there.

    python -m training.answerability.from_onnx models/answerability --out RUN/init.safetensors

The shipped model.onnx is the only copy of the trained reader (no fp32 checkpoint was kept).
`export.py` quantized it with ONNX Runtime's dynamic quantization, per channel, which leaves:

* every nn.Linear as a MatMulInteger node named `/<module>/MatMul_quant` (or
  `/<module>/Gemm_MatMul_quant` for the heads), its weight transposed ([in, out]) as int8 with a
  float scale and an int8 zero point per output column;
* the three embeddings as a Gather on uint8 weights followed by a DequantizeLinear with one
  scale and zero point for the whole table;
* biases and LayerNorm parameters as float32 initializers under their torch names.

Dequantized, `(q - zero_point) * scale`, these give a ReaderNet whose outputs match the ONNX
model's up to the activation quantization that ONNX Runtime adds at run time.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

__all__ = ["onnx_state_dict", "load_onnx_into", "compare", "main"]

_MATMUL = re.compile(r"^/(?P<module>[\w./]+?)/(?:Gemm_)?MatMul_quant$")
_GATHER = re.compile(r"^/(?P<module>word|position|token_type)/Gather_output_0_DequantizeLinear$")


def _dequantize(q: np.ndarray, scale: np.ndarray, zero: np.ndarray, axis: int | None) -> np.ndarray:
    q = q.astype(np.float32)
    scale = scale.astype(np.float32)
    zero = zero.astype(np.float32)
    if axis is not None and scale.ndim == 1 and q.ndim == 2:
        shape = [1, 1]
        shape[axis] = -1
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return (q - zero) * scale


def onnx_state_dict(model_path: Path) -> dict[str, np.ndarray]:
    """Return {torch parameter name: float32 array} for every ReaderNet parameter in the file.

    Raises ValueError when a parameter the graph should hold is missing, so a file of another
    layout fails loudly instead of leaving weights at their initial values.
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(model_path))
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    out: dict[str, np.ndarray] = {}
    for name, arr in init.items():  # float parameters kept under their torch names
        if arr.dtype == np.float32 and (name.endswith(".bias") or name.endswith("norm.weight")):
            out[name] = arr.astype(np.float32)
    for node in model.graph.node:
        m = _MATMUL.match(node.name)
        if node.op_type == "MatMulInteger" and m:
            w, wz = node.input[1], node.input[3]
            base = w.removesuffix("_quantized")
            scale = init[f"{base}_scale"]
            # [in, out] with one scale per output column; torch keeps [out, in]
            module = m.group("module").replace("/", ".")
            out[f"{module}.weight"] = _dequantize(init[w], scale, init[wz], axis=1).T
            continue
        g = _GATHER.match(node.name)
        if node.op_type == "DequantizeLinear" and g:
            mod = g.group("module")
            out[f"{mod}.weight"] = _dequantize(init[f"{mod}.weight_quantized"],
                                               init[node.input[1]], init[node.input[2]], None)
    from training.answerability.model import ReaderNet

    want = {k: tuple(v.shape) for k, v in ReaderNet().state_dict().items()}
    missing = sorted(set(want) - set(out))
    if missing:
        raise ValueError(f"{model_path}: no weights found for {missing}")
    wrong = [k for k in want if tuple(out[k].shape) != want[k]]
    if wrong:
        raise ValueError(f"{model_path}: shapes differ for {wrong}")
    return {k: np.ascontiguousarray(out[k]) for k in want}


def load_onnx_into(net, model_path: Path) -> None:  # noqa: ANN001 - a ReaderNet
    """Load a quantized ONNX reader's dequantized weights into `net` (all parameters)."""
    import torch

    state = onnx_state_dict(model_path)
    net.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})


def compare(model_dir: Path, data: Path, n: int, threads: int = 1) -> dict:
    """Torch (dequantized weights, fp32) against the ONNX file itself, on the same inputs.

    Answer logits on n training pairs (the first n of a seeded build), and AUROC answerable vs
    near-miss on n SQuAD 2.0 dev questions with their gold passages (every n-th question, chunk
    windows as the runtime reads them) for both.
    """
    import onnxruntime as ort
    import torch

    from training.answerability.data import build_pairs, load_questions
    from training.answerability.evaluate import auroc, read_passages
    from training.answerability.features import collate, encode_pairs, load_tokenizer
    from training.answerability.model import ReaderNet

    torch.set_num_threads(threads)
    net = ReaderNet()
    load_onnx_into(net, model_dir / "model.onnx")
    net.eval()
    tok = load_tokenizer(model_dir / "tokenizer.json")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(str(model_dir / "model.onnx"), opts,
                                providers=["CPUExecutionProvider"])
    names = ("input_ids", "attention_mask", "token_type_ids")

    def onnx_logits(batch: dict) -> np.ndarray:
        return sess.run(["answer_logit"], {k: batch[k] for k in names})[0]

    rows = load_questions(data / "train", limit=max(n, 50))
    encs = encode_pairs(build_pairs(rows, seed=1, holdout=False)[:n], tok, 256)
    got, want = [], []
    for k in range(0, len(encs), 16):
        b = collate(encs[k: k + 16])
        got.append(onnx_logits(b))
        with torch.no_grad():
            want.append(net(*(torch.from_numpy(b[x]) for x in names))[0].numpy())
    g, w = np.concatenate(got), np.concatenate(want)
    corpus = {}
    with (data / "squad2" / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            corpus[d["doc_id"]] = d["text"]
    qs = []
    with (data / "squad2" / "questions.dev.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if q["kind"] in ("answerable", "near_miss") and q["doc_id"] in corpus:
                qs.append(q)
    qs = qs[:: max(1, len(qs) // n)][:n]
    items = [(q["question"], corpus[q["doc_id"]]) for q in qs]
    ans = np.array([q["kind"] == "answerable" for q in qs])
    t_scores = np.array([x[0] for x in read_passages(net, tok, items, torch.device("cpu"))])
    from textbound.answer.answerability import OnnxReader

    reader = OnnxReader(model_dir, threads=threads)
    o_scores = np.array([reader.read(q, [("gold", t)])[0].score for q, t in items])
    return {"pairs": len(g), "answer_logit_max_abs_diff": round(float(np.abs(g - w).max()), 4),
            "answer_logit_mean_abs_diff": round(float(np.abs(g - w).mean()), 4),
            "answer_logit_corr": round(float(np.corrcoef(g, w)[0, 1]), 5),
            "squad2_dev_questions": len(qs), "squad2_answerable": int(ans.sum()),
            "squad2_auroc_torch": round(auroc(t_scores[ans], t_scores[~ans]), 4),
            "squad2_auroc_onnx": round(auroc(o_scores[ans], o_scores[~ans]), 4)}


def main(argv: list[str] | None = None) -> None:
    """Write the dequantized weights as reader.safetensors-style file."""
    p = argparse.ArgumentParser(prog="python -m training.answerability.from_onnx",
                                description=__doc__.splitlines()[0])
    p.add_argument("model", help="model folder holding model.onnx, or the .onnx file")
    p.add_argument("--out", default=None, help="safetensors file to write")
    p.add_argument("--check", type=int, default=0, metavar="N",
                   help="compare torch with the ONNX file on N training pairs and N SQuAD 2.0 "
                        "dev questions (needs ../shared/data), print the figures as JSON")
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[3] / "shared" / "data"))
    a = p.parse_args(argv)
    if a.check:
        model_dir = Path(a.model) if Path(a.model).is_dir() else Path(a.model).parent
        print(json.dumps(compare(model_dir, Path(a.data), a.check), indent=2))
    if not a.out:
        return
    import torch
    from safetensors.torch import save_file

    path = Path(a.model)
    path = path / "model.onnx" if path.is_dir() else path
    state = onnx_state_dict(path)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    save_file({k: torch.from_numpy(v) for k, v in state.items()}, a.out)
    print(f"wrote {a.out}: {len(state)} tensors from {path}")


if __name__ == "__main__":
    main()
