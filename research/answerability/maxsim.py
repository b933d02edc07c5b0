"""ColBERT-style MaxSim on MiniLM token states: does it separate near misses better?

For each question content wordpiece, the best cosine with any wordpiece of the extractive answer,
using the contextual states of MiniLM's last layer (the repo's ONNX graph with its layer-5 output
`l5_x2` exposed). Summaries: min, mean and 25th percentile over the question's pieces.

* `states`: computes MaxSim for a fixed subset (600 SQuAD questions in a hash order, and all
  ClapNQ questions with a draft), prints per-feature AUROC and the time per question, and saves
  OUT/maxsim_subset.json;
* `cv`: on the SQuAD part of that subset (answerable vs near_miss), the 2-fold cross-validated
  AUROC of a small logistic model with and without the MaxSim features.

Run from the repository root: `python -m research.answerability.maxsim states` then `... cv`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from research.answerability.fit import (
    DEFAULT_CALIBRATION,
    DEFAULT_CORPUS,
    DEFAULT_DATA,
    DEFAULT_OUT,
    auroc,
    fit_logistic,
    load_records,
)
from textbound.text import STOPWORDS

SUMMARIES = ("maxsim_min", "maxsim_mean", "maxsim_p25")
BASE = ("top1", "cov2", "draft_cos", "neg_mismatch", "q_neg", "num_miss", "cap_miss")
"""The features the MaxSim ones are added to in `cv`."""


class TokenStates:
    """MiniLM's last-layer token states, from the repo's own ONNX translation of the weights."""

    def __init__(self) -> None:
        import onnx
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from textbound.providers.embeddings import _build_onnx, _bundled_model_dir

        model_dir = _bundled_model_dir()
        graph = onnx.load_from_string(_build_onnx(model_dir / "model.safetensors"))
        graph.graph.output.append(onnx.helper.make_tensor_value_info(
            "l5_x2", onnx.TensorProto.FLOAT, ["B", "L", 384]))
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.session = ort.InferenceSession(graph.SerializeToString(), options,
                                            providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.no_padding()

    def states(self, texts: Sequence[str]) -> list[tuple[Any, np.ndarray]]:
        """Return (encoding, unit-length token states) per text."""
        encodings = self.tokenizer.encode_batch(list(texts))
        length = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), length), np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        _, hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask})
        out = []
        for i, e in enumerate(encodings):
            v = hidden[i, : len(e.ids)]
            out.append((e, v / np.linalg.norm(v, axis=1, keepdims=True)))
        return out

    def maxsim(self, question: str, answer: str) -> dict[str, float]:
        """Return the MaxSim summaries of the question's content pieces against the answer."""
        (qe, qv), (ae, av) = self.states([question, answer])
        keep = []
        for i, (token, word) in enumerate(zip(qe.tokens, qe.word_ids, strict=True)):
            if word is None or not any(c.isalnum() for c in token):
                continue  # [CLS], [SEP], punctuation
            s, e = qe.offsets[i]
            if token.startswith("##") or question[s:e].lower() not in STOPWORDS:
                keep.append(i)
        body = [j for j, word in enumerate(ae.word_ids) if word is not None]
        if not keep or not body:
            return dict.fromkeys(SUMMARIES, 0.0)
        best = (qv[keep] @ av[body].T).max(1)
        return {"maxsim_min": float(best.min()), "maxsim_mean": float(best.mean()),
                "maxsim_p25": float(np.percentile(best, 25))}


def subset(out: Path, squad_n: int = 600) -> list[dict[str, Any]]:
    """Return the fixed subset: the first SQuAD questions in a hash order, and all of ClapNQ."""
    raw = []
    for group in ("squad2", "clapnq"):
        with (out / f"{group}.jsonl").open(encoding="utf-8") as fh:
            raw += [r for r in map(json.loads, fh) if r["draft"]]
    raw.sort(key=lambda r: hashlib.sha256(("m" + r["id"]).encode()).hexdigest())
    return ([r for r in raw if r["group"] == "squad2"][:squad_n]
            + [r for r in raw if r["group"] == "clapnq"])


def cmd_states(out: Path) -> None:
    """Compute, time, save and score MaxSim on the subset."""
    sub = subset(out)
    tokens = TokenStates()
    t0 = time.perf_counter()
    values = {f"{r['group']}:{r['id']}": tokens.maxsim(r["question"], " ".join(r["draft"]))
              for r in sub}
    print(f"{(time.perf_counter() - t0) / len(sub) * 1000:.1f} ms/question over {len(sub)}")
    (out / "maxsim_subset.json").write_text(json.dumps(values), encoding="utf-8")
    for group in ("squad2", "clapnq"):
        for f in SUMMARIES:
            pos = [values[f"{group}:{r['id']}"][f] for r in sub
                   if r["group"] == group and r["kind"] == "answerable"]
            row = []
            for kind in ("near_miss", "out_of_corpus"):
                neg = [values[f"{group}:{r['id']}"][f] for r in sub
                       if r["group"] == group and r["kind"] == kind]
                row.append(f"{kind} {auroc(pos, neg):.3f} (n={len(pos)}/{len(neg)})")
            print(group, f, *row)


def cmd_cv(out: Path, data: Path, corpus: Path, data_dir: Path | None) -> None:
    """Print 2-fold AUROC (SQuAD answerable vs near_miss) with and without MaxSim."""
    values = json.loads((out / "maxsim_subset.json").read_text(encoding="utf-8"))
    gate = json.loads(DEFAULT_CALIBRATION.read_text(encoding="utf-8"))
    records = [r for r in load_records(out, data, corpus, gate, data_dir)
               if f"{r.group}:{r.id}" in values and r.group == "squad2"
               and r.kind != "out_of_corpus"]
    y = np.array([r.kind == "answerable" for r in records], float)
    fold = np.array([int(hashlib.sha256(("cv:" + r.id).encode()).hexdigest(), 16) % 2
                     for r in records])
    print(f"{len(records)} SQuAD questions (answerable and near_miss) of the subset")
    for extra in ((), ("maxsim_mean",), ("maxsim_mean", "maxsim_min")):
        x = np.array([[r.feat[f] for f in BASE] + [values[f"{r.group}:{r.id}"][e] for e in extra]
                      for r in records])
        x = (x - x.mean(0)) / (x.std(0) + 1e-9)
        aurocs = []
        for k in (0, 1):
            train, test = fold != k, fold == k
            w = fit_logistic(x[train], y[train], np.ones(int(train.sum())), l2=1.0)
            s = np.hstack([x[test], np.ones((int(test.sum()), 1))]) @ w
            aurocs.append(auroc(s[y[test] == 1], s[y[test] == 0]))
        print(f"base{''.join(' + ' + e for e in extra)}: folds "
              f"{', '.join(f'{a:.3f}' for a in aurocs)}, mean {np.mean(aurocs):.3f}")


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and run one command."""
    ap = argparse.ArgumentParser(prog="python -m research.answerability.maxsim",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["states", "cv"])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder with the records")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="benchmark data")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the textbook folder")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="textbound data dir for the model cache (default OUT/data)")
    args = ap.parse_args(argv)
    if args.command == "states":
        cmd_states(args.out)
    else:
        cmd_cv(args.out, args.data, args.corpus, args.data_dir)


if __name__ == "__main__":
    main()
