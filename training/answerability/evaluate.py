"""Reader metrics: held-out pairs, and the dev sets read with their gold passages.

`python -m training.answerability.evaluate RUN_DIR` scores a trained run on
../shared/data/{squad2,clapnq}/questions.dev.jsonl: AUROC of answerable vs near-miss with the
gold passage, and SQuAD 2.0-style exact match / F1 (the span, or no answer below a threshold).
Passages are read as the runtime reads chunks (whole, or in sentence windows when long), and
also as single-sentence windows (each sentence with one neighbour each side), to compare.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import string
from pathlib import Path

import numpy as np

from textbound.answer.answerability import best_span, sentence_offsets, token_windows

__all__ = ["auroc", "holdout_metrics", "holdout_onnx", "read_passages", "dev_metrics",
           "squad_f1"]


def auroc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Area under the ROC curve: P(score of a positive > score of a negative), ties half."""
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    if not len(pos) or not len(neg):
        return float("nan")
    allv = np.concatenate([pos, neg])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(len(allv))
    sorted_v = allv[order]
    i = 0
    while i < len(allv):  # average ranks over ties
        j = i
        while j + 1 < len(allv) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i: j + 1]] = (i + j) / 2 + 1
        i = j + 1
    r = ranks[: len(pos)].sum()
    return float((r - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def _forward(net, batch: dict, device):  # noqa: ANN001, ANN202
    import torch

    with torch.no_grad():
        t = {k: torch.from_numpy(batch[k]).to(device)
             for k in ("input_ids", "attention_mask", "token_type_ids")}
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            a, s, e = net(t["input_ids"], t["attention_mask"], t["token_type_ids"])
    return a.float().cpu().numpy(), s.float().cpu().numpy(), e.float().cpu().numpy()


def _best_span(start: np.ndarray, end: np.ndarray, lo: int, hi: int) -> tuple[int, int]:
    """The runtime's span rule (`best_span`) over the passage tokens [lo, hi)."""
    i, j = best_span(start[lo:hi], end[lo:hi], 30) or (0, 0)
    return lo + i, lo + j


def holdout_metrics(net, encs: list, device, batch_size: int = 128) -> dict:  # noqa: ANN001
    """AUROC (answerable vs each negative kind and all) and exact span match on held-out pairs."""
    from training.answerability.features import collate

    net.eval()
    scores = np.zeros(len(encs))
    exact = []
    for k in range(0, len(encs), batch_size):
        chunk = encs[k: k + batch_size]
        a, s, e = _forward(net, collate(chunk), device)
        scores[k: k + len(chunk)] = a
        for r, enc in enumerate(chunk):
            if enc.label:
                bs, be = _best_span(s[r], e[r], enc.context_from, len(enc.ids) - 1)
                exact.append(bs == enc.start and be == enc.end)
    labels = np.array([x.label for x in encs])
    kinds = np.array([x.kind for x in encs])
    pos = scores[labels == 1]
    out = {"auroc": round(auroc(pos, scores[labels == 0]), 4),
           "span_exact": round(float(np.mean(exact)), 4) if exact else None,
           "pairs": len(encs)}
    for kind in sorted(set(kinds[labels == 0])):
        out[f"auroc_{kind}"] = round(auroc(pos, scores[kinds == kind]), 4)
    return out


def holdout_onnx(model_dir: Path, files: list[Path], *, seed: int = 14,
                 batch_size: int = 32) -> dict:
    """Held-out pairs of training files (their 4% of articles, `is_holdout`), read by an ONNX model.

    The pairs are built as training builds them (positives, built negatives, and the files' own
    unanswerable questions as `real`), so a model trained on the other 96% never saw them.
    AUROC answerable vs all negatives and vs each kind, as `holdout_metrics` reports.
    """
    import onnxruntime as ort

    from training.answerability.data import build_pairs, load_questions
    from training.answerability.features import collate, encode_pairs, load_tokenizer

    rows: list[dict] = []
    for f in files:
        rows += load_questions(f.parent, files=(f.name,))
    pairs = build_pairs(rows, seed=seed, holdout=True)
    tok = load_tokenizer(model_dir / "tokenizer.json")
    encs = encode_pairs(pairs, tok, 256, seed=seed)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model_dir / "model.onnx"), opts,
                                providers=["CPUExecutionProvider"])
    scores = np.zeros(len(encs))
    for k in range(0, len(encs), batch_size):
        b = collate(encs[k: k + batch_size])
        scores[k: k + batch_size] = sess.run(["answer_logit"], {
            n: b[n] for n in ("input_ids", "attention_mask", "token_type_ids")})[0]
    labels = np.array([x.label for x in encs])
    kinds = np.array([x.kind for x in encs])
    pos = scores[labels == 1]
    out = {"auroc": round(auroc(pos, scores[labels == 0]), 4), "pairs": len(encs),
           "positives": int(labels.sum())}
    for kind in sorted(set(kinds[labels == 0])):
        out[f"auroc_{kind}"] = round(auroc(pos, scores[kinds == kind]), 4)
        out[f"n_{kind}"] = int((kinds == kind).sum())
    return out


def _windows_for(text: str, offsets: list[tuple[int, int]], budget: int,
                 sentence_mode: bool) -> list[tuple[int, int]]:
    """Token ranges to read: runtime chunk windows, or one sentence with a neighbour each side."""
    if not sentence_mode:
        return [(i, j) for _ws, _we, i, j in token_windows(text, offsets, budget)]
    starts = [o[0] for o in offsets]
    sents = sentence_offsets(text) or [(0, len(text))]
    out = []
    for k in range(len(sents)):
        ws, we = sents[max(0, k - 1)][0], sents[min(len(sents) - 1, k + 1)][1]
        i = int(np.searchsorted(starts, ws))
        out.append((i, min(int(np.searchsorted(starts, we)), i + budget)))
    return out


def read_passages(net, tok, items: list[tuple[str, str]], device, *, max_length: int = 256,  # noqa: ANN001
                  sentence_mode: bool = False, batch_size: int = 128) -> list[tuple[float, str]]:
    """For each (question, passage): the best window's answer logit and its span text."""
    from training.answerability.features import MAX_QUESTION_TOKENS, Encoded, collate

    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    qs = tok.encode_batch([q for q, _ in items], add_special_tokens=False)
    ts = tok.encode_batch([t for _, t in items], add_special_tokens=False)
    rows: list[tuple[int, Encoded, list[tuple[int, int]]]] = []
    for n, ((_q, text), q, t) in enumerate(zip(items, qs, ts, strict=True)):
        q_ids = q.ids[:MAX_QUESTION_TOKENS]
        budget = max_length - len(q_ids) - 3
        for i, j in _windows_for(text, t.offsets, budget, sentence_mode):
            ids = [cls, *q_ids, sep, *t.ids[i:j], sep]
            rows.append((n, Encoded(ids, len(q_ids) + 2, 0, 0, 0, ""), t.offsets[i:j]))
    best: dict[int, tuple[float, str]] = {}
    for k in range(0, len(rows), batch_size):
        chunk = rows[k: k + batch_size]
        a, s, e = _forward(net, collate([r[1] for r in chunk]), device)
        for r, (n, enc, offs) in enumerate(chunk):
            if not offs:
                continue
            bs, be = _best_span(s[r], e[r], enc.context_from, len(enc.ids) - 1)
            text = items[n][1]
            span = text[offs[bs - enc.context_from][0]: offs[be - enc.context_from][1]]
            if n not in best or a[r] > best[n][0]:
                best[n] = (float(a[r]), span)
    return [best.get(n, (-1e9, "")) for n in range(len(items))]


def _normalize(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def squad_f1(pred: str, gold: str) -> float:
    """SQuAD token F1 between normalised strings (both empty: 1)."""
    p, g = _normalize(pred).split(), _normalize(gold).split()
    if not p or not g:
        return float(p == g)
    common = collections.Counter(p) & collections.Counter(g)
    same = sum(common.values())
    if not same:
        return 0.0
    prec, rec = same / len(p), same / len(g)
    return 2 * prec * rec / (prec + rec)


def _em_f1(logits: np.ndarray, spans: list[str], golds: list[list[str]],
           threshold: float) -> tuple[float, float]:
    em, f1 = [], []
    for lg, sp, gs in zip(logits, spans, golds, strict=True):
        pred = sp if lg >= threshold else ""
        refs = gs or [""]
        em.append(max(float(_normalize(pred) == _normalize(g)) for g in refs))
        f1.append(max(squad_f1(pred, g) for g in refs))
    return 100 * float(np.mean(em)), 100 * float(np.mean(f1))


def dev_metrics(net, tok, data: Path, device, *, sentence_mode: bool = False) -> dict:  # noqa: ANN001
    """AUROC answerable vs near-miss with gold passages, and SQuAD 2.0-style EM/F1 on SQuAD."""
    return dev_metrics_with(lambda items: read_passages(net, tok, items, device,
                                                        sentence_mode=sentence_mode), data)


def dev_metrics_onnx(model_dir: Path, data: Path) -> dict:
    """The same metrics through the shipped runtime (textbound.answer.answerability.OnnxReader)."""
    from textbound.answer.answerability import OnnxReader

    reader = OnnxReader(model_dir)

    def read(items: list[tuple[str, str]]) -> list[tuple[float, str]]:
        out = []
        for q, text in items:
            r = reader.read(q, [("gold", text)])[0]
            p = min(max(r.score, 1e-7), 1 - 1e-7)
            out.append((float(np.log(p / (1 - p))), r.span_text))
        return out

    return dev_metrics_with(read, data)


def dev_metrics_with(read, data: Path) -> dict:  # noqa: ANN001
    """Score the dev sets' answerable and near-miss questions with `read` (logit, span)."""
    out: dict = {}
    for name in ("squad2", "clapnq"):
        corpus = {}
        with (data / name / "corpus.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                d = json.loads(line)
                corpus[d["doc_id"]] = d["text"]
        qs = []
        with (data / name / "questions.dev.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                q = json.loads(line)
                if q["kind"] in ("answerable", "near_miss") and q["doc_id"] in corpus:
                    qs.append(q)
        res = read([(q["question"], corpus[q["doc_id"]]) for q in qs])
        logits = np.array([r[0] for r in res])
        ans = np.array([q["kind"] == "answerable" for q in qs])
        m = {"questions": len(qs), "auroc": round(auroc(logits[ans], logits[~ans]), 4)}
        if name == "squad2":
            golds = [q["answers"] if q["kind"] == "answerable" else [] for q in qs]
            spans = [r[1] for r in res]
            em, f1 = _em_f1(logits, spans, golds, 0.0)
            m["em_at_p0.5"], m["f1_at_p0.5"] = round(em, 2), round(f1, 2)
            best = max((_em_f1(logits, spans, golds, t) + (t,)
                        for t in np.quantile(logits, np.linspace(0.02, 0.98, 49))),
                       key=lambda x: x[1])
            m["best_f1"], m["best_f1_em"] = round(best[1], 2), round(best[0], 2)
            m["best_f1_threshold_logit"] = round(float(best[2]), 3)
            has = [(sp, g) for sp, g, a in zip(spans, golds, ans, strict=True) if a]
            m["has_answer_em"] = round(100 * float(np.mean(
                [max(_normalize(sp) == _normalize(x) for x in g) for sp, g in has])), 2)
            m["has_answer_f1"] = round(100 * float(np.mean(
                [max(squad_f1(sp, x) for x in g) for sp, g in has])), 2)
        out[name] = m
    return out


def main(argv: list[str] | None = None) -> None:
    """Score a run folder's reader.safetensors on the dev sets."""
    import torch

    from training.answerability.features import load_tokenizer
    from training.answerability.model import ReaderNet

    p = argparse.ArgumentParser(prog="python -m training.answerability.evaluate",
                                description=__doc__.splitlines()[0])
    p.add_argument("run", help="run folder holding reader.safetensors, or with --onnx a model "
                   "folder (model.onnx, tokenizer.json, config.json)")
    p.add_argument("--onnx", action="store_true", help="score through the ONNX runtime reader")
    p.add_argument("--data", default=str(Path(__file__).resolve().parents[3] / "shared" / "data"))
    p.add_argument("--tokenizer", default=None, help="tokenizer.json (torch runs)")
    p.add_argument("--out", default=None, help="write the metrics JSON here")
    p.add_argument("--modes", default="chunk,sentence", help="chunk and/or sentence windows")
    p.add_argument("--holdout-files", default=None, metavar="PATH,...",
                   help="with --onnx: also score the held-out pairs of these training JSONL "
                        "files (e.g. runs/docmining/docmining-man.jsonl)")
    p.add_argument("--no-dev", action="store_true", help="with --onnx: skip the dev sets")
    a = p.parse_args(argv)
    if a.onnx:
        res: dict = {}
        if not a.no_dev:
            res["chunk"] = dev_metrics_onnx(Path(a.run), Path(a.data))
        if a.holdout_files:
            res["holdout"] = holdout_onnx(Path(a.run), [Path(f) for f in
                                                        a.holdout_files.split(",") if f])
        print(json.dumps(res, indent=2))
        if a.out:
            Path(a.out).write_text(json.dumps(res, indent=2))
        return
    from safetensors.torch import load_file

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = ReaderNet()
    net.load_state_dict({k: v.float() for k, v in
                         load_file(str(Path(a.run) / "reader.safetensors")).items()})
    net.to(device).eval()
    tok = load_tokenizer(Path(a.tokenizer))
    res = {mode: dev_metrics(net, tok, Path(a.data), device, sentence_mode=mode == "sentence")
           for mode in a.modes.split(",")}
    text = json.dumps(res, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
