"""Follow-up questions made standalone, by rule: what the contextualize node does by default.

A question that depends on the conversation ("What file defines its interface?", "Why?",
"And a topic?", "Give me an example") is rewritten with the previous turn's subject so that
retrieval and every gate read a question that stands alone. A question with nothing to resolve
is never rewritten. The rules are deterministic and cheap (microseconds): no model, no store.

The subject of a turn is what it was about: for a question asked on its own, the noun phrase
its shape names ("What does a ROS 2 service do?" -> "a ROS 2 service"); for a follow-up, the
subject it carried (so "its" keeps meaning the same thing over several turns), or the new one
an "and X?" turn switched to (textbound/conversation/subject.py finds it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textbound.conversation.subject import VERBS, bare, subject_of, trimmed

__all__ = ["Rewrite", "follow_up_cue", "rewrite", "subject_of"]

_META = re.compile(r"^(?:the|this|our|my)\s+(?:course|book|textbook|text|chapter|class|author|"
                   r"lecture|module|unit|lesson)s?$", re.I)
"""What a question names as where it read, never as what the conversation is about."""

# pronouns that point back; "it" in "what does it mean to ...", "is it true that ..." does not
_PERSONAL = re.compile(r"\b(it|its|they|them|their|theirs)\b", re.I)
_DUMMY_IT = re.compile(
    r"\b(?:is|was|does|did|do|makes?|made|find|finds|consider)\s+it\s+(?:mean|true|possible|"
    r"necessary|important|better|worse|useful|hard|easy|harder|easier|common|likely|safe|"
    r"matter|called)\s+(?:to|that|for|if|when)\b|\bdoes\s+it\s+mean\b|\bit\s+(?:is|was|'s)\s+(?:true|possible|necessary|important|better|"
    r"useful|hard|easy|common|likely|safe)\s+(?:that|to|for)\b|\bit\s+takes?\s+(?:to|for)\b|"
    r"\bit\s+means\s+(?:to|for|that)\b", re.I)
_ONE = re.compile(r"\b(?:a|an|the|each|this|that)\s+(?:[\w-]+\s+)?(ones?)\b(?!\s+of\b)"
                  r"|\b(?:does|do|did|is|was|build|building|buy|buying)\s+(one)\b", re.I)
_GENERIC = re.compile(r"\bthe\s+(?:concept|idea|term|technique|method|approach|paper|device|"
                      r"framework|algorithm|library|tool)\b(?!\s+(?:of|for|that|which)\b)", re.I)
_FRAGMENT = re.compile(r"^\s*(?:and\s+)?(?:in|on|at|by|since|for|from|until)?\s*(?:what|which|how|"
                       r"when|where|who|whose)(?:\s+(?!(?:is|are|was|were|does|do|did|can|has|"
                       r"have)\b)[\w-]+){0,2}\s*[?.!]*\s*$", re.I)
# "what's the trade-off?", "what are the downsides": a relation with nothing it relates to
_RELATION = re.compile(r"^\s*(?:and\s+|so\s+)?(?:what'?s|what\s+(?:is|are|was|were))\s+the\s+"
                       r"(?:main\s+|biggest\s+|big\s+)?(?:trade-?offs?|advantages?|"
                       r"disadvantages?|downsides?|drawbacks?|benefits?|upsides?|catch|"
                       r"limitations?|alternatives?|risks?|purpose|point|consequences?)"
                       r"\s*[?.!]*\s*$", re.I)
_DEMONSTRATIVE = re.compile(r"\b(this|these|those)\b(?:\s+([a-z][\w-]*))?", re.I)
_THAT_PRONOUN = re.compile(r"\b(?:is|was|does|do|did|about|of|with|for|like|mean|means|"
                           r"cause|causes)\s+that\s*[?.!]*$|^\s*that\b(?!\s+(?:the|a|an)\b)"
                           r"|^\s*(?:is|was|does|did|can|could|will|would|should)\s+that\b"
                           r"|\b(?:does|did|do|is|was|can|will|would)\s+that\s+(?:matter|"
                           r"mean|work|happen|help|make|cause|change|affect|differ)\b",
                           re.I)

_WHY = re.compile(r"^\s*(?:and\s+|but\s+|so\s+)?(?:why|how come|for what reason)"
                  r"(?:\s+(?:is that|not|so|that is|would that be|does it|is it))?\s*[?.!]*\s*$",
                  re.I)
_EXAMPLE = re.compile(r"^\s*(?:(?:can|could) you\s+)?(?:please\s+)?(?:give|show|tell)"
                      r"(?:\s+(?:me|us))?\s+(?:an?|another|some|one)?\s*(?:more\s+)?examples?\b.*$"
                      r"|^\s*(?:an?\s+|another\s+)?examples?\s*(?:please)?\s*[?.!]*\s*$"
                      r"|^\s*(?:for example|such as|like what|e\.g\.?)\s*[?.!]*\s*$"
                      r"|^\s*what(?:'s| is| are)\s+(?:an?\s+|some\s+)?examples?\s*[?.!]*\s*$", re.I)
_MORE = re.compile(r"^\s*(?:(?:can you\s+)?tell me more|more|go on|continue|explain(?:\s+(?:more|"
                   r"further|that|it))?|elaborate|how so|what else|anything else|and then)"
                   r"(?:\s+please)?\s*[?.!]*\s*$", re.I)
_CLAUSE_END = re.compile(r"\s*;\s*|,\s+(?=which\b|so\b|because\b|while\b|whereas\b)|"
                         r"\s+[-\u2013\u2014]{1,2}\s+", re.I)
"""Where a sentence's first clause ends: a semicolon, ", which/so/because/while", a dash."""
_AND_X = re.compile(r"^\s*(?:and|or|but|also)?\s*(?:what|how)\s+about\s+(?P<x>.+?)\s*[?.!]*\s*$"
                    r"|^\s*(?:and|or)\s+(?P<y>(?!why\b|how\b|what\b|which\b|when\b|where\b|who\b)"
                    r".+?)\s*[?.!]*\s*$", re.I)


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The question as every gate will read it."""

    standalone: str
    rule: str | None
    """Which rule rewrote it (pronoun, why, example, more, and_x); None when it stands alone."""
    subject: str | None
    """What this turn is about, for the next turn's follow-up."""

    @property
    def rewritten(self) -> bool:
        """Whether the question was rewritten."""
        return self.rule is not None

def _possessive(subject: str) -> str:
    return subject + ("'" if subject.endswith("s") and not subject.endswith("ss") else "'s")


# "they" read as one thing takes the singular verb: the auxiliary before it, or the one after it
_SINGULAR_OF = {"do": "does", "are": "is", "were": "was", "have": "has"}
_THEY_VERB = re.compile(r"\b(do|are|were|have)\s+(they)\b", re.I)
_VERB_THEY = re.compile(r"\b(they)\s+(do|are|were|have)\b", re.I)


def _singular(subject: str) -> bool:
    """Whether a subject is surely one thing: "a ROS 2 service", "the domain id", "Isaac Sim"."""
    words = bare(subject).split()
    return bool(re.match(r"an?\s", subject, re.I)) or (
        bool(words) and not words[-1].lower().endswith("s"))


def _agree(verb: str) -> str:
    singular = _SINGULAR_OF[verb.lower()]
    return singular.capitalize() if verb[:1].isupper() else singular


def _replace_pronouns(question: str, subject: str) -> str | None:
    """Return `question` with its pronouns pointing at `subject`, or None when it has none."""
    if _DUMMY_IT.search(question):
        masked = _DUMMY_IT.sub(lambda m: m.group(0).replace("it", "\x00"), question)
    else:
        masked = question
    if _singular(subject):  # "how do they differ" -> "how does a ROS 2 service differ"
        masked = _THEY_VERB.sub(lambda m: _agree(m.group(1)) + " " + m.group(2), masked)
        masked = _VERB_THEY.sub(lambda m: m.group(1) + " " + _agree(m.group(2)), masked)
    changed = False

    def personal(m: re.Match[str]) -> str:
        nonlocal changed
        changed = True
        word = m.group(1).lower()
        return _possessive(subject) if word in ("its", "their", "theirs") else subject

    out = _PERSONAL.sub(personal, masked)

    def demonstrative(m: re.Match[str]) -> str:
        nonlocal changed
        changed = True
        noun = m.group(2)
        if noun is None:
            return subject
        if noun.lower() in {w.lower() for w in bare(subject).split()}:
            return subject  # "this service" -> "a ROS 2 service"
        if noun.lower() in VERBS or noun.lower() in {"is", "are", "was", "were"}:
            return f"{subject} {noun}"  # "this means" -> "X means"
        return f"the {noun} of {bare(subject)}"  # "this file" -> "the file of X"

    out = _DEMONSTRATIVE.sub(demonstrative, out)
    if _THAT_PRONOUN.search(out):
        changed = True
        out = re.sub(r"\bthat(\s*[?.!]*)$", rf"{subject}\1", out, flags=re.I)
        out = re.sub(r"^(\s*)that\b", rf"\1{subject}", out, flags=re.I)
        out = re.sub(r"^(\s*(?:is|was|does|did|can|could|will|would|should)\s+)that\b",
                     lambda m: m.group(1) + subject, out, flags=re.I)
        out = re.sub(r"\b((?:does|did|do|is|was|can|will|would)\s+)that(\s+(?:matter|mean|work|"
                     r"happen|help|make|cause|change|affect|differ))\b",
                     lambda m: m.group(1) + subject + m.group(2), out, flags=re.I)
    out = out.replace("\x00", "it")
    return out if changed else None


def _one_named(text: str, subject: str) -> str:
    """Return `text` with "one" naming the subject's head noun; unchanged without one.

    "and a 9-axis one?" after "a 6-axis IMU" asks about "a 9-axis IMU".
    """
    one = _ONE.search(text)
    if one is None or not one.group(1):
        return text
    head = bare(subject).split()[-1]
    noun = head + ("s" if one.group(1).lower() == "ones" and not head.endswith("s") else "")
    return text[:one.start(1)] + noun + text[one.end(1):]


def _capitalised(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] if text else text


def _question(text: str) -> str:
    return _capitalised(trimmed(text)) + "?"


def _first_sentence(answer: str) -> str | None:
    text = re.sub(r"\s*\[\d+\]", "", answer).strip()
    if not text:
        return None
    m = re.match(r"(.+?[.!?])(?:\s|$)", text)
    sentence = (m.group(1) if m else text).strip().rstrip(".!?")
    return sentence if 0 < len(sentence) <= 240 else None


def follow_up_cue(question: str) -> str | None:
    """Return which follow-up a question is when it is nothing else, else None.

    "Why?", "tell me more", "give me an example", "what's the trade-off?" only mean something
    after an earlier turn: "why", "more", "example" or "relation". A question that names what
    it is about ("give me an example of a ROS 2 topic") is not one.
    """
    if _WHY.match(question):
        return "why"
    if _MORE.match(question):
        return "more"
    if _EXAMPLE.match(question) and subject_of(question) is None:
        return "example"
    if _RELATION.match(question):
        return "relation"
    return None


def rewrite(question: str, history: Sequence[dict[str, Any]]) -> Rewrite:
    """Return `question` made standalone against the earlier turns (oldest first).

    The previous turn gives the subject (its carried or own subject) and, for "why?", its
    answer's first sentence. Without earlier turns, or with nothing to resolve, the question is
    returned unchanged with its own subject.
    """
    own = subject_of(question)
    if not history:
        return Rewrite(question, None, own)
    last = history[-1]
    subject = next((str(t["subject"]) for t in reversed(history) if t.get("subject")), None) \
        or subject_of(str(last.get("standalone") or ""))
    previous = str(last.get("standalone") or last.get("question") or "")
    if not subject:
        m = _AND_X.match(question)
        tail = re.match(r"^(?P<head>.+\b(?:is|are|was|were|of|for|in|on|about|with))\s+\S.*$",
                        trimmed(previous), re.I)
        x = trimmed(m.group("x") or m.group("y") or "") if m is not None else ""
        if x and tail is not None:  # "what fraction of the cycle is stance" + "and swing?"
            return Rewrite(_question(f"{tail.group('head')} {x}"), "and_x", x)
        return Rewrite(question, None, own)
    if _WHY.match(question):
        claim = None if last.get("was_refusal") else _first_sentence(str(last.get("answer") or ""))
        if claim:
            claim = claim[:1].lower() + claim[1:] if not re.match(r"[A-Z]{2}", claim) else claim
            # the claim to explain is its first clause: "X could not run on the robot; it ran
            # on cloud TPUs ..." asks why X could not run there, not about the rest
            claim = _CLAUSE_END.split(claim, maxsplit=1)[0]
            return Rewrite(f"Why is it that {claim}?", "why", subject)
        return Rewrite(f"Why: {trimmed(previous)}?", "why", subject)
    if _EXAMPLE.match(question):
        return Rewrite(f"What is an example of {subject}?", "example", subject)
    if _MORE.match(question):
        return Rewrite(f"What else does the book say about {bare(subject)}?", "more", subject)
    m = _AND_X.match(question)
    if m is not None:
        x = _one_named(trimmed(m.group("x") or m.group("y") or ""), subject)
        resolved = _replace_pronouns(x, subject)
        if resolved is not None:  # "what about its cost?" -> an attribute of the subject
            return Rewrite(f"What is {resolved}?", "and_x", subject)
        # "what fraction of the gait cycle is stance?" + "and swing?": the last words change
        tail = re.match(r"^(?P<head>.+\b(?:is|are|was|were))\s+(?P<end>\w[\w-]*(?:\s+\w[\w-]*)?)$",
                        trimmed(previous), re.I)
        if x and tail is not None and len(x.split()) <= 3 and not re.match(
                r"(?:the|a|an)\b", x, re.I) and bare(subject).lower() not in \
                tail.group("end").lower():
            return Rewrite(_question(f"{tail.group('head')} {x}"), "and_x", subject)
        # "what is the cost of transport for humans?" + "and ASIMO?": the object of the
        # closing preposition changes, when the subject is not in it
        closing = re.match(r"^(?P<head>.+\b(?:for|in|of|on|at|with))\s+(?P<end>(?:(?:the|a|an)\s+)?"
                           r"\w[\w-]*(?:\s+\w[\w-]*)?)$", trimmed(previous), re.I)
        if x and closing is not None and len(x.split()) <= 3 and bare(subject).lower() in \
                closing.group("head").lower() and bare(subject).lower() not in \
                closing.group("end").lower():
            return Rewrite(_question(f"{closing.group('head')} {x}"), "and_x", subject)
        # "what is Gazebo's default step size?" + "what about MuJoCo?": the owner changes
        owner = subject.split("'s ", 1)[0] if "'s " in subject else subject
        if x and owner.lower() in previous.lower():
            pattern = re.compile(re.escape(owner), re.I)
            return Rewrite(_question(pattern.sub(lambda _: x, previous, count=1)), "and_x", x)
        if x:
            return Rewrite(f"{trimmed(previous)}, for {x}?", "and_x", x)
    one = _ONE.search(question)
    if one is not None:  # "the max range of a 64-channel one" -> "... of a 64-channel lidar"
        named = _one_named(question, subject) if one.group(1) else (
            # "how much does one cost" -> "how much does a series elastic actuator cost"
            question[:one.start(2)] + subject + question[one.end(2):])
        return Rewrite(_question(named), "pronoun", subject)
    resolved = _replace_pronouns(question, subject)
    if resolved is not None:
        resolved = re.sub(r"^\s*(?:and|so|but|also|ok|okay)\b[,\s]*", "", resolved, flags=re.I)
        return Rewrite(_question(resolved), "pronoun", subject)
    generic = _GENERIC.search(question)
    if generic is not None:  # "who came up with the concept" -> "... with a digital twin"
        return Rewrite(_question(question[:generic.start()] + subject + question[generic.end():]),
                       "pronoun", subject)
    relation = _RELATION.match(question)
    if relation is not None:  # "what's the trade-off" -> "... of MuJoCo's default step size?"
        about = subject_of(previous) or subject
        return Rewrite(_question(f"{trimmed(question)} of {about}"), "ellipsis", subject)
    if _FRAGMENT.match(question):  # "in what year" -> "In what year (who introduced X)?"
        return Rewrite(f"{_capitalised(trimmed(question))} ({trimmed(previous)})?", "ellipsis",
                       subject)
    # anything else stands alone: a topic switch, or an ellipsis no rule can tell from one
    # ("who won the 2018 world cup" must never borrow the conversation's subject); without a
    # subject of its own it keeps the conversation's for the next turn
    if own is not None and _META.match(own):
        own = None  # "why does the course use Python": the course is where, not what, it asks
    return Rewrite(question, None, own or subject)
