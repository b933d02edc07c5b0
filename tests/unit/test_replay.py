"""benchmarks/replay.py: captured compositions composed again, counted, and compared."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from benchmarks import replay
from textbound.fakes import HashEmbedder

TEXT = ("A kiln dries timber before it is sawn. The drying takes about six days at 60 degrees. "
        "Sawn boards are stacked under cover.")


def _capture(out: Path, name: str, rows: list[tuple[str, str, str, list[str]]]) -> None:
    """Write `<out>/<name>.pkl` and its records: one composition per (id, question, kind, gold)."""
    evidence = [{"chunk_id": "c1", "text": TEXT, "score": 0.8, "metadata": {"start": 0}}]
    items = [{"question": q, "evidence": evidence, "weights": {}, "query_vector": None,
              "stored": {}, "anchor": None, "heads": frozenset()}
             for _, q, _, _ in rows]
    (out / name).mkdir(parents=True)
    (out / f"{name}.pkl").write_bytes(pickle.dumps(items))
    (out / name / "records.jsonl").write_text("".join(
        json.dumps({"id": i, "question": q, "kind": k, "answers": gold}) + "\n"
        for i, q, k, gold in rows))


def test_a_replay_counts_the_answers_holding_a_gold_phrase_and_names_what_moved(
        tmp_path: Path) -> None:
    _capture(tmp_path, "kilns", [
        ("k-1", "How long does the drying take?", "answerable", ["six days"]),
        ("k-2", "How long does the drying take in the kiln?", "answerable", ["a fortnight"]),
        ("k-3", "What colour is the kiln?", "near_miss", []),
    ])
    found = replay.replay(tmp_path, ["kilns"], HashEmbedder())
    assert found["kilns"]["k-1"]["text"].startswith("The drying takes about six days")
    assert replay.summary(found) == {"kilns": {"answerable": 2, "right": 1}}
    assert found["kilns"]["k-3"]["right"] is None  # a near-miss has no gold phrase
    before = json.loads(json.dumps(found))
    before["kilns"]["k-1"]["text"] = "Sawn boards are stacked under cover."
    before["kilns"]["k-1"]["right"] = False
    lines = replay.changes(before, found)
    assert lines[0] == "kilns k-1 [answerable]  (now holds a gold phrase)"
    assert lines[1] == "  before: Sawn boards are stacked under cover."
    assert len(lines) == 3  # k-2 and k-3 did not change


def test_without_captures_it_says_how_to_make_them(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="benchmarks.lead_fit --out"):
        replay.main([str(tmp_path)])
    _capture(tmp_path, "kilns", [("k-1", "How long does the drying take?", "answerable",
                                  ["six days"])])
    with pytest.raises(SystemExit, match="for other"):
        replay.main([str(tmp_path), "--sets", "kilns", "other"])


def test_the_command_prints_the_table_saves_and_compares(tmp_path: Path, monkeypatch, capsys
                                                        ) -> None:
    import textbound.providers.embeddings as embeddings

    monkeypatch.setattr(embeddings, "build_embeddings", lambda settings: HashEmbedder())
    _capture(tmp_path, "kilns", [("k-1", "How long does the drying take?", "answerable",
                                  ["six days"])])
    saved = tmp_path / "before.json"
    replay.main([str(tmp_path), "--save", str(saved)])
    assert "| kilns | 1 | 1 |" in capsys.readouterr().out
    before = json.loads(saved.read_text())
    before["kilns"]["k-1"].update(text="Sawn boards are stacked under cover.", right=False)
    saved.write_text(json.dumps(before))
    replay.main([str(tmp_path), "--against", str(saved)])
    out = capsys.readouterr().out
    assert "| kilns | 1 | 1 (was 0) |" in out
    assert "1 answers differ from" in out and "kilns k-1 [answerable]" in out


def test_another_readers_span_leads_in_place_of_the_captured_one(tmp_path: Path) -> None:
    from textbound.answer.answerability import FakeReader

    # nothing was anchored at capture; the fake reader's span is the sentence sharing most of the
    # question's words ("stacked", "boards", "cover"), which then leads
    _capture(tmp_path, "kilns", [("k-1", "Where are the boards stacked, under cover?",
                                  "answerable", ["under cover"])])
    item = pickle.loads((tmp_path / "kilns.pkl").read_bytes())[0]
    sure = FakeReader(lambda q, t: 0.9)
    anchor = replay.reread_anchor(sure, item)
    assert anchor is not None
    (cid, start, end), span = anchor
    assert cid == "c1" and TEXT[start:end] == "Sawn boards are stacked under cover."
    assert sure.calls == [("Where are the boards stacked, under cover?", ["c1"])]
    found = replay.replay(tmp_path, ["kilns"], HashEmbedder(), reader=sure)
    assert found["kilns"]["k-1"]["text"].startswith("Sawn boards are stacked under cover.")
    # an unsure reader's span leads nothing (compose.ANCHOR_MIN_SCORE)
    assert replay.reread_anchor(FakeReader(lambda q, t: 0.3), item) is None


def test_a_reader_folder_that_cannot_load_ends_with_what_is_missing(tmp_path: Path) -> None:
    _capture(tmp_path, "kilns", [("k-1", "How long does the drying take?", "answerable",
                                  ["six days"])])
    with pytest.raises(SystemExit, match="--reader .*model.onnx is missing"):
        replay.main([str(tmp_path), "--reader", str(tmp_path / "no-model")])
