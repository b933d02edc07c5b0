"""training/answerability/head.py end to end on two tiny manuals: evidence, features, fit, file."""

from __future__ import annotations

import json

import pytest

from textbound.answer.reader_head import HEAD_FILE, ReaderHead
from training.answerability import head as trainer

MANUALS = {
    "tool": ("<html><body><h1>The tool</h1><h2>Options</h2><p>The -q option silences the "
             "banner. The -o option writes the report to a file instead of the terminal.</p>"
             "<h2>Files</h2><p>The tool reads its settings from ~/.toolrc at start.</p>"
             "</body></html>"),
    "calc": ("<html><body><h1>The calculator</h1><h2>Scale</h2><p>The scale variable sets how "
             "many digits follow the decimal point; it starts at 0. The -l option loads the "
             "math library and sets scale to 20.</p></body></html>"),
}
QUESTIONS = {
    "tool": [("how do i stop the banner", "answerable"),
             ("where does the tool read its settings from", "answerable"),
             ("who wrote the tool", "near_miss"), ("what licence is the tool under", "near_miss")],
    "calc": [("what does scale start at", "answerable"),
             ("how do i load the math library", "answerable"),
             ("how do i compute a tangent", "near_miss"),
             ("which version added the -l option", "near_miss")],
}


def test_head_training_writes_a_head_the_reader_reads(tmp_path, monkeypatch):
    pytest.importorskip("onnx")
    qdir = tmp_path / "questions"
    qdir.mkdir()
    books = {}
    for name, html in MANUALS.items():
        page = tmp_path / f"{name}.html"
        page.write_text(html)
        books[name] = {"corpus": str(page), "package": name, "format": "HTML", "licence": "test"}
        (qdir / f"{name}.jsonl").write_text("".join(
            json.dumps({"id": f"{name}-{i}", "question": q, "kind": k, "answers": []}) + "\n"
            for i, (q, k) in enumerate(QUESTIONS[name])))
    (qdir / "books.json").write_text(json.dumps(books))
    out = tmp_path / "out"
    trainer.main(["--questions", str(qdir), "--out", str(out), "--data-dir",
                  str(tmp_path / "data")])
    head = ReaderHead.load(out / HEAD_FILE)
    data = json.loads((out / HEAD_FILE).read_text())
    assert data["trained_on"]["tool"]["questions"] == 4
    assert data["trained_on"]["calc"]["answerable"] == 2
    assert data["l2"] in trainer.L2_GRID and head.blend == 0.5
    assert set(data["l2_choice"]) == {str(v) for v in trainer.L2_GRID}


def test_a_missing_manual_says_which_package_to_install(tmp_path):
    qdir = tmp_path / "questions"
    qdir.mkdir()
    (qdir / "books.json").write_text(json.dumps({"gone": {
        "corpus": str(tmp_path / "nowhere.html"), "package": "some-doc", "licence": "x"}}))
    with pytest.raises(SystemExit, match="apt-get install some-doc"):
        trainer.main(["--questions", str(qdir), "--out", str(tmp_path / "out")])


def test_a_manual_of_several_files_is_read_and_a_held_out_one_is_not(tmp_path):
    """outside.json names a manual by a list of files; --hold-out keeps a manual to measure on."""
    pytest.importorskip("onnx")
    qdir = tmp_path / "questions"
    qdir.mkdir()
    pages = []
    for n, part in enumerate(MANUALS["tool"].split("<h2>Files</h2>")):
        page = tmp_path / f"tool-{n}.html"
        page.write_text(part if n == 0 else "<html><body><h2>Files</h2>" + part)
        pages.append(str(page))
    calc = tmp_path / "calc.html"
    calc.write_text(MANUALS["calc"])
    books = {"tool": {"corpus": pages, "package": "tool", "format": "HTML", "licence": "test"},
             "calc": {"corpus": str(calc), "package": "calc", "format": "HTML",
                      "licence": "test"}}
    for name in books:
        (qdir / f"{name}.jsonl").write_text("".join(
            json.dumps({"id": f"{name}-{i}", "question": q, "kind": k, "answers": []}) + "\n"
            for i, (q, k) in enumerate(QUESTIONS[name])))
    (qdir / "several.json").write_text(json.dumps(books))
    out = tmp_path / "out"
    trainer.main(["--questions", str(qdir), "--books", "several.json", "--hold-out", "calc",
                  "--l2", "3", "--out", str(out), "--data-dir", str(tmp_path / "data")])
    data = json.loads((out / HEAD_FILE).read_text())
    assert set(data["trained_on"]) == {"tool"} and data["held_out"] == ["calc"]
    assert data["trained_on"]["tool"]["questions"] == 4
    assert sorted(p.name for p in (tmp_path / "data" / "corpora" / "tool").iterdir()) == [
        "tool-0.html", "tool-1.html"]
    assert "--hold-out calc" in data["command"] and "--books several.json" in data["command"]
