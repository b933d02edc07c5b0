"""The asked-attribute check: the answer must state what the question asks about."""

import json

from textbound.answer.attribute import (
    SYNONYMS_FILE,
    AttributeTable,
    asked_attribute,
    asked_forms,
    load_synonyms,
    states_attribute,
)

ALL = AttributeTable({}, {f"*:{k}": 1.0 for k in ("born", "die", "succe")})


def test_attribute_is_read_from_the_question_form():
    """who VERB, where/when ... VERB, which NOUN, how many NOUN VERB, what did X VERB of."""
    assert asked_attribute("Who succeeded Marcus Aurelius as emperor?") == ("succeeded",)
    assert asked_attribute("Where was Ibn Sina born?") == ("born",)
    assert asked_attribute("Which Supreme Court case overturned Roe v Wade?") == ("case",)
    assert asked_attribute("How many men died of syphilis in the study?") == ("died",)
    assert asked_attribute("How much power does the module draw?") == ("power",)
    assert asked_attribute("What did Epicurus die of?") == ("die",)
    assert asked_attribute("What book did Derrida introduce deconstruction in?") == ("book",)
    assert asked_attribute("Which country was the first to legalize euthanasia?") == (
        "country", "first")


def test_questions_that_ask_no_attribute_pass():
    """Definitions, enumerations, dates and generic verbs name no attribute."""
    for q in ("What is reflective equilibrium?", "What are the three areas of ethics?",
              "Which two vices is bravery the mean between?", "What year did Comte die?",
              "What makes a hypothesis a good explanation?", "Who made it famous?"):
        assert asked_attribute(q) == (), q
        assert states_attribute(q, "Unrelated text.").stated


def test_a_near_miss_answer_lacking_the_attribute_fails():
    """A sentence about the subject that never states the asked attribute fails, naming it."""
    check = states_attribute("Where was Ibn Sina born?", "Ibn Sina was a Persian polymath "
                             "who wrote on medicine and philosophy.", ALL)
    assert not check.stated and check.missing == ("born",)


def test_inflected_forms_and_derived_synonyms_state_the_attribute():
    """died/die share a prefix; 'birth' stands for 'born' through the derived table."""
    assert states_attribute("What did Epicurus die of?", "Epicurus died of kidney stones.",
                            ALL).stated
    assert not states_attribute("Where was Ibn Sina born?", "His birth place was Afshana.",
                                ALL).stated
    assert states_attribute("Where was Ibn Sina born?", "His birth place was Afshana.",
                            AttributeTable({"*:born": ("birth",)}, ALL.stated_rate)).stated


def test_shipped_synonyms_are_derived_with_provenance():
    """The shipped table comes from the training data, with the command that derived it."""
    data = json.loads(SYNONYMS_FILE.read_text(encoding="utf-8"))
    assert data["provenance"]["command"].startswith("python -m training.attributes.derive")
    assert data["provenance"]["data"] == "squad11-train.jsonl"
    table = load_synonyms()
    assert "birth" in table.synonyms_of("where:born")
    assert all(len(w) >= 3 for ws in table.synonyms.values() for w in ws)
    assert table.checkable("where:born") and not table.checkable("which:country")


def test_missing_or_corrupt_table_means_no_synonyms(tmp_path):
    """An absent or unreadable table demands no attribute: the check then passes everything."""
    bad = tmp_path / "s.json"
    bad.write_text("{not json", encoding="utf-8")
    for table in (load_synonyms(bad), load_synonyms(tmp_path / "none.json")):
        assert table == AttributeTable({}, {}) and not table.checkable("where:born")


def test_attributes_answers_seldom_state_are_not_demanded():
    """"Which country ...?" is answered with an instance ("France"): never demanded."""
    table = AttributeTable({}, {"which:count": 0.9, "where:born": 0.64})
    assert states_attribute("Which country was first to legalize it?", "France did.", table).stated
    assert not states_attribute("Where was Ibn Sina born?", "He wrote on medicine.", table).stated


def test_a_qualifier_must_be_stated():
    """"the first to legalize": a sentence listing places where it is legal does not answer."""
    table = load_synonyms()
    q = "Which country was the first to legalize euthanasia?"
    assert not states_attribute(q, "Euthanasia is legal in Switzerland, the Netherlands and "
                                "Belgium.", table).stated
    assert states_attribute(q, "The Netherlands was the first country to legalize "
                            "euthanasia.", table).stated



def test_a_qualifier_counts_only_in_the_clause_that_asks():
    """"finish my report first, how do I save the draft?": "first" orders what the student does,
    the question asks for no first thing; after the wh-word it still narrows what is asked."""
    assert asked_forms("I have to finish my report first, how do I save the draft?") == ()
    assert asked_forms("Who was the first person to walk on the moon?") == ("qual:first",)
