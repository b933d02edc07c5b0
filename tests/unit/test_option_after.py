"""A how-to answer whose lead says what goes wrong is followed by the option that puts it right.

Valgrind's FAQ: "Also, for leak reports involving shared objects, ... the error message will be
full of ??? entries." and then, in the same paragraph, "If you use the option
--keep-debuginfo=yes, then Valgrind will keep the debug information ...". The question "my leak
report is full of ??? ..., how do I fix that" is nearest the first; the answer needs the second.
"""

from __future__ import annotations

import pytest

from tests.conftest import page_evidence
from textbound.answer.candidates import Candidate, candidates
from textbound.answer.compose import extractive_draft
from textbound.answer.followers import option_after
from textbound.shapes import ChunkDict

PAGE = """# Rover manual

## Logs

When the rover's log partition fills up during a long survey, the rover stops writing its
position log and the map it draws afterwards has gaps where the log is missing. If you start
the rover with the option --log-rotate=200, it keeps only the newest 200 megabytes of logs and
the map stays whole.

The log is written in plain text, one position a line.

## Wheels

The rover has six wheels, each driven by its own motor. A wheel that slips is slowed down.
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> list[ChunkDict]:
    return page_evidence(tmp_path_factory.mktemp("opt"), "rover.md", PAGE)


def test_the_option_after_a_how_to_lead_follows_it(page, embeddings) -> None:
    draft = extractive_draft("the map my rover draws has gaps because the log partition "
                             "filled up, how do I fix that?", page, embeddings)
    quoted = [s["text"] for s in draft["sentences"]]
    assert len(quoted) == 2, quoted
    assert quoted[0].startswith("When the rover's log partition fills up")
    assert quoted[1].startswith("If you start the rover with the option --log-rotate=200")


def test_only_the_same_paragraphs_next_sentence_naming_an_option_follows(page) -> None:
    cands = candidates("how do I fix the gaps in my rover's map?", page)

    def cand(opening: str) -> Candidate:
        return next(c for c in cands if c.unit.text.startswith(opening))

    follows = option_after(cand("When the rover's log partition fills up"))
    assert follows is not None and follows.text.startswith("If you start the rover")
    # a lead naming an option itself, and a paragraph's last sentence, lead nothing on
    assert option_after(cand("If you start the rover with the option")) is None
    assert option_after(cand("The log is written in plain text")) is None
    assert option_after(cand("The rover has six wheels")) is None


BLOCK_PAGE = """# Rover manual

## Remote logging

If you drive a whole fleet of rovers, it can be less disruptive to have the log sent over the
network. Give the rover the option --log-socket=10.0.0.5:7000 for that. You can use the
rover-listener program to listen on that port:

```
rover-listener 7000
```

Start the listener first.
"""


def test_an_option_between_a_lead_and_its_block_comes_with_them(tmp_path, embeddings) -> None:
    # "Can the rover send its log over the network?" is nearest the first sentence; the
    # command block two sentences on is what block_after finds, and the sentence it would skip
    # names the option that does it
    evidence = page_evidence(tmp_path, "fleet.md", BLOCK_PAGE)
    draft = extractive_draft("I drive a whole fleet of rovers; how can I have the log sent over "
                             "the network?", evidence, embeddings)
    quoted = [s["text"] for s in draft["sentences"]]
    assert quoted[0].startswith("If you drive a whole fleet of rovers"), quoted
    assert len(quoted) == 3, quoted
    assert "--log-socket=10.0.0.5:7000" in quoted[1]
    assert "rover-listener 7000" in quoted[2]


NAME_PAGE = """# Rover library

## Old calls

You may see old code referring to rover_drive. Its use is deprecated on every platform; call
rover_drive_to instead, which takes the target's coordinates. The library keeps the old name
working until the next release.

## Batteries

The battery lasts four hours. A rover with two batteries drives for eight.
"""


def test_the_name_to_use_after_a_lead_follows_it(tmp_path, embeddings) -> None:
    """"What should I use instead?" is nearest the sentence naming the old call; the next one
    names the call to use. A sentence naming only the question's own name leads nothing on."""
    evidence = page_evidence(tmp_path, "lib.md", NAME_PAGE)
    question = "my old code calls rover_drive, is that still ok or what should I use instead?"
    draft = extractive_draft(question, evidence, embeddings)
    quoted = [s["text"] for s in draft["sentences"]]
    assert quoted[0].startswith("You may see old code referring to rover_drive"), quoted
    assert len(quoted) == 2 and "rover_drive_to" in quoted[1], quoted
    cands = candidates(question, evidence)
    lead = next(c for c in cands if c.unit.text.startswith("You may see old code"))
    follows = option_after(lead, question)
    assert follows is not None and "rover_drive_to" in follows.text
    # the sentence names no name beyond the question's: no name to use follows it
    assert option_after(lead, "what is rover_drive_to, and rover_drive?") is None
    battery = next(c for c in cands if c.unit.text.startswith("The battery lasts"))
    assert option_after(battery, question) is None


def test_a_lead_that_gives_its_command_inline_is_followed_by_no_other_name(tmp_path,
                                                                          embeddings) -> None:
    """"... is expanded into plain URDF with the command `xacro robot.urdf.xacro`." names what
    to run; the next sentence's check_urdf is another tool, not the answer's rest."""
    page = ("# Models\n\n## Xacro\n\nA .urdf.xacro file is expanded into plain URDF with the "
            "command `xacro robot.urdf.xacro > robot.urdf` before it is loaded. The check_urdf "
            "tool parses a URDF file and prints its link tree.\n")
    evidence = page_evidence(tmp_path, "models.md", page)
    question = "how do you turn a xacro file into plain urdf?"
    lead = next(c for c in candidates(question, evidence)
                if c.unit.text.startswith("A .urdf.xacro file is expanded"))
    assert option_after(lead, question) is None
    plain = page.replace("`xacro robot.urdf.xacro > robot.urdf`", "xacro")
    (tmp_path / "plain").mkdir()
    lead = next(c for c in candidates(question, page_evidence(tmp_path / "plain", "m.md", plain))
                if c.unit.text.startswith("A .urdf.xacro file is expanded"))
    follows = option_after(lead, question)
    assert follows is not None and "check_urdf" in follows.text
