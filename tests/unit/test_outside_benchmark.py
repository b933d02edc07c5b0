"""benchmarks.outside: the manuals outside the pool, their questions and their table."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from benchmarks.outside import (
    MANIFEST,
    QUESTIONS,
    copy_corpus,
    counts,
    printed_page,
    run_manual,
    table,
)


def test_every_manual_has_its_questions_in_the_eval_format() -> None:
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    assert len(manifest) >= 9
    for name, spec in manifest.items():
        assert {"corpus", "package", "format", "licence", "trained"} <= set(spec), name
        rows = [json.loads(line) for line in
                (QUESTIONS / f"{name}.jsonl").read_text("utf-8").splitlines() if line]
        kinds = {r["kind"] for r in rows}
        assert kinds == {"answerable", "near_miss"}, name
        assert len({r["id"] for r in rows}) == len(rows), name
        for r in rows:
            assert (r["expected"] == "answer") == (r["kind"] == "answerable"), r["id"]
            assert bool(r["answers"]) == (r["kind"] == "answerable"), r["id"]


def test_counts_read_the_calibrated_records(tmp_path: Path) -> None:
    rows = [
        {"policy": "calibrated", "kind": "answerable", "was_refusal": False, "correct": True},
        {"policy": "calibrated", "kind": "answerable", "was_refusal": True, "correct": None},
        {"policy": "calibrated", "kind": "answerable", "was_refusal": False, "correct": False},
        {"policy": "calibrated", "kind": "near_miss", "was_refusal": False, "correct": None},
        {"policy": "calibrated", "kind": "near_miss", "was_refusal": True, "correct": None},
        {"policy": "fixed", "kind": "answerable", "was_refusal": False, "correct": True},
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert counts(path) == {"answerable": 3, "right": 1, "refused": 1, "near_miss": 2,
                            "near_miss_answered": 1}


def test_a_manual_not_installed_says_what_to_install(tmp_path: Path) -> None:
    spec = {"corpus": [str(tmp_path / "nowhere.html")], "package": "nowhere-doc",
            "format": "HTML", "licence": "-", "trained": "nothing"}
    got = run_manual("nowhere", spec, tmp_path / "out", tmp_path / "data", 1)
    assert "apt-get install nowhere-doc" in got["error"]
    text = table({"nowhere": got, "here": {"answerable": 20, "right": 11, "refused": 2,
                                           "near_miss": 9, "near_miss_answered": 3}},
                 {"nowhere": spec, "here": {**spec, "format": "PDF"}},
                 before={"here": {"right": 7, "refused": 2, "near_miss_answered": 4}})
    assert "| here | PDF | nothing | 11 of 20 (was 7) | 2 (was 2) | 3 of 9 (was 4) |" in text
    assert "| nowhere | HTML | nothing | - | - | - |" in text
    assert "nowhere: " in text and "not installed" in text


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_a_manual_page_is_printed_as_text(tmp_path: Path) -> None:
    page = tmp_path / "frob.1"
    page.write_text(".TH FROB 1\n.SH NAME\nfrob \\- turn knobs\n.SH OPTIONS\n.TP\n.B \\-k\n"
                    "Turn the knob named by the next argument.\n", "utf-8")
    text = printed_page(page)
    assert "\b" not in text
    assert "frob - turn knobs" in text and "Turn the knob named by the next argument." in text
    spec = {"corpus": [str(page)], "render": "man", "package": "-", "format": "text",
            "licence": "-", "trained": "nothing"}
    corpus = copy_corpus("frob", spec, tmp_path / "out")
    assert [p.name for p in corpus.iterdir()] == ["frob.txt"]
    assert (corpus / "frob.txt").read_text("utf-8") == text


def test_a_gzipped_manual_is_copied_decompressed(tmp_path: Path) -> None:
    """Debian installs large manuals gzipped (nettle.pdf.gz): the loader reads the file inside."""
    packed = tmp_path / "frob.html.gz"
    with gzip.open(packed, "wb") as f:
        f.write(b"<html><body><p>Turn the knob.</p></body></html>")
    spec = {"corpus": [str(packed)], "package": "-", "format": "HTML", "licence": "-",
            "trained": "nothing"}
    corpus = copy_corpus("frob", spec, tmp_path / "out")
    assert [p.name for p in corpus.iterdir()] == ["frob.html"]
    assert (corpus / "frob.html").read_bytes() == b"<html><body><p>Turn the knob.</p></body></html>"
