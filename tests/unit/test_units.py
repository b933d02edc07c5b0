"""Answer units: lists, tables, quotes, captions and code as a real book has them."""

from textbound.answer.compose import extractive_draft
from textbound.answer.evidence import compared_terms
from textbound.fakes import HashEmbedder
from textbound.text.counting import announced_count, enumerates
from textbound.text.framing import own_words
from textbound.text.question import asked_count, wants_code, wants_list
from textbound.text.units import Unit, answer_units, display

BOOK = """Aristotle distinguishes four causes of a thing:

- the material cause, what the thing is made of;
- the formal cause, the shape or pattern it has;
- the efficient cause, what brings the thing about;
- the final cause, the purpose the thing serves.

Let's look at each of these in turn.

> The **unexamined** life is not worth living, Socrates told the jury.

Table 5.1: Kinds of inference

| Type | Focus |
|---|---|
| Deductive | The structure of arguments |
| Inductive | General beliefs about the world |

Figure 1.2: A painting of the four causes on a wall.

```
$ philosophy --list-causes
material formal efficient final
```
"""


def _chunk(text=BOOK, cid="c1", score=0.8):
    return {"chunk_id": cid, "text": text, "score": score,
            "metadata": {"heading_path": ["Metaphysics"], "source": "book.md"}}


def _kinds(text=BOOK):
    return [(u.kind, u.text) for u in answer_units(text)]


def test_a_list_with_its_lead_in_is_one_unit_without_bullets():
    """The lead-in and all four items form one `list` unit, shown without Markdown bullets."""
    lists = [t for k, t in _kinds() if k == "list"]
    assert lists == ["Aristotle distinguishes four causes of a thing: the material cause, what "
                     "the thing is made of; the formal cause, the shape or pattern it has; the "
                     "efficient cause, what brings the thing about; the final cause, the purpose "
                     "the thing serves."]


def test_list_items_are_units_of_their_own_without_markers():
    """Each item is also quotable alone, its bullet removed."""
    items = [t for k, t in _kinds() if k == "item"]
    assert "the formal cause, the shape or pattern it has;" in items
    assert not any(t.startswith(("-", "*")) for t in items)


def test_numbered_items_keep_their_text_together():
    """"1. The soul is unproduced." is one item, not a "1." sentence and a fragment."""
    text = "The argument runs:\n1. The soul is unproduced by anything.\n" \
           "2. Whatever is unproduced is eternal too.\n3. Therefore, the soul is eternal.\n"
    kinds = _kinds(text)
    assert ("item", "The soul is unproduced by anything.") in kinds
    assert any(k == "list" and t.endswith("Therefore, the soul is eternal.") for k, t in kinds)


def test_a_table_row_carries_its_header():
    """A row reads "Header: cell; Header: cell", with no pipes."""
    rows = [t for k, t in _kinds() if k == "row"]
    assert rows == ["Type: Deductive; Focus: The structure of arguments.",
                    "Type: Inductive; Focus: General beliefs about the world."]


def test_block_quote_and_emphasis_markers_are_removed():
    """A quoted sentence is shown without '>' and without '**'."""
    prose = [t for k, t in _kinds() if k == "prose"]
    assert "The unexamined life is not worth living, Socrates told the jury." in prose
    assert display("> **bold** and `code` and [a link](http://x)") == "bold and code and a link"


def test_captions_and_code_are_their_own_kinds():
    """Figure/table captions and fenced or console code are kept, labelled as such."""
    kinds = dict((t, k) for k, t in _kinds())
    assert kinds["Figure 1.2: A painting of the four causes on a wall."] == "caption"
    assert kinds["Table 5.1: Kinds of inference"] == "caption"
    assert kinds["$ philosophy --list-causes\nmaterial formal efficient final"] == "code"


def test_framing_sentence_has_no_words_of_its_own():
    """"Let's look at each of these in turn." states nothing the question did not."""
    assert own_words("Let's look at each of these in turn.", "What are the four causes?") == set()
    assert own_words("The material cause is what a thing is made of.", "What is the material "
                     "cause?") == {"thing", "made"}
    # a stated quantity is the answer; a reference to a chapter or step is not
    assert own_words("MuJoCo's default timestep is 0.002 seconds.",
                     "What is MuJoCo's default timestep?") == {"0", "002"}
    assert own_words("Let's look at the 5 steps in Chapter 3.", "What are the steps?") == set()
    # a number a sentence ends on as a value answers a candidate's question, not a follower's
    value, asked = "The default value of scale is 0.", "What's the default value of scale?"
    assert own_words(value, asked, values=True) == {"0"}
    assert own_words(value, asked) == set()
    assert own_words("This is covered in Chapter 3.", "What are the steps?", values=True) == set()


def test_question_forms():
    """Enumeration, code and comparison questions are recognised."""
    assert wants_list("What are the four causes Aristotle names?")
    assert not wants_list("Who proposed the fake barn case?")
    assert wants_code("What command lists the causes?") and not wants_code("What is a cause?")
    assert compared_terms("What's the difference between intrinsic and extrinsic value?") == (
        {"intrinsic"}, {"extrinsic", "value"})


def _answer(question, chunks):
    draft = extractive_draft(question, chunks, HashEmbedder())
    return " ".join(s["text"] for s in draft["sentences"])


def test_what_are_the_four_gets_the_whole_enumeration():
    """"What are the four causes?" is answered with the lead-in and every item."""
    answer = _answer("What are the four causes Aristotle distinguishes?", [_chunk()])
    for cause in ("material cause", "formal cause", "efficient cause", "final cause"):
        assert cause in answer
    assert "- " not in answer and "|" not in answer


def test_captions_never_lead_and_code_only_when_asked():
    """A caption or code block is not the answer to a prose question, but code is to a code one;
    a caption is not even when the question names its figure."""
    text = ("Figure 3.1: The efficient cause of a statue, shown as a sculptor at work.\n\n"
            "The efficient cause of a statue is the sculptor who carves it from marble.\n\n"
            "```\n$ sculpt --cause efficient statue\n```\n")
    prose = extractive_draft("What is the efficient cause of a statue?", [_chunk(text)],
                             HashEmbedder())
    assert prose["sentences"][0]["text"].startswith("The efficient cause of a statue is")
    assert all(not s["text"].startswith(("Figure", "$")) for s in prose["sentences"])
    code = _answer("What command shows the efficient cause of a statue?", [_chunk(text)])
    assert "sculpt --cause efficient statue" in code
    figure = extractive_draft("What does Figure 3.1 show about the efficient cause of a statue?",
                              [_chunk(text)], HashEmbedder())
    assert all(not s["text"].startswith("Figure") for s in figure["sentences"])


def test_no_markdown_markers_in_any_answer():
    """Whatever leads, bullets, pipes, '>' and '**' never reach the answer."""
    for q in ("What does the formal cause describe?", "What is the focus of deductive "
              "inference?", "What did Socrates tell the jury about the unexamined life?"):
        answer = _answer(q, [_chunk()])
        assert answer and not any(m in answer for m in ("| ", "**", "> ", "\n- "))


def test_a_comparison_gets_one_unit_about_each_side():
    """"The difference between X and Y" is answered with X's and Y's own sentences."""
    text = ("Something has intrinsic value if it is valuable for its own sake. Philosophers "
            "have long debated value. Something has extrinsic value if it is valuable for the "
            "sake of something else.")
    answer = _answer("What is the difference between intrinsic and extrinsic value?",
                     [_chunk(text)])
    assert "for its own sake" in answer and "for the sake of something else" in answer


def test_learning_objectives_never_answer():
    """"- Describe the differences between X and Y." sets a task: kind objective, never a lead."""
    text = ("By the end of this section, you will be able to:\n\n"
            "- Describe the differences between coherentism and foundationalism.\n"
            "- Explain what justification means in epistemology.\n\n"
            "Coherentism is the view that justification is structured like a web of beliefs.\n")
    kinds = _kinds(text)
    assert ("objective", "Describe the differences between coherentism and foundationalism.") \
        in kinds
    # the lead-in alone says nothing either (a sentence ending in a colon is a lead)
    assert sorted(k for k, t in kinds if t.startswith("By the end")) == ["lead", "objective"]
    answer = _answer("What is coherentism?", [_chunk(text)])
    assert answer.startswith("Coherentism is the view") and "Describe" not in answer



def test_asked_for_an_example_an_example_leads_not_the_definition():
    """"What is an example of a singularity?" (a rewritten "give me an example") quotes one,
    though the definition shares more of the question's words."""
    definition = _chunk("A singularity of a robot arm is a configuration in which the Jacobian "
                        "of the robot arm loses rank.")
    example = _chunk("Near singular configurations joint speeds grow without bound. For example, "
                     "a fully outstretched limb cannot reach further out.", cid="c2", score=0.5)
    asked = _answer("What is an example of a singularity of a robot arm?", [definition, example])
    assert asked.startswith("For example, a fully outstretched limb")
    defined = _answer("What is a singularity of a robot arm?", [definition, example])
    assert defined.startswith("A singularity of a robot arm is")


def test_asked_count_reads_the_number_and_its_category():
    """"the four causes" asks for four causes; "ROS 2" and "three-dimensional" count nothing."""
    assert asked_count("What are Aristotle's four causes?") == (4, "causes")
    assert asked_count("What are the three main areas ethics is divided into?") == (3, "areas")
    assert asked_count("Bravery is the mean between which two vices?") == (2, "vices")
    assert asked_count("What is a ROS 2 topic?") is None
    assert asked_count("How many degrees of freedom does a body have in three-dimensional "
                       "space?") is None


def test_a_sentence_naming_all_n_leads_over_one_announcing_them():
    """"What are the four causes?" leads with the sentence that names four, not "the four"."""
    text = ("At the center of Aristotle's work was his doctrine of the four causes. He "
            "believed a thing is understood by answering four questions: what is it made of "
            "(material cause), what shape it has (formal cause), what agent made it (efficient "
            "cause), and what its end is (final cause). The doctrine of the four causes shaped "
            "later philosophy of nature.")
    draft = extractive_draft("What are Aristotle's four causes?", [_chunk(text)],
                             HashEmbedder())
    texts = [s["text"] for s in draft["sentences"]]
    # the naming sentence leads; it opens "He believed ...", so the sentence before it, which
    # says whose doctrine it is, is shown first
    assert texts[0].startswith("At the center of Aristotle's work")
    assert "(material cause)" in texts[1] and "(final cause)" in texts[1]
    announce = Unit(0, 10, "his doctrine of the four causes", "prose")
    assert not enumerates(announce, (4, "causes"))


def test_explain_and_what_does_it_mean_ask_for_the_definition():
    """"Can you explain X?" and "What does X mean?" lead with the book's "X states/is ..."."""
    text = ("The law of the excluded middle is related to the law of noncontradiction. If you "
            "accept both, much follows about the middle. The law of the excluded middle states "
            "that for any statement, either that statement is true, or its negation is true.")
    for q in ("Can you explain the law of the excluded middle?",
              "What does the law of the excluded middle mean?"):
        lead = extractive_draft(q, [_chunk(text)], HashEmbedder())["sentences"][0]["text"]
        assert lead.startswith("The law of the excluded middle states"), q


def test_a_lead_that_announces_n_items_is_followed_by_them():
    """"The standard describes four modes." is followed by the four, cited, and nothing else."""
    text = ("The ISO standard describes four modes of safe collaborative operation. In "
            "monitored stop, the robot stops when a person enters. In hand guiding, a person "
            "moves the robot by hand. In speed monitoring, the robot slows as people approach. "
            "In force limiting, contact stays below set limits. Padding also helps on every robot.")
    draft = extractive_draft("Which collaborative operation modes does the standard describe?",
                             [_chunk(text)], HashEmbedder())
    texts = [s["text"] for s in draft["sentences"]]
    assert texts[0].startswith("The ISO standard describes four modes")
    assert [t.split(",")[0] for t in texts[1:]] == [
        "In monitored stop", "In hand guiding", "In speed monitoring", "In force limiting"]
    assert announced_count(texts[0], "Which modes are there?") == (4, "modes")
    assert announced_count(texts[0], "Who wrote the standard?") is None


def test_what_an_acronym_stands_for_is_the_sentence_that_spells_it_out():
    """"What does NITROS stand for?" leads with "NITROS, the NVIDIA Isaac Transport for ROS"."""
    text = ("Pipelines run best when NITROS nodes share one container, which launch files use. "
            "A NITROS node converts messages for ordinary nodes. Isaac ROS avoids copies with "
            "NITROS, the NVIDIA Isaac Transport for ROS.")
    lead = extractive_draft("What does the acronym NITROS stand for?", [_chunk(text)],
                            HashEmbedder())["sentences"][0]["text"]
    assert lead.endswith("the NVIDIA Isaac Transport for ROS.")


def test_the_definition_that_names_the_whole_term_leads():
    """"What is Moravec's paradox?" leads with "Moravec's paradox is ...", not "The paradox is"."""
    text = ("The paradox is named after the roboticist Hans Moravec, who described it in the "
            "1980s. Moravec's paradox is the observation that tasks humans find hard are easy "
            "for computers, while effortless tasks are hard.")
    lead = extractive_draft("what is moravec's paradox", [_chunk(text)],
                            HashEmbedder())["sentences"][0]["text"]
    assert lead.startswith("Moravec's paradox is the observation")


def test_what_does_x_do_leads_with_a_sentence_about_x_or_its_glossary_entry():
    """"what does tf2 do" is answered by "tf2 organizes ...", "an executor" by its glossary line."""
    text = ("Several command-line tools support tf2 in daily debugging work. tf2 organizes "
            "frames into a tree in which every frame has exactly one parent.")
    lead = extractive_draft("what does tf2 do", [_chunk(text)],
                            HashEmbedder())["sentences"][0]["text"]
    assert lead.startswith("tf2 organizes frames")
    glossary = ("- Callback group: A grouping of callbacks that may run concurrently.\n"
                "- Executor: The object that waits for events and runs the callbacks.\n")
    lead = extractive_draft("what does an executor do in ros 2", [_chunk(glossary)],
                            HashEmbedder())["sentences"][0]["text"]
    assert lead.startswith("Executor: The object that waits")
    lead = extractive_draft("whats a common beginner mistake with callbacks", [_chunk(
        glossary + "\nA common beginner mistake is a long computation inside a callback.\n")],
        HashEmbedder())["sentences"][0]["text"]
    assert not lead.startswith("Callback group")


def test_an_appositive_definition_names_the_term_better_than_the_readers_sentence():
    """"What is ROS 2?": "ROS 2, the second generation ..., is ..." defines it; "A running ROS 2
    system is ..." defines something larger, and does not lead even holding the reader's span."""
    text = ("A running ROS 2 system is a collection of independent processes that communicate "
            "over a network. ROS 2, the second generation of the Robot Operating System, is an "
            "open-source framework of libraries, tools, and conventions.")
    first = text.index(". ") + 1
    anchor = (("c1", 0, first), ["c1", 28, 62])  # the reader's span in the first sentence
    lead = extractive_draft("What is ROS 2?", [_chunk(text)], HashEmbedder(),
                            anchor=anchor)["sentences"][0]["text"]
    assert lead.startswith("ROS 2, the second generation")


def test_a_lead_that_points_back_is_shown_after_the_sentence_it_points_to():
    """"It is the successor to two earlier projects ..." does not say what "it" is: the
    sentence before it in the paragraph is quoted first, cited; at a paragraph's start there is
    no such sentence and the lead stands alone."""
    text = ("Isaac Lab is a framework for robot learning on the GPU. It is the successor to two "
            "earlier projects, Isaac Gym and Orbit, and keeps their task definitions.")
    question = "Which older projects does the framework succeed?"
    span = text.index("Isaac Gym")
    anchor = (("c1", text.index("It is"), len(text)), ["c1", span, span + 9])
    draft = extractive_draft(question, [_chunk(text)], HashEmbedder(), anchor=anchor)
    shown = [s["text"] for s in draft["sentences"]]
    assert shown == ["Isaac Lab is a framework for robot learning on the GPU.",
                     "It is the successor to two earlier projects, Isaac Gym and Orbit, and keeps "
                     "their task definitions."]
    assert [s["spans"][0][1] for s in draft["sentences"]] == [0, text.index("It is")]
    alone = "Isaac Lab is a framework for robot learning.\n\n" + text[text.index("It is"):]
    anchor = (("c1", alone.index("It is"), len(alone)), ["c1", alone.index("Isaac Gym"),
                                                         alone.index("Isaac Gym") + 9])
    draft = extractive_draft(question, [_chunk(alone)], HashEmbedder(), anchor=anchor)
    assert draft["sentences"][0]["text"].startswith("It is the successor")


def test_a_lead_opening_that_is_shown_after_the_sentence_it_points_to():
    """"That means ..." points back as "It" and "This" do: the sentence it restates comes
    first."""
    text = ("By default a lock is released when its holder exits. That means a crashed worker "
            "never blocks the queue for longer than one heartbeat.")
    question = "Can a crashed worker block the queue for long?"
    at = text.index("That means")
    anchor = (("c1", at, len(text)), ["c1", at, len(text) - 1])
    shown = [s["text"] for s in extractive_draft(question, [_chunk(text)], HashEmbedder(),
                                                 anchor=anchor)["sentences"]]
    assert shown == ["By default a lock is released when its holder exits.", text[at:]]


def test_a_sentence_pointing_back_at_a_bare_code_block_brings_the_block():
    """"This example keeps only the last week." describes the code block just before it (set
    off by a short "Example:", so the block has no lead-in of its own): as the lead, or as the
    unit that supports it, the sentence is quoted with that block, the block first."""
    text = ("Old volumes can be pruned in several ways.\n\nExample:\n\n```\nbox volume prune "
            "--keep 7d\nbox volume list\n```\n\nThis example keeps only the volumes of the last "
            "week. Volumes older than seven days are removed, and the list shows what is left.")
    question = "How can I get rid of old volumes but keep last week's?"
    units = {u.text.split()[0]: u for u in answer_units(text)}
    code = units["box"].text
    for lead in ("Volumes", "This"):
        u = units[lead]
        anchor = (("c1", u.start, u.end), ["c1", u.start, u.start + 10])
        shown = [s["text"] for s in extractive_draft(question, [_chunk(text)], HashEmbedder(),
                                                     anchor=anchor)["sentences"]]
        at = shown.index(code)
        assert shown[at + 1].startswith("This example keeps"), shown
        assert shown[0] == (code if lead == "This" else u.text), shown


def test_a_lead_in_that_points_back_comes_after_the_sentence_it_points_to():
    """"This is done with the snap command, for example:" and its code lead the answer (the
    reader's span is in the command), but "This" is the sentence before it: that sentence
    comes first, then the lead-in with its command."""
    text = ("A snapshot keeps the files of a volume as they are at one moment. This is done "
            "with the snap command, for example:\n\n```\nbox snap create data\n```")
    block = next(u for u in answer_units(text) if u.kind == "block")
    span = text.index("box snap")
    anchor = (("c1", block.start, block.end), ["c1", span, span + 20])
    shown = [s["text"] for s in extractive_draft(
        "How do I get a copy of a volume's files at one moment?", [_chunk(text)],
        HashEmbedder(), anchor=anchor)["sentences"]]
    assert shown[0] == "A snapshot keeps the files of a volume as they are at one moment."
    assert shown[1].startswith("This is done with the snap command") and "box snap create" in \
        shown[1]


def _led_by(text: str, opening: str, question: str) -> list[str]:
    """The sentences of the answer whose reader's span opens the unit starting with `opening`."""
    lead = next(u for u in answer_units(text) if u.text.startswith(opening))
    anchor = (("c1", lead.start, lead.end), ["c1", lead.start, lead.start + 5])
    return [s["text"] for s in extractive_draft(question, [_chunk(text)], HashEmbedder(),
                                                anchor=anchor)["sentences"]]


def test_a_sentence_going_on_from_a_code_block_brings_the_block():
    """"$ box inspect -t <name>" then "shows the kind of the object, and ...": the sentence
    opening on a verb in lower case goes on from the command before it, which comes first; a
    sentence in lower case after prose brings nothing."""
    text = ("For every object, you can use box-inspect to examine it:\n\n```\n$ box inspect -t "
            "<name>\n```\n\nshows the kind of the object, and once you have the kind, you can "
            "use\n\n```\n$ box inspect volume|snapshot <name>\n```\n\nto show its contents.")
    shown = _led_by(text, "shows the kind", "How do I find out what kind an object is?")
    assert "$ box inspect -t <name>" in shown[0], shown
    assert shown[1].startswith("shows the kind of the object"), shown
    prose = "Objects are kept in the store. shows nothing here on its own."
    shown = _led_by(prose, "shows", "What does the store keep?")
    assert shown[0].startswith("shows nothing"), shown


def test_a_list_entrys_second_sentence_that_points_back_comes_after_the_first():
    """"- No snapshot is listed for the volume. This is because ..." : the entry's first
    sentence is what "This" points to, and it comes first."""
    text = ("Two things stand out in the listing:\n\n- No snapshot is listed for the scratch "
            "volume. This is because scratch volumes are never snapshotted, so the snap command "
            "skips them.\n- Every other volume has one snapshot.")
    shown = _led_by(text, "This is because", "Why is there no snapshot of the scratch volume?")
    assert shown[:2] == ["No snapshot is listed for the scratch volume.", shown[1]]
    assert shown[1].startswith("This is because scratch volumes are never snapshotted")


def test_a_passage_opening_inside_code_reads_it_as_code_up_to_its_closing_fence():
    """`in_code` (a chunk that opens inside a code block cut over chunks): the lines up to the
    closing fence are one code unit, verbatim; what follows the fence is prose again, also
    when the chunk opens on the closing fence itself."""
    text = "    refresh();\n    endwin();\n```\n\nThe program ends curses mode before it exits."
    units = answer_units(text, None, True)
    assert [(u.kind, u.text) for u in units] == [
        ("code", "    refresh();\n    endwin();"),
        ("prose", "The program ends curses mode before it exits.")]
    assert [u.kind for u in answer_units("```\n\n" + units[1].text, None, True)] == ["prose"]
    # unmarked, the closing fence reads as an opening one and the sentence after it as code
    assert [u.kind for u in answer_units(text)] == ["code"]
