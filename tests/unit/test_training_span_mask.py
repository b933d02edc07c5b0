"""training/answerability: a source whose spans are not trained (`--mix-no-span`) still gives
positives, and the batch says which positives the span loss reads."""

from __future__ import annotations

from pathlib import Path

from training.answerability.data import build_pairs
from training.answerability.features import collate, encode_pairs, load_tokenizer

TOKENIZER = Path(__file__).resolve().parents[2] / "models" / "answerability" / "tokenizer.json"
CONTEXT = ("Frobnicate reads every file it is given. Give it the -r option and a directory to "
           "read each file under the directory. It writes nothing else.")


def _row(qid: str, question: str, span: bool | None) -> dict:
    start = CONTEXT.index("Give it")
    row = {"id": qid, "title": "frob / faq", "question": question, "context": CONTEXT,
           "answers": [{"text": "Give it the -r option and a directory", "start": start}],
           "is_impossible": False, "article": "frob", "split": "frob"}
    if span is not None:
        row["span"] = span
    return row


def test_positives_of_a_no_span_source_are_kept_with_their_span_untrained() -> None:
    rows = [_row("a", "How do I frobnicate a directory?", None),
            _row("b", "how can i frobnicate a whole folder", False)]
    pairs = build_pairs(rows, seed=1, holdout=False, negatives=[])
    positives = [p for p in pairs if p.answerable]
    assert {p.question for p in positives} == {r["question"] for r in rows}
    assert all(p.span for p in positives if p.question.startswith("How"))
    assert not any(p.span for p in positives if p.question.startswith("how"))
    enc = encode_pairs(positives, load_tokenizer(TOKENIZER), 256, seed=1)
    batch = collate(enc)
    assert batch["label"].tolist() == [1.0] * len(enc)  # still answerable for the no-answer head
    assert batch["span"].tolist() == [e.span for e in enc] and False in batch["span"].tolist()
    # the answer's tokens are still located: the label is right whether or not it is trained
    assert all(e.start > 0 for e in enc)
