"""Follow-up questions made standalone, by rule: what the contextualize node does by default.

A question that depends on the conversation ("What file defines its interface?", "Why?",
"And a topic?", "Give me an example") is rewritten with the previous turn's subject so that
retrieval and every gate read a question that stands alone. A question with nothing to resolve
is never rewritten. The rules are deterministic and cheap (microseconds): no model, no store.

The subject of a turn is what it was about: for a question asked on its own, the noun phrase
its shape names ("What does a ROS 2 service do?" -> "a ROS 2 service"); for a follow-up, the
subject it carried (so "its" keeps meaning the same thing over several turns), or the new one
an "and X?" turn switched to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Rewrite", "rewrite", "subject_of"]

_WH = r"(?:what|which|who|whom|how|why|when|where)"
_AUX = (r"(?:is|are|was|were|does|do|did|can|could|should|would|will|has|have|had|must|might"
        r"|may)")
_PREP = {"of", "in", "on", "for", "to", "from", "with", "by", "about", "at", "into", "between",
         "during", "through", "over", "under", "after", "before", "within", "without", "via"}
# verbs that end a question's subject ("how does X work", "what does X use to ..."): the words
# students put after the subject; anything else stays in the subject
_VERBS = set("""
do does did mean means work works use uses used need needs require requires have has make
makes send sends receive receives run runs handle handles provide provides store stores measure
measures represent represents define defines describe describes allow allows let lets enable
enables help helps affect affects differ differs compare compares relate relates communicate
communicates consist consists contain contains include includes support supports produce
produces solve solves prevent prevents improve improves cause causes get gets take takes keep
keeps stand stands refer refers come comes go goes learn learns train trains detect detects
estimate estimates compute computes generate generates control controls move moves sense senses
perceive perceives map maps plan plans publish publishes subscribe subscribes call calls return
returns start starts stop stops begin begins matter matters look looks happen happens fit fits
connect connects combine combines depend depends rely relies add adds give gives show shows
say says play plays know knows see sees
""".split())
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_TRAIL = re.compile(r"[\s?.!]+$")

# pronouns that point back; "it" in "what does it mean to ...", "is it true that ..." does not
_PERSONAL = re.compile(r"\b(it|its|they|them|their|theirs)\b", re.I)
_DUMMY_IT = re.compile(
    r"\b(?:is|was|does|did|do|makes?|made|find|finds|consider)\s+it\s+(?:mean|true|possible|"
    r"necessary|important|better|worse|useful|hard|easy|harder|easier|common|likely|safe|"
    r"matter|take|called)\b|\bit\s+(?:is|was|'s)\s+(?:true|possible|necessary|important|better|"
    r"useful|hard|easy|common|likely|safe)\s+(?:that|to|for)\b|\bit\s+takes?\s+(?:to|for)\b|"
    r"\bit\s+means\s+(?:to|for|that)\b", re.I)
_DEMONSTRATIVE = re.compile(r"\b(this|these|those)\b(?:\s+([a-z][\w-]*))?", re.I)
_THAT_PRONOUN = re.compile(r"\b(?:is|was|does|do|did|about|of|with|for|like|mean|means|"
                           r"cause|causes)\s+that\s*[?.!]*$|^\s*that\b(?!\s+(?:the|a|an)\b)"
                           r"|^\s*(?:is|was|does|did|can|could|will|would|should)\s+that\b",
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


def _strip(text: str) -> str:
    return _TRAIL.sub("", text.strip())


def subject_of(question: str) -> str | None:
    """Return the noun phrase a standalone question is about, or None when none is clear.

    "What is a ROS 2 topic?" -> "a ROS 2 topic"; "How does a VLA model work?" -> "a VLA
    model"; "What sensors are combined in a 6-axis IMU?" -> "sensors" is the asked-for thing,
    the subject is "a 6-axis IMU" (the object of its last preposition).
    """
    q = _strip(question)
    many = re.match(rf"^how\s+(?:many|much)\s+.+?\s+(?P<aux>{_AUX})\s+(?P<rest>.+)$", q, re.I)
    if many is not None:
        q = f"how {many.group('aux')} {many.group('rest')}"
    m = re.match(rf"^(?:(?:and|so|but)\s+)?{_WH}\s+(?:exactly\s+)?(?P<aux>{_AUX})\s+(?P<rest>.+)$",
                 q, re.I)
    if m is None:
        m2 = re.match(r"^(?:define|explain|describe|(?:what|who)(?:'s| is| are))\s+(?P<rest>.+)$",
                      q, re.I)
        if m2 is None:
            m3 = re.match(rf"^(?P<what>{_WH})\s+(?P<noun>[\w-]+)\s+(?P<aux>{_AUX})\s+(?P<rest>.+)$",
                          q, re.I)
            if m3 is None:
                return None
            return _object_of(m3.group("rest"))
        return _np(m2.group("rest"))
    rest = m.group("rest")
    words = rest.split()
    # "what does X do", "how does X work": the subject runs up to the verb that ends it
    for i, w in enumerate(words):
        if i > 0 and w.lower() in _VERBS:
            return _np(" ".join(words[:i]))
    if m.group("aux").lower() in ("is", "are", "was", "were"):
        # "what is X used for", "what are X"
        cut = re.split(r"\s+(?:used|called|made|known|needed|defined|measured|stored|built|"
                       r"trained|based|responsible|important|different)\b", rest, maxsplit=1,
                       flags=re.I)
        return _np(cut[0])
    return _np(rest)


def _object_of(rest: str) -> str | None:
    """Return the object of the last preposition of `rest` ("...combined in a 6-axis IMU")."""
    words = rest.split()
    for i in range(len(words) - 1, -1, -1):
        if words[i].lower() in _PREP and i + 1 < len(words):
            return _np(" ".join(words[i + 1:]))
    return None


_PRONOUNS = {"it", "its", "they", "them", "this", "that", "these", "those", "he", "she", "we",
             "you", "i", "there"}


def _np(text: str) -> str | None:
    text = _strip(text)
    # "the difference between X and Y", "the role of X": keep the phrase whole
    if not text or text.split()[0].lower() in _PRONOUNS:
        return None
    return text


def _possessive(subject: str) -> str:
    return subject + ("'" if subject.endswith("s") and not subject.endswith("ss") else "'s")


def _bare(subject: str) -> str:
    return _ARTICLE.sub("", subject)


def _replace_pronouns(question: str, subject: str) -> str | None:
    """Return `question` with its pronouns pointing at `subject`, or None when it has none."""
    if _DUMMY_IT.search(question):
        masked = _DUMMY_IT.sub(lambda m: m.group(0).replace("it", "\x00"), question)
    else:
        masked = question
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
        if noun.lower() in {w.lower() for w in _bare(subject).split()}:
            return subject  # "this service" -> "a ROS 2 service"
        if noun.lower() in _VERBS or noun.lower() in {"is", "are", "was", "were"}:
            return f"{subject} {noun}"  # "this means" -> "X means"
        return f"the {noun} of {_bare(subject)}"  # "this file" -> "the file of X"

    out = _DEMONSTRATIVE.sub(demonstrative, out)
    if _THAT_PRONOUN.search(out):
        changed = True
        out = re.sub(r"\bthat(\s*[?.!]*)$", rf"{subject}\1", out, flags=re.I)
        out = re.sub(r"^(\s*)that\b", rf"\1{subject}", out, flags=re.I)
        out = re.sub(r"^(\s*(?:is|was|does|did|can|could|will|would|should)\s+)that\b",
                     lambda m: m.group(1) + subject, out, flags=re.I)
    out = out.replace("\x00", "it")
    return out if changed else None


def _capitalised(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] if text else text


def _question(text: str) -> str:
    return _capitalised(_strip(text)) + "?"


def _first_sentence(answer: str) -> str | None:
    text = re.sub(r"\s*\[\d+\]", "", answer).strip()
    if not text:
        return None
    m = re.match(r"(.+?[.!?])(?:\s|$)", text)
    sentence = (m.group(1) if m else text).strip().rstrip(".!?")
    return sentence if 0 < len(sentence) <= 240 else None


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
    subject = last.get("subject") or subject_of(str(last.get("standalone") or ""))
    previous = str(last.get("standalone") or last.get("question") or "")
    if not subject:
        return Rewrite(question, None, own)
    if _WHY.match(question):
        claim = None if last.get("was_refusal") else _first_sentence(str(last.get("answer") or ""))
        if claim:
            claim = claim[:1].lower() + claim[1:] if not re.match(r"[A-Z]{2}", claim) else claim
            return Rewrite(f"Why is it that {claim}?", "why", subject)
        return Rewrite(f"Why: {_strip(previous)}?", "why", subject)
    if _EXAMPLE.match(question):
        return Rewrite(f"What is an example of {subject}?", "example", subject)
    if _MORE.match(question):
        return Rewrite(f"What else does the book say about {_bare(subject)}?", "more", subject)
    m = _AND_X.match(question)
    if m is not None:
        x = _strip(m.group("x") or m.group("y") or "")
        resolved = _replace_pronouns(x, subject)
        if resolved is not None:  # "what about its cost?" -> an attribute of the subject
            return Rewrite(f"What is {resolved}?", "and_x", subject)
        if x and subject.lower() in previous.lower():
            pattern = re.compile(re.escape(subject), re.I)
            return Rewrite(_question(pattern.sub(lambda _: x, previous, count=1)), "and_x", x)
        if x:
            return Rewrite(f"{_strip(previous)}, for {x}?", "and_x", x)
    resolved = _replace_pronouns(question, subject)
    if resolved is not None:
        resolved = re.sub(r"^\s*(?:and|so|but|also|ok|okay)\b[,\s]*", "", resolved, flags=re.I)
        return Rewrite(_question(resolved), "pronoun", subject)
    return Rewrite(question, None, own)
