"""Training smoke test: a few steps on a few dozen questions, export to ONNX, reload, read.

Needs the `train` extra (torch); `make test-train` installs it and runs this file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from textbound.answer.answerability import OnnxReader
from training.answerability.data import (
    ALL_FILES,
    EXTRA_FILES,
    NEGATIVE_KINDS,
    TRAIN_FILES,
    build_pairs,
    is_holdout,
    load_questions,
)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "train"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data/train")


def test_built_negatives_are_seeded_and_hold_no_answer():
    rows = load_questions(DATA, limit=400)
    a = build_pairs(rows, seed=3, holdout=False)
    b = build_pairs(rows, seed=3, holdout=False)
    assert a == b
    kinds = {p.kind for p in a}
    assert {"pos_passage", "other", "removed"} <= kinds
    answers = {r["question"].strip(): [x["text"] for x in r["answers"]] for r in rows}
    for p in a:
        if p.kind in ("other", "removed"):
            assert not any(t.lower() in p.text.lower() for t in answers[p.question])
        if p.answerable:
            assert p.text[p.start:p.end] in [x for x in answers[p.question]]
    only_other = build_pairs(rows, seed=3, holdout=False, negatives=["other"])
    assert {p.kind for p in only_other if not p.answerable} == {"other"}
    with pytest.raises(ValueError):
        build_pairs(rows, seed=3, holdout=False, negatives=["bogus"])
    assert "real" in NEGATIVE_KINDS


def test_extra_files_add_real_negatives_and_hold_out_doqa_by_thread():
    assert ALL_FILES == TRAIN_FILES + EXTRA_FILES
    rows = load_questions(DATA, files=EXTRA_FILES)
    assert {r["id"].split("-")[0] for r in rows} == {"doqa", "condaqa"}
    doqa = [r for r in rows if r["id"].startswith("doqa")]
    # "other" and "swap" draw from the domain; the held-out slice is drawn by thread
    assert {r["article"] for r in doqa} == {"cooking", "movies", "travel"}
    assert all(r["split"] == r["title"] for r in doqa)
    assert any(is_holdout(r["split"]) for r in doqa)
    train = build_pairs(rows, seed=3, holdout=False)
    held = build_pairs(rows, seed=4, holdout=True)
    real = sum(r["is_impossible"] for r in rows)
    assert sum(p.kind == "real" for p in train + held) == real
    assert {p.kind for p in held} >= {"real", "pos_passage"}
    assert not {p.title for p in train if p.kind == "real" and "CondaQA" in p.title} & {
        p.title for p in held if "CondaQA" in p.title}
    # the default files are unchanged: the shipped run's pairs come out as before
    assert load_questions(DATA, limit=50) == load_questions(DATA, limit=50, files=TRAIN_FILES)


@pytest.mark.train
@pytest.mark.slow
def test_train_export_reload(tmp_path):
    pytest.importorskip("torch")
    from training.answerability import export, train

    run = tmp_path / "run"
    # a few more questions whose answers train the no-answer head only (--mix-no-span)
    faq = tmp_path / "faq.jsonl"
    faq.write_text("".join(json.dumps(r) + "\n" for r in load_questions(DATA, limit=6)))
    args = train.parser().parse_args([
        "--data", str(DATA), "--subset", "40", "--max-steps", "3", "--batch-size", "4",
        "--out", str(run), "--holdout-limit", "8", "--save-every", "2", "--threads", "2",
        "--mix-no-span", f"{faq}:4", "--keep-spans", "0.5", "--quiet"])
    summary = train.train(args)
    assert summary["steps"] == 3 and summary["finished"]
    assert summary["mix_no_span"] == [[str(faq), 4]]
    assert (run / "loss.png").stat().st_size > 1000
    assert json.loads((run / "summary.json").read_text())["steps"] == 3

    # run again with more steps: it resumes from the checkpoint, not from step 0
    args.max_steps = 4
    assert train.train(args)["steps"] == 4

    out = tmp_path / "model"
    cfg = export.export(run / "reader.safetensors", out, train._bundled_base() / "tokenizer.json")
    assert cfg["max_length"] == 256
    reader = OnnxReader(out)
    text = "A topic is a named bus. It carries messages."
    first = reader.read("What is a topic?", [("c1", text)])
    assert first == reader.read("What is a topic?", [("c1", text)])
    assert 0.0 <= first[0].score <= 1.0
    assert first[0].span_text and first[0].span_text in text


@pytest.mark.train
def test_span_drift_is_zero_for_the_starting_reader_and_grows_as_spans_move():
    torch = pytest.importorskip("torch")
    from training.answerability.model import ReaderNet
    from training.answerability.train import span_drift

    torch.manual_seed(0)
    net = ReaderNet().eval()
    ids = torch.randint(1000, 2000, (2, 12))
    mask = torch.ones_like(ids)
    types = torch.zeros_like(ids)
    types[:, 5:] = 1
    context = types.bool()
    batch = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types,
             "context": context}
    _, st, en = net(ids, mask, types)
    same = span_drift(net, batch, st.float(), en.float(), False, "cpu").detach()
    assert abs(float(same)) < 1e-5
    moved = st.float().clone()
    moved[:, 6] += 5.0  # the start's mass moves onto one passage token
    assert float(span_drift(net, batch, moved, en.float(), False, "cpu").detach()) > 0.1
