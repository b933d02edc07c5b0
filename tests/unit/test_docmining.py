"""training/docmining: a man page and an HTML table give the expected pairs and negatives.

The fixtures under tests/fixtures/docmining/ describe a made-up program and a made-up shelf
catalogue, written for these tests.
"""

from __future__ import annotations

import gzip
import random
import re
from pathlib import Path

import pytest

from training.docmining import __main__ as cli
from training.docmining.forms import misspell, verb_phrase
from training.docmining.htmldoc import parse_html
from training.docmining.mine import Rates, kind_of, mine_html, mine_man
from training.docmining.roff import parse_man, plain
from training.docmining.sources import (
    DEFAULT_EXCLUDE,
    PackageIndex,
    is_forbidden,
    licence_of,
    read_exclude,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docmining"
ALWAYS = Rates(neighbour=1.0, absent=1.0, other_section=1.0, other_program=1.0, how=1.0)
KEYS = {"id", "question", "context", "answers", "is_impossible", "title", "source"}


def _page():
    return parse_man((FIXTURES / "frobnicate.1").read_text(encoding="utf-8"))


def _man_records(seed: int = 7):
    return mine_man(_page(), package="frobtools", path="frobnicate.1", seed=seed,
                    siblings=["unfrob"], rates=ALWAYS)


def _by_kind(records, kind):
    return [r for r in records if kind_of(r["id"]) == kind]


def _answer(r):
    return r["answers"][0]["text"] if r["answers"] else None


def test_roff_escapes_and_fonts_become_plain_text():
    """Fonts, dashes and named characters reduce to plain characters."""
    text = r"\fB\-\-gloss\fR=\fILEVEL\fP \(em \(aqok\(aq \[u00E9]"
    assert plain(text) == "--gloss=LEVEL \u2014 'ok' \u00e9"


def test_man_page_sections_and_entries():
    """.TH, .SH and .TP entries are read into named sections with terms."""
    page = _page()
    assert (page.name, page.section) == ("frobnicate", "1")
    options = page.find("OPTIONS")[0]
    assert [b.term for b in options.blocks] == ["-g, --gloss=LEVEL", "-w, --wax", "-q, --quiet"]
    assert page.find("ENVIRONMENT")[0].blocks[0].term == "FROB_CLOTH"
    assert page.find("FILES")[0].blocks[0].term == "/etc/frob/cloths.conf"
    assert [b.term for b in page.find("EXIT STATUS")[0].blocks] == ["0", "4"]


def test_records_have_the_training_format_and_true_spans():
    """Every record has the seven training keys and its span sits at its offset."""
    records = _man_records()
    assert records
    for r in records:
        assert set(r) == KEYS
        assert r["is_impossible"] == (r["answers"] == [])
        for a in r["answers"]:
            assert r["context"][a["start"]:a["start"] + len(a["text"])] == a["text"]
    assert len({r["id"] for r in records}) == len(records)


def test_name_line_gives_what_does_it_do():
    """The NAME line answers what the program does."""
    (rec,) = _by_kind(_man_records(), "name")
    assert _answer(rec) == "polish widgets until they shine"
    assert "frobnicate" in rec["question"].lower()


def test_each_option_gives_its_description():
    """Every OPTIONS entry gives a question about one of its flags, answered by its text."""
    expected = {"-g": "Sets the target gloss level; the default is 3.",
                "--gloss": "Sets the target gloss level; the default is 3.",
                "-w": "Apply a coat of wax after polishing.",
                "--wax": "Apply a coat of wax after polishing.",
                "-q": "Print nothing but errors.", "--quiet": "Print nothing but errors."}
    got = {}
    for r in _by_kind(_man_records(), "option"):
        flag = re.search(r"(?<![\w-])(--?[a-z]+)", r["question"]).group(1)
        got[flag] = _answer(r)
        assert _answer(r) == expected[flag]
    assert {expected[f] for f in got} == set(expected.values())


def test_option_how_question_is_answered_by_the_option():
    """A description that opens with a verb becomes 'how do I ...', answered by the option."""
    how = {_answer(r): r["question"].lower() for r in _by_kind(_man_records(), "option-how")}
    assert "-g, --gloss=LEVEL" in how and "set the target gloss level" in how["-g, --gloss=LEVEL"]
    assert "-q, --quiet" in how and "nothing but errors" in how["-q, --quiet"]


def test_environment_files_and_exit_status_entries():
    """ENVIRONMENT, FILES and EXIT STATUS entries give their own questions."""
    records = _man_records()
    (env,) = _by_kind(records, "env")
    assert "FROB_CLOTH" in env["question"]
    assert _answer(env).startswith("Names the cloth used")
    (files,) = _by_kind(records, "file")
    assert "/etc/frob/cloths.conf" in files["question"]
    assert _answer(files) == "The list of cloths that frobnicate knows about."
    exits = {_answer(r) for r in _by_kind(records, "exit")}
    assert exits == {"if every widget shines,", "if a widget could not be read."}
    which = {_answer(r) for r in _by_kind(records, "exit-which")}
    assert which == {"0", "4"}


def test_neighbour_negatives_never_show_the_asked_entry():
    """A neighbour negative is a positive's question against entries that do not name its flag."""
    records = _man_records()
    positives = {r["question"]: r for r in records if not r["is_impossible"]}
    negs = [r for r in _by_kind(records, "neg-neighbour") if r["question"] in positives]
    assert negs
    for r in negs:
        pos = positives[r["question"]]
        assert _answer(pos) not in r["context"]
        assert r["is_impossible"] and r["answers"] == []


def test_absent_option_negatives_ask_what_the_page_lacks():
    """An absent-option negative asks about a flag, variable or exit value the page lacks."""
    page_text = (FIXTURES / "frobnicate.1").read_text(encoding="utf-8").replace("\\-", "-")
    absent = _by_kind(_man_records(), "neg-absent")
    flags = [re.search(r"(?<![\w-])(--?[A-Za-z][\w-]*)", r["question"]) for r in absent]
    flags = [m.group(1) for m in flags if m]
    assert flags
    for f in flags:
        assert re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", page_text) is None


def test_other_section_and_other_program_negatives():
    """The same question against another section, and a sibling program's name, are negatives."""
    records = _man_records()
    other = _by_kind(records, "neg-other-section")
    assert other
    answers = {_answer(r) for r in records if not r["is_impossible"]}
    assert all(a not in r["context"] for r in other for a in answers if len(a) > 10)
    (prog,) = _by_kind(records, "neg-other-program")
    assert "unfrob" in prog["question"] and "unfrob" not in prog["context"]


def test_html_table_rows_give_cell_questions():
    """Each row of a table with header cells gives a question per cell, answered by the cell."""
    lists, tables = parse_html((FIXTURES / "shelf.html").read_text(encoding="utf-8"))
    assert len(tables) == 1 and tables[0].header == ["Model", "Width", "Load"]
    assert [dl.entries[0][0] for dl in lists] == ["bracket"]  # the toc list is skipped
    records = mine_html(lists, tables, package="shelfdoc", path="doc/shelf.html", seed=3,
                        other_keys=["Dune"], rates=ALWAYS)
    cells = {(r["id"].split(":")[-3], _answer(r)) for r in _by_kind(records, "cell")}
    assert cells == {("Ark.width", "80 cm"), ("Ark.load", "40 kg"), ("Bow.width", "120 cm"),
                     ("Bow.load", "55 kg"), ("Cove.width", "60 cm"), ("Cove.load", "25 kg")}
    for r in _by_kind(records, "cell"):
        key = r["id"].split(":")[-3].split(".")[0]
        assert key.lower() in r["question"].lower() or "Model" in r["context"]
        assert "| Model | Width | Load |" in r["context"]


def test_html_table_negatives():
    """A row's question against its neighbour rows, or about a key not in the table, is a miss."""
    lists, tables = parse_html((FIXTURES / "shelf.html").read_text(encoding="utf-8"))
    records = mine_html(lists, tables, package="shelfdoc", path="doc/shelf.html", seed=3,
                        other_keys=["Dune"], rates=ALWAYS)
    neighbours = [r for r in _by_kind(records, "neg-neighbour") if "|" in r["context"]]
    assert neighbours
    for r in neighbours:
        key = r["id"].split(":")[-3].split(".")[0]
        assert f"| {key} |" not in r["context"]
    absent = [r for r in _by_kind(records, "neg-absent") if "|" in r["context"]]
    assert absent and all("dune" in r["question"].lower() and "Dune" not in r["context"]
                          for r in absent)


def test_html_definition_entries_give_what_is():
    """A <dt>/<dd> entry answers 'what is <term>' with its description's first sentence."""
    lists, tables = parse_html((FIXTURES / "shelf.html").read_text(encoding="utf-8"))
    records = mine_html(lists, [], package="shelfdoc", path="doc/shelf.html", seed=3,
                        rates=ALWAYS)
    terms = {r["id"].split(":")[-3]: _answer(r) for r in _by_kind(records, "term")}
    assert terms == {"bracket": "A metal piece that holds a shelf to the wall.",
                     "batten": "A strip of wood screwed under the shelf's back edge."}


def test_misspelling_is_seeded_and_spares_kept_words():
    """A misspelling changes one ordinary word, the same way for the same seed."""
    q = "How do I polish widgets with frobnicate?"
    a = misspell(q, random.Random(5), keep=("frobnicate",))
    assert a == misspell(q, random.Random(5), keep=("frobnicate",))
    assert a != q and "frobnicate" in a
    assert sum(x != y for x, y in zip(q.split(), a.split(), strict=True)) == 1


def test_verb_phrase_reads_imperative_and_third_person():
    """'Prints X' and 'print X' both become 'print X'; a clause without a verb gives None."""
    assert verb_phrase("Prints the version and exits.") == "print the version and exits"
    assert verb_phrase("list entries by columns") == "list entries by columns"
    assert verb_phrase("The default level.") is None


def _fake_system(tmp: Path) -> dict[str, Path]:
    """A dpkg database, man root and doc root holding frobtools and an excluded git-man."""
    man1 = tmp / "man" / "man1"
    man1.mkdir(parents=True)
    page = man1 / "frobnicate.1.gz"
    page.write_bytes(gzip.compress((FIXTURES / "frobnicate.1").read_bytes(), mtime=0))
    excluded = man1 / "git-frob.1.gz"
    excluded.write_bytes(gzip.compress((FIXTURES / "frobnicate.1").read_bytes(), mtime=0))
    info = tmp / "info"
    info.mkdir()
    (info / "frobtools.list").write_text(f"{man1}\n{page}\n")
    (info / "git-man.list").write_text(f"{excluded}\n")
    status = tmp / "status"
    status.write_text("Package: frobtools\nVersion: 1\n\nPackage: git-man\nSource: git\n")
    doc = tmp / "doc" / "frobtools"
    doc.mkdir(parents=True)
    (doc / "copyright").write_text("Format: https://www.debian.org/doc/packaging-manuals/"
                                   "copyright-format/1.0/\n\nFiles: *\nCopyright: 2024 Nobody\n"
                                   "License: MIT\n\nFiles: doc/*\nCopyright: 2024 Nobody\n"
                                   "License: CC0-1.0\n")
    exclude = tmp / "EXCLUDE"
    exclude.write_text("# the dev pool\ngit*\npostgresql*\n")
    return {"man": tmp / "man", "info": info, "status": status, "doc": tmp / "doc",
            "exclude": exclude, "excluded_page": excluded}


def _run(sysdir: dict[str, Path], out: Path, *extra: str) -> dict:
    args = cli.parser().parse_args([
        "--out", str(out), "--man-root", str(sysdir["man"]), "--doc-root", str(sysdir["doc"]),
        "--dpkg-info", str(sysdir["info"]), "--dpkg-status", str(sysdir["status"]),
        "--exclude", str(sysdir["exclude"]), "--no-html", "--quiet", *extra])
    return cli.run(args)


def test_exclude_is_honoured_and_never_read(tmp_path, monkeypatch):
    """A package matching EXCLUDE (by its source name) is skipped without reading its pages."""
    sysdir = _fake_system(tmp_path)
    read: list[Path] = []
    real_read = cli.read_doc
    monkeypatch.setattr(cli, "read_doc", lambda p: read.append(p) or real_read(p))
    summary = _run(sysdir, tmp_path / "out")
    assert sysdir["excluded_page"] not in read and read
    by_pkg = {m["package"]: m for m in summary["packages"]}
    assert by_pkg["git-man"]["skipped"] == "EXCLUDE"
    assert by_pkg["frobtools"]["licence"] == "MIT"
    assert by_pkg["frobtools"]["licences"] == ["CC0-1.0", "MIT"]
    text = (tmp_path / "out" / "docmining-man.jsonl").read_text()
    assert text and "git-frob" not in text and "git-man" not in text


def test_package_index_matches_source_names():
    """A binary package is excluded when its source package matches a pattern."""
    index = PackageIndex(owner={}, source={"libpq5": "postgresql-15", "git-man": "git"})
    patterns = ("git*", "postgresql*", "gnuplot*")
    assert index.excluded("libpq5", patterns) and index.excluded("git-man", patterns)
    assert index.excluded("gnuplot-data", patterns)
    assert not index.excluded("coreutils", patterns)


def test_run_is_deterministic_and_resumable(tmp_path):
    """Two runs give identical bytes; a rerun mines nothing new; a lost part is rebuilt the same."""
    sysdir = _fake_system(tmp_path)
    _run(sysdir, tmp_path / "a")
    _run(sysdir, tmp_path / "b")
    a = (tmp_path / "a" / "docmining-man.jsonl").read_bytes()
    assert a and a == (tmp_path / "b" / "docmining-man.jsonl").read_bytes()
    again = _run(sysdir, tmp_path / "a")
    assert again["mined_now"] == 0
    (tmp_path / "a" / "parts" / "man" / "frobtools.jsonl").unlink()
    rebuilt = _run(sysdir, tmp_path / "a")
    assert rebuilt["mined_now"] == 1
    assert (tmp_path / "a" / "docmining-man.jsonl").read_bytes() == a


def test_dev_pool_paths_are_forbidden_and_exclude_file_reads():
    """The dev pool's books and corpus/ are refused; the real EXCLUDE file lists git*."""
    repo = Path(__file__).resolve().parents[2]
    assert is_forbidden(repo / "corpus" / "x.md")
    assert is_forbidden(repo.parent / "shared" / "data" / "books" / "b" / "x.html")
    assert not is_forbidden(FIXTURES / "frobnicate.1")
    if not DEFAULT_EXCLUDE.is_file():
        pytest.skip("../shared/data/books/EXCLUDE is not on this machine")
    assert {"git*", "postgresql*", "gnuplot*"} <= set(read_exclude())


def test_licence_of_a_missing_copyright_file(tmp_path):
    """A package without a copyright file has the licence 'unknown'."""
    assert licence_of("nothing-here", tmp_path).summary == "unknown"


def test_seed_changes_the_forms_not_the_answers():
    """Another seed words the questions differently but asks for the same facts."""
    one, two = _man_records(1), _man_records(2)
    assert [r["question"] for r in one] != [r["question"] for r in two]
    assert ({_answer(r) for r in _by_kind(one, "option")}
            == {_answer(r) for r in _by_kind(two, "option")})


def test_a_pipe_in_a_cell_keeps_its_span():
    """A cell holding '|' is read with a slash, so the Markdown row and the span still agree."""
    html = ("<table><tr><th>Flag</th><th>Means</th></tr><tr><td>A</td><td>x | y</td></tr>"
            "<tr><td>B</td><td>z</td></tr></table>")
    _, tables = parse_html(html)
    records = mine_html([], tables, package="p", path="t.html", seed=1, rates=ALWAYS)
    assert "x / y" in {_answer(r) for r in _by_kind(records, "cell")}


def test_a_change_history_table_is_skipped():
    """A table keyed by version numbers (a change history) gives no cell questions."""
    html = ("<table><tr><th>Version</th><th>Changes</th></tr><tr><td>v8.2.0</td><td>Renamed."
            "</td></tr><tr><td>v8.1.0</td><td>Added.</td></tr></table>")
    _, tables = parse_html(html)
    assert tables and mine_html([], tables, package="p", path="t.html", seed=1) == []


def test_ids_are_unique_when_two_files_share_a_name():
    """Two files whose .TH names agree still give distinct record ids."""
    page = _page()
    a = mine_man(page, package="frobtools", path="/m/man1/frobnicate.1.gz", seed=1)
    b = mine_man(page, package="frobtools", path="/m/man8/frobnicate.8.gz", seed=1)
    assert not {r["id"] for r in a} & {r["id"] for r in b}


def test_mention_negatives_name_the_asked_option_and_never_say_what_it_does():
    """The NAME line and SYNOPSIS name an option and never describe it: a negative that shows it.

    Every other negative hides the asked option, so without these its presence alone would tell
    a positive from a negative. The rule draws from its own generator: the page's other records
    stay as they were.
    """
    source = (FIXTURES / "frobnicate.1").read_text(encoding="utf-8")
    listed = source.replace(
        "[\\fIOPTION\\fR]... [\\fIWIDGET\\fR]...",
        "[\\fB\\-w\\fR] [\\fB\\-\\-gloss\\fR=\\fILEVEL\\fR] [\\fIWIDGET\\fR]...")
    assert listed != source
    rates = Rates(neighbour=1.0, absent=1.0, other_section=1.0, other_program=1.0, how=1.0,
                  mention=1.0)
    records = mine_man(parse_man(listed), package="frobtools", path="frobnicate.1", seed=7,
                       siblings=["unfrob"], rates=rates)
    mention = _by_kind(records, "neg-mention")
    assert mention
    descriptions = [_answer(r) for r in _by_kind(records, "option")]
    asked = set()
    for r in mention:
        assert r["is_impossible"] and r["answers"] == []
        assert r["context"].startswith("NAME") and "SYNOPSIS" in r["context"]
        flags = re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", r["question"])
        assert flags and all(re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", r["context"])
                             for f in flags)
        assert not any(d in r["context"] for d in descriptions)
        asked.update(flags)
    assert asked <= {"-w", "--gloss"}  # -q and the others the synopsis does not name: none

    def same(rs):
        return [(r["question"], r["context"], r["answers"]) for r in rs
                if kind_of(r["id"]) != "neg-mention"]

    unlisted = mine_man(parse_man(source), package="frobtools", path="frobnicate.1", seed=7,
                        siblings=["unfrob"], rates=rates)
    assert not _by_kind(unlisted, "neg-mention")
    assert same(records) == same(unlisted)


def test_default_questions_are_answered_by_the_entry_that_states_one_and_not_by_others():
    """"What is the default for -x": its entry's sentence, or a negative on an entry with none.

    The negative's passage is about the asked option (its own entry is in it) and may hold
    another option's default: only the asked detail is missing, as in the books' near-misses.
    """
    rates = Rates(detail=1.0)
    records = mine_man(_page(), package="frobtools", path="frobnicate.1", seed=7, rates=rates)
    (pos,) = _by_kind(records, "detail")
    assert "--gloss" in pos["question"] or "-g" in pos["question"]
    assert _answer(pos) == "Sets the target gloss level; the default is 3."
    negs = _by_kind(records, "neg-detail")
    asked = {re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", r["question"])[0] for r in negs}
    assert asked and asked <= {"-w", "--wax", "-q", "--quiet"}
    for r in negs:
        assert r["is_impossible"] and r["answers"] == []
        flag = re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", r["question"])[0]
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", r["context"])
        entry = r["context"].split(flag, 1)[1].split("\n\n", 1)[0]
        assert "default" not in entry
    assert any("the default is 3" in r["context"] for r in negs)  # another option's default

    def others(rs):
        return [(r["question"], r["context"], r["answers"]) for r in rs
                if kind_of(r["id"]) not in ("detail", "neg-detail")]

    none = mine_man(_page(), package="frobtools", path="frobnicate.1", seed=7,
                    rates=Rates(detail=0.0))
    assert not _by_kind(none, "neg-detail")
    assert others(records) == others(none)
