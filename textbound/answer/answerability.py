"""The answerability reader: does this passage answer the question, and where is the answer?

A small extractive reader of our own (MiniLM-L6 fine-tuned on SQuAD-style data with built
negatives; see models/answerability/MODEL_CARD.md) reads the question against each passage and
returns, per passage, the probability that it answers and the best answer span (character offsets
into the passage). One forward pass both gates and picks the answer.

The runtime needs ONNX Runtime and tokenizers only. The model is loaded once per process
(`load_reader`) and is deterministic: the same question and passages give the same readings.
`FakeReader` is the seam for unit tests, as `FakeEmbeddings` is for the embeddings.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from textbound.answer.reader_head import (
    HEAD_FILE,
    ReaderHead,
    graph_with_outputs,
    window_features,
)
from textbound.errors import SetupError
from textbound.seams import AnswerReader, Reading
from textbound.text import sentence_spans
from textbound.text.question import prints
from textbound.text.units import unit_holding

__all__ = [
    "Reading", "ReaderSlot", "OnnxReader", "FakeReader", "DEFAULT_MODEL_DIR", "load_reader",
    "best_reading", "literal_passage", "read_passages", "top_passages", "sentence_offsets",
    "token_windows", "best_span", "pack_sentences", "sentence_holding", "answer_read", "UNSURE",
]

Row = tuple[int, int, int, list[int], list[tuple[int, int]]]
"""One window: (passage index, char start, char end, token ids, token offsets)."""

DEFAULT_MODEL_DIR = Path(__file__).resolve().parents[2] / "models" / "answerability"
"""The shipped model folder (model.onnx, tokenizer.json, config.json, MODEL_CARD.md)."""


def best_reading(readings: Sequence[Reading]) -> Reading | None:
    """Return the highest-scoring reading (the first on ties), or None for no readings."""
    best: Reading | None = None
    for r in readings:
        if best is None or r.score > best.score:
            best = r
    return best


def literal_passage(evidence: Sequence[Mapping[str, Any]], read: Sequence[tuple[str, str]],
                    literals: Sequence[str]) -> tuple[str, str] | None:
    """Return the best evidence chunk printing one of the question's literals, when none read does.

    "What does HEAD~9 mean?" is answered where the book prints HEAD~9, which may be a chunk
    past the ones the reader reads: check_answerable reads it too, in a call of its own (the
    int8 reader's scores depend on what else is in the batch). (chunk id, text) or None.
    """
    if not literals or any(prints(text, t) for _, text in read for t in literals):
        return None
    done = {cid for cid, _ in read}
    for c in sorted(evidence, key=lambda c: (-float(c["score"]), str(c["chunk_id"]))):
        if c["chunk_id"] not in done and any(prints(str(c["text"]), t) for t in literals):
            return str(c["chunk_id"]), str(c["text"])
    return None


def top_passages(evidence: Sequence[Mapping[str, Any]], n: int) -> list[tuple[str, str]]:
    """The (id, text) of the n best-scored evidence chunks: what the reader reads."""
    # a stable order for equal scores: the same input always reads the same passages
    ranked = sorted(evidence, key=lambda c: (-c["score"], c["chunk_id"]))
    return [(c["chunk_id"], c["text"]) for c in ranked[:n]]


def read_passages(reader: AnswerReader, question: str, passages: list[tuple[str, str]],
                  evidence: Sequence[Mapping[str, Any]], literals: Sequence[str]
                  ) -> tuple[list[Reading], list[tuple[str, str]]]:
    """Read the passages, and the evidence chunk `literal_passage` finds, in a call of its own.

    Returns every reading and every passage read ((id, text), the extra chunk last).
    """
    readings = list(reader.read(question, passages)) if passages else []
    extra = literal_passage(evidence, passages, literals)
    if extra is None:
        return readings, passages
    return [*readings, *reader.read(question, [extra])], [*passages, extra]


def sentence_holding(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Return the (start, end) of the sentence of text that holds the span [start, end).

    Prefers the smallest answer unit that may lead an answer (so the generator can lead with
    it); falls back to any sentence, then to the one the span starts in.
    """
    unit = unit_holding(text, start, end)
    if unit is not None:
        return unit.start, unit.end
    for s, e in sentence_spans(text):
        if s <= start and end <= e:
            return s, e
    for s, e in sentence_spans(text):
        if s <= start < e:
            return s, e
    return None


# ---------------------------------------------------------------------------------------------
# windows: the same rule at training time (training/answerability) and here
# ---------------------------------------------------------------------------------------------

_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def sentence_offsets(text: str) -> list[tuple[int, int]]:
    """Split text into sentence (start, end) offsets; cheap and deterministic."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _SENT_END.finditer(text):
        if text[start:m.start()].strip():
            out.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        out.append((start, len(text.rstrip())))
    return out


def token_windows(text: str, offsets: Sequence[tuple[int, int]],
                  budget: int) -> list[tuple[int, int, int, int]]:
    """Cut an encoded passage into windows of whole sentences that fit `budget` tokens each.

    `offsets` are the tokens' character offsets from one encoding of the whole text. Returns
    (char start, char end, token start, token end) per window. A passage that fits is one window.
    Otherwise consecutive windows overlap by one sentence, so an answer that needs its neighbour
    sentence is still seen whole; a single sentence longer than the budget is cut at the budget.
    Training (training/answerability) and `OnnxReader` both use this rule.
    """
    if len(offsets) <= budget:
        return [(0, len(text), 0, len(offsets))]
    sents = sentence_offsets(text) or [(0, len(text))]
    starts = [o[0] for o in offsets]
    idx = np.searchsorted(starts, [s for s, _ in sents] + [len(text) + 1])
    lengths = [int(idx[k + 1] - idx[k]) for k in range(len(sents))]
    out = []
    for ws, we in pack_sentences(sents, lengths, budget):
        i = int(np.searchsorted(starts, ws))
        out.append((ws, we, i, min(int(np.searchsorted(starts, we)), i + budget)))
    return out


def pack_sentences(sents: Sequence[tuple[int, int]], lengths: Sequence[int],
                   budget: int) -> list[tuple[int, int]]:
    """Group consecutive sentences into windows of at most `budget` tokens, overlapping by one."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(sents):
        j, used = i, 0
        while j < len(sents) and (j == i or used + lengths[j] <= budget):
            used += lengths[j]
            j += 1
        out.append((sents[i][0], sents[j - 1][1]))
        if j >= len(sents):
            break
        i = j - 1 if j - 1 > i else j
    return out


# ---------------------------------------------------------------------------------------------
# the ONNX model
# ---------------------------------------------------------------------------------------------


class OnnxReader:
    """The shipped reader on ONNX Runtime.

    The model takes BERT pair inputs (question, window) and returns `answer_logit` [batch] (the
    log-odds that the window answers), `start_logits` and `end_logits` [batch, seq].
    """

    name = "onnx"

    def __init__(self, model_dir: Path | str, *, threads: int | None = None,
                 outputs: Sequence[str] = ()) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.model_dir = Path(model_dir)
        paths = {n: self.model_dir / n for n in ("model.onnx", "tokenizer.json", "config.json")}
        for p in paths.values():
            if not p.is_file():
                raise SetupError(
                    f"The answerability model file {p} is missing. Restore it from the "
                    "repository (git checkout -- models/answerability), point "
                    "TEXTBOUND_ANSWERABILITY_MODEL_DIR at a folder that has it, or turn the "
                    "check off with TEXTBOUND_ANSWERABILITY=false."
                )
        loading = paths["config.json"]
        try:
            self.config = json.loads(loading.read_text("utf-8"))
            self.max_length = int(self.config["max_length"])
            self.max_question_tokens = int(self.config.get("max_question_tokens", 64))
            self.max_answer_tokens = int(self.config.get("max_answer_tokens", 30))
            loading = paths["tokenizer.json"]
            self.tokenizer = Tokenizer.from_file(str(loading))
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads or 0
            opts.inter_op_num_threads = 1
            loading = self.model_dir / HEAD_FILE
            self.head = ReaderHead.load(loading) if loading.is_file() else None
            loading = paths["model.onnx"]
            extra = [*outputs, *(self.head.outputs.values() if self.head else ())]
            self.session = ort.InferenceSession(
                graph_with_outputs(loading, extra) if extra else str(loading), opts,
                providers=["CPUExecutionProvider"])
        except Exception as exc:  # a corrupt file must fail here, loudly, not per request
            raise SetupError(
                f"The answerability model file {loading} could not be loaded ({exc}). "
                "Restore the folder (git checkout -- models/answerability), or turn the check "
                "off with TEXTBOUND_ANSWERABILITY=false."
            ) from exc
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self._inputs = {i.name for i in self.session.get_inputs()}

    def run(self, question: str, passages: Sequence[tuple[str, str]],
            names: Sequence[str]) -> tuple[list[Row], int, list[np.ndarray]]:
        """Every window of every passage in one batch: (windows, ctx_from, the named outputs)."""
        q_ids = self.tokenizer.encode(question, add_special_tokens=False).ids
        q_ids = q_ids[: self.max_question_tokens]
        cls, sep = self.config["cls_id"], self.config["sep_id"]
        budget = self.max_length - len(q_ids) - 3
        rows: list[Row] = []
        encodings = self.tokenizer.encode_batch([t for _, t in passages], add_special_tokens=False)
        for p, ((_cid, text), enc) in enumerate(zip(passages, encodings, strict=True)):
            for ws, we, i, j in token_windows(text, enc.offsets, budget):
                rows.append((p, ws, we, enc.ids[i:j], enc.offsets[i:j]))
        seq = max(len(q_ids) + len(r[3]) + 3 for r in rows)
        n = len(rows)
        input_ids = np.zeros((n, seq), np.int64)
        mask = np.zeros((n, seq), np.int64)
        types = np.zeros((n, seq), np.int64)
        ctx_from = len(q_ids) + 2
        for i, (_p, _ws, _we, ids, _offs) in enumerate(rows):
            toks = [cls, *q_ids, sep, *ids, sep]
            input_ids[i, : len(toks)] = toks
            mask[i, : len(toks)] = 1
            types[i, ctx_from: len(toks)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": types}
        # InferenceSession.run is thread-safe: concurrent requests need no lock
        out = self.session.run(list(names), {k: v for k, v in feeds.items() if k in self._inputs})
        return rows, ctx_from, out

    def read(self, question: str, passages: Sequence[tuple[str, str]]) -> list[Reading]:
        """Score every window of every passage in one batch; keep each passage's best."""
        if not passages:
            return []
        names = ["answer_logit", "start_logits", "end_logits"]
        if self.head is not None:
            names += [self.head.outputs["pooled"], self.head.outputs["hidden"]]
        rows, ctx_from, (answer, start, end, *extra) = self.run(question, passages, names)
        verdicts: dict[int, float] = {}
        if self.head is not None:  # the fitted head's verdict on each passage (its best window)
            fitted = self.head.logit(np.stack([window_features(
                extra[0][i], extra[1][i], start[i], end[i], ctx_from, len(row[3]),
                self.max_answer_tokens) for i, row in enumerate(rows)]), answer)
            for row, v in zip(rows, 1.0 / (1.0 + np.exp(-fitted)), strict=True):
                verdicts[row[0]] = max(round(float(v), 6), verdicts.get(row[0], 0.0))
        best: dict[int, Reading] = {}
        for i, (p, ws, we, ids, offs) in enumerate(rows):
            score = float(1.0 / (1.0 + np.exp(-float(answer[i]))))
            span = best_span(start[i, ctx_from: ctx_from + len(ids)],
                             end[i, ctx_from: ctx_from + len(ids)], self.max_answer_tokens)
            cid, text = passages[p]
            if span is None:
                s0 = e0 = None
                span_text = ""
            else:
                s0, e0 = offs[span[0]][0], offs[span[1]][1]
                span_text = text[s0:e0]
            r = Reading(cid, round(score, 6), s0, e0, span_text, ws, we)
            if p not in best or r.score > best[p].score:
                best[p] = r
        return [replace(best[p], verdict=verdicts.get(p)) for p in range(len(passages))]


def best_span(start: np.ndarray, end: np.ndarray, max_len: int) -> tuple[int, int] | None:
    """Return the (start, end) token pair with the highest start+end logit, end within max_len."""
    if start.size == 0:
        return None
    n = start.size
    scores = start[:, None] + end[None, :]
    i, j = np.indices((n, n))
    scores = np.where((j >= i) & (j - i < max_len), scores, -np.inf)
    flat = int(np.argmax(scores))
    return flat // n, flat % n


# ---------------------------------------------------------------------------------------------
# the fake, and loading once per process
# ---------------------------------------------------------------------------------------------


class FakeReader:
    """A deterministic stand-in for unit tests.

    `score` maps (question, passage text) to a probability; the default scores the share of the
    question's words (4+ letters) that occur in the passage. The span is the first sentence of the
    passage that holds the most of those words.
    """

    name = "fake"

    def __init__(self, score: Callable[[str, str], float] | None = None) -> None:
        self._score = score or _overlap_score
        self.calls: list[tuple[str, list[str]]] = []

    def read(self, question: str, passages: Sequence[tuple[str, str]]) -> list[Reading]:
        """Score each passage with the scoring function."""
        self.calls.append((question, [cid for cid, _ in passages]))
        out = []
        words = _words(question)
        for cid, text in passages:
            sents = sentence_offsets(text) or [(0, len(text))]
            s, e = max(sents, key=lambda se: (len(words & _words(text[se[0]:se[1]])), -se[0]))
            out.append(Reading(cid, float(self._score(question, text)), s, e, text[s:e],
                               0, len(text)))
        return out


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4}


def _overlap_score(question: str, text: str) -> float:
    q = _words(question)
    return len(q & _words(text)) / len(q) if q else 0.0


_CACHE: dict[str, AnswerReader] = {}
_CACHE_LOCK = threading.Lock()


UNSURE = 0.5
"""Under this score the reader is unsure of the passages; above it, its span leads an answer."""


def answer_read(reader: AnswerReader, question: str, answer: str) -> float:
    """Return the reader's probability that the answer's own text answers the question.

    The passages may answer a neighbouring question; the sentences an answer quotes are what the
    student reads. A near-miss ("How do I rename a branch?") released with the book's "git branch
    -D <branch>: delete the branch ..." reads as no answer at all once its passage is gone.
    """
    readings = reader.read(question, [("answer", answer)]) if answer.strip() else []
    return float(readings[0].score) if readings else 0.0


def load_reader(model_dir: Path | str | None = None) -> AnswerReader:
    """Load the ONNX reader once per process and folder (raises SetupError naming the file)."""
    path = str(Path(model_dir) if model_dir else DEFAULT_MODEL_DIR)
    with _CACHE_LOCK:
        reader = _CACHE.get(path)
        if reader is None:
            reader = _CACHE[path] = OnnxReader(path)
        return reader


class ReaderSlot:
    """The answerability reader, loaded at most once, when first needed.

    A server started with the check off has no reader; a run that turns the check on loads it
    then (once per process, `load_reader`). `get` raises SetupError when the model cannot be
    loaded.
    """

    def __init__(self, reader: AnswerReader | None, model_dir: Any = None) -> None:
        self.reader = reader
        self.model_dir = model_dir
        self._lock = threading.Lock()

    def get(self) -> AnswerReader:
        """Return the reader, loading it now if it is not loaded yet."""
        with self._lock:
            if self.reader is None:
                self.reader = load_reader(self.model_dir)
            return self.reader
