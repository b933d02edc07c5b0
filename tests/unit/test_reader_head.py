"""The reader's fitted no-answer head: its features, its file; the spans stay the shipped ones."""

import json
import shutil

import numpy as np
import pytest

from textbound.answer.answerability import DEFAULT_MODEL_DIR, OnnxReader
from textbound.answer.reader_head import (
    FEATURE_BLOCKS,
    HEAD_FILE,
    ReaderHead,
    graph_with_outputs,
    span_features,
    window_features,
)
from textbound.errors import SetupError
from training.answerability.head import OUTPUTS, auroc, choose_l2, features, fit

WIDTH = sum(w for _, w in FEATURE_BLOCKS)
PASSAGES = [
    ("a", "Ninja reads build.ninja in the current directory by default and builds every "
          "out-of-date target."),
    ("b", "The -t flag runs a tool. The browse tool shows the dependency graph in a browser."),
]


def _head(seed=0, outputs=OUTPUTS):
    rng = np.random.default_rng(seed)
    return ReaderHead(mean=np.zeros(WIDTH), scale=np.ones(WIDTH),
                      weights=rng.normal(0, 0.01, WIDTH), bias=0.2, affine=(1.5, -0.3),
                      outputs=dict(outputs), blend=0.5)


def _model_with_head(tmp_path, head):
    """The shipped model's files with this head (None: no head.json at all)."""
    folder = tmp_path / ("reader" if head is not None else "plain")
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json", "config.json"):
        shutil.copy(DEFAULT_MODEL_DIR / name, folder / name)
    if head is not None:
        (folder / HEAD_FILE).write_text(json.dumps(head.to_json(note="test")))
    return folder


def test_span_features_read_the_best_span_within_the_answer_length():
    start, end = np.array([0.0, 3.0, 1.0]), np.array([2.0, 0.0, 5.0])
    f = span_features(start, end, null=1.0, max_len=2)
    # start 1 + end 2 = 8 is allowed at max_len 2 (2 tokens); start 0 + end 2 (3 tokens) is not
    assert f[0] == 8.0 and f[1] == 3.0 and f[2] == 5.0 and f[3] == 1.0 and f[4] == 7.0
    assert span_features(np.array([]), np.array([]), 0.0, 5).tolist() == [0.0] * 7


def test_window_features_have_every_block_in_order():
    hidden = np.arange(10 * 384, dtype=np.float32).reshape(10, 384)
    pooled = np.ones(384, np.float32)
    start = end = np.zeros(10, np.float32)
    f = window_features(pooled, hidden, start, end, ctx_from=4, ctx_len=5, max_len=30)
    assert f.shape == (WIDTH,)
    assert np.allclose(f[384:768], hidden[0])  # [CLS]
    assert np.allclose(f[768:1152], hidden[4:9].mean(0))  # the passage's tokens
    assert np.allclose(f[1152:1536], hidden[1:3].mean(0))  # the question's tokens


def test_head_file_round_trips_and_bad_files_are_refused(tmp_path):
    head = _head()
    path = tmp_path / HEAD_FILE
    path.write_text(json.dumps(head.to_json(command="test")))
    back = ReaderHead.load(path)
    x = np.random.default_rng(1).normal(size=(3, WIDTH))
    assert np.allclose(back.logit(x), head.logit(x)) and back.blend == 0.5
    shipped = np.array([0.0, 1.0, -2.0])
    assert np.allclose(head.logit(x, shipped), 0.5 * head.logit(x) + 0.5 * shipped)
    data = head.to_json()
    for broken in ({**data, "format": "other/1"}, {**data, "weights": [1.0] * 5},
                   {**data, "scale": [0.0] * WIDTH}, {**data, "blend": 1.5},
                   {k: v for k, v in data.items() if k != "bias"}):
        path.write_text(json.dumps(broken))
        with pytest.raises(SetupError, match="make train-reader-head"):
            ReaderHead.load(path)
    path.write_text("{not json")
    with pytest.raises(SetupError):
        ReaderHead.load(path)


def test_a_head_reading_a_value_the_graph_lacks_is_refused():
    with pytest.raises(SetupError, match="does not compute"):
        graph_with_outputs(DEFAULT_MODEL_DIR / "model.onnx", ["no-such-value"])


def test_the_head_decides_the_verdict_and_leaves_the_spans_alone(tmp_path):
    """Spans and span scores are the shipped reader's; the verdict is the head's, as trained."""
    plain = OnnxReader(_model_with_head(tmp_path, None))
    question = "What file does ninja read by default?"
    before = plain.read(question, PASSAGES)
    head = _head()
    reader = OnnxReader(_model_with_head(tmp_path, head))
    after = reader.read(question, PASSAGES)
    for b, a in zip(before, after, strict=True):
        assert (a.span_start, a.span_end, a.span_text, a.score) == (
            b.span_start, b.span_end, b.span_text, b.score)
        assert b.verdict is None and a.verdict is not None and 0.0 <= a.verdict <= 1.0
    # each passage's verdict is the head's best window, from the features training reads too
    rows, ctx_from, (answer, start, end, pooled, hidden) = reader.run(
        question, PASSAGES, ["answer_logit", "start_logits", "end_logits", *OUTPUTS.values()])
    for p in range(len(PASSAGES)):
        best = max(head.logit(window_features(pooled[i], hidden[i], start[i], end[i], ctx_from,
                                              len(r[3]), reader.max_answer_tokens),
                              answer[i:i + 1])[0] for i, r in enumerate(rows) if r[0] == p)
        assert after[p].verdict == pytest.approx(1 / (1 + np.exp(-best)), abs=1e-6)
    x, shipped, kept = features(reader, [{"question": question, "passages": PASSAGES}])
    assert kept == [0] and x.shape == (1, WIDTH)
    assert shipped[0] == pytest.approx(float(answer.max()))

def test_fit_separates_what_separates_and_the_penalty_is_chosen_on_the_books_left_out():
    rng = np.random.default_rng(3)
    y = np.array([1, 0] * 40, float)
    x = rng.normal(size=(80, 6)) + y[:, None] * 2.0
    w, b = fit(x, y, 1.0)
    s = x @ w + b
    assert auroc(s[y == 1], s[y == 0]) > 0.95
    books = np.repeat(["a", "b", "c", "d"], 20)  # each book holds both kinds
    l2, table = choose_l2(x, y, books)
    assert str(l2) in table and table[str(l2)]["mean"] == max(v["mean"] for v in table.values())
    assert set(table[str(l2)]["left_out_auroc"]) == {"a", "b", "c", "d"}


def test_the_shipped_head_loads_with_its_provenance():
    """The shipped reader reads with its head; the file says what it was fitted on."""
    head = ReaderHead.load(DEFAULT_MODEL_DIR / HEAD_FILE)
    data = json.loads((DEFAULT_MODEL_DIR / HEAD_FILE).read_text())
    assert head.blend == 0.5 and data["l2"] in (1.0, 3.0, 10.0, 30.0, 100.0)
    books = data["trained_on"]
    assert set(books) == {"ninja", "time", "bc", "bzip2"}
    for spec in books.values():
        assert spec["licence"] and spec["package"] and spec["questions"] > spec["answerable"] > 0
    assert OnnxReader(DEFAULT_MODEL_DIR).head is not None
