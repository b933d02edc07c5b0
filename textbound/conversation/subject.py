"""The subject of a question: the noun phrase it is about, as a conversation carries it on.

For a question asked on its own, the subject is the noun phrase its shape names ("What does a ROS
2 service do?" -> "a ROS 2 service"); textbound/conversation/rewrite.py carries it into the next
turn, so that a follow-up's "its" keeps meaning the same thing. Deterministic and cheap: no model,
no store.
"""

from __future__ import annotations

import re

__all__ = ["VERBS", "bare", "subject_of", "trimmed"]

_WH = r"(?:what|which|who|whom|how|why|when|where)"
_AUX = (r"(?:is|are|was|were|does|do|did|can|could|should|would|will|has|have|had|must|might"
        r"|may)")
_PREP = {"of", "in", "on", "for", "to", "from", "with", "by", "about", "at", "into", "between",
         "during", "through", "over", "under", "after", "before", "within", "without", "via"}
# verbs that end a question's subject ("how does X work", "what does X use to ..."): the words
# students put after the subject; anything else stays in the subject
VERBS = set("""
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
# words that end an "is/are" question's subject: "what is X used for", "when was X released"
_PARTICIPLES = (r"\s+(?:used|called|made|known|needed|defined|measured|stored|built|trained|based|"
                r"responsible|important|different|released|published|introduced|founded|invented|"
                r"created|developed|retired|replaced|acquired|rated|originally|typically|commonly|"
                r"usually|first|supported|maintained|available|required)\b")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_TRAIL = re.compile(r"[\s?.!]+$")


def trimmed(text: str) -> str:
    """Return text without surrounding space and its closing punctuation."""
    return _TRAIL.sub("", text.strip())


def subject_of(question: str) -> str | None:
    """Return the noun phrase a standalone question is about, or None when none is clear.

    "What is a ROS 2 topic?" -> "a ROS 2 topic"; "How does a VLA model work?" -> "a VLA
    model"; "What sensors are combined in a 6-axis IMU?" -> "sensors" is the asked-for thing,
    the subject is "a 6-axis IMU" (the object of its last preposition).
    """
    q = trimmed(question)
    many = re.match(rf"^(?:how\s+(?:many|much|long|far|fast|big|tall|heavy|often|old|large|high)"
                    rf"(?:\s+[\w-]+){{0,3}}?|(?:what|which)(?:\s+[\w-]+){{1,3}}?(?=\s+(?:does|do|"
                    rf"did)\s))\s+(?P<aux>{_AUX})\s+(?P<rest>.+)$", q, re.I)
    if many is not None:  # "how many TOPS does X ...", "what two scores does X combine"
        q = f"how {many.group('aux')} {many.group('rest')}"
    m = re.match(rf"^(?:(?:and|so|but)\s+)?{_WH}\s+(?:exactly\s+)?(?P<aux>{_AUX})\s+(?P<rest>.+)$",
                 q, re.I)
    if m is None:
        m2 = re.match(r"^(?:define|explain|describe|(?:what|who)(?:'s| is| are))\s+(?P<rest>.+)$",
                      q, re.I)
        if m2 is None:
            m3 = re.match(rf"^(?P<what>{_WH})\s+(?P<noun>[\w-]+)\s+(?P<aux>{_AUX})\s+(?P<rest>.+)$",
                          q, re.I)
            if m3 is not None:
                return _object_of(m3.group("rest"))
            # "who created MuJoCo", "what replaced the hydraulic Atlas": the verb's object
            m4 = re.match(r"^(?:who|what|which)\s+(?P<verb>[\w-]+)\s+(?P<rest>.+)$", q, re.I)
            if m4 is not None and (m4.group("verb").lower() in VERBS
                                   or re.search(r"(?:ed|es)$", m4.group("verb"), re.I)):
                return _np(m4.group("rest"))
            # "what fraction of the gait cycle is stance": the object of its preposition
            return _object_of(q)
        return _np(m2.group("rest"))
    rest = m.group("rest")
    words = rest.split()
    # "what does X do", "how does X work": the subject runs up to the verb that ends it
    for i, w in enumerate(words):
        if i > 0 and w.lower() in VERBS:
            return _np(" ".join(words[:i]))
    if m.group("aux").lower() in ("does", "do", "did") and len(words) >= 2:
        # "when did Boston Dynamics retire the hydraulic Atlas": the thing acted on, when the
        # verb has an object; "how many TOPS does the Jetson AGX Orin deliver": the subject,
        # when the question ends on its verb
        for i in range(2, len(words)):
            if words[i].lower() in ("the", "a", "an"):
                return _np(" ".join(words[i:]))
        if words[-1].lower() not in _PRONOUNS:
            return _np(" ".join(words[:-1]))
        return _np(" ".join(words[:-2])) if len(words) > 2 else None
    if m.group("aux").lower() in ("is", "are", "was", "were"):
        # "what is X used for", "what are X"
        cut = re.split(_PARTICIPLES, rest, maxsplit=1, flags=re.I)
        return _np(cut[0])
    return _np(rest)


def _object_of(rest: str) -> str | None:
    """Return the object of the last preposition of `rest` ("...combined in a 6-axis IMU")."""
    words = rest.split()
    for i in range(len(words) - 1, -1, -1):
        if words[i].lower() in _PREP and i + 1 < len(words):
            found = re.split(rf"\s+{_AUX}\s+", " ".join(words[i + 1:]), maxsplit=1,
                             flags=re.I)[0]
            return _np(found)
    return None


_PRONOUNS = {"it", "its", "they", "them", "this", "that", "these", "those", "he", "she", "we",
             "you", "i", "there"}


def _np(text: str) -> str | None:
    text = trimmed(text)
    # "the difference between X and Y", "the role of X": keep the phrase whole
    if not text or text.split()[0].lower() in _PRONOUNS or not _ARTICLE.sub("", text + " "):
        return None  # a pronoun, or an article alone ("who was the first author" cut short)
    return text


def bare(subject: str) -> str:
    """Return a subject without its leading article ("a ROS 2 service" -> "ROS 2 service")."""
    return _ARTICLE.sub("", subject)
