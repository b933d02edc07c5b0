from textbound.answer.evidence import unknown_names
from textbound.documents.store import TermStats
from textbound.text import (
    capitalised_words,
    compound_names,
    content_words,
    key_tokens,
    sentence_spans,
    split_sentences,
    surface_words,
)


def test_sentences_respect_abbreviations_and_decimals():
    """e.g., decimals and initials do not end sentences."""
    text = "Use a sensor, e.g. a LiDAR. The factor is 1.0 by default. Dr. Smith agrees."
    got = [text[s:e] for s, e in sentence_spans(text)]
    assert got == ["Use a sensor, e.g. a LiDAR.", "The factor is 1.0 by default.",
                   "Dr. Smith agrees."]


def test_a_printed_page_reference_does_not_end_a_sentence():
    """A PDF manual's "see set contour (p. 154)" is one sentence, not "(p." and "154)."; "3D."
    before a sentence that opens with a number still ends one (only a period after letters alone,
    at most three, or after a number is read as a reference)."""
    text = ("See set contour (p. 154) for the levels. The options are listed in pp. 12-14 of "
            "the guide. Plot it in 3D. 42 is the answer.")
    got = [text[s:e] for s, e in sentence_spans(text)]
    assert got == ["See set contour (p. 154) for the levels.",
                   "The options are listed in pp. 12-14 of the guide.",
                   "Plot it in 3D.", "42 is the answer."]


def test_unresolved_references_and_parentheses_do_not_end_sentences():
    """A PDF's unresolved "??" before a lower-case word, a stop inside parentheses that close
    later, and a parenthesis opened mid-sentence and closed after an ellipsis leave the sentence
    whole; "??." and a parenthetical sentence of its own still end one."""
    text = ("The limits are listed in Section ?? for each driver. Use a gripper (for example "
            "the two-finger one. It is the default) on small parts. Send a frame (say, a "
            "pose ...) before the arm moves. See Table ??. (This holds for every arm.) Done.")
    got = [text[s:e] for s, e in sentence_spans(text)]
    assert got == ["The limits are listed in Section ?? for each driver.",
                   "Use a gripper (for example the two-finger one. It is the default) on small "
                   "parts.",
                   "Send a frame (say, a pose ...) before the arm moves.",
                   "See Table ??.", "(This holds for every arm.)", "Done."]


def test_list_items_and_headings_end_sentences():
    """Markdown bullets do not run into each other."""
    text = "Intro line\n- first item\n- second item\n## Heading\nBody text."
    assert len(sentence_spans(text)) == 5


def test_content_words_drop_stopwords_and_stem():
    """Stop words go; plurals and -ing forms fold."""
    assert content_words("What are the topics being published?") == ["topic", "publish"]


def test_key_tokens_find_numbers_and_names_not_sentence_starts():
    """Numbers and mid-sentence capitals are facts; the first word is not."""
    toks = key_tokens("The robot weighs 47 kg and was built by Boston Dynamics in 2013.")
    assert {"47", "2013", "boston", "dynamics"} <= toks and "the" not in toks


def test_capitalised_words_skip_sentence_starts_and_i():
    """The names a question is about: capitalised words not opening a sentence, never 'I'."""
    assert capitalised_words("Can I use ROS 2 on Windows?") == ["ROS", "Windows"]
    assert capitalised_words("What did Möngke's army do? Then Paris fell.") == ["Mongke", "Paris"]


def test_a_name_after_a_code_paths_dot_is_a_name() -> None:
    """"fs.constants.O_TMPFILE": the dot after a code path starts no sentence, so the constant is
    a name the book must use; a dot after a sentence or an abbreviation still opens one."""
    assert capitalised_words("what does fs.constants.O_TMPFILE do") == ["O_TMPFILE"]
    assert capitalised_words("what is os.EOL on windows") == ["EOL"]
    assert capitalised_words("It ends. Then Paris fell.") == ["Paris"]
    assert capitalised_words("Is the U.S.A. big?") == ["U"]  # not S or A after a capital's dot


def test_term_stats_mentions_forms_of_a_word():
    """A name counts as mentioned as written, as a singular, or in lower case; 'Windows' in a
    text that only says 'window' does not."""
    text = "A window opens. The Soviet fleet sailed. Robot arms move. ROS 2 runs nodes."
    words = frozenset(surface_words(text, lower=False))
    stats = TermStats(1, {}, words, frozenset(w.lower() for w in words))
    assert not stats.mentions("Windows")
    assert stats.mentions("Soviets") and stats.mentions("Robots") and stats.mentions("ROS")
    assert stats.mentions("Fleet")  # lower case in the text
    assert unknown_names("Can I use ROS 2 on Windows or Mac?", stats) == ["Windows", "Mac"]
    assert unknown_names("Can I use ROS 2 on Windows?", None) == []


def test_a_word_in_capitals_needs_capitals_or_a_name_in_the_text():
    """'MERGE ... WHEN MATCHED' names SQL the text never shows, though it says 'merge' and
    'matched'; 'DATANET' is the text's 'Datanet'; plurals count as before."""
    text = ("Rows are matched when the join condition holds, and we merge them. Datanet was a "
            "network. The SELECT command reads rows; one JOIN was needed.")
    words = frozenset(surface_words(text, lower=False))
    stats = TermStats(1, {}, words, frozenset(w.lower() for w in words))
    assert not stats.mentions("MATCHED") and not stats.mentions("MERGE")
    assert stats.mentions("DATANET") and stats.mentions("SELECT") and stats.mentions("JOINS")
    assert stats.mentions("Matched")  # a capitalised word may still be the text's lower case
    assert unknown_names("Can I use MERGE together with WHEN MATCHED?", stats) == [
        "MERGE", "WHEN", "MATCHED"]


def test_a_name_joined_to_a_number_is_known_only_as_the_text_prints_it():
    """A text that says "VX-1" throughout says nothing of "VX-2", though it says "VX" and "2";
    a hyphenated count ("6-axis") is no name, and a text's lower-case "qp-3" (in code) counts."""
    text = "Every unit ships the VX-1 codec. It has 2 modes; run `encode --codec qp-3` for both."
    words = frozenset(surface_words(text, lower=False))
    stats = TermStats(1, {}, words, frozenset(w.lower() for w in words),
                      compounds=frozenset(c.lower() for c in compound_names(text, named=False)))
    assert stats.compounds == {"vx-1", "qp-3"}
    assert unknown_names("Does the VX-2 codec work with VX-1 files?", stats) == ["VX-2"]
    assert unknown_names("Can the QP-3 codec run on a 6-axis arm?", stats) == []
    assert compound_names("a 6-axis IMU and a 64-channel LiDAR") == set()


def test_a_collection_knows_the_names_joined_to_a_number_it_prints() -> None:
    """The store's term statistics hold them, from prose and code alike, lower-cased."""
    from textbound.documents.store.memory import MemoryStore
    from textbound.fakes import HashEmbedder

    store = MemoryStore.holding(HashEmbedder(), [
        ("c1", "Every unit ships the VX-1 codec.", {"source": "a.md"}),
        ("c2", "Run:\n\n```\nencode --codec qp-3 in.wav\n```\n", {"source": "a.md"})])
    assert store.term_stats().compounds == {"vx-1", "qp-3"}


def test_case_names_do_not_end_a_sentence():
    """"Roe v. Wade" is one sentence: 'v.' is an abbreviation, as in legal case names."""
    from textbound.text import split_sentences

    assert split_sentences("Planned Parenthood v. Casey (1992) reaffirmed Roe v. Wade. Next.") == [
        "Planned Parenthood v. Casey (1992) reaffirmed Roe v. Wade.", "Next."]


def test_a_life_dates_abbreviation_does_not_end_a_sentence():
    """Textbooks give people's dates as "(b. 1932)", "(c. 470-399 BCE)", "(d. 1950)": the
    splitter cut "John Searle (b." off as a sentence, and a chat answer quoting it showed
    "Philosophers of mind such as John Searle (b. [1] 1932) argue ..."."""
    text = ("Philosophers of mind such as John Searle (b. 1932) argue that strong AI does not "
            "exist. Socrates (c. 470-399 BCE) taught in Athens. Confucius (ca. 551-479 BCE) "
            "taught in Lu. Alan Turing (d. 1954) asked whether machines think.")
    assert split_sentences(text) == [
        "Philosophers of mind such as John Searle (b. 1932) argue that strong AI does not exist.",
        "Socrates (c. 470-399 BCE) taught in Athens.", "Confucius (ca. 551-479 BCE) taught in Lu.",
        "Alan Turing (d. 1954) asked whether machines think."]
    # a letter ending a sentence is still a sentence end: "... plan b. Then ..."
    assert len(split_sentences("We chose plan b. Then we left.")) == 2
