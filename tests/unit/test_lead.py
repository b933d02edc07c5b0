"""The lead of an extractive answer: a declared table of signals, weights read from a file, fitted.

textbound/answer/lead.py declares what a candidate unit is measured by (each signal with an
example) and reads the weights from calibration/lead.json; benchmarks/lead_fit.py fits them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import lead_fit
from textbound.answer import lead
from textbound.answer.candidates import candidates
from textbound.answer.compose import extractive_draft, lead_options
from textbound.answer.followers import span_rest
from textbound.errors import ConfigError
from textbound.fakes import HashEmbedder


def _chunk(text: str, cid: str, score: float) -> dict[str, Any]:
    return {"chunk_id": cid, "text": text, "score": score,
            "metadata": {"source": "book.md", "heading_path": ["Book", "Chapter"]}}


PASSAGE = ("A topic is a named bus over which nodes exchange messages. "
           "Topics carry messages from publishers to subscribers without either knowing the "
           "other. Every topic has exactly one message type that all its publishers use.")


def test_every_signal_has_a_meaning_and_an_example() -> None:
    names = [s.name for s in lead.SIGNALS]
    assert len(names) == len(set(names))
    for s in lead.SIGNALS:
        assert s.means.strip() and s.example.strip(), s.name


def test_the_shipped_weights_weigh_exactly_the_signal_table() -> None:
    weights = lead.load_weights(lead.LEAD_FILE)
    assert set(weights) == {s.name for s in lead.SIGNALS}


def test_every_candidate_is_described_by_every_signal() -> None:
    options = lead_options("What is a topic?", [_chunk(PASSAGE, "c1", 0.7)], HashEmbedder())
    assert options
    for signals, draft in options:
        assert set(signals) == {s.name for s in lead.SIGNALS}
        assert draft["sentences"]


def test_a_file_that_does_not_match_the_table_is_refused(tmp_path: Path) -> None:
    weights = lead.load_weights(lead.LEAD_FILE)
    weights.pop("cosine")
    bad = tmp_path / "lead.json"
    bad.write_text(json.dumps({"weights": {**weights, "made_up": 1.0}}))
    with pytest.raises(ConfigError, match=r"missing \['cosine'\].*unknown \['made_up'\]"):
        lead.load_weights(bad)
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="lead_fit"):
        lead.load_weights(bad)
    with pytest.raises(ConfigError, match="cannot be read"):
        lead.load_weights(tmp_path / "missing.json")


def test_the_weights_decide_the_lead() -> None:
    """The same candidates lead differently under different weights: nothing else decides."""
    question = "What is a topic?"
    evidence = [_chunk(PASSAGE, "c1", 0.7)]
    zero = {s.name: 0.0 for s in lead.SIGNALS}
    options = lead_options(question, evidence, HashEmbedder())
    leads = {d["sentences"][0]["text"]: s["cosine"] for s, d in options}
    assert len(set(leads.values())) == len(leads) > 1  # the candidates differ in cosine
    most = extractive_draft(question, evidence, HashEmbedder(), weights={**zero, "cosine": 1.0})
    least = extractive_draft(question, evidence, HashEmbedder(), weights={**zero, "cosine": -1.0})
    assert leads[most["sentences"][0]["text"]] == max(leads.values())
    assert leads[least["sentences"][0]["text"]] == min(leads.values())


def test_a_unit_stating_the_asked_action_leads_a_how_to_answer() -> None:
    """"How do I add a column?": the unit that says how to add one leads, over the reader's
    span in a sentence about adding rows (the failure the signal was added for)."""
    text = ("A table that already has rows can still be changed. To create a new row in a "
            "table, use the INSERT command.\n\nTo add a column, use a command like:\n\n"
            "```sql\nALTER TABLE products ADD COLUMN description text;\n```\n")
    question = "How can I add one more column to an existing table?"
    evidence = [_chunk(text, "c1", 0.7)]
    start, end = text.index("To create"), text.index("command.") + len("command.")
    anchor = (("c1", start, end), ["c1", text.index("INSERT"), text.index("INSERT") + 6])
    options = lead_options(question, evidence, HashEmbedder())
    stating = {d["sentences"][0]["text"][:9]: s["states_action"] for s, d in options}
    assert stating["To add a "] == 1.0 and stating["To create"] == 0.0
    shipped = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor)
    assert shipped["sentences"][0]["text"].startswith("To add a column, use a command like:")
    assert "ALTER TABLE products ADD COLUMN" in shipped["sentences"][0]["text"]
    without = {**lead.lead_weights(), "states_action": 0.0}
    reader_led = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor,
                                  weights=without)
    assert reader_led["sentences"][0]["text"].startswith("To create a new row")


def test_a_sentence_naming_a_command_of_the_book_with_the_asked_word() -> None:
    """"How do I fill the empty volume folders?" in a book whose code opens with `box`: a
    sentence naming `box volume` (the question's word after a command head) is marked, one
    naming another command or no command is not, and without the book's heads nothing is."""
    text = ("Each volume starts empty. Once box pull has finished, box volume sync copies the "
            "files in. Old images are removed with box prune when space runs low. Volumes "
            "live under the data folder.")
    question = "I started a project and its volume folders are empty. How do I fill them?"
    evidence = [_chunk(text, "c1", 0.7)]
    marked = {d["sentences"][0]["text"][:12]: s["names_command"]
              for s, d in lead_options(question, evidence, HashEmbedder(),
                                       heads=frozenset({"box"}))}
    assert marked["Once box pul"] == 1.0
    assert marked["Old images a"] == 0.0  # a command, but not of the question's words
    assert marked["Volumes live"] == 0.0  # the question's word, but no command
    without = {d["sentences"][0]["text"][:12]: s["names_command"]
               for s, d in lead_options(question, evidence, HashEmbedder())}
    assert set(without.values()) == {0.0}
    # not a how-to question: the signal is off
    asked = lead_options("What is a volume?", evidence, HashEmbedder(), heads=frozenset({"box"}))
    assert {s["names_command"] for s, _ in asked} == {0.0}


def test_a_table_row_naming_the_asked_attribute_leads() -> None:
    """"How large is the range of the integer type?": the row whose Range cell answers it leads,
    over the reader's span in the prose that only mentions range; the other row does not lead."""
    text = ("The type integer suits most counting columns, trading its range against storage "
            "size and speed.\n\n| Name | Storage Size | Range |\n"
            "|---|---|---|\n| smallint | 2 bytes | -32768 to +32767 |\n"
            "| integer | 4 bytes | -2147483648 to +2147483647 |\n")
    question = "How large is the range of the integer type?"
    evidence = [_chunk(text, "c1", 0.7)]
    end = text.index("speed.") + len("speed.")
    anchor = (("c1", 0, end), ["c1", text.index("range"), text.index("range") + 5])
    signals = {d["sentences"][0]["text"][:14]: s["row_header"]
               for s, d in lead_options(question, evidence, HashEmbedder())}
    assert signals["Name: integer;"] == 1.0 and signals["The type integ"] == 0.0
    draft = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor)
    assert draft["sentences"][0]["text"] == ("Name: integer; Storage Size: 4 bytes; "
                                             "Range: -2147483648 to +2147483647.")
    without = {**lead.lead_weights(), "row_header": 0.0}
    reader_led = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor,
                                  weights=without)
    assert reader_led["sentences"][0]["text"].startswith("The type integer suits most")


def _signal(name: str, question: str, evidence: list[dict[str, Any]], width: int,
            embeddings: Any = None, anchor: Any = None) -> dict[str, float]:
    """Each candidate's signal `name`, keyed by the first `width` characters of the lead."""
    return {d["sentences"][0]["text"][:width]: s[name] for s, d in lead_options(
        question, evidence, embeddings or HashEmbedder(), anchor=anchor)}


def _anchor_to_end(text: str, opening: str, span: str) -> Any:
    """The reader's anchor: the text's last sentence from `opening`, its span `span`."""
    at = text.index(span)
    return ("c1", text.index(opening), len(text)), ["c1", at, at + len(span)]


def test_a_unit_printing_the_questions_literal_leads() -> None:
    """"What does ^P do?": the key table's ^P row leads, over the reader's span in another row;
    a literal every unit prints singles out none, so it weighs nothing."""
    text = ("The prompt knows a few keys.\n\n| Key | Action |\n|---|---|\n"
            "| ^A | jumps to the start of the line |\n| ^P | recalls the previous command |\n"
            "| ^N | recalls the next command |\n")
    question = "What does ^P do at the prompt?"
    evidence = [_chunk(text, "c1", 0.7)]
    row = text.index("| ^N")
    anchor = (("c1", row, text.index("\n", row)), ["c1", row + 7, row + 14])
    signals = _signal("quotes_literal", question, evidence, 7)
    assert signals["Key: ^P"] == 1.0 and signals["Key: ^N"] == 0.0
    draft = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor)
    assert draft["sentences"][0]["text"] == "Key: ^P; Action: recalls the previous command."
    without = {**lead.lead_weights(), "quotes_literal": 0.0}
    reader_led = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor,
                                  weights=without)
    assert reader_led["sentences"][0]["text"].startswith("Key: ^N")
    every = "\n".join(f"Step {n}: press ^P to go back." for n in range(4))
    options = lead_options(question, [_chunk(every, "c2", 0.7)], HashEmbedder())
    assert options and all(s["quotes_literal"] == 0.0 for s, _ in options)


def test_the_readers_unit_takes_the_literal_its_passage_is_about() -> None:
    """The reader's sentence after the one naming the question's literal is about it too: it
    leads over the naming sentence, which does not say how much."""
    text = ("The `fs.load()` method reads a file into memory one chunk at a time, letting "
            "other work run between chunks. The overhead varies by system. For regular files, "
            "each read takes 512 KiB of data.")
    other = "The `fs.load()` method was added in version 2 of the library."
    question = "how much data does fs.load read per chunk for a regular file"
    evidence = [_chunk(text, "c1", 0.7), _chunk(other, "c2", 0.6)]
    anchor = _anchor_to_end(text, "For regular", "512 KiB")
    signals = _signal("quotes_literal", question, evidence, 12, anchor=anchor)
    # the unit the reader did not choose does not take its passage's subject
    assert signals["For regular "] == 1.0 and signals["The overhead"] == 0.0, signals
    draft = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor)
    assert draft["sentences"][0]["text"].startswith("For regular files"), draft


def test_a_unit_restating_the_question_leads_over_the_readers_span() -> None:
    """"What does the cif in ffi_cif stand for?": the sentence saying "The cif in ffi_cif stands
    for Call InterFace." leads, though the reader's span sits in another sentence."""
    text = ("The library prepares a call with ffi_prep_cif before making it. "
            "The cif in ffi_cif stands for Call InterFace. "
            "A cif describes the argument and return types of the function.")
    question = "What does the cif in ffi_cif stand for?"
    evidence = [_chunk(text, "c1", 0.7)]
    anchor = _anchor_to_end(text, "A cif describes", "argument and return types")

    class Near(HashEmbedder):  # the question and the sentence restating it share a vector
        def embed_query(self, text: str) -> list[float]:
            return [1.0] + [0.0] * 15 if "stand" in text else super().embed_query(text)

    signals = _signal("restates", question, evidence, 12, Near(), anchor)
    assert signals["The cif in f"] > 0.9 and signals["A cif descri"] == 0.0, signals
    draft = extractive_draft(question, evidence, Near(), anchor=anchor)
    assert draft["sentences"][0]["text"].startswith("The cif in ffi_cif stands"), draft
    without = {**lead.lead_weights(), "restates": 0.0}
    reader_led = extractive_draft(question, evidence, Near(), anchor=anchor, weights=without)
    assert reader_led["sentences"][0]["text"].startswith("A cif describes"), reader_led


def test_row_cells_read_a_row_with_its_header_back() -> None:
    from textbound.answer.candidates import row_cells
    assert row_cells("Name: integer; Range: -2147483648 to +2147483647.") == [
        ("Name", "integer"), ("Range", "-2147483648 to +2147483647")]
    assert row_cells("integer; 4 bytes.") == []  # a table without a header row


def _question(book: str, rows: list[list[float]], right: list[bool]) -> lead_fit.Question:
    return lead_fit.Question(book, f"{book}-{len(rows)}", np.array(rows, dtype=float),
                             np.array(right), False)


def test_the_fit_learns_which_signal_marks_the_right_lead() -> None:
    """Two signals; only the second marks the right candidate: the fit weighs it up."""
    k = len(lead_fit.NAMES)

    def row(a: float, b: float) -> list[float]:
        r = [0.0] * k
        r[0], r[1] = a, b
        return r

    questions = [
        _question("one", [row(0.9, 0.0), row(0.1, 1.0), row(0.5, 0.0)], [False, True, False]),
        _question("one", [row(0.2, 1.0), row(0.8, 0.0)], [True, False]),
        _question("two", [row(0.7, 0.0), row(0.6, 0.0), row(0.3, 1.0)], [False, False, True]),
    ]
    start = np.array([1.0] + [0.0] * (k - 1))  # the first signal leads: every choice is wrong
    assert not any(lead_fit.chosen_right(q, start) for q in questions)
    fitted = lead_fit.fit(questions, start, l2=0.0, steps=300)
    assert all(lead_fit.chosen_right(q, fitted) for q in questions)
    assert fitted[1] > fitted[0]
    rows = lead_fit.report(questions, start, fitted)
    assert [(r["book"], r["before"], r["after"]) for r in rows] == [("one", 0, 2), ("two", 0, 1)]


def test_the_sweep_counts_right_leads_per_set_for_each_weight() -> None:
    """--sweep: one weight varied, the others shipped; a row per weight, a column per set."""
    k = len(lead_fit.NAMES)
    at = lead_fit.NAMES.index("row_header")

    def row(cos: float, header: float) -> list[float]:
        r = [0.0] * k
        r[lead_fit.NAMES.index("cosine")], r[at] = cos, header
        return r

    questions = [
        _question("pg", [row(0.9, 0.0), row(0.5, 1.0)], [False, True]),
        _question("os", [row(0.9, 0.0), row(0.6, 0.0)], [True, False]),
    ]
    shipped = {n: 0.0 for n in lead_fit.NAMES} | {"cosine": 1.0}
    rows = lead_fit.sweep(questions, shipped, "row_header=0,2.5")
    assert rows[0] == "| row_header | pg | os |"
    assert rows[2:] == ["| 0 | 0 | 1 |", "| 2.5 | 1 | 1 |"]
    with pytest.raises(SystemExit, match="--sweep wants"):
        lead_fit.sweep(questions, shipped, "no_such_signal=1")


def test_a_broken_weights_file_stops_the_graph_at_start_up(tmp_path: Path, monkeypatch) -> None:
    """The services refuse to start on a broken calibration/lead.json, naming it, rather than
    failing on a request."""
    from graph.services import build_services
    from tests.conftest import make_settings
    from textbound.fakes import MemoryStore

    bad = tmp_path / "lead.json"
    bad.write_text('{"weights": {"cosine": 1.0}}')
    monkeypatch.setattr(lead, "LEAD_FILE", bad)
    lead.lead_weights.cache_clear()
    try:
        with pytest.raises(ConfigError, match="lead.json"):
            build_services(settings=make_settings(tmp_path), embeddings=HashEmbedder(),
                           store=MemoryStore(HashEmbedder(), "fake"))
    finally:
        lead.lead_weights.cache_clear()


def test_the_readers_span_over_several_sentences_is_quoted_whole() -> None:
    """The reader's span runs from the lead's sentence into the next two: the answer quotes
    all three (a lead and one supporting sentence would be two), and nothing past its end."""
    text = ("A robot arm has a limit on how many waypoints one trajectory may hold. "
            "It depends on the controller. Small controllers hold 64, and large ones 4096. "
            "Each trajectory keeps its waypoints in the arm's memory.")
    question = "What is the most waypoints a trajectory can have?"
    evidence = [_chunk(text, "c1", 0.7)]
    first_end = text.index("hold.") + len("hold.")
    anchor = (("c1", 0, first_end), ["c1", 0, text.index("4096") + 4])
    draft = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor)
    assert [s["text"] for s in draft["sentences"]] == [
        "A robot arm has a limit on how many waypoints one trajectory may hold.",
        "It depends on the controller.", "Small controllers hold 64, and large ones 4096."]
    lead_unit = next(c for c in candidates(question, evidence) if c.unit.start == 0)
    assert span_rest(lead_unit, (("c1", 0, first_end), ["c1", 0, first_end - 1])) == []
    assert [u.text for u in span_rest(lead_unit, anchor)] == [
        "It depends on the controller.", "Small controllers hold 64, and large ones 4096."]


def test_a_definition_is_of_its_subjects_head_noun() -> None:
    """A subject sharing most of the term's words but headed by another noun defines nothing.

    "The oldest file in the backup folder ..." is said of a file, not of the backup folder;
    "The law of the excluded middle ..." names every word of its term and defines it.
    """
    from textbound.answer.candidates import defined_subject

    term = ["default", "backup", "folder"]
    said_of_a_file = "The oldest file in the backup folder is the default one to delete first."
    assert defined_subject(said_of_a_file, term, False) is None
    assert defined_subject("The default backup folder is the one named in the settings.",
                           term, False) == term
    assert defined_subject("The law of the excluded middle is a principle of logic.",
                           ["law", "exclud", "middle"], False) == ["law", "exclud", "middle"]
    # a subject of the term's own words, whatever its length
    assert defined_subject("A backup folder is where copies are kept.", term, False) is not None


def test_the_table_row_keyed_by_the_questions_literal_leads() -> None:
    """"What nice value does PRIORITY_HIGH map to?": the row whose first cell is PRIORITY_HIGH
    leads, over the reader's span in a neighbouring row that names PRIORITY_HIGH in its
    description (four rows print the literal, too many for it to single one out)."""
    rows = [("PRIORITY_LOW", "The lowest priority, a nice value of 19."),
            ("PRIORITY_NORMAL", "Above PRIORITY_LOW and below PRIORITY_HIGH, a nice value of 0."),
            ("PRIORITY_HIGH", "Above PRIORITY_NORMAL and below PRIORITY_HIGHEST, a nice value "
             "of -14."),
            ("PRIORITY_HIGHEST", "Above PRIORITY_HIGH, a nice value of -20.")]
    text = "| Constant | Description |\n| --- | --- |\n" + "".join(
        f"| `{k}` | {d} |\n" for k, d in rows)
    question = "what nice value does PRIORITY_HIGH map to on linux"
    evidence = [_chunk(text, "c1", 0.7)]
    options = lead_options(question, evidence, HashEmbedder())
    keyed = [d["sentences"][0]["text"] for s, d in options if s["quotes_literal"] == 1.0]
    assert len(keyed) == 1 and keyed[0].startswith("Constant: PRIORITY_HIGH; "), keyed
    span = text.index("a nice value of 0")
    line = text.index("| `PRIORITY_NORMAL`")
    anchor = (("c1", line, text.index("\n", line)), ["c1", span, span + 17])
    draft = extractive_draft(question, evidence, HashEmbedder(), anchor=anchor)
    assert draft["sentences"][0]["text"].startswith("Constant: PRIORITY_HIGH; "), draft
