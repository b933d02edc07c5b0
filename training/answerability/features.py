"""Pairs to token ids, with the same question cap, windows and layout as the runtime reader.

Layout: [CLS] question [SEP] window [SEP], token types 0 then 1. A passage longer than the
budget is cut into sentence windows by `textbound.answer.answerability.token_windows`, exactly as
`OnnxReader.read` cuts it; a positive keeps the window that holds its answer, a negative a
random window.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from textbound.answer.answerability import token_windows
from training.answerability.data import Pair

__all__ = ["Encoded", "encode_pairs", "load_tokenizer", "token_window", "MAX_QUESTION_TOKENS"]

MAX_QUESTION_TOKENS = 64


@dataclass
class Encoded:
    """Token ids of one pair and its answer position in the sequence (0, 0 when unanswerable)."""

    ids: list[int]
    context_from: int
    start: int
    end: int
    label: int
    kind: str
    span: bool = True  # whether the span loss reads start and end (Pair.span)


def load_tokenizer(path: Path):  # noqa: ANN201 - tokenizers has no stubs
    """The WordPiece tokenizer, without truncation or padding (we lay out pairs ourselves)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


def token_window(text: str, offsets: list[tuple[int, int]], budget: int,
                 want: tuple[int, int] | None, rng: random.Random | None) -> tuple[int, int]:
    """Pick the token range [i, j) of the window to read (all tokens when they fit)."""
    wins = token_windows(text, offsets, budget)
    if len(wins) == 1:
        return wins[0][2], wins[0][3]
    if want is not None:
        holding = [w for w in wins if w[0] <= want[0] and want[1] <= w[1]]
        if not holding:
            return -1, -1
        _ws, _we, i, j = holding[0]
    else:
        _ws, _we, i, j = (rng or random.Random(0)).choice(wins)
    return i, j


def encode_pairs(pairs: list[Pair], tok, max_length: int, seed: int = 0) -> list[Encoded]:  # noqa: ANN001
    """Encode pairs; a positive whose answer no window holds whole is dropped."""
    rng = random.Random(seed)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    qs = tok.encode_batch([p.question for p in pairs], add_special_tokens=False)
    ts = tok.encode_batch([p.text for p in pairs], add_special_tokens=False)
    out: list[Encoded] = []
    for p, q, t in zip(pairs, qs, ts, strict=True):
        q_ids = q.ids[:MAX_QUESTION_TOKENS]
        budget = max_length - len(q_ids) - 3
        want = (p.start, p.end) if p.answerable else None
        i, j = token_window(p.text, t.offsets, budget, want, rng)
        if i < 0:
            continue
        ids, offs = t.ids[i:j], t.offsets[i:j]
        ctx_from = len(q_ids) + 2
        start = end = 0
        if p.answerable:
            inside = [k for k, (a, b) in enumerate(offs) if b > p.start and a < p.end]
            if not inside:
                continue
            start, end = ctx_from + inside[0], ctx_from + inside[-1]
        out.append(Encoded([cls, *q_ids, sep, *ids, sep], ctx_from, start, end,
                           int(p.answerable), p.kind, p.span))
    return out


def collate(batch: list[Encoded]) -> dict[str, np.ndarray]:
    """Pad a batch to its longest sequence."""
    n, s = len(batch), max(len(e.ids) for e in batch)
    ids = np.zeros((n, s), np.int64)
    mask = np.zeros((n, s), np.int64)
    types = np.zeros((n, s), np.int64)
    ctx = np.zeros((n, s), np.bool_)
    for r, e in enumerate(batch):
        ids[r, : len(e.ids)] = e.ids
        mask[r, : len(e.ids)] = 1
        types[r, e.context_from: len(e.ids)] = 1
        ctx[r, e.context_from: len(e.ids) - 1] = True
    return {
        "input_ids": ids, "attention_mask": mask, "token_type_ids": types, "context": ctx,
        "start": np.array([e.start for e in batch], np.int64),
        "end": np.array([e.end for e in batch], np.int64),
        "label": np.array([e.label for e in batch], np.float32),
        "span": np.array([e.span for e in batch], np.bool_),
    }
