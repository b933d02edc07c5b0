"""Follow-ups made standalone by rule (textbound/conversation/rewrite.py): what is rewritten,
what not."""

import pytest

from textbound.conversation.rewrite import rewrite, subject_of


def _turn(question, answer="", subject=None, refused=False):
    return {"question": question, "standalone": question,
            "subject": subject or subject_of(question),
            "answer": answer, "was_refusal": refused, "refusal_reason": None, "run_id": "r",
            "sources": []}


SERVICE = _turn("What does a ROS 2 service do?",
                "A service implements a request-response interaction between two nodes. [1]")


@pytest.mark.parametrize(("question", "subject"), [
    ("What does a ROS 2 service do?", "a ROS 2 service"),
    ("How does a VLA model work?", "a VLA model"),
    ("What is Isaac Sim used for?", "Isaac Sim"),
    ("what is the domain id", "the domain id"),
    ("Define digital twin", "digital twin"),
    ("How many degrees of freedom does a rigid body have?", "a rigid body"),
    ("What sensors are combined in a 6-axis IMU?", "a 6-axis IMU"),
    ("What does it mean for a robot to be embodied?", None),
])
def test_a_questions_subject_is_the_noun_phrase_its_shape_names(question, subject):
    assert subject_of(question) == subject


@pytest.mark.parametrize(("follow_up", "standalone", "rule"), [
    ("What file defines its interface?", "What file defines a ROS 2 service's interface?",
     "pronoun"),
    ("how much does it cost", "How much does a ROS 2 service cost?", "pronoun"),
    ("is that synchronous?", "Is a ROS 2 service synchronous?", "pronoun"),
    ("And how do they differ from topics?", "How does a ROS 2 service differ from topics?",
     "pronoun"),
    ("how is this service called", "How is a ROS 2 service called?", "pronoun"),
    ("why?", "Why is it that a service implements a request-response interaction between two "
     "nodes?", "why"),
    ("give me an example", "What is an example of a ROS 2 service?", "example"),
    ("tell me more", "What else does the book say about ROS 2 service?", "more"),
    ("and a topic?", "What does a topic do?", "and_x"),
    ("what about its cost", "What is a ROS 2 service's cost?", "and_x"),
])
def test_a_follow_up_is_rewritten_with_the_last_turns_subject(follow_up, standalone, rule):
    got = rewrite(follow_up, [SERVICE])
    assert (got.standalone, got.rule, got.rewritten) == (standalone, rule, True)


@pytest.mark.parametrize(("first", "follow_up", "standalone"), [
    ("What is the DH convention?", "what are they", "What is the DH convention?"),
    ("What is the DH convention?", "are they used in ROS?", "Is the DH convention used in ROS?"),
    ("What does a ROS 2 service do?", "they are synchronous, right?",
     "A ROS 2 service is synchronous, right?"),
    ("What does a ROS 2 service do?", "what do they return", "What does a ROS 2 service return?"),
    # a plural subject keeps the plural verb
    ("How do ROS messages represent orientation?", "what are they", "What are ROS messages?"),
    ("How do ROS messages represent orientation?", "how do they differ from topics?",
     "How do ROS messages differ from topics?"),
])
def test_they_takes_the_verb_its_subject_agrees_with(first, follow_up, standalone):
    """"they" read as one thing gets the singular verb, before or after it; a plural keeps its."""
    assert rewrite(follow_up, [_turn(first)]).standalone == standalone


@pytest.mark.parametrize("question", [
    "What is Gazebo?",
    "What does it mean for a robot to be embodied?",
    "Is it true that Gazebo simulates sensors?",
    "Which sensors does a humanoid robot use?",
    "How many degrees of freedom does a rigid body have?",
])
def test_a_question_that_stands_alone_is_never_rewritten(question):
    got = rewrite(question, [SERVICE])
    assert got.standalone == question and got.rule is None and not got.rewritten


def test_without_earlier_turns_nothing_is_rewritten():
    got = rewrite("What file defines its interface?", [])
    assert got.standalone == "What file defines its interface?" and got.rule is None


def test_the_subject_carries_over_several_follow_ups():
    """"its" keeps meaning the service after a pronoun follow-up, and "and X?" switches it."""
    second = rewrite("What file defines its interface?", [SERVICE])
    turns = [SERVICE, {**_turn("What file defines its interface?"),
                       "standalone": second.standalone, "subject": second.subject}]
    third = rewrite("how fast is it?", turns)
    assert third.standalone == "How fast is a ROS 2 service?"
    switched = rewrite("and a topic?", [SERVICE])
    assert switched.subject == "a topic"
    fourth = rewrite("what file defines its messages?",
                     [SERVICE, {**_turn("and a topic?"), "standalone": switched.standalone,
                                "subject": switched.subject}])
    assert fourth.standalone == "What file defines a topic's messages?"


def test_why_after_a_refusal_asks_about_the_last_question_not_its_refusal_text():
    refused = _turn("How much does a ROS 2 service cost?", "The textbook does not cover this.",
                    subject="a ROS 2 service", refused=True)
    got = rewrite("why?", [refused])
    assert got.rule == "why" and "textbook does not cover" not in got.standalone
    assert "How much does a ROS 2 service cost" in got.standalone



@pytest.mark.parametrize(("previous", "follow_up", "standalone"), [
    ("who created mujoco", "when did deepmind acquire it", "When did deepmind acquire mujoco?"),
    ("when did boston dynamics retire the hydraulic atlas", "what replaced it",
     "What replaced the hydraulic atlas?"),
    ("what fraction of the gait cycle is stance", "and swing?",
     "What fraction of the gait cycle is swing?"),
    ("How long is humble supported?", "and jazzy?", "How long is jazzy supported?"),
    ("what is gazebo's default physics step size", "what about mujoco?",
     "What is mujoco's default physics step size?"),
    ("what is lidar", "whats the max range of a 64-channel one",
     "Whats the max range of a 64-channel lidar?"),
    ("what is a series elastic actuator", "how much does one cost",
     "How much does a series elastic actuator cost?"),
    ("what is a digital twin", "who came up with the concept", "Who came up with a digital twin?"),
    ("who introduced a series elastic actuator", "in what year",
     "In what year (who introduced a series elastic actuator)?"),
    ("what two scores does saycan combine", "who published it", "Who published saycan?"),
])
def test_shapes_students_use(previous, follow_up, standalone):
    assert rewrite(follow_up, [_turn(previous)]).standalone == standalone


@pytest.mark.parametrize("off_topic", ["who won the 2018 world cup",
                                       "how do i make chocolate chip cookies"])
def test_an_off_topic_question_never_borrows_the_conversations_subject(off_topic):
    assert not rewrite(off_topic, [SERVICE]).rewritten


def test_a_follow_up_without_a_subject_keeps_the_conversations():
    got = rewrite("what voxel size is commonly used", [_turn("what does nvblox build")])
    assert not got.rewritten and got.subject == "nvblox"
    assert rewrite("why does it separate people", [
        _turn("what does nvblox build"),
        {**_turn("what voxel size is commonly used"), "subject": got.subject}],
    ).standalone == "Why does nvblox separate people?"


@pytest.mark.parametrize(("previous", "follow_up", "standalone"), [
    # "and X?" after a question closing on a preposition's object: that object changes
    ("What is the cost of transport for humans?", "and asimo?",
     "What is the cost of transport for asimo?"),
    # "one" names the head of what it replaces
    ("what sensors are in a 6-axis imu", "and a 9-axis one?", "What sensors are in a 9-axis imu?"),
])
def test_and_x_changes_the_part_that_differs(previous, follow_up, standalone):
    turn = _turn(previous, subject="the cost of transport" if "transport" in previous else None)
    assert rewrite(follow_up, [turn]).standalone == standalone


def test_a_subject_is_never_an_article_alone():
    """"who was the first author" has no subject ("the" cut before "first"), so "it" in the
    next question still means what the conversation was about."""
    assert subject_of("who was the first author") is None
    first = _turn("how many parameters does openvla have")
    second = rewrite("who was the first author", [first])
    assert second.subject == "openvla"
    turns = [first, {**_turn("who was the first author"), "subject": second.subject}]
    assert rewrite("how many episodes was it trained on", turns).standalone == \
        "How many episodes was openvla trained on?"


def test_why_asks_about_the_first_clause_of_the_last_answer():
    """The claim to explain is the answer's first clause, not the sentence's every addition."""
    rt2 = _turn("Where did RT-2 run?", "The 55-billion-parameter model could not run on the "
                "robot; it ran on cloud TPUs and was queried over the network. [1]",
                subject="RT-2")
    assert rewrite("why?", [rt2]).standalone == \
        "Why is it that the 55-billion-parameter model could not run on the robot?"
    quat = _turn("how do ros messages represent orientation", "A unit quaternion avoids gimbal "
                 "lock and interpolates smoothly, which is why ROS messages use quaternions. [1]")
    assert rewrite("why?", [quat]).standalone == \
        "Why is it that a unit quaternion avoids gimbal lock and interpolates smoothly?"


def test_a_relation_with_nothing_to_relate_takes_the_last_questions_subject():
    """"whats the trade-off" after the MuJoCo step-size question asks about that step size;
    "what is the domain id" names its own thing and stands alone."""
    last = {**_turn("what about mujoco?"), "standalone": "What is mujoco's default physics step "
            "size?", "subject": "mujoco"}
    assert rewrite("whats the trade-off", [last]).standalone == \
        "Whats the trade-off of mujoco's default physics step size?"
    assert rewrite("what are the main downsides?", [SERVICE]).standalone == \
        "What are the main downsides of a ROS 2 service?"
    assert not rewrite("what is the domain id", [SERVICE]).rewritten


def test_the_course_itself_never_becomes_the_conversations_subject():
    """"why does the course use python" stands alone, and "give me an example" after it still
    asks about the launch files the conversation is about."""
    launch = _turn("what is a launch file")
    switch = rewrite("why does the course use python", [launch])
    assert not switch.rewritten and switch.subject == "a launch file"
    turns = [launch, {**_turn("why does the course use python"), "subject": switch.subject}]
    assert rewrite("give me an example", turns).standalone == \
        "What is an example of a launch file?"
