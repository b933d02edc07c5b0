"""The answer-type check: which questions ask for a kind of value, and which spans show one."""

import pytest

from textbound.answer.answer_type import ANSWER_TYPES, expected_answer_type, span_has_type


@pytest.mark.parametrize(("question", "kind"), [
    ("What was the launch price of the Jetson AGX Orin developer kit?", "money"),
    ("How much does a Unitree humanoid robot cost?", "money"),
    ("How much did DeepMind pay to acquire MuJoCo?", "money"),
    ("What was the top walking speed of Honda's ASIMO?", "speed"),
    ("What is the default update rate of a simulated IMU sensor in Gazebo?", "rate"),
    ("What is the maximum message size that can be sent over a ROS 2 topic?", "data size"),
    ("What is the maximum range in meters of a typical 64-channel spinning LiDAR?", "meters"),
    ("In what year was Isaac Sim first released?", "year"),
    ("Which year did the Normans reach Italy?", "year"),
    ("How many degrees of freedom does a rigid body have?", "count"),
    ("What is the maximum length of a file name on this system?", "limit or setting"),
    ("Is there a minimum size for a swap partition?", "limit or setting"),
    ("When the cache fills up, what timeout does the client use?", "limit or setting"),
    ("What is the default port of the web console?", "limit or setting"),
    ("What are the hex colour codes of the default palette?", "colour value"),
    ("What is the RGB value of the colour named teal?", "colour value"),
    ("Which keyboard shortcut zooms the plot window back out?", "key"),
    ("which hotkey closes the current window", "key"),
])
def test_questions_that_ask_for_a_kind_of_value(question, kind):
    """Plain requests for a price, speed, rate, size, length, year or count are typed."""
    asked = expected_answer_type(question)
    assert asked is not None and asked.name == kind


@pytest.mark.parametrize("question", [
    "What is a ROS 2 topic?",
    "When did they raise the price of oil to $5.11?",  # when: a time, whatever follows
    "Why did OPEC raise the price of oil?",
    "Who set the price of the Jetson kit?",
    "From 1947 to 1967, how much did the price of oil increase?",  # a change, not a price
    "What is the example latency budget from the end of speech to the first reaction?",
    "Where is the update rate configured?",
    "What is the default editor?",  # a default that is a name, not a quantity
    "Is there a limit?",
    "When was the maximum size reached?",
    "",
])
def test_questions_that_ask_for_no_particular_type(question):
    """Questions led by when/why/who/where, changes of a price and plain questions: no type."""
    assert expected_answer_type(question) is None


def _shows(question: str, passage: str, span: str) -> bool:
    asked = expected_answer_type(question)
    assert asked is not None
    start = passage.index(span)
    return span_has_type(asked, passage, start, start + len(span), question)


def test_a_number_without_the_asked_unit_is_not_the_answer():
    """The textbook near misses: the reader's confident number lacks the kind asked for."""
    assert not _shows("What was the launch price of the Jetson AGX Orin developer kit?",
                      "The module delivers up to 275 TOPS, the Nano 67 TOPS through a GPU.", "67")
    assert not _shows("What is the maximum range in meters of a typical spinning LiDAR?",
                      "Spinning units come with 16, 32, 64, or 128 channels.", "16")
    assert not _shows("In what year was Isaac Sim first released?",
                      "Older versions used an `omni.isaac.` prefix.", "omni")
    assert not _shows("What was the top walking speed of Honda's ASIMO?",
                      "ASIMO was capable of climbing stairs, and even running on two legs.",
                      "climbing stairs, and even running on two legs")


def test_a_unit_without_a_number_and_a_measure_for_a_count_are_not_the_answer():
    """Two more textbook near misses: the reader picked the unit, or a quantity of another thing."""
    imu = ("Each sensor has an `<update_rate>` in hertz and a `<topic>` on which it publishes.")
    assert not _shows("What is the default update rate of a simulated IMU sensor in Gazebo?",
                      imu, "hertz")
    orin = "The Jetson Orin Nano Super raised this to 67 TOPS through a software update."
    assert not _shows("How many CUDA cores does the Jetson Orin Nano have?", orin, "67")
    # a question that counts the unit itself is answered by a number with that unit
    assert _shows("How many pounds of steam does the engine use?",
                  "The engine uses 8.8 lb of steam per kilowatt hour.", "8.8")
    assert _shows("How many gigabytes of memory does it have?", "It has 8 GB of memory.", "8")
    # a count followed by an ordinary noun still passes
    assert _shows("How many threads does it start?", "It starts 4 threads by default.", "4")


def test_a_span_with_the_asked_kind_passes():
    """Units after the span, a currency sign before it, a year or a number word in it."""
    assert _shows("What was the launch price of the kit?", "It launched at $1,999 in 2022.",
                  "1,999")
    assert _shows("How much did it cost?", "It cost 20 euros.", "20 euros")
    assert _shows("How much does ROS 2 cost?", "ROS 2 is free and open source.", "free")
    assert _shows("What is the maximum range in meters of the LiDAR?",
                  "Its range is 100 m in daylight.", "100")
    assert _shows("What is the default update rate of the IMU?", "It publishes at 100 Hz.", "100")
    assert _shows("What is the maximum message size?", "Messages may be up to 64 KB.", "64")
    assert _shows("In what year was it released?", "It was first released in 2019.", "2019")
    assert _shows("How many wheels does it have?", "It rolls on four wheels.", "four")
    assert _shows("What was its top speed?", "It reached 9 km/h on a treadmill.", "9")


def test_every_type_has_a_name_and_patterns():
    """Names are unique; each type can be asked for by some question in the tests above."""
    names = [t.name for t in ANSWER_TYPES]
    assert len(names) == len(set(names)) == 12


def test_a_limit_or_setting_is_answered_with_a_number():
    """"What is the default port ...?" over a passage that only says where it is set: no value."""
    question = "What is the default port of the web console?"
    passage = ("The console listens on a port set in its configuration file; the default port "
               "is 8080.")
    assert not _shows(question, passage, "its configuration file")
    assert _shows(question, passage, "8080")


def test_a_colour_or_a_key_is_answered_with_one():
    """A colour's value is a hex code, an rgb() or a triple; a key is a key name or a character."""
    colour = "What is the RGB value of the colour named teal?"
    passage = "Colours are given by name, as in lc rgb 'teal', or by value, as in '#008080'."
    assert not _shows(colour, passage, "lc rgb 'teal'")
    assert _shows(colour, passage, "'#008080'")
    assert _shows(colour, "Teal is 0, 128, 128 in the palette.", "0, 128, 128")
    key = "Which keyboard shortcut zooms the plot window back out?"
    passage = "Zooming is undone from the plot window: press 'u', or Ctrl-Z for the previous zoom."
    assert not _shows(key, passage, "Zooming is undone from the plot window")
    assert _shows(key, passage, "'u'")
    assert _shows(key, passage, "Ctrl-Z")
    assert _shows("which hotkey rotates the panes?", "C-o   Rotate the panes forwards.", "C-o")
    assert _shows("which keystroke scrolls forward?", "^F   Scroll forward one window.", "^F")
    # a key table's entry, as a manual page's is read: its term of a few characters is the key
    binding = "which tmux key binding splits the current pane into left and right panes?"
    entry = "- **%**: Split the current pane into two, left and right."
    assert _shows(binding, entry, "- **%**: Split the current pane")
    assert not _shows(binding, "- **split-window**: Create a new pane by splitting it.",
                      "- **split-window**: Create a new pane")
    # a how-to question about colour values asks for no value
    assert expected_answer_type("my RGB values are floats, how do i plot them?") is None


@pytest.mark.parametrize(("question", "passage", "wrong", "right"), [
    ("Which Python version does ninja -t browse need?",
     "This feature requires a Python installation. It was tested with Python 3.6.",
     "a Python installation", "Python 3.6"),
    ("How much slower does a program run under the checker?",
     "It will run slower than usual. Programs run 20 to 30 times slower under it.",
     "It will run slower than usual", "20 to 30 times slower"),
    ("what is the numeric value of FROB_MAX on linux?",
     "FROB_MAX is the largest frob the library accepts; on linux it is 4096.",
     "FROB_MAX is the largest frob the library accepts", "4096"),
], ids=["version", "ratio", "numeric-value"])
def test_a_version_a_speed_up_or_a_numeric_value_is_answered_with_one(question, passage, wrong,
                                                                      right):
    """The sentence on the topic without the figure asked for does not answer; the figure does."""
    assert not _shows(question, passage, wrong)
    assert _shows(question, passage, right)


def test_other_forms_of_versions_and_speed_ups():
    """A version printed "version 0.21" or "v5", a speed-up "twice"; a how-to about versions,
    someone's version of an idea and "how much less" ask for no such figure."""
    assert _shows("which version of the spec is this", "This is version 0.21 of the spec.",
                  "version 0.21")
    assert _shows("In which libtasn1 version was asn1_der_decoding2 introduced?",
                  "Since: 4.19 (and in v5 too)", "v5")
    assert _shows("how much faster is the new backend?", "It draws twice as fast.", "twice")
    for question in ("how do I check which version of time I have",
                     "In which work did Descartes give his version of dualism?",
                     "How much less steam did the engine use?"):
        assert expected_answer_type(question) is None
