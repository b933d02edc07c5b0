"""Commands a question names that the book never says (textbound/text/commands.py).

A technical book's code blocks open with its program ("$ git log", "set xrange"); a question
naming a command of that program the book never once says asks about what the book does not
cover, and the gate refuses it as it refuses a name the book never uses.
"""

from __future__ import annotations

from collections import Counter

from textbound.answer.evidence import unknown_commands
from textbound.documents.store import TermStats
from textbound.text.commands import (
    asked_commands,
    block_openings,
    code_heads,
    following_words,
    word_heads,
)

GIT = frozenset({"git"})


def test_the_word_opening_a_code_block_after_its_prompt() -> None:
    text = ("Run this:\n\n```\n$ git log -p\n```\n\nor\n\n```\ndev$ git fetch upstream\n```\n"
            "\n```sh\n\nshop=> SELECT 1;\n```\n\n```\nset xrange [0:1]\nplot sin(x)\n```\n")
    assert [head for head, _ in block_openings(text)] == ["git", "git", "SELECT", "set"]


def test_a_head_opens_enough_of_the_books_blocks_and_is_no_function_word() -> None:
    opening = Counter({"git": 40, "echo": 3, "from": 30, "SELECT": 20, "cd": 5})
    assert code_heads(opening, 100) == frozenset({"git"})  # echo: too few; cd: under 10%
    assert code_heads(Counter({"cd": 5}), 20) == frozenset({"cd"})
    assert code_heads(Counter(), 0) == frozenset()


def test_what_follows_a_head_in_prose_or_code() -> None:
    found = following_words("Use git log. Then `git rebase -i`; Git Bisect helps.", GIT)
    assert found == {"git": {"log", "rebase", "bisect"}}


def test_a_question_names_a_command_as_the_code_writes_it() -> None:
    asked = asked_commands
    assert asked("how do I find who changed each line with git blame?", GIT) == [("git", "blame")]
    assert asked("How long does Git keep reflog entries?", GIT) == []  # the program, not typed
    assert asked("how do I use git to undo a commit?", GIT) == []  # a function word
    assert asked("does git track file permissions?", GIT) == []  # the subject of "track"
    assert asked("how do i use git worktree?", GIT) == [("git", "worktree")]


def test_unknown_commands_are_those_the_book_never_says() -> None:
    stats = TermStats(10, {}, commands={"git": frozenset({"log", "rebase", "clone"})})
    assert unknown_commands("how do I squash commits with git rebase?", stats) == []
    assert unknown_commands("how do I use git blame to find who wrote a line?", stats) == [
        "git blame"]
    assert unknown_commands("how do I use git blame?", TermStats(10, {})) == []  # no code
    assert unknown_commands("how do I use git blame?", None) == []


def test_a_head_takes_subcommands_when_its_blocks_go_on_with_a_word() -> None:
    text = ("```\n$ git log -p\n```\n\n```\n$ git rebase -i HEAD~3\n```\n\n"
            "```\n$ time -v sleep 4\n```\n\n```\ntime -o out.txt make\n```\n\n"
            "```\ntime ls\n```\n\n```\nset xrange [0:1]\n```\n")
    openings = block_openings(text)
    assert openings[:3] == [("git", "log"), ("git", "rebase"), ("time", "-v")]
    # git: 2 of 2 blocks go on with a word; time: 1 of 3; a head not asked for is left out
    assert word_heads(openings, {"git", "time"}) == frozenset({"git"})
    assert word_heads(openings, {"set"}) == frozenset({"set"})
    assert word_heads([], {"git"}) == frozenset()


def test_a_head_that_takes_no_subcommands_names_no_unknown_command() -> None:
    """GNU time's blocks run "time -v ...": "time keeps overwriting my log" asks no command."""
    commands = {"time": frozenset({"-v", "-o", "sleep"})}
    question = "time keeps overwriting my log file, how do I add to it instead"
    assert unknown_commands(question, TermStats(10, {}, commands=commands)) == ["time keeps"]
    taking_none = TermStats(10, {}, commands=commands, subcommand_heads=frozenset())
    assert unknown_commands(question, taking_none) == []
    git = TermStats(10, {}, commands={"git": frozenset({"log"})},
                    subcommand_heads=frozenset({"git"}))
    assert unknown_commands("how do I use git blame?", git) == ["git blame"]


def test_the_graph_refuses_a_command_the_book_never_says(tmp_path, embeddings, exploding_chat):
    """A small Git book: a question about "git log" is answered; the same question about
    "git blame" (a word the book uses, a command it never says) is refused before any model."""
    from pathlib import Path

    from graph.builder import build_graph
    from textbound.fakes import MemoryStore

    from ..conftest import make_settings

    def block(lead: str, cmd: str) -> str:
        return f"{lead}\n\n```\n$ git {cmd}\n```\n"

    passages = [
        block("To see who changed each line of a file and when, read its history with",
              "log -p README"),
        block("To see what changed in the last commit, use", "show HEAD"),
        block("To compare your working tree with the index, use", "diff"),
        block("To list the branches you have, use", "branch"),
        block("To fetch the commits of another repository, use", "fetch origin"),
        "Nobody is to blame for a conflict: each line of a file is merged on its own.",
    ]
    store = MemoryStore.holding(embeddings, [
        (f"c{n}", text, {"source": "git.md", "heading_path": ["Git", f"Part {n}"]})
        for n, text in enumerate(passages)])
    assert set(store.term_stats().commands) == {"git"}
    assert store.term_stats().subcommand_heads == frozenset({"git"})
    calibration = Path(__file__).parent.parent / "fixtures" / "calibration.json"
    graph = build_graph(settings=make_settings(tmp_path, calibration_file=calibration,
                                               answerability=False),
                        embeddings=embeddings, store=store, chat_model=exploding_chat)

    def ask(question: str) -> dict:
        return graph.invoke({"question": question}, context={"generator": "extractive",
                                                             "answer_threshold": 0.0})

    known = ask("How do I see who changed each line of a file with git log?")
    unknown = ask("How do I see who changed each line of a file with git blame?")
    assert not known["was_refusal"], known.get("refusal_reason")
    assert unknown["was_refusal"] and unknown["refusal_reason"] == "empty_retrieval"
    assert "known_names" in unknown["diagnostics"]["failed_checks"]
    assert "unknown_names: the collection never mentions git blame" in unknown["diagnostics"][
        "warnings"]
