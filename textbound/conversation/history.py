"""A conversation's history: the thread's earlier turns, bounded in number and in size.

The reply (nodes/_common.py) appends each run's turn with `next_history`; contextualize reads the
turns back to make a follow-up standalone (textbound/conversation/rewrite.py).
"""

from __future__ import annotations

from textbound.shapes import Turn

__all__ = ["TURN_TEXT_CHARS", "next_history"]

TURN_TEXT_CHARS = 2000
"""Longest question or answer a thread keeps of one turn (the rest is cut)."""


def next_history(history: list[Turn], turn: Turn, *, turns: int, chars: int) -> list[Turn]:
    """Return `history` with `turn` appended, keeping the newest `turns` turns within `chars`.

    The oldest turns go first; the newest is always kept (its texts cut to fit).
    """
    def size(t: Turn) -> int:
        return len(t["question"]) + len(t["standalone"]) + len(t["answer"])

    cut = min(TURN_TEXT_CHARS, chars)
    turn = {**turn, "question": turn["question"][:cut], "standalone": turn["standalone"][:cut],
            "answer": turn["answer"][:cut]}
    kept = [*history, turn][-turns:]
    while len(kept) > 1 and sum(size(t) for t in kept) > chars:
        kept.pop(0)
    return kept
