"""The command line as a user meets it: the demo keeps their documents, errors say what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from textbound.serving.cli import app

BOOK = """# Chapter 1: Underwater Gliders

An underwater glider changes its buoyancy to move forward. It needs no propeller.

## Buoyancy engines

A buoyancy engine pumps oil from an internal reservoir into an external bladder, which makes
the glider lighter than the water around it, so it rises. To dive, the engine pumps the oil
back into the hull and the glider sinks. Wings turn this rising and sinking into forward motion.
"""
PAGE = """<html><head><title>Glider notes</title></head><body>
<h1>Glider batteries</h1><p>Lithium primary cells give a glider months at sea.</p>
</body></html>"""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A runner whose data folder and bundled corpus are the test's own (a one-file corpus)."""
    corpus = tmp_path / "bundled"
    corpus.mkdir()
    (corpus / "robots.md").write_text("# Robots\n\nA robot senses, plans and acts.\n")
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TEXTBOUND_CORPUS_DIR", str(corpus))
    monkeypatch.setenv("TEXTBOUND_SENTENCE_VECTORS", "false")
    return CliRunner()


def _user_docs(tmp_path: Path) -> Path:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "gliders.md").write_text(BOOK)
    (mine / "notes.html").write_text(PAGE)
    return mine


def _sources(cli: CliRunner, *args: str) -> set[str]:
    out = cli.invoke(app, ["stats", "--json", *args])
    assert out.exit_code == 0, out.output
    return {d["source"] for d in json.loads(out.stdout)["table_of_contents"]}


def test_demo_leaves_the_users_documents_in_place(cli: CliRunner, tmp_path: Path) -> None:
    """`textbound demo` (what `make run` runs) writes its own collection and prunes nothing else."""
    mine = _user_docs(tmp_path)
    assert cli.invoke(app, ["ingest", str(mine)]).exit_code == 0
    before = _sources(cli)

    demo = cli.invoke(app, ["demo"])
    assert demo.exit_code == 0, demo.output

    assert _sources(cli) == before == {"mine/gliders.md", "mine/notes.html"}
    assert _sources(cli, "--collection", "demo") == {"bundled/robots.md"}


def test_demo_writes_its_own_audit_log_never_the_courses(cli: CliRunner, tmp_path: Path) -> None:
    """The demo's answers go to <data_dir>/demo/audit.jsonl; the course's report never sees them."""
    assert cli.invoke(app, ["ingest", str(_user_docs(tmp_path))]).exit_code == 0
    asked = cli.invoke(app, ["ask", "How does a buoyancy engine work?", "--json"])
    assert asked.exit_code == 0, asked.output
    course_log = tmp_path / "data" / "audit.jsonl"
    before = course_log.read_bytes()

    demo = cli.invoke(app, ["demo"])
    assert demo.exit_code == 0, demo.output
    assert course_log.read_bytes() == before
    demo_lines = (tmp_path / "data" / "demo" / "audit.jsonl").read_text().splitlines()
    assert len(demo_lines) == 7  # the demo's seven sample questions
    assert json.loads(demo_lines[0])["question"] == "What is a ROS 2 topic?"


def test_prune_removes_only_documents_under_the_ingested_path(cli: CliRunner,
                                                               tmp_path: Path) -> None:
    """Pruning the bundled corpus keeps a user's documents from elsewhere, and names what goes."""
    mine = _user_docs(tmp_path)
    bundled = tmp_path / "bundled"
    (bundled / "extra.md").write_text("# Extra\n\nAn extra page about wheels.\n")
    assert cli.invoke(app, ["ingest", str(mine), str(bundled)]).exit_code == 0
    (bundled / "extra.md").unlink()

    pruned = cli.invoke(app, ["ingest", str(bundled), "--prune"])

    assert pruned.exit_code == 0, pruned.output
    assert "removed bundled/extra.md" in " ".join(pruned.stdout.split())
    assert _sources(cli) == {"mine/gliders.md", "mine/notes.html", "bundled/robots.md"}


def _one_line_error(result) -> str:
    assert "Traceback" not in result.output
    text = " ".join(result.stderr.split())
    assert text.startswith("error:"), result.output
    return text


@pytest.mark.parametrize(("variable", "value", "allowed"), [
    ("TEXTBOUND_TOP_K", "abc", "an integer from 1 to 50"),
    ("TEXTBOUND_POLICY", "foo", "one of 'calibrated', 'seed_000', 'seed_002', 'seed_004'"),
])
def test_a_bad_setting_is_one_line_naming_it_and_exit_2(cli: CliRunner, monkeypatch, variable,
                                                         value, allowed) -> None:
    """A bad TEXTBOUND_ value names the variable and what it allows, without a traceback."""
    monkeypatch.setenv(variable, value)
    import graph.app as graph_app

    monkeypatch.setattr(graph_app, "_graph", None)
    from textbound.settings import get_settings

    get_settings.cache_clear()
    result = cli.invoke(app, ["ask", "What is a glider?"])
    get_settings.cache_clear()
    assert result.exit_code == 2
    assert f"{variable}={value}: expected {allowed}" in _one_line_error(result)


def test_a_bad_option_value_lists_the_allowed_ones(cli: CliRunner) -> None:
    """`ask --policy bogus` is a usage error naming the policies, not a refused question."""
    result = cli.invoke(app, ["ask", "What is a glider?", "--policy", "bogus"])
    assert result.exit_code == 2
    words = " ".join(result.output.replace("\u2502", " ").split())  # rich draws a box
    assert "'bogus' is not one of calibrated, seed_000, seed_002, seed_004" in words


def test_asking_before_ingesting_says_to_ingest_and_exits_4(cli: CliRunner) -> None:
    """An empty data folder: exit 4 and the command that fixes it, not 'try again'."""
    result = cli.invoke(app, ["ask", "What is a glider?", "--collection", "empty"])
    assert result.exit_code == 4
    assert "textbound ingest PATH" in " ".join(result.output.split())
    assert "try again" not in result.output.lower()
    stats = cli.invoke(app, ["stats", "--collection", "empty"])
    assert stats.exit_code == 4 and "textbound ingest PATH" in " ".join(stats.stderr.split())


def test_a_missing_path_or_an_empty_folder_is_an_error(cli: CliRunner, tmp_path: Path) -> None:
    """Ingesting nothing is never a silent success."""
    missing = cli.invoke(app, ["ingest", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such file or folder" in _one_line_error(missing)
    (tmp_path / "empty").mkdir()
    empty = cli.invoke(app, ["ingest", str(tmp_path / "empty")])
    assert empty.exit_code == 2 and "nothing to ingest" in _one_line_error(empty)


def test_ingest_lists_files_skipped_for_one_reason_as_one_line_past_a_few(
        cli: CliRunner, tmp_path: Path) -> None:
    """A Texinfo manual's redirect pages (a hundred of them) are one line of the report, naming
    two and the count; a few skipped files are still listed one a line; --json lists each."""
    mine = _user_docs(tmp_path)
    for n in range(12):
        (mine / f"moved{n:02}.html").write_text(
            '<html><head><meta http-equiv="refresh" content="0; url=notes.html"></head></html>')
    (mine / "empty.md").write_text("")
    out = cli.invoke(app, ["ingest", str(mine)])
    assert out.exit_code == 0, out.output
    text = "".join(out.output.split())  # the console wraps long paths anywhere
    assert "".join(f"skipped 12 files ({mine / 'moved00.html'}, {mine / 'moved01.html'} and 10 "
                   "more; --json lists each): a page that only sends the browser on to another "
                   "(a redirect)".split()) in text
    assert "moved05.html" not in text
    assert "".join(f"skipped {mine / 'empty.md'}: empty file".split()) in text
    data = json.loads(cli.invoke(app, ["ingest", "--json", str(mine)]).stdout)
    assert len(data["files_skipped"]) == 13


def test_ingest_applies_the_upload_name_rules(cli: CliRunner, tmp_path: Path) -> None:
    """A file name the server would refuse is refused by `textbound ingest` too, before writing."""
    mine = _user_docs(tmp_path)
    bad = mine / "tab\there.md"  # not printable: not a plain file name
    bad.write_text(BOOK)
    out = cli.invoke(app, ["ingest", str(mine)])
    assert out.exit_code == 2 and "not a plain file name" in _one_line_error(out)
    assert cli.invoke(app, ["ingest", str(mine / "gliders.md")]).exit_code == 0
    assert _sources(cli) == {"gliders.md"}  # the refused call wrote nothing


def test_ingest_refuses_a_look_alike_of_an_ingested_source(cli: CliRunner,
                                                           tmp_path: Path) -> None:
    """A source that differs from an ingested one only in letter case is refused, not added."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "gliders.md").write_text(BOOK)
    (second / "Gliders.md").write_text(BOOK)
    assert cli.invoke(app, ["ingest", str(first / "gliders.md")]).exit_code == 0
    out = cli.invoke(app, ["ingest", str(second / "Gliders.md")])
    assert out.exit_code == 2 and "looks the same as" in _one_line_error(out)
    assert _sources(cli) == {"gliders.md"}


def test_fail_on_refusal_sets_the_exit_code(cli: CliRunner, tmp_path: Path) -> None:
    """0 for an answer; 3 for a refusal only with --fail-on-refusal; --collection picks one."""
    mine = _user_docs(tmp_path)
    assert cli.invoke(app, ["ingest", str(mine), "--collection", "gliders"]).exit_code == 0
    ask = ["--collection", "gliders", "--json"]
    answered = cli.invoke(app, ["ask", "What does a buoyancy engine pump?", *ask,
                                "--fail-on-refusal"])
    assert answered.exit_code == 0, answered.output
    assert json.loads(answered.stdout)["was_refusal"] is False
    refused = ["ask", "What is the capital of France?", *ask]
    assert cli.invoke(app, refused).exit_code == 0
    assert cli.invoke(app, [*refused, "--fail-on-refusal"]).exit_code == 3


def test_chat_prints_the_history_table_once(cli: CliRunner, tmp_path: Path) -> None:
    """`history` then `exit` shows the conversation's table once, not again at exit."""
    mine = _user_docs(tmp_path)
    assert cli.invoke(app, ["ingest", str(mine)]).exit_code == 0
    result = cli.invoke(app, ["chat"], input="What does a buoyancy engine pump?\nhistory\nexit\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("conversation chat-") == 1
