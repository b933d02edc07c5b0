"""OnnxReader on a tiny stand-in model: the runtime path works before the real model lands."""

import json
import shutil

import numpy as np
import pytest
from onnx import TensorProto, helper, save_model

from graph.builder import build_services
from textbound.answer.answerability import OnnxReader, load_reader
from textbound.providers.embeddings import _bundled_model_dir

from ..conftest import make_settings


def _stand_in(folder):
    """Write a model with the reader's inputs and outputs: logits are fixed functions of ids."""
    ids, mask, types = (helper.make_tensor_value_info(n, TensorProto.INT64, ["b", "s"])
                        for n in ("input_ids", "attention_mask", "token_type_ids"))
    outputs = [helper.make_tensor_value_info("answer_logit", TensorProto.FLOAT, ["b"]),
               helper.make_tensor_value_info("start_logits", TensorProto.FLOAT, ["b", "s"]),
               helper.make_tensor_value_info("end_logits", TensorProto.FLOAT, ["b", "s"])]
    nodes = [
        helper.make_node("Cast", ["input_ids"], ["x"], to=TensorProto.FLOAT),
        helper.make_node("Sin", ["x"], ["start_logits"]),
        helper.make_node("Cos", ["x"], ["end_logits"]),
        helper.make_node("ReduceMean", ["start_logits"], ["answer_logit"], keepdims=0,
                         axes=[1]),
    ]
    graph = helper.make_graph(nodes, "stand_in", [ids, mask, types], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    folder.mkdir()
    save_model(model, str(folder / "model.onnx"))
    shutil.copy(_bundled_model_dir() / "tokenizer.json", folder / "tokenizer.json")
    (folder / "config.json").write_text(json.dumps(
        {"max_length": 64, "cls_id": 101, "sep_id": 102, "max_answer_tokens": 8}))
    return folder


@pytest.fixture
def model_dir(tmp_path):
    return _stand_in(tmp_path / "model")


def test_onnx_reader_reads_one_verdict_per_passage(model_dir):
    """Long passages are windowed; each passage gets one reading with a span inside it."""
    reader = OnnxReader(model_dir)
    long = " ".join(f"Sentence number {i} talks about robots and their joints." for i in range(30))
    passages = [("a", "A topic is a named bus."), ("b", long)]
    readings = reader.read("What is a topic?", passages)
    assert [r.chunk_id for r in readings] == ["a", "b"]
    for r, (_, text) in zip(readings, passages, strict=True):
        assert 0.0 <= r.score <= 1.0
        assert r.span_start is not None and text[r.span_start:r.span_end] == r.span_text
    assert readings == reader.read("What is a topic?", passages)
    assert reader.read("What is a topic?", []) == []


def test_build_services_loads_the_reader_once(tmp_path, model_dir, embeddings, fake_store):
    """The reader is loaded at build_services and shared by later builds in the process."""
    s = make_settings(tmp_path, answerability=True, answerability_model_dir=model_dir)
    first = build_services(settings=s, embeddings=embeddings, store=fake_store).reader
    second = build_services(settings=s, embeddings=embeddings, store=fake_store).reader
    assert isinstance(first, OnnxReader) and first is second is load_reader(model_dir)


def test_graph_runs_with_the_onnx_reader(tmp_path, model_dir, embeddings, fake_store):
    """A question goes through check_answerable with the ONNX reader and gets a verdict."""
    from graph.builder import build_graph

    s = make_settings(tmp_path, answerability=True, answerability_model_dir=model_dir)
    out = build_graph(settings=s, embeddings=embeddings, store=fake_store).invoke(
        {"question": "What is a topic?"})
    verdict = out["diagnostics"]["answerability"]
    assert verdict["reader"] == "onnx" and not verdict["skipped"]
    assert np.isfinite(verdict["score"]) and verdict["score"] == max(verdict["scores"].values())
