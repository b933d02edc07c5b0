from pathlib import Path

import yaml

import prompts
from graph.state import RefusalReason
from textbound import course

# what nodes/refuse.py and nodes/reply.py supply to each template
REFUSAL_VALUES = {"course_title", "course_name", "scope", "scope_summary", "detected_topic",
                  "out_of_scope_topic", "problem"}


def test_every_reason_has_a_message():
    """Each refusal reason has a template in prompts/refusals.yaml."""
    for reason in RefusalReason:
        assert prompts.refusal_template(reason.value).strip()


def test_refusal_messages_and_labels_are_exactly_the_reasons():
    """refusals.yaml has a message and a reader-page heading for each reason, none for others."""
    reasons = {r.value for r in RefusalReason}
    data = yaml.safe_load((Path(prompts.__file__).parent / "refusals.yaml").read_text())
    assert set(data["messages"]) == reasons
    assert set(data["labels"]) == reasons


def test_refusal_labels_are_plain_text():
    """A heading is one short line with nothing to fill in."""
    for reason in RefusalReason:
        label = prompts.refusal_label(reason)
        assert label.strip() and "\n" not in label and len(label) <= 80
        assert not prompts.placeholders(label)


def test_refusal_placeholders_are_supplied():
    """Every placeholder in a refusal template is one the refusal node fills."""
    for reason in RefusalReason:
        assert prompts.placeholders(prompts.refusal_template(reason.value)) <= REFUSAL_VALUES


def test_seed_000_messages_are_kept_verbatim():
    """The seed's refusal sentences appear unchanged."""
    assert prompts.refusal_template("empty_retrieval").startswith(
        "I can only answer questions from the textbook content. This topic doesn't appear to be "
        "covered in the course materials.")
    assert "For {out_of_scope_topic}, please refer to specialized resources." in (
        prompts.refusal_template("out_of_scope"))
    standard = "This information cannot be verified from the book content."
    assert prompts.standard_refusal() == standard


def test_reply_placeholders_are_supplied():
    """Fixed replies use only what greet / describe_coverage pass."""
    assert prompts.placeholders(prompts.reply_template("greeting")) <= set(
        course.GREETING_VALUES)
    assert prompts.placeholders(course.load_profile().greeting or "") <= set(
        course.GREETING_VALUES)
    assert prompts.placeholders(prompts.reply_template("coverage")) == {
        "course_name", "n_documents", "table_of_contents"}
    assert prompts.placeholders(prompts.suggestions_template()) == {"suggestions"}


def test_system_prompt_placeholders_match_generate():
    """Seed 001's system prompt takes exactly what textbound/answer/chat_draft.py fills in."""
    assert prompts.placeholders(prompts.system_prompt_template()) == {
        "course_title", "retrieved_chunks", "user_question"}
    assert "NEVER use information from your training data" in prompts.system_prompt_template()


def test_answer_request_names_the_question_and_what_it_wants():
    """The chat model's user message is the question, then what each kind of question wants."""
    from textbound.answer.chat_draft import chat_messages

    assert prompts.placeholders(prompts.answer_request_template()) == {"question"}
    chunk = {"chunk_id": "c", "text": "Skeptical hypotheses include dreaming.", "score": 0.9,
             "metadata": {"section": "7.4 Skepticism"}}
    messages, ids = chat_messages("What are some {examples} of skeptical hypotheses?", [chunk],
                                  "Philosophy")
    human = messages[-1].content
    assert human.startswith("What are some {examples} of skeptical hypotheses?\n\n")
    assert "the examples when it asks for examples" in human
    assert "return no sentences" in human
    assert ids == {"C1": "c"}
    assert "[C1] (7.4 Skepticism)\nSkeptical hypotheses include dreaming." in messages[0].content


def test_seed_000_out_of_scope_examples_are_detected():
    """The seed's topics and its own example question are caught, with the topic named."""
    scope = course.load_scope()
    cases = {
        "How do I train a custom LLM?": "training foundation models",
        "Is ROS 2 better than ROS 1?": "ROS 1",
        "Explain model predictive control": "advanced control theory",
        "How does PWM drive a motor?": "low-level motor control",
        "How should I design the PCB for my robot?": "custom hardware design",
        "Can I simulate it in Webots?": "other simulation platforms",
        "How do I set up a catkin workspace?": "ROS 1",
    }
    for question, topic in cases.items():
        hit = scope.detect_out_of_scope(question)
        assert hit is not None and hit[0] == topic, question


def test_in_scope_questions_are_not_flagged():
    """Course questions do not trip the out-of-scope patterns."""
    scope = course.load_scope()
    for q in ("What is a ROS 2 topic?", "How does Isaac Sim generate synthetic data?",
              "What is the zero moment point?", "How do VLA models map images to actions?"):
        assert scope.detect_out_of_scope(q) is None, q
