"""The shipped int8 reader back in torch (training/answerability/from_onnx.py), and training on
from it with mined pairs mixed in (train.py --init-onnx, --mix).

Needs the `train` extra (torch) except for the option parsing; `make test-train` runs it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from training.answerability.train import _mix

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "models" / "answerability"
DATA = REPO.parent / "shared" / "data" / "train"


def test_mix_reads_path_and_cap(tmp_path):
    f = tmp_path / "mined.jsonl"
    f.write_text("")
    assert _mix([f"{f}:25", str(f)]) == [(f, 25), (f, None)]
    assert _mix(None) == []
    with pytest.raises(SystemExit):
        _mix([str(tmp_path / "absent.jsonl:3")])


@pytest.mark.train
@pytest.mark.slow
def test_dequantized_weights_requantize_exactly_and_match_onnx():
    pytest.importorskip("torch")
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    from training.answerability.from_onnx import onnx_state_dict

    state = onnx_state_dict(SHIPPED / "model.onnx")
    graph = onnx.load(str(SHIPPED / "model.onnx")).graph
    init = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    # every int8 matrix comes back exactly when the float weight is quantized again
    checked = 0
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        module = node.name.strip("/").rsplit("/", 1)[0].replace("/", ".")
        q, zero = init[node.input[1]], init[node.input[3]].astype(np.float32)
        scale = init[node.input[1].removesuffix("_quantized") + "_scale"]
        again = np.rint(state[f"{module}.weight"].T / scale + zero).astype(q.dtype)
        assert np.array_equal(again, q), module
        checked += 1
    assert checked == 39  # 6 layers x 6 linears + pool + answer + span
    emb = init["word.weight_quantized"]
    again = np.rint(state["word.weight"] / init["word.weight_scale"]
                    + init["word.weight_zero_point"].astype(np.float32))
    assert np.array_equal(again.astype(emb.dtype), emb)

    # and torch with those weights reads like the ONNX file (up to activation quantization)
    import torch

    from training.answerability.features import load_tokenizer
    from training.answerability.model import ReaderNet

    net = ReaderNet()
    net.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    net.eval()
    tok = load_tokenizer(SHIPPED / "tokenizer.json")
    pairs = [("What does a ROS 2 topic carry?",
              "A topic is a named bus over which nodes exchange messages."),
             ("What does -v do in grep?", "-v, --invert-match  Invert the sense of matching, "
              "to select non-matching lines."),
             ("When was the bridge opened?", "The bridge is painted red every seven years."),
             ("Who wrote the opera?", "The opera was composed by Verdi in 1853 for Venice.")]
    sess = ort.InferenceSession(str(SHIPPED / "model.onnx"), providers=["CPUExecutionProvider"])
    got, want = [], []
    for q, t in pairs:
        enc = tok.encode(q, t)
        feeds = {"input_ids": np.array([enc.ids]), "attention_mask": np.ones((1, len(enc.ids)),
                 np.int64), "token_type_ids": np.array([enc.type_ids])}
        got.append(float(sess.run(["answer_logit"], feeds)[0][0]))
        with torch.no_grad():
            want.append(float(net(*(torch.from_numpy(feeds[k]) for k in
                                    ("input_ids", "attention_mask", "token_type_ids")))[0][0]))
    diff = np.abs(np.array(got) - np.array(want))
    assert diff.max() < 1.5, (got, want)
    assert np.argsort(got).tolist() == np.argsort(want).tolist()


@pytest.mark.train
@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data/train")
def test_train_starts_from_the_shipped_reader_with_mixed_files(tmp_path):
    pytest.importorskip("torch")
    from safetensors.numpy import load_file

    from training.answerability import train
    from training.answerability.from_onnx import onnx_state_dict

    with (DATA / "selqa-ass-devtest.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(30), fh, strict=False)]
    mined = tmp_path / "mined.jsonl"
    mined.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "run"
    args = train.parser().parse_args([
        "--data", str(DATA), "--files", "none", "--mix", f"{mined}:12",
        "--init-onnx", str(SHIPPED), "--tokenizer", str(SHIPPED / "tokenizer.json"),
        "--max-steps", "1", "--batch-size", "2", "--lr", "1e-12", "--out", str(run),
        "--holdout-limit", "4", "--threads", "2", "--quiet"])
    summary = train.train(args)
    assert summary["mix"] == [[str(mined), 12]] and summary["files"] == []
    # one step at a vanishing rate: the weights are still the shipped reader's
    got = load_file(str(run / "reader.safetensors"))
    want = onnx_state_dict(SHIPPED / "model.onnx")
    assert set(got) == set(want)
    assert max(float(np.abs(got[k] - want[k]).max()) for k in want) < 1e-6
