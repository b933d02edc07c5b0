"""A float reader's weights stored as int8, its arithmetic kept in float (weights_only)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from training.answerability.weights_only import convert


def _graph(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """ids -> Gather(table) -> MatMul(weights) -> out, with a small bias that stays float."""
    rng = np.random.default_rng(7)
    table = rng.normal(size=(100, 64)).astype(np.float32)
    weights = rng.normal(size=(64, 96)).astype(np.float32)
    bias = rng.normal(size=(96,)).astype(np.float32)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"]),
             helper.make_node("MatMul", ["emb", "weights"], ["mm"]),
             helper.make_node("Add", ["mm", "bias"], ["out"])]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("ids", TensorProto.INT64, ["b", "s"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["b", "s", 96])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(weights, "weights"),
         numpy_helper.from_array(bias, "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what the exported readers carry (opset 17)
    onnx.save(model, str(path))
    return table, weights


def _run(path: Path, ids: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(["out"], {"ids": ids})[0]


def test_weights_become_int8_and_outputs_stay_close(tmp_path: Path) -> None:
    src, dst = tmp_path / "float.onnx", tmp_path / "int8.onnx"
    _graph(src)
    assert convert(src, dst) == 2  # the table and the weight matrix; the bias stays float
    stored = {i.name: i.data_type for i in onnx.load(str(dst)).graph.initializer}
    assert stored["table_int8"] == TensorProto.INT8 and stored["weights_int8"] == TensorProto.INT8
    assert stored["bias"] == TensorProto.FLOAT and "table" not in stored
    ids = np.array([[1, 5, 99], [0, 42, 7]], dtype=np.int64)
    want, got = _run(src, ids), _run(dst, ids)
    assert np.abs(got - want).max() < 0.05 * np.abs(want).max()
    assert dst.stat().st_size < 0.5 * src.stat().st_size


def test_a_row_is_scored_the_same_whatever_it_is_read_beside(tmp_path: Path) -> None:
    """No activation is rounded per batch: a row's output does not depend on its batch-mates."""
    src, dst = tmp_path / "float.onnx", tmp_path / "int8.onnx"
    _graph(src)
    convert(src, dst)
    alone = _run(dst, np.array([[3, 4, 5]], dtype=np.int64))[0]
    beside = _run(dst, np.array([[3, 4, 5], [90, 91, 92]], dtype=np.int64))[0]
    assert np.allclose(alone, beside, atol=1e-6)
