"""A listing the book prints twice supports no answer that already quotes it.

The Git manual shows `git fsck`'s "dangling commit 7281251d..." lines in two sections; an answer
led by the first was followed by the second, the same lines again. A second unit printing two
or more of the lead's long lines says it again (`followers.supports`); short lines such as a
table's "name text," are shared by listings that differ and do not count.
"""

from __future__ import annotations

from textbound.answer.candidates import Candidate
from textbound.answer.followers import supports
from textbound.text.units import Unit

FSCK = ("$ git fsck\ndangling commit 7281251ddd2a61e38657c827739c57015671a6b3\n"
        "dangling commit 2706a059f258c6b245f298dc4ff2ccd30ec21a63\n")


def _cand(cid: str, text: str, kind: str = "code") -> Candidate:
    chunk = {"chunk_id": cid, "text": text, "score": 0.7,
             "metadata": {"source": "book.md", "heading_path": ["Book", cid]}}
    return Candidate(chunk, Unit(0, len(text), text, kind), "", 0)


def test_the_same_long_lines_again_do_not_support() -> None:
    lead = _cand("a", FSCK + "...")
    again = _cand("b", FSCK + "dangling blob 218761f9d90712d37a9c5e36f406f92202db07eb\n...")
    assert not supports(again, lead, "git fsck prints dangling commit lines, should I worry?")


def test_listings_sharing_only_short_lines_may_support() -> None:
    lead = _cand("a", "CREATE TABLE capitals (\n  name       text,\n  population real\n);")
    other = _cand("b", "CREATE TABLE cities (\n  name       text,\n  population real\n) "
                       "INHERITS (capitals_base);")
    assert supports(other, lead, "how do I create the capitals and cities tables?")
